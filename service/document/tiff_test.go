package document_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestTIFFOverTheOCRLimitRefusedAtOnce (issue 33, H2): every page of a TIFF needs OCR, so a
// selection of more pages than the request may OCR is refused (413 too_many_pages) as soon as
// the page count is known, before any page is read. The survey planned all 2 000 pages first,
// each going through its tiles: 0.5 s a page in the file, 960 CPU-s, through the
// deadline, the client's hang-up and SIGTERM. Here 2 000 pages of a million one-pixel tiles
// (one shared array) must be refused within 5 CPU-s; the survey took 14–34 CPU-s before.
func TestTIFFOverTheOCRLimitRefusedAtOnce(t *testing.T) {
	data := hostile.TIFFManyPages(2000, 1000)
	r := document.New(docs(t).WithLimits(docfile.Limits{MaxPages: 2000}), config())
	req := document.Request{Data: data, Start: time.Now(), Timeout: time.Minute,
		Budget: document.NewBudget(document.BudgetLimits{Pages: 2000, OCRPages: 50}, nil)}
	ctx := cpubudget.With(t.Context(), cpubudget.New(5*time.Second))
	var err error
	used, rerr := cpubudget.Run(ctx, func(ctx context.Context) error {
		_, err = r.Read(ctx, pipeline(t), &recorder{}, req)
		return nil
	})
	if rerr != nil {
		t.Fatalf("the survey used %v of CPU: %v", used, rerr)
	}
	var pc *docfile.PageCountError
	if !errors.As(err, &pc) || !pc.OCR || pc.Pages != 2000 || pc.Limit != 50 {
		t.Fatalf("Read: %v; want the 2 000 pages refused for OCR", err)
	}
	t.Logf("refused in %v of CPU: %v", used, err)
}
