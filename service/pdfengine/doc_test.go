package pdfengine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
)

var (
	engineOnce sync.Once
	engine     *Engine
)

// testEngine is one engine for the package's tests, compiled once (from the cache the other
// packages' tests share, when it is there).
func testEngine(t testing.TB) *Engine {
	t.Helper()
	engineOnce.Do(func() {
		cache := ""
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "ocrgate", "pdfium-wasm-test")
		}
		engine = New(Config{Instances: 2, MemoryLimit: 256 << 20, CacheDir: cache})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold compile under -race
	defer cancel()
	if err := engine.Wait(ctx); err != nil {
		t.Fatalf("PDF engine: %v", err)
	}
	return engine
}

// liveHeap is the Go heap in use after collections. Memory held by an object with a finalizer is
// freed only by a collection after its finalizer ran (on its own goroutine, late on a busy
// machine), so three collections are made, the finalizers given a moment between them.
func liveHeap() int64 {
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestHandlesBounded: reading the facts of page after page of a document, each page of 8 000
// objects, leaves the Go heap where the first page left it: the page-object handles go-pdfium
// keeps per instance are given back with the instance every maxHandles, not kept for as long as
// the document is open (24 pages of them were 25 MB).
func TestHandlesBounded(t *testing.T) {
	const pages, objects = 24, 8_000
	d, err := testEngine(t).Open(t.Context(), hostile.PDFManyObjects(pages, objects), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	var first int64
	for i := range pages {
		f, err := d.Inspect(t.Context(), i, InspectLimits{})
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		if f.Paths < objects {
			t.Fatalf("page %d has %d paths, want %d", i+1, f.Paths, objects)
		}
		if i == 0 {
			first = liveHeap()
		}
	}
	grown := liveHeap() - first
	t.Logf("heap after %d pages: %+.1f MiB over the first; %d renewals", pages, float64(grown)/(1<<20), d.Renewals())
	if grown > maxHandles*200 {
		t.Errorf("the heap grew by %.1f MiB over %d pages; the handles one instance may hold take about %.1f",
			float64(grown)/(1<<20), pages-1, float64(maxHandles*130)/(1<<20))
	}
	if want := pages * objects / (maxHandles + objects); d.Renewals() < want {
		t.Errorf("%d renewals, want at least %d", d.Renewals(), want)
	}
}

// TestOperationsChargeTheBudget: an engine operation charges the CPU time it uses to the budget
// its context carries, is stopped when that runs out before its own limit does (with the
// budget's error, not as a page too complex to draw), and is refused once nothing is left.
func TestOperationsChargeTheBudget(t *testing.T) {
	e := testEngine(t)
	t.Run("charged", func(t *testing.T) {
		b := cpubudget.New(time.Hour)
		ctx := cpubudget.With(t.Context(), b)
		d, err := e.Open(ctx, hostile.PDFManyObjects(1, 2_000), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = d.Close() }()
		opened := b.Spent()
		if _, err := d.Inspect(ctx, 0, InspectLimits{}); err != nil {
			t.Fatal(err)
		}
		if opened <= 0 || b.Spent() <= opened {
			t.Errorf("spent %v opening, %v after reading a page of 2 000 objects", opened, b.Spent())
		}
	})
	t.Run("stopped at the budget", func(t *testing.T) {
		const budget = 300 * time.Millisecond
		b := cpubudget.New(budget)
		ctx := cpubudget.With(t.Context(), b)
		d, err := e.Open(ctx, hostile.PDFEndlessPage(400_000), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = d.Close() }()
		_, err = d.Render(ctx, 0, 595, 842)
		var ce *cpubudget.Error
		if !errors.As(err, &ce) || !ce.Spent || errors.Is(err, ErrTooComplex) {
			t.Fatalf("render past the budget: %v", err)
		}
		// Stopped within a few of the watch's checks after the budget ran out, however busy the
		// machine: CPU time.
		if b.Spent() < budget || b.Spent() > budget+2*time.Second {
			t.Errorf("spent %v of a %v budget", b.Spent(), budget)
		}
		if _, _, err := d.PageSize(ctx, 0); !errors.As(err, &ce) {
			t.Errorf("an operation after the budget ran out: %v", err)
		}
	})
}
