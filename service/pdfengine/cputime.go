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
type cpuWatch struct {
	stop  chan struct{}
	done  chan struct{}
	meter *cpubudget.Meter
	mu    sync.Mutex
	over  bool
	used  time.Duration
}

// watchCPU starts watching the calling goroutine's CPU time (limit > 0) and calls kill, once,
// when it passes limit. The caller must call end on the same goroutine when the call is over.
func watchCPU(limit time.Duration, kill func()) *cpuWatch {
	if limit <= 0 {
		return nil
	}
	w := &cpuWatch{stop: make(chan struct{}), done: make(chan struct{}), meter: cpubudget.StartMeter()}
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
				if used > limit {
					w.mu.Lock()
					w.over, w.used = true, used
					w.mu.Unlock()
					kill()
					return
				}
			}
		}
	}()
	return w
}

// end stops watching, unlocks the thread and reports whether the call went over its limit.
func (w *cpuWatch) end() (over bool, used time.Duration) {
	if w == nil {
		return false, 0
	}
	close(w.stop)
	<-w.done
	w.meter.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.over, w.used
}
