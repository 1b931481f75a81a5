package cpubudget

import (
	"context"
	"errors"
	"sync"
	"time"
)

// checkEvery is how often Run looks at the CPU time of the work it watches: work past its budget
// is stopped within this much more CPU time (and the work's own check of its context).
const checkEvery = 20 * time.Millisecond

// Run runs fn on the calling goroutine, locked to its thread for the call, and charges the CPU
// time that thread uses to ctx's budget: every few milliseconds as it runs, and the rest at the
// end. When the budget is spent, fn's context is canceled with the budget's *Error as its cause;
// fn must look at its context often enough to stop soon after (a decoder between rows). Run
// returns the CPU time fn used, and fn's error, or that *Error when fn stopped for it.
//
// Without a budget in ctx, Run only measures.
//
// Runs nest: a Run inside another on the same goroutine (a unit of work run in place, where it
// could have had a goroutine of its own) measures, but charges nothing, since the enclosing Run
// charges the same thread's time already. So every place that starts a goroutine for a request's
// work can run it under Run (or Inherit), without knowing whether its caller does too.
func Run(ctx context.Context, fn func(ctx context.Context) error) (used time.Duration, err error) {
	b := From(ctx)
	m := StartMeter()
	if !enter(m.tid, b) {
		err = fn(ctx)
		return m.Stop(), err
	}
	defer leave(m.tid)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var charged time.Duration // written by the watcher, read once it has stopped
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		if b == nil {
			return
		}
		t := time.NewTicker(checkEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				now := m.Used()
				err := b.Charge(now - charged)
				charged = now
				if err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	err = fn(ctx)
	close(done)
	<-stopped
	used = m.Stop()
	if b == nil {
		return used, err
	}
	over := b.Charge(used - charged)
	var spent *Error
	if err != nil && errors.As(context.Cause(ctx), &spent) {
		return used, spent // fn stopped because the budget ran out, whatever it says
	}
	if err == nil && over != nil {
		return used, over // done, but past the budget: what comes next is refused anyway
	}
	return used, err
}

// Inherit returns what the calling goroutine hands a goroutine it starts for its work (a helper
// that spreads a loop over the cores, a decoder's worker), so that the helper's CPU time is
// charged to the budget the caller charges under Run: the helper runs its work through the
// function, which measures its thread and charges what it used when the work ends (a panic
// included). Outside Run, or under a Run without a budget, the work runs uncharged.
//
// Helpers charge once, at their end, and have no watch of their own: they are short, and the Run
// that started them stops its work, and with it theirs, once the budget is spent.
func Inherit() func(work func()) {
	b, ok := current()
	if !ok || b == nil {
		return func(work func()) { work() }
	}
	return func(work func()) {
		m := StartMeter()
		if !enter(m.tid, b) {
			defer m.Stop()
			work()
			return
		}
		defer func() { _ = b.Charge(m.Stop()) }() // an error shows to the Run that watches
		defer leave(m.tid)
		work()
	}
}

// running holds the threads of the goroutines charging a budget now (under Run, or a helper
// through Inherit), and the budget each charges (nil: Run without one). A goroutine charging is
// locked to its thread, and no other goroutine runs there until it is done, so a thread found
// here belongs to the goroutine asking: its Run is nested, and its helpers inherit that budget.
var running struct {
	sync.Mutex
	threads map[int]*Budget
}

// enter records that thread tid charges b, and reports false when it charges already (tid 0,
// unknown, is never taken for charging already).
func enter(tid int, b *Budget) bool {
	if tid == 0 {
		return true
	}
	running.Lock()
	defer running.Unlock()
	if _, ok := running.threads[tid]; ok {
		return false
	}
	if running.threads == nil {
		running.threads = map[int]*Budget{}
	}
	running.threads[tid] = b
	return true
}

// leave ends what enter recorded.
func leave(tid int) {
	if tid == 0 {
		return
	}
	running.Lock()
	delete(running.threads, tid)
	running.Unlock()
}

// current is the budget the calling goroutine charges, and whether it charges one at all.
func current() (*Budget, bool) {
	tid := threadID()
	if tid == 0 {
		return nil, false
	}
	running.Lock()
	defer running.Unlock()
	b, ok := running.threads[tid]
	return b, ok
}
