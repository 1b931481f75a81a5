package dbnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// fillRect sets the pixels x0..x1, y0..y1 (inclusive, clipped to the map) to v.
func fillRect(m []float32, w, h, x0, y0, x1, y1 int, v float32) {
	for y := max(y0, 0); y <= min(y1, h-1); y++ {
		for x := max(x0, 0); x <= min(x1, w-1); x++ {
			m[y*w+x] = v
		}
	}
}

// fillRotated sets to v the pixels whose centres lie in a length×height rectangle centred at (cx, cy)
// whose long side points deg degrees clockwise from the x axis (y down).
func fillRotated(m []float32, w, h int, cx, cy, length, height, deg float64, v float32) {
	ux, uy := math.Cos(deg*math.Pi/180), math.Sin(deg*math.Pi/180)
	for y := range h {
		for x := range w {
			dx, dy := float64(x)-cx, float64(y)-cy
			if math.Abs(dx*ux+dy*uy) <= length/2 && math.Abs(-dx*uy+dy*ux) <= height/2 {
				m[y*w+x] = v
			}
		}
	}
}

// checkQuad asserts what every caller relies on: finite corners, a clockwise convex quad (every
// turn the same way, so no crossed edges).
func checkQuad(t testing.TB, q geom.Quad) {
	t.Helper()
	for _, p := range q {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			t.Fatalf("non-finite corner in %v", q)
		}
	}
	for i := range 4 {
		a, b, c := q[i], q[(i+1)%4], q[(i+2)%4]
		if (b.X-a.X)*(c.Y-b.Y)-(b.Y-a.Y)*(c.X-b.X) <= 0 {
			t.Fatalf("quad %v is not clockwise and convex at corner %d", q, (i+1)%4)
		}
	}
}

func near(a, b geom.Point, tol float64) bool {
	return math.Abs(a.X-b.X) <= tol && math.Abs(a.Y-b.Y) <= tol
}

func TestAxisAligned(t *testing.T) {
	opt := DefaultOptions()
	tests := []struct {
		name           string
		x0, y0, x1, y1 int
	}{
		{"wide line", 20, 30, 180, 50},
		{"short word", 100, 100, 130, 110},
		{"tall column", 60, 20, 70, 150},
		{"square", 40, 120, 80, 160},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const w, h = 200, 180
			m := make([]float32, w*h)
			fillRect(m, w, h, tc.x0, tc.y0, tc.x1, tc.y1, 0.9)
			got := Boxes(m, w, h, opt)
			if len(got) != 1 {
				t.Fatalf("got %d boxes, want 1", len(got))
			}
			// The rectangle through the outer pixel centres, grown by area*ratio/perimeter.
			bw, bh := float64(tc.x1-tc.x0), float64(tc.y1-tc.y0)
			d := bw * bh * opt.UnclipRatio / (2 * (bw + bh))
			x0, y0 := float64(tc.x0)-d, float64(tc.y0)-d
			x1, y1 := float64(tc.x1)+d, float64(tc.y1)+d
			want := geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			for i := range want {
				if !near(got[0].Quad[i], want[i], 1e-6) {
					t.Fatalf("quad %v, want %v", got[0].Quad, want)
				}
			}
			if math.Abs(float64(got[0].Score)-0.9) > 1e-6 {
				t.Errorf("score %v, want 0.9", got[0].Score)
			}
			checkQuad(t, got[0].Quad)
		})
	}
}

