package pdfengine

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestCPUWatchCountsCPUNotTime: a call that waits is never stopped, however long it waits; a call
// that computes is stopped once it has computed past its limit, wherever the wall clock is.
func TestCPUWatchCountsCPUNotTime(t *testing.T) {
	var kills atomic.Int32
	w := watchCPU(100*time.Millisecond, nil, func() { kills.Add(1) })
	time.Sleep(400 * time.Millisecond) // four times the limit, without computing
	if over, used, _, _ := w.end(); over || kills.Load() != 0 {
		t.Fatalf("a waiting call was stopped: over %v after %v of CPU", over, used)
	}

	w = watchCPU(100*time.Millisecond, nil, func() { kills.Add(1) })
	start := time.Now()
	x := 1.0
	for kills.Load() == 0 && time.Since(start) < time.Minute {
		for i := range 1_000_000 {
			x = x*1.0000001 + float64(i&1)
		}
	}
	over, used, _, _ := w.end()
	if !over || kills.Load() != 1 || used < 100*time.Millisecond {
		t.Errorf("a computing call: over %v, %d kills, %v of CPU (%.0f)", over, kills.Load(), used, x)
	}
	t.Logf("stopped after %v of CPU, %v of wall time", used, time.Since(start))
	if w := watchCPU(0, nil, func() { t.Error("no limit, yet killed") }); w != nil {
		t.Error("a watch without a limit")
	}
}
