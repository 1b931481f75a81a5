package server_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/export"
	"github.com/ocrgate/ocrgate/service/pdfengine"
	"github.com/ocrgate/ocrgate/service/pdffile"
	"github.com/ocrgate/ocrgate/service/server"
)

// pdfPage is one page of `pdftotext -bbox-layout`: its size in points and its words with their
// boxes (points from the top-left corner of the page as displayed).
type pdfPage struct {
	width, height float64
	words         []string
	boxes         [][4]float64
}

// layoutWords runs poppler's pdftotext -bbox-layout on a PDF and returns its pages.
func layoutWords(t *testing.T, pdf []byte) []pdfPage {
	t.Helper()
	out := tool(t, pdf, "pdftotext", "-bbox-layout", "{}", "-")
	pageRe := regexp.MustCompile(`<page width="([0-9.]+)" height="([0-9.]+)">`)
	wordRe := regexp.MustCompile(`<word xMin="([0-9.]+)" yMin="([0-9.]+)" xMax="([0-9.]+)" yMax="([0-9.]+)">([^<]*)</word>`)
	locs := pageRe.FindAllSubmatchIndex(out, -1)
	var pages []pdfPage
	for i, l := range locs {
		end := len(out)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		var p pdfPage
		p.width, _ = strconv.ParseFloat(string(out[l[2]:l[3]]), 64)
		p.height, _ = strconv.ParseFloat(string(out[l[4]:l[5]]), 64)
		for _, m := range wordRe.FindAllSubmatch(out[l[1]:end], -1) {
			var b [4]float64
			for k := range b {
				b[k], _ = strconv.ParseFloat(string(m[k+1]), 64)
			}
			p.words = append(p.words, html.UnescapeString(string(m[5])))
			p.boxes = append(p.boxes, b)
		}
		pages = append(pages, p)
	}
	return pages
}

// tool runs a command on a PDF written to a temporary file ({} in args), and returns its
// standard output; it fails the test when the command fails.
func tool(t *testing.T, pdf []byte, name string, args ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{}", path)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v (make test installs poppler-utils and qpdf): %v\n%s", name, args, err, stderr.Bytes())
	}
	return out
}

// pdfAnswer posts data asking for a searchable PDF and returns it (status 200 and
// application/pdf, or the test fails).
func pdfAnswer(t *testing.T, app *checkedApp, data []byte) []byte {
	t.Helper()
	resp, err := app.Test(readRequest(data, map[string]any{"format": "pdf"}), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("status %d, %q: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return body
}

// roundTrip is how a searchable PDF reads back against the JSON answer on its OCR'd pages.
type roundTrip struct {
	words, on int     // the answer's words, and how many of them pdftotext finds on their box
	f1        float64 // word F1 of pdftotext's words against the answer's
}

// readBack compares the OCR'd pages of a JSON answer with pdftotext -bbox-layout of the PDF: the
// words as multisets (F1), and each answer word's box with the best unused box of the same word
// on its page (IoU ≥ 0.5), the answer's pixels scaled to the page's points.
func readBack(t *testing.T, d docBody, pages []pdfPage) roundTrip {
	t.Helper()
	if len(pages) != len(d.Pages) {
		t.Fatalf("pdftotext reads %d pages; the answer has %d", len(pages), len(d.Pages))
	}
	var rt roundTrip
	var got, want []string
	for i, ap := range d.Pages {
		if ap.Source != "ocr" {
			continue
		}
		p := pages[i]
		got = append(got, p.words...)
		used := make([]bool, len(p.words))
		// pdftotext gives a page turned by /Rotate its size unturned, and its words where they
		// are shown.
		pw, ph := p.width, p.height
		if (pw > ph) != (ap.Width > ap.Height) {
			pw, ph = ph, pw
		}
		sx, sy := pw/float64(ap.Width), ph/float64(ap.Height)
		for _, r := range ap.Regions {
			for _, w := range r.Words {
				want = append(want, w.Text)
				rt.words++
				x0, y0, x1, y1 := w.BoundingShape.bounds()
				wb := [4]float64{float64(x0) * sx, float64(y0) * sy, float64(x1) * sx, float64(y1) * sy}
				best, bi := 0.0, -1
				for k, g := range p.words {
					if used[k] || g != w.Text {
						continue
					}
					if v := boxIoU(p.boxes[k], wb); v > best {
						best, bi = v, k
					}
				}
				if best >= 0.5 {
					used[bi] = true
					rt.on++
				}
			}
		}
	}
	rt.f1 = wordF1(got, want)
	return rt
}

// turned is img turned a quarter clockwise.
func turned(img image.Image) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(b.Dy()-1-(y-b.Min.Y), x-b.Min.X, img.At(x, y))
		}
	}
	return out
}

