// Package work runs the units of a request's work (an entry of an "images" array, a document's
// page, a recognizer batch, a decode, a text-layer check) alone or several at once, under one
// panic policy: a unit that panics fails alone. Its panic is recovered where the unit runs,
// turned into a *Panic (an error that says which kind of unit failed and nothing of the panic
// itself, whose text may quote the input), and reported, with its stack, to whatever the request's
// context carries (see WithReporter: the service logs it with the request ID and counts it). A
// bug that a fuzzer finds tomorrow costs one unit of one request, not the process and every
// request in flight with it.
//
// The goroutines this package starts charge their CPU time to the budget their caller charges
// (cpubudget.Inherit): a request's work spread over cores costs its CPU budget as it would on one.
//
// Work spread over cores inside one unit (the rows of an image, the crops of a page) runs through
// Range and Spread. Their goroutines recover their own panics and hand the first one back to the
// caller's goroutine, which raises it again once every goroutine has stopped: the unit's own Do
// then sees it as if it had happened there. None of this package's calls returns while a
// goroutine it started is still running.
package work

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/ocrgate/ocrgate/service/cpubudget"
)

// Panic is the error of a unit of work that panicked. Error names the unit only; Value and Stack
// are for the log, never for a client.
type Panic struct {
	Unit  string // what was being done: "image", "document page", "recognizer batch", ...
	Value any    // what was passed to panic
	Stack []byte // the stack of the goroutine that panicked, where it panicked
}

func (p *Panic) Error() string { return "internal error in a " + p.Unit }

// LogValue is how the panic appears in a log line: its unit and its value. The stack is logged
// once, where the panic is reported (see Reporter), not in every line that carries the error.
func (p *Panic) LogValue() slog.Value {
	return slog.GroupValue(slog.String("unit", p.Unit), slog.String("value", fmt.Sprint(p.Value)))
}

// Reporter receives the panics recovered by units run under a context that carries it. It is
// called on the goroutine that recovered the panic, and must be safe for concurrent use.
type Reporter func(*Panic)

type reporterKey struct{}

// WithReporter returns a context whose units report their panics to r.
func WithReporter(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// report hands p to ctx's reporter, or to the default logger when it has none: a panic is never
// silent.
func report(ctx context.Context, p *Panic) {
	if r, ok := ctx.Value(reporterKey{}).(Reporter); ok && r != nil {
		r(p)
		return
	}
	slog.Error("panic in a unit of work", "panic", p, "stack", string(p.Stack))
}

// recovered turns what recover returned into a *Panic of unit: a panic carried from another
// goroutine (by Range, Spread or a Carrier) keeps the stack of the goroutine where it happened.
func recovered(unit string, v any) *Panic {
	if c, ok := v.(*carried); ok {
		return &Panic{Unit: unit, Value: c.value, Stack: c.stack}
	}
	return &Panic{Unit: unit, Value: v, Stack: debug.Stack()}
}

// Report reports v, a value recovered from a panic in a unit of work of the kind unit, to ctx's
// reporter, and returns it as a *Panic: for code that recovers a panic itself and answers it
// otherwise than as an internal error (a third-party decoder's panic on a file it cannot read).
func Report(ctx context.Context, unit string, v any) *Panic {
	p := recovered(unit, v)
	report(ctx, p)
	return p
}

// Do runs fn as one unit of work of the kind unit. A panic in fn (or raised again from the
// goroutines fn spread its work over) is recovered, reported to ctx's Reporter and returned as a
// *Panic; otherwise Do returns what fn returns.
func Do(ctx context.Context, unit string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p := recovered(unit, v)
			report(ctx, p)
			err = p
		}
	}()
	if f, ok := ctx.Value(faultKey{}).(func(string)); ok {
		f(unit)
	}
	return fn()
}

type faultKey struct{}

// WithFault returns a context in which every unit of work calls f with its kind before it starts.
// It is how a test injects a panic into one kind of unit (f panics for that kind) and checks that
// only that unit fails and the service keeps serving; the service itself never sets one.
func WithFault(ctx context.Context, f func(unit string)) context.Context {
	return context.WithValue(ctx, faultKey{}, f)
}

