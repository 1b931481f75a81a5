// Package admission bounds the work a service takes on by what it costs. Every job states its
// memory cost in bytes before it starts; the gate admits jobs while the sum of the costs it holds
// fits a budget (and, optionally, while fewer than MaxRunning jobs run), lets at most MaxQueue more
// wait, each for at most MaxWait, and refuses anything beyond at once. An overloaded service thus
// answers "try again later" in microseconds instead of piling requests up in memory until every
// one of them times out, and a burst of large images waits its turn instead of adding up past the
// memory the process has.
//
// Waiting is first come, first served: a large job at the head of the queue is not overtaken by
// small ones behind it, so it cannot starve. A job that costs more than the whole budget waits
// until nothing else is admitted and then runs alone; refusing it outright would make inputs the
// service accepts impossible to serve, and alone is the least memory it can ever take. (Callers
// that want such jobs refused compare the cost with their own per-job limit first.)
package admission

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrOverloaded is returned when a job is refused: the queue is full, or the job waited MaxWait
// without being admitted.
var ErrOverloaded = errors.New("overloaded")

// Options configure a Gate.
type Options struct {
	// Budget is the memory, in bytes, that admitted jobs may hold together. It must be positive.
	Budget int64
	// MaxRunning bounds the jobs admitted at once whatever their cost (0: no bound); a CPU-bound
	// service gains nothing from running more jobs than it has cores.
	MaxRunning int
	// MaxQueue is how many jobs may wait; more are refused at once.
	MaxQueue int
	// MaxWait is the longest a job waits before it is refused.
	MaxWait time.Duration
}

// Gate admits jobs by cost. The zero value is not usable; use New. A Gate is safe for concurrent
// use.
type Gate struct {
	opt Options

	mu      sync.Mutex
	used    int64 // sum of the costs admitted
	running int
	queue   []*waiter // first come, first served

	inside atomic.Int64 // jobs between Enter and their leave
}

type waiter struct {
	cost     int64
	ready    chan struct{} // closed when admitted
	admitted bool
}

// New returns a gate with the given options; a non-positive budget is taken as 1 byte (every job
// then runs alone).
func New(opt Options) *Gate {
	opt.Budget = max(1, opt.Budget)
	opt.MaxRunning = max(0, opt.MaxRunning)
	opt.MaxQueue = max(0, opt.MaxQueue)
	return &Gate{opt: opt}
}

// Options returns the gate's settings.
func (g *Gate) Options() Options { return g.opt }

// Enter is the cheap check made before a job's cost is known (once a request's body has
// arrived, before it is parsed): it refuses at once, with ErrOverloaded, when as many jobs as the
// gate can run and queue are already inside (being prepared, waiting or running), so a saturated
// service spends nothing on requests it would refuse anyway and the memory of jobs being
// prepared stays bounded by that count. On success the caller must call leave exactly once, when
// the job is over. Without a MaxRunning bound Enter only counts.
//
// A request enters once its body is in, not before: a client that takes its time to send one
// must not hold a place that a request ready to run could have (see Full).
func (g *Gate) Enter() (leave func(), err error) {
	n := g.inside.Add(1)
	if g.full(n) {
		g.inside.Add(-1)
		return nil, ErrOverloaded
	}
	var once sync.Once
	return func() { once.Do(func() { g.inside.Add(-1) }) }, nil
}

// Full reports whether Enter would refuse a job now, without entering: the check a request makes
// before its body is read, so that a saturated service answers at once instead of receiving a
// body it would then refuse. Unlike Enter it takes no place, so a request that passes it and
// then takes long to send its body holds nothing of the gate meanwhile.
func (g *Gate) Full() bool { return g.full(g.inside.Load() + 1) }

// full reports whether n jobs inside are more than the gate can run and queue.
func (g *Gate) full(n int64) bool {
	return g.opt.MaxRunning > 0 && n > int64(g.opt.MaxRunning+g.opt.MaxQueue)
}

// Acquire admits a job costing cost bytes. It returns at once when the job fits and nobody is
// waiting ahead of it, ErrOverloaded without waiting when the queue is full, ErrOverloaded after
// MaxWait when the job was not admitted in time, and ctx.Err() when ctx ends first. On success the
// caller must call release exactly once (later calls do nothing), when the job's memory is free.
func (g *Gate) Acquire(ctx context.Context, cost int64) (release func(), err error) {
	return g.acquire(ctx, cost, false)
}

// Continue admits the next job of a request the gate has already admitted once: the next page of
// a document, the next image of a batch. It waits in the same first-come, first-served queue as
// Acquire, so a long document takes its turn between other requests' jobs instead of ahead of
// them, but neither a full queue nor MaxWait refuses it: only ctx ends its wait. A request that
// has read half a document must not be answered 429 for the other half; how many such jobs can
// wait is bounded by the requests Enter lets in. On success the caller must call release exactly
// once.
func (g *Gate) Continue(ctx context.Context, cost int64) (release func(), err error) {
	return g.acquire(ctx, cost, true)
}

