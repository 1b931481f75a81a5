package document_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/scoring"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/setup"
)

// The real OCR pipeline on the embedded runtime, once for the package.
var (
	engineOnce sync.Once
	engine     *setup.Engine
	engineErr  error
)

func pipeline(t testing.TB) *ocr.Pipeline {
	t.Helper()
	engineOnce.Do(func() {
		cfg, err := config.Load(nil, os.Getenv, io.Discard)
		if err != nil {
			engineErr = err
			return
		}
		engine, engineErr = setup.Embedded(cfg)
	})
	if engineErr != nil {
		t.Fatalf("OCR engine: %v (make test fetches the models)", engineErr)
	}
	return engine.Pipeline
}

// ocrPage renders page n of doc at the scale OCR wants and runs the pipeline on it.
func ocrPage(ctx context.Context, t testing.TB, doc *document.Document, n int) (*ocr.Result, *document.Page) {
	t.Helper()
	page, err := doc.Page(ctx, n)
	if err != nil {
		t.Fatalf("page %d: %v", n, err)
	}
	dec, err := doc.Render(ctx, page, page.Scale(document.DefaultScalePolicy(), document.Limits{}))
	if err != nil {
		t.Fatalf("render page %d: %v", n, err)
	}
	res, err := pipeline(t).RunImage(ctx, dec)
	if err != nil {
		t.Fatalf("OCR page %d: %v", n, err)
	}
	return res, page
}

// rescale maps a result's boxes into another pixel space.
func rescale(res *ocr.Result, sx, sy float64) {
	for i := range res.Regions {
		for k := range res.Regions[i].Quad {
			res.Regions[i].Quad[k].X *= sx
			res.Regions[i].Quad[k].Y *= sy
		}
	}
}

func predLines(res *ocr.Result) []scoring.Line {
	out := make([]scoring.Line, len(res.Regions))
	for i, r := range res.Regions {
		out[i] = scoring.Line{Text: r.Text, Quad: r.Quad}
	}
	return out
}

