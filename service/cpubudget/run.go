package cpubudget

import (
	"context"
	"errors"
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
func Run(ctx context.Context, fn func(ctx context.Context) error) (used time.Duration, err error) {
	b := From(ctx)
	m := StartMeter()
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
