package document_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/work"
)

// longDocs is the engine with the service's limits: a selection of up to 2 000 pages
// (OCRGATE_MAX_TEXT_PAGES), an engine operation bounded by 10 s of CPU time (OCRGATE_RENDER_CPU).
func longDocs(t testing.TB) *docfile.Reader {
	return docs(t).WithLimits(docfile.Limits{MaxPages: 2000, OpCPU: 10 * time.Second})
}

// TestSurveyPricedByCPU: a document whose survey cannot fit the request's CPU budget is refused
// with the budget's error after its first pages, at a small part of the budget, never after
// spending it; each of these cost minutes of CPU before (2 000 pages of text, 120 CPU-s; 2 000
// pages each in fonts of their own, every one probed by OCR, 229; 2 000 pages of a
// 200 000-rectangle form, 504 after 600 s).
func TestSurveyPricedByCPU(t *testing.T) {
	const limit = 10 * time.Second
	for _, tt := range []struct {
		name  string
		data  []byte
		check int
	}{
		{"2 000 pages of 40 lines", hostile.PDFTextBook(2000, 40), 0},
		{"2 000 pages in new fonts, checked", hostile.PDFNewFonts(2000, 4, 12), 4},
		{"2 000 pages of a 200 000-rectangle form", hostile.PDFFormPages(2000, 200_000), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config()
			cfg.LayerCheck = tt.check
			r := document.New(longDocs(t), cfg)
			b := cpubudget.New(limit)
			ctx := cpubudget.With(t.Context(), b)
			rec := &recorder{}
			_, err := r.Read(ctx, pipeline(t), rec, document.Request{Data: tt.data, Start: time.Now(), Timeout: 10 * time.Minute})
			var ce *cpubudget.Error
			if !errors.As(err, &ce) || ce.Limit != limit {
				t.Fatalf("read: %v, want the CPU budget's error", err)
			}
			t.Logf("%s after %v of CPU time (%v planned): %v", map[bool]string{false: "refused", true: "stopped"}[ce.Spent], b.Spent(), b.Planned(), err)
			// Refused once its first pages showed what the rest would cost: at a part of the
			// budget (a part that grows under the race detector), or, for pages that cost more
			// than the budget allows for two, stopped at the budget, never much past it.
			if b.Spent() > limit+time.Second || !ce.Spent && ce.Need <= limit {
				t.Errorf("spent %v of a %v budget; error %+v", b.Spent(), limit, ce)
			}
			if rec.running != 0 {
				t.Errorf("%d admissions still held", rec.running)
			}
		})
	}
}