// writePred writes a prediction file in the Python scorer's format when OCRGATE_PRED_DIR names a
// directory (for `ocr_score.py ocr DATASET DIR`): how the figures in the report were scored.
func writePred(t testing.TB, sub, id string, res *ocr.Result) {
	dir := os.Getenv("OCRGATE_PRED_DIR")
	if dir == "" {
		return
	}
	type pt struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	type region struct {
		Text  string `json:"text"`
		Shape struct {
			Points []pt `json:"points"`
		} `json:"bounding_shape"`
	}
	var body struct {
		Regions []region `json:"regions"`
	}
	for _, r := range res.Regions {
		var rg region
		rg.Text = r.Text
		for _, p := range r.Quad {
			rg.Shape.Points = append(rg.Shape.Points, pt{p.X, p.Y})
		}
		body.Regions = append(body.Regions, rg)
	}
	data, _ := json.Marshal(body)
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sub, id+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScannedReceiptsReadLikeTheirJPEGs wraps every sroie-dev receipt as a page of a scanned
// PDF, two ways. As a scanner writes it (one JPEG filling each page), the page's JPEG is read
// from the file: the pixels must be exactly those of the JPEG sent alone. With a vector mark on
// each page, the pages are rendered by PDFium at the scans' resolution (capped for the 600-dpi A4
// scans): OCR through the real pipeline must score (detection hmean, case-insensitive word F1)
// within 0.01 of the JPEGs sent alone.
func TestScannedReceiptsReadLikeTheirJPEGs(t *testing.T) {
	if testing.Short() {
		t.Skip("OCR over 20 receipts twice skipped in -short mode")
	}
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
			got, err := doc.Render(ctx, page, page.Scale(document.DefaultScalePolicy(), document.Limits{}))
			if err != nil {
				t.Fatal(err)
			}
			want, err := imaging.Decode(r.JPEG, document.DefaultLimits().Raster)
			if err != nil {
				t.Fatal(err)
			}
			if err := samePixels(got.Image, want.Image); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
			if (got.Preview == nil) != (want.Preview == nil) {
				t.Errorf("%s: preview %v, the JPEG's %v", r.ID, got.Preview != nil, want.Preview != nil)
			}
		}
	})

	t.Run("rendered", func(t *testing.T) {
		doc := open(t, markedScanPDF(t, jpegs))
		samples, err := scoring.LoadDataset(datasetDir)
		if err != nil {
			t.Fatal(err)
		}
		gt := map[string][]scoring.Line{}
		for _, s := range samples {
			gt[s.ID] = s.Lines
		}
		var fromPDF, fromJPEG scoring.Counts
		for i, r := range recs {
			res, _ := ocrPage(ctx, t, doc, i+1)
			alone, err := pipeline(t).Run(ctx, r.JPEG)
			if err != nil {
				t.Fatal(err)
			}
			// Small scans render at their own size; A4 scans at 600 dpi (35 Mpx) are capped by
			// MaxRenderPixels, and their boxes are mapped back to the JPEG's pixels for scoring.
			if c := int64(alone.Width) * int64(alone.Height); c <= int64(document.DefaultLimits().MaxRenderPixels) &&
				(res.Width != alone.Width || res.Height != alone.Height) {
				t.Errorf("%s: page rendered at %d×%d, the JPEG is %d×%d", r.ID, res.Width, res.Height, alone.Width, alone.Height)
			}
			rescale(res, float64(alone.Width)/float64(res.Width), float64(alone.Height)/float64(res.Height))
			writePred(t, "pdf", r.ID, res)
			writePred(t, "jpeg", r.ID, alone)
			fromPDF.Add(scoring.ScoreImage(gt[r.ID], predLines(res), scoring.DefaultIoU))
			fromJPEG.Add(scoring.ScoreImage(gt[r.ID], predLines(alone), scoring.DefaultIoU))
		}
		p, j := fromPDF.Summary(), fromJPEG.Summary()
		t.Logf("rendered PDF: det H %.4f word_ci F1 %.4f char_acc_ci %.4f", p.DetHmean, p.WordCIF1, p.CharAccCI)
		t.Logf("JPEGs alone:  det H %.4f word_ci F1 %.4f char_acc_ci %.4f", j.DetHmean, j.WordCIF1, j.CharAccCI)
		if d := j.DetHmean - p.DetHmean; d > 0.01 {
			t.Errorf("detection hmean %.4f from the PDF is %.4f below the JPEGs' %.4f", p.DetHmean, d, j.DetHmean)
		}
		if d := j.WordCIF1 - p.WordCIF1; d > 0.01 {
			t.Errorf("word F1 (ci) %.4f from the PDF is %.4f below the JPEGs' %.4f", p.WordCIF1, d, j.WordCIF1)
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
	if testing.Short() {
		t.Skip("OCR skipped in -short mode")
	}
	rec := receipts(t, 1)[0]
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
	s := digital.Scale(document.DefaultScalePolicy(), document.Limits{})
	c := digital.RenderCost(s)
	lines := digital.Lines(c.Width, c.Height)
	if len(lines) != len(bornDigitalPage) || lines[0].Text != bornDigitalPage[0].Text {
		t.Errorf("born-digital page: %d lines, first %q", len(lines), first(lines))
	}
	if scan.Lines(100, 100) != nil {
		t.Errorf("the scan has text-layer lines")
	}
}

func first(lines []document.Line) string {
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
	if testing.Short() {
		t.Skip("OCR skipped in -short mode")
	}
	data, _ := bornDigital(t, invoicePage())
	doc := open(t, data)
	ctx := ctxFor(t, 5*time.Minute)
	res, page := ocrPage(ctx, t, doc, 1)
	lines := page.Lines(res.Width, res.Height)
	var truth []document.Word
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
