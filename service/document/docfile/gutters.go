package docfile

import (
	"cmp"
	"math"
	"slices"
)

// Column gutters.
//
// Columns set close together leave a gutter narrower than splitGap: a Federal Register page sets
// three justified columns of 8-point text 11 pt apart, about 1.1 of its text height. A line of
// one column then ends, and the line beside it starts, on one baseline within group's reach, and
// the two are built as one line across the gutter. The layout sees no gutter in that row, cannot
// tell the columns apart, and reads them row by row across.
//
// A gutter is not a wide word space: it is a strip of white that runs down the page, with text
// ending at its left and starting at its right in the rows above and below. A line is cut at a
// gap that lines up with such a strip in the rows around it; a word space, even one that
// justification stretches, has the rows around it print across it.

const (
	// gutterMin: a gap narrower than this, in text heights, is a word space, however it lines
	// up (justification stretches spaces to half a text height).
	gutterMin = 0.6
	// gutterWhite: the white that the gap and the rows around it leave in common must be at
	// least this wide, in text heights.
	gutterWhite = 0.5
	// gutterReach: the rows looked at lie within this many text heights of the line, above and
	// below (two or three rows each way at common leading).
	gutterReach = 3.0
	// gutterEdge: a row shows text on a side of the strip when a glyph of it ends (starts)
	// within this many text heights of the strip's edge: a ragged column's lines end well short
	// of its margin (a right-to-left column's start short of it).
	gutterEdge = 8.0
	// gutterSpaces: a gutter is at least this many times as wide as the word spaces around it.
	// Monospaced text (a code listing) leaves white columns wherever its lines have a space in
	// the same place, as wide as one: a space, not a gutter.
	gutterSpaces = 2.0
	// gutterRows: at least this many rows around the line must show text on each side of the
	// strip.
	gutterRows = 2
	// gutterPiece: the text before a gutter is a column's line, at least this many text heights
	// long. A list's labels, "(2)" before its hanging indent, leave a white strip down the page
	// too, with text at both its sides, but the label is no column.
	gutterPiece = 5.0
	// gutterWindow bounds the lines looked at around a line, so that a page of thousands of
	// lines on a few baselines costs a bounded pass over each.
	gutterWindow = 24
)

