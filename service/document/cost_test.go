package document

import (
	"errors"
	"math"
	"testing"

	"github.com/ocrgate/ocrgate/service/document/docfile"
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

// TestBudgetAnswer: the answer is charged in steps of answerChunk at answerMemory bytes a byte,
// refused past its bound (and from then on), and given back whole by Release.
func TestBudgetAnswer(t *testing.T) {
	var charged, calls int64
	charge := func(n int64) func() {
		charged += n
		calls++
		return func() { charged -= n }
	}
	b := NewBudget(BudgetLimits{AnswerBytes: 3 << 20}, charge)
	if err := b.addAnswer(100); err != nil || charged != answerChunk {
		t.Fatalf("first bytes: %v, charged %d", err, charged)
	}
	if err := b.addAnswer(2 << 20); err != nil || charged < answerMemory*(2<<20+100) || charged > answerMemory*(2<<20+100)+answerChunk {
		t.Fatalf("two more MiB: %v, charged %d", err, charged)
	}
	err := b.addAnswer(1 << 20)
	var ae *AnswerError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAnswerTooLarge) || ae.Limit != 3<<20 || b.Exceeded() == nil {
		t.Fatalf("past the bound: %v", err)
	}
	if err := b.addAnswer(1); err == nil {
		t.Error("a byte accepted after the bound was crossed")
	}
	b.Release()
	if charged != 0 {
		t.Errorf("%d bytes still charged after Release", charged)
	}
	b.Release() // twice is harmless
}

// TestBudgetPages: pages are counted across every document of the request; the one that
// crosses the limit is refused with a request-wide PageCountError, and so is everything after.
func TestBudgetPages(t *testing.T) {
	b := NewBudget(BudgetLimits{Pages: 5}, nil)
	if err := b.takePages(3); err != nil {
		t.Fatal(err)
	}
	if err := b.takePages(2); err != nil {
		t.Fatalf("exactly the limit: %v", err)
	}
	err := b.takePages(1)
	var pc *docfile.PageCountError
	if !errors.As(err, &pc) || !pc.Request || pc.Pages != 6 || pc.Limit != 5 || !errors.Is(err, docfile.ErrTooManyPages) {
		t.Fatalf("past the limit: %#v", err)
	}
	if b.addAnswer(1) == nil || b.Exceeded() == nil {
		t.Error("the budget let more through after it was exceeded")
	}
}
