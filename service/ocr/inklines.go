package ocr

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/ocrgate/ocrgate/service/geom"
)

// What the detector leaves out. On a 100-dpi typewritten form DB boxes none of a Bates number
// set up the margin in a typewriter face ("00283813", "81186212" on FUNSD's training forms: clear
// lines of eight digits on their side), none of the choices typed as "(   )" before their labels,
// and now and then a lone figure in a table's cell or a "TO:" in a header. So once the detector
// has boxed an upright page, its ink is labelled into connected pieces (inkPieces), and the
// pieces no box covers make boxes of their own:
//
//   - a vertical line (inkLines): pieces a character's height across, one under the other at most
//     their width apart, together at least inkLineRatio times longer than wide; read turned both
//     ways like any vertical line (see stamps.go), and kept only where it reads as a line
//     (inkLineReads): a column of marks, ticks or speckle reads as little, or unsurely;
//   - a run along a row (inkWords): pieces of a character's height side by side, with the points
//     and commas beside them, kept where they read surely as print (inkWordReads);
//   - a typed choice: two level brackets (bracketPair), kept where they read as brackets round at
//     most a mark (readChoice).
const (
	// inkCharMinW, inkCharMaxW: a piece of a vertical line's extent across the column, in the
	// page's median line heights (the height of the characters lying down).
	inkCharMinW = 0.5
	inkCharMaxW = 2.0
	// inkPieceLong: a piece is at most this many times longer than wide (characters touching
	// one another on a fax join into one piece, a rule or a frame's side is longer still);
	// inkPieceSolid: at most this share of its extent is ink (a bar, a blot).
	inkPieceLong  = 6.0
	inkPieceSolid = 0.7
	// inkCharOverlap: two pieces of one column overlap across by this share of the narrower;
	// inkCharWidthRatio: and the wider is at most this many times the narrower.
	inkCharOverlap    = 0.6
	inkCharWidthRatio = 1.5
	// inkCharGap: the most white between two pieces along the column, in the narrower's width
	// (a letter space; a word space on its side is about half a character's height).
	inkCharGap = 1.0
	// inkSmallBox: a box of the detector's under this many line heights each way (one
	// character of a line on its side, found alone) does not hide the ink it covers.
	inkSmallBox = 1.5
	// inkLineRatio: the line is at least this many times longer than wide.
	inkLineRatio = 3.0
	// inkLineScore and inkLineRunes: what a line found from ink must read to be kept.
	inkLineScore = 0.8
	inkLineRunes = 3
	// inkWordMinH, inkWordMaxH, inkWordMaxW: a piece of a run along a row, in line heights;
	// inkWordGap: the most white between two pieces of one run, in the taller one's height;
	// inkBracketGap: the same between the brackets of a typed choice (see bracketPair);
	// inkWordScore: what the run must read at to be kept.
	inkWordMinH   = 0.55
	inkWordMaxH   = 1.6
	inkWordMaxW   = 3.0
	inkWordGap    = 2.0
	inkBracketGap = 3.5
	inkWordScore  = 0.9
	// maxInkLines and maxInkWords bound the lines and the runs one page adds; maxInkRuns the row
	// runs of ink it labels (a page of speckle or a halftone photo has too many to be a page of
	// print, and is not looked at). A run costs at most 64 bytes while the page is labelled (the
	// run, its set, its piece): 8.4 MB at most, let go before the first crop is cut (see
	// cropBytesEstimate).
	maxInkLines = 8
	maxInkWords = 48
	maxInkRuns  = 1 << 17
)

// inkPiece is a connected piece of ink: its extent and how many pixels of it are ink.
type inkPiece struct {
	bounds
	ink int
}

// inkWord is a box found in the page's ink: what it is, its box, and for a typed choice,
// "(   )", its two brackets.
type inkWord struct {
	kind     inkKind
	quad     geom.Quad
	brackets [2]bounds
}

// inkKind is what a crop found from the page's ink is, and so what it must read as to be kept.
type inkKind uint8

const (
	inkNone   inkKind = iota // a box of the detector's
	inkLine                  // a vertical line (inkLineReads)
	inkText                  // a run along a row (inkWordReads)
	inkChoice                // a typed choice's brackets (readChoice)
)

