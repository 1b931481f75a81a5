package docfile

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// Line is one line of a page's text layer: a run of characters on one baseline without a wide
// gap, which is what the OCR detector would box as one region.
type Line struct {
	Text string
	// Quad is the box around the line's glyphs (their ink, from the font outlines), in the pixel
	// space asked for, clockwise from the top-left corner of the text as OCR regions are.
	Quad  geom.Quad
	Words []Word
	Row   int // row in reading order (0-based): lines sharing a row sit side by side
	// Garbled is set on a line whose glyphs cannot all be one line (see garbled): two lines
	// merged letter by letter. Its text is not the page's, whatever a probe of it says.
	Garbled bool
	// ByOCR is set on a line whose text OCR read again in place of the layer's (see
	// TextLayer.Doubted), with Score its confidence; its Words are then the reading's, placed
	// along the line.
	ByOCR bool
	Score float32
	turn  int // quarter turns of the text, counter-clockwise as displayed
}

// Word is one word of a line: characters between spaces or visible gaps.
type Word struct {
	Text string
	Quad geom.Quad
	font string // the font its first character is drawn with
	// parts are its glyphs' texts (a letter with its marks, a ligature's letters, whether its
	// font maps it to a ligature's code or PDFium gives its letters one by one) and cuts where
	// along its box, as a share of the box's length, each one's ink ends; set for words read
	// left to right, for a probe to take a word's first glyphs (see Probes), and for the check
	// to know which letters are one glyph (see Judge).
	parts []string
	cuts  []float64
	// undrawn: the engine drew none of its glyphs (see undrawnGlyph), so the drawing of the
	// page shows nothing of it, whatever a reader's viewer shows.
	undrawn bool
	// size is its line's text height (the font box across the baseline) in the pixel space of
	// Quad: how large the font is drawn, whatever its glyphs' ink (a blank glyph has none).
	size float64
}

// undrawnGlyph reports whether the engine drew nothing for c because its font is not embedded
// and the engine has no outlines for it (see pdfengine.Char.Undrawn). A blank glyph of an
// embedded font is drawn, as nothing: text in such glyphs is hidden like any other.
func undrawnGlyph(c pdfengine.Char) bool { return c.Undrawn && !c.Loose.Empty() }

// The layout thresholds, in units of the line's text height (the font's box).
const (
	// splitGap: a gap wider than this between two glyphs on one baseline splits the line (table
	// columns, label and amount): about five spaces.
	splitGap = 1.2
	// wordGap: a gap wider than this separates words even without a space character.
	wordGap = 0.25
	// sameLine: two glyphs are on one line when their vertical extents overlap by this share of
	// the smaller one.
	sameLine = 0.5
)

// Lines returns the page's text layer as lines in reading order (rows top to bottom, left to
// right within a row), with boxes in a w×h pixel space over the page (the size of its render:
// Page.RenderCost(scale)). It is pure computation over what Document.Page read. Raster pages
// have no text layer and give nil.
//
// The text is what a reader of the page sees, in Unicode's logical order and NFC: characters
// drawn twice over themselves (fake bold) count once; an accent drawn as a glyph of its own over
// a letter (TeX's \"\i: `¨` then `ı`) is that letter's combining mark (`ï`); a right-to-left
// line drawn in visual order is read in logical order (see logical); ligatures and Arabic
// presentation forms are the letters they stand for (`ﬁ` is `fi`).
func (p *Page) Lines(w, h int) []Line {
	if p.Raster || len(p.chars) == 0 || w <= 0 || h <= 0 {
		return nil
	}
	sx, sy := float64(w)/p.Width, float64(h)/p.Height
	lines := group(p.chars)
	out := make([]Line, 0, len(lines))
	for _, l := range lines {
		words := l.words()
		if len(words) == 0 {
			continue
		}
		line := Line{Quad: quad(l.box, l.turn, sx, sy), turn: l.turn, Words: make([]Word, len(words)), Garbled: garbled(l.gl, l.idx)}
		texts := make([]string, len(words))
		size := (l.b1 - l.b0) * sy
		if l.turn%2 != 0 {
			size = (l.b1 - l.b0) * sx
		}
		for i, wd := range words {
			line.Words[i] = Word{Text: wd.text, Quad: quad(wd.box, l.turn, sx, sy), font: wd.font, parts: wd.parts, cuts: wd.cuts, undrawn: wd.undrawn, size: size}
			texts[i] = wd.text
		}
		line.Text = strings.Join(texts, " ")
		out = append(out, line)
	}
	orderLines(out)
	return out
}

