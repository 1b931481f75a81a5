package ocr

import (
	"math"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Marks at a line's ends.
//
// DB's probability map fades over a line's small end marks: a point, a colon or a hyphen after
// the last letter, a bracket, a dollar or a hash before the first. The box then ends on the mark
// or just short of it, and the recognizer reads `Jr` for `Jr.`, `circum` for `circum-`, `84)` for
// `(84)` (FUNSD's typed forms: about 80 words so, against some 1 100 read with their mark). So
// each horizontal box of an upright page is looked past, each end, in the page's own pixels: ink
// that starts within markTouch of the line's height from the box's edge and ends within markReach
// of it, with blank for markClear after it, is a mark cut off, and the box is widened to hold it
// and markPad more. Ink that runs on is the next word, a stroke that runs on above or below the
// line is a rule or a frame's side, and ink crossing the edge that is wider than markReach in all
// is a letter the box cuts through, which the recognizer reads whole already. A box under 1.5
// line heights long (a word of a letter or two, a lone mark) is left alone. Only boxes whose edge
// meets a mark change, so every other crop reads as before (a box widened at both ends by a tenth
// of its height whatever lies there reads sroie-dev's word F1 (ci) 0.8663 → 0.8583).
const (
	markTouch = 0.12
	markReach = 0.45
	markClear = 0.2
	markPad   = 0.08
	// markRule is how far above or below the line a stroke must run unbroken to be a rule or a
	// frame's side, as a share of the line's height.
	markRule = 0.35
	// markTilt is the most the top edge of a box may climb or fall over its length, as a share
	// of its height, for the box to be looked past as an axis-aligned one.
	markTilt = 0.15
)

// reachMarks returns quads with the boxes whose ends cut a mark off widened to hold it (see
// above): px is the upright page the quads were found on, and below thr is ink. quads itself is
// not changed.
func reachMarks(px pixels, thr uint8, quads []geom.Quad) []geom.Quad {
	ink := func(x, y int) bool { return x >= px.b.Min.X && x < px.b.Max.X && px.lum(x, y) < thr }
	var out []geom.Quad
	for i, q := range quads {
		x0, y0, x1, y1 := q.Bounds()
		h := y1 - y0
		if h < 4 || x1-x0 < 1.5*h || math.Abs(q[1].Y-q[0].Y) > markTilt*h || math.Abs(q[2].Y-q[3].Y) > markTilt*h {
			continue
		}
		// The rows the marks sit in: the box's, less a sliver at its top and foot where the
		// lines above and below reach in.
		ya := max(px.b.Min.Y, int(math.Ceil(y0+0.1*h)))
		yb := min(px.b.Max.Y-1, int(math.Floor(y1-0.05*h)))
		if yb <= ya {
			continue
		}
		column := func(x int) bool {
			for y := ya; y <= yb; y++ {
				if ink(x, y) {
					return true
				}
			}
			return false
		}
		// A rule or a frame's side runs on above or below the line, a mark does not.
		up0, up1 := int(math.Floor(y0-markRule*h)), int(math.Floor(y0-0.1*h))
		dn0, dn1 := int(math.Ceil(y1+0.1*h)), int(math.Ceil(y1+markRule*h))
		stroke := func(x, ya, yb int) bool {
			if ya < px.b.Min.Y || yb >= px.b.Max.Y {
				return false
			}
			for y := ya; y <= yb; y++ {
				if !ink(x, y) {
					return false
				}
			}
			return true
		}
		rule := func(x int) bool { return stroke(x, up0, up1) || stroke(x, dn0, dn1) }
		right := markEnd(column, rule, int(math.Floor(x1)), 1, h)
		left := markEnd(column, rule, int(math.Ceil(x0)), -1, h)
		if right == 0 && left == 0 {
			continue
		}
		if out == nil {
			out = append([]geom.Quad(nil), quads...)
		}
		out[i] = widen(q, left, right)
	}
	if out == nil {
		return quads
	}
	return out
}

// markEnd is how far past edge, in direction dir (1 right, -1 left), a box is to be widened for
// a mark it cuts off, or 0 for none (see reachMarks). column reports whether a column holds ink
// in the line's rows, rule whether it holds a stroke running on above or below them.
func markEnd(column, rule func(x int) bool, edge, dir int, h float64) float64 {
	touch, reach, clear := int(markTouch*h+0.5), int(markReach*h+0.5), int(math.Ceil(markClear*h))
	start := -1
	for d := 1; d <= touch+1; d++ {
		if column(edge + dir*d) {
			start = d
			break
		}
	}
	if start < 0 {
		return 0
	}
	if rule(edge + dir*start) {
		return 0
	}
	end := start
	for column(edge + dir*(end+1)) {
		end++
		if end > reach {
			return 0 // ink runs on: the next word, a rule, a frame
		}
		if rule(edge + dir*end) {
			return 0
		}
	}
	for d := end + 1; d <= end+clear; d++ {
		if column(edge + dir*d) {
			return 0 // more ink right after: a word set tight, not a mark
		}
	}
	// Ink that crosses the edge is a mark only if the whole of it is as narrow: a letter the
	// box cuts through (DB's box often starts inside a line's first letter) is read whole
	// already, and its crop is left as it is.
	for in := 0; column(edge - dir*in); in++ {
		if in+end > reach {
			return 0
		}
	}
	return float64(end) + markPad*h
}

// widen moves a box's left side left by left and its right side right by right, along its top
// edge's direction.
func widen(q geom.Quad, left, right float64) geom.Quad {
	dx, dy := q[1].X-q[0].X, q[1].Y-q[0].Y
	n := math.Hypot(dx, dy)
	if n == 0 {
		return q
	}
	ux, uy := dx/n, dy/n
	q[0].X, q[0].Y = q[0].X-ux*left, q[0].Y-uy*left
	q[3].X, q[3].Y = q[3].X-ux*left, q[3].Y-uy*left
	q[1].X, q[1].Y = q[1].X+ux*right, q[1].Y+uy*right
	q[2].X, q[2].Y = q[2].X+ux*right, q[2].Y+uy*right
	return q
}
