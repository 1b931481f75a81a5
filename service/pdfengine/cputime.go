package pdfengine

import (
	"sync"
	"time"

	"github.com/ocrgate/ocrgate/service/cpubudget"
)

// cpuCheckEvery is how often a call's CPU time is looked at: a call over its limit is stopped
// within this much more of its CPU.
const cpuCheckEvery = 20 * time.Millisecond

// cpuWatch stops a call that has used more than its CPU time. The call runs on one goroutine
// locked to its OS thread for the call's length (the engine's code runs on the calling
// goroutine), and a watcher reads that thread's CPU clock: the time the call computed, whatever
// else the machine is doing. On a busy machine a page that takes 2 CPU-s to draw takes 20 s of
// wall time and still draws; a page built to draw forever is stopped after its CPU limit, not
// after a wall-clock time that depends on the load.
//
// The time is also charged, as it is used, to the request's CPU budget, which stops the call too
// when it runs out: a call may use the smaller of its own limit and what its request has left.
type cpuWatch struct {
	stop   chan struct{}
	done   chan struct{}
	meter  *cpubudget.Meter
	budget *cpubudget.Budget

	mu      sync.Mutex
	over    bool          // stopped at the call's own limit
	spent   error         // the budget's *cpubudget.Error, once it ran out
	killed  bool          // kill was called
	used    time.Duration // when stopped
	charged time.Duration // charged to budget so far
}

// watchCPU starts watching the calling goroutine's CPU time, charging it to budget (nil: none),
// and calls kill, once, when it passes limit (0: none) or the budget runs out. It returns nil
// when there is neither. The caller must call end on the same goroutine when the call is over.
func watchCPU(limit time.Duration, budget *cpubudget.Budget, kill func()) *cpuWatch {
	if limit <= 0 && budget == nil {
		return nil
	}
	w := &cpuWatch{stop: make(chan struct{}), done: make(chan struct{}), meter: cpubudget.StartMeter(), budget: budget}
	go func() {
		defer close(w.done)
		t := time.NewTicker(cpuCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				used := w.meter.Used()
				w.mu.Lock()
				err := w.charge(used)
				over := limit > 0 && used > limit
				if err != nil || over {
					w.over, w.spent, w.killed, w.used = err == nil, err, true, used
				}
				w.mu.Unlock()
				if err != nil || over {
					kill()
					return
				}
			}
		}
	}()
	return w
}

// charge charges the budget what was used since the last charge. w.mu must be held.
func (w *cpuWatch) charge(used time.Duration) error {
	err := w.budget.Charge(used - w.charged)
	w.charged = max(w.charged, used)
	return err
}

// end stops watching, unlocks the thread, charges the rest of the call's CPU time and reports
// whether the call was stopped at its own limit (over), how much it used, and the budget's error
// when the budget ran out during the call (killed: the call was stopped for it) or at its end.
func (w *cpuWatch) end() (over bool, used time.Duration, spent error, killed bool) {
	if w == nil {
		return false, 0, nil, false
	}
	close(w.stop)
	<-w.done
	total := w.meter.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.charge(total); err != nil && w.spent == nil {
		w.spent = err
	}
	if !w.killed {
		w.used = total
	}
	return w.over, w.used, w.spent, w.killed
}
