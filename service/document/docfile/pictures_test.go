package docfile_test

import (
	"fmt"
	"image"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestPictures: a page's large images on which its layer draws nothing are the pictures to read
// by OCR; a logo, an image the page's text is printed over, and a picture too small alone are
// not. The shares are of an A4 page (595 × 842 pt, 501 000 pt²).
func TestPictures(t *testing.T) {
	pic := func(x, y, w, h float64) testdoc.Picture {
		return testdoc.Picture{JPEG: smallJPEG(t), X: x, Y: y, W: w, H: h}
	}
	heading := []testdoc.Text{
		{X: 72, Y: 60, Size: 9, Text: "Federal Register / Vol. 85 / Rules and Regulations"},
		{X: 72, Y: 800, Size: 9, Text: "VerDate Sep 2020 page 50"},
	}
	var dense []testdoc.Text
	for i := range 40 {
		dense = append(dense, testdoc.Text{X: 72, Y: 90 + float64(i)*17, Size: 11, Text: fmt.Sprintf("Line %d of the invoice's terms and its amounts due", i+1)})
	}
	for _, tt := range []struct {
		name     string
		texts    []testdoc.Text
		pictures []testdoc.Picture
		want     []float64 // each picture's share of the page, in order
	}{
		{"a scanned notice under a heading", heading, []testdoc.Picture{pic(50, 100, 495, 400)}, []float64{0.40}},
		{"two half-column scans", heading, []testdoc.Picture{pic(50, 100, 240, 260), pic(305, 100, 240, 260)}, []float64{0.12, 0.12}},
		{"overlapping images are one box", heading, []testdoc.Picture{pic(50, 100, 300, 300), pic(200, 200, 300, 300)}, []float64{0.36}},
		{"a logo on an invoice", dense, []testdoc.Picture{pic(420, 20, 120, 60)}, nil},
		{"a background under the text", dense, []testdoc.Picture{pic(0, 0, 595, 842)}, nil},
		{"one picture too small alone", heading, []testdoc.Picture{pic(50, 100, 200, 200)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := testdoc.WithPictures(tt.texts, tt.pictures)
			if err != nil {
				t.Fatal(err)
			}
			doc := open(t, data)
			ctx := ctxFor(t, time.Minute)
			p, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			scale, err := p.Scale(docfile.DefaultScalePolicy(), testReader(t).Limits())
			if err != nil {
				t.Fatal(err)
			}
			c := p.RenderCost(scale)
			tl, err := doc.TextLayer(ctx, p, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			got := p.Pictures(tl, c.Width, c.Height)
			if len(got) != len(tt.want) {
				t.Fatalf("%d pictures %v, want %d", len(got), got, len(tt.want))
			}
			page := image.Rect(0, 0, c.Width, c.Height)
			for i, r := range got {
				share := float64(r.Dx()*r.Dy()) / float64(c.Width*c.Height)
				if !r.In(page) || share < tt.want[i]-0.01 || share > tt.want[i]+0.01 {
					t.Errorf("picture %d: %v (%.3f of the %v page), want %.2f of it", i, r, share, page, tt.want[i])
				}
			}
		})
	}
}
