//go:build integration

package ocr_test

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg" // DecodeConfig of the dataset scans
	"os"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestDetPreviewKeepsAccuracy reads the 600-dpi A4 scans of the receipts the repository renders
// (testdata/receipts) with the first detection pass on the JPEG preview (the default) and on the full
// page, and requires the preview to score as well within a small margin: it only steers the second
// pass, which reads the full page. `make bench-accuracy` measures the same over a whole dataset.
func TestDetPreviewKeepsAccuracy(t *testing.T) {
	base := pipeline(t)
	dataset := testenv.Receipts(t)
	samples, err := ocrscore.Images(dataset)
	if err != nil {
		t.Fatalf("dataset: %v", err)
	}
	cs, err := engine.Charset(mustConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	opt := base.Options()
	opt.DetPreview = false
	full, err := ocr.New(emb.Runtime, cs, opt)
	if err != nil {
		t.Fatal(err)
	}
	withPreview, withoutPreview := t.TempDir(), t.TempDir()
	scans := 0
	for _, s := range samples {
		data, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || max(cfg.Width, cfg.Height) < 6000 {
			continue // only pages big enough for the preview to be used
		}
		scans++
		for _, run := range []struct {
			p    *ocr.Pipeline
			pred string
		}{{base, withPreview}, {full, withoutPreview}} {
			res, err := run.p.Run(context.Background(), data)
			if err != nil {
				t.Fatal(err)
			}
			lines := make([]ocrscore.Line, len(res.Regions))
			for i, r := range res.Regions {
				lines[i] = ocrscore.Line{Text: r.Text, Quad: r.Quad, Score: r.Score}
			}
			if err := ocrscore.Write(run.pred, s.ID, lines); err != nil {
				t.Fatal(err)
			}
		}
	}
	if scans < 1 {
		t.Fatalf("no scan of 6000 px or more in %s", dataset)
	}
	// Scored by the project's scorer (internal/ocrscore), on the scans only.
	got, err := ocrscore.Score(t.Context(), dataset, withPreview, ocrscore.Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ocrscore.Score(t.Context(), dataset, withoutPreview, ocrscore.Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Images != scans || want.Images != scans {
		t.Fatalf("the scorer scored %d and %d images, want the %d scans", got.Images, want.Images, scans)
	}
	t.Logf("%d scans: preview det H %.4f word_ci F1 %.4f | full page det H %.4f word_ci F1 %.4f",
		scans, got.DetHmean, got.WordCIF1, want.DetHmean, want.WordCIF1)
	if got.DetHmean < want.DetHmean-0.02 || got.WordCIF1 < want.WordCIF1-0.02 {
		t.Fatalf("the preview costs accuracy: det H %.4f vs %.4f, word_ci F1 %.4f vs %.4f",
			got.DetHmean, want.DetHmean, got.WordCIF1, want.WordCIF1)
	}
}
