//go:build integration

package server_test

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"image/jpeg"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestReadingOrderOCR reads the layout test pages as scans: each page rendered (the document's
// "ocr": "always") and read by the real models. Columns come one after the other, the table row
// by row, the header first, as from the text layer.
func TestReadingOrderOCR(t *testing.T) {
	needModels(t)
	data, pages := layoutPDF(t)
	app := docApp(t, server.Options{}, nil, nil)
	d := readDocument(t, app, data, map[string]any{"ocr": "always"})
	if len(d.Pages) != len(pages) {
		t.Fatalf("%d pages read, want %d", len(d.Pages), len(pages))
	}
	for i, p := range pages {
		got := d.Pages[i]
		if got.Source != "ocr" {
			t.Errorf("%s: source %s", p.Name, got.Source)
		}
		want := strings.Join(p.Lines, "\n")
		score := ocrscore.ReadingOrder(want, got.Text)
		t.Logf("%s: reading order %.3f (%d regions, %d blocks)", p.Name, score, len(got.Regions), len(got.Blocks))
		if score < minReadingOrder {
			t.Errorf("%s: reading order %.3f, want at least %.2f; text:\n%s", p.Name, score, minReadingOrder, got.Text)
		}
		checkBlocks(t, p.Name, got)
	}
}

// TestReadingOrderScan reads the layout test pages as a scanner would give them: each page
// rendered at 150 dpi, turned 0.6° askew, with grain, in gray, and sent as a JPEG of quality 75 to
// POST /ocr. Columns still come one after the other, the table row by row, the header first.
func TestReadingOrderScan(t *testing.T) {
	needModels(t)
	data, pages := layoutPDF(t)
	ctx := context.Background()
	doc, err := documentReader(t).Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	app := docApp(t, server.Options{}, nil, nil)
	for i, p := range pages {
		page, err := doc.Page(ctx, i+1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := doc.Render(ctx, page, 150.0/72, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := readImageAnswer(t, app, asScan(t, r.Image, 0.6, int64(i)), nil)
		score := ocrscore.ReadingOrder(strings.Join(p.Lines, "\n"), got.Text)
		t.Logf("%s: reading order %.3f (%d regions)", p.Name, score, len(got.Regions))
		if score < minReadingOrder {
			t.Errorf("%s: reading order %.3f, want at least %.2f; text:\n%s", p.Name, score, minReadingOrder, got.Text)
		}
	}
}

// asScan makes img look scanned: turned degrees clockwise about its middle (the corners come in
// white), gray, with grain (±12 levels, from seed), as a JPEG of quality 75.
func asScan(t testing.TB, img image.Image, degrees float64, seed int64) []byte {
	t.Helper()
	b := img.Bounds()
	w, h := float64(b.Dx()), float64(b.Dy())
	sin, cos := math.Sincos(-degrees * math.Pi / 180)
	at := func(x, y float64) geom.Point { // the source point shown at (x, y) of the turned page
		x, y = x-w/2, y-h/2
		return geom.Point{X: w/2 + x*cos - y*sin, Y: h/2 + x*sin + y*cos}
	}
	white := image.NewRGBA(image.Rect(0, 0, b.Dx()+200, b.Dy()+200))
	draw.Draw(white, white.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(white, b.Add(image.Pt(100, 100)), img, b.Min, draw.Src)
	q := geom.Quad{at(0, 0), at(w, 0), at(w, h), at(0, h)}
	for i := range q {
		q[i].X += 100
		q[i].Y += 100
	}
	turned := imaging.Warp(white, q, b.Dx(), b.Dy())
	gray := image.NewGray(turned.Bounds())
	rng := rand.New(rand.NewSource(seed))
	for y := range b.Dy() {
		for x := range b.Dx() {
			c := turned.RGBAAt(x, y)
			v := (299*int(c.R)+587*int(c.G)+114*int(c.B))/1000 + rng.Intn(25) - 12
			gray.Pix[y*gray.Stride+x] = uint8(min(255, max(0, v)))
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, gray, &jpeg.Options{Quality: 75}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