// glyph is one character of the text layer placed on the page, in the frame of its text (u
// along the baseline, v across it, both growing the way the text reads).
type glyph struct {
	r      rune
	marks  []rune         // combining marks drawn as glyphs of their own over it
	box    pdfengine.Rect // its ink (its font box where it has none), display points
	turn   int            // quarter turns of the text, counter-clockwise as seen
	u0, u1 float64        // extent along the baseline, from the font box
	v0, v1 float64        // extent across it, from the font box
	i0, i1 float64        // its ink's extent along the baseline
	// space: a space or a line break came before it in the content; prev is the glyph drawn
	// before it (-1: none).
	space bool
	prev  int
	font  string
	gone  bool // a duplicate, or an accent now part of its letter
	// undrawn: the engine drew nothing for it (see undrawnGlyph); box is its font box.
	undrawn bool
}

func (g *glyph) height() float64  { return g.v1 - g.v0 }
func (g *glyph) middle() float64  { return (g.u0 + g.u1) / 2 }
func (g *glyph) vmiddle() float64 { return (g.v0 + g.v1) / 2 }

// textLine is a line being built: its glyphs (indices into the page's), in the text's frame.
type textLine struct {
	gl     []glyph
	idx    []int
	turn   int
	u0, u1 float64
	v0, v1 float64
	// b0, b1 is the line's body across the baseline: the font box of its first glyph (see
	// onBaseline). A glyph joins the line by this band, not by the union of all its
	// glyphs', which grows with every tall glyph until it spans the next line.
	b0, b1 float64
	box    pdfengine.Rect // union of glyph boxes, display points
}

// The limits that keep grouping linear on hostile pages.
const (
	// mergeWindow: a line is compared with at most this many lines that follow it in the order
	// of their bands, when lines drawn apart are joined.
	mergeWindow = 32
	// dupWindow and accentWindow: a glyph is compared with at most this many neighbours along
	// its line, for a duplicate of itself and for the letter an accent sits on.
	dupWindow    = 6
	accentWindow = 3
)

// Thresholds for glyphs drawn over glyphs, in units of the glyph's font box height.
const (
	// dupAlong, dupAcross: a glyph drawn again this close to itself, along and across the
	// baseline, is a duplicate (fake bold draws a line twice, a fraction of a point apart;
	// pdftotext's bounds are 0.1 and 0.2 of the font size). Its inks must also overlap: two
	// of the same letter side by side never do.
	dupAlong  = 0.15
	dupAcross = 0.2
)

