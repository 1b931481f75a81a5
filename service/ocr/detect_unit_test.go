package ocr

import (
	"image"
	"math"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestSecondPass checks when detection looks again and at what scale: small print on a large
// scan at up to the image's own size, small print in the image itself (a 100-dpi form) enlarged,
// and print that is large enough in the image never enlarged, whatever the first pass's scale.
func TestSecondPass(t *testing.T) {
	// boxes of height h detector pixels (at scale s) across a page of w×ht image pixels
	boxes := func(h, s float64, n int) []detBox {
		var out []detBox
		for i := range n {
			y := 100 + float64(i)*50
			q := geom.Quad{{X: 50, Y: y}, {X: 500, Y: y}, {X: 500, Y: y + h/s}, {X: 50, Y: y + h/s}}
			out = append(out, detBox{quad: q, detHeight: h})
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		w, h      int
		textH     float64 // median box height in detector pixels at the first pass's scale
		maxUp     float64
		wantPass  bool
		wantScale float64 // 0: any scale of a pass
		n         int     // boxes the first pass found; 0: 9
	}{
		{"a 600-dpi scan's small print: up to full size", 4960, 7016, 8, 2, true, 0, 0},
		{"a receipt photo with print large in the image: no pass", 3000, 4000, 16, 2, false, 0, 0},
		{"a 100-dpi form, labels 15 px: enlarged", 762, 1000, 15, 2, true, 0.96 * 24 / 15, 0},
		{"a 100-dpi form, enlarging off", 762, 1000, 15, 1, false, 0, 0},
		{"a 100-dpi form, tiny print: enlarged at most twice", 762, 1000, 8, 2, true, 2, 0},
		{"a small image with big print: no pass", 600, 400, 30, 2, false, 0, 0},
		{"an image of two lines of small print: left at its scale", 762, 200, 15, 2, false, 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.DetMaxUpscale = tt.maxUp
			p := &Pipeline{opt: opt}
			full := image.Rect(0, 0, tt.w, tt.h)
			scale := math.Min(1, float64(opt.DetLimitSide)/float64(max(tt.w, tt.h)))
			n := tt.n
			if n == 0 {
				n = 9
			}
			region, s2, ok := p.secondPass(full, scale, boxes(tt.textH, scale, n))
			if ok != tt.wantPass {
				t.Fatalf("second pass %v (scale %.3f), want %v", ok, s2, tt.wantPass)
			}
			if !ok {
				return
			}
			if !region.In(full) || region.Empty() {
				t.Fatalf("region %v outside the image %v", region, full)
			}
			if s2 > math.Max(1, tt.maxUp)+1e-9 || s2 <= scale {
				t.Fatalf("scale %.3f, first pass %.3f, at most %.1f", s2, scale, tt.maxUp)
			}
			if px := float64(region.Dx()) * float64(region.Dy()) * s2 * s2; px > float64(opt.DetMaxPixels)*1.0001 {
				t.Fatalf("%.0f detector pixels, cap %d", px, opt.DetMaxPixels)
			}
			if tt.wantScale > 0 && math.Abs(s2-tt.wantScale) > 0.01 && px(region, s2) < float64(opt.DetMaxPixels)*0.999 {
				t.Fatalf("scale %.3f, want %.3f", s2, tt.wantScale)
			}
		})
	}
}

func px(r image.Rectangle, s float64) float64 { return float64(r.Dx()) * float64(r.Dy()) * s * s }
