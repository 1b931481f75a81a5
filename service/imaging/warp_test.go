package imaging

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

func rect(x0, y0, x1, y1 float64) geom.Quad {
	return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// rgbAt returns a pixel of any image as straight 8-bit RGB over white, the way Warp sees it.
func rgbAt(img image.Image, x, y int) [3]float64 {
	c := compositeWhite(img.At(x, y))
	return [3]float64{float64(c[0]), float64(c[1]), float64(c[2])}
}

func checkPixel(t *testing.T, out *image.RGBA, x, y int, want [3]float64, tol float64) {
	t.Helper()
	c := out.RGBAAt(x, y)
	got := [3]float64{float64(c.R), float64(c.G), float64(c.B)}
	for i := range 3 {
		if math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, c, want)
		}
	}
	if c.A != 255 {
		t.Fatalf("pixel (%d,%d) has alpha %d, want opaque", x, y, c.A)
	}
}

func TestWarpAxisAlignedIsCrop(t *testing.T) {
	for name, img := range fastPathImages() {
		t.Run(name, func(t *testing.T) {
			b := img.Bounds()
			x0, y0 := float64(b.Min.X+10), float64(b.Min.Y+5)
			out := Warp(img, rect(x0, y0, x0+30, y0+20), 30, 20)
			if out.Bounds() != image.Rect(0, 0, 30, 20) {
				t.Fatalf("bounds %v", out.Bounds())
			}
			for y := range 20 {
				for x := range 30 {
					// Within rounding: YCbCr converts with JFIF, At() with Go's 16-bit constants.
					checkPixel(t, out, x, y, rgbAt(img, b.Min.X+10+x, b.Min.Y+5+y), 1.5)
				}
			}
		})
	}
}

func TestWarpRotatedQuad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	img := randomNRGBA(rng, 40, 30)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	// The text runs upwards along the rectangle's left edge: q = [BL, TL, TR, BR].
	const x0, y0, x1, y1 = 5, 4, 25, 16 // 20 wide, 12 high
	q := geom.Quad{{X: x0, Y: y1}, {X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}}
	out := Warp(img, q, y1-y0, x1-x0)
	if out.Bounds() != image.Rect(0, 0, 12, 20) {
		t.Fatalf("bounds %v, want 12×20", out.Bounds())
	}
	// The crop turned 90° clockwise: output (u, v) is crop pixel (v, h-1-u).
	for v := range 20 {
		for u := range 12 {
			checkPixel(t, out, u, v, rgbAt(img, x0+v, y1-1-u), 0)
		}
	}
}

func TestWarpSupersamplingKeepsThinLines(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 90, 30))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for y := range 30 {
		img.Pix[y*img.Stride+45] = 0 // a 1-px vertical stroke
	}
	for x := range 90 {
		img.Pix[13*img.Stride+x] = 0 // and a 1-px horizontal one
	}
	out := Warp(img, rect(0, 0, 90, 30), 30, 10) // 3× smaller
	for y := range 10 {
		if y == 4 {
			continue // the horizontal stroke's row
		}
		if c := out.RGBAAt(15, y); c.R > 200 {
			t.Errorf("vertical stroke lost at (15,%d): %v", y, c)
		}
	}
	for x := range 30 {
		if x == 15 {
			continue
		}
		if c := out.RGBAAt(x, 4); c.R > 200 {
			t.Errorf("horizontal stroke lost at (%d,4): %v", x, c)
		}
	}
	if c := out.RGBAAt(3, 1); c.R != 255 {
		t.Errorf("paper away from the strokes is %v, want white", c)
	}
}

func TestWarpBorderReplicates(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for y := range 4 {
		for x := range 4 {
			img.SetRGBA(x, y, color.RGBA{uint8(60 * x), uint8(60 * y), 0, 255})
		}
	}
	// A quad reaching 4 px beyond every side, sampled 1:1.
	out := Warp(img, rect(-4, -4, 8, 8), 12, 12)
	for y := range 12 {
		for x := range 12 {
			sx, sy := min(max(x-4, 0), 3), min(max(y-4, 0), 3)
			checkPixel(t, out, x, y, rgbAt(img, sx, sy), 0)
		}
	}
}

func TestWarpTransparentIsWhite(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 10, 10)) // all transparent black
	out := Warp(img, rect(1, 1, 9, 9), 4, 4)
	for y := range 4 {
		for x := range 4 {
			checkPixel(t, out, x, y, [3]float64{255, 255, 255}, 0)
		}
	}
}

