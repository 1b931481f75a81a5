package ocr

// sets is a disjoint-set forest over n items (boxes, by index): boxes found to belong together
// pair by pair (the pieces of a column, the words of a margin stamp) end up in one group, whatever
// the order the pairs were found in.
type sets []int

// newSets is n items, each a group of its own.
func newSets(n int) sets {
	s := make(sets, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// find is the representative of i's group (the paths it walks are halved on the way).
func (s sets) find(i int) int {
	for s[i] != i {
		s[i] = s[s[i]]
		i = s[i]
	}
	return i
}

// union puts j's group into i's.
func (s sets) union(i, j int) { s[s.find(j)] = s.find(i) }
