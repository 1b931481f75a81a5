package work

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a Reporter that keeps what it is given.
type recorder struct {
	mu  sync.Mutex
	got []*Panic
}

func (r *recorder) report(p *Panic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
}

func (r *recorder) panics() []*Panic {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Panic(nil), r.got...)
}

func TestDo(t *testing.T) {
	errPlain := errors.New("plain")
	tests := []struct {
		name      string
		fn        func() error
		wantErr   error // errors.Is, or nil
		wantPanic any   // the value reported, or nil for none
		stackHas  string
	}{
		{name: "nil", fn: func() error { return nil }},
		{name: "error", fn: func() error { return errPlain }, wantErr: errPlain},
		{name: "panic", fn: func() error { panicHere(); return nil }, wantPanic: "boom", stackHas: "panicHere"},
		{name: "runtime error", fn: func() error {
			var s []int
			_ = s[3]
			return nil
		}, wantPanic: "runtime error: index out of range [3] with length 0"},
		{name: "carried from Range", fn: func() error {
			Range(100, 1, 4, func(lo, hi int) {
				if lo <= 60 && 60 < hi {
					panicHere()
				}
			})
			return nil
		}, wantPanic: "boom", stackHas: "panicHere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			ctx := WithReporter(context.Background(), rec.report)
			err := Do(ctx, "test unit", tt.fn)
			got := rec.panics()
			if tt.wantPanic == nil {
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if len(got) != 0 {
					t.Fatalf("reported %d panics, want none", len(got))
				}
				return
			}
			var p *Panic
			if !errors.As(err, &p) {
				t.Fatalf("err = %v (%T), want a *Panic", err, err)
			}
			if len(got) != 1 || got[0] != p {
				t.Fatalf("reported %v, want exactly the returned panic", got)
			}
			if v := strings.TrimSpace(toString(p.Value)); v != tt.wantPanic {
				t.Errorf("value = %q, want %q", v, tt.wantPanic)
			}
			if p.Unit != "test unit" {
				t.Errorf("unit = %q", p.Unit)
			}
			// The error a client could see names the unit only, never the panic's words.
			if msg := err.Error(); strings.Contains(msg, "boom") || strings.Contains(msg, "index") {
				t.Errorf("error text %q carries the panic's value", msg)
			}
			if tt.stackHas != "" && !strings.Contains(string(p.Stack), tt.stackHas) {
				t.Errorf("stack does not show where it panicked (%s):\n%s", tt.stackHas, p.Stack)
			}
		})
	}
}

func panicHere() { panic("boom") }

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case error:
		return v.Error()
	}
	return ""
}

// TestDoWithoutReporter checks that a panic under a context without a reporter is still an
// error (and logged, not lost).
func TestDoWithoutReporter(t *testing.T) {
	err := Do(context.Background(), "unit", func() error { panic(42) })
	var p *Panic
	if !errors.As(err, &p) || p.Value != 42 {
		t.Fatalf("err = %v, want a *Panic of 42", err)
	}
}

