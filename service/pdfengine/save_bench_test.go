package pdfengine

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/structs"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/export"
	"github.com/ocrgate/ocrgate/service/pdffile"
)

// The searchable PDF of a PDF is written in Go (export.UpdatePDF over pdffile); these
// benchmarks measure the alternative, PDFium's own editing and saving, on the same input: a
// scanned 3-page PDF (A4 at 200 dpi, noisy gray JPEGs) with 300 words a page.
const benchPages, benchWords = 3, 300

// benchScan is the benchmarks' input and each page's words, boxes in pixels at 200 dpi.
func benchScan(b *testing.B) ([]byte, []api.Page) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewGray(image.Rect(0, 0, 1654, 2339))
	for i := range img.Pix {
		img.Pix[i] = uint8(200 + rng.IntN(56))
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, img, &jpeg.Options{Quality: 80}); err != nil {
		b.Fatal(err)
	}
	jpegs := make([][]byte, benchPages)
	pages := make([]api.Page, benchPages)
	for i := range jpegs {
		jpegs[i] = jpg.Bytes()
		p := api.Page{Page: i + 1, Width: 1654, Height: 2339, Source: "ocr"}
		var r api.Region
		for k := range benchWords {
			x, y := 100+(k%10)*140, 100+(k/10)*70
			r.Words = append(r.Words, api.Word{Text: fmt.Sprintf("word%d", k), BoundingShape: api.BoundingShape{Points: []api.Point{
				{X: x, Y: y}, {X: x + 120, Y: y}, {X: x + 120, Y: y + 40}, {X: x, Y: y + 40}}}})
		}
		p.Regions = []api.Region{r}
		pages[i] = p
	}
	data, err := testdoc.Scanned(jpegs, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		b.Fatal(err)
	}
	return data, pages
}

// BenchmarkLayerGo writes the layer by incremental update in Go.
func BenchmarkLayerGo(b *testing.B) {
	data, pages := benchScan(b)
	layers := map[int]api.Page{}
	for i, p := range pages {
		layers[i] = p
	}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		f, err := pdffile.Open(data)
		if err != nil {
			b.Fatal(err)
		}
		pp, err := f.Pages(100)
		if err != nil {
			b.Fatal(err)
		}
		if err := export.UpdatePDF(&out, data, f, pp, layers, export.Software{Name: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	report(b, data, out.Bytes())
}

// BenchmarkLayerPDFium adds the same words through PDFium's editing API (a text object per word
// in Helvetica, invisible, scaled onto its box; the page's content regenerated) and saves the
// document incrementally (FPDF_SaveAsCopy, FPDF_INCREMENTAL); BenchmarkSavePDFium saves it
// unedited, rewritten whole (FPDF_NO_INCREMENTAL).
func BenchmarkLayerPDFium(b *testing.B) { benchPDFium(b, true) }
func BenchmarkSavePDFium(b *testing.B)  { benchPDFium(b, false) }

func benchPDFium(b *testing.B, edit bool) {
	data, pages := benchScan(b)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		d, err := testEngine(b).Open(b.Context(), data, 0)
		if err != nil {
			b.Fatal(err)
		}
		if edit {
			err = d.do(b.Context(), func(inst pdfium.Pdfium) error { return addWords(inst, d, pages) })
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Save(b.Context(), &out, edit, 1<<30); err != nil {
			b.Fatal(err)
		}
		_ = d.Close()
	}
	report(b, data, out.Bytes())
}

func addWords(inst pdfium.Pdfium, d *Doc, pages []api.Page) error {
	for i, p := range pages {
		pg, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: d.ref, Index: i})
		if err != nil {
			return err
		}
		page := requests.Page{ByReference: &pg.Page}
		scale := 72.0 / 200
		hPt := float64(p.Height) * scale
		for _, r := range p.Regions {
			for _, w := range r.Words {
				obj, err := inst.FPDFPageObj_NewTextObj(&requests.FPDFPageObj_NewTextObj{Document: d.ref, Font: "Helvetica", FontSize: 1})
				if err != nil {
					return err
				}
				if _, err := inst.FPDFText_SetText(&requests.FPDFText_SetText{PageObject: obj.PageObject, Text: w.Text}); err != nil {
					return err
				}
				if _, err := inst.FPDFTextObj_SetTextRenderMode(&requests.FPDFTextObj_SetTextRenderMode{PageObject: obj.PageObject, TextRenderMode: enums.FPDF_TEXTRENDERMODE_INVISIBLE}); err != nil {
					return err
				}
				pts := w.BoundingShape.Points
				wPt := float64(pts[1].X-pts[0].X) * scale
				hWord := float64(pts[2].Y-pts[1].Y) * scale
				// Helvetica's glyphs average about half an em: stretch the word onto its box.
				sx := wPt / (0.55 * float64(len(w.Text)))
				m := structs.FPDF_FS_MATRIX{A: float32(sx), D: float32(hWord), E: float32(float64(pts[0].X) * scale), F: float32(hPt - float64(pts[3].Y)*scale + 0.2*hWord)}
				if _, err := inst.FPDFPageObj_Transform(&requests.FPDFPageObj_Transform{PageObject: obj.PageObject, Transform: m}); err != nil {
					return err
				}
				if _, err := inst.FPDFPage_InsertObject(&requests.FPDFPage_InsertObject{Page: page, PageObject: obj.PageObject}); err != nil {
					return err
				}
			}
		}
		if _, err := inst.FPDFPage_GenerateContent(&requests.FPDFPage_GenerateContent{Page: page}); err != nil {
			return err
		}
		if _, err := inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: pg.Page}); err != nil {
			return err
		}
	}
	return nil
}

// report gives the output's size over the input's, and, where poppler's tools are installed,
// whether pdftotext reads every word and pdftoppm draws the first page as the input does
// (OCRGATE_BENCH_OUT names a directory to keep the output in).
func report(b *testing.B, in, out []byte) {
	b.ReportMetric(float64(len(out)), "bytes/out")
	b.ReportMetric(float64(len(out)-len(in)), "bytes-added")
	b.ReportMetric(boolMetric(bytes.HasPrefix(out, in)), "input-kept")
	dir := b.TempDir()
	if keep := os.Getenv("OCRGATE_BENCH_OUT"); keep != "" {
		dir = keep
	}
	inPath, outPath := filepath.Join(dir, "in.pdf"), filepath.Join(dir, b.Name()+".pdf")
	_ = os.WriteFile(inPath, in, 0o600)
	_ = os.WriteFile(outPath, out, 0o600)
	if txt, err := exec.Command("pdftotext", outPath, "-").Output(); err == nil {
		b.ReportMetric(float64(strings.Count(string(txt), "word")), "words-read")
	}
	a, err1 := exec.Command("pdftoppm", "-r", "30", "-gray", "-f", "1", "-l", "1", inPath).Output()
	o, err2 := exec.Command("pdftoppm", "-r", "30", "-gray", "-f", "1", "-l", "1", outPath).Output()
	if err1 == nil && err2 == nil {
		b.ReportMetric(boolMetric(bytes.Equal(a, o)), "same-pixels")
	}
}

func boolMetric(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