func TestRotated(t *testing.T) {
	opt := DefaultOptions()
	const length, height = 200.0, 40.0
	for _, deg := range []float64{10, 30, -10, -30, 3} {
		t.Run(fmt.Sprintf("%v°", deg), func(t *testing.T) {
			const w, h = 320, 240
			const cx, cy = 160.3, 120.6
			m := make([]float32, w*h)
			fillRotated(m, w, h, cx, cy, length, height, deg, 1)
			got := Boxes(m, w, h, opt)
			if len(got) != 1 {
				t.Fatalf("got %d boxes, want 1", len(got))
			}
			q := got[0].Quad
			checkQuad(t, q)
			if a := q.Angle(); math.Abs(a-deg) > 1 {
				t.Errorf("angle %.2f°, want %v° (quad %v)", a, deg, q)
			}
			// Pixel centres sit up to ~1 px inside the drawn rectangle, so allow a few pixels on the
			// expanded size.
			d := length * height * opt.UnclipRatio / (2 * (length + height))
			if gw := q.Width(); math.Abs(gw-(length+2*d)) > 3 {
				t.Errorf("width %.1f, want about %.1f", gw, length+2*d)
			}
			if gh := q.Height(); math.Abs(gh-(height+2*d)) > 3 {
				t.Errorf("height %.1f, want about %.1f", gh, height+2*d)
			}
			mx, my := (q[0].X+q[2].X)/2, (q[0].Y+q[2].Y)/2
			if math.Hypot(mx-cx, my-cy) > 1 {
				t.Errorf("centre (%.1f, %.1f), want (%v, %v)", mx, my, cx, cy)
			}
			// Top-left really is at the upper left of the text.
			if q[0].X > mx || q[0].X > q[1].X || q[0].Y > q[3].Y {
				t.Errorf("corners not ordered TL,TR,BR,BL: %v", q)
			}
		})
	}
}

func TestConnectivity(t *testing.T) {
	const w, h = 120, 80
	tests := []struct {
		name  string
		draw  func(m []float32)
		boxes int
	}{
		{"diagonal touch joins", func(m []float32) {
			fillRect(m, w, h, 10, 10, 40, 20, 1)
			fillRect(m, w, h, 41, 21, 80, 35, 1)
		}, 1},
		{"side touch joins", func(m []float32) {
			fillRect(m, w, h, 10, 10, 40, 20, 1)
			fillRect(m, w, h, 41, 15, 80, 30, 1)
		}, 1},
		{"one-pixel column gap splits", func(m []float32) {
			fillRect(m, w, h, 10, 10, 40, 20, 1)
			fillRect(m, w, h, 42, 10, 80, 20, 1)
		}, 2},
		{"one-pixel row gap splits", func(m []float32) {
			fillRect(m, w, h, 10, 10, 80, 20, 1)
			fillRect(m, w, h, 10, 22, 80, 32, 1)
		}, 2},
		{"diagonal gap splits", func(m []float32) {
			fillRect(m, w, h, 10, 10, 40, 20, 1)
			fillRect(m, w, h, 42, 22, 80, 35, 1)
		}, 2},
		{"U shape is one region", func(m []float32) {
			fillRect(m, w, h, 10, 10, 20, 60, 1)
			fillRect(m, w, h, 60, 10, 70, 60, 1)
			fillRect(m, w, h, 10, 55, 70, 60, 1)
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := make([]float32, w*h)
			tc.draw(m)
			// A low box threshold: the U's hull rectangle is mostly background.
			opt := DefaultOptions()
			opt.BoxThreshold = 0.1
			got := Boxes(m, w, h, opt)
			if len(got) != tc.boxes {
				t.Fatalf("got %d boxes, want %d", len(got), tc.boxes)
			}
			for _, b := range got {
				checkQuad(t, b.Quad)
			}
		})
	}
}

