//go:build !linux

package cpubudget

import "time"

// lockThreadClock falls back to the wall clock where a thread's CPU clock cannot be read from
// another thread. It names no thread (0), so Runs are never taken for nested ones there.
func lockThreadClock() (int, func() time.Duration) {
	start := time.Now()
	return 0, func() time.Duration { return time.Since(start) }
}

func unlockThreadClock() {}

// threadID is 0 where threads are not told apart: helpers inherit no budget there.
func threadID() int { return 0 }