// TestLimits checks that All and Each never run more than limit units at once, and run every unit.
func TestLimits(t *testing.T) {
	for _, limit := range []int{0, 1, 2, 5} {
		for _, name := range []string{"All", "Each"} {
			var running, peak, ran atomic.Int64
			fn := func(ctx context.Context, i int) error {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				running.Add(-1)
				ran.Add(1)
				return nil
			}
			if name == "All" {
				if err := All(context.Background(), 20, limit, "u", fn); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, err := range Each(context.Background(), 20, limit, "u", fn) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if ran.Load() != 20 || peak.Load() > int64(max(1, limit)) {
				t.Errorf("%s limit %d: ran %d of 20, peak %d at once", name, limit, ran.Load(), peak.Load())
			}
		}
	}
}

// TestAllStopsAtTheFirstFailure checks that a failing or panicking unit cancels the others and
// keeps the rest from starting, and that All returns that failure.
func TestAllStopsAtTheFirstFailure(t *testing.T) {
	errFirst := errors.New("first")
	for _, kind := range []string{"error", "panic"} {
		t.Run(kind, func(t *testing.T) {
			var rec recorder
			ctx := WithReporter(context.Background(), rec.report)
			var started atomic.Int64
			canceled := make(chan struct{}, 100)
			err := All(ctx, 50, 3, "batch", func(ctx context.Context, i int) error {
				started.Add(1)
				if i == 1 {
					if kind == "panic" {
						panic("unit 1")
					}
					return errFirst
				}
				select {
				case <-ctx.Done():
					canceled <- struct{}{}
					return ctx.Err()
				case <-time.After(5 * time.Second):
					return nil
				}
			})
			if kind == "error" && !errors.Is(err, errFirst) {
				t.Fatalf("err = %v, want the first failure", err)
			}
			var p *Panic
			if kind == "panic" && (!errors.As(err, &p) || p.Unit != "batch" || len(rec.panics()) != 1) {
				t.Fatalf("err = %v, reported %d: want the unit's panic, reported once", err, len(rec.panics()))
			}
			if n := started.Load(); n > 4 {
				t.Errorf("%d units started, when unit 1 failed with 3 at once", n)
			}
			if len(canceled) == 0 {
				t.Error("no unit in flight saw its context canceled")
			}
		})
	}
}

// TestEachKeepsUnitsApart checks that one unit's panic or error is its own.
func TestEachKeepsUnitsApart(t *testing.T) {
	var rec recorder
	ctx := WithReporter(context.Background(), rec.report)
	errOdd := errors.New("odd")
	errs := Each(ctx, 9, 3, "image", func(ctx context.Context, i int) error {
		switch {
		case i == 4:
			panic("entry 4")
		case i%2 == 1:
			return errOdd
		}
		return nil
	})
	for i, err := range errs {
		var p *Panic
		switch {
		case i == 4:
			if !errors.As(err, &p) {
				t.Errorf("entry 4: %v, want a *Panic", err)
			}
		case i%2 == 1:
			if !errors.Is(err, errOdd) {
				t.Errorf("entry %d: %v", i, err)
			}
		case err != nil:
			t.Errorf("entry %d: %v, want nil", i, err)
		}
	}
	if len(rec.panics()) != 1 {
		t.Errorf("reported %d panics, want 1", len(rec.panics()))
	}
}

// TestEachAfterCancel checks that units that could not start carry the context's cause.
func TestEachAfterCancel(t *testing.T) {
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	errs := Each(ctx, 5, 1, "page", func(ctx context.Context, i int) error {
		if i == 1 {
			cancel(cause)
		}
		return nil
	})
	for i, err := range errs {
		want := error(nil)
		if i >= 2 {
			want = cause
		}
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("unit %d: %v, want %v", i, err, want)
		}
	}
}

// TestSpread checks that Spread visits every index once and carries a panic to its caller after
// the others stopped.
func TestSpread(t *testing.T) {
	seen := make([]atomic.Int32, 1000)
	Spread(len(seen), 4, func(i int) { seen[i].Add(1) })
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("index %d visited %d times", i, seen[i].Load())
		}
	}
	var after atomic.Int64
	var stopped atomic.Bool
	err := Do(context.Background(), "crops", func() error {
		Spread(1000, 4, func(i int) {
			if stopped.Load() {
				after.Add(1)
			}
			if i == 10 {
				stopped.Store(true)
				panic("crop 10")
			}
			time.Sleep(100 * time.Microsecond)
		})
		return nil
	})
	var p *Panic
	if !errors.As(err, &p) || p.Value != "crop 10" {
		t.Fatalf("err = %v, want the panic of crop 10", err)
	}
	// Each goroutine finishes the item it holds and takes no other.
	if n := after.Load(); n > 4 {
		t.Errorf("%d items ran after the panic", n)
	}
}

// TestRangeCoversEveryItem checks Range's ranges: contiguous, disjoint, complete.
func TestRangeCoversEveryItem(t *testing.T) {
	for _, tc := range []struct{ n, minPer, workers int }{{0, 1, 4}, {1, 1, 4}, {7, 2, 4}, {1000, 16, 3}, {5, 10, 8}} {
		seen := make([]atomic.Int32, tc.n)
		Range(tc.n, tc.minPer, tc.workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("%+v: item %d covered %d times", tc, i, seen[i].Load())
			}
		}
	}
}

// TestWithFault checks that a fault injected for one kind of unit panics that kind only.
func TestWithFault(t *testing.T) {
	ctx := WithFault(context.Background(), func(unit string) {
		if unit == "page" {
			panic("injected")
		}
	})
	if err := Do(ctx, "image", func() error { return nil }); err != nil {
		t.Fatalf("image: %v", err)
	}
	ran := false
	err := Do(ctx, "page", func() error { ran = true; return nil })
	var p *Panic
	if !errors.As(err, &p) || p.Value != "injected" || ran {
		t.Fatalf("page: err %v, ran %v: want the injected panic before the unit ran", err, ran)
	}
}
