package document_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/tiff"

	"github.com/ocrgate/ocrgate/internal/pdfengine"
	"github.com/ocrgate/ocrgate/service/document"
)

// The documents of these tests are written by the tests: born-digital PDFs with go-pdf/fpdf,
// scanned PDFs wrapping the SROIE receipts, hostile PDFs by hand (raw objects and a computed
// cross-reference table), multi-page TIFFs with x/image/tiff plus a hand-built IFD chain.

const datasetDir = "../../../shared/datasets/sroie-dev"

// One Reader (one compiled engine) for the whole package, as in the service.
var (
	readerOnce sync.Once
	reader     *document.Reader
	readerErr  error
)

// engineStartup bounds the one compilation of the PDF engine in a test binary. Under the race
// detector the compiler (Go code) runs several times slower, and the machine may be shared, so
// this is generous; tests then time only their own work.
const engineStartup = 15 * time.Minute

func testReader(t testing.TB) *document.Reader {
	t.Helper()
	readerOnce.Do(func() {
		reader = document.NewReader(document.Config{Engine: pdfengine.Config{CacheDir: testCacheDir()}})
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
type drawn struct {
	X, Y, Size float64
	Text       string
}

// bornDigital writes a PDF with one page per entry of pages (A4 portrait), each holding its
// strings, and returns it with the width fpdf measures for each string (in points).
func bornDigital(t testing.TB, pages ...[]drawn) ([]byte, [][]float64) {
	t.Helper()
	pdf := fpdf.New("P", "pt", "A4", "")
	widths := make([][]float64, len(pages))
	for i, strs := range pages {
		pdf.AddPage()
		for _, s := range strs {
			pdf.SetFont("Helvetica", "", s.Size)
			pdf.Text(s.X, s.Y, s.Text)
			widths[i] = append(widths[i], pdf.GetStringWidth(s.Text))
		}
	}
	return output(t, pdf), widths
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
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 595, Ht: 842}})
	for i, data := range jpegs {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("receipt %d: %v", i, err)
		}
		w, h := float64(cfg.Width)*72/scanDPI, float64(cfg.Height)*72/scanDPI
		pdf.AddPageFormat("P", fpdf.SizeType{Wd: w, Ht: h})
		name := fmt.Sprintf("scan%d", i)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "JPG"}, bytes.NewReader(data))
		pdf.ImageOptions(name, 0, 0, w, h, false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
		if mark {
			pdf.SetFillColor(255, 255, 255)
			pdf.Rect(0, 0, 0.5, 0.5, "F")
		}
	}
	if extra != nil {
		pdf.AddPageFormat("P", fpdf.SizeType{Wd: 595, Ht: 842})
		for _, s := range extra {
			pdf.SetFont("Helvetica", "", s.Size)
			pdf.Text(s.X, s.Y, s.Text)
		}
	}
	return output(t, pdf)
}

// receipt is one SROIE sample.
type receipt struct {
	ID   string
	JPEG []byte
}

// receipts reads the first n receipts of sroie-dev (all when n <= 0), in id order.
func receipts(t testing.TB, n int) []receipt {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(datasetDir, "img", "*.jpg"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no receipts under %s (the tests expect shared/ beside the checkout): %v", datasetDir, err)
	}
	sort.Strings(paths)
	if n > 0 && n < len(paths) {
		paths = paths[:n]
	}
	out := make([]receipt, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = receipt{ID: strings.TrimSuffix(filepath.Base(p), ".jpg"), JPEG: data}
	}
	return out
}

// rawPDF assembles a PDF from object bodies (object i+1 is objs[i]) with a correct
// cross-reference table, so that PDFium reads exactly what a test means and repairs nothing.
// The catalog must be object 1.
func rawPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// stream is a PDF stream object with the given dictionary entries around data.
func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// deflate compresses data with zlib (PDF's FlateDecode).
func deflate(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// onePage is a catalog, a page tree and one page of the given media box whose content is
// object 4 and whose resources are res; more objects follow from object 5.
func onePage(mediaBox, res, content string, more ...string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [%s] /Resources << %s >> /Contents 4 0 R >>", mediaBox, res),
		content,
	}
	return rawPDF(append(objs, more...)...)
}

// tiffPages encodes images as a multi-page TIFF: each is encoded alone by x/image/tiff (one IFD)
// and the files are concatenated, each IFD's offsets moved by its file's position and the IFDs
// chained. The result is a standard multi-page TIFF (little-endian, as the encoder writes).
func tiffPages(t testing.TB, imgs ...image.Image) []byte {
	t.Helper()
	var out []byte
	var prevNext int // position of the previous IFD's next-IFD field in out
	for i, img := range imgs {
		var b bytes.Buffer
		if err := tiff.Encode(&b, img, &tiff.Options{Compression: tiff.Deflate}); err != nil {
			t.Fatal(err)
		}
		f := b.Bytes()
		base := 0
		if i == 0 {
			out = append(out, f...)
		} else {
			// Append everything after the header, shifted so that file offset o lands at
			// base+o-8+8 = base+o with base = len(out)-8.
			base = len(out) - 8
			out = append(out, f[8:]...)
		}
		ifd := int(le32(f[4:]))
		n := int(le16(f[ifd:]))
		pos := base + ifd
		if i > 0 {
			// Rebase every offset-valued entry: values that do not fit in 4 bytes and the
			// strip offsets.
			for k := 0; k < n; k++ {
				e := out[pos+2+12*k:]
				tag, typ, count := le16(e), le16(e[2:]), le32(e[4:])
				size := map[uint16]uint32{1: 1, 2: 1, 3: 2, 4: 4, 5: 8}[typ] * count
				if size > 4 {
					put32(e[8:], le32(e[8:])+uint32(base))
				}
				if tag == 273 { // StripOffsets
					if size <= 4 {
						put32(e[8:], le32(e[8:])+uint32(base))
					} else {
						arr := out[le32(e[8:]):]
						for j := uint32(0); j < count; j++ {
							put32(arr[4*j:], le32(arr[4*j:])+uint32(base))
						}
					}
				}
			}
			put32(out[prevNext:], uint32(pos))
		}
		prevNext = pos + 2 + 12*n
	}
	return out
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
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
