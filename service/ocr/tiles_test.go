package ocr

import (
	"image"
	"testing"
)

func TestTilePlan(t *testing.T) {
	for _, tt := range []struct {
		name              string
		dw, dh, max, over int
		wantTiles         int // 0: more than one, any count
	}{
		{"within the limit", 960, 960, 960 * 960, 64, 1},
		{"no tiling", 3200, 3200, 0, 64, 1},
		{"a tall second pass: strips", 1472, 2048, 960 * 960, 64, 0},
		{"a wide panorama: columns too", 6400, 480, 960 * 960, 64, 0},
		{"a square 3 MP pass", 1728, 1728, 960 * 960, 64, 0},
		{"no overlap", 1728, 1728, 960 * 960, 0, 0},
		{"a narrow column", 32, 32 * 1000, 960 * 960, 64, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tiles := tilePlan(tt.dw, tt.dh, tt.max, tt.over)
			if tt.wantTiles == 1 && len(tiles) != 1 || tt.wantTiles == 0 && len(tiles) < 2 {
				t.Fatalf("%d tiles", len(tiles))
			}
			full := image.Rect(0, 0, tt.dw, tt.dh)
			covered := make([]int, tt.dw/32*(tt.dh/32))
			for _, tl := range tiles {
				if !tl.core.In(tl.in) || !tl.in.In(full) {
					t.Fatalf("tile %v core %v outside its input or the page", tl.in, tl.core)
				}
				for _, v := range []int{tl.in.Min.X, tl.in.Min.Y, tl.in.Max.X, tl.in.Max.Y, tl.core.Min.X, tl.core.Min.Y, tl.core.Max.X, tl.core.Max.Y} {
					if v%32 != 0 {
						t.Fatalf("tile %v core %v off the 32-pixel grid", tl.in, tl.core)
					}
				}
				if len(tiles) > 1 && tl.in.Dx()*tl.in.Dy() > tt.max {
					t.Errorf("tile %v has %d pixels, more than %d", tl.in, tl.in.Dx()*tl.in.Dy(), tt.max)
				}
				// Overlap toward every neighbour: wherever the core stops short of the page.
				want := image.Rect(tl.core.Min.X-tt.over, tl.core.Min.Y-tt.over, tl.core.Max.X+tt.over, tl.core.Max.Y+tt.over).Intersect(full)
				if tl.in != want {
					t.Errorf("tile input %v, want core %v with %d px of overlap: %v", tl.in, tl.core, tt.over, want)
				}
				for y := tl.core.Min.Y / 32; y < tl.core.Max.Y/32; y++ {
					for x := tl.core.Min.X / 32; x < tl.core.Max.X/32; x++ {
						covered[y*(tt.dw/32)+x]++
					}
				}
			}
			for i, n := range covered {
				if n != 1 {
					t.Fatalf("cell %d covered by %d cores, want exactly one", i, n)
				}
			}
		})
	}
}

// TestDetSize: a detector input side is a multiple of 32; rounding stretches a side only by a
// few percent, and a short side that rounding would squash (the 50 px height of a 1 017 px
// receipt line: 47 px at the first pass's scale, rounded to 32) keeps its scale and is padded.
func TestDetSize(t *testing.T) {
	tests := []struct {
		side        int
		scale       float64
		size, inked int
	}{
		{960, 1, 960, 960},
		{1280, 0.75, 960, 960},
		{700, 1, 704, 704},         // stretched by 0.6 %
		{50, 960.0 / 1017, 64, 47}, // squashed by a third if rounded: padded
		{20, 1, 32, 20},
		{150, 1, 160, 150}, // 6.7 % stretch: padded
	}
	for _, tt := range tests {
		size, inked := detSize(tt.side, tt.scale), scaledSide(tt.side, tt.scale)
		if size != tt.size || inked != tt.inked {
			t.Errorf("side %d at %.3f: input %d holding %d, want %d holding %d", tt.side, tt.scale, size, inked, tt.size, tt.inked)
		}
	}
}

// TestPad: a packed tensor spread out in place to a larger one, its last column and row
// repeated.
func TestPad(t *testing.T) {
	const sw, sh, dw, dh = 3, 2, 5, 4
	t3 := make([]float32, 3*dw*dh)
	for i := range 3 * sw * sh {
		t3[i] = float32(i + 1)
	}
	pad(t3, sw, sh, dw, dh)
	for c := range 3 {
		for y := range dh {
			for x := range dw {
				want := float32(c*sw*sh + min(y, sh-1)*sw + min(x, sw-1) + 1)
				if got := t3[c*dw*dh+y*dw+x]; got != want {
					t.Fatalf("channel %d (%d,%d) = %v, want %v", c, x, y, got, want)
				}
			}
		}
	}
}