// TestSurveyWithinBudget: a text document that fits its budget is read whole, its CPU time
// charged: priced before it starts, and spent as it went.
func TestSurveyWithinBudget(t *testing.T) {
	r := document.New(docs(t), config())
	b := cpubudget.New(5 * time.Minute)
	ctx := cpubudget.With(t.Context(), b)
	res, err := r.Read(ctx, pipeline(t), &recorder{}, document.Request{Data: hostile.PDFTextBook(40, 40), Start: time.Now(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range res.Read {
		if pg.Source != document.TextLayer || !strings.Contains(pg.Result.Text, "Line 40 of the page") {
			t.Fatalf("page %d: %s %q", pg.Number, pg.Source, pg.Result.Text)
		}
	}
	if b.Spent() <= 0 || b.Planned() <= 0 {
		t.Errorf("spent %v, planned %v", b.Spent(), b.Planned())
	}
	t.Logf("40 pages of 40 lines: %v of CPU time, %v a page", b.Spent(), b.Spent()/40)
}

// turns admits its jobs through a real gate, the first as a request's first job and the others
// as the same request's next ones, and counts them.
type turns struct {
	gate     *admission.Gate
	admitted atomic.Int32
}

func (a *turns) Admit(ctx context.Context, cost int64) (func(), error) {
	if a.admitted.Add(1) == 1 {
		return a.gate.Acquire(ctx, cost)
	}
	return a.gate.Continue(ctx, cost)
}

// TestSurveyTakesTurns: with one job at a time, a job that asks for admission while a long
// survey runs is admitted at the survey's next turn, while the survey still has pages to read;
// the survey then queues behind it. Without turns it would wait for the whole survey, or be
// refused (429) after MaxWait.
func TestSurveyTakesTurns(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 4 << 30, MaxRunning: 1, MaxQueue: 4, MaxWait: 10 * time.Minute})
	cfg := config()
	cfg.Turn = 50 * time.Millisecond
	r := document.New(longDocs(t), cfg)
	adm := &turns{gate: gate}
	done := make(chan error, 1)
	var finished atomic.Bool
	go func() {
		_, err := r.Read(t.Context(), pipeline(t), adm, document.Request{Data: hostile.PDFTextBook(60, 40), Start: time.Now(), Timeout: 10 * time.Minute})
		finished.Store(true)
		done <- err
	}()
	for gate.Stats().Running == 0 && !finished.Load() {
		time.Sleep(time.Millisecond)
	}
	// A receipt arrives while the survey holds the only slot.
	release, err := gate.Acquire(t.Context(), 1<<20)
	if err != nil {
		t.Fatalf("a job waiting while a survey runs: %v", err)
	}
	if finished.Load() {
		t.Fatal("the job was admitted only once the survey was over")
	}
	surveyTurns := adm.admitted.Load()
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if adm.admitted.Load() <= surveyTurns {
		t.Errorf("the survey took %d admissions, none after the job it let in", adm.admitted.Load())
	}
	t.Logf("the job was admitted at the survey's admission %d of %d", surveyTurns, adm.admitted.Load())
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Waiting != 0 {
		t.Errorf("the gate holds %+v afterwards", s)
	}
}

// liveHeap is the Go heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSurveyHoldsLittle: what a survey holds does not grow with the pages it has read. The live
// heap, sampled while 40 pages of 6 000 objects each are surveyed, stays within a few MiB of
// where it was after the first; it grew by 0.8 MiB a page (31 MiB here, 1.2 GiB for 2 000 pages of
// 20 000) while the engine's page-object handles stayed with its instance.
func TestSurveyHoldsLittle(t *testing.T) {
	const pages = 40
	r := document.New(docs(t), config())
	data := hostile.PDFManyObjects(pages, 6_000)
	base := liveHeap()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var peak atomic.Int64
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if h := liveHeap(); h > peak.Load() {
				peak.Store(h)
			}
		}
	})
	res, err := r.Read(t.Context(), pipeline(t), &recorder{}, document.Request{Data: data, Start: time.Now(), Timeout: 10 * time.Minute})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Read) != pages || res.Read[pages-1].Source != document.TextLayer {
		t.Fatalf("%d pages read, the last from %s", len(res.Read), res.Read[len(res.Read)-1].Source)
	}
	grown := peak.Load() - base
	t.Logf("live heap at most %+.1f MiB during the survey", float64(grown)/(1<<20))
	if grown > 16<<20 {
		t.Errorf("the live heap grew by %.1f MiB while %d pages were surveyed", float64(grown)/(1<<20), pages)
	}
}

// TestSurveyStopsWithItsRequest: a survey stops soon after its request ends (the client gone, the
// service shutting down: its context canceled), in the middle of a page that takes the engine
// most of a CPU-second, and gives back its admission once it has stopped.
func TestSurveyStopsWithItsRequest(t *testing.T) {
	r := document.New(longDocs(t), config())
	ctx, cancel := context.WithCancel(t.Context())
	rec := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(ctx, pipeline(t), rec, document.Request{Data: hostile.PDFFormPages(2000, 200_000), Start: time.Now(), Timeout: 10 * time.Minute})
		done <- err
	}()
	for {
		rec.mu.Lock()
		running := rec.running
		rec.mu.Unlock()
		if running > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // into the survey's pages
	cancel()
	canceled := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read: %v", err)
		}
		t.Logf("stopped %v after its request ended", time.Since(canceled))
	case <-time.After(10 * time.Second):
		t.Fatal("the survey went on 10 s after its request ended")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.running != 0 {
		t.Errorf("%d admissions still held", rec.running)
	}
}

