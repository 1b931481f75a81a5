// Package admission bounds the work a service takes on: at most Limit jobs run at once, at most
// Queue more wait for a slot, each for at most MaxWait. Anything beyond is refused at once, so an
// overloaded service answers "try again later" in microseconds instead of piling requests up in
// memory until every one of them times out.
package admission

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrOverloaded is returned when a job is refused: every slot is busy and the queue is full, or the
// job waited MaxWait without getting a slot.
var ErrOverloaded = errors.New("overloaded")

// Gate admits jobs. The zero value is not usable; use New. A Gate is safe for concurrent use.
type Gate struct {
	slots   chan struct{}
	queue   int64
	maxWait time.Duration
	waiting atomic.Int64
}

// New returns a gate running at most limit jobs at once with at most queue more waiting up to
// maxWait each. limit must be positive; queue may be 0 (refuse as soon as every slot is busy).
func New(limit, queue int, maxWait time.Duration) *Gate {
	return &Gate{slots: make(chan struct{}, max(1, limit)), queue: int64(max(0, queue)), maxWait: maxWait}
}

// Acquire takes a slot. It returns ErrOverloaded without waiting when the queue is full, after
// MaxWait when no slot freed up, and ctx.Err() when ctx ends first. On success the caller must
// call the returned release exactly once.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	default:
	}
	if g.waiting.Add(1) > g.queue {
		g.waiting.Add(-1)
		return nil, ErrOverloaded
	}
	defer g.waiting.Add(-1)
	timer := time.NewTimer(g.maxWait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	case <-timer.C:
		return nil, ErrOverloaded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *Gate) release() { <-g.slots }

// InFlight is the number of jobs holding a slot.
func (g *Gate) InFlight() int { return len(g.slots) }

// Waiting is the number of jobs waiting for a slot.
func (g *Gate) Waiting() int { return int(g.waiting.Load()) }

// Limit is the number of slots.
func (g *Gate) Limit() int { return cap(g.slots) }