func TestWarpFastPathsMatchGeneric(t *testing.T) {
	quads := map[string]struct {
		q    geom.Quad
		w, h int
	}{
		"tilted":      {geom.Quad{{X: 10.3, Y: 12.7}, {X: 80.2, Y: 20.1}, {X: 78.9, Y: 35.5}, {X: 9.1, Y: 28.4}}, 90, 20},
		"shrunk":      {geom.Quad{{X: 0, Y: 0}, {X: 96, Y: 2}, {X: 95, Y: 60}, {X: 1, Y: 58}}, 20, 12},
		"perspective": {geom.Quad{{X: 20, Y: 10}, {X: 70, Y: 5}, {X: 90, Y: 55}, {X: 5, Y: 50}}, 48, 32},
		"outside":     {geom.Quad{{X: -20, Y: -10}, {X: 120, Y: -5}, {X: 110, Y: 80}, {X: -30, Y: 70}}, 40, 30},
	}
	for name, img := range fastPathImages() {
		for qn, qq := range quads {
			t.Run(name+"/"+qn, func(t *testing.T) {
				q := shifted(qq.q, img.Bounds().Min)
				fast := Warp(img, q, qq.w, qq.h)
				slow := Warp(opaque{img}, q, qq.w, qq.h)
				for i := range fast.Pix {
					if d := int(fast.Pix[i]) - int(slow.Pix[i]); d < -1 || d > 1 {
						t.Fatalf("byte %d: fast %d, generic %d", i, fast.Pix[i], slow.Pix[i])
					}
				}
			})
		}
	}
}

// shifted moves q by o: the test quads are drawn on images whose bounds start at (0,0).
func shifted(q geom.Quad, o image.Point) geom.Quad {
	for i := range q {
		q[i].X += float64(o.X)
		q[i].Y += float64(o.Y)
	}
	return q
}

// placed is q moved onto b (see shifted) and the region of b that sampling it reads.
func placed(t *testing.T, q geom.Quad, b image.Rectangle) (geom.Quad, image.Rectangle) {
	t.Helper()
	q = shifted(q, b.Min)
	r, ok := quadRegion(q, b)
	if !ok {
		t.Fatal("no region")
	}
	return q, r
}

// accumulating hides a bufSource from warpWith's type check, so the warp takes the general path
// (accumulate the samples, then average).
type accumulating struct{ bufSource }

// TestWarpOneMatchesGeneral checks that the one-sample path (warpOne) gives, byte for byte, what
// the general path gives, for axis-aligned quads (its separable case) and others, inside and
// outside the image, large enough to be split over goroutines or not.
func TestWarpOneMatchesGeneral(t *testing.T) {
	quads := []struct {
		name string
		q    geom.Quad
		w, h int
	}{
		{"axis integer", rect(10, 12, 70, 40), 60, 28},
		{"axis fractional, enlarged", rect(10.25, 12.75, 52.875, 28.125), 131, 48},
		{"axis outside", rect(-15.5, -7.25, 130.5, 75.5), 90, 48},
		{"axis sliver", rect(40.2, 30.1, 40.9, 30.6), 7, 48},
		{"axis large", rect(2.5, 3.5, 94.5, 58.5), 1400, 48},
		{"tilted", geom.Quad{{X: 10.3, Y: 12.7}, {X: 80.2, Y: 20.1}, {X: 78.9, Y: 35.5}, {X: 9.1, Y: 28.4}}, 150, 48},
		{"perspective", geom.Quad{{X: 20, Y: 10}, {X: 70, Y: 5}, {X: 90, Y: 55}, {X: 5, Y: 50}}, 96, 48},
		{"perspective large", geom.Quad{{X: 20, Y: 10}, {X: 70, Y: 5}, {X: 90, Y: 55}, {X: 5, Y: 50}}, 1500, 48},
		{"outside", geom.Quad{{X: -20, Y: -10}, {X: 120, Y: -5}, {X: 110, Y: 80}, {X: -30, Y: 70}}, 200, 48},
	}
	for name, img := range fastPathImages() {
		for _, qq := range quads {
			t.Run(name+"/"+qq.name, func(t *testing.T) {
				q, r := placed(t, qq.q, img.Bounds())
				bs, release := convertRegion(img, r)
				defer release()
				one := warpJob{m: squareToQuad(q), dst: image.NewRGBA(image.Rect(0, 0, qq.w, qq.h)), kx: 1, ky: 1}
				general := one
				general.dst = image.NewRGBA(one.dst.Rect)
				warpWith(bs, one)
				warpWith(accumulating{bs}, general)
				for i := range one.dst.Pix {
					if one.dst.Pix[i] != general.dst.Pix[i] {
						t.Fatalf("byte %d: one-sample path %d, general path %d", i, one.dst.Pix[i], general.dst.Pix[i])
					}
				}
			})
		}
	}
}

