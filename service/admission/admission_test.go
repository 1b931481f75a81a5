package admission

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond (a gate's state changes on other goroutines) for up to 2 minutes: a bound
// for a state that never comes, not a measure of how soon it comes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAcquire(t *testing.T) {
	tests := []struct {
		name    string
		opt     Options
		held    []int64 // costs admitted before the call
		waiters []int64 // costs already waiting
		cost    int64
		wantErr error
		waits   bool // the call waits (MaxWait) before its answer
	}{
		{"fits the budget", Options{Budget: 100, MaxQueue: 2}, []int64{60}, nil, 40, nil, false},
		{"exactly the rest", Options{Budget: 100, MaxQueue: 2}, []int64{30, 30}, nil, 40, nil, false},
		{"over the rest, no queue: refused at once", Options{Budget: 100}, []int64{60}, nil, 41, ErrOverloaded, false},
		{"over the rest, queue full: refused at once", Options{Budget: 100, MaxQueue: 1}, []int64{60}, []int64{50}, 10, ErrOverloaded, false},
		{"over the rest: waits, then refused", Options{Budget: 100, MaxQueue: 1}, []int64{60}, nil, 41, ErrOverloaded, true},
		{"count bound", Options{Budget: 100, MaxRunning: 1, MaxQueue: 1}, []int64{1}, nil, 1, ErrOverloaded, true},
		{"larger than the budget, gate empty: runs alone", Options{Budget: 100}, nil, nil, 250, nil, false},
		{"larger than the budget, gate busy: waits", Options{Budget: 100, MaxQueue: 1}, []int64{1}, nil, 250, ErrOverloaded, true},
		{"zero cost counts as a job", Options{Budget: 100, MaxRunning: 1}, []int64{0}, nil, 0, ErrOverloaded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A call that is to wait waits MaxWait, and is answered no sooner. One that is not to
			// wait has ten minutes to wait, so that waiting would show as its joining the queue
			// (and staying there), which the test watches for: no clock decides.
			tt.opt.MaxWait = 10 * time.Minute
			if tt.waits {
				tt.opt.MaxWait = 50 * time.Millisecond
			}
			g := New(tt.opt)
			for _, c := range tt.held {
				r, err := g.Acquire(context.Background(), c)
				if err != nil {
					t.Fatalf("setup: %v", err)
				}
				defer r()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			defer wg.Wait()
			for i, c := range tt.waiters {
				wg.Go(func() { g.Acquire(ctx, c) })
				waitFor(t, "the waiters to queue", func() bool { return g.Stats().Waiting == i+1 })
			}
			type answer struct {
				release func()
				err     error
				took    time.Duration
			}
			done := make(chan answer, 1)
			start := time.Now()
			wg.Go(func() {
				r, err := g.Acquire(ctx, tt.cost)
				done <- answer{r, err, time.Since(start)}
			})
			var a answer
			for got := false; !got; {
				select {
				case a = <-done:
					got = true
				case <-time.After(time.Millisecond):
					if !tt.waits && g.Stats().Waiting > len(tt.waiters) {
						cancel()
						t.Fatal("the call joined the queue; it should have been answered at once")
					}
				}
			}
			if !errors.Is(a.err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", a.err, tt.wantErr)
			}
			if a.err == nil {
				a.release()
			}
			if tt.waits && a.took < tt.opt.MaxWait {
				t.Errorf("answered after %v; it should have waited MaxWait (%v)", a.took, tt.opt.MaxWait)
			}
			cancel()
		})
	}
}