// inkRun is a run of ink along one row, x0 to x1 exclusive.
type inkRun struct{ x0, x1, y int32 }

// inkPieces labels the ink of p (below thr) into 8-connected pieces, from its row runs, and
// returns their extents. It keeps the runs of the page, never a label per pixel, and gives up,
// returning nil, past maxInkRuns.
func inkPieces(p pixels, thr uint8) []inkPiece {
	var runs []inkRun
	set := sets{}
	prev := 0 // the first run of the row above
	for y := p.b.Min.Y; y < p.b.Max.Y; y++ {
		row, step := p.row(y, p.b.Min.X, p.b.Max.X)
		dark := func(i int) bool { return row[i] < thr }
		if step == 4 { // RGBA: the pixel's luma, as lum reads it
			dark = func(i int) bool { return (299*int(row[i])+587*int(row[i+1])+114*int(row[i+2]))/1000 < int(thr) }
		}
		start := len(runs)
		for i := 0; i < len(row); i += step {
			if !dark(i) {
				continue
			}
			x0 := i / step
			for i < len(row) && dark(i) {
				i += step
			}
			runs = append(runs, inkRun{int32(x0), int32(i / step), int32(y)})
			if len(runs) > maxInkRuns {
				return nil
			}
			k := len(set)
			set = append(set, k)
			for j := prev; j < start; j++ {
				// 8-connected: the run above touches this one, corners included.
				if r := runs[j]; r.x1 >= int32(x0) && r.x0 <= runs[k].x1 {
					set.union(j, k)
				}
			}
		}
		prev = start
	}
	at := make([]int32, len(runs)) // a root run's piece, plus one (0: none yet)
	var out []inkPiece
	for i, r := range runs {
		root := set.find(i)
		k := int(at[root]) - 1
		if k < 0 {
			k = len(out)
			at[root] = int32(k + 1)
			out = append(out, inkPiece{bounds: bounds{float64(r.x0), float64(r.y), float64(r.x1), float64(r.y + 1)}})
		}
		b := &out[k]
		b.ink += int(r.x1 - r.x0)
		b.x0, b.y0 = min(b.x0, float64(r.x0)), min(b.y0, float64(r.y))
		b.x1, b.y1 = max(b.x1, float64(r.x1)), max(b.y1, float64(r.y+1))
	}
	return out
}

