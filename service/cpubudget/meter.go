package cpubudget

import "time"

// Meter reads the CPU time of the work on one goroutine: StartMeter locks the goroutine to its
// thread, Used reads that thread's CPU clock (from any goroutine), Stop unlocks it. Work that
// blocks (a channel, a lock, I/O) costs nothing while it waits; work on other goroutines is
// not counted.
type Meter struct {
	tid   int // the thread's id; 0 where it is not known
	clock func() time.Duration
	start time.Duration
}

// StartMeter starts measuring the calling goroutine's CPU time. Stop must be called on the same
// goroutine.
func StartMeter() *Meter {
	tid, clock := lockThreadClock()
	return &Meter{tid: tid, clock: clock, start: clock()}
}

// Used is the CPU time used since StartMeter.
func (m *Meter) Used() time.Duration { return max(0, m.clock()-m.start) }

// Stop ends the measure and returns the CPU time used since StartMeter.
func (m *Meter) Stop() time.Duration {
	used := m.Used()
	unlockThreadClock()
	return used
}
