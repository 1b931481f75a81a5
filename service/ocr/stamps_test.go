//go:build integration

package ocr_test

import (
	"context"
	"fmt"
	"image"
	"testing"

	"github.com/ocrgate/ocrgate/service/imaging"
)

// TestVerticalStamps reads a rendered upright form, degraded to fax quality, whose margins carry
// lines set vertically, as Bates numbers and form ids are: one running bottom to top, one top to
// bottom. Each is read whole, as one region, with its characters in order.
func TestVerticalStamps(t *testing.T) {
	p := pipeline(t)
	stamps := []struct {
		text    string
		degrees int // how the line is turned on the page, clockwise: 270 runs bottom to top
		x       int
	}{
		{"BATES 0012 3456", 270, 8},
		{"FORM 1187-B REV 3/95", 90, 730},
		{"ABC 2045 7781", 90, 8},
		{"Page 14 of 20", 270, 730},
	}
	for i := 0; i < len(stamps); i += 2 {
		pair := stamps[i : i+2]
		t.Run(fmt.Sprintf("%s|%s", pair[0].text, pair[1].text), func(t *testing.T) {
			size := sizeForCapHeight(t, 12)
			img := canvas(762, 1000)
			for j, s := range formLines {
				line, _ := renderLine(t, s, size)
				paste(img, line, 50, 60+j*50)
			}
			var boxes []image.Rectangle
			for _, s := range pair {
				line, _ := renderLine(t, s.text, size)
				turned := imaging.Turn(line, s.degrees)
				y := 300
				paste(img, turned, s.x, y)
				b := turned.Bounds()
				boxes = append(boxes, image.Rect(s.x, y, s.x+b.Dx(), y+b.Dy()))
			}
			res, err := p.Run(context.Background(), encodePNG(t, fax(img, 7)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Rotation != 0 {
				t.Errorf("rotation %d, want 0: the page is upright", res.Rotation)
			}
			for k, s := range pair {
				var got []string
				for _, r := range res.Regions {
					x0, y0, x1, y1 := r.Quad.Bounds()
					c := image.Pt(int((x0+x1)/2), int((y0+y1)/2))
					if c.In(boxes[k]) {
						got = append(got, r.Text)
					}
				}
				t.Logf("%q turned %d°: read %q", s.text, s.degrees, got)
				if len(got) != 1 {
					t.Errorf("%q: %d regions %q, want one", s.text, len(got), got)
					continue
				}
				if acc := charAccuracy(s.text, got[0]); acc < 0.9 {
					t.Errorf("%q read %q (characters %.2f)", s.text, got[0], acc)
				}
			}
		})
	}
}
