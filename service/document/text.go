package document

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/ocrgate/ocrgate/internal/pdfengine"
	"github.com/ocrgate/ocrgate/service/geom"
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
	turn  int // quarter turns of the text, counter-clockwise as displayed
}

// Word is one word of a line: characters between spaces or visible gaps.
type Word struct {
	Text string
	Quad geom.Quad
}

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
func (p *Page) Lines(w, h int) []Line {
	if p.Raster || len(p.chars) == 0 || w <= 0 || h <= 0 {
		return nil
	}
	sx, sy := float64(w)/p.Width, float64(h)/p.Height
	lines := group(p.chars)
	out := make([]Line, 0, len(lines))
	for _, l := range lines {
		var words []Word
		var texts []string
		for _, wd := range l.words {
			words = append(words, Word{Text: wd.text.String(), Quad: quad(wd.box, l.turn, sx, sy)})
			texts = append(texts, wd.text.String())
		}
		out = append(out, Line{Text: strings.Join(texts, " "), Quad: quad(l.box, l.turn, sx, sy), Words: words, turn: l.turn})
	}
	orderLines(out)
	return out
}

// textLine is a line being built, in the text's own frame (u along the baseline, v across it,
// both growing the way the text reads).
type textLine struct {
	turn   int            // quarter turns of the text, counter-clockwise
	u0, u1 float64        // extent along the baseline (frame)
	v0, v1 float64        // extent across it (frame), from the font boxes
	box    pdfengine.Rect // union of glyph boxes, display points
	words  []*textWord
}

type textWord struct {
	text strings.Builder
	box  pdfengine.Rect
}

// group builds lines from the characters in PDFium's order (the order the content draws them,
// which keeps words and lines together even when the page's layout does not).
func group(chars []pdfengine.Char) []*textLine {
	var lines []*textLine
	var cur *textLine
	space := false
	for _, c := range chars {
		if c.Generated || unicode.IsSpace(c.Rune) || c.Rune == 0 && !c.Unmapped {
			space = true
			continue
		}
		box := c.Box
		if box.Empty() {
			box = c.Loose
		}
		font := c.Loose
		if font.Empty() {
			font = box
		}
		if box.Empty() {
			continue
		}
		turn := quarterTurns(c.Angle)
		u0, u1, v0, v1 := frame(font, turn)
		height := v1 - v0
		r := c.Rune
		if c.Unmapped || r == 0 {
			r = unicode.ReplacementChar
		}
		joins := false
		gap := 0.0
		if cur != nil && cur.turn == turn {
			lh := math.Min(height, cur.v1-cur.v0)
			overlap := math.Min(v1, cur.v1) - math.Max(v0, cur.v0)
			gap = u0 - cur.u1
			joins = overlap >= sameLine*lh && gap <= splitGap*math.Max(height, cur.v1-cur.v0) && u1 > cur.u1-0.5*lh
		}
		if !joins {
			cur = &textLine{turn: turn, u0: u0, u1: u1, v0: v0, v1: v1, box: box}
			cur.words = []*textWord{{box: box}}
			lines = append(lines, cur)
		} else {
			if space || gap > wordGap*height {
				cur.words = append(cur.words, &textWord{box: box})
			}
			cur.u1 = math.Max(cur.u1, u1)
			cur.v0, cur.v1 = math.Min(cur.v0, v0), math.Max(cur.v1, v1)
			cur.box = union(cur.box, box)
		}
		wd := cur.words[len(cur.words)-1]
		wd.text.WriteRune(r)
		wd.box = union(wd.box, box)
		space = false
	}
	return lines
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
