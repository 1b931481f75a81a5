package ocr

import "testing"

func TestSets(t *testing.T) {
	tests := []struct {
		name   string
		pairs  [][2]int
		same   [][2]int
		differ [][2]int
	}{
		{"none joined", nil, nil, [][2]int{{0, 1}, {2, 3}}},
		{"a chain in any order", [][2]int{{3, 4}, {0, 1}, {1, 3}}, [][2]int{{0, 4}, {1, 3}}, [][2]int{{0, 2}, {2, 5}}},
		{"two groups", [][2]int{{0, 2}, {4, 5}, {2, 1}}, [][2]int{{0, 1}, {4, 5}}, [][2]int{{1, 4}, {3, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSets(6)
			for _, p := range tt.pairs {
				s.union(p[0], p[1])
			}
			for _, p := range tt.same {
				if s.find(p[0]) != s.find(p[1]) {
					t.Errorf("%d and %d are in different groups", p[0], p[1])
				}
			}
			for _, p := range tt.differ {
				if s.find(p[0]) == s.find(p[1]) {
					t.Errorf("%d and %d are in one group", p[0], p[1])
				}
			}
		})
	}
}
