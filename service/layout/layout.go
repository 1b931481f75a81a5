// Package layout decides how the text regions of a page are read: which of them belong together
// in blocks (columns, then paragraphs), in what order the blocks come, and the rows within each.
// It sees only boxes, so OCR regions and the lines of a PDF's text layer are laid out alike.
//
// A page is cut top to bottom into bands (regions whose heights overlap), and runs of bands that
// share a vertical gutter, a strip of white across all of them, form a section. A section's
// gutters split it into strips, and each gutter is then either a column gutter or the gap between
// the columns of a table:
//
//   - columns: both sides are prose (at least three rows, ten text heights wide or more, most
//     rows running text, with no gutter in them, that fills the strip), or one side is prose
//     and the other has three rows or more, beside few of the prose rows or, where beside
//     many, with rows of its own pitch that sit between the prose lines as often as on them
//     (a text column beside a table);
//   - a table otherwise: its rows are read across the page, as a receipt's label and amount are.
//
// A strip that is itself mostly columns (two columns of three, with a box across both lower down)
// counts as prose when its gutter is judged (see columned). A line on its side among the page's
// lines (a margin stamp) is set aside and read after everything else (see sideways).
//
// Columns are read left to right, each laid out again on its own (a column may hold a table).
// Everything else is read in rows, top to bottom and left to right, exactly as a page without
// columns always was. So a header spanning the columns comes first (it crosses the gutter, so it
// is a band of its own above the section), and a receipt, whose only gutters are a table's, reads
// row by row. A line under the columns that is nearer to the text across the page below it than
// to the columns (a heading) is read with that text. The rows of a column or of the page's full
// width then split into paragraphs where the gap between two rows is clearly wider than the
// column's usual line spacing, or where the text height changes into or out of a row clearly
// taller or shorter than the column's usual one (a heading).
//
// This is the XY-cut idea (cut at white space, recurse) with two changes that real pages need: a
// horizontal cut is never made inside a run of bands that share a gutter (two columns whose lines
// sit at the same heights have a white line between every row, and cutting there first reads them
// line by line across), and a vertical cut is made only where the text on either side says the
// two sides are read one after the other.
package layout

import (
	"cmp"
	"math"
	"slices"
)

// Box is an axis-aligned rectangle in the page's reading frame: x grows along the lines, y down
// the page.
type Box struct {
	X0, Y0, X1, Y1 float64
}

// Width is the box's extent along the lines.
func (b Box) Width() float64 { return b.X1 - b.X0 }

// Height is the box's extent down the page.
func (b Box) Height() float64 { return b.Y1 - b.Y0 }

// Union is the smallest box holding b and o.
func (b Box) Union(o Box) Box {
	return Box{X0: math.Min(b.X0, o.X0), Y0: math.Min(b.Y0, o.Y0), X1: math.Max(b.X1, o.X1), Y1: math.Max(b.Y1, o.Y1)}
}

// Block is a group of regions read together: a paragraph, a column's run of lines, a table.
type Block struct {
	Box Box
	// Rows are the block's regions (indexes into what Arrange was given), row by row in reading
	// order, each row left to right.
	Rows [][]int
}

// Options tune Arrange.
type Options struct {
	// RowOverlap: a region joins a row when its vertical extent overlaps the row's first region
	// by at least this share of the smaller of the two heights (in (0,1]).
	RowOverlap float64
}