// group builds lines from the characters in PDFium's order (the order the content draws them,
// which keeps words and lines together even when the page's layout does not). A character joins
// the line being built when it sits on its baseline within reach of either end: a right-to-left
// line is drawn leftwards, and fake bold draws a run again over itself. Lines drawn apart on one
// baseline are then joined, and each line's glyphs put in order along it.
func group(chars []pdfengine.Char) []*textLine {
	gl := make([]glyph, 0, len(chars))
	var lines []*textLine
	var cur *textLine
	space := false
	font := ""
	for _, c := range chars {
		if c.Font != "" {
			font = c.Font
		}
		if c.Generated || unicode.IsSpace(c.Rune) || c.Rune == 0 && !c.Unmapped {
			space = true
			continue
		}
		box := c.Box
		if box.Empty() {
			box = c.Loose
		}
		fb := c.Loose
		if fb.Empty() {
			fb = box
		}
		if box.Empty() {
			continue
		}
		undrawn := undrawnGlyph(c)
		if undrawn {
			box = fb
		}
		turn := quarterTurns(c.Angle)
		u0, u1, v0, v1 := frame(fb, turn)
		i0, i1, _, _ := frame(box, turn)
		r := c.Rune
		if c.Unmapped || r == 0 {
			r = unicode.ReplacementChar
		}
		g := glyph{r: r, box: box, turn: turn, u0: u0, u1: u1, v0: v0, v1: v1, i0: i0, i1: i1, space: space, prev: len(gl) - 1, font: font, undrawn: undrawn}
		joins := false
		if cur != nil && cur.turn == turn {
			reach := splitGap * math.Max(v1-v0, cur.b1-cur.b0)
			joins = onBaseline(cur.b0, cur.b1, v0, v1) && u0-cur.u1 <= reach && cur.u0-u1 <= reach &&
				!drawnOver(gl, cur.idx, &g)
		}
		gl = append(gl, g)
		if !joins {
			cur = &textLine{turn: turn, u0: u0, u1: u1, v0: v0, v1: v1, b0: v0, b1: v1, box: box}
			lines = append(lines, cur)
		} else {
			cur.u0, cur.u1 = math.Min(cur.u0, u0), math.Max(cur.u1, u1)
			cur.v0, cur.v1 = math.Min(cur.v0, v0), math.Max(cur.v1, v1)
			cur.box = union(cur.box, box)
		}
		cur.idx = append(cur.idx, len(gl)-1)
		space = false
	}
	lines = joinLines(lines, gl)
	for _, l := range lines {
		l.gl = gl
		l.order()
	}
	return splitAtGutters(lines)
}

// joinLines joins a few glyphs of a smaller size within a line's band (a footnote mark, a
// superscript, an index) to that line; then lines that share a baseline and touch or overlap
// along it: a line the content drew in pieces, or drew twice (fake bold of a whole page drawn
// again after it).
func joinLines(lines []*textLine, gl []glyph) []*textLine {
	if len(lines) < 2 {
		return lines
	}
	byBand := slices.Clone(lines)
	slices.SortStableFunc(byBand, func(a, b *textLine) int {
		if c := cmp.Compare(a.turn, b.turn); c != 0 {
			return c
		}
		return cmp.Compare(a.b0+a.b1, b.b0+b.b1)
	})
	pos := make(map[*textLine]int, len(lines)) // each line's place in the page's order
	for i, l := range lines {
		pos[l] = i
	}
	into := make(map[*textLine]*textLine)
	root := func(l *textLine) *textLine {
		r := l
		for into[r] != nil {
			r = into[r]
		}
		// Every line on the way points at the root now: chains stay short on a page of many
		// lines drawn twice.
		for l != r {
			next := into[l]
			into[l] = r
			l = next
		}
		return r
	}
	// merge joins b into a; the line drawn first keeps its place in the page's order, a keeps
	// its body.
	merge := func(a, b *textLine) {
		first, second := a, b
		if pos[b] < pos[a] {
			first, second = b, a
		}
		first.idx = append(first.idx, second.idx...)
		first.u0, first.u1 = math.Min(first.u0, second.u0), math.Max(first.u1, second.u1)
		first.v0, first.v1 = math.Min(first.v0, second.v0), math.Max(first.v1, second.v1)
		first.b0, first.b1 = a.b0, a.b1
		first.box = union(first.box, second.box)
		into[second] = first
	}
	// Marks first: a short line of a smaller size joins the nearest line whose band holds it
	// and whose end it touches, so that the piece drawn after a superscript (`Gal∗+` then
	// `, Brendan`) is within reach of its line below.
	for i, m := range byBand {
		if into[m] != nil || len(m.idx) > markGlyphs {
			continue
		}
		var best *textLine
		bestGap := math.Inf(1)
		for _, l := range byBand[max(0, i-mergeWindow):min(len(byBand), i+mergeWindow+1)] {
			r := root(l)
			if r == m || r.turn != m.turn || !holds(r.b0, r.b1, m.b0, m.b1) {
				continue
			}
			gap := math.Max(m.u0-r.u1, r.u0-m.u1)
			if gap > wordGap*(r.b1-r.b0) || gap >= bestGap {
				continue
			}
			// Beside the line or between two of its glyphs, never on one (a line of its own
			// drawn under a larger one's first letters).
			if clashes, copies := landings(gl, r, m); clashes+copies == 0 {
				best, bestGap = r, gap
			}
		}
		if best != nil {
			merge(best, m)
		}
	}
	// Then pieces: lines on one baseline that touch or overlap along it.
	for i, a := range byBand {
		for _, b := range byBand[i+1 : min(len(byBand), i+1+mergeWindow)] {
			if b.turn != a.turn || (b.b0+b.b1)/2 > a.b1 {
				break
			}
			ra, rb := root(a), root(b)
			if ra == rb {
				continue
			}
			reach := splitGap * math.Max(ra.b1-ra.b0, rb.b1-rb.b0)
			if !onBaseline(ra.b0, ra.b1, rb.b0, rb.b1) || rb.u0-ra.u1 > reach || ra.u0-rb.u1 > reach || clash(gl, ra, rb) {
				continue
			}
			merge(ra, rb)
		}
	}
	if len(into) == 0 {
		return lines
	}
	out := lines[:0]
	for _, l := range lines {
		if into[l] == nil {
			out = append(out, l)
		}
	}
	return out
}