func jpegEncode(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rotatedScan is a one-page PDF showing a JPEG of w×h pixels at 144 dpi on a page whose /Rotate
// is rot.
func rotatedScan(jpg []byte, w, h, rot int) []byte {
	pw, ph := float64(w)/2, float64(h)/2
	return testdoc.Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Rotate %d /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>", pw, ph, rot),
		testdoc.Stream("", []byte(fmt.Sprintf("q %g 0 0 %g 0 0 cm /Im0 Do Q", pw, ph))),
		testdoc.Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", w, h), jpg),
	)
}

// TestSearchablePDFOfADocument: documents asked for as "pdf" read back through poppler with the
// JSON answer's words (word F1 ≥ 0.99 on the OCR'd pages) on their boxes (IoU ≥ 0.5 for ≥ 95 %
// of them): a scanned two-page PDF, a mixed PDF (whose text page pdftotext reads as before), a
// page shown turned by /Rotate, a Chinese page, a page whose text is turned in its pixels, a
// file PDFium must repair, and a multi-page TIFF. A PDF keeps its bytes and draws the same pixels
// in pdftoppm and in PDFium (what Chromium's viewer draws with); every output passes qpdf --check and, for a PDF, is at most the input plus 10 %
// plus its text.
func TestSearchablePDFOfADocument(t *testing.T) {
	needModels(t) // real words to lay over the pages, and probes that read them
	f := fixtures(t)
	receipt := decoded(t, f.jpeg)
	fields := jpegOf(t, f.fields)
	chinese := decoded(t, readFile(t, filepath.Join("..", "ocr", "testdata", "vertical", "across-90.png")))
	rb := receipt.Bounds()
	tiff, err := testdoc.TIFF(receipt, decoded(t, fields))
	if err != nil {
		t.Fatal(err)
	}
	twoPages := scanned(t, [][]byte{f.jpeg, fields}, nil, false)
	app := docApp(t, server.Options{}, nil, nil)
	// PDFium is the engine Chromium's PDF viewer draws with (headless Chromium downloads a PDF
	// rather than showing it): each page is drawn by it too, as poppler draws it.
	pdfium := pdfengine.New(pdfengine.Config{Instances: 1})
	t.Cleanup(func() { _ = pdfium.Close() })
	for _, tt := range []struct {
		name string
		data []byte
		// kept: the output starts with the input, byte for byte (a PDF PDFium need not repair)
		kept bool
	}{
		{"scanned, two pages", twoPages, true},
		{"mixed", scanned(t, [][]byte{f.jpeg}, letter, false), true},
		{"Rotate 90", rotatedScan(f.jpeg, rb.Dx(), rb.Dy(), 90), true},
		{"Rotate 270", rotatedScan(f.jpeg, rb.Dx(), rb.Dy(), 270), true},
		{"Chinese", scanned(t, [][]byte{jpegEncode(t, turned(turned(turned(chinese))))}, nil, false), true},
		{"turned in its pixels", scanned(t, [][]byte{jpegEncode(t, chinese)}, nil, false), true},
		{"repaired by PDFium", append([]byte("\n\n\n"), twoPages...), false},
		{"TIFF", tiff, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := readDocument(t, app, tt.data, map[string]any{"words": true})
			pdf := pdfAnswer(t, app, tt.data)
			rt := readBack(t, d, layoutWords(t, pdf))
			if rt.words == 0 {
				t.Fatal("the answer has no OCR'd words")
			}
			if rt.f1 < 0.99 {
				t.Errorf("word F1 %.3f", rt.f1)
			}
			if rt.on*100 < 95*rt.words {
				t.Errorf("%d of %d words on their boxes", rt.on, rt.words)
			}
			if out := tool(t, pdf, "qpdf", "--check", "{}"); !bytes.Contains(out, []byte("No syntax or stream encoding errors")) {
				t.Errorf("qpdf --check: %s", out)
			}
			var text int
			for _, p := range d.Pages {
				if p.Source == "ocr" {
					text += len(p.Text)
				}
			}
			t.Logf("%d words, %d on their boxes, word F1 %.4f; %d bytes in, %d out (%d of text)", rt.words, rt.on, rt.f1, len(tt.data), len(pdf), text)
			if !tt.kept {
				return
			}
			if !bytes.HasPrefix(pdf, tt.data) {
				t.Error("the PDF's own bytes are not kept")
			}
			// The text's cost: per word its placement (a text matrix, about 60 bytes before
			// compression), and the font once.
			if limit := len(tt.data) + len(tt.data)/10 + 64*rt.words + 8<<10; len(pdf) > limit {
				t.Errorf("%d bytes out; the bound is %d", len(pdf), limit)
			}
			for i := range d.Pages {
				n := strconv.Itoa(i + 1)
				if a, b := tool(t, tt.data, "pdftoppm", "-r", "50", "-gray", "-f", n, "-l", n, "{}"), tool(t, pdf, "pdftoppm", "-r", "50", "-gray", "-f", n, "-l", n, "{}"); !bytes.Equal(a, b) {
					t.Errorf("page %d: pdftoppm draws it differently", i+1)
				}
				if a, b := pdfiumDraws(t, pdfium, tt.data, i), pdfiumDraws(t, pdfium, pdf, i); !bytes.Equal(a.Pix, b.Pix) {
					t.Errorf("page %d: PDFium draws it differently", i+1)
				}
				if d.Pages[i].Source == "text-layer" {
					if a, b := tool(t, tt.data, "pdftotext", "-f", n, "-l", n, "{}", "-"), tool(t, pdf, "pdftotext", "-f", n, "-l", n, "{}", "-"); !bytes.Equal(a, b) {
						t.Errorf("page %d, read from its text layer: pdftotext reads %q, from the input %q", i+1, b, a)
					}
				}
			}
		})
	}
}

