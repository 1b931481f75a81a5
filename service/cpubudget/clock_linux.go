//go:build linux

package cpubudget

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// lockThreadClock locks the calling goroutine to its thread and returns that thread's id and a
// function that reads the thread's CPU clock, from any goroutine (Linux gives every thread a CPU
// clock that other threads of the process can read: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
func lockThreadClock() (int, func() time.Duration) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	id := int32(^uint32(tid)<<3) | 6 // CPUCLOCK_SCHED (2) | CPUCLOCK_PERTHREAD_MASK (4)
	return tid, func() time.Duration {
		var ts unix.Timespec
		if unix.ClockGettime(id, &ts) != nil {
			return 0
		}
		return time.Duration(ts.Nano())
	}
}

func unlockThreadClock() { runtime.UnlockOSThread() }

// threadID is the calling thread's id.
func threadID() int { return unix.Gettid() }
