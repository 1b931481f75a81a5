// Package cpubudget bounds the CPU time one request may use, as package admission bounds the
// memory requests use together. Memory alone does not price a request: a 1 MB TIFF can decode for
// minutes in a few megabytes, and a 13 KB PDF of 2 000 text pages costs two minutes of CPU in a
// fixed survey. So every request carries a Budget of CPU time, and its work is priced twice:
//
//   - before it starts, by an estimate made from what is known then (a file's header, a page
//     count, a decode plan): Plan refuses work whose estimate does not fit what is left, so that a
//     request that cannot finish is refused at once, before it has cost anything;
//   - while it runs, by the CPU time its goroutines really use, read from their threads' CPU
//     clocks (see Run, and Inherit for the goroutines a charged goroutine starts): work that
//     spends past the budget is stopped, within a few milliseconds, through its context, whatever
//     its estimate said.
//
// CPU time, not elapsed time: a page that takes 2 CPU-s takes 20 s on a machine ten requests
// share, and must still be read; a file built to decode forever must be stopped after its CPU
// allowance, not after a wall-clock time that depends on the load.
//
// The budget travels in the request's context (With, From), so that a decoder deep in the
// pipeline charges the request it works for without every layer between passing it along. A nil
// *Budget is no budget: its methods allow everything.
package cpubudget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// ErrExceeded matches every *Error: a request's work needs, or has used, more CPU time than its
// budget.
var ErrExceeded = errors.New("the request's CPU budget is exceeded")

// Error is work refused or stopped for its CPU time. It matches ErrExceeded.
type Error struct {
	// Need is the CPU time the request would need (the estimate, when Spent is false) or has used
	// when it was stopped (Spent true).
	Need  time.Duration
	Limit time.Duration
	// Spent says the work was stopped as it ran, not refused before it started.
	Spent bool
}

func (e *Error) Error() string {
	if e.Spent {
		return fmt.Sprintf("reading this request used up its CPU time, %s per request, before it was done", seconds(e.Limit))
	}
	return fmt.Sprintf("reading this request needs about %s of CPU time; the limit is %s per request", seconds(e.Need), seconds(e.Limit))
}

// Is makes errors.Is(err, ErrExceeded) hold.
func (e *Error) Is(target error) bool { return target == ErrExceeded }

// seconds writes d as CPU-seconds, to one decimal below 10 s and whole above.
func seconds(d time.Duration) string {
	s := d.Seconds()
	if s < 10 {
		return fmt.Sprintf("%.1f CPU-s", s)
	}
	return fmt.Sprintf("%.0f CPU-s", math.Round(s))
}

// Budget is one request's CPU time: a limit, what its work was estimated to need (planned) and
// what it has used (spent). It is safe for concurrent use; a nil *Budget allows everything.
type Budget struct {
	limit   time.Duration
	planned atomic.Int64
	spent   atomic.Int64
}

// New returns a budget of limit CPU time; limit <= 0 is no limit (nil).
func New(limit time.Duration) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: limit}
}

// Limit is the budget's limit, 0 for none.
func (b *Budget) Limit() time.Duration {
	if b == nil {
		return 0
	}
	return b.limit
}

// Spent is the CPU time charged so far.
func (b *Budget) Spent() time.Duration {
	if b == nil {
		return 0
	}
	return time.Duration(b.spent.Load())
}

// Left is what the budget still allows: its limit less what was spent (never negative);
// math.MaxInt64 without a limit.
func (b *Budget) Left() time.Duration {
	if b == nil {
		return math.MaxInt64
	}
	return max(0, b.limit-b.Spent())
}

// Plan prices work about to start at est. Work whose estimate, added to the CPU time already
// spent, would pass the limit is refused with an *Error before it starts; otherwise the estimate
// is recorded (see Planned) and nil returned. Plan reserves nothing: estimates are checked against
// what is spent, which Charge keeps true, so one request's estimates never add up against it
// twice.
func (b *Budget) Plan(est time.Duration) error {
	if b == nil || est <= 0 {
		return nil
	}
	b.planned.Add(int64(est))
	if need := addSat(b.Spent(), est); need > b.limit {
		return &Error{Need: need, Limit: b.limit}
	}
	return nil
}

// Planned is the sum of the estimates Plan was given.
func (b *Budget) Planned() time.Duration {
	if b == nil {
		return 0
	}
	return time.Duration(b.planned.Load())
}

// Charge records d of CPU time used, and returns an *Error (Spent) once what was used passes the
// limit.
func (b *Budget) Charge(d time.Duration) error {
	if b == nil {
		return nil
	}
	spent := time.Duration(b.spent.Add(int64(max(0, d))))
	if spent > b.limit {
		return &Error{Need: spent, Limit: b.limit, Spent: true}
	}
	return nil
}

func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

type budgetKey struct{}

// With returns a context that carries b.
func With(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// From returns the budget ctx carries, nil (no limit) when it carries none.
func From(ctx context.Context) *Budget {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	return b
}