// Thresholds for glyphs on one line, across its baseline (see onBaseline and holds).
const (
	// sameSize: glyphs whose font boxes' heights are within this ratio are of one size: a bold
	// and a regular face of one size, two fonts of slightly different metrics, and the letters of
	// a font whose boxes PDFium takes from their ink ('g' reaching lower than 'n') are.
	sameSize = 0.7
	// sameBand: glyphs of one size are on one baseline when their bands overlap by this share of
	// the shorter: lines set solid (leading = size) overlap by under a fifth, cells stacked half
	// a row apart by half.
	sameBand = 0.7
	// inBand: a glyph of a smaller size is within a line's band when it lies within it give or
	// take this share of the band's height (a superscript, a footnote mark, a subscript); a small
	// line over a large one sticks out of it.
	inBand = 0.3
	// markSize: a run is of a smaller size than its line, a mark that may join it, when its
	// font box is under this share of the line's (a superscript of 8 pt in a 10 pt line is
	// 0.77 of it, one of 7 pt 0.7).
	markSize = 0.85
	// markGlyphs: a run of a smaller size within a line's band joins the line when it holds at
	// most this many glyphs (¹, th, ™, an index); a longer one is a line of its own (a small
	// line drawn beside a large form number, within its band).
	markGlyphs = 3
)

// onBaseline reports whether a glyph (or a line) whose font box spans v0..v1 across the baseline
// is on the line whose body spans b0..b1: of the same size, on the same baseline. Overlap alone
// is not enough: a small line drawn over a large one, or cells stacked half a row apart, overlap
// as much as a superscript does.
func onBaseline(b0, b1, v0, v1 float64) bool {
	h, bh := v1-v0, b1-b0
	small, large := math.Min(h, bh), math.Max(h, bh)
	return small >= sameSize*large && math.Min(v1, b1)-math.Max(v0, b0) >= sameBand*small
}

// holds reports whether a run of a smaller size spanning v0..v1 lies within the band b0..b1.
// Smaller is by markSize, not sameSize: a superscript set at 8 pt in a 10 pt line (tracemonkey's
// affiliation marks, `Gal∗+`) is of neither one size with its line nor on its baseline.
func holds(b0, b1, v0, v1 float64) bool {
	bh := b1 - b0
	return v1-v0 < markSize*bh && v0 >= b0-inBand*bh && v1 <= b1+inBand*bh
}

// overWindow: a glyph is compared with at most this many glyphs drawn before it on its line, for
// one it is drawn over.
const overWindow = 8

