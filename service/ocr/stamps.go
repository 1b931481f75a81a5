package ocr

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Vertical lines on an upright page: a Bates number or a form id set up the margin, a table
// header set sideways. The detector, trained on lines that run across, boxes such a line word by
// word where its words are set apart ("3456", "0012", "BATES" for BATES 0012 3456 running bottom
// to top), and each word read alone is a piece of the line in no reading order. So the words of
// one vertical line are joined into one tall box (joinVertical), read turned both ways (the
// direction classifier reads a 192-px squeeze of a long line no better than chance), and the more
// confident reading is kept; the words read alone stay the answer where they read more surely
// than the joined line (see keepParts), which keeps a table's column of numbers, each in its row,
// as it was.

// A box of a vertical line: at most this much wider than the narrowest of its line (all are one
// line's height across), overlapping across by at least this share of the narrower, and at most
// this many widths of white from the next one down (a word space is about half a line's height,
// and DB's unclipping makes the white between the boxes less).
const (
	stampWidthRatio = 1.6
	stampOverlap    = 0.8
	stampGap        = 1.0
	// stampReach: the joined line reaches this many widths past its end boxes along itself,
	// within the image: the detector finds the words at a vertical line's ends least surely
	// (a last word read as one stray digit), and white past the end reads as nothing.
	stampReach = 0.75
	// stampWord: one of the line's boxes must be a word on its side, at least this many times
	// taller than wide (two or three characters), so that a column of single digits or ticks is
	// never taken for a line; and the joined line must be columnRatio times taller than wide.
	stampWord = 1.8
	// stampChars and stampCharGap: a line whose characters the detector boxed one by one (a
	// typewritten Bates number on its side: "8", "9", "6", each a box) has no word on its side,
	// but its boxes, stampChars or more, stand a letter's space apart, at most stampCharGap of
	// their width, where a table's rows of single digits stand a line's space apart.
	stampChars   = 4
	stampCharGap = 0.5
)

// charStack reports whether the boxes g stand one under the other a letter's space apart (see
// stampChars).
func charStack(boxes []bounds, g []int) bool {
	if len(g) < stampChars {
		return false
	}
	order := slices.Clone(g)
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(boxes[a].y0, boxes[b].y0) })
	for i := 1; i < len(order); i++ {
		a, b := boxes[order[i-1]], boxes[order[i]]
		w := min(a.x1-a.x0, b.x1-b.x0)
		if b.y0-a.y1 > stampCharGap*w {
			return false
		}
	}
	return true
}