// Charge adds memory a request holds outside of any job (the answer it is building) to what the
// gate counts, at once: it neither waits nor takes a running slot, so the request's own next job
// cannot end up waiting behind it. Jobs admitted afterwards see that much less of the budget.
// The caller bounds what it charges. release gives it back; later calls do nothing.
func (g *Gate) Charge(cost int64) (release func()) {
	cost = max(0, cost)
	g.mu.Lock()
	g.used += cost
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.used -= cost
			g.grant()
			g.mu.Unlock()
		})
	}
}

func (g *Gate) acquire(ctx context.Context, cost int64, continuing bool) (release func(), err error) {
	cost = max(0, cost)
	g.mu.Lock()
	if len(g.queue) == 0 && g.fits(cost) {
		g.take(cost)
		g.mu.Unlock()
		return g.releaser(cost), nil
	}
	if !continuing && len(g.queue) >= g.opt.MaxQueue {
		g.mu.Unlock()
		return nil, ErrOverloaded
	}
	w := &waiter{cost: cost, ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()

	var expired <-chan time.Time
	if !continuing {
		timer := time.NewTimer(g.opt.MaxWait)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-w.ready:
		return g.releaser(cost), nil
	case <-expired:
		err = ErrOverloaded
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	if w.admitted {
		// Admitted while giving up: hand the cost back as if it had run.
		g.give(cost)
	} else {
		for i, q := range g.queue {
			if q == w {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				break
			}
		}
		// A large job leaving the head of the queue may let the ones behind it in.
		g.grant()
	}
	g.mu.Unlock()
	return nil, err
}

// fits reports whether a job of this cost can be admitted now. Called with mu held.
func (g *Gate) fits(cost int64) bool {
	if g.opt.MaxRunning > 0 && g.running >= g.opt.MaxRunning {
		return false
	}
	return g.used+cost <= g.opt.Budget || g.running == 0 // too large for the budget: alone
}

func (g *Gate) take(cost int64) {
	g.used += cost
	g.running++
}

// give returns a job's cost and admits whoever now fits. Called with mu held.
func (g *Gate) give(cost int64) {
	g.used -= cost
	g.running--
	g.grant()
}

// grant admits waiting jobs from the head of the queue while they fit. Called with mu held.
func (g *Gate) grant() {
	for len(g.queue) > 0 && g.fits(g.queue[0].cost) {
		w := g.queue[0]
		g.queue = g.queue[1:]
		g.take(w.cost)
		w.admitted = true
		close(w.ready)
	}
}

func (g *Gate) releaser(cost int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.give(cost)
			g.mu.Unlock()
		})
	}
}

// Stats is a snapshot of the gate.
type Stats struct {
	Used    int64 // bytes admitted
	Running int   // jobs admitted
	Waiting int   // jobs waiting
	Inside  int   // jobs between Enter and leave
}

// Stats returns what the gate holds now.
func (g *Gate) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Stats{Used: g.used, Running: g.running, Waiting: len(g.queue), Inside: int(g.inside.Load())}
}

// A Lease is an admission shared between a request and the work it starts: it goes back to the
// gate when the last holder lets go. Work that a request abandons at its deadline but cannot stop
// (a decoder in the middle of a file) still holds its memory, and the budget must count that
// memory until the work really ends; such work takes the lease as a parameter and holds it (see
// Hold). A nil *Lease holds nothing.
type Lease struct {
	refs    atomic.Int64
	release func()
}

// Share makes an admission a lease that work started by the request can keep (see Hold). It
// returns the lease and the release the caller calls when it is done; the admission goes back to
// the gate when the caller and every holder have released it.
func Share(release func()) (*Lease, func()) {
	l := &Lease{release: release}
	l.refs.Store(1)
	var once sync.Once
	done := func() {
		once.Do(func() {
			if l.refs.Add(-1) == 0 {
				l.release()
			}
		})
	}
	return l, done
}

// Hold keeps the admission until done is called, even after the request that acquired it has
// given it up. Call it before starting the work, while the request still holds the admission:
// once the lease has gone back to the gate, the work it would cover is not admitted, holding
// would count it twice, and done does nothing. On a nil lease done does nothing too.
func (l *Lease) Hold() (done func()) {
	if l == nil {
		return func() {}
	}
	for {
		n := l.refs.Load()
		if n == 0 {
			return func() {}
		}
		if l.refs.CompareAndSwap(n, n+1) {
			break
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if l.refs.Add(-1) == 0 {
				l.release()
			}
		})
	}
}