// TestFirstComeFirstServed: a large job at the head of the queue is admitted before smaller ones
// that came after it, even though they would fit sooner; and when it gives up, they go in.
func TestFirstComeFirstServed(t *testing.T) {
	g := New(Options{Budget: 100, MaxQueue: 4, MaxWait: 5 * time.Second})
	r60, _ := g.Acquire(context.Background(), 60)

	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() { _, err := g.Acquire(ctx, 50); gaveUp <- err }()
	waitFor(t, "the 50 to queue", func() bool { return g.Stats().Waiting == 1 })
	small := make(chan func())
	go func() {
		r, err := g.Acquire(context.Background(), 10) // fits now, but the 50 came first
		if err != nil {
			t.Error(err)
		}
		small <- r
	}()
	waitFor(t, "the 10 to queue", func() bool { return g.Stats().Waiting == 2 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	(<-small)()

	var order []int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range []int64{95, 10, 10} {
		wg.Go(func() {
			r, err := g.Acquire(context.Background(), c)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, c)
			mu.Unlock()
			r()
		})
		waitFor(t, "the queue", func() bool { return g.Stats().Waiting == i+1 })
	}
	r60()
	wg.Wait()
	if order[0] != 95 {
		t.Fatalf("admitted in order %v; the 95-byte job came first", order)
	}
}

// TestAloneMeansAlone: a job over the budget waits for the gate to empty, and nothing is admitted
// beside it while it runs.
func TestAloneMeansAlone(t *testing.T) {
	g := New(Options{Budget: 100, MaxQueue: 4, MaxWait: 5 * time.Second})
	small, _ := g.Acquire(context.Background(), 10)
	bigAdmitted := make(chan func())
	go func() {
		r, err := g.Acquire(context.Background(), 500)
		if err != nil {
			t.Error(err)
		}
		bigAdmitted <- r
	}()
	waitFor(t, "the big job to queue", func() bool { return g.Stats().Waiting == 1 })
	select {
	case <-bigAdmitted:
		t.Fatal("admitted beside another job")
	case <-time.After(20 * time.Millisecond):
	}
	small()
	big := <-bigAdmitted
	if s := g.Stats(); s.Used != 500 || s.Running != 1 {
		t.Fatalf("stats while alone: %+v", s)
	}
	if _, err := New(Options{}).Acquire(context.Background(), 1); err != nil {
		t.Fatal(err) // a zero budget still admits one job at a time
	}
	tiny := make(chan error, 1)
	go func() {
		r, err := g.Acquire(context.Background(), 1)
		if err == nil {
			r()
		}
		tiny <- err
	}()
	select {
	case <-tiny:
		t.Fatal("a 1-byte job was admitted beside the job running alone")
	case <-time.After(20 * time.Millisecond):
	}
	big()
	if err := <-tiny; err != nil {
		t.Fatal(err)
	}
}

func TestCanceledWaiterLeavesTheQueue(t *testing.T) {
	g := New(Options{Budget: 100, MaxQueue: 1, MaxWait: time.Minute})
	r, _ := g.Acquire(context.Background(), 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := g.Acquire(ctx, 50); done <- err }()
	waitFor(t, "the waiter", func() bool { return g.Stats().Waiting == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	r()
	if s := g.Stats(); s != (Stats{}) {
		t.Fatalf("gate not empty: %+v", s)
	}
}

func TestEnter(t *testing.T) {
	g := New(Options{Budget: 100, MaxRunning: 1, MaxQueue: 1})
	l1, err1 := g.Enter()
	if g.Full() {
		t.Fatal("Full with one place left")
	}
	l2, err2 := g.Enter()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !g.Full() || g.Stats().Inside != 2 {
		t.Fatalf("Full = %v with %d inside, want true and 2 (Full takes no place)", g.Full(), g.Stats().Inside)
	}
	if _, err := g.Enter(); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("third Enter: %v, want ErrOverloaded", err)
	}
	l1()
	l1() // a second call does nothing
	l3, err := g.Enter()
	if err != nil {
		t.Fatal(err)
	}
	l2()
	l3()
	if s := g.Stats(); s.Inside != 0 {
		t.Fatalf("inside = %d", s.Inside)
	}
}

// TestShareHold: the admission goes back to the gate only when the request and every piece of
// work it started are done, in either order.
func TestShareHold(t *testing.T) {
	for _, workLast := range []bool{true, false} {
		g := New(Options{Budget: 100})
		r, _ := g.Acquire(context.Background(), 70)
		lease, release := Share(r)
		done := lease.Hold()
		if workLast {
			release()
			if g.Stats().Used != 70 {
				t.Fatal("released while work still held it")
			}
			done()
		} else {
			done()
			if g.Stats().Used != 70 {
				t.Fatal("released while the request still held it")
			}
			release()
		}
		if s := g.Stats(); s.Used != 0 || s.Running != 0 {
			t.Fatalf("after both let go: %+v", s)
		}
		lease.Hold()() // too late to hold: no second release
		if s := g.Stats(); s.Used != 0 || s.Running != 0 {
			t.Fatalf("a hold after the end released again: %+v", s)
		}
	}
	var none *Lease
	none.Hold()() // nothing to hold: a no-op
}

// TestBudgetHolds hammers the gate from many goroutines and checks, under the race detector, that
// admitted costs never exceed the budget except for one job running alone, and that everything
// comes back.
func TestBudgetHolds(t *testing.T) {
	const budget = 1000
	g := New(Options{Budget: budget, MaxRunning: 6, MaxQueue: 8, MaxWait: 20 * time.Millisecond})
	var (
		wg        sync.WaitGroup
		held      atomic.Int64
		jobs      atomic.Int64
		violation atomic.Bool
	)
	for w := range 16 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 200 {
				cost := int64(r.IntN(400))
				if r.IntN(20) == 0 {
					cost = 3000 // over the budget
				}
				release, err := g.Acquire(context.Background(), cost)
				if err != nil {
					continue
				}
				h, n := held.Add(cost), jobs.Add(1)
				if h > budget && n > 1 || n > 6 {
					violation.Store(true)
				}
				time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
				held.Add(-cost)
				jobs.Add(-1)
				release()
			}
		})
	}
	wg.Wait()
	if violation.Load() {
		t.Fatal("the gate admitted more than its budget beside another job, or more than MaxRunning jobs")
	}
	if s := g.Stats(); s != (Stats{}) {
		t.Fatalf("gate not empty at the end: %+v", s)
	}
}

