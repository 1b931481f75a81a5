//go:build !linux

package cpubudget

import "time"

// lockThreadClock falls back to the wall clock where a thread's CPU clock cannot be read from
// another thread.
func lockThreadClock() func() time.Duration {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}

func unlockThreadClock() {}
