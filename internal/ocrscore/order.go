package ocrscore

import "strings"

// ReadingOrder scores how well got keeps the order of want's words: the longest common
// subsequence of the two word sequences, divided by the number of words they share (the size of
// the multiset intersection). Words are split at white space; text read wrongly counts for
// nothing either way, so the score measures order alone: 1 when every word both hold comes in
// want's order. Two columns read line by line across (each line of the left column followed by
// the line beside it) score about 0.5, three about 0.37. It is 1 when they share no word.
func ReadingOrder(want, got string) float64 {
	a, b := strings.Fields(want), strings.Fields(got)
	shared := SharedWords(a, b)
	if shared == 0 {
		return 1
	}
	// The longest common subsequence, one row at a time.
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(b)]) / float64(shared)
}

// SharedWords is the size of the multiset intersection of want and got: how many of got's words
// match a word of want, each of want's matched once.
func SharedWords(want, got []string) int {
	count := make(map[string]int, len(want))
	for _, w := range want {
		count[w]++
	}
	shared := 0
	for _, g := range got {
		if count[g] > 0 {
			count[g]--
			shared++
		}
	}
	return shared
}
