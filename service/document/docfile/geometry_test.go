package docfile_test

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"math"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/imaging"
)

// TestDegeneratePages: a page that would be drawn under a pixel on a side at every scale the
// render limits allow is refused with ErrDegenerate at once; fitting its scale used to shrink it
// forever (a 656-byte PDF held a core, an engine instance and its admission until shutdown).
// Pages that are merely odd (a long thin strip that still draws a pixel tall, a page a few
// points square) get a scale within the caps.
func TestDegeneratePages(t *testing.T) {
	r := testReader(t)
	for _, tt := range []struct {
		name string
		data []byte
		// degenerate: Page or Scale refuses the page; otherwise its render fits the caps.
		degenerate bool
	}{
		{"media box 14400×0.01 pt", hostile.PDFThinPage(14_400, 0.01), true},
		{"media box 0.01×14400 pt", hostile.PDFThinPage(0.01, 14_400), true},
		{"crop box 0.01×0.01 pt", hostile.PDFTinyCropBox(0.01), true},
		{"media box 14400×2 pt", hostile.PDFThinPage(14_400, 2), false},
		{"crop box 3×3 pt", hostile.PDFTinyCropBox(3), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.data) > 1024 {
				t.Fatalf("the PDF is %d bytes; the attack needs under a kilobyte", len(tt.data))
			}
			done := make(chan error, 1)
			var cost docfile.Cost
			go func() {
				doc, err := r.Open(ctxFor(t, time.Minute), tt.data)
				if err != nil {
					done <- err
					return
				}
				defer doc.Close()
				page, err := doc.Page(ctxFor(t, time.Minute), 1)
				if err != nil {
					done <- err
					return
				}
				s, err := page.Scale(docfile.DefaultScalePolicy(), r.Limits())
				if err == nil {
					cost = page.RenderCost(s)
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("no answer after two minutes: the page hangs the reader")
			}
			lim := r.Limits()
			switch {
			case tt.degenerate && !errors.Is(err, docfile.ErrDegenerate):
				t.Errorf("error %v; want ErrDegenerate", err)
			case !tt.degenerate && err != nil:
				t.Errorf("error %v; want a scale", err)
			case !tt.degenerate && (cost.Width < 1 || cost.Height < 1 || cost.Width > lim.MaxRenderSide ||
				cost.Height > lim.MaxRenderSide || cost.Pixels > int64(lim.MaxRenderPixels) || cost.Bytes <= 0):
				t.Errorf("render %+v is outside the caps", cost)
			}
		})
	}
}

// TestRenderCostSaturates: a scale no render can take is priced at the largest cost, never at a
// size that wrapped around.
func TestRenderCostSaturates(t *testing.T) {
	doc := open(t, hostile.PDFThinPage(14_400, 14_400))
	page, err := doc.Page(ctxFor(t, time.Minute), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), 1e300} {
		if c := page.RenderCost(s); c.Bytes != math.MaxInt64 || c.Pixels != math.MaxInt64 {
			t.Errorf("scale %v costs %+v; want the saturated cost", s, c)
		}
	}
}

// TestScanPricedByItsHeader: a scanned page read from the file is priced at what decoding its
// JPEG holds, from the JPEG's own header, as an upload of it is: a progressive JPEG's coefficients
// included.
func TestScanPricedByItsHeader(t *testing.T) {
	r := testReader(t)
	for _, tt := range []struct {
		name string
		jpg  []byte
		w, h int
	}{
		{"progressive 4:4:4", hostile.HugeProgressive(3000, 2000), 3000, 2000},
		{"baseline", baselineJPEG(t, 1200, 900), 1200, 900},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := imaging.Inspect(tt.jpg, r.Limits().Raster)
			if err != nil {
				t.Fatal(err)
			}
			doc := open(t, hostile.PDFScan(tt.jpg, h.Width, h.Height))
			page, err := doc.Page(ctxFor(t, time.Minute), 1)
			if err != nil {
				t.Fatal(err)
			}
			s := scaleOf(t, page, r.Limits())
			c := page.RenderCost(s)
			if c.Width != h.Width || c.Height != h.Height || c.Bytes != h.DecodeBytes() {
				t.Errorf("priced at %+v; the JPEG is %d×%d and decoding it holds %d bytes", c, h.Width, h.Height, h.DecodeBytes())
			}
		})
	}
}

// baselineJPEG is a w×h baseline JPEG of a gray gradient.
func baselineJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 251)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