// drawnOver reports whether glyph g goes back along a line (idx) and lands on a glyph of another
// letter among its last ones: text drawn over text (an amount printed over the end of its label),
// which is a line of its own, not letters to interleave with the line's. A glyph drawn onwards
// is not, however close (a condensed font's letters overlap), nor one drawn again over itself
// (fake bold), an accent or the letter drawn under it (see order).
func drawnOver(gl []glyph, idx []int, g *glyph) bool {
	if m, _ := combining(g.r); m != 0 || g.middle() >= gl[idx[len(idx)-1]].middle() {
		return false
	}
	over := false
	for k := len(idx) - 1; k >= 0 && k >= len(idx)-overWindow; k-- {
		o := &gl[idx[k]]
		if k == len(idx)-1 && o.box == g.box {
			return false // the next letter of a ligature (see ligature)
		}
		if m, _ := combining(o.r); m != 0 {
			if k == len(idx)-1 {
				return false // the letter under the accent just drawn
			}
			continue
		}
		if o.r == g.r && math.Abs(o.middle()-g.middle()) <= dupAlong*math.Max(o.height(), g.height()) {
			return false
		}
		if covers(o, g) {
			over = true
		}
	}
	return over
}

// covers reports whether glyphs a and b overlap along the baseline by more than half the
// narrower's advance: more than kerning or an italic's overhang ever brings together.
func covers(a, b *glyph) bool {
	w := math.Min(a.u1-a.u0, b.u1-b.u0)
	return w > 0 && math.Min(a.u1, b.u1)-math.Max(a.u0, b.u0) > w/2
}

// clash reports whether lines a and b, on one baseline, are text drawn over text: two of b's
// glyphs or more land on a glyph of another letter of a, and more than on a copy of themselves
// (fake bold drawing a line again). Each glyph of b is compared with the glyphs of a whose
// middles are nearest to its; glyphs drawn one after the other do not clash (a condensed font's
// letters overlap where one piece of a line ends and the next begins).
func clash(gl []glyph, a, b *textLine) bool {
	clashes, copies := landings(gl, a, b)
	return clashes >= 2 && clashes > copies
}

// landings counts the glyphs of line b that land on a glyph of another letter of line a
// (clashes), and those that land on a copy of themselves (copies).
func landings(gl []glyph, a, b *textLine) (clashes, copies int) {
	if math.Min(a.u1, b.u1) <= math.Max(a.u0, b.u0) {
		return 0, 0
	}
	mid := make([]int, len(a.idx))
	copy(mid, a.idx)
	slices.SortFunc(mid, func(x, y int) int { return cmp.Compare(gl[x].middle(), gl[y].middle()) })
	for _, i := range b.idx {
		g := &gl[i]
		if m, _ := combining(g.r); m != 0 || g.u1 < a.u0 || g.u0 > a.u1 {
			continue
		}
		at, _ := slices.BinarySearchFunc(mid, g.middle(), func(x int, m float64) int { return cmp.Compare(gl[x].middle(), m) })
		same, over := false, false
		for k := max(0, at-2); k < min(len(mid), at+2); k++ {
			o := &gl[mid[k]]
			if m, _ := combining(o.r); m != 0 || o.box == g.box || o.prev == i || g.prev == mid[k] {
				continue
			}
			if o.r == g.r && math.Abs(o.middle()-g.middle()) <= dupAlong*math.Max(o.height(), g.height()) {
				same = true
			} else if covers(o, g) {
				over = true
			}
		}
		switch {
		case same:
			copies++
		case over:
			clashes++
		}
	}
	return clashes, copies
}