// TestContinue: the next job of an admitted request is neither refused by a full queue nor by
// MaxWait, waits its turn behind jobs that queued before it, and gives up only with its context.
func TestContinue(t *testing.T) {
	g := New(Options{Budget: 100, MaxRunning: 1, MaxQueue: 1, MaxWait: 100 * time.Millisecond})
	first, err := g.Acquire(context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	// A single receipt queues first (the queue is then full).
	receipt := make(chan func(), 1)
	go func() {
		r, err := g.Acquire(context.Background(), 10)
		if err != nil {
			t.Errorf("receipt: %v", err)
			r = func() {}
		}
		receipt <- r
	}()
	waitFor(t, "the receipt to queue", func() bool { return g.Stats().Waiting == 1 })
	// The document's next page queues behind it, past the full queue, and outlives MaxWait.
	page := make(chan error, 1)
	var order []string
	var mu sync.Mutex
	go func() {
		r, err := g.Continue(context.Background(), 60)
		if err == nil {
			mu.Lock()
			order = append(order, "page")
			mu.Unlock()
			r()
		}
		page <- err
	}()
	waitFor(t, "the page to queue", func() bool { return g.Stats().Waiting == 2 })
	if _, err := g.Acquire(context.Background(), 1); !errors.Is(err, ErrOverloaded) {
		t.Errorf("a new request with the queue full: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	first()
	r := <-receipt
	mu.Lock()
	order = append(order, "receipt")
	mu.Unlock()
	time.Sleep(150 * time.Millisecond) // the page has now waited twice MaxWait
	r()
	if err := <-page; err != nil {
		t.Fatalf("page: %v", err)
	}
	if order[0] != "receipt" {
		t.Errorf("admitted in the order %v; the receipt queued first", order)
	}
	// Only its context ends a continuing job's wait.
	hold, _ := g.Acquire(context.Background(), 100)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := g.Continue(ctx, 50); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("continue past its deadline: %v", err)
	}
	hold()
	if s := g.Stats(); s.Used != 0 || s.Running != 0 || s.Waiting != 0 {
		t.Errorf("the gate holds %+v at the end", s)
	}
}

// TestCharge: memory charged outside of any job counts against the budget at once, even past it,
// without a running slot; a job that no longer fits waits for its release.
func TestCharge(t *testing.T) {
	g := New(Options{Budget: 100, MaxRunning: 2, MaxQueue: 2, MaxWait: time.Minute})
	job, err := g.Acquire(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer job()
	release := g.Charge(150) // past the budget: charged all the same, at once
	if s := g.Stats(); s.Used != 160 || s.Running != 1 {
		t.Fatalf("after the charge the gate holds %+v", s)
	}
	admitted := make(chan func())
	go func() {
		r, err := g.Acquire(context.Background(), 60)
		if err != nil {
			t.Error(err)
		}
		admitted <- r
	}()
	waitFor(t, "the job to queue", func() bool { return g.Stats().Waiting == 1 })
	release()
	release() // twice is harmless
	r := <-admitted
	if s := g.Stats(); s.Used != 70 || s.Running != 2 {
		t.Errorf("after the release the gate holds %+v", s)
	}
	r()
}
