package docfile_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// The real OCR pipeline on the embedded runtime, once for the package.
var (
	engineOnce sync.Once
	emb        *engine.Engine
	engineErr  error
)

func pipeline(t testing.TB) *ocr.Pipeline {
	t.Helper()
	testenv.Models(t)
	engineOnce.Do(func() {
		cfg, err := config.Load(nil, os.Getenv, io.Discard)
		if err != nil {
			engineErr = err
			return
		}
		emb, engineErr = engine.Embedded(cfg)
	})
	if engineErr != nil {
		t.Fatalf("OCR engine: %v", engineErr)
	}
	return emb.Pipeline
}

// ocrPage renders page n of doc at the scale OCR wants and runs the pipeline on it.
func ocrPage(ctx context.Context, t testing.TB, doc *docfile.Document, n int) (*ocr.Result, *docfile.Page) {
	t.Helper()
	page, err := doc.Page(ctx, n)
	if err != nil {
		t.Fatalf("page %d: %v", n, err)
	}
	dec, err := doc.Render(ctx, page, scaleOf(t, page, docfile.Limits{}), nil)
	if err != nil {
		t.Fatalf("render page %d: %v", n, err)
	}
	res, err := pipeline(t).RunImage(ctx, dec)
	if err != nil {
		t.Fatalf("OCR page %d: %v", n, err)
	}
	return res, page
}

// TestScannedReceiptsReadLikeTheirJPEGs wraps every receipt of testdata/receipts as a page of a scanned
// PDF as a scanner writes it (one JPEG filling each page): the page's JPEG is read from the file,
// and the pixels must be exactly those of the JPEG sent alone. (TestRenderedScansScoreLikeTheirJPEGs,
// an accuracy test, covers the pages PDFium has to render.)
func TestScannedReceiptsReadLikeTheirJPEGs(t *testing.T) {
	testenv.Models(t)
	recs := receipts(t, 0)
	jpegs := make([][]byte, len(recs))
	for i, r := range recs {
		jpegs[i] = r.JPEG
	}
	ctx := ctxFor(t, 20*time.Minute)

	t.Run("JPEG read from the file", func(t *testing.T) {
		doc := open(t, scannedPDF(t, jpegs, nil))
		for i, r := range recs {
			page, err := doc.Page(ctx, i+1)
			if err != nil {
				t.Fatal(err)
			}
			if d := page.TextUsable(); d.Usable {
				t.Errorf("%s: a scanned page's text layer was judged usable (%s)", r.ID, d.Reason)
			}
			got, err := doc.Render(ctx, page, scaleOf(t, page, docfile.Limits{}), nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := imaging.Decode(r.JPEG, docfile.DefaultLimits().Raster)
			if err != nil {
				t.Fatal(err)
			}
			if err := samePixels(got.Image, want.Image); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
			_, gotView := got.Downscaled(1)
			_, wantView := want.Downscaled(1)
			if gotView != wantView {
				t.Errorf("%s: free downscaled view %v, the JPEG's %v", r.ID, gotView, wantView)
			}
		}
	})

}

// samePixels compares two decoded images exactly.
func samePixels(a, b image.Image) error {
	if a.Bounds() != b.Bounds() {
		return fmt.Errorf("bounds %v, want %v", a.Bounds(), b.Bounds())
	}
	switch x := a.(type) {
	case *image.YCbCr:
		y, ok := b.(*image.YCbCr)
		if ok && x.SubsampleRatio == y.SubsampleRatio && bytes.Equal(x.Y, y.Y) && bytes.Equal(x.Cb, y.Cb) && bytes.Equal(x.Cr, y.Cr) {
			return nil
		}
	case *image.Gray:
		if y, ok := b.(*image.Gray); ok && bytes.Equal(x.Pix, y.Pix) {
			return nil
		}
	}
	bd := a.Bounds()
	for yy := bd.Min.Y; yy < bd.Max.Y; yy++ {
		for xx := bd.Min.X; xx < bd.Max.X; xx++ {
			if a.At(xx, yy) != b.At(xx, yy) {
				return fmt.Errorf("pixel (%d,%d) is %v, want %v", xx, yy, a.At(xx, yy), b.At(xx, yy))
			}
		}
	}
	return nil
}

// TestMixedDocument has a scanned receipt, then a born-digital page: the first needs OCR, the
// second reads from its text layer, and both read what they hold.
func TestMixedDocument(t *testing.T) {
	testenv.Models(t)
	rec := receipt(t, "photo")
	doc := open(t, scannedPDF(t, [][]byte{rec.JPEG}, bornDigitalPage))
	ctx := ctxFor(t, 5*time.Minute)
	scan, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	digital, err := doc.Page(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := scan.TextUsable(); d.Usable || d.Reason != "no text layer" {
		t.Errorf("scan: usable %v (%s); want OCR for lack of a text layer", d.Usable, d.Reason)
	}
	if d := digital.TextUsable(); !d.Usable {
		t.Errorf("born-digital page: not usable (%s)", d.Reason)
	}
	if scan.ImageCoverage < 0.99 || scan.ImageScale < 2.7 || scan.ImageScale > 2.8 {
		t.Errorf("scan: image coverage %.2f at %.3f px/pt; want a full page at %.3f", scan.ImageCoverage, scan.ImageScale, scanDPI/72.0)
	}
	if digital.ImageCoverage != 0 || digital.TextHeight <= 0 {
		t.Errorf("born-digital page: image coverage %.2f, text height %.2f", digital.ImageCoverage, digital.TextHeight)
	}
	res, _ := ocrPage(ctx, t, doc, 1)
	if len(res.Regions) < 10 {
		t.Errorf("scan: %d regions read; a receipt holds dozens", len(res.Regions))
	}
	s := scaleOf(t, digital, docfile.Limits{})
	c := digital.RenderCost(s)
	lines := digital.Lines(c.Width, c.Height)
	if len(lines) != len(bornDigitalPage) || lines[0].Text != bornDigitalPage[0].Text {
		t.Errorf("born-digital page: %d lines, first %q", len(lines), first(lines))
	}
	if scan.Lines(100, 100) != nil {
		t.Errorf("the scan has text-layer lines")
	}
}

func first(lines []docfile.Line) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0].Text
}