// order puts the line's glyphs in order along the baseline, drops the duplicates fake bold
// draws, and makes accents drawn over letters the letters' marks.
//
// Glyphs at one place are the letters of one ligature that PDFium gives one by one, in the
// order they are read, each with the ligature's box (lam–khah, ﳋ, is ل then خ). Left to right,
// that order is kept; right to left, it is reversed here, because the line is then read by
// reversing its glyphs (see logical), which must give the ligature's letters back in their
// order, not swapped.
func (l *textLine) order() {
	gl := l.gl
	slices.SortStableFunc(l.idx, func(a, b int) int {
		if c := cmp.Compare(gl[a].middle(), gl[b].middle()); c != 0 {
			return c
		}
		if rightToLeft(gl[a].r) && rightToLeft(gl[b].r) {
			return cmp.Compare(b, a)
		}
		return 0
	})
	kept := l.idx[:0]
	for _, i := range l.idx {
		g := &gl[i]
		for k := len(kept) - 1; k >= 0 && k >= len(kept)-dupWindow; k-- {
			o := &gl[kept[k]]
			h := math.Max(g.height(), o.height())
			if o.r == g.r && math.Abs(o.middle()-g.middle()) <= dupAlong*h &&
				math.Abs(o.vmiddle()-g.vmiddle()) <= dupAcross*h && math.Min(o.i1, g.i1) > math.Max(o.i0, g.i0) &&
				!ligature(gl, kept[k], i) {
				g.gone = true
				break
			}
		}
		if !g.gone {
			kept = append(kept, i)
		}
	}
	l.idx = kept
	for k, i := range l.idx {
		g := &gl[i]
		mark, above := combining(g.r)
		if mark == 0 {
			continue
		}
		// The letter under it: the neighbour whose advance holds the middle of the accent's ink,
		// the nearest to it when two do.
		mid := (g.i0 + g.i1) / 2
		best, bestDist := -1, math.Inf(1)
		for j := max(0, k-accentWindow); j < min(len(l.idx), k+accentWindow+1); j++ {
			b := &gl[l.idx[j]]
			if j == k || b.gone || !unicode.IsLetter(b.r) || mid < b.u0 || mid > b.u1 {
				continue
			}
			if d := math.Abs(b.middle() - mid); d < bestDist {
				best, bestDist = l.idx[j], d
			}
		}
		if best < 0 {
			continue
		}
		b := &gl[best]
		if above {
			// A dotless i or j under an accent is the letter with its dot replaced.
			switch b.r {
			case 'ı':
				b.r = 'i'
			case 'ȷ':
				b.r = 'j'
			}
		}
		b.marks = append(b.marks, mark)
		b.box = union(b.box, g.box)
		g.gone = true
	}
	kept = l.idx[:0]
	for _, i := range l.idx {
		if !gl[i].gone {
			kept = append(kept, i)
		}
	}
	l.idx = kept
}

// ligature reports whether glyphs a and b are two letters of one ligature glyph (ﬀ in
// "différer", where the font's map gives the glyph as "ff"): PDFium gives each letter of it as a
// character of its own, one right after the other, with the ligature's box. Fake bold draws its
// copy apart from the original, in place or in content order, never as the same box at once.
func ligature(gl []glyph, a, b int) bool {
	return (gl[b].prev == a || gl[a].prev == b) && gl[a].box == gl[b].box
}

// garbled reports whether a line's glyphs, in order along it (idx), are two lines or more read
// as one: neighbours drawn over each other and not one after the other (letters of two strings
// landing on one another) or on different baselines (neither of the other's size on its baseline, nor a mark within its
// band), at two places or more and at a tenth of its glyphs or more. It is the check that would
// have caught lines merged by a sort by x ("DUep.aSrt.meInt…" on a tax form): glyphs of one line
// share a baseline and advance one after the other. A line built by group passes it by
// construction; the check stands guard over what group may miss.
func garbled(gl []glyph, idx []int) bool {
	clashes, pairs := 0, 0
	var prev *glyph
	pi := -1
	for _, i := range idx {
		g := &gl[i]
		if m, _ := combining(g.r); m != 0 {
			continue
		}
		if prev != nil {
			pairs++
			switch {
			case covers(prev, g) && prev.r != g.r && prev.box != g.box && g.prev != pi && prev.prev != i:
				clashes++
			case !onBaseline(prev.v0, prev.v1, g.v0, g.v1) && !holds(prev.v0, prev.v1, g.v0, g.v1) &&
				!holds(g.v0, g.v1, prev.v0, prev.v1):
				clashes++
			}
		}
		prev, pi = g, i
	}
	return clashes >= 2 && 20*clashes >= pairs
}

// lineWord is a word of a line, in logical order.
type lineWord struct {
	text    string
	box     pdfengine.Rect
	font    string
	parts   []string
	cuts    []float64
	undrawn bool // none of its glyphs was drawn (see undrawnGlyph)
}

