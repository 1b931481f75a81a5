package docfile_test

import (
	"context"
	"errors"
	"image"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document/docfile"
)

func ctxFor(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func open(t testing.TB, data []byte) *docfile.Document {
	t.Helper()
	doc, err := testReader(t).Open(ctxFor(t, 2*time.Minute), data)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { doc.Close() })
	return doc
}

// Strings that start and end with a T, whose side bearings in Helvetica are a fortieth of an em,
// so the glyph boxes start and end where fpdf placed the string; no descenders, so the boxes
// end on the baseline.
var bornDigitalPage = []drawn{
	{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117 TOTAL DUE AT"},
	{X: 72, Y: 140, Size: 12, Text: "TRACKING NUMBER 88214 PAID IN FULL AT"},
	{X: 72, Y: 200, Size: 10, Text: "THE SUBTOTAL"},
	{X: 400, Y: 200, Size: 10, Text: "TWELVE DOLLARS FLAT"},
	{X: 72, Y: 260, Size: 14, Text: "TOTAL 1299.00 NET"},
}

// TestBornDigitalTextLayer checks that a born-digital page comes back from its text layer with
// exactly the text drawn, one line per drawn string (a wide gap splits lines as the detector
// would), in reading order, with boxes within 2 px of where the text was drawn at the render
// scale: of the rendered ink, and of fpdf's own position and width for the string.
func TestBornDigitalTextLayer(t *testing.T) {
	data, widths := bornDigital(t, bornDigitalPage)
	doc := open(t, data)
	if doc.Format() != docfile.FormatPDF || doc.NumPages() != 1 {
		t.Fatalf("format %q, %d pages; want pdf, 1", doc.Format(), doc.NumPages())
	}
	ctx := ctxFor(t, time.Minute)
	page, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := page.TextUsable(); !d.Usable {
		t.Fatalf("text layer not usable: %s", d.Reason)
	}
	if math.Abs(page.Width-595.28) > 0.5 || math.Abs(page.Height-841.89) > 0.5 {
		t.Errorf("page is %.2f×%.2f pt, want A4", page.Width, page.Height)
	}
	scale := scaleOf(t, page, docfile.Limits{})
	cost := page.RenderCost(scale)
	dec, err := doc.Render(ctx, page, scale, nil)
	if err != nil {
		t.Fatal(err)
	}
	img := dec.Image
	if b := img.Bounds(); b.Dx() != cost.Width || b.Dy() != cost.Height {
		t.Fatalf("render is %v, RenderCost said %d×%d", b, cost.Width, cost.Height)
	}
	lines := page.Lines(cost.Width, cost.Height)
	// Reading order: by baseline, then left to right (the two strings at y=200 share a row).
	want := []int{0, 1, 2, 3, 4}
	if len(lines) != len(want) {
		for _, l := range lines {
			t.Logf("line %q %v", l.Text, l.Quad)
		}
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	sx, sy := float64(cost.Width)/page.Width, float64(cost.Height)/page.Height
	for i, l := range lines {
		d := bornDigitalPage[want[i]]
		if l.Text != d.Text {
			t.Errorf("line %d: text %q, want %q", i, l.Text, d.Text)
			continue
		}
		if got := strings.Join(wordTexts(l), " "); got != d.Text {
			t.Errorf("line %d: words %q, want %q", i, got, d.Text)
		}
		x0, y0, x1, y1 := l.Quad.Bounds()
		// Where fpdf put it: left at X, right at X + width, bottom on the baseline.
		wx0, wx1, wy1 := d.X*sx, (d.X+widths[0][want[i]])*sx, d.Y*sy
		if math.Abs(x0-wx0) > 2 || math.Abs(x1-wx1) > 2 || math.Abs(y1-wy1) > 2 {
			t.Errorf("line %q: box x %.1f..%.1f bottom %.1f, drawn at x %.1f..%.1f baseline %.1f", d.Text, x0, x1, y1, wx0, wx1, wy1)
		}
		// Where the renderer put its ink.
		search := image.Rect(int(x0)-20, int(y0)-20, int(x1)+20, int(y1)+20)
		ink := inkBounds(img, search)
		if math.Abs(x0-float64(ink.Min.X)) > 2 || math.Abs(y0-float64(ink.Min.Y)) > 2 ||
			math.Abs(x1-float64(ink.Max.X)) > 2 || math.Abs(y1-float64(ink.Max.Y)) > 2 {
			t.Errorf("line %q: box (%.1f,%.1f)-(%.1f,%.1f), ink %v", d.Text, x0, y0, x1, y1, ink)
		}
		if i == 2 || i == 3 {
			if l.Row != lines[2].Row {
				t.Errorf("line %q is in row %d, want row %d", l.Text, l.Row, lines[2].Row)
			}
		}
	}
	// Words: every word's box lies inside its line's and the words tile the line left to right.
	for _, l := range lines {
		lx0, _, lx1, _ := l.Quad.Bounds()
		prev := lx0 - 1
		for _, w := range l.Words {
			x0, _, x1, _ := w.Quad.Bounds()
			if x0 < lx0-0.01 || x1 > lx1+0.01 || x0 < prev {
				t.Errorf("word %q of %q at %.1f..%.1f is outside the line %.1f..%.1f or out of order", w.Text, l.Text, x0, x1, lx0, lx1)
			}
			prev = x1
		}
	}
}

func wordTexts(l docfile.Line) []string {
	var out []string
	for _, w := range l.Words {
		out = append(out, w.Text)
	}
	return out
}

// inkBounds is the bounding box of dark pixels inside r.
func inkBounds(img image.Image, r image.Rectangle) image.Rectangle {
	r = r.Intersect(img.Bounds())
	var ink image.Rectangle
	first := true
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if (cr+cg+cb)/3 > 0x8000 {
				continue
			}
			p := image.Rect(x, y, x+1, y+1)
			if first {
				ink, first = p, false
			} else {
				ink = ink.Union(p)
			}
		}
	}
	return ink
}