func TestSquareToQuadCorners(t *testing.T) {
	quads := []geom.Quad{
		rect(3, 4, 50, 20),
		{{X: 20, Y: 10}, {X: 70, Y: 5}, {X: 90, Y: 55}, {X: 5, Y: 50}},
		{{X: 0, Y: 0}, {X: 10, Y: 1}, {X: 9, Y: 11}, {X: -1, Y: 10}}, // parallelogram
		{{X: 100, Y: 30}, {X: 100, Y: 0}, {X: 160, Y: 0}, {X: 160, Y: 30}},
	}
	for i, q := range quads {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			m := squareToQuad(q)
			for k, uv := range [4][2]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}} {
				den := m.g*uv[0] + m.h*uv[1] + 1
				x := (m.a*uv[0] + m.b*uv[1] + m.c) / den
				y := (m.d*uv[0] + m.e*uv[1] + m.f) / den
				if math.Abs(x-q[k].X) > 1e-9 || math.Abs(y-q[k].Y) > 1e-9 {
					t.Errorf("corner %d maps to (%v,%v), want %v", k, x, y, q[k])
				}
			}
		})
	}
}

func TestWarpDegenerate(t *testing.T) {
	img := uniform("rgba", 20, 20, color.NRGBA{10, 20, 30, 255})
	tests := []struct {
		name string
		q    geom.Quad
		w, h int
	}{
		{"point", geom.Quad{{X: 5, Y: 5}, {X: 5, Y: 5}, {X: 5, Y: 5}, {X: 5, Y: 5}}, 8, 4},
		{"line", geom.Quad{{X: 0, Y: 0}, {X: 10, Y: 10}, {X: 20, Y: 20}, {X: 5, Y: 5}}, 8, 4},
		{"bow tie", geom.Quad{{X: 0, Y: 0}, {X: 19, Y: 19}, {X: 19, Y: 0}, {X: 0, Y: 19}}, 8, 4},
		{"NaN", geom.Quad{{X: math.NaN(), Y: 0}, {X: 10, Y: 0}, {X: 10, Y: 10}, {X: 0, Y: 10}}, 8, 4},
		{"huge", geom.Quad{{X: -1e300, Y: 0}, {X: 1e300, Y: 0}, {X: 1e300, Y: 1e300}, {X: 0, Y: 1e300}}, 8, 4},
		{"empty output", rect(0, 0, 10, 10), 0, 5},
		{"negative output", rect(0, 0, 10, 10), -3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Warp(img, tt.q, tt.w, tt.h)
			if out.Bounds() != image.Rect(0, 0, max(tt.w, 0), max(tt.h, 0)) {
				t.Fatalf("bounds %v", out.Bounds())
			}
			for y := range out.Bounds().Dy() {
				for x := range out.Bounds().Dx() {
					checkPixel(t, out, x, y, [3]float64{10, 20, 30}, 0) // uniform source: any sample is right
				}
			}
		})
	}
}

// TestWarpDirectMatchesRegion checks the path for quads too large to convert first (sampling the
// image directly) against the usual one (sampling a converted region).
func TestWarpDirectMatchesRegion(t *testing.T) {
	quads := map[string]geom.Quad{
		"tilted":      {{X: 10.3, Y: 12.7}, {X: 80.2, Y: 20.1}, {X: 78.9, Y: 35.5}, {X: 9.1, Y: 28.4}},
		"perspective": {{X: 20, Y: 10}, {X: 70, Y: 5}, {X: 90, Y: 55}, {X: 5, Y: 50}},
		"outside":     {{X: -20, Y: -10}, {X: 120, Y: -5}, {X: 110, Y: 80}, {X: -30, Y: 70}},
	}
	for name, img := range fastPathImages() {
		for qn, q := range quads {
			t.Run(name+"/"+qn, func(t *testing.T) {
				q, r := placed(t, q, img.Bounds())
				job := func() warpJob {
					return warpJob{m: squareToQuad(q), dst: image.NewRGBA(image.Rect(0, 0, 24, 10)), kx: 2, ky: 3}
				}
				region, direct := job(), job()
				bs, release := convertRegion(img, r)
				warpWith(bs, region)
				release()
				warpWith(directSampler{sourceFor(img), img.Bounds()}, direct)
				for i := range region.dst.Pix {
					if d := int(region.dst.Pix[i]) - int(direct.dst.Pix[i]); d < -1 || d > 1 {
						t.Fatalf("byte %d: region %d, direct %d", i, region.dst.Pix[i], direct.dst.Pix[i])
					}
				}
			})
		}
	}
}

// TestWarpLargeQuadSmallOutput takes the direct path through Warp itself: a whole page to a
// thumbnail, where the page's pixels must still average into the output.
func TestWarpLargeQuadSmallOutput(t *testing.T) {
	page := checkerboard(800, 1)
	out := Warp(page, rect(0, 0, 800, 800), 16, 16)
	for y := range 16 {
		for x := range 16 {
			if c := out.RGBAAt(x, y); c.R < 100 || c.R > 155 {
				t.Fatalf("(%d,%d) = %v, want mid gray from averaging a checkerboard", x, y, c)
			}
		}
	}
}
