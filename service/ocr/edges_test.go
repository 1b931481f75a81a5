package ocr

import (
	"image"
	"math"
	"slices"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

func TestReachMarks(t *testing.T) {
	// A line of print 10 px tall at x 40–75, y 40–50, boxed at x 39–77, y 38–52 (14 px).
	line := print(40, 40, 10, 6)
	box := geom.Quad{{X: 39, Y: 38}, {X: 77, Y: 38}, {X: 77, Y: 52}, {X: 39, Y: 52}}
	dot := image.Rect(78, 48, 80, 50) // a point on the baseline, just past the box
	for _, tt := range []struct {
		name        string
		rects       []image.Rectangle
		quad        geom.Quad
		left, right bool // widened at that end
	}{
		{"a point cut off", append(slices.Clone(line), dot), box, false, true},
		{"a hyphen half out", append(slices.Clone(line), image.Rect(75, 45, 81, 46)), box, false, true},
		{"a bracket before", append(slices.Clone(line), image.Rect(36, 40, 37, 51)), box, true, false},
		{"nothing past the ends", line, box, false, false},
		{"a mark too far off", append(slices.Clone(line), image.Rect(82, 48, 84, 50)), box, false, false},
		{"the next word set close", append(slices.Clone(line), print(79, 40, 10, 3)...), box, false, false},
		{"a mark with a word right after it", append(slices.Clone(line), dot, image.Rect(81, 40, 82, 50)), box, false, false},
		{"a letter the box cuts through", append(slices.Clone(line), image.Rect(33, 40, 43, 50)), box, false, false},
		{"a rule beside the line", append(slices.Clone(line), image.Rect(78, 20, 79, 70)), box, false, false},
		{"a frame's corner below", append(slices.Clone(line), image.Rect(78, 44, 79, 70)), box, false, false},
		{"a tilted box is left alone", append(slices.Clone(line), dot),
			geom.Quad{{X: 39, Y: 38}, {X: 77, Y: 34}, {X: 77, Y: 48}, {X: 39, Y: 52}}, false, false},
		{"a box of one mark is left alone", []image.Rectangle{image.Rect(40, 40, 46, 50), image.Rect(48, 48, 50, 50)},
			geom.Quad{{X: 39, Y: 38}, {X: 47, Y: 38}, {X: 47, Y: 52}, {X: 39, Y: 52}}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			px, ok := newPixels(scene(120, 90, tt.rects...))
			if !ok {
				t.Fatal("scene not read")
			}
			in := []geom.Quad{tt.quad}
			got := reachMarks(px, px.inkThreshold(), in)[0]
			if in[0] != tt.quad {
				t.Fatal("the quads given were changed")
			}
			x0, _, x1, _ := got.Bounds()
			q0, _, q1, _ := tt.quad.Bounds()
			if left := x0 < q0; left != tt.left {
				t.Errorf("left side %.1f → %.1f, want widened %v", q0, x0, tt.left)
			}
			if right := x1 > q1; right != tt.right {
				t.Errorf("right side %.1f → %.1f, want widened %v", q1, x1, tt.right)
			}
			if tt.right && math.Ceil(x1) < 80 {
				t.Errorf("right side %.1f does not hold the mark (to x 80)", x1)
			}
			if got[0].Y != tt.quad[0].Y || got[2].Y != tt.quad[2].Y {
				t.Errorf("box %v moved up or down from %v", got, tt.quad)
			}
		})
	}
}