// The thresholds of the layout, in text heights (the median height of the page's regions) or
// shares.
const (
	// gutterWidth is the narrowest white strip that separates columns (or a table's columns):
	// the gap between words is a third of a text height, a column gutter one to two; but a
	// detector's boxes reach past the ink on both sides, and a gutter of one text height
	// between justified columns is two thirds of one between their boxes. (Regions are lines,
	// not words: the gap between two words is inside a region, never between two.)
	gutterWidth = 0.5
	// bandOverlap: a region joins the band above when it overlaps it by more than this share of
	// its height (or of the text height, if less). Detector boxes of consecutive lines touch,
	// and that must not make one band of a header and the columns under it.
	bandOverlap = 0.3
	// nearGap, joinGap: a band with nothing across a section's gutter (a column that runs on
	// after its neighbour ended) stays in the section when it is no further below it than
	// nearGap, or when it is no further than joinGap and starts where one of the section's
	// strips starts (a column's next paragraph after an empty line; a footer is further, or
	// placed otherwise).
	nearGap = 1.0
	joinGap = 4.0
	// leadGap: the first lines of a column that sit above its neighbour's, with nothing across
	// the gutter, start the section when they are no further above it than this (a title
	// over the columns is further, and usually crosses the gutter).
	leadGap = 1.0
	// proseMinRows, proseMinWidth, proseFull, proseFullShare: a strip is prose when it has at
	// least proseMinRows rows, is at least proseMinWidth text heights wide, and at least
	// proseFullShare of its rows span proseFull of its width.
	proseMinRows   = 3
	proseMinWidth  = 10.0
	proseFull      = 0.8
	proseFullShare = 0.7
	// alignedShare: a prose strip beside a strip that is not prose, of at least proseMinRows
	// rows, is a column when fewer than this share of its rows have something beside them (a
	// table's rows are read across, and so is a lone line beside a few others: a receipt's
	// "TAX INVOICE" beside its address).
	alignedShare = 0.5
	// lineTol, linedShare: a strip beside a prose strip is read across with it only when at
	// least linedShare of its rows sit on a line of the prose, their middles no more than
	// lineTol text heights apart. A table's cell and the label it belongs to share a line; the
	// rows of a table beside a column of text have their own pitch and fall between its lines
	// as often as on them. (A scanner's boxes are as tall as the line pitch, so overlapping a
	// prose row, which aligned counts, says little there.)
	lineTol    = 0.2
	linedShare = 0.6
	// paragraphGap: rows further apart than the column's median gap plus this many text heights
	// start a new paragraph.
	paragraphGap = 0.5
	// headingRatio: a row this many times taller or shorter than the one before starts a new
	// paragraph.
	headingRatio = 1.5
	// sideRatio, sideLines: a box at least sideRatio times taller than wide, and sideLines
	// text heights tall, is a line turned on its side (see sideways).
	sideRatio = 3.0
	sideLines = 6.0
	// sideShare: lines on their side are set aside only when at most one in sideShare of the
	// page's regions is one.
	sideShare = 4
	// maxDepth bounds how deep columns are looked for inside columns.
	maxDepth = 6
)

// Arrange lays out the regions whose boxes are given and returns the page's blocks in reading
// order. Every region is in exactly one block.
func Arrange(boxes []Box, opt Options) []Block {
	if len(boxes) == 0 {
		return nil
	}
	if opt.RowOverlap <= 0 || opt.RowOverlap > 1 {
		opt.RowOverlap = 0.5
	}
	a := arranger{boxes: boxes, opt: opt, h: textHeight(boxes)}
	idx := make([]int, 0, len(boxes))
	var aside []int
	for i, b := range boxes {
		if a.sideways(b) {
			aside = append(aside, i)
			continue
		}
		idx = append(idx, i)
	}
	if len(aside)*sideShare > len(boxes) {
		// Not a page of lines with a few turned ones in its margins: laid out as it stands.
		idx, aside = idx[:0], nil
		for i := range boxes {
			idx = append(idx, i)
		}
	}
	var blocks []Block
	if len(idx) > 0 {
		for _, f := range a.arrange(idx, 0) {
			blocks = append(blocks, a.paragraphs(f)...)
		}
	}
	// Lines turned on their side come last, left to right, each a block of its own.
	slices.SortStableFunc(aside, func(i, j int) int { return cmp.Compare(boxes[i].X0, boxes[j].X0) })
	for _, i := range aside {
		blocks = append(blocks, Block{Box: boxes[i], Rows: [][]int{{i}}})
	}
	return blocks
}

