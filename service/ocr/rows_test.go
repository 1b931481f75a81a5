package ocr

import (
	"testing"

	"github.com/ocrgate/ocrgate/service/dbnet"
)

// TestSplitRows checks that a DB region joining two rows of print by a bridge is split into one
// box a row, and that a tall single line and a page's ordinary lines are left whole.
func TestSplitRows(t *testing.T) {
	const w, h = 400, 300
	band := func(prob []float32, x0, y0, x1, y1 int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				prob[y*w+x] = 0.9
			}
		}
	}
	for _, tt := range []struct {
		name   string
		bridge bool // two rows joined by a bridge; else one tall line
		want   int  // boxes found
	}{
		{"two rows joined", true, 8},
		{"one tall line", false, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prob := make([]float32, w*h)
			for i := range 6 { // ordinary lines: 8 px kernels
				band(prob, 20, 10+i*20, 380, 18+i*20)
			}
			if tt.bridge {
				band(prob, 20, 150, 380, 158)
				band(prob, 20, 162, 380, 170)
				band(prob, 200, 158, 202, 162) // a descender touching the next row
			} else {
				band(prob, 20, 150, 380, 170)
			}
			boxes := splitRows(dbnet.Boxes(prob, w, h, dbnet.DefaultOptions()), prob, w, h, 0.3)
			if len(boxes) != tt.want {
				for _, b := range boxes {
					t.Log(b.Quad)
				}
				t.Fatalf("%d boxes, want %d", len(boxes), tt.want)
			}
			for _, b := range boxes {
				if b.Quad.Height() > 25 {
					if tt.bridge {
						t.Errorf("a box %v spans rows", b.Quad)
					}
				}
			}
		})
	}
}