// words splits the line (its glyphs in order along the baseline) into words, at a space the
// content drew between two neighbours or at a gap wider than wordGap, and reads them in logical
// order.
func (l *textLine) words() []lineWord {
	gl := l.gl
	// The line as drawn, left to right along its baseline: glyphs, and -1 between words.
	var seq []int
	for k, i := range l.idx {
		if k > 0 {
			a, b := &gl[l.idx[k-1]], &gl[i]
			h := math.Max(a.height(), b.height())
			if b.u0-a.u1 > wordGap*h || b.space && b.prev == l.idx[k-1] || a.space && a.prev == i {
				seq = append(seq, -1)
			}
		}
		seq = append(seq, i)
	}
	seq, rtl := logical(seq, func(i int) rune { return gl[i].r })
	var out []lineWord
	var text []rune
	var cur lineWord
	var ends []float64 // each part's ink end along the baseline
	partStart := 0     // where the last part starts in text
	leftToRight := true
	flush := func() {
		if len(text) > 0 {
			cur.text = norm.NFC.String(string(text))
			if leftToRight {
				u0, u1, _, _ := frame(cur.box, l.turn)
				cur.cuts = make([]float64, len(ends))
				for k, e := range ends {
					cur.cuts[k] = math.Min(1, math.Max(0, (e-u0)/(u1-u0)))
				}
			} else {
				cur.parts = nil
			}
			out = append(out, cur)
		}
		text, cur, ends, leftToRight = text[:0], lineWord{undrawn: true}, ends[:0], true
	}
	cur.undrawn = true
	for k, i := range seq {
		if i < 0 {
			flush()
			continue
		}
		g := &gl[i]
		r := g.r
		if rtl[k] {
			r = mirror(r)
			leftToRight = false
		}
		if k > 0 && seq[k-1] >= 0 && len(cur.parts) > 0 && ligature(gl, seq[k-1], i) {
			// The next letter of a ligature PDFium gives one by one: one glyph, so one part
			// (a probe is never cut inside it, and its check knows its letters are one glyph).
			text = appendLetters(text, r)
			text = append(text, g.marks...)
			last := len(cur.parts) - 1
			cur.parts[last] = norm.NFC.String(string(text[partStart:]))
			ends[last] = math.Max(ends[last], g.i1)
		} else {
			partStart = len(text)
			text = appendLetters(text, r)
			text = append(text, g.marks...)
			cur.parts = append(cur.parts, norm.NFC.String(string(text[partStart:])))
			ends = append(ends, g.i1)
		}
		if cur.font == "" {
			cur.font = g.font
		}
		cur.undrawn = cur.undrawn && g.undrawn
		cur.box = union(cur.box, g.box)
	}
	flush()
	return out
}

// appendLetters appends r to text, a ligature or a presentation form (ﬁ, an Arabic letter's
// final form) as the letters it stands for: what a reader, a search or a chat model reading the
// text expects, and what OCR reads.
func appendLetters(text []rune, r rune) []rune {
	if r >= 0xFB00 && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF {
		for _, x := range norm.NFKC.String(string(r)) {
			if x != ' ' {
				text = append(text, x)
			}
		}
		return text
	}
	return append(text, r)
}

// combining returns the combining mark a spacing accent (or a combining mark drawn as a glyph of
// its own) stands for when it is drawn over a letter, and whether it sits above the letter; 0
// for anything else.
func combining(r rune) (mark rune, above bool) {
	switch r {
	case '\u00A8':
		return '\u0308', true // diaeresis
	case '\u00B4', '\u02CA':
		return '\u0301', true // acute
	case '`', '\u02CB':
		return '\u0300', true // grave
	case '^', '\u02C6':
		return '\u0302', true // circumflex
	case '~', '\u02DC':
		return '\u0303', true // tilde
	case '\u00AF', '\u02C9':
		return '\u0304', true // macron
	case '\u02D8':
		return '\u0306', true // breve
	case '\u02D9':
		return '\u0307', true // dot above
	case '\u02DA':
		return '\u030A', true // ring above
	case '\u02DD':
		return '\u030B', true // double acute
	case '\u02C7':
		return '\u030C', true // caron
	case '\u00B8':
		return '\u0327', false // cedilla
	case '\u02DB':
		return '\u0328', false // ogonek
	}
	if r >= 0x0300 && r <= 0x036F {
		return r, r < 0x0316 || r > 0x0333 // the marks below are 0316–0333
	}
	return 0, false
}

