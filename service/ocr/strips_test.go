package ocr

import (
	"image"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestStripPlan checks that an enlarged second pass never reads more detector pixels at once
// than the request was charged for, that its strips' cores cover the region once, and that each
// strip reads its overlap past its core where it has a neighbour.
func TestStripPlan(t *testing.T) {
	opt := DefaultOptions()
	for _, tt := range []struct {
		name       string
		w, h       int // the image
		region     image.Rectangle
		scale      float64
		wantStrips int // 0: more than one
		wantScale  float64
	}{
		{"a 100-dpi form enlarged twice", 754, 1000, image.Rect(20, 30, 740, 980), 2, 0, 2},
		{"a small image enlarged, within its first pass", 754, 900, image.Rect(0, 0, 754, 900), 1.3, 0, 1.3},
		{"a short region: one strip", 754, 1000, image.Rect(0, 0, 754, 200), 2, 1, 2},
		{"a wide strip of small print: read narrower", 3000, 240, image.Rect(0, 0, 3000, 240), 2, 1, 0},
		{"an A4 page at 150 dpi, small print", 1240, 1754, image.Rect(0, 0, 1240, 1754), 1.6, 0, 1.6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first, second := opt.DetectionPixels(tt.w, tt.h)
			budget := max(first, second)
			strips, s, ok := stripPlan(tt.region, tt.scale, budget, opt.DetTileOverlap)
			if !ok {
				t.Fatal("no plan")
			}
			if tt.wantScale > 0 && s != tt.wantScale {
				t.Errorf("scale %.3f, want %.3f", s, tt.wantScale)
			}
			if s > tt.scale || tt.wantScale == 0 && s >= tt.scale {
				t.Errorf("scale %.3f above the asked %.3f", s, tt.scale)
			}
			if tt.wantStrips > 0 && len(strips) != tt.wantStrips || tt.wantStrips == 0 && len(strips) < 2 {
				t.Fatalf("%d strips, want %d (0: several)", len(strips), tt.wantStrips)
			}
			y := tt.region.Min.Y
			for i, st := range strips {
				if px := int64(detSize(st.in.Dx(), s)) * int64(detSize(st.in.Dy(), s)); px > budget {
					t.Errorf("strip %d reads %d detector pixels, charged %d", i, px, budget)
				}
				if st.core.Min.Y != y || !st.core.In(st.in) || !st.in.In(tt.region) || st.core.Dx() != tt.region.Dx() {
					t.Errorf("strip %d: core %v in %v, region %v, next row %d", i, st.core, st.in, tt.region, y)
				}
				ov := float64(opt.DetTileOverlap) / s
				if i > 0 && float64(st.core.Min.Y-st.in.Min.Y) < ov-1 || i < len(strips)-1 && float64(st.in.Max.Y-st.core.Max.Y) < ov-1 {
					t.Errorf("strip %d: core %v reads %v, overlap %.1f px", i, st.core, st.in, ov)
				}
				y = st.core.Max.Y
			}
			if y != tt.region.Max.Y {
				t.Errorf("cores end at %d, region at %d", y, tt.region.Max.Y)
			}
		})
	}
}

// TestEnlargedPassCostsNothing checks that allowing the enlarged pass leaves every image's
// memory cost as it was: the pass is read in strips of what is charged anyway.
func TestEnlargedPassCostsNothing(t *testing.T) {
	off := DefaultOptions()
	off.DetMaxUpscale = 1
	on := off
	on.DetMaxUpscale = 2
	for _, rt := range []RuntimeMemory{{}, {DetBase: 30 << 20, DetPerPixel: 161, RecPerPixel: 391, RecOutPerPixel: 1}} {
		off.RuntimeMemory, on.RuntimeMemory = rt, rt
		for _, s := range [][2]int{{100, 100}, {754, 1000}, {754, 900}, {828, 1200}, {1240, 1754}, {1654, 2339}, {4960, 7016}, {4000, 500}} {
			if a, b := off.ModelBytes(s[0], s[1]), on.ModelBytes(s[0], s[1]); a != b {
				t.Errorf("%d×%d: %d bytes enlarging, %d not", s[0], s[1], b, a)
			}
		}
	}
}

// TestMendCuts checks that the first pass's box stands where a strip cut one and nothing of the
// strips covers it, and not where the strips found the line.
func TestMendCuts(t *testing.T) {
	box := func(x0, y0, x1, y1 float64) geom.Quad {
		return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
	}
	first := []detBox{{quad: box(10, 10, 30, 400)}, {quad: box(100, 50, 500, 70)}, {quad: box(100, 500, 500, 520)}}
	kept := []geom.Quad{box(100, 50, 500, 70)}
	cut := []image.Rectangle{image.Rect(10, 150, 30, 300), image.Rect(100, 55, 300, 65)}
	got := mendCuts(kept, cut, first)
	if len(got) != 2 || got[1] != first[0].quad {
		t.Fatalf("got %v, want the strips' line and the first pass's vertical box", got)
	}
}
