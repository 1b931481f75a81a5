package export

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/internal/testenv"
)

// pdftotextWord is a word as `pdftotext -bbox` reports it, in points from the top-left corner.
type pdftotextWord struct {
	Text                   string  `xml:",chardata"`
	XMin, YMin, XMax, YMax float64 `xml:"-"`
}

// readBack runs poppler's pdftotext -bbox on a PDF and returns its words with their boxes.
func readBack(t *testing.T, pdf []byte, args ...string) []pdftotextWord {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.Command(t, "pdftotext", popplerHint)
	out, err := exec.Command("pdftotext", append(append([]string{"-bbox", "-raw"}, args...), path, "-")...).Output()
	if err != nil {
		t.Fatalf("pdftotext (poppler-utils) on the PDF: %v", err)
	}
	d := xml.NewDecoder(bytes.NewReader(out))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var words []pdftotextWord
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "word" {
			var w pdftotextWord
			for _, a := range se.Attr {
				v, _ := strconv.ParseFloat(a.Value, 64)
				switch a.Name.Local {
				case "xMin":
					w.XMin = v
				case "yMin":
					w.YMin = v
				case "xMax":
					w.XMax = v
				case "yMax":
					w.YMax = v
				}
			}
			if err := d.DecodeElement(&w, &se); err != nil {
				t.Fatal(err)
			}
			words = append(words, w)
		}
	}
	return words
}

func iou(a, b [4]float64) float64 {
	ix := math.Max(0, math.Min(a[2], b[2])-math.Max(a[0], b[0]))
	iy := math.Max(0, math.Min(a[3], b[3])-math.Max(a[1], b[1]))
	inter := ix * iy
	union := (a[2]-a[0])*(a[3]-a[1]) + (b[2]-b[0])*(b[3]-b[1]) - inter
	if union <= 0 {
		return 0
	}
	return inter / union
}

// TestSearchablePDF: a JPEG page with words in Latin, Chinese and German, one of them turned
// 90°, reads back through poppler's pdftotext with the same words in order, each on its box
// (IoU ≥ 0.5 with the answer's box, in points at the JPEG's 150 dpi), and the JPEG is embedded
// byte for byte.
func TestSearchablePDF(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 1200, 900))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(10, 10, color.Black)
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	page := samplePDFPage()
	var out bytes.Buffer
	w := NewPDFWriter(&out, Software{Name: "ocrgate", Version: "test"})
	if err := w.AddPage(PDFPage{Image: PDFImage{JPEG: jb.Bytes(), Width: 1200, Height: 900, DPI: 150}, Answer: page}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), jb.Bytes()) {
		t.Errorf("the JPEG is not in the PDF byte for byte")
	}
	got := readBack(t, out.Bytes())
	var want []api.Word
	for _, r := range page.Regions {
		want = append(want, r.Words...)
	}
	var texts []string
	for _, g := range got {
		texts = append(texts, g.Text)
	}
	if len(got) != len(want) {
		t.Fatalf("pdftotext reads %q; the answer has %d words", texts, len(want))
	}
	const pt = 72.0 / 150
	for i, w := range want {
		x0, y0, x1, y1 := pointsBox(w.BoundingShape)
		wb := [4]float64{x0 * pt, y0 * pt, x1 * pt, y1 * pt}
		gb := [4]float64{got[i].XMin, got[i].YMin, got[i].XMax, got[i].YMax}
		if got[i].Text != w.Text || iou(wb, gb) < 0.5 {
			t.Errorf("word %d: pdftotext %q at %v; the answer %q at %v (IoU %.2f)", i, got[i].Text, gb, w.Text, wb, iou(wb, gb))
		}
	}
}

func pointsBox(s api.BoundingShape) (x0, y0, x1, y1 float64) {
	x0, y0, x1, y1 = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range s.Points {
		x0, y0 = math.Min(x0, float64(p.X)), math.Min(y0, float64(p.Y))
		x1, y1 = math.Max(x1, float64(p.X)), math.Max(y1, float64(p.Y))
	}
	return
}