// quarterTurns rounds a baseline angle (radians, counter-clockwise) to quarter turns, 0..3.
func quarterTurns(a float64) int {
	return ((int(math.Round(a/(math.Pi/2))) % 4) + 4) % 4
}

// frame returns a display-space rectangle's extents in the frame of text turned t quarter turns
// counter-clockwise: u along the reading direction, v from the text's top to its bottom.
func frame(r pdfengine.Rect, t int) (u0, u1, v0, v1 float64) {
	switch t {
	case 1: // reads upwards: u = -y, v = x
		return -r.Y1, -r.Y0, r.X0, r.X1
	case 2: // upside down: u = -x, v = -y
		return -r.X1, -r.X0, -r.Y1, -r.Y0
	case 3: // reads downwards: u = y, v = -x
		return r.Y0, r.Y1, -r.X1, -r.X0
	}
	return r.X0, r.X1, r.Y0, r.Y1
}

// quad turns a display-space rectangle into pixel corners, clockwise from the text's top-left.
func quad(r pdfengine.Rect, turn int, sx, sy float64) geom.Quad {
	x0, y0, x1, y1 := r.X0*sx, r.Y0*sy, r.X1*sx, r.Y1*sy
	tl, tr, br, bl := geom.Point{X: x0, Y: y0}, geom.Point{X: x1, Y: y0}, geom.Point{X: x1, Y: y1}, geom.Point{X: x0, Y: y1}
	switch turn {
	case 1:
		return geom.Quad{bl, tl, tr, br}
	case 2:
		return geom.Quad{br, bl, tl, tr}
	case 3:
		return geom.Quad{tr, br, bl, tl}
	}
	return geom.Quad{tl, tr, br, bl}
}

func union(a, b pdfengine.Rect) pdfengine.Rect {
	if a.Empty() {
		return b
	}
	if b.Empty() {
		return a
	}
	return pdfengine.Rect{X0: math.Min(a.X0, b.X0), Y0: math.Min(a.Y0, b.Y0), X1: math.Max(a.X1, b.X1), Y1: math.Max(a.Y1, b.Y1)}
}

// orderLines sorts lines into reading order and numbers their rows, the way the OCR pipeline
// orders its regions: a line joins a row when it overlaps the row vertically by at least half of
// its height; rows go top to bottom, lines within a row left to right. A line that does not run
// left to right (a margin line turned 90°, a label upside down) is a row of its own, placed by
// its middle: it would otherwise share a row, and so a line of text, with every line it spans.
func orderLines(lines []Line) {
	type span struct{ y0, y1 float64 }
	ext := func(l Line) span {
		_, y0, _, y1 := l.Quad.Bounds()
		return span{y0, y1}
	}
	slices.SortStableFunc(lines, func(a, b Line) int {
		return cmp.Compare(ext(a).y0+ext(a).y1, ext(b).y0+ext(b).y1)
	})
	row := -1
	var band span
	alone := false // the current row is a line that does not run left to right
	for i := range lines {
		s := ext(lines[i])
		h := s.y1 - s.y0
		overlap := math.Min(s.y1, band.y1) - math.Max(s.y0, band.y0)
		level := lines[i].turn == 0
		if row < 0 || alone || !level || overlap < sameLine*math.Min(h, band.y1-band.y0) {
			row++
			band = s
			alone = !level
		} else {
			band = span{math.Min(band.y0, s.y0), math.Max(band.y1, s.y1)}
		}
		lines[i].Row = row
	}
	slices.SortStableFunc(lines, func(a, b Line) int {
		if c := cmp.Compare(a.Row, b.Row); c != 0 {
			return c
		}
		ax, _, _, _ := a.Quad.Bounds()
		bx, _, _, _ := b.Quad.Bounds()
		return cmp.Compare(ax, bx)
	})
}
