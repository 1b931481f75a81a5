//go:build integration

package server_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/server"
)

// noticeLines is the text of the scanned notice the picture tests paste under a page's heading.
var noticeLines = []string{
	"The agency amends its rules for the reporting of emissions",
	"from stationary sources and requests comment on the costs",
	"of compliance for small entities within sixty days of the",
	"publication of this notice in the register. Comments may be",
	"sent by mail to the docket office or filed electronically",
	"through the portal; each will be posted without change.",
	"Persons with questions about this rule should call the",
	"office of air quality planning between nine and four.",
}

// noticeJPEG is a picture of text: noticeLines printed on a page, drawn at 150 dpi and cut to the
// print, in gray, as a JPEG (a scanned notice).
func noticeJPEG(t testing.TB) []byte {
	t.Helper()
	var texts []testdoc.Text
	for i, l := range noticeLines {
		texts = append(texts, testdoc.Text{X: 40, Y: 60 + float64(i)*18, Size: 12, Text: l})
	}
	data, _ := bornDigital(t, texts)
	ctx := context.Background()
	doc, err := documentReader(t).Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	page, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	scale := 150.0 / 72
	r, err := doc.Render(ctx, page, scale, nil)
	if err != nil {
		t.Fatal(err)
	}
	box := image.Rect(int(20*scale), int(35*scale), int(420*scale), int(215*scale))
	gray := image.NewGray(image.Rect(0, 0, box.Dx(), box.Dy()))
	draw.Draw(gray, gray.Bounds(), r.Image, box.Min, draw.Src)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, gray, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestPicturesOfTextUnderThinLayer: a page of a heading and a footer in real text, with a scanned
// notice pasted between them (a Federal Register page's pictures of text), answers the notice's
// lines read by OCR beside the layer's, each region saying where it came from, in reading order
// (heading, notice, footer). A logo on an invoice is not read: the page is its layer alone.
func TestPicturesOfTextUnderThinLayer(t *testing.T) {
	needModels(t)
	app := docApp(t, server.Options{}, nil, nil)
	notice := noticeJPEG(t)
	heading := testdoc.Text{X: 50, Y: 60, Size: 10, Text: "Federal Register / Vol. 85 / Rules and Regulations"}
	footer := testdoc.Text{X: 50, Y: 800, Size: 10, Text: "Filed for public inspection on the first of the month"}

	t.Run("a scanned notice", func(t *testing.T) {
		data, err := testdoc.WithPictures([]testdoc.Text{heading, footer},
			[]testdoc.Picture{{JPEG: notice, X: 50, Y: 100, W: 495, H: 223}})
		if err != nil {
			t.Fatal(err)
		}
		d := readDocument(t, app, data, nil)
		pg := d.Pages[0]
		if pg.Source != "text-layer" || pg.SourceReason != "text_layer_agrees" {
			t.Errorf("source %s (%s), want text-layer (text_layer_agrees)", pg.Source, pg.SourceReason)
		}
		var layer, read []string
		for _, r := range pg.Regions {
			switch r.Source {
			case "text-layer":
				layer = append(layer, r.Text)
			case "ocr":
				read = append(read, r.Text)
			default:
				t.Errorf("region %q: source %q", r.Text, r.Source)
			}
		}
		if strings.Join(layer, "\n") != heading.Text+"\n"+footer.Text {
			t.Errorf("layer's regions %q, want the heading and the footer", layer)
		}
		want := strings.Fields(strings.Join(noticeLines, " "))
		got := strings.Fields(strings.Join(read, " "))
		if shared := ocrscore.SharedWords(want, got); float64(shared) < 0.9*float64(len(want)) {
			t.Errorf("OCR read %d of the notice's %d words: %q", shared, len(want), read)
		}
		order := heading.Text + "\n" + strings.Join(noticeLines, "\n") + "\n" + footer.Text
		if score := ocrscore.ReadingOrder(order, pg.Text); score < 0.9 {
			t.Errorf("reading order %.3f; text:\n%s", score, pg.Text)
		}
	})

	t.Run("a photograph under a heading", func(t *testing.T) {
		// As large as the notice, on which the layer draws nothing: looked at, and not read.
		photo := image.NewRGBA(image.Rect(0, 0, 990, 446))
		for y := range 446 {
			for x := range 990 {
				photo.Set(x, y, color.RGBA{uint8(x / 4), uint8(y / 2), uint8((x * y) % 251), 255})
			}
		}
		var jpg bytes.Buffer
		if err := jpeg.Encode(&jpg, photo, nil); err != nil {
			t.Fatal(err)
		}
		data, err := testdoc.WithPictures([]testdoc.Text{heading, footer},
			[]testdoc.Picture{{JPEG: jpg.Bytes(), X: 50, Y: 100, W: 495, H: 223}})
		if err != nil {
			t.Fatal(err)
		}
		pg := readDocument(t, app, data, nil).Pages[0]
		if len(pg.Regions) != 2 || pg.Regions[0].Source != "" {
			t.Errorf("%d regions (%q), want the heading and the footer from the layer alone", len(pg.Regions), pg.Text)
		}
	})

	t.Run("a logo on an invoice", func(t *testing.T) {
		data, err := testdoc.WithPictures(invoice, []testdoc.Picture{{JPEG: notice, X: 420, Y: 20, W: 120, H: 54}})
		if err != nil {
			t.Fatal(err)
		}
		d := readDocument(t, app, data, nil)
		pg := d.Pages[0]
		if pg.Source != "text-layer" {
			t.Errorf("source %s (%s), want text-layer", pg.Source, pg.SourceReason)
		}
		for _, r := range pg.Regions {
			if r.Source != "" {
				t.Errorf("region %q: source %q; the logo was read", r.Text, r.Source)
			}
		}
		if len(pg.Regions) != len(invoice) {
			t.Errorf("%d regions, want the invoice's %d strings: %q", len(pg.Regions), len(invoice), pg.Text)
		}
	})
}