func TestDetect(t *testing.T) {
	pdf, _ := bornDigital(t, bornDigitalPage)
	two := tiffPages(t, stripes(40, 30, 0), stripes(40, 30, 1))
	one := tiffPages(t, stripes(40, 30, 0))
	junk := append([]byte("garbage before the header "), pdf...)
	for _, c := range []struct {
		name string
		data []byte
		want docfile.Format
	}{
		{"pdf", pdf, docfile.FormatPDF},
		{"pdf after junk", junk, docfile.FormatPDF},
		{"two-page tiff", two, docfile.FormatTIFF},
		{"one-page tiff is an image", one, ""},
		{"jpeg", receipt(t, "photo").JPEG, ""},
		{"empty", nil, ""},
		{"text", []byte("hello"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := docfile.Detect(c.data); got != c.want {
				t.Errorf("Detect = %q, want %q", got, c.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	enc := encryptedPDF(t)
	pdf, _ := bornDigital(t, bornDigitalPage)
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"encrypted", enc, docfile.ErrEncrypted},
		{"truncated", pdf[:120], docfile.ErrCorrupt},
		{"garbage after the header", append([]byte("%PDF-1.7\n"), strings.Repeat("garbage ", 100)...), docfile.ErrCorrupt},
		{"not a document", []byte("hello, world"), docfile.ErrNotDocument},
		{"empty", nil, docfile.ErrNotDocument},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := testReader(t).Open(ctxFor(t, time.Minute), c.data)
			if err == nil {
				doc.Close()
				t.Fatalf("opened; want %v", c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v; want %v", err, c.want)
			}
		})
	}
}

func encryptedPDF(t testing.TB) []byte {
	t.Helper()
	pdf := newFpdf()
	pdf.SetProtection(0, "user-secret", "owner-secret")
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 12)
	pdf.Text(72, 72, "TOP SECRET")
	return output(t, pdf)
}

// TestPageSizeAndCost: the cheap size agrees with the full read, and no page's render costs more
// than the bound a caller can charge before opening anything.
func TestPageSizeAndCost(t *testing.T) {
	born, _ := bornDigital(t, bornDigitalPage)
	rec := receipt(t, "photo")
	bound := docfile.Limits{}.MaxPageCost()
	// A TIFF page at the raster limit: 20 bytes a pixel at most (8 samples of 16 bits in one
	// strip, and the output), and the decoder's state.
	if bound.Pixels != 50_000_000 || bound.Bytes != 20*50_000_000+4<<20 {
		t.Errorf("default bound %+v", bound)
	}
	ctx := ctxFor(t, time.Minute)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"born-digital", born},
		{"scan", scannedPDF(t, [][]byte{rec.JPEG}, nil)},
		{"tiff", tiffPages(t, stripes(40, 30, 0), stripes(30, 40, 1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := open(t, c.data)
			for n := 1; n <= doc.NumPages(); n++ {
				w, h, err := doc.PageSize(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				p, err := doc.Page(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(w-p.Width) > 0.01 || math.Abs(h-p.Height) > 0.01 {
					t.Errorf("page %d: PageSize %v×%v, Page %v×%v", n, w, h, p.Width, p.Height)
				}
				cost := p.RenderCost(scaleOf(t, p, docfile.Limits{}))
				if cost.Pixels > bound.Pixels || cost.Bytes > bound.Bytes || cost.Pixels != int64(cost.Width)*int64(cost.Height) {
					t.Errorf("page %d: cost %+v over the bound %+v", n, cost, bound)
				}
			}
			if _, _, err := doc.PageSize(ctx, doc.NumPages()+1); !errors.Is(err, docfile.ErrBadSelection) {
				t.Errorf("page past the end: %v", err)
			}
		})
	}
}
