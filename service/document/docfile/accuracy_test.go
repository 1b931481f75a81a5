//go:build integration

package docfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestRenderedScansScoreLikeTheirJPEGs wraps every receipt of testdata/receipts as a scanned page with a
// vector mark on it, so PDFium has to render the page (at the scan's resolution, capped for the
// 600-dpi A4 scans) instead of handing over the JPEG: OCR through the real pipeline must score
// (detection hmean, case-insensitive word F1, with the project's scorer) within 0.01 of the JPEGs
// sent alone.
func TestRenderedScansScoreLikeTheirJPEGs(t *testing.T) {
	recs := receipts(t, 0)
	jpegs := make([][]byte, len(recs))
	for i, r := range recs {
		jpegs[i] = r.JPEG
	}
	ctx := ctxFor(t, 20*time.Minute)
	doc := open(t, markedScanPDF(t, jpegs))
	pred := os.Getenv("OCRGATE_PRED_DIR") // keep the prediction files there, for a look
	if pred == "" {
		pred = t.TempDir()
	}
	for i, r := range recs {
		res, _ := ocrPage(ctx, t, doc, i+1)
		alone, err := pipeline(t).Run(ctx, r.JPEG)
		if err != nil {
			t.Fatal(err)
		}
		// Small scans render at their own size; A4 scans at 600 dpi (35 Mpx) are capped by
		// MaxRenderPixels, and their boxes are mapped back to the JPEG's pixels for scoring.
		if c := int64(alone.Width) * int64(alone.Height); c <= int64(docfile.DefaultLimits().MaxRenderPixels) &&
			(res.Width != alone.Width || res.Height != alone.Height) {
			t.Errorf("%s: page rendered at %d×%d, the JPEG is %d×%d", r.ID, res.Width, res.Height, alone.Width, alone.Height)
		}
		rescale(res, float64(alone.Width)/float64(res.Width), float64(alone.Height)/float64(res.Height))
		writePred(t, filepath.Join(pred, "pdf"), r.ID, res)
		writePred(t, filepath.Join(pred, "jpeg"), r.ID, alone)
	}
	dataset := testenv.Receipts(t)
	p, err := ocrscore.Score(ctx, dataset, filepath.Join(pred, "pdf"), ocrscore.Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	j, err := ocrscore.Score(ctx, dataset, filepath.Join(pred, "jpeg"), ocrscore.Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered PDF: det H %.4f word_ci F1 %.4f char_acc_ci %.4f", p.DetHmean, p.WordCIF1, p.CharAccCI)
	t.Logf("JPEGs alone:  det H %.4f word_ci F1 %.4f char_acc_ci %.4f", j.DetHmean, j.WordCIF1, j.CharAccCI)
	if d := j.DetHmean - p.DetHmean; d > 0.01 {
		t.Errorf("detection hmean %.4f from the PDF is %.4f below the JPEGs' %.4f", p.DetHmean, d, j.DetHmean)
	}
	if d := j.WordCIF1 - p.WordCIF1; d > 0.01 {
		t.Errorf("word F1 (ci) %.4f from the PDF is %.4f below the JPEGs' %.4f", p.WordCIF1, d, j.WordCIF1)
	}
}

// writePred stores a result as the scorer's prediction file dir/<id>.json.
func writePred(t testing.TB, dir, id string, res *ocr.Result) {
	t.Helper()
	lines := make([]ocrscore.Line, len(res.Regions))
	for i, r := range res.Regions {
		lines[i] = ocrscore.Line{Text: r.Text, Quad: r.Quad, Score: r.Score}
	}
	if err := ocrscore.Write(dir, id, lines); err != nil {
		t.Fatal(err)
	}
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