// pdfiumDraws draws page index of a PDF with PDFium at 50 dpi, in gray.
func pdfiumDraws(t *testing.T, e *pdfengine.Engine, pdf []byte, index int) *image.Gray {
	t.Helper()
	ctx := context.Background()
	d, err := e.Open(ctx, pdf, 30*time.Second)
	if err != nil {
		t.Fatalf("PDFium opens the PDF: %v", err)
	}
	defer func() { _ = d.Close() }()
	w, h, err := d.PageSize(ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	img, err := d.RenderGray(ctx, index, int(w*50/72+0.5), int(h*50/72+0.5))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// alteredLayer is a searchable PDF of scan whose invisible layer says other words than the
// answer d: each word's letters reversed and shifted, on the same boxes.
func alteredLayer(t *testing.T, scan []byte, d docBody) []byte {
	t.Helper()
	f, err := pdffile.Open(scan)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := f.Pages(100)
	if err != nil {
		t.Fatal(err)
	}
	layers := map[int]api.Page{}
	for i, p := range d.Pages {
		a := api.Page{Page: p.Page, Width: p.Width, Height: p.Height, Source: "ocr"}
		for _, r := range p.Regions {
			var reg api.Region
			for _, w := range r.Words {
				var b strings.Builder
				rs := []rune(w.Text)
				for k := len(rs) - 1; k >= 0; k-- {
					c := rs[k]
					if c >= 'A' && c <= 'Y' || c >= '0' && c <= '8' {
						c++
					}
					b.WriteRune(c)
				}
				pts := make([]api.Point, len(w.BoundingShape.Points))
				for k, q := range w.BoundingShape.Points {
					pts[k] = api.Point{X: q.X, Y: q.Y}
				}
				reg.Words = append(reg.Words, api.Word{Text: b.String(), BoundingShape: api.BoundingShape{Points: pts}})
			}
			a.Regions = append(a.Regions, reg)
		}
		layers[i] = a
	}
	var out bytes.Buffer
	if err := export.UpdatePDF(&out, scan, f, pages, layers, export.Software{Name: "test"}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestSearchablePDFReadsBack: our own searchable PDF read again with "ocr": "auto" is answered
// from its invisible layer, once OCR of the layer's probes agrees with it, with the words the
// first answer had; the same scan with a layer that says other words is OCR'd (the layer
// disagrees), never answered from that layer.
func TestSearchablePDFReadsBack(t *testing.T) {
	needModels(t) // real words to lay over the pages, and probes that read them
	f := fixtures(t)
	scan := scanned(t, [][]byte{f.jpeg, jpegOf(t, f.fields)}, nil, false)
	app := docApp(t, server.Options{}, nil, nil)
	first := readDocument(t, app, scan, map[string]any{"words": true})
	pdf := pdfAnswer(t, app, scan)
	again := readDocument(t, app, pdf, map[string]any{"words": true})
	if len(again.Pages) != len(first.Pages) {
		t.Fatalf("%d pages, first %d", len(again.Pages), len(first.Pages))
	}
	var want, got []string
	for i, p := range again.Pages {
		if p.Source != "text-layer" || p.SourceReason != "text_layer_agrees" {
			t.Errorf("page %d read by %s (%s); want its layer, checked", i+1, p.Source, p.SourceReason)
		}
		want = append(want, strings.Fields(first.Pages[i].Text)...)
		got = append(got, strings.Fields(p.Text)...)
	}
	if f1 := wordF1(got, want); f1 < 0.99 {
		t.Errorf("word F1 %.3f of the layer's reading against the first answer: %q, first %q", f1, again.Text, first.Text)
	}
	t.Logf("read back from its layer: word F1 %.4f (%d words)", wordF1(got, want), len(want))

	altered := alteredLayer(t, scan, first)
	d := readDocument(t, app, altered, map[string]any{"words": true})
	for i, p := range d.Pages {
		if p.Source != "ocr" {
			t.Errorf("page %d with a false layer read by %s (%s)", i+1, p.Source, p.SourceReason)
		}
		if p.SourceReason != "text_layer_disagrees" {
			t.Errorf("page %d: reason %s", i+1, p.SourceReason)
		}
		if wordF1(strings.Fields(p.Text), strings.Fields(first.Pages[i].Text)) < 0.99 {
			t.Errorf("page %d read %q; first %q", i+1, p.Text, first.Pages[i].Text)
		}
	}
}