func TestSizeFilter(t *testing.T) {
	const w, h = 100, 100
	tests := []struct {
		name    string
		x0, y0  int
		x1, y1  int
		keep    bool
		options func(*Options)
	}{
		{"single pixel", 10, 10, 10, 10, false, nil},
		{"2x2 speck", 10, 10, 11, 11, false, nil},
		{"3x3 speck", 10, 10, 12, 12, false, nil},
		{"one row line", 10, 10, 80, 10, false, nil},
		{"two row line", 10, 10, 80, 11, false, nil},
		{"4x4 block", 10, 10, 13, 13, true, nil},
		{"line 30x8", 10, 10, 40, 18, true, nil},
		{"one row line without size limit", 10, 10, 80, 10, false, func(o *Options) { o.MinSize = 0 }},
		{"3x3 with larger limit after unclip", 10, 10, 13, 13, false, func(o *Options) { o.MinSize = 3.5 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := make([]float32, w*h)
			fillRect(m, w, h, tc.x0, tc.y0, tc.x1, tc.y1, 1)
			opt := DefaultOptions()
			if tc.options != nil {
				tc.options(&opt)
			}
			got := Boxes(m, w, h, opt)
			if want := map[bool]int{true: 1, false: 0}[tc.keep]; len(got) != want {
				t.Fatalf("got %d boxes, want %d: %v", len(got), want, got)
			}
		})
	}
}

func TestBorder(t *testing.T) {
	const w, h = 100, 60
	tests := []struct {
		name           string
		x0, y0, x1, y1 int
	}{
		{"left", -20, 20, 30, 35},
		{"top", 30, -5, 80, 10},
		{"right", 70, 20, 140, 35},
		{"bottom", 20, 50, 70, 90},
		{"corner", -10, -10, 30, 12},
		{"whole width", -10, 20, 200, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := make([]float32, w*h)
			fillRect(m, w, h, tc.x0, tc.y0, tc.x1, tc.y1, 0.95)
			got := Boxes(m, w, h, DefaultOptions())
			if len(got) != 1 {
				t.Fatalf("got %d boxes, want 1", len(got))
			}
			q := got[0].Quad
			checkQuad(t, q)
			minX, minY, maxX, maxY := q.Bounds()
			// The visible part is max(x0,0)..min(x1,w-1); unclip grows it a few pixels, which may
			// leave the map.
			if minX > float64(max(tc.x0, 0)) || maxX < float64(min(tc.x1, w-1)) ||
				minY > float64(max(tc.y0, 0)) || maxY < float64(min(tc.y1, h-1)) {
				t.Errorf("box %v does not cover the visible region", q)
			}
			if minX < -20 || minY < -20 || maxX > w+20 || maxY > h+20 {
				t.Errorf("box %v grew far beyond the map", q)
			}
		})
	}
}

func TestScore(t *testing.T) {
	const w, h = 100, 60
	tests := []struct {
		name  string
		draw  func(m []float32)
		boxes int
		score float64
	}{
		{"faint region dropped", func(m []float32) { fillRect(m, w, h, 10, 10, 80, 30, 0.4) }, 0, 0},
		{"just above threshold everywhere", func(m []float32) { fillRect(m, w, h, 10, 10, 80, 30, 0.31) }, 0, 0},
		{"mean of two halves", func(m []float32) {
			fillRect(m, w, h, 10, 10, 44, 30, 0.7)
			fillRect(m, w, h, 45, 10, 79, 30, 0.9)
		}, 1, 0.8},
		{"faint fringe strong core", func(m []float32) {
			fillRect(m, w, h, 10, 10, 80, 30, 0.4)
			fillRect(m, w, h, 12, 12, 78, 28, 0.95)
		}, 1, (0.4*(71*21-67*17) + 0.95*67*17) / (71 * 21)},
		{"below binarization threshold ignored", func(m []float32) { fillRect(m, w, h, 10, 10, 80, 30, 0.3) }, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := make([]float32, w*h)
			tc.draw(m)
			got := Boxes(m, w, h, DefaultOptions())
			if len(got) != tc.boxes {
				t.Fatalf("got %d boxes, want %d", len(got), tc.boxes)
			}
			if tc.boxes == 1 && math.Abs(float64(got[0].Score)-tc.score) > 1e-4 {
				t.Errorf("score %v, want %v", got[0].Score, tc.score)
			}
		})
	}
}