// All runs fn(ctx, i) for every i in [0, n), at most limit at once (limit < 1: one at a time),
// each a unit of the kind unit (see Do). The first error, a panic's included, cancels the context
// the other units see (its cause is that error) and keeps units not yet started from starting;
// All returns it once every unit that started has returned. When ctx ends first, All returns its
// cause.
func All(ctx context.Context, n, limit int, unit string, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() { first = err; cancel(err) })
	}
	run(ctx, n, limit, func(i int) {
		if err := Do(ctx, unit, func() error { return fn(ctx, i) }); err != nil {
			fail(err)
		}
	})
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}

// Each runs fn(ctx, i) for every i in [0, n), at most limit at once (limit < 1: one at a time),
// each a unit of the kind unit (see Do) whose error is its own: one unit's failure, a panic
// included, stops no other. It returns every unit's error, in order; a unit that could not start
// because ctx ended has ctx's cause.
func Each(ctx context.Context, n, limit int, unit string, fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	started := run(ctx, n, limit, func(i int) {
		errs[i] = Do(ctx, unit, func() error { return fn(ctx, i) })
	})
	for i := started; i < n; i++ {
		errs[i] = context.Cause(ctx)
	}
	return errs
}

// run calls unit(i) for i in [0, n) in order, on up to limit goroutines at once, until ctx ends,
// and returns how many it started once all of those have returned. unit must not panic (the
// callers wrap it in Do).
func run(ctx context.Context, n, limit int, unit func(i int)) (started int) {
	limit = max(1, limit)
	charged := cpubudget.Inherit()
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			return i
		}
		if limit == 1 {
			unit(i)
			<-slots
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			charged(func() { unit(i) })
		})
	}
	return n
}

// carried is a panic recovered on one goroutine, to be raised again on another: the value and the
// stack where it happened.
type carried struct {
	value any
	stack []byte
}

func (c *carried) String() string { return fmt.Sprintf("%v (carried from another goroutine)", c.value) }

// Carrier takes the first panic of the goroutines a unit starts back to the unit's goroutine.
// Each such goroutine defers Recover; the unit calls Raise once they have all stopped. The zero
// value is ready to use.
type Carrier struct {
	once  sync.Once
	fired atomic.Bool
	p     *carried
}

// Recover, deferred on a goroutine, keeps the first panic of any goroutine it runs on and stops
// it there.
func (c *Carrier) Recover() {
	if v := recover(); v != nil {
		c.keep(v)
	}
}

func (c *Carrier) keep(v any) {
	c.once.Do(func() {
		if cv, ok := v.(*carried); ok {
			c.p = cv
		} else {
			c.p = &carried{value: v, stack: debug.Stack()}
		}
		c.fired.Store(true)
	})
}

// Panicked reports whether a goroutine has panicked already: a goroutine that feeds the others
// can stop early.
func (c *Carrier) Panicked() bool { return c.fired.Load() }

// Raise panics on the calling goroutine with the panic kept, if any. Call it once every goroutine
// that defers Recover has stopped.
func (c *Carrier) Raise() {
	if c.fired.Load() {
		panic(c.p)
	}
}

// Range splits [0, n) into contiguous ranges, at least minPer items each, and calls fn on them
// over up to maxWorkers goroutines (the caller's CPUs: GOMAXPROCS); fn runs on the calling
// goroutine alone when one range is all there is. A panic in fn is raised again on the calling
// goroutine once every range is done.
func Range(n, minPer, maxWorkers int, fn func(lo, hi int)) {
	workers := min(maxWorkers, n/max(1, minPer))
	if workers <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var (
		wg      sync.WaitGroup
		c       Carrier
		charged = cpubudget.Inherit()
	)
	for i := range workers {
		lo, hi := n*i/workers, n*(i+1)/workers
		wg.Go(func() {
			defer c.Recover()
			charged(func() { fn(lo, hi) })
		})
	}
	wg.Wait()
	c.Raise()
}

// Spread calls fn(i) for every i in [0, n) over up to maxWorkers goroutines, each taking the next
// index as it becomes free: for items of uneven cost. A panic in fn stops the other goroutines
// at their next item and is raised again on the calling goroutine once they have all stopped.
func Spread(n, maxWorkers int, fn func(i int)) {
	workers := min(n, maxWorkers)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var (
		wg      sync.WaitGroup
		next    atomic.Int64
		c       Carrier
		charged = cpubudget.Inherit()
	)
	for range workers {
		wg.Go(func() {
			defer c.Recover()
			charged(func() {
				for !c.Panicked() {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					fn(i)
				}
			})
		})
	}
	wg.Wait()
	c.Raise()
}
