package cpubudget

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestPlanAndCharge(t *testing.T) {
	b := New(10 * time.Second)
	steps := []struct {
		plan, charge time.Duration
		planErr      bool
		chargeErr    bool
	}{
		{plan: 4 * time.Second, charge: 3 * time.Second},
		{plan: 7 * time.Second, charge: 0},         // 3 spent + 7 fits exactly
		{plan: 8 * time.Second, planErr: true},     // 3 + 8 does not
		{charge: 6 * time.Second},                  // 9 spent
		{plan: 2 * time.Second, planErr: true},     // 9 + 2
		{charge: 2 * time.Second, chargeErr: true}, // 11 spent: over
		{plan: time.Nanosecond, planErr: true},     // nothing more fits
	}
	for i, s := range steps {
		if s.plan != 0 {
			err := b.Plan(s.plan)
			if (err != nil) != s.planErr {
				t.Fatalf("step %d: Plan(%v) = %v, want error %v", i, s.plan, err, s.planErr)
			}
			if err != nil && (!errors.Is(err, ErrExceeded) || !strings.Contains(err.Error(), "limit is 10 CPU-s")) {
				t.Fatalf("step %d: Plan error %q", i, err)
			}
		}
		if s.charge != 0 {
			err := b.Charge(s.charge)
			if (err != nil) != s.chargeErr {
				t.Fatalf("step %d: Charge(%v) = %v, want error %v", i, s.charge, err, s.chargeErr)
			}
		}
	}
	if b.Spent() != 11*time.Second || b.Left() != 0 {
		t.Errorf("spent %v, left %v", b.Spent(), b.Left())
	}
	var none *Budget
	if none.Plan(time.Hour) != nil || none.Charge(time.Hour) != nil || none.Left() <= 0 || New(0) != nil {
		t.Error("a nil budget must allow everything")
	}
}

// spin burns CPU on the calling goroutine until ctx ends or d of wall time passed.
func spin(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	x := 1.0
	for time.Now().Before(end) {
		for range 10_000 {
			x = x*1.0000001 + 1e-9
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	runtime.KeepAlive(x)
	return nil
}

// spinCPU burns d of the calling goroutine's CPU time, however busy the machine (a spin for a
// wall time gets a fraction of it on a loaded one).
func spinCPU(d time.Duration) {
	m := StartMeter()
	defer m.Stop()
	x := 1.0
	for m.Used() < d {
		for range 10_000 {
			x = x*1.0000001 + 1e-9
		}
	}
	runtime.KeepAlive(x)
}

// TestRunStopsWorkPastItsBudget checks that work is stopped soon after it has used its budget,
// with the budget's error, and that the CPU it used is charged.
func TestRunStopsWorkPastItsBudget(t *testing.T) {
	b := New(150 * time.Millisecond)
	ctx := With(context.Background(), b)
	start := time.Now()
	used, err := Run(ctx, func(ctx context.Context) error { return spin(ctx, 20*time.Second) })
	var ce *Error
	if !errors.As(err, &ce) || !ce.Spent {
		t.Fatalf("err = %v, want a spent budget's *Error", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the work ran %v past a 150 ms CPU budget", took)
	}
	if used < 150*time.Millisecond || b.Spent() != used {
		t.Errorf("used %v, spent %v: want at least the budget, all of it charged", used, b.Spent())
	}
	// The request's next work is refused before it starts.
	if err := b.Plan(time.Millisecond); !errors.Is(err, ErrExceeded) {
		t.Errorf("Plan after the budget is spent: %v", err)
	}
}

// TestRunMeasuresCPUNotWaiting checks that a goroutine that waits is charged little.
func TestRunMeasuresCPUNotWaiting(t *testing.T) {
	b := New(time.Hour)
	ctx := With(context.Background(), b)
	used, err := Run(ctx, func(ctx context.Context) error {
		time.Sleep(300 * time.Millisecond)
		return spin(ctx, 100*time.Millisecond)
	})
	if err != nil {
		t.Fatal(err)
	}
	// 100 ms of spinning, on a machine that may be busy: some, and far less than the 400 ms
	// elapsed.
	if used <= 0 || used > 250*time.Millisecond || b.Spent() != used {
		t.Errorf("used %v (spent %v) for 100 ms of work in 400 ms", used, b.Spent())
	}
}

// TestRunWithoutBudget only measures.
func TestRunWithoutBudget(t *testing.T) {
	errWork := errors.New("work")
	used, err := Run(context.Background(), func(ctx context.Context) error {
		_ = spin(ctx, 50*time.Millisecond)
		return errWork
	})
	if !errors.Is(err, errWork) || used <= 0 {
		t.Errorf("used %v, err %v", used, err)
	}
}

// TestNestedRunChargesOnce checks that a Run inside a Run on the same goroutine charges nothing
// of its own (the enclosing Run charges that thread), while a Run on a goroutine of its own
// charges its thread.
func TestNestedRunChargesOnce(t *testing.T) {
	b := New(time.Hour)
	ctx := With(context.Background(), b)
	var inner, other time.Duration
	outer, err := Run(ctx, func(ctx context.Context) error {
		if err := spin(ctx, 50*time.Millisecond); err != nil {
			return err
		}
		var err error
		if inner, err = Run(ctx, func(ctx context.Context) error { return spin(ctx, 50*time.Millisecond) }); err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() {
			var err error
			other, err = Run(ctx, func(ctx context.Context) error { return spin(ctx, 50*time.Millisecond) })
			done <- err
		}()
		return <-done
	})
	if err != nil {
		t.Fatal(err)
	}
	if inner <= 0 || inner > outer {
		t.Errorf("the nested Run measured %v inside %v", inner, outer)
	}
	// The outer Run's thread (its own work and the nested Run's) and the other goroutine's
	// thread, each once.
	if want := outer + other; b.Spent() != want {
		t.Errorf("charged %v, want %v (outer %v, nested %v, other goroutine %v)", b.Spent(), want, outer, inner, other)
	}
}

// TestInheritChargesHelpers checks that a goroutine started under a Run charges the Run's budget
// through Inherit, and that outside any Run Inherit charges nothing.
func TestInheritChargesHelpers(t *testing.T) {
	b := New(time.Hour)
	ctx := With(context.Background(), b)
	var outer time.Duration
	outer, err := Run(ctx, func(ctx context.Context) error {
		charge := Inherit()
		done := make(chan struct{})
		go func() {
			defer close(done)
			charge(func() { spinCPU(100 * time.Millisecond) })
		}()
		<-done
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The Run's own goroutine mostly waited; the helper's 100 ms were charged.
	if helper := b.Spent() - outer; helper < 90*time.Millisecond {
		t.Errorf("charged %v in all, %v for the Run itself: the helper's work was not charged", b.Spent(), outer)
	}
	Inherit()(func() { _ = spin(context.Background(), 10*time.Millisecond) }) // outside a Run: no budget, no panic
}