// samplePDFPage is a 1200×900 page of three lines: Latin, Chinese, and a word turned 90°
// (reading bottom to top: its top-left corner is at the bottom-left of its box).
func samplePDFPage() api.Page {
	w := func(t string, x0, y0, x1, y1 int) api.Word {
		return api.Word{Text: t, Confidence: 0.9, BoundingShape: shape(x0, y0, x1, y1)}
	}
	turned := api.Word{Text: "ROTATED", Confidence: 0.9, BoundingShape: api.BoundingShape{Type: "polygon", Rotation: -90,
		Points: []api.Point{{X: 1000, Y: 700}, {X: 1000, Y: 300}, {X: 1060, Y: 300}, {X: 1060, Y: 700}}}}
	return api.Page{Page: 1, Width: 1200, Height: 900, Source: "ocr", Regions: []api.Region{
		{Text: "Hello straße", BoundingShape: shape(100, 100, 700, 160), Words: []api.Word{w("Hello", 100, 100, 350, 160), w("straße", 400, 100, 700, 160)}},
		{Text: "世界和平", BoundingShape: shape(100, 300, 500, 380), Words: []api.Word{w("世界和平", 100, 300, 500, 380)}},
		{Text: "ROTATED", BoundingShape: turned.BoundingShape, Words: []api.Word{turned}},
	}}
}

func TestPDFNumbers(t *testing.T) {
	for v, want := range map[float64]string{0: "0", -0.0001: "0", 1.5: "1.5", 2: "2", -3.25: "-3.25", 1.0 / 3: "0.333"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
	_ = strings.TrimSpace
}

// TestSearchablePDFLooksTheSame: the page drawn by poppler's pdftoppm is the same, pixel for
// pixel, with and without its invisible text: the text layer adds nothing to what is seen.
func TestSearchablePDFLooksTheSame(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 600, 450))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	page := samplePDFPage()
	page.Width, page.Height = 1200, 900 // boxes twice the picture's pixels: scaled onto it
	draw := func(a api.Page) []byte {
		var out bytes.Buffer
		w := NewPDFWriter(&out, Software{Name: "ocrgate"})
		if err := w.AddPage(PDFPage{Image: PDFImage{JPEG: jb.Bytes(), Width: 600, Height: 450, DPI: 72}, Answer: a}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in.pdf"), out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		testenv.Command(t, "pdftoppm", popplerHint)
		if out, err := exec.Command("pdftoppm", "-r", "72", "-png", filepath.Join(dir, "in.pdf"), filepath.Join(dir, "page")).CombinedOutput(); err != nil {
			t.Fatalf("pdftoppm (poppler-utils): %v: %s", err, out)
		}
		png, err := os.ReadFile(filepath.Join(dir, "page-1.png"))
		if err != nil {
			t.Fatal(err)
		}
		return png
	}
	with, without := draw(page), draw(api.Page{Width: 1200, Height: 900})
	if !bytes.Equal(with, without) {
		t.Errorf("the page drawn with its text layer differs from the page without it")
	}
}

// TestBilevelPage: a black-and-white page is embedded at one bit a pixel, and pdftoppm draws the
// same pixels as it would from eight.
func TestBilevelPage(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 203, 97))
	for i := range g.Pix {
		if (i*7)%13 < 5 {
			g.Pix[i] = 0xff
		}
	}
	one := SamplesOf(g)
	if !one.Bilevel || len(one.Samples) != 26*97 {
		t.Fatalf("bilevel %v, %d bytes", one.Bilevel, len(one.Samples))
	}
	eight := PDFImage{Samples: g.Pix, Components: 1, Width: 203, Height: 97}
	draw := func(img PDFImage) []byte {
		var b bytes.Buffer
		w := NewPDFWriter(&b, Software{})
		img.DPI = 72
		if err := w.AddPage(PDFPage{Image: img, Answer: api.Page{Width: 203, Height: 97}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return pgm(t, b.Bytes())
	}
	if !bytes.Equal(draw(one), draw(eight)) {
		t.Error("the one-bit page draws differently")
	}
}

// pgm draws a PDF's first page with pdftoppm at 72 dpi in gray.
func pgm(t *testing.T, pdf []byte) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.Command(t, "pdftoppm", popplerHint)
	out, err := exec.Command("pdftoppm", "-r", "72", "-gray", path).Output()
	if err != nil {
		t.Fatalf("pdftoppm: %v", err)
	}
	return out
}

// The install hints of the programs the PDF tests read their output with: in the fast tier a
// missing one skips the test, in the full tier it fails with the hint (see internal/testenv).
const (
	popplerHint = "make poppler installs poppler-utils (make test does)"
	qpdfHint    = "make qpdf installs it (make test does)"
)