func TestDegenerateInput(t *testing.T) {
	ones := func(n int) []float32 {
		m := make([]float32, n)
		for i := range m {
			m[i] = 1
		}
		return m
	}
	tests := []struct {
		name  string
		prob  []float32
		w, h  int
		boxes int
	}{
		{"nil map", nil, 0, 0, 0},
		{"empty map", make([]float32, 64*48), 64, 48, 0},
		{"all ones", ones(64 * 48), 64, 48, 1},
		{"w zero", ones(10), 0, 10, 0},
		{"h zero", ones(10), 10, 0, 0},
		{"negative size", ones(10), -2, -5, 0},
		{"w one", ones(50), 1, 50, 0},
		{"h one", ones(50), 50, 1, 0},
		{"one by one", ones(1), 1, 1, 0},
		{"short buffer", ones(99), 10, 10, 0},
		{"long buffer", ones(101), 10, 10, 0},
		{"size overflow", ones(16), 1 << 62, 4, 0},
		{"NaN map", func() []float32 {
			m := ones(40 * 30)
			for i := range m {
				if i%7 == 0 {
					m[i] = float32(math.NaN())
				}
			}
			return m
		}(), 40, 30, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Boxes(tc.prob, tc.w, tc.h, DefaultOptions())
			if len(got) != tc.boxes {
				t.Fatalf("got %d boxes, want %d: %v", len(got), tc.boxes, got)
			}
			for _, b := range got {
				checkQuad(t, b.Quad)
			}
		})
	}
	t.Run("all ones covers the map", func(t *testing.T) {
		got := Boxes(ones(64*48), 64, 48, DefaultOptions())
		minX, minY, maxX, maxY := got[0].Quad.Bounds()
		if minX > 0 || minY > 0 || maxX < 63 || maxY < 47 || got[0].Score != 1 {
			t.Errorf("box %v", got[0])
		}
	})
}

func TestMaxCandidates(t *testing.T) {
	const w, h = 100, 120
	m := make([]float32, w*h)
	fillRect(m, w, h, 5, 2, 6, 3, 1) // a speck: first region in raster order, dropped by size
	for i := range 5 {
		fillRect(m, w, h, 10, 10+20*i, 90, 20+20*i, 1)
	}
	tests := []struct {
		limit, boxes int
	}{{0, 5}, {-1, 5}, {1, 0}, {2, 1}, {4, 3}, {6, 5}, {1000, 5}}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			opt := DefaultOptions()
			opt.MaxCandidates = tc.limit
			got := Boxes(m, w, h, opt)
			if len(got) != tc.boxes {
				t.Fatalf("got %d boxes, want %d", len(got), tc.boxes)
			}
			// Raster order of first pixels: top to bottom here.
			for i := 1; i < len(got); i++ {
				if got[i].Quad[0].Y <= got[i-1].Quad[0].Y {
					t.Errorf("boxes out of raster order: %v", got)
				}
			}
		})
	}
}

func TestRasterOrder(t *testing.T) {
	const w, h = 200, 100
	m := make([]float32, w*h)
	// First pixels in raster order: C (row 5), A (row 10, x 120), B (row 10, x 150), D (row 60),
	// although D lies left of all of them and A reaches further down than B.
	fillRect(m, w, h, 20, 5, 60, 15, 1)    // C
	fillRect(m, w, h, 120, 10, 140, 40, 1) // A
	fillRect(m, w, h, 150, 10, 190, 20, 1) // B
	fillRect(m, w, h, 10, 60, 50, 70, 1)   // D
	got := Boxes(m, w, h, DefaultOptions())
	wantX := []float64{20, 120, 150, 10}
	if len(got) != len(wantX) {
		t.Fatalf("got %d boxes, want %d", len(got), len(wantX))
	}
	for i, b := range got {
		if minX, _, _, _ := b.Quad.Bounds(); math.Abs(minX-wantX[i]) > 10 { // unclip grows boxes by a few pixels
			t.Errorf("box %d starts at x=%.1f, want about %v", i, minX, wantX[i])
		}
	}
}

