package dococr

import (
	"math"
	"testing"
)

// TestAddCostSaturates: a sum of costs never wraps around to a small or negative number that
// would pass every limit.
func TestAddCostSaturates(t *testing.T) {
	for _, tt := range []struct {
		in   []int64
		want int64
	}{
		{[]int64{1, 2, 3}, 6},
		{[]int64{math.MaxInt64, 1}, math.MaxInt64},
		{[]int64{1 << 62, 1 << 62, 1 << 62}, math.MaxInt64},
		{[]int64{5, -1}, math.MaxInt64},
		{nil, 0},
	} {
		if got := addCost(tt.in...); got != tt.want {
			t.Errorf("addCost(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
