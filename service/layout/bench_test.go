package layout

import (
	"fmt"
	"testing"
)

// manyLines is n one-letter regions on a page: in cols columns set a gutter apart (every row a
// band across the gutters, the shape of internal/hostile's PDFShortLines), or, with cols 0, in
// two columns of running text.
func manyLines(n, cols int) []Box {
	boxes := make([]Box, n)
	for i := range boxes {
		if cols == 0 {
			x, y := float64(i%2)*320, float64(i/2)*15
			boxes[i] = Box{X0: 50 + x, Y0: y, X1: 290 + x, Y1: y + 12}
			continue
		}
		x, y := float64(i%cols)*90, float64(i/cols)*2.7
		boxes[i] = Box{X0: 20 + x, Y0: y, X1: 21.5 + x, Y1: y + 2.3}
	}
	return boxes
}

// BenchmarkArrange lays out pages of many lines. A page's layout is O(n log n) in its regions;
// `go test -run x -bench Arrange ./service/layout/` shows ns/op growing about tenfold from 3 300
// to 33 000 regions.
func BenchmarkArrange(b *testing.B) {
	for _, shape := range []struct {
		name string
		cols int
	}{{"8 columns of letters", 8}, {"one column of letters", 1}, {"two columns of text", 0}} {
		for _, n := range []int{3_300, 33_000} {
			boxes := manyLines(n, shape.cols)
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				for b.Loop() {
					Arrange(boxes, Options{RowOverlap: 0.5})
				}
			})
		}
	}
}
