package document_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/memlimit"
)

// BenchmarkSurvey surveys the documents of internal/hostile's survey set (the survey alone: no
// page is OCR'd), with ocrtest's stand-in models (a text layer's probes are charged at the
// recognizer's estimate, recognizerCPU; the stand-in disagrees with every probe, so a checked
// document is probed on every page, as one in fonts of its own for every page is), and reports
// the CPU time a page costs the request's budget (the survey's thread and its probes), and the
// most the live heap (after a collection) and the process's resident memory grew over where they
// were when it started, sampled every 50 ms while it ran.
//
//	go test -run x -bench Survey -benchtime 1x ./service/document/
func BenchmarkSurvey(b *testing.B) {
	for _, tt := range []struct {
		name  string
		pages int
		data  []byte
		check int
	}{
		{"one line a page", 200, hostile.PDFTextBook(200, 1), 0},
		{"40 lines a page", 200, hostile.PDFTextBook(200, 40), 0},
		{"40 lines a page, checked", 200, hostile.PDFTextBook(200, 40), 4},
		{"12 lines a page in fonts of its own, checked", 100, hostile.PDFNewFonts(100, 4, 12), 4},
		{"a 200 000-rectangle form a page", 10, hostile.PDFFormPages(10, 200_000), 0},
		{"20 000 objects a page", 200, hostile.PDFManyObjects(200, 20_000), 0},
	} {
		b.Run(tt.name, func(b *testing.B) {
			cfg := config()
			cfg.LayerCheck = tt.check
			r := document.New(longDocs(b), cfg)
			var spent time.Duration
			var grown, rssGrown int64
			for b.Loop() {
				base, rss := liveHeap(), memlimit.RSS()
				var peak, rssPeak atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(50 * time.Millisecond):
						}
						if h := liveHeap() - base; h > peak.Load() {
							peak.Store(h)
						}
						if r := memlimit.RSS() - rss; r > rssPeak.Load() {
							rssPeak.Store(r)
						}
					}
				})
				budget := cpubudget.New(time.Hour)
				pl, err := r.Survey(cpubudget.With(b.Context(), budget), pipeline(b), &recorder{}, document.Request{Data: tt.data, Start: time.Now(), Timeout: time.Hour})
				close(stop)
				wg.Wait()
				if err != nil {
					b.Fatal(err)
				}
				_ = pl.Close()
				spent += budget.Spent()
				grown, rssGrown = max(grown, peak.Load()), max(rssGrown, rssPeak.Load())
			}
			b.ReportMetric(float64(spent.Microseconds())/1e3/float64(b.N*tt.pages), "CPU-ms/page")
			b.ReportMetric(float64(grown)/(1<<20), "MiB-heap-grown")
			b.ReportMetric(float64(rssGrown)/(1<<20), "MiB-RSS-grown")
		})
	}
}