// TestOCRWordsMatchTheTextLayer checks the OCR pipeline's word boxes (located from the
// recognizer's timesteps) against ground truth that does not come from OCR: a born-digital page's
// text layer. The page is rendered and OCR'd; every OCR word that reads like a text-layer word of
// its line must sit over it horizontally (overlap over union of the x extents at least 0.6) and
// cover its vertical middle.
func TestOCRWordsMatchTheTextLayer(t *testing.T) {
	testenv.Models(t)
	data, _ := bornDigital(t, invoicePage())
	doc := open(t, data)
	ctx := ctxFor(t, 5*time.Minute)
	res, page := ocrPage(ctx, t, doc, 1)
	lines := page.Lines(res.Width, res.Height)
	var truth []docfile.Word
	for _, l := range lines {
		truth = append(truth, l.Words...)
	}
	matched, good := 0, 0
	for _, r := range res.Regions {
		if len(r.Words) == 0 {
			t.Errorf("region %q has no words", r.Text)
			continue
		}
		for _, w := range r.Words {
			wx0, wy0, wx1, wy1 := w.Quad.Bounds()
			// The text-layer word with the same text nearest to this one.
			best, bestD := -1, math.Inf(1)
			for i, tw := range truth {
				if !strings.EqualFold(tw.Text, w.Text) {
					continue
				}
				tx0, ty0, tx1, ty1 := tw.Quad.Bounds()
				if d := math.Hypot((tx0+tx1-wx0-wx1)/2, (ty0+ty1-wy0-wy1)/2); d < bestD {
					best, bestD = i, d
				}
			}
			if best < 0 {
				continue // misread: nothing to compare with
			}
			matched++
			tx0, ty0, tx1, ty1 := truth[best].Quad.Bounds()
			iou := (math.Min(wx1, tx1) - math.Max(wx0, tx0)) / (math.Max(wx1, tx1) - math.Min(wx0, tx0))
			mid := (ty0 + ty1) / 2
			if iou >= 0.6 && mid >= wy0 && mid <= wy1 {
				good++
			} else {
				t.Logf("word %q: OCR x %.0f..%.0f y %.0f..%.0f, text layer x %.0f..%.0f y %.0f..%.0f (x IoU %.2f)",
					w.Text, wx0, wx1, wy0, wy1, tx0, tx1, ty0, ty1, iou)
			}
		}
	}
	t.Logf("%d OCR words match a text-layer word, %d of them in place", matched, good)
	if matched < len(truth)/2 {
		t.Fatalf("only %d of %d words read", matched, len(truth))
	}
	if float64(good) < 0.95*float64(matched) {
		t.Errorf("%d of %d words in place; want 95 %%", good, matched)
	}
}