func TestOrderCorners(t *testing.T) {
	tests := []struct {
		name string
		r    rect
		tl   geom.Point
	}{
		{"axis aligned", rect{cx: 10, cy: 5, ux: 1, a: 4, b: 2}, geom.Point{X: 6, Y: 3}},
		{"axis aligned, axis vertical", rect{cx: 10, cy: 5, uy: 1, a: 2, b: 4}, geom.Point{X: 6, Y: 3}},
		{"axis aligned, axis reversed", rect{cx: 10, cy: 5, ux: -1, a: 4, b: 2}, geom.Point{X: 6, Y: 3}},
		{"45° square", rect{cx: 0, cy: 0, ux: math.Sqrt2 / 2, uy: math.Sqrt2 / 2, a: 1, b: 1}, geom.Point{}},
		{"45° long", rect{cx: 0, cy: 0, ux: math.Sqrt2 / 2, uy: math.Sqrt2 / 2, a: 3, b: 1}, geom.Point{}},
		{"-45° long", rect{cx: 0, cy: 0, ux: math.Sqrt2 / 2, uy: -math.Sqrt2 / 2, a: 3, b: 1}, geom.Point{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.r.corners()
			// Every input rotation and direction must give the same quad.
			var first geom.Quad
			for s := range 8 {
				var in [4]geom.Point
				for i := range 4 {
					if s < 4 {
						in[i] = c[(i+s)%4]
					} else {
						in[i] = c[(s-i)%4]
					}
				}
				q := orderCorners(in)
				checkQuad(t, q)
				if s == 0 {
					first = q
				} else if q != first {
					t.Errorf("input order %d gives %v, want %v", s, q, first)
				}
			}
			if tc.tl != (geom.Point{}) && !near(first[0], tc.tl, 1e-9) {
				t.Errorf("top-left %v, want %v", first[0], tc.tl)
			}
		})
	}
}

// TestMinAreaRect checks the rotating calipers against trying every hull edge with every point.
func TestMinAreaRect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 1 + rng.IntN(40)
		span := 2 + rng.IntN(60)
		pts := make([]ipt, n)
		for i := range pts {
			pts[i] = ipt{int64(rng.IntN(span)), int64(rng.IntN(span / 2 * (1 + trial%3)))}
		}
		// The hull wants lexicographic order and distinct points.
		for i := 1; i < len(pts); i++ {
			for j := i; j > 0 && (pts[j].y < pts[j-1].y || pts[j].y == pts[j-1].y && pts[j].x < pts[j-1].x); j-- {
				pts[j], pts[j-1] = pts[j-1], pts[j]
			}
		}
		uniq := pts[:1]
		for _, p := range pts[1:] {
			if p != uniq[len(uniq)-1] {
				uniq = append(uniq, p)
			}
		}
		hull := convexHull(uniq, nil)
		r := minAreaRect(hull)
		for _, p := range uniq {
			dx, dy := float64(p.x)-r.cx, float64(p.y)-r.cy
			if math.Abs(dx*r.ux+dy*r.uy) > r.a+1e-6 || math.Abs(-dx*r.uy+dy*r.ux) > r.b+1e-6 {
				t.Fatalf("trial %d: point %v outside %+v", trial, p, r)
			}
		}
		if len(hull) < 3 {
			continue
		}
		brute := math.Inf(1)
		for i := range hull {
			p, q := hull[i], hull[(i+1)%len(hull)]
			ex, ey := float64(q.x-p.x), float64(q.y-p.y)
			l := math.Hypot(ex, ey)
			s0, s1, t1 := math.Inf(1), math.Inf(-1), 0.0
			for _, v := range hull {
				s := (ex*float64(v.x) + ey*float64(v.y)) / l
				s0, s1 = math.Min(s0, s), math.Max(s1, s)
				t1 = math.Max(t1, math.Abs(ex*float64(v.y-p.y)-ey*float64(v.x-p.x))/l)
			}
			brute = math.Min(brute, (s1-s0)*t1)
		}
		if got := 4 * r.a * r.b; math.Abs(got-brute) > 1e-6*math.Max(1, brute) {
			t.Fatalf("trial %d: area %v, brute force %v (hull %v)", trial, got, brute, hull)
		}
	}
}