// joinVertical joins the boxes of each vertical line of an upright page into one box (see the
// constants above) and returns the boxes, and for each joined one the boxes it was joined from
// (keyed by the joined box). height is the image's.
func joinVertical(quads []geom.Quad, height float64) ([]geom.Quad, map[geom.Quad][]geom.Quad) {
	n := len(quads)
	boxes := make([]bounds, n)
	for i, q := range quads {
		x0, y0, x1, y1 := q.Bounds()
		boxes[i] = bounds{x0, y0, x1, y1}
	}
	set := newSets(n)
	find := set.find
	upright := func(b bounds) bool { return b.x1-b.x0 < 2*(b.y1-b.y0) } // not a line across
	for i := range n {
		a := boxes[i]
		aw := a.x1 - a.x0
		if aw <= 0 || !upright(a) {
			continue
		}
		for j := i + 1; j < n; j++ {
			b := boxes[j]
			bw := b.x1 - b.x0
			if bw <= 0 || !upright(b) || max(aw, bw) > stampWidthRatio*min(aw, bw) {
				continue
			}
			overlap := min(a.x1, b.x1) - max(a.x0, b.x0)
			gap := max(a.y0, b.y0) - min(a.y1, b.y1)
			if overlap >= stampOverlap*min(aw, bw) && gap <= stampGap*max(aw, bw) {
				set.union(i, j)
			}
		}
	}
	groups := make(map[int][]int)
	for i := range n {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	out := make([]geom.Quad, 0, n)
	var parts map[geom.Quad][]geom.Quad
	joined := make(map[int]bool) // groups joined, by their first box
	for i, q := range quads {
		g := groups[find(i)]
		if len(g) < 2 {
			out = append(out, q)
			continue
		}
		if g[0] != i {
			if !joined[g[0]] {
				out = append(out, q) // a member of a group that was not joined
			}
			continue
		}
		u := boxesOf(boxes, g)
		word := false
		for _, k := range g {
			b := boxes[k]
			word = word || b.y1-b.y0 >= stampWord*(b.x1-b.x0)
		}
		line := word || charStack(boxes, g)
		if !line || u[3]-u[1] < columnRatio*(u[2]-u[0]) {
			out = append(out, q)
			continue
		}
		reach := stampReach * (u[2] - u[0])
		j := joinedQuad([4]float64{u[0], max(0, u[1]-reach), u[2], min(height, u[3]+reach)})
		if parts == nil {
			parts = make(map[geom.Quad][]geom.Quad)
		}
		members := make([]geom.Quad, len(g))
		for m, k := range g {
			members[m] = quads[k]
		}
		parts[j] = members
		joined[i] = true
		out = append(out, j)
	}
	return out, parts
}

// bounds is a box's extent in the image.
type bounds struct{ x0, y0, x1, y1 float64 }

// boxesOf is the rectangle around the boxes g: x0, y0, x1, y1.
func boxesOf(boxes []bounds, g []int) [4]float64 {
	u := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, k := range g {
		b := boxes[k]
		u = [4]float64{min(u[0], b.x0), min(u[1], b.y0), max(u[2], b.x1), max(u[3], b.y1)}
	}
	return u
}

func joinedQuad(u [4]float64) geom.Quad {
	return geom.Quad{{X: u[0], Y: u[1]}, {X: u[2], Y: u[1]}, {X: u[2], Y: u[3]}, {X: u[0], Y: u[3]}}
}

// stampMargin is how much more surely, in mean recognition score, the words of a joined
// vertical line must read alone for them to be kept instead of the line.
const stampMargin = 0.05

// keepParts reports whether the pieces of a joined line read better than the line: their mean
// score, weighted by the characters they read (a piece read as nothing weighs one and scores
// nothing), beats the line's by stampMargin.
func keepParts(line *crop, parts []*crop) bool {
	var sum, n float64
	for _, c := range parts {
		k := float64(max(1, len([]rune(c.text))))
		s := float64(c.score)
		if c.text == "" {
			s = 0
		}
		if t := c.turned; t != nil && better(t, c) {
			s = float64(t.score)
		}
		sum += s * k
		n += k
	}
	ls := float64(line.score)
	if line.text == "" {
		ls = 0
	}
	return n > 0 && sum/n > ls+stampMargin
}

// trimStray drops from the reading of a joined vertical line a lone mark at either end set
// apart by a space: what the line's reach past its end boxes (stampReach) read of a speck.
func trimStray(c *crop) {
	stray := func(w string) bool {
		r := []rune(w)
		return len(r) == 1 && !unicode.IsLetter(r[0]) && !unicode.IsDigit(r[0])
	}
	fields := strings.Fields(c.text)
	words := c.words
	if len(words) != len(fields) {
		words = nil
	}
	for len(fields) > 1 && stray(fields[0]) {
		fields = fields[1:]
		if words != nil {
			words = words[1:]
		}
	}
	for len(fields) > 1 && stray(fields[len(fields)-1]) {
		fields = fields[:len(fields)-1]
		if words != nil {
			words = words[:len(words)-1]
		}
	}
	if t := strings.Join(fields, " "); t != strings.Join(strings.Fields(c.text), " ") {
		c.text, c.words = t, words
	}
}
