package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestApply: a plan sets the Go runtime's soft limit to its GoLimit, and one without (GOMEMLIMIT
// set by the environment) leaves the limit as it is.
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	Plan{GoLimit: 3 << 30}.Apply()
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("limit %d, want %d", got, int64(3<<30))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	Plan{}.Apply()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("a plan without GoLimit set the limit to %d", got)
	}
}
