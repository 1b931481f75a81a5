//go:build integration

package server_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestScannedPDFReadsLikeTheJPEGs sends the receipts the repository renders (testdata/receipts)
// through POST /ocr twice: each JPEG
// alone, and all of them as the pages of one scanned PDF with a vector speck on each page, so
// that PDFium renders every page (a page that is only a JPEG is read from the file, pixel for
// pixel; TestMixedDocument checks that). The PDF's pages, their boxes mapped back to the JPEGs'
// pixels, must score within 0.01 (detection hmean, case-insensitive word F1, with the project's
// scorer) of the JPEGs. The phone photos only: the A4 scan's 35 megapixels rendered by PDFium
// take longer than a page may (OCRGATE_RENDER_TIMEOUT); the document package's
// TestRenderedScansScoreLikeTheirJPEGs covers it, capped as the service caps it.
func TestScannedPDFReadsLikeTheJPEGs(t *testing.T) {
	needModels(t)
	dataset := testenv.Receipts(t)
	all, err := ocrscore.Images(dataset)
	if err != nil {
		t.Fatalf("dataset: %v", err)
	}
	var images []ocrscore.Image
	for _, im := range all {
		if im.ID != "a4scan" {
			images = append(images, im)
		}
	}
	// What this test measures is accuracy, not speed: its deadlines are ones a busy machine
	// (the race detector, other builds) cannot reach, so that a slow render or page is read, not
	// refused. The speed of the same reads is the benchmarks' (documents_bench_test.go).
	app := docApp(t, server.Options{RequestTimeout: 30 * time.Minute}, nil, func(c *document.Config) {
		c.OpTimeout, c.PageTimeout, c.MaxTimeout = 10*time.Minute, 10*time.Minute, time.Hour
	})
	pred := t.TempDir()
	var jpegs [][]byte
	sizes := map[string][2]int{}
	for _, im := range images {
		data, err := os.ReadFile(im.Path)
		if err != nil {
			t.Fatal(err)
		}
		jpegs = append(jpegs, data)
		ans := readImageAnswer(t, app, data, nil)
		sizes[im.ID] = [2]int{ans.ImageInfo.Width, ans.ImageInfo.Height}
		writeRegions(t, filepath.Join(pred, "jpeg"), im.ID, ans.Regions, 1, 1)
	}
	d := readDocument(t, app, scanned(t, jpegs, nil, true), nil)
	if len(d.Pages) != len(images) {
		t.Fatalf("%d pages read of %d", len(d.Pages), len(images))
	}
	for i, p := range d.Pages {
		id := images[i].ID
		if p.Source != "ocr" {
			t.Errorf("page %d: %s", p.Page, p.Source)
		}
		w, h := sizes[id][0], sizes[id][1]
		writeRegions(t, filepath.Join(pred, "pdf"), id, p.Regions, float64(w)/float64(p.Width), float64(h)/float64(p.Height))
	}
	j, err := ocrscore.Score(t.Context(), dataset, filepath.Join(pred, "jpeg"), ocrscore.Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ocrscore.Score(t.Context(), dataset, filepath.Join(pred, "pdf"), ocrscore.Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("JPEGs alone:  %s", j)
	t.Logf("scanned PDF:  %s", p)
	if j.Images != len(images) || p.Images != len(images) {
		t.Fatalf("scored %d and %d images, want %d", j.Images, p.Images, len(images))
	}
	if d := j.DetHmean - p.DetHmean; d > 0.01 {
		t.Errorf("detection hmean %.4f from the PDF is %.4f below the JPEGs' %.4f", p.DetHmean, d, j.DetHmean)
	}
	if d := j.WordCIF1 - p.WordCIF1; d > 0.01 {
		t.Errorf("word F1 (ci) %.4f from the PDF is %.4f below the JPEGs' %.4f", p.WordCIF1, d, j.WordCIF1)
	}
}

// writeRegions writes an answer's regions as the scorer's prediction file, boxes scaled by sx, sy.
func writeRegions(t *testing.T, dir, id string, regions []regionBody, sx, sy float64) {
	t.Helper()
	lines := make([]ocrscore.Line, len(regions))
	for i, r := range regions {
		var q geom.Quad
		for k, pt := range r.BoundingShape.Points {
			q[k] = geom.Point{X: float64(pt.X) * sx, Y: float64(pt.Y) * sy}
		}
		lines[i] = ocrscore.Line{Text: r.Text, Quad: q}
	}
	if err := ocrscore.Write(dir, id, lines); err != nil {
		t.Fatal(err)
	}
}