// splitAtGutters cuts every line where a gap in it lines up with a column gutter (see above), and
// returns the lines with their pieces in its place. The lines' glyphs must be in order along
// their baselines (textLine.order).
func splitAtGutters(lines []*textLine) []*textLine {
	if len(lines) < 2 {
		return lines
	}
	byBand := slices.Clone(lines)
	slices.SortStableFunc(byBand, func(a, b *textLine) int {
		if c := cmp.Compare(a.turn, b.turn); c != 0 {
			return c
		}
		return cmp.Compare(a.v0+a.v1, b.v0+b.v1)
	})
	// Every line is judged against the page's lines as built: the glyphs around a gap are
	// where they are, whether their line is cut or not.
	pieces := map[*textLine][]*textLine{}
	for k, l := range byBand {
		if cuts := l.gutterCuts(byBand, k); len(cuts) > 0 {
			pieces[l] = l.cutAt(cuts)
		}
	}
	if len(pieces) == 0 {
		return lines
	}
	// The pieces take their line's place in the page's order.
	kept := make([]*textLine, 0, len(lines)+len(pieces))
	for _, l := range lines {
		if ps, ok := pieces[l]; ok {
			kept = append(kept, ps...)
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

// gutterCuts returns the places in l.idx where l is cut at a gutter: k cuts between glyphs k-1 and
// k. byBand holds the page's lines sorted by turn and middle, l at k.
func (l *textLine) gutterCuts(byBand []*textLine, at int) []int {
	gl := l.gl
	var cuts []int
	start := gl[l.idx[0]].u0 // where the piece before the gap starts
	for k := 1; k < len(l.idx); k++ {
		a, b := &gl[l.idx[k-1]], &gl[l.idx[k]]
		h := math.Max(a.height(), b.height())
		if b.u0-a.u1 < gutterMin*h || a.u1-start < gutterPiece*h {
			continue
		}
		if l.gutter(byBand, at, a.u1, b.u0, h) {
			cuts = append(cuts, k)
			start = b.u0
		}
	}
	return cuts
}

// gutter reports whether the white between lo and hi along l's baseline (text height h) is a
// column gutter: the rows around l leave white in it, at least gutterWhite wide, with text
// ending at its left and starting at its right in gutterRows of them.
func (l *textLine) gutter(byBand []*textLine, at int, lo, hi, h float64) bool {
	mid := (l.v0 + l.v1) / 2
	var around []*textLine
	for _, step := range []int{-1, 1} {
		for k, n := at+step, 0; k >= 0 && k < len(byBand) && n < gutterWindow; k, n = k+step, n+1 {
			m := byBand[k]
			if m.turn != l.turn || math.Abs((m.v0+m.v1)/2-mid) > gutterReach*h {
				break
			}
			// A line on l's own row (the other column's line, already apart) is no evidence.
			if math.Min(m.v1, l.v1)-math.Max(m.v0, l.v0) >= sameLine*math.Min(m.v1-m.v0, l.v1-l.v0) {
				continue
			}
			around = append(around, m)
		}
	}
	if len(around) < gutterRows {
		return false
	}
	// The white left in common: the widest stretch of (lo, hi) no glyph around covers.
	var blocked []extent
	for _, m := range around {
		for _, i := range m.idx {
			g := &m.gl[i]
			if g.u1 > lo && g.u0 < hi {
				blocked = append(blocked, extent{g.u0, g.u1})
			}
		}
	}
	if hi-lo < gutterSpaces*wordSpace(l, around) {
		return false
	}
	wlo, whi := widestFree(lo, hi, blocked)
	if whi-wlo < gutterWhite*h {
		return false
	}
	left, right := 0, 0
	for _, m := range around {
		var ends, starts bool
		for _, i := range m.idx {
			g := &m.gl[i]
			ends = ends || g.u1 <= wlo && g.u1 >= wlo-gutterEdge*h
			starts = starts || g.u0 >= whi && g.u0 <= whi+gutterEdge*h
		}
		if ends {
			left++
		}
		if starts {
			right++
		}
	}
	return left >= gutterRows && right >= gutterRows
}

// wordSpace is the median width of the spaces between words of the lines: gaps where the
// content drew a space, or wider than wordGap.
func wordSpace(l *textLine, around []*textLine) float64 {
	var gaps []float64
	for _, m := range append(around, l) {
		for k := 1; k < len(m.idx); k++ {
			a, b := &m.gl[m.idx[k-1]], &m.gl[m.idx[k]]
			gap := b.u0 - a.u1
			if gap > 0 && (gap > wordGap*math.Max(a.height(), b.height()) || b.space && b.prev == m.idx[k-1]) {
				gaps = append(gaps, gap)
			}
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// extent is a stretch along a baseline.
type extent struct{ lo, hi float64 }

// widestFree returns the widest stretch of (lo, hi) that none of blocked covers.
func widestFree(lo, hi float64, blocked []extent) (float64, float64) {
	slices.SortFunc(blocked, func(a, b extent) int { return cmp.Compare(a.lo, b.lo) })
	bestLo, bestHi := lo, lo
	at := lo
	for _, s := range blocked {
		if s.lo > at && math.Min(s.lo, hi)-at > bestHi-bestLo {
			bestLo, bestHi = at, math.Min(s.lo, hi)
		}
		at = math.Max(at, s.hi)
		if at >= hi {
			break
		}
	}
	if hi-at > bestHi-bestLo {
		bestLo, bestHi = at, hi
	}
	return bestLo, bestHi
}

// cutAt cuts l into pieces at cuts (see gutterCuts), each a line of its own with its extents.
func (l *textLine) cutAt(cuts []int) []*textLine {
	var out []*textLine
	start := 0
	for _, c := range append(cuts, len(l.idx)) {
		p := &textLine{gl: l.gl, idx: l.idx[start:c:c], turn: l.turn}
		for k, i := range p.idx {
			g := &l.gl[i]
			if k == 0 {
				p.u0, p.u1, p.v0, p.v1, p.box = g.u0, g.u1, g.v0, g.v1, g.box
				continue
			}
			p.u0, p.u1 = math.Min(p.u0, g.u0), math.Max(p.u1, g.u1)
			p.v0, p.v1 = math.Min(p.v0, g.v0), math.Max(p.v1, g.v1)
			p.box = union(p.box, g.box)
		}
		out = append(out, p)
		start = c
	}
	return out
}