// sideways reports whether b is a line turned on its side among the page's lines: far taller
// than wide, and taller than sideLines text heights. Such a line in a page's margin (a filing
// stamp run up the edge, arXiv's identifier) overlaps every row it runs past: laid out with
// them, it would make one band of them all, and of the columns beside it one row across. It is
// read after the page's text instead. A short word turned in a table's header stays where it
// is, and so does a page of many such lines (vertical CJK columns beside a few lines across).
func (a *arranger) sideways(b Box) bool {
	return b.Height() >= sideRatio*b.Width() && b.Height() >= sideLines*a.h
}

// textHeight is the median height of the boxes that are wider than tall (lines of text), or of
// all boxes when none is; at least a pixel.
func textHeight(boxes []Box) float64 {
	var hs []float64
	for _, b := range boxes {
		if b.Width() >= b.Height() {
			hs = append(hs, b.Height())
		}
	}
	if len(hs) == 0 {
		for _, b := range boxes {
			hs = append(hs, math.Min(b.Width(), b.Height()))
		}
	}
	slices.Sort(hs)
	return math.Max(1, hs[len(hs)/2])
}

type arranger struct {
	boxes []Box
	opt   Options
	h     float64 // text height
}

// flow is a run of rows read one after another without a change of column: paragraphs are cut
// out of it.
type flow [][]int

// arrange lays out the regions idx: its flows in reading order.
func (a *arranger) arrange(idx []int, depth int) []flow {
	var flows []flow
	var cur flow
	flush := func() {
		if len(cur) > 0 {
			flows = append(flows, cur)
			cur = nil
		}
	}
	for _, s := range a.sections(a.bands(idx)) {
		units := a.units(s, depth)
		if len(units) <= 1 || depth >= maxDepth {
			cur = append(cur, a.rows(s)...)
			continue
		}
		flush()
		for _, u := range units {
			if u.table {
				flows = append(flows, a.rows(u.items))
			} else {
				flows = append(flows, a.arrange(u.items, depth+1)...)
			}
		}
	}
	flush()
	return flows
}

// bands cuts idx top to bottom into bands: runs of regions whose vertical extents overlap (by more
// than bandOverlap).
func (a *arranger) bands(idx []int) [][]int {
	sorted := slices.Clone(idx)
	slices.SortStableFunc(sorted, func(i, j int) int { return cmp.Compare(a.boxes[i].Y0, a.boxes[j].Y0) })
	var bands [][]int
	bottom := math.Inf(-1)
	for _, i := range sorted {
		b := a.boxes[i]
		if len(bands) > 0 && bottom-b.Y0 > bandOverlap*math.Min(b.Height(), a.h) {
			bands[len(bands)-1] = append(bands[len(bands)-1], i)
			bottom = math.Max(bottom, b.Y1)
			continue
		}
		bands = append(bands, []int{i})
		bottom = b.Y1
	}
	return bands
}

