package docfile_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
)

// scanWithText is a page filled by a JPEG with text drawn over it (render mode 3: invisible,
// as a scanner's OCR layer).
func scanWithText(t testing.TB, text []drawn, invisible bool) []byte {
	t.Helper()
	pdf := newFpdf()
	pdf.AddPage()
	pdf.RegisterImageOptionsReader("scan", fpdf.ImageOptions{ImageType: "JPG"}, bytes.NewReader(smallJPEG(t)))
	pdf.ImageOptions("scan", 0, 0, 595.28, 841.89, false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
	if invisible {
		pdf.SetTextRenderingMode(3)
	}
	for _, s := range text {
		pdf.SetFont("Helvetica", "", s.Size)
		pdf.Text(s.X, s.Y, s.Text)
	}
	return output(t, pdf)
}

// TestTextDecision: only real text stands in for OCR.
func TestTextDecision(t *testing.T) {
	born, _ := bornDigital(t, bornDigitalPage)
	unmapped := onePage("0 0 595 842",
		"/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding /Differences [65 /g1 /g2 /g3 /g4 /g5] >> >> >>",
		stream("", []byte("BT /F1 24 Tf 72 700 Td (ABCDEABCDEABCDE) Tj ET")))
	for _, c := range []struct {
		name   string
		data   []byte
		usable bool
		reason string
	}{
		{"born-digital", born, true, "born-digital text"},
		{"a scan", scannedPDF(t, [][]byte{smallJPEG(t)}, nil), false, "no text layer"},
		{"a page number over a scan", scanWithText(t, []drawn{{X: 280, Y: 820, Size: 9, Text: "Page 1 of 3"}}, false), false,
			"a few stray characters over a page image"},
		// Usable only as a candidate: the survey takes it where OCR of its probes agrees with it
		// (see Page.InvisibleLayer and the survey's checkInvisible).
		{"an invisible OCR layer over a scan", scanWithText(t, invoicePage(), true), true,
			"invisible text over a page image, taken if OCR of its probes agrees"},
		{"a few invisible words over a scan", scanWithText(t, []drawn{{X: 280, Y: 820, Size: 9, Text: "Page 1 of 3"}}, true), false,
			"invisible text over a page image (an earlier OCR layer)"},
		{"born-digital text over a background image", scanWithText(t, invoicePage(), false), true, "born-digital text"},
		{"glyphs without Unicode", unmapped, false, "the text layer's fonts do not map to Unicode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := open(t, c.data)
			p, err := doc.Page(ctxFor(t, time.Minute), 1)
			if err != nil {
				t.Fatal(err)
			}
			d := p.TextUsable()
			if invisible := strings.HasPrefix(c.name, "an invisible"); p.InvisibleLayer != invisible {
				t.Errorf("InvisibleLayer %v", p.InvisibleLayer)
			}
			if d.Usable != c.usable || d.Reason != c.reason {
				t.Errorf("usable %v (%s); want %v (%s) [chars %d, unmapped %d, image coverage %.2f]",
					d.Usable, d.Reason, c.usable, c.reason, p.Chars, p.Unmapped, p.ImageCoverage)
			}
		})
	}
}

// TestRotatedPage: on a page displayed turned 90° clockwise (/Rotate 90), text drawn level on
// the page reads top to bottom; its box must sit on its ink and its corners start at the text's
// own top-left (the display's top-right), as OCR boxes of vertical text do.
func TestRotatedPage(t *testing.T) {
	const text = "TOTAL TAX PAID AT"
	data := rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Rotate 90 /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> /Contents 4 0 R >>",
		stream("", []byte(fmt.Sprintf("BT /F1 24 Tf 72 700 Td (%s) Tj ET", text))),
	)
	doc := open(t, data)
	ctx := ctxFor(t, time.Minute)
	p, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Width-842) > 0.5 || math.Abs(p.Height-595) > 0.5 {
		t.Fatalf("displayed size %.0f×%.0f, want 842×595", p.Width, p.Height)
	}
	s := 2.0
	dec, err := doc.Render(ctx, p, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := p.Lines(dec.Width, dec.Height)
	if len(lines) != 1 || lines[0].Text != text {
		t.Fatalf("lines %+v, want one %q", lines, text)
	}
	q := lines[0].Quad
	if a := q.Angle(); math.Abs(a-90) > 0.5 {
		t.Errorf("top edge at %.1f°, want 90 (reading downwards)", a)
	}
	x0, y0, x1, y1 := q.Bounds()
	if q[0].X != x1 || q[0].Y != y0 {
		t.Errorf("first corner %v, want the display's top-right (%.1f, %.1f)", q[0], x1, y0)
	}
	ink := inkBounds(dec.Image, dec.Image.Bounds())
	if math.Abs(x0-float64(ink.Min.X)) > 2 || math.Abs(y0-float64(ink.Min.Y)) > 2 ||
		math.Abs(x1-float64(ink.Max.X)) > 2 || math.Abs(y1-float64(ink.Max.Y)) > 2 {
		t.Errorf("box (%.1f,%.1f)-(%.1f,%.1f), ink %v", x0, y0, x1, y1, ink)
	}
	if words := strings.Fields(text); len(lines[0].Words) != len(words) {
		t.Errorf("%d words, want %d", len(lines[0].Words), len(words))
	}
}

// TestLineEndHyphen: a word broken over two lines keeps the hyphen the page draws at the end of
// the first (as pdftotext gives it). PDFium marks such a hyphen with a control character of its
// own instead of the hyphen, which reached the answer as an invisible U+0002 ("com\x02").
func TestLineEndHyphen(t *testing.T) {
	data, _ := bornDigital(t, []drawn{
		{X: 72, Y: 100, Size: 12, Text: "Dynamic languages are more difficult to com-"},
		{X: 72, Y: 114, Size: 12, Text: "pile than statically typed ones."},
	})
	doc := open(t, data)
	ctx := ctxFor(t, time.Minute)
	p, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	lines := p.Lines(1190, 1684)
	var texts []string
	for _, l := range lines {
		texts = append(texts, l.Text)
	}
	want := []string{"Dynamic languages are more difficult to com-", "pile than statically typed ones."}
	if !slices.Equal(texts, want) {
		t.Errorf("lines %q, want %q", texts, want)
	}
}
