package ocr

import (
	"math"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

func TestLineWords(t *testing.T) {
	level := geom.Quad{{X: 0, Y: 0}, {X: 100, Y: 0}, {X: 100, Y: 20}, {X: 0, Y: 20}}
	// The same box read upside down: its text's top-left is the image's bottom-right.
	flipped := geom.Quad{level[2], level[3], level[0], level[1]}
	probs := []float32{.9, .7, 0, .8, .6}
	for _, c := range []struct {
		name string
		quad geom.Quad
		want []Word
	}{
		// 16 steps over a 128-px padded crop whose content is 100 px: 8 px a step. Characters at
		// steps 1, 2, 5, 6 have centres 12, 20, 44, 52; the pitch is 8.
		{"level", level, []Word{
			{Text: "AB", Score: .8, Quad: geom.Quad{{X: 8, Y: 0}, {X: 24, Y: 0}, {X: 24, Y: 20}, {X: 8, Y: 20}}},
			{Text: "CD", Score: .7, Quad: geom.Quad{{X: 40, Y: 0}, {X: 56, Y: 0}, {X: 56, Y: 20}, {X: 40, Y: 20}}},
		}},
		{"upside down", flipped, []Word{
			{Text: "AB", Score: .8, Quad: geom.Quad{{X: 92, Y: 20}, {X: 76, Y: 20}, {X: 76, Y: 0}, {X: 92, Y: 0}}},
			{Text: "CD", Score: .7, Quad: geom.Quad{{X: 60, Y: 20}, {X: 44, Y: 20}, {X: 44, Y: 0}, {X: 60, Y: 0}}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := lineWords(c.quad, "AB CD", []int{1, 2, 3, 5, 6}, probs, 16, 100, 128)
			if len(got) != len(c.want) {
				t.Fatalf("%d words %+v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if g.Text != w.Text || math.Abs(float64(g.Score-w.Score)) > 1e-6 {
					t.Errorf("word %d: %q %.2f, want %q %.2f", i, g.Text, g.Score, w.Text, w.Score)
				}
				for k := range w.Quad {
					if math.Abs(g.Quad[k].X-w.Quad[k].X) > 1e-9 || math.Abs(g.Quad[k].Y-w.Quad[k].Y) > 1e-9 {
						t.Errorf("word %q: quad %v, want %v", w.Text, g.Quad, w.Quad)
						break
					}
				}
			}
		})
	}
	// Inconsistent input gives no words rather than wrong ones.
	if w := lineWords(level, "AB", []int{1}, []float32{.9}, 16, 100, 128); w != nil {
		t.Errorf("steps shorter than the text gave %v", w)
	}
	// A single character spans one pitch (two steps by default) around its centre, clamped to
	// the crop.
	if w := lineWords(level, "A", []int{0}, []float32{.5}, 16, 100, 128); len(w) != 1 || w[0].Quad[0].X != 0 || w[0].Quad[1].X != 12 {
		t.Errorf("single character: %+v", w)
	}
}
