package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pageCounter answers every page with its number, fails the pages in bad at once and the pages
// in flaky on their first try, and counts what it reads.
type pageCounter struct {
	mu    sync.Mutex
	reads map[int]int
	bad   map[int]bool
	flaky map[int]bool
	slow  time.Duration
}

func (p *pageCounter) ReadPage(ctx context.Context, doc []byte, spec json.RawMessage, page int) (json.RawMessage, bool, error) {
	p.mu.Lock()
	p.reads[page]++
	n := p.reads[page]
	p.mu.Unlock()
	if p.slow > 0 {
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(p.slow):
		}
	}
	if p.flaky[page] && n == 1 {
		return nil, false, errors.New("busy")
	}
	if p.bad[page] {
		return json.RawMessage(fmt.Sprintf(`{"page":%d,"error":"bad"}`, page)), true, nil
	}
	return json.RawMessage(fmt.Sprintf(`{"page":%d,"text":%q}`, page, doc[:4])), false, nil
}

func (p *pageCounter) FailedPage(page int, err error) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"page":%d,"error":"gave up"}`, page))
}

func openTest(t *testing.T, cfg Config) *Store {
	t.Helper()
	cfg.Dir = t.TempDir()
	s, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func plan(n int) func(context.Context, []byte) (Plan, error) {
	return func(context.Context, []byte) (Plan, error) {
		pages := make([]int, n)
		for i := range pages {
			pages[i] = i + 1
		}
		return Plan{Format: "pdf", Total: n, Pages: pages}, nil
	}
}

func TestJobReadsEveryPageOnce(t *testing.T) {
	s := openTest(t, Config{Workers: 3, Attempts: 2})
	r := &pageCounter{reads: map[int]int{}, bad: map[int]bool{4: true}, flaky: map[int]bool{2: true}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r, func() bool { return true })
	j, created, err := s.Submit(ctx, Submission{Owner: "a", IdempotencyKey: "k1", Spec: json.RawMessage(`{}`), Document: bytes.NewReader([]byte("%PDF-test")), Plan: plan(7)})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	// The same idempotency key answers the same job; another owner's key is its own.
	again, created, err := s.Submit(ctx, Submission{Owner: "a", IdempotencyKey: "k1", Document: bytes.NewReader(nil), Plan: plan(7)})
	if err != nil || created || again.ID != j.ID {
		t.Fatalf("repeat submit: %v %v %v", again, created, err)
	}
	if _, err := s.Get(ctx, j.ID, "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other owner: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for !j.State.Final() && wctx.Err() == nil {
		if j, err = s.Wait(wctx, j.ID, "a", j); err != nil {
			t.Fatal(err)
		}
	}
	if j.State != Succeeded {
		t.Fatalf("state %s", j.State)
	}
	done, failed := j.Counts()
	if done != 7 || failed != 1 {
		t.Fatalf("done %d failed %d", done, failed)
	}
	res, err := s.Result(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range res {
		var v struct{ Page int }
		if err := json.Unmarshal(p, &v); err != nil || v.Page != i+1 {
			t.Fatalf("page %d: %s", i+1, p)
		}
	}
	if r.reads[2] != 2 || r.reads[1] != 1 {
		t.Fatalf("reads %v", r.reads)
	}
	// The worker that answers the last page deletes the document once it has written the final
	// state, so a waiter may see the state a moment before the space is free.
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, b, _ := s.Documents(ctx)
		if n == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("a finished job's document left %d bytes in the store", b)
		}
	}
	if err := s.Delete(ctx, j.ID, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, j.ID, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestDeleteStopsPagesAtWork(t *testing.T) {
	s := openTest(t, Config{Workers: 2})
	r := &pageCounter{reads: map[int]int{}, slow: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	done := make(chan struct{})
	go func() { s.Run(ctx, r, func() bool { return true }); ran.Store(true); close(done) }()
	j, _, err := s.Submit(ctx, Submission{Spec: json.RawMessage(`{}`), Document: bytes.NewReader([]byte("%PDF-x")), Plan: plan(50)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.reads)
		r.mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Delete(ctx, j.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(ctx, j.ID, "", j); !errors.Is(err, ErrNotFound) {
		t.Fatalf("wait on a deleted job: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	ci, err := s.cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ci.NumPending != 0 {
		t.Fatalf("%d tasks left queued", ci.NumPending)
	}
	if n, b, _ := s.Documents(ctx); n != 0 {
		t.Fatalf("a deleted job left %d bytes", b)
	}
	cancel()
	<-done
}

func TestLimits(t *testing.T) {
	s := openTest(t, Config{MaxBytes: 10, MaxPages: 3, MaxInFlight: 1})
	ctx := context.Background()
	_, _, err := s.Submit(ctx, Submission{Document: bytes.NewReader(make([]byte, 11)), Plan: plan(1)})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("large: %v", err)
	}
	_, _, err = s.Submit(ctx, Submission{Document: bytes.NewReader(make([]byte, 5)), Plan: plan(4)})
	if !errors.Is(err, ErrTooMany) {
		t.Fatalf("pages: %v", err)
	}
	if _, _, err = s.Submit(ctx, Submission{Owner: "o", Document: bytes.NewReader(make([]byte, 5)), Plan: plan(1)}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Submit(ctx, Submission{Owner: "o", Document: bytes.NewReader(make([]byte, 5)), Plan: plan(1)})
	if !errors.Is(err, ErrTooManyJobs) {
		t.Fatalf("in flight: %v", err)
	}
	if _, b, _ := s.Documents(ctx); b != 5 {
		t.Fatalf("store holds %d bytes, want the one job's 5", b)
	}
}

// TestJobsByState: the ocrgate_jobs gauge counts the store's jobs by state as they are now, on a
// registry of its own (what any replica's /metrics serves).
func TestJobsByState(t *testing.T) {
	s := openTest(t, Config{Workers: 2})
	reg := prometheus.NewRegistry()
	if err := s.Register(reg); err != nil {
		t.Fatal(err)
	}
	gauge := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() != "ocrgate_jobs" {
				continue
			}
			for _, m := range mf.GetMetric() {
				out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
		return out
	}
	if g := gauge(); len(g) != 5 || g["queued"] != 0 || g["succeeded"] != 0 {
		t.Fatalf("empty store: %v", g)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ids []string
	for range 2 {
		j, _, err := s.Submit(ctx, Submission{Spec: json.RawMessage(`{}`), Document: bytes.NewReader([]byte("%PDF-x")), Plan: plan(2)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	if g := gauge(); g["queued"] != 2 || g["running"] != 0 {
		t.Fatalf("two submitted: %v", g)
	}
	go s.Run(ctx, &pageCounter{reads: map[int]int{}}, func() bool { return true })
	for end := time.Now().Add(20 * time.Second); gauge()["succeeded"] != 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the jobs did not finish: %v", gauge())
		}
	}
	if err := s.Delete(ctx, ids[0], ""); err != nil {
		t.Fatal(err)
	}
	if g := gauge(); g["succeeded"] != 1 || g["queued"] != 0 || g["running"] != 0 {
		t.Fatalf("one deleted: %v", g)
	}
}
