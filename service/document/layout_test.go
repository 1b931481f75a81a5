package document_test

import (
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestManyLinesLaidOutInTime: a 3 KB page of 33 000 one-letter lines in eight columns (every row
// a band across seven gutters; every one kept by the text layer's check, though the page is drawn
// for it at half a pixel a point, where a letter leaves less than a pixel) is laid out, as a
// text-layer page is, in a small fraction of a CPU-second (14 ms here); a layout quadratic in the
// page's lines took 2.2 CPU-s. CPU time of this thread, not elapsed time: the bound holds on a
// busy machine, and under the race detector.
func TestManyLinesLaidOutInTime(t *testing.T) {
	data := hostile.PDFShortLines(33_000, 8)
	doc, err := docs(t).Open(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = doc.Close() }()
	page, err := doc.Page(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	w, h := int(page.Width), int(page.Height)
	tl, err := doc.TextLayer(t.Context(), page, w, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Lines) != 33_000 {
		t.Fatalf("the page has %d lines of text layer, want 33 000", len(tl.Lines))
	}
	res := &ocr.Result{Width: w, Height: h, Regions: make([]ocr.Region, len(tl.Lines))}
	for i, l := range tl.Lines {
		res.Regions[i] = ocr.Region{Quad: l.Quad, Text: l.Text, Score: 1}
	}
	m := cpubudget.StartMeter()
	ocr.Arrange(res, ocr.DefaultOptions().RowOverlap)
	used := m.Stop()
	t.Logf("laid out %d lines in %v of CPU time", len(res.Regions), used)
	// Quadratic in the lines (what M3 was) takes minutes here; n log n well under a second,
	// even under the race detector on a loaded machine (0.54 s seen there).
	if used > 2*time.Second {
		t.Errorf("laying out %d lines took %v of CPU time", len(res.Regions), used)
	}
	if len(res.Blocks) == 0 || len(res.Text) < len(res.Regions) {
		t.Errorf("%d blocks, %d bytes of text for %d lines", len(res.Blocks), len(res.Text), len(res.Regions))
	}
}