// inkLines returns boxes for the vertical lines of p's ink that none of quads covers (see
// above), at most maxInkLines, and the runs along a row (see inkWords).
func inkLines(p pixels, thr uint8, quads []geom.Quad) (lines []geom.Quad, words []inkWord) {
	var hs []float64
	boxes := make([]bounds, len(quads))
	for i, q := range quads {
		x0, y0, x1, y1 := q.Bounds()
		boxes[i] = bounds{x0, y0, x1, y1}
		if x1-x0 >= 2*(y1-y0) {
			hs = append(hs, y1-y0)
		}
	}
	if len(hs) == 0 {
		return nil, nil
	}
	slices.Sort(hs)
	lh := hs[len(hs)/2]
	hidden := func(b bounds) bool {
		cx, cy := (b.x0+b.x1)/2, (b.y0+b.y1)/2
		return slices.ContainsFunc(boxes, func(q bounds) bool { return cx >= q.x0 && cx <= q.x1 && cy >= q.y0 && cy <= q.y1 })
	}
	covered := func(b bounds) bool {
		cx, cy := (b.x0+b.x1)/2, (b.y0+b.y1)/2
		return slices.ContainsFunc(boxes, func(q bounds) bool {
			small := q.x1-q.x0 < inkSmallBox*lh && q.y1-q.y0 < inkSmallBox*lh
			return !small && cx >= q.x0 && cx <= q.x1 && cy >= q.y0 && cy <= q.y1
		})
	}
	var chars, alone, small []bounds
	pieces := inkPieces(p, thr)
	for _, pc := range pieces {
		b := pc.bounds
		w, h := b.x1-b.x0, b.y1-b.y0
		switch {
		case w > inkWordMaxW*lh || h > inkWordMaxH*lh:
		case h < inkWordMinH*lh:
			if pc.ink >= 2 && h <= 0.3*lh && w <= 0.6*lh && !hidden(b) {
				small = append(small, b) // a point, a comma, a hyphen
			}
		case float64(pc.ink) <= inkPieceSolid*w*h && !hidden(b):
			alone = append(alone, b)
		}
	}
	for _, pc := range pieces {
		b := pc.bounds
		w, h := b.x1-b.x0, b.y1-b.y0
		if w < inkCharMinW*lh || w > inkCharMaxW*lh || h < 2 || h > inkPieceLong*w {
			continue
		}
		if float64(pc.ink) > inkPieceSolid*w*h || covered(b) {
			continue
		}
		chars = append(chars, b)
	}
	slices.SortFunc(chars, func(a, b bounds) int { return cmp.Compare(a.y0, b.y0) })
	set := newSets(len(chars))
	for i, a := range chars {
		aw := a.x1 - a.x0
		for j := i + 1; j < len(chars); j++ {
			b := chars[j]
			bw := b.x1 - b.x0
			if b.y0-a.y1 > inkCharGap*inkCharMaxW*lh {
				break // sorted by top: every later piece starts lower still
			}
			narrow := min(aw, bw)
			if max(aw, bw) > inkCharWidthRatio*narrow || min(a.x1, b.x1)-max(a.x0, b.x0) < inkCharOverlap*narrow {
				continue
			}
			if gap := b.y0 - a.y1; gap <= inkCharGap*narrow {
				set.union(i, j)
			}
		}
	}
	groups := make(map[int][]int)
	var roots []int // in the order of their first piece, so that the lines come out in one order
	for i := range chars {
		r := set.find(i)
		if groups[r] == nil {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	for _, r := range roots {
		g := groups[r]
		u := boxesOf(chars, g)
		w := u[2] - u[0]
		if u[3]-u[1] < inkLineRatio*w {
			continue
		}
		// A little white around the line, as DB's unclipping leaves around the lines it finds.
		padX, padY := 0.15*w, 0.3*w
		b := p.b
		lines = append(lines, joinedQuad([4]float64{
			max(float64(b.Min.X), u[0]-padX), max(float64(b.Min.Y), u[1]-padY),
			min(float64(b.Max.X), u[2]+padX), min(float64(b.Max.Y), u[3]+padY),
		}))
	}
	// The longest first, when a page has more than its share.
	slices.SortStableFunc(lines, func(a, b geom.Quad) int { return cmpFloat(b.Height(), a.Height()) })
	return lines[:min(len(lines), maxInkLines)], inkWords(p, alone, small, boxes)
}

// inkWords groups pieces of ink no box covers, each of a character's height, into the runs along
// a row they make, and returns a box for each run that stays clear of the detector's boxes.
func inkWords(p pixels, alone, small, boxes []bounds) []inkWord {
	slices.SortFunc(alone, func(a, b bounds) int { return cmp.Compare(a.x0, b.x0) })
	set := newSets(len(alone))
	for i, a := range alone {
		for j := i + 1; j < len(alone); j++ {
			b := alone[j]
			h := max(a.y1-a.y0, b.y1-b.y0)
			gap := inkWordGap
			if bracketPair(a, b) {
				gap = inkBracketGap
			}
			if b.x0-a.x1 > gap*h {
				if b.x0-a.x1 > inkBracketGap*inkWordMaxH*h {
					break
				}
				continue
			}
			if min(a.y1, b.y1)-max(a.y0, b.y0) >= 0.5*min(a.y1-a.y0, b.y1-b.y0) {
				set.union(i, j)
			}
		}
	}
	groups := make(map[int][]int)
	var roots []int
	for i := range alone {
		r := set.find(i)
		if groups[r] == nil {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	var words []inkWord
	for _, r := range roots {
		g := groups[r]
		u := boxesOf(alone, g)
		// The points, commas and hyphens of the run, too small to be pieces of it: within its
		// rows and a little way past its ends.
		reach := 0.6 * (u[3] - u[1])
		for _, b := range small {
			if cy := (b.y0 + b.y1) / 2; cy >= u[1] && cy <= u[3] && b.x0 >= u[0]-reach && b.x1 <= u[2]+reach {
				u = [4]float64{min(u[0], b.x0), u[1], max(u[2], b.x1), u[3]}
			}
		}
		w, h := u[2]-u[0], u[3]-u[1]
		padX, padY := max(0.3*h, (h-w)/2+0.1*h), 0.2*h
		q := bounds{max(float64(p.b.Min.X), u[0]-padX), max(float64(p.b.Min.Y), u[1]-padY),
			min(float64(p.b.Max.X), u[2]+padX), min(float64(p.b.Max.Y), u[3]+padY)}
		area := (q.x1 - q.x0) * (q.y1 - q.y0)
		if slices.ContainsFunc(boxes, func(b bounds) bool {
			iw, ih := min(b.x1, q.x1)-max(b.x0, q.x0), min(b.y1, q.y1)-max(b.y0, q.y0)
			return iw > 0 && ih > 0 && iw*ih > 0.2*area
		}) {
			continue
		}
		wd := inkWord{kind: inkText, quad: joinedQuad([4]float64{q.x0, q.y0, q.x1, q.y1})}
		if len(g) == 2 && bracketPair(alone[g[0]], alone[g[1]]) {
			wd.kind, wd.brackets = inkChoice, [2]bounds{alone[g[0]], alone[g[1]]}
		}
		words = append(words, wd)
		if len(words) == maxInkWords {
			break
		}
	}
	return words
}

// bracketPair reports whether a and b could be the two brackets of a choice typed "(   )": both
// narrow, as tall as each other and level.
func bracketPair(a, b bounds) bool {
	ha, hb := a.y1-a.y0, b.y1-b.y0
	narrow := func(x bounds, h float64) bool { return x.x1-x.x0 <= 0.5*h }
	return narrow(a, ha) && narrow(b, hb) && max(ha, hb) <= 1.25*min(ha, hb) && abs(int(a.y0-b.y0)) <= int(0.2*max(ha, hb))+1
}

// inkChoiceScore: what a typed choice must read at, its brackets being known from their shapes.
const inkChoiceScore = 0.5

// readChoice keeps the reading of a typed choice, "(   )" or "( X )", when the recognizer reads
// brackets around at most a mark: an empty one (or one with a speck in it) is written "( )", its
// brackets apart as the page sets them, with a word for each.
func readChoice(c *crop, w inkWord) bool {
	t := strings.TrimSpace(c.text)
	if c.score < inkChoiceScore || !strings.HasPrefix(t, "(") || !strings.HasSuffix(t, ")") || len(t) < 2 {
		return false
	}
	inner := strings.TrimSpace(t[1 : len(t)-1])
	if len([]rune(inner)) > 1 {
		return false
	}
	if strings.ContainsAny(inner, ".,'`·") {
		inner = "" // a fax's speck between the brackets, no mark
	}
	if inner != "" {
		c.text = t
		return true
	}
	c.text = "( )"
	c.words = nil
	for k, b := range w.brackets {
		q := joinedQuad([4]float64{b.x0, b.y0, b.x1, b.y1})
		c.words = append(c.words, Word{Text: string("()"[k]), Score: c.score, Quad: q})
	}
	return true
}

// inkWordReads reports whether a run found from ink read as print: surely, as something that
// is not CJK, and not as one letter a check box's frame reads as.
func inkWordReads(c *crop) bool {
	t := strings.TrimSpace(c.text)
	if t == "" || c.score < inkWordScore || hasCJK(t) {
		return false
	}
	rs := []rune(t)
	return len(rs) > 1 || unicode.IsDigit(rs[0]) && rs[0] != '0'
}

// inkLineReads reports whether a line found from ink read as a line: surely, and as inkLineRunes
// letters or digits or more, none of them CJK (a column of dashes on its side reads "二二二").
func inkLineReads(c *crop) bool {
	n := 0
	for _, r := range c.text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return c.score >= inkLineScore && n >= inkLineRunes && !hasCJK(c.text)
}