// TestConcurrent shares the buffer pool between goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	m, w, h := synthetic(480, 360, 30, 7)
	want := Boxes(m, w, h, DefaultOptions())
	if len(want) < 20 {
		t.Fatalf("synthetic map gave only %d boxes", len(want))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				got := Boxes(m, w, h, DefaultOptions())
				if len(got) != len(want) {
					t.Errorf("got %d boxes, want %d", len(got), len(want))
					return
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("box %d: %v, want %v", i, got[i], want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// synthetic draws n text-line-like rectangles (soft edges, slight random tilt, background noise) on
// a w×h map, in the way a detector's output looks.
func synthetic(w, h, n int, seed uint64) ([]float32, int, int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	m := make([]float32, w*h)
	for i := range m {
		m[i] = 0.05 * rng.Float32()
	}
	cols := 4
	rows := (n + cols - 1) / cols
	cellW, cellH := float64(w)/float64(cols), float64(h)/float64(rows)
	for i := range n {
		cx := (float64(i%cols) + 0.5) * cellW
		cy := (float64(i/cols) + 0.5) * cellH
		length := cellW * (0.5 + 0.4*rng.Float64())
		height := cellH * (0.3 + 0.3*rng.Float64())
		deg := rng.Float64()*6 - 3
		x0, x1 := max(int(cx-length/2-height), 0), min(int(cx+length/2+height), w-1)
		y0, y1 := max(int(cy-length/2), 0), min(int(cy+length/2), h-1)
		ux, uy := math.Cos(deg*math.Pi/180), math.Sin(deg*math.Pi/180)
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				dx, dy := float64(x)-cx, float64(y)-cy
				s := length/2 - math.Abs(dx*ux+dy*uy)
				t := height/2 - math.Abs(-dx*uy+dy*ux)
				if e := math.Min(s, t); e > 0 {
					m[y*w+x] = float32(math.Min(0.2+0.25*e, 0.98))
				}
			}
		}
	}
	return m, w, h
}

func BenchmarkBoxes(b *testing.B) {
	for _, size := range []struct{ w, h int }{{960, 960}, {960, 704}, {2560, 1824}} {
		m, w, h := synthetic(size.w, size.h, 100, 1)
		b.Run(fmt.Sprintf("%dx%d", w, h), func(b *testing.B) {
			opt := DefaultOptions()
			var n int
			b.ReportAllocs()
			for b.Loop() {
				n = len(Boxes(m, w, h, opt))
			}
			b.ReportMetric(float64(n), "boxes")
		})
	}
}

func FuzzBoxes(f *testing.F) {
	f.Add([]byte{8, 8, 77, 153, 100, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255})
	f.Add([]byte{20, 12, 77, 100, 50, 255, 255, 255, 0, 255, 255, 255, 128, 200, 255, 10, 255})
	f.Add([]byte{1, 1, 0, 0, 0, 255})
	f.Add([]byte{31, 31, 10, 10, 255, 3, 255, 255, 0, 0, 255, 255, 255, 255, 255, 0, 255, 255, 255, 9})
	f.Add([]byte{5, 40, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		w, h := 1+int(data[0]%40), 1+int(data[1]%40)
		opt := Options{
			Threshold:     float32(data[2]) / 255,
			BoxThreshold:  float32(data[3]) / 255,
			UnclipRatio:   float64(data[4]) / 50,
			MinSize:       3,
			MaxCandidates: 1000,
		}
		vals := data[5:]
		prob := make([]float32, w*h)
		if len(vals) > 0 {
			for i := range prob {
				prob[i] = float32(vals[i%len(vals)]) / 255
			}
		}
		for _, b := range Boxes(prob, w, h, opt) {
			checkQuad(t, b.Quad)
			if !(b.Score >= 0 && b.Score <= 1) {
				t.Fatalf("score %v out of [0,1]", b.Score)
			}
		}
	})
}
