package export

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/pdffile"
)

// answerWords is a page answer of the given pixel size holding one region of words, each word
// given as its text and its pixel box (x0, y0, x1, y1) upright on the displayed page.
func answerWords(w, h int, words map[string][4]int) api.Page {
	var r api.Region
	for text, b := range words {
		r.Words = append(r.Words, api.Word{Text: text, BoundingShape: api.BoundingShape{Points: []api.Point{
			{X: b[0], Y: b[1]}, {X: b[2], Y: b[1]}, {X: b[2], Y: b[3]}, {X: b[0], Y: b[3]}}}})
		r.Text += text + " "
	}
	return api.Page{Width: w, Height: h, Source: "ocr", Regions: []api.Region{r}}
}

// run runs a poppler or qpdf tool on a PDF written to a temporary file and returns its output.
func run(t *testing.T, pdf []byte, name string, args ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	if name == "qpdf" {
		testenv.Command(t, name, qpdfHint)
	}
	cmd := exec.Command(name, append(args, path)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// update makes pdf searchable with layers by page index.
func update(t *testing.T, pdf []byte, layers map[int]api.Page) []byte {
	t.Helper()
	f, err := pdffile.Open(pdf)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := f.Pages(1000)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := UpdatePDF(&out, pdf, f, pages, layers, Software{Name: "test"}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// toXRefStreams has qpdf rewrite a PDF with object streams and a cross-reference stream.
func toXRefStreams(t *testing.T, pdf []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.Command(t, "qpdf", qpdfHint)
	if b, err := exec.Command("qpdf", "--object-streams=generate", in, out).CombinedOutput(); err != nil {
		t.Fatalf("qpdf (make qpdf installs it): %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("/ObjStm")) {
		t.Fatal("qpdf wrote no object stream")
	}
	return b
}

// TestUpdatePDF lays words over a page of every /Rotate, with a crop box whose origin is not the
// media box's, in a file whose cross-reference is a table and one where it is a stream (objects
// in object streams): pdftotext finds every word on its box (in display points: the answer's
// pixels at 144 dpi), the original bytes are the output's first bytes, qpdf --check passes and
// pdftoppm draws the same pixels.
func TestUpdatePDF(t *testing.T) {
	words := map[string][4]int{"Grüße": {40, 60, 200, 90}, "中文": {240, 60, 320, 100}, "receipt": {60, 300, 400, 340}}
	for _, rot := range []int{0, 90, 180, 270} {
		for _, streams := range []bool{false, true} {
			t.Run(fmt.Sprintf("rotate%d/xrefstream=%v", rot, streams), func(t *testing.T) {
				// Media box 400×300 pt, crop box 360×280 pt from (20, 10); resources inherited.
				in := testdoc.Raw(
					"<< /Type /Catalog /Pages 2 0 R >>",
					"<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /ProcSet [/PDF] >> >>",
					fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 300] /CropBox [20 10 380 290] /Rotate %d /Contents 4 0 R >>", rot),
					testdoc.Stream("", []byte("0.5 g 40 40 100 50 re f 1 0 0 1 5 5 cm")),
				)
				if streams {
					in = toXRefStreams(t, in)
				}
				dw, dh := 360, 280
				if rot%180 != 0 {
					dw, dh = dh, dw
				}
				out := update(t, in, map[int]api.Page{0: answerWords(dw*2, dh*2, words)})
				if !bytes.HasPrefix(out, in) {
					t.Fatal("the original bytes are not kept")
				}
				got := readBack(t, out, "-cropbox")
				if len(got) != len(words) {
					t.Fatalf("pdftotext found %d words, want %d: %+v", len(got), len(words), got)
				}
				for _, w := range got {
					b, ok := words[w.Text]
					if !ok {
						t.Fatalf("pdftotext found %q", w.Text)
					}
					want := [4]float64{float64(b[0]) / 2, float64(b[1]) / 2, float64(b[2]) / 2, float64(b[3]) / 2}
					if v := iou(want, [4]float64{w.XMin, w.YMin, w.XMax, w.YMax}); v < 0.8 {
						t.Errorf("%q at %+v, want %v (IoU %.2f)", w.Text, w, want, v)
					}
				}
				if out := run(t, out, "qpdf", "--check"); !bytes.Contains(out, []byte("No syntax or stream encoding errors")) {
					t.Errorf("qpdf --check:\n%s", out)
				}
				if a, b := render(t, in), render(t, out); !bytes.Equal(a, b) {
					t.Error("pdftoppm draws the page differently with its text layer")
				}
			})
		}
	}
}

// render draws a PDF's first page with pdftoppm as PGM.
func render(t *testing.T, pdf []byte) []byte {
	t.Helper()
	testenv.Command(t, "pdftoppm", popplerHint)
	return run(t, pdf, "sh", "-c", `pdftoppm -r 72 -gray -f 1 -l 1 "$0" -`)
}

// TestUpdatePDFLeavesOtherPages: a page without a layer is not touched; a document given no layer
// is written back as it was.
func TestUpdatePDFLeavesOtherPages(t *testing.T) {
	in, _, err := testdoc.BornDigital([]testdoc.Text{{X: 72, Y: 100, Size: 12, Text: "first page"}}, []testdoc.Text{{X: 72, Y: 100, Size: 12, Text: "second page"}})
	if err != nil {
		t.Fatal(err)
	}
	if out := update(t, in, nil); !bytes.Equal(out, in) {
		t.Fatal("a document with no layer is not written back as it was")
	}
	out := update(t, in, map[int]api.Page{1: answerWords(1190, 1684, map[string][4]int{"added": {100, 400, 300, 440}})})
	f, err := pdffile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := f.Pages(10)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := pdffile.Open(in)
	op, _ := orig.Pages(10)
	var a, b bytes.Buffer
	pdffile.Write(&a, pages[0].Dict)
	pdffile.Write(&b, op[0].Dict)
	if a.String() != b.String() {
		t.Error("page 1, which got no layer, changed")
	}
	testenv.Command(t, "pdftotext", popplerHint)
	txt := string(run(t, out, "sh", "-c", `pdftotext "$0" -`))
	if !bytes.Contains([]byte(txt), []byte("first page")) || !bytes.Contains([]byte(txt), []byte("second page")) || !bytes.Contains([]byte(txt), []byte("added")) {
		t.Errorf("pdftotext: %q", txt)
	}
}