// sections groups consecutive bands into sections: runs of bands that keep at least one gutter
// between them all, and runs of bands that have none.
//
// What a band is tested against (the strips of the section so far, its bottom) is kept as the
// section grows rather than worked out again from all its regions: a page of thousands of
// one-line bands costs a pass over each band, not over the page for each band.
func (a *arranger) sections(bands [][]int) [][]int {
	var out [][][]int // sections as their bands
	var cur [][]int
	var strips stripSet // the strips of the section so far
	bottom := math.Inf(-1)
	split := false
	for k, band := range bands {
		if len(cur) == 0 {
			cur = [][]int{band}
			strips = a.stripsOf(band)
			bottom, split = a.bottom(band), strips.split()
			continue
		}
		bandSplit := a.split(band)
		var after []int
		if k+1 < len(bands) {
			after = bands[k+1]
		}
		switch {
		case split && strips.splitWith(a, band) && (bandSplit || a.continues(strips, bottom, band) && !a.leads(strips, bottom, band, after)):
		case !split && !bandSplit:
		default:
			next := [][]int{band}
			nextStrips := a.stripsOf(band)
			nextTop := a.top(band)
			if !split && bandSplit {
				// The first lines of a column may sit above its neighbour's (no band of their
				// own crosses the gutter): they belong to the section that starts here.
				for len(cur) > 0 {
					last := cur[len(cur)-1]
					if nextTop-a.bottom(last) > leadGap*a.h || !nextStrips.splitWith(a, last) {
						break
					}
					next = append(next, last) // reversed below
					nextStrips.add(a, last)
					nextTop = math.Min(nextTop, a.top(last))
					cur = cur[:len(cur)-1]
				}
				slices.Reverse(next)
			}
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur, strips = next, nextStrips
			bottom = math.Inf(-1)
			for _, b := range next {
				bottom = math.Max(bottom, a.bottom(b))
			}
			split = strips.split()
			continue
		}
		cur = append(cur, band)
		strips.add(a, band)
		bottom = math.Max(bottom, a.bottom(band))
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	sections := make([][]int, len(out))
	for i, s := range out {
		for _, band := range s {
			sections[i] = append(sections[i], band...)
		}
	}
	return sections
}

// continues reports whether band, which has no gutter of its own, carries on one of the strips of
// the section above it (its strips and its bottom; see nearGap and joinGap).
func (a *arranger) continues(strips stripSet, bottom float64, band []int) bool {
	gap := a.top(band) - bottom
	switch {
	case gap <= nearGap*a.h:
		return true
	case gap > joinGap*a.h:
		return false
	}
	x0 := math.Inf(1)
	for _, i := range band {
		x0 = math.Min(x0, a.boxes[i].X0)
	}
	for _, s := range strips.spans {
		if math.Abs(x0-s.x0) <= a.h {
			return true
		}
	}
	return false
}

// leads reports whether band, which has no gutter of its own and carries on a strip of the
// section above it (its strips and its bottom), rather leads into the band after it, next, which
// crosses the section's gutters: it sits nearer to next than to the section. A heading under two
// columns ("Additional Features" over a list across the page) is read with what it heads, after
// both columns, not as the last line of the column it happens to sit under.
func (a *arranger) leads(strips stripSet, bottom float64, band, next []int) bool {
	if len(next) == 0 || strips.splitWith(a, next) {
		return false
	}
	return a.top(next)-a.bottom(band) < a.top(band)-bottom
}

// top and bottom are the vertical extent of the regions idx.
func (a *arranger) top(idx []int) float64 {
	y := math.Inf(1)
	for _, i := range idx {
		y = math.Min(y, a.boxes[i].Y0)
	}
	return y
}

func (a *arranger) bottom(idx []int) float64 {
	y := math.Inf(-1)
	for _, i := range idx {
		y = math.Max(y, a.boxes[i].Y1)
	}
	return y
}

// span is an interval along the lines.
type span struct{ x0, x1 float64 }

// strips returns the horizontal extents of the regions idx, merged where less than a gutter
// apart, left to right: more than one means the regions have a gutter between them.
func (a *arranger) strips(idx []int) []span { return a.stripsOf(idx).spans }

// split reports whether the regions idx have a gutter between them.
func (a *arranger) split(idx []int) bool { return len(a.strips(idx)) > 1 }

// stripSet is the strips of a set of regions, kept as regions are added to it. Strips are merged
// left to right, each span joining the strip before it when it starts less than a gutter past
// that strip's right end, so a set's strips do not depend on the order its regions came in, and
// adding regions merges their spans into the strips already found.
type stripSet struct {
	gap   float64
	spans []span // left to right, each more than gap past the one before
}

// stripsOf returns the strips of the regions idx.
func (a *arranger) stripsOf(idx []int) stripSet {
	spans := make([]span, len(idx))
	for k, i := range idx {
		spans[k] = span{a.boxes[i].X0, a.boxes[i].X1}
	}
	slices.SortFunc(spans, func(p, q span) int { return cmp.Compare(p.x0, q.x0) })
	s := stripSet{gap: gutterWidth * a.h}
	s.spans, _ = s.merge(spans, nil, true)
	return s
}

// merge merges p and q, spans each ordered by x0, into strips and counts them; the strips are
// returned when keep is set.
func (s stripSet) merge(p, q []span, keep bool) (out []span, n int) {
	var cur span
	for len(p) > 0 || len(q) > 0 {
		var next span
		if len(q) == 0 || len(p) > 0 && p[0].x0 <= q[0].x0 {
			next, p = p[0], p[1:]
		} else {
			next, q = q[0], q[1:]
		}
		if n > 0 && next.x0-cur.x1 < s.gap {
			cur.x1 = math.Max(cur.x1, next.x1)
			continue
		}
		if n > 0 && keep {
			out = append(out, cur)
		}
		cur = next
		n++
	}
	if n > 0 && keep {
		out = append(out, cur)
	}
	return out, n
}

// add adds the regions idx to the set.
func (s *stripSet) add(a *arranger, idx []int) {
	s.spans, _ = s.merge(s.spans, a.stripsOf(idx).spans, true)
}

// split reports whether the set has a gutter in it.
func (s stripSet) split() bool { return len(s.spans) > 1 }

// splitWith reports whether the set would have a gutter in it with the regions idx added.
func (s stripSet) splitWith(a *arranger, idx []int) bool {
	_, n := s.merge(s.spans, a.stripsOf(idx).spans, false)
	return n > 1
}

// unit is a part of a section read on its own: a column, or a table of one or more strips.
type unit struct {
	items []int
	table bool
}

// units cuts a section at its gutters into strips and groups the strips into columns and tables
// (see the package comment), left to right. A section read in rows throughout is one unit. depth
// is how deep inside columns the section lies.
func (a *arranger) units(section []int, depth int) []unit {
	spans := a.strips(section)
	if len(spans) < 2 {
		return nil
	}
	strips := make([][]int, len(spans))
	for _, i := range section {
		k, _ := slices.BinarySearchFunc(spans, a.boxes[i].X0, func(s span, x float64) int {
			if s.x1 < x {
				return -1
			}
			if s.x0 > x {
				return 1
			}
			return 0
		})
		strips[min(k, len(strips)-1)] = append(strips[min(k, len(strips)-1)], i)
	}
	// Each strip's rows are sorted once: prose, columns, aligned and lined all read them.
	rows := make([][][]int, len(strips))
	prose := make([]bool, len(strips))
	for k, s := range strips {
		rows[k] = a.rows(s)
		prose[k] = a.prose(s, rows[k]) || a.columned(s, depth+1)
	}
	units := []unit{{items: strips[0]}}
	for k := 1; k < len(strips); k++ {
		if a.columns(strips[k-1], rows[k-1], prose[k-1], strips[k], rows[k], prose[k]) {
			units = append(units, unit{items: strips[k]})
			continue
		}
		last := &units[len(units)-1]
		last.items = append(last.items, strips[k]...)
		last.table = true
	}
	if len(units) == 1 {
		return nil
	}
	return units
}

// columns reports whether the gutter between strips l and r (their regions and rows) separates
// columns (read one after the other) rather than a table's columns (read across).
func (a *arranger) columns(l []int, lRows [][]int, lProse bool, r []int, rRows [][]int, rProse bool) bool {
	switch {
	case lProse && rProse:
		return true
	case lProse:
		return len(rRows) >= proseMinRows && (a.aligned(lRows, r) < alignedShare || a.lined(rRows, lRows) < linedShare)
	case rProse:
		return len(lRows) >= proseMinRows && (a.aligned(rRows, l) < alignedShare || a.lined(lRows, rRows) < linedShare)
	}
	return false
}

// columned reports whether the regions idx are mostly columns of their own: a section of them,
// holding at least half of them, splits into columns and no table. Two columns of a page set in
// three, with a box or a worksheet across both of them lower down, are one strip beside the third:
// their rows have a gutter in them, so they are not prose, and their lines keep the third's
// pitch, so they would read as a table's cells beside it, row by row across all three. They are
// read as columns, as prose would be.
func (a *arranger) columned(idx []int, depth int) bool {
	if depth >= maxDepth {
		return false
	}
	for _, s := range a.sections(a.bands(idx)) {
		if 2*len(s) < len(idx) {
			continue
		}
		units := a.units(s, depth)
		if len(units) < 2 {
			return false
		}
		for _, u := range units {
			if u.table {
				return false
			}
		}
		return true
	}
	return false
}

// prose reports whether the regions idx, in rows, read like a column of running text: enough
// rows, wide enough, and most rows filling the width.
func (a *arranger) prose(idx []int, rows [][]int) bool {
	if len(rows) < proseMinRows {
		return false
	}
	x0, x1 := math.Inf(1), math.Inf(-1)
	for _, i := range idx {
		x0, x1 = math.Min(x0, a.boxes[i].X0), math.Max(x1, a.boxes[i].X1)
	}
	w := x1 - x0
	if w < proseMinWidth*a.h {
		return false
	}
	full := 0
	for _, row := range rows {
		// A row of running text has no gutter in it: a label and its amount far to the right
		// span the width too, but they are a table's row.
		if a.box(row).Width() >= proseFull*w && !a.split(row) {
			full++
		}
	}
	return float64(full) >= proseFullShare*float64(len(rows))
}

// aligned is the share of the rows that have a region of o beside them: overlapping the row's
// vertical extent by at least RowOverlap of the smaller height.
//
// A region overlaps a row that much exactly when it covers RowOverlap of the row's height (its
// top at least that far above the row's bottom, its bottom at least that far below the row's
// top), or when RowOverlap of its own height lies within the row (a region taller than the row
// by more than that then covers the row). Both are looked up in o's regions sorted once, so a
// row costs two binary searches, not a pass over o: a strip of thousands of rows beside another
// is not compared region by region.
func (a *arranger) aligned(rows [][]int, o []int) float64 {
	if len(rows) == 0 {
		return 0
	}
	r := a.opt.RowOverlap
	tops := make(reaches, len(o))  // by top, reaching to the bottom
	cores := make(reaches, len(o)) // by where the region's RowOverlap starts, to where it ends
	for k, i := range o {
		b := a.boxes[i]
		t := r * b.Height()
		tops[k] = reach{b.Y0, b.Y1}
		cores[k] = reach{b.Y0 + t, b.Y1 - t}
	}
	tops.sort()
	cores.sort()
	n := 0
	for _, row := range rows {
		rb := a.box(row)
		t := r * rb.Height()
		if tops.any(rb.Y1-t, rb.Y0+t) || cores.any(rb.Y1, rb.Y0) {
			n++
		}
	}
	return float64(n) / float64(len(rows))
}

// reach is an interval of a region's vertical extent: from from to to.
type reach struct{ from, to float64 }

// reaches are intervals sorted by where they start, each one's to raised to the furthest any
// interval starting no later reaches: whether some interval starts by a point and reaches
// another is then one binary search.
type reaches []reach

func (rs reaches) sort() {
	slices.SortFunc(rs, func(p, q reach) int { return cmp.Compare(p.from, q.from) })
	for k := 1; k < len(rs); k++ {
		rs[k].to = math.Max(rs[k].to, rs[k-1].to)
	}
}

// any reports whether an interval starts at or before from and reaches to or beyond to.
func (rs reaches) any(from, to float64) bool {
	k, _ := slices.BinarySearchFunc(rs, from, func(r reach, x float64) int {
		if r.from <= x {
			return -1
		}
		return 1
	})
	return k > 0 && rs[k-1].to >= to
}

// lined is the share of the rows o whose middle is within lineTol text heights of the middle of
// one of the rows p: the nearest middles above and below it, found by binary search.
func (a *arranger) lined(o, p [][]int) float64 {
	if len(o) == 0 {
		return 0
	}
	mids := make([]float64, len(p))
	for k, row := range p {
		b := a.box(row)
		mids[k] = (b.Y0 + b.Y1) / 2
	}
	slices.Sort(mids)
	n := 0
	for _, row := range o {
		b := a.box(row)
		m := (b.Y0 + b.Y1) / 2
		k, _ := slices.BinarySearch(mids, m)
		if k < len(mids) && math.Abs(m-mids[k]) <= lineTol*a.h || k > 0 && math.Abs(m-mids[k-1]) <= lineTol*a.h {
			n++
		}
	}
	return float64(n) / float64(len(o))
}

// box is the box around the regions idx.
func (a *arranger) box(idx []int) Box {
	b := a.boxes[idx[0]]
	for _, i := range idx[1:] {
		b = b.Union(a.boxes[i])
	}
	return b
}

// rows sorts the regions idx into rows, top to bottom, each left to right. Regions are taken by
// the middle of their height (ties in the order given); one joins a row when its vertical extent
// overlaps the row's first region by at least RowOverlap of the smaller height, looking back over
// the last three rows, as a short region can sort between two members of a row.
func (a *arranger) rows(idx []int) [][]int {
	sorted := slices.Clone(idx)
	slices.Sort(sorted)
	mid := func(i int) float64 { return (a.boxes[i].Y0 + a.boxes[i].Y1) / 2 }
	slices.SortStableFunc(sorted, func(i, j int) int { return cmp.Compare(mid(i), mid(j)) })
	var rows [][]int
	for _, i := range sorted {
		b := a.boxes[i]
		joined := false
		for r := len(rows) - 1; r >= 0 && r >= len(rows)-3; r-- {
			f := a.boxes[rows[r][0]]
			ov := math.Min(b.Y1, f.Y1) - math.Max(b.Y0, f.Y0)
			if ov >= a.opt.RowOverlap*math.Min(b.Height(), f.Height()) {
				rows[r] = append(rows[r], i)
				joined = true
				break
			}
		}
		if !joined {
			rows = append(rows, []int{i})
		}
	}
	cx := func(i int) float64 { return (a.boxes[i].X0 + a.boxes[i].X1) / 2 }
	for _, row := range rows {
		slices.SortStableFunc(row, func(i, j int) int { return cmp.Compare(cx(i), cx(j)) })
	}
	return rows
}

// paragraphs cuts a flow into blocks where the gap between two rows is wider than the flow's
// median gap by paragraphGap text heights, or where the text height changes by headingRatio
// into or out of a row that is headingRatio taller or shorter than the flow's usual row.
func (a *arranger) paragraphs(f flow) []Block {
	boxes := make([]Box, len(f))
	for i, row := range f {
		boxes[i] = a.box(row)
	}
	var gaps []float64
	for i := 1; i < len(f); i++ {
		gaps = append(gaps, boxes[i].Y0-boxes[i-1].Y1)
	}
	med := 0.0
	if len(gaps) > 0 {
		s := slices.Clone(gaps)
		slices.Sort(s)
		med = math.Max(0, s[len(s)/2])
	}
	heights := make([]float64, len(boxes))
	for i, b := range boxes {
		heights[i] = b.Height()
	}
	slices.Sort(heights)
	usual := heights[len(heights)/2]
	// off: a row whose height is a heading's or a footnote's against the flow's usual one. A
	// scanner's boxes of one paragraph differ in height by a third (ascenders, descenders, the
	// detector's margin), so two neighbours may differ by headingRatio with neither off.
	off := func(h float64) bool { return h >= headingRatio*usual || h*headingRatio <= usual }
	var blocks []Block
	for i, row := range f {
		if i > 0 {
			prev, cur := boxes[i-1].Height(), boxes[i].Height()
			ratio := math.Max(prev, cur) / math.Max(1e-9, math.Min(prev, cur))
			heading := ratio >= headingRatio && (off(prev) || off(cur))
			if gaps[i-1] <= med+paragraphGap*a.h && !heading {
				b := &blocks[len(blocks)-1]
				b.Rows = append(b.Rows, row)
				b.Box = b.Box.Union(boxes[i])
				continue
			}
		}
		blocks = append(blocks, Block{Box: boxes[i], Rows: [][]int{row}})
	}
	return blocks
}
