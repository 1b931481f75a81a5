// Package dbnet turns the probability map of PaddleOCR's text detector into text boxes.
//
// The detector is a DBNet ("differentiable binarization"): it predicts, for every pixel of a
// downscaled image, the probability that the pixel belongs to a text line, and it is trained on
// text regions shrunk towards their centre so that neighbouring lines stay apart in the map. The
// boxes therefore come from post-processing, and the recognizer only reads well what it was trained
// on, so this package reproduces PaddleOCR's DBPostProcess (the "fast" box score, quadrilateral
// output): binarize, take each connected region, fit its minimum-area rotated rectangle, drop
// regions that are too small or too faint, and grow the rectangle back by the "unclip" distance that
// undoes the training-time shrink.
//
// Where PaddleOCR relies on OpenCV (contours, minAreaRect, fillPoly) and pyclipper (the unclip
// offset), this package computes the same geometry directly: runs of text pixels joined by
// union-find instead of contour tracing, the convex hull of each region's row ends, rotating
// calipers over the hull, and a closed-form offset for the rectangle. Only the standard library is
// used, and the working buffers are pooled so that a call allocates little beyond its result.
package dbnet

import (
	"math"
	"sync"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Options are PaddleOCR's DB post-processing settings.
type Options struct {
	Threshold     float32 // binarization threshold on the probability map (PaddleOCR det_db_thresh 0.3)
	BoxThreshold  float32 // minimum mean probability inside a box (det_db_box_thresh 0.6)
	UnclipRatio   float64 // box expansion ratio (det_db_unclip_ratio 1.5)
	MinSize       float64 // minimum short side in map pixels (3)
	MaxCandidates int     // at most this many regions are considered (1000); 0 or less means no limit
}

// DefaultOptions returns PaddleOCR's defaults, which the detector models were tuned with.
func DefaultOptions() Options {
	return Options{
		Threshold:     0.3,
		BoxThreshold:  0.6,
		UnclipRatio:   1.5,
		MinSize:       3,
		MaxCandidates: 1000,
	}
}

// Box is one detected text region.
type Box struct {
	Quad  geom.Quad // corners in map coordinates, clockwise from top-left
	Score float32   // mean probability inside the (un-expanded) box
}

// Boxes finds the text boxes in a w×h probability map (row-major, values in [0,1]).
//
// Boxes come out in raster order of each region's first pixel, so the result is deterministic.
// Corners are in map pixel coordinates (pixel centres at integer positions, as in OpenCV) and are
// neither rounded nor clamped: the unclip expansion may push them slightly outside the map, and the
// caller scales and clamps them to the original image in one step. A map whose size does not match
// w and h yields nil.
func Boxes(prob []float32, w, h int, opt Options) []Box {
	if w <= 0 || h <= 0 || len(prob)%w != 0 || len(prob)/w != h {
		return nil
	}
	ws := pool.Get().(*workspace)
	defer pool.Put(ws)

	ws.findRuns(prob, w, h, opt.Threshold)
	nc := ws.label(opt.MaxCandidates)

	var out []Box
	for c := 0; c < nc; c++ {
		ws.rowEnds(c)
		ws.hull = convexHull(ws.pts, ws.hull)
		r := minAreaRect(ws.hull)
		if r.shortSide() < opt.MinSize {
			continue
		}
		score := r.meanProb(prob, w, h)
		// Written so that a NaN score (NaN in the map) is dropped too.
		if !(score >= float64(opt.BoxThreshold)) {
			continue
		}
		r = r.unclip(opt.UnclipRatio)
		if !(r.shortSide() >= opt.MinSize+2) {
			continue
		}
		out = append(out, Box{Quad: orderCorners(r.corners()), Score: float32(score)})
	}
	return out
}

// pool keeps the label buffers between calls: they scale with the map and the detector runs once
// per request, so reusing them avoids megabytes of garbage per image.
var pool = sync.Pool{New: func() any { return new(workspace) }}

// run is a maximal horizontal stretch of text pixels, x0..x1 inclusive, on row y. Working on runs
// rather than pixels keeps union-find and the per-region passes proportional to the text's outline,
// not its area.
type run struct {
	y, x0, x1 int32
	parent    int32 // union-find parent; a root is the region's first run in raster order
}

// ipt is an integer pixel position. Hull and caliper arithmetic on integers is exact, so ties
// (parallel edges, collinear pixels) are decided consistently.
type ipt struct{ x, y int64 }

type workspace struct {
	runs  []run
	comp  []int32 // region index of each run, -1 beyond MaxCandidates
	start []int32 // runs of region c are order[start[c]:start[c+1]]
	order []int32
	pts   []ipt // row ends of the current region
	hull  []ipt
}

// findRuns binarizes the map row by row and joins runs that touch a run of the row above,
// including diagonally (8-connectivity, as OpenCV's outer contours are).
func (ws *workspace) findRuns(prob []float32, w, h int, thr float32) {
	runs := ws.runs[:0]
	prevStart, prevEnd := 0, 0
	for y := 0; y < h; y++ {
		row := prob[y*w : y*w+w]
		curStart := len(runs)
		k := prevStart
		for x := 0; x < w; {
			for x < w && !(row[x] > thr) {
				x++
			}
			if x == w {
				break
			}
			x0 := x
			for x < w && row[x] > thr {
				x++
			}
			x1 := x - 1
			idx := int32(len(runs))
			runs = append(runs, run{y: int32(y), x0: int32(x0), x1: int32(x1), parent: idx})
			// Runs above that end left of x0-1 cannot touch this or any later run of this row.
			for k < prevEnd && int(runs[k].x1) < x0-1 {
				k++
			}
			for j := k; j < prevEnd && int(runs[j].x0) <= x1+1; j++ {
				union(runs, int32(j), idx)
			}
		}
		prevStart, prevEnd = curStart, len(runs)
	}
	ws.runs = runs
}

func find(runs []run, i int32) int32 {
	for runs[i].parent != i {
		runs[i].parent = runs[runs[i].parent].parent // path halving
		i = runs[i].parent
	}
	return i
}

// union keeps the smaller index as root, so every root is its region's first run in raster order.
func union(runs []run, a, b int32) {
	ra, rb := find(runs, a), find(runs, b)
	switch {
	case ra < rb:
		runs[rb].parent = ra
	case rb < ra:
		runs[ra].parent = rb
	}
}

// label numbers the regions in raster order of their first run, keeps at most limit of them
// (PaddleOCR's max_candidates counts regions, not boxes), and groups the runs of each region in
// raster order. It returns the number of regions kept.
func (ws *workspace) label(limit int) int {
	n := len(ws.runs)
	ws.comp = grow(ws.comp, n)
	nc := 0
	for i := range n {
		r := find(ws.runs, int32(i))
		switch {
		case int(r) != i:
			ws.comp[i] = ws.comp[r] // r < i, already numbered
		case limit > 0 && nc >= limit:
			ws.comp[i] = -1
		default:
			ws.comp[i] = int32(nc)
			nc++
		}
	}
	// Counting sort by region; stable, so each region's runs stay in raster order.
	ws.start = grow(ws.start, nc+1)
	clear(ws.start)
	for _, c := range ws.comp[:n] {
		if c >= 0 {
			ws.start[c+1]++
		}
	}
	for c := 1; c <= nc; c++ {
		ws.start[c] += ws.start[c-1]
	}
	ws.order = grow(ws.order, int(ws.start[nc]))
	// Use start[c] as the fill cursor of region c, then shift back.
	for i, c := range ws.comp[:n] {
		if c >= 0 {
			ws.order[ws.start[c]] = int32(i)
			ws.start[c]++
		}
	}
	for c := nc; c > 0; c-- {
		ws.start[c] = ws.start[c-1]
	}
	ws.start[0] = 0
	return nc
}

// rowEnds collects the leftmost and rightmost pixel of every row of region c: every hull vertex is
// one of them, and there are far fewer of them than pixels. The points come out sorted by (y, x).
func (ws *workspace) rowEnds(c int) {
	pts := ws.pts[:0]
	var y, lo, hi int32 = -1, 0, 0
	flush := func() {
		pts = append(pts, ipt{int64(lo), int64(y)})
		if hi != lo {
			pts = append(pts, ipt{int64(hi), int64(y)})
		}
	}
	for _, i := range ws.order[ws.start[c]:ws.start[c+1]] {
		r := ws.runs[i]
		if r.y != y {
			if y >= 0 {
				flush()
			}
			y, lo = r.y, r.x0
		}
		hi = r.x1
	}
	if y >= 0 {
		flush()
	}
	ws.pts = pts
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

func cross(o, a, b ipt) int64 { return (a.x-o.x)*(b.y-o.y) - (a.y-o.y)*(b.x-o.x) }

// convexHull is Andrew's monotone chain over points sorted lexicographically (any fixed order
// works; rowEnds gives (y, x)). Collinear points are dropped, so a hull of 2 points is a segment and
// one of 1 point a single pixel. The result is oriented so that every turn has a positive cross
// product, which is what minAreaRect expects.
func convexHull(pts, out []ipt) []ipt {
	out = out[:0]
	if len(pts) <= 2 {
		return append(out, pts...)
	}
	for _, p := range pts {
		for len(out) >= 2 && cross(out[len(out)-2], out[len(out)-1], p) <= 0 {
			out = out[:len(out)-1]
		}
		out = append(out, p)
	}
	lower := len(out) + 1
	for i := len(pts) - 2; i >= 0; i-- {
		p := pts[i]
		for len(out) >= lower && cross(out[len(out)-2], out[len(out)-1], p) <= 0 {
			out = out[:len(out)-1]
		}
		out = append(out, p)
	}
	out = out[:len(out)-1]
	if len(out) >= 3 {
		var area int64
		for i, p := range out {
			q := out[(i+1)%len(out)]
			area += p.x*q.y - q.x*p.y
		}
		if area < 0 {
			for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// rect is a rotated rectangle: centre (cx, cy), unit axis (ux, uy), half-extent a along that axis
// and b along the perpendicular (-uy, ux).
type rect struct {
	cx, cy, ux, uy, a, b float64
}

func (r rect) shortSide() float64 { return 2 * math.Min(r.a, r.b) }

func (r rect) corners() [4]geom.Point {
	ax, ay := r.a*r.ux, r.a*r.uy
	bx, by := -r.b*r.uy, r.b*r.ux
	return [4]geom.Point{
		{X: r.cx - ax - bx, Y: r.cy - ay - by},
		{X: r.cx + ax - bx, Y: r.cy + ay - by},
		{X: r.cx + ax + bx, Y: r.cy + ay + by},
		{X: r.cx - ax + bx, Y: r.cy - ay + by},
	}
}

// minAreaRect is OpenCV's minAreaRect on a convex hull: the optimal rectangle has a side on a hull
// edge, and rotating calipers find the extreme points for every edge in one pass around the hull.
func minAreaRect(hull []ipt) rect {
	switch len(hull) {
	case 0:
		return rect{ux: 1}
	case 1:
		return rect{cx: float64(hull[0].x), cy: float64(hull[0].y), ux: 1}
	case 2:
		dx, dy := float64(hull[1].x-hull[0].x), float64(hull[1].y-hull[0].y)
		l := math.Hypot(dx, dy)
		return rect{
			cx: float64(hull[0].x+hull[1].x) / 2, cy: float64(hull[0].y+hull[1].y) / 2,
			ux: dx / l, uy: dy / l, a: l / 2,
		}
	}
	n := len(hull)
	at := func(i int) ipt { return hull[i%n] }
	best := math.Inf(1)
	var bi, bj, bk, bl int
	// j: farthest along the edge, k: farthest from the edge, l: farthest back along the edge.
	// All three only move forward as the edge turns, so the pass is linear; the step caps only guard
	// termination.
	j, k, l := 1, 1, 1
	for i := 0; i < n; i++ {
		p, q := at(i), at(i+1)
		ex, ey := q.x-p.x, q.y-p.y
		dot := func(v ipt) int64 { return ex*v.x + ey*v.y }
		dist := func(v ipt) int64 { return ex*(v.y-p.y) - ey*(v.x-p.x) }
		if j < i+1 {
			j = i + 1
		}
		for s := 0; s < n && dot(at(j+1)) > dot(at(j)); s++ {
			j++
		}
		if k < j {
			k = j
		}
		for s := 0; s < n && dist(at(k+1)) > dist(at(k)); s++ {
			k++
		}
		if l < k {
			l = k
		}
		for s := 0; s < n && dot(at(l+1)) < dot(at(l)); s++ {
			l++
		}
		area := float64(dot(at(j))-dot(at(l))) * float64(dist(at(k))) / float64(ex*ex+ey*ey)
		if area < best {
			best, bi, bj, bk, bl = area, i, j, k, l
		}
	}
	p, q := at(bi), at(bi+1)
	ex, ey := float64(q.x-p.x), float64(q.y-p.y)
	el := math.Hypot(ex, ey)
	ux, uy := ex/el, ey/el
	along := func(v ipt) float64 { return ux*float64(v.x) + uy*float64(v.y) }
	across := func(v ipt) float64 { return -uy*float64(v.x) + ux*float64(v.y) }
	s0, s1 := along(at(bl)), along(at(bj))
	t0, t1 := across(p), across(at(bk))
	sm, tm := (s0+s1)/2, (t0+t1)/2
	return rect{
		cx: sm*ux - tm*uy, cy: sm*uy + tm*ux,
		ux: ux, uy: uy,
		a: (s1 - s0) / 2, b: (t1 - t0) / 2,
	}
}

// meanProb is PaddleOCR's box_score_fast: the mean probability over the pixels whose centres lie in
// the rectangle. Each row's pixel span is solved in closed form rather than testing every pixel of
// the bounding box, which matters for long slanted lines.
func (r rect) meanProb(prob []float32, w, h int) float64 {
	const eps = 1e-6 // region pixels lie exactly on the rectangle's sides; keep them
	minX, minY, maxX, maxY := geom.Quad(r.corners()).Bounds()
	if !(minX <= maxX && minY <= maxY) || math.IsInf(maxX-minX, 0) || math.IsInf(maxY-minY, 0) {
		return 0 // NaN or infinite geometry: no pixel can be indexed safely
	}
	x0 := int(math.Max(math.Floor(minX), 0))
	x1 := int(math.Min(math.Ceil(maxX), float64(w-1)))
	y0 := int(math.Max(math.Floor(minY), 0))
	y1 := int(math.Min(math.Ceil(maxY), float64(h-1)))
	A, B := r.a+eps, r.b+eps
	var sum float64
	var count int
	for y := y0; y <= y1; y++ {
		dy := float64(y) - r.cy
		// With dx = x - cx: |dx*ux + dy*uy| ≤ A and |dy*ux - dx*uy| ≤ B.
		lo, hi := math.Inf(-1), math.Inf(1)
		if !span(r.ux, -dy*r.uy, A, &lo, &hi) || !span(-r.uy, -dy*r.ux, B, &lo, &hi) {
			continue
		}
		xa := max(int(math.Ceil(r.cx+lo)), x0)
		xb := min(int(math.Floor(r.cx+hi)), x1)
		row := prob[y*w:]
		for x := xa; x <= xb; x++ {
			sum += float64(row[x])
		}
		if xb >= xa {
			count += xb - xa + 1
		}
	}
	if count == 0 {
		return 0
	}
	return sum / float64(count)
}

// span narrows [lo, hi] to the dx with |c*dx - off| ≤ lim, and reports whether any dx is left
// possible for this constraint.
func span(c, off, lim float64, lo, hi *float64) bool {
	if math.Abs(c) < 1e-12 {
		return math.Abs(off) <= lim
	}
	a, b := (off-lim)/c, (off+lim)/c
	if a > b {
		a, b = b, a
	}
	*lo, *hi = math.Max(*lo, a), math.Min(*hi, b)
	return *lo <= *hi
}

// unclip grows the rectangle by PaddleOCR's distance area*ratio/perimeter on every side. PaddleOCR
// offsets the polygon with rounded joins and takes the minimum-area rectangle of the result; for a
// rectangle that is exactly the rectangle with each side moved out by the distance.
func (r rect) unclip(ratio float64) rect {
	if r.a+r.b <= 0 {
		return r
	}
	// area (2a·2b) over perimeter 2(2a+2b)
	d := ratio * r.a * r.b / (r.a + r.b)
	r.a += d
	r.b += d
	return r
}

// orderCorners is PaddleOCR's get_mini_boxes order: of the two leftmost corners the upper is the
// top-left, of the two rightmost the upper is the top-right. The two leftmost corners of a rectangle
// always share a side (its more vertical side at the left), and the right pair is the parallel side,
// so the result never crosses itself. Sorting ties by y keeps exact 0° and 45° rectangles stable.
func orderCorners(c [4]geom.Point) geom.Quad {
	for i := 1; i < 4; i++ {
		for j := i; j > 0 && (c[j].X < c[j-1].X || c[j].X == c[j-1].X && c[j].Y < c[j-1].Y); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	tl, bl := c[0], c[1]
	if bl.Y < tl.Y {
		tl, bl = bl, tl
	}
	tr, br := c[2], c[3]
	if br.Y < tr.Y {
		tr, br = br, tr
	}
	return geom.Quad{tl, tr, br, bl}
}
