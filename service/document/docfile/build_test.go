package docfile_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// The documents of these tests are written by the tests: born-digital PDFs with go-pdf/fpdf,
// scanned PDFs wrapping the rendered receipts, hostile PDFs by hand (raw objects and a computed
// cross-reference table), multi-page TIFFs with x/image/tiff plus a hand-built IFD chain. The
// receipts are the ones the repository renders (testdata/receipts, see internal/testenv).

// One Reader (one compiled engine) for the whole package, as in the service.
var (
	readerOnce sync.Once
	reader     *docfile.Reader
	readerErr  error
)

// engineStartup bounds the one compilation of the PDF engine in a test binary. Under the race
// detector the compiler (Go code) runs several times slower, and the machine may be shared, so
// this is generous; tests then time only their own work.
const engineStartup = 15 * time.Minute

func testReader(t testing.TB) *docfile.Reader {
	t.Helper()
	readerOnce.Do(func() {
		reader = docfile.NewReader(docfile.Config{Engine: pdfengine.Config{CacheDir: testCacheDir()}})
		ctx, cancel := context.WithTimeout(context.Background(), engineStartup)
		defer cancel()
		readerErr = reader.Ready(ctx)
	})
	if readerErr != nil {
		t.Fatalf("PDF engine: %v", readerErr)
	}
	return reader
}

// testCacheDir keeps the compiled engine between test runs (and between fuzzing workers) in the
// user's cache directory; without one, every test binary compiles it.
func testCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "ocrgate", "pdfium-wasm-test")
}

// drawn is a string drawn on a born-digital page: baseline at (X, Y) points from the top-left
// corner, Helvetica at Size points.
type drawn = testdoc.Text

// bornDigital writes a PDF with one page per entry of pages (A4 portrait), each holding its
// strings, and returns it with the width fpdf measures for each string (in points).
func bornDigital(t testing.TB, pages ...[]drawn) ([]byte, [][]float64) {
	t.Helper()
	data, widths, err := testdoc.BornDigital(pages...)
	if err != nil {
		t.Fatal(err)
	}
	return data, widths
}

func newFpdf() *fpdf.Fpdf { return fpdf.New("P", "pt", "A4", "") }

func output(t testing.TB, pdf *fpdf.Fpdf) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatalf("write PDF: %v", err)
	}
	return buf.Bytes()
}

// scanDPI is the resolution the receipts are wrapped at: each JPEG fills a page of its pixel size
// at this resolution, as a scanner's PDF does.
const scanDPI = 200

// scannedPDF wraps JPEGs as the pages of a PDF, one image filling each page; extra adds a
// born-digital page after the scans when not nil.
func scannedPDF(t testing.TB, jpegs [][]byte, extra []drawn) []byte {
	return scanned(t, jpegs, extra, false)
}

// markedScanPDF is scannedPDF with a white half-point square drawn over each scan's top-left
// corner: a vector object on the page, so the page is rendered instead of having its JPEG read.
func markedScanPDF(t testing.TB, jpegs [][]byte) []byte {
	return scanned(t, jpegs, nil, true)
}

func scanned(t testing.TB, jpegs [][]byte, extra []drawn, mark bool) []byte {
	t.Helper()
	data, err := testdoc.Scanned(jpegs, testdoc.ScanOptions{DPI: scanDPI, Mark: mark, After: extra})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// scan is one receipt of testdata/receipts.
type scan struct {
	ID   string
	JPEG []byte
}

// receipt reads the receipt id of testdata/receipts.
func receipt(t testing.TB, id string) scan {
	t.Helper()
	return scan{ID: id, JPEG: testenv.Receipt(t, id)}
}

// receipts reads the first n receipts of testdata/receipts (all when n <= 0), in id order.
func receipts(t testing.TB, n int) []scan {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testenv.Receipts(t), "img", "*.jpg"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no receipts in testdata/receipts: %v", err)
	}
	sort.Strings(paths)
	if n > 0 && n < len(paths) {
		paths = paths[:n]
	}
	out := make([]scan, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = scan{ID: strings.TrimSuffix(filepath.Base(p), ".jpg"), JPEG: data}
	}
	return out
}

// The hand-made PDFs and the TIFFs come from internal/testdoc.
var (
	rawPDF  = testdoc.Raw
	stream  = testdoc.Stream
	onePage = testdoc.OnePage
)

// tiffPages encodes images as a multi-page TIFF (see testdoc.TIFF).
func tiffPages(t testing.TB, imgs ...image.Image) []byte {
	t.Helper()
	data, err := testdoc.TIFF(imgs...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// stripes is a w×h gray test image with a page-specific pattern: a dark square whose position
// tells pages apart.
func stripes(w, h, page int) image.Image {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint8(255)
			if x/10 == page && y < 10 {
				v = 0
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	return img
}

// scaleOf is the page's OCR scale under the default policy and lim; a page that has none fails
// the test.
func scaleOf(t testing.TB, p *docfile.Page, lim docfile.Limits) float64 {
	t.Helper()
	s, err := p.Scale(docfile.DefaultScalePolicy(), lim)
	if err != nil {
		t.Fatalf("page %d: %v", p.Number, err)
	}
	return s
}