// overlap is the test pipeline with another row overlap.
type overlap struct {
	*ocr.Pipeline
	rowOverlap float64
}

func (o overlap) Options() ocr.Options {
	opt := o.Pipeline.Options()
	opt.RowOverlap = o.rowOverlap
	return opt
}

// TestTextLayerPageUsesTheOptions: a text-layer page is laid out with the pipeline's configured
// row overlap, as its OCR would be: two words whose lines overlap by 40 % of their height are
// one row at 0.3, two rows at the default 0.5.
func TestTextLayerPageUsesTheOptions(t *testing.T) {
	page := hostile.PageSpec{Content: "BT /F1 12 Tf 72 700 Td (LEFT) Tj ET BT /F1 12 Tf 300 695 Td (RIGHT) Tj ET"}
	data := hostile.PDFPages(page)
	r := document.New(docs(t), config())
	for _, tt := range []struct {
		overlap float64
		want    string
	}{{0.5, "LEFT\nRIGHT"}, {0.3, "LEFT RIGHT"}} {
		res, err := r.Read(t.Context(), overlap{pipeline(t), tt.overlap}, &recorder{}, document.Request{Data: data, Start: time.Now(), Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Read[0].Result.Text; got != tt.want {
			t.Errorf("row overlap %v: text %q, want %q", tt.overlap, got, tt.want)
		}
	}
}

// TestPanicFailsItsPage: a panic while a page is read (its survey, the check of its text layer,
// its OCR job, a TIFF page's decode) fails that page alone, with a *work.Panic in its
// *docfile.PageError; the other pages are read.
func TestPanicFailsItsPage(t *testing.T) {
	text := hostile.PDFPages(hostile.TextPage("THE FIRST PAGE"), hostile.TextPage("THE SECOND PAGE"), hostile.TextPage("THE THIRD PAGE"))
	img, _, _ := ocrtest.Receipt()
	tiff, err := testdoc.TIFF(img, img, img)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		unit  string
		data  []byte
		mode  document.Mode
		check int
	}{
		{"document page", text, document.Auto, 0},
		{"document page", text, document.Always, 0},
		{"text-layer check", text, document.Auto, 4},
		{"tiff decode", tiff, document.Auto, 0},
	} {
		t.Run(tt.unit, func(t *testing.T) {
			cfg := config()
			cfg.LayerCheck = tt.check
			r := document.New(docs(t), cfg)
			var fired atomic.Bool
			ctx := work.WithFault(t.Context(), func(unit string) {
				if unit == tt.unit && fired.CompareAndSwap(false, true) {
					panic("injected into a " + unit)
				}
			})
			ctx = work.WithReporter(ctx, func(*work.Panic) {})
			rec := &recorder{}
			res, err := r.Read(ctx, pipeline(t), rec, document.Request{Data: tt.data, Mode: tt.mode, Start: time.Now(), Timeout: time.Minute})
			if err != nil || !fired.Load() {
				t.Fatalf("read: %v (fault fired: %v)", err, fired.Load())
			}
			failed := 0
			for _, pg := range res.Read {
				var pe *docfile.PageError
				var wp *work.Panic
				switch {
				case pg.Err == nil:
				case errors.As(pg.Err, &pe) && errors.As(pg.Err, &wp) && wp.Unit == tt.unit && pe.Page == pg.Number:
					failed++
				default:
					t.Errorf("page %d: %v", pg.Number, pg.Err)
				}
			}
			if failed != 1 || len(res.Read) != 3 {
				t.Errorf("%d of %d pages failed; want the one the panic hit", failed, len(res.Read))
			}
			if rec.running != 0 {
				t.Errorf("%d admissions still held", rec.running)
			}
		})
	}
}
