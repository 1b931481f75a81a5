package ocr

import (
	"context"
	"image"
	"image/color"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
)

// Vertical text: CJK set in columns, read top to bottom, its characters upright.
//
// The recognizer reads lines left to right. A column turned 90° is such a line, but with every
// character lying on its side, which the recognizer reads less surely than upright ones; and
// the turned line of a page of columns is what a page lying on its side shows too, so turning
// alone cannot tell the two apart. A column is therefore also read unrolled: its characters cut
// apart where a white row separates them and set side by side, each where its middle was along
// the column and still upright, which is a horizontal line of the same characters.

// unrolled cuts the column q of img (corners clockwise from the column's top-left as the image
// shows it) into a height×width line: the column warped upright to width pixels long, its
// characters set side by side (see unroll).
func unrolled(img image.Image, q geom.Quad, width, height int) *image.RGBA {
	w, h := q.Width(), q.Height()
	// The column at the line's scale: its length becomes the line's width.
	cw := max(1, min(height, int(math.Round(float64(width)*w/h))))
	col := imaging.Warp(img, q, cw, width)
	return unroll(col, height)
}

// unroll sets the characters of col, a column of text cw wide and L long, side by side into a
// line height high and L wide: each character keeps its size and stays upright, and its middle
// along the column becomes its middle along the line.
//
// Characters are found from the column's ink: a row with no pixel far from the background
// (the median) is white, runs of inked rows are strokes, and strokes are put together into
// characters as long as the character stays within 1.15 ink widths (the column's ink width is
// its widest character: CJK characters are square), so that the three strokes of 三 make one
// character and two characters never do.
func unroll(col *image.RGBA, height int) *image.RGBA {
	b := col.Bounds()
	L := b.Dy()
	out := image.NewRGBA(image.Rect(0, 0, L, height))
	ink := inkOf(col)
	for i := 0; i < len(out.Pix); i += 4 {
		out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = ink.bg.R, ink.bg.G, ink.bg.B, 255
	}
	if ink.x1 < ink.x0 {
		return out // no ink
	}
	cw := b.Dx()
	size := float64(ink.x1 - ink.x0 + 1)
	cells := characters(ink.rows, size)
	half := height / 2
	mid := (ink.x0 + ink.x1) / 2 // the characters' middle across the column
	reach := int(math.Ceil(0.6 * size))
	centre := func(c span) int { return (c.a + c.b) / 2 }
	for k, c := range cells {
		m := centre(c)
		// Output columns nearer this character's middle than its neighbours', within reach.
		lo, hi := m-reach, m+reach
		if k > 0 {
			lo = max(lo, (m+centre(cells[k-1]))/2+1)
		}
		if k+1 < len(cells) {
			hi = min(hi, (m+centre(cells[k+1]))/2)
		}
		for x := max(0, lo); x <= min(L-1, hi); x++ {
			sx := mid + (x - m)
			if sx < 0 || sx >= cw {
				continue
			}
			for y := range height {
				sy := m + (y - half)
				if sy < c.a || sy > c.b || sy < 0 || sy >= L {
					continue
				}
				so := col.PixOffset(b.Min.X+sx, b.Min.Y+sy)
				do := out.PixOffset(x, y)
				copy(out.Pix[do:do+4], col.Pix[so:so+4])
			}
		}
	}
	return out
}

// columnInk is what a column's pixels say of its ink: its background colour, the ink pixels in
// each row, and the ink's extent across the column (x0 > x1: none).
type columnInk struct {
	bg     color.RGBA
	rows   []int
	x0, x1 int
}

// inkOf finds the ink of col: pixels far from the background, which is the most common shade
// (a median drifts into the ink of a tight box around bold print).
func inkOf(col *image.RGBA) columnInk {
	b := col.Bounds()
	cw, L := b.Dx(), b.Dy()
	res := columnInk{bg: color.RGBA{255, 255, 255, 255}, rows: make([]int, L), x0: cw, x1: -1}
	if cw == 0 || L == 0 {
		return res
	}
	lum := make([]int, cw*L)
	var hist [32]int
	for y := range L {
		for x := range cw {
			o := col.PixOffset(b.Min.X+x, b.Min.Y+y)
			p := col.Pix[o : o+3 : o+3]
			v := (299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000
			lum[y*cw+x] = v
			hist[v/8]++
		}
	}
	mode := 0
	for i, n := range hist {
		if n > hist[mode] {
			mode = i
		}
	}
	sum, n := 0, 0
	for i, v := range lum {
		if v/8 == mode {
			sum += v
			n++
			if n == 1 {
				o := col.PixOffset(b.Min.X+i%cw, b.Min.Y+i/cw)
				res.bg = color.RGBA{col.Pix[o], col.Pix[o+1], col.Pix[o+2], 255}
			}
		}
	}
	bg := sum / n
	far := 0
	for _, v := range lum {
		far = max(far, abs(v-bg))
	}
	delta := max(24, far*3/10)
	for y := range L {
		for x := range cw {
			if abs(lum[y*cw+x]-bg) > delta {
				res.rows[y]++
				res.x0, res.x1 = min(res.x0, x), max(res.x1, x)
			}
		}
	}
	return res
}

// span is a run of rows, a..b inclusive.
type span struct{ a, b int }

// characters finds the characters of a column from its ink per row: runs of inked rows (strokes)
// put together while the character stays within 1.15 sizes, and a run longer than 1.3 sizes
// (characters that touch) cut into as many characters as it is long, each cut at the row with
// the least ink near where it would fall.
func characters(ink []int, size float64) []span {
	var cells []span
	for y := 0; y < len(ink); {
		if ink[y] == 0 {
			y++
			continue
		}
		e := y
		for e+1 < len(ink) && ink[e+1] > 0 {
			e++
		}
		if n := len(cells); n > 0 && float64(e-cells[n-1].a+1) <= 1.15*size {
			cells[n-1].b = e
		} else {
			cells = append(cells, span{y, e})
		}
		y = e + 1
	}
	var out []span
	for _, c := range cells {
		length := float64(c.b - c.a + 1)
		parts := int(math.Round(length / size))
		if length <= 1.3*size || parts < 2 {
			out = append(out, c)
			continue
		}
		a := c.a
		for k := 1; k < parts; k++ {
			ideal := c.a + int(float64(k)*length/float64(parts))
			w := int(0.25 * size)
			cut := ideal
			for y := max(a+1, ideal-w); y <= min(c.b-1, ideal+w); y++ {
				if ink[y] < ink[cut] {
					cut = y
				}
			}
			out = append(out, span{a, cut - 1})
			a = cut
		}
		out = append(out, span{a, c.b})
	}
	return out
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// columnRatio: outside a page of columns, a box at least this many times taller than wide (three
// characters or more) is also read as a column (see plan). Lower, a lone "1" on a receipt would
// be read twice.
const columnRatio = 3.0

// columnCrop plans the crop that reads the box q (corners clockwise from its top-left as the
// image shows it) as a column of upright characters, top to bottom, width pixels long. Its quad
// starts at the column's top-right corner: the corner where a line turned 90° clockwise starts,
// so that its words and its box run down the column.
func columnCrop(q geom.Quad, width int) *crop {
	return &crop{quad: turn(q, 3), width: width, natural: width, vertical: true, column: true}
}

// columnSample is how many of the page's tallest boxes readsColumns looks at, and
// columnChars how many characters of each.
const (
	columnSample = 4
	columnChars  = 3
)

// readsColumns reports whether the page's tall boxes are columns of upright CJK characters (a
// page of vertical text) rather than lines lying on their side (a page turned 90°): both have
// the same shapes, and the recognizer, reading a whole line, reads CJK characters on their side
// about as surely as upright ones. One character alone tells more: the recognizer reads a CJK
// character upright, and also turned a quarter counterclockwise (PaddleOCR turns tall crops so
// before reading them, and the model learned such characters), but not turned a quarter
// clockwise. So a few characters of the tallest boxes (up to columnSample boxes, columnChars
// characters each, cut apart as unroll cuts them) are read as they stand and turned a quarter
// clockwise: upright characters read as CJK as they stand and mostly as nothing or noise turned
// (measured on the test columns: 10.4 against 1.8 summed scores), while characters lying on
// their side read alike both ways (a page turned counterclockwise) or not as they stand (a page
// turned clockwise). Only pages that look sideways pay for this: two dozen one-character crops.
func (p *Pipeline) readsColumns(ctx context.Context, img image.Image, quads []geom.Quad, tm *Timings) (bool, error) {
	var tall []geom.Quad
	for _, q := range quads {
		if w, h := q.Width(), q.Height(); w >= 1 && h >= p.opt.CropRotateRatio*w {
			tall = append(tall, q)
		}
	}
	slices.SortFunc(tall, func(a, b geom.Quad) int { return -cmpFloat(a.Height(), b.Height()) })
	tall = tall[:min(len(tall), columnSample)]
	side := p.opt.RecHeight
	var crops []*crop // pairs: as it stands, turned a quarter clockwise
	for _, q := range tall {
		length := max(1, int(math.Round(float64(side)*q.Height()/q.Width())))
		col := imaging.Warp(img, q, side, length)
		for _, cell := range columnCells(col, columnChars) {
			turned, ok := imaging.Turn(cell, 90).(*image.RGBA)
			if !ok {
				continue
			}
			crops = append(crops, &crop{img: cell, width: side, natural: side}, &crop{img: turned, width: side, natural: side})
		}
	}
	if len(crops) == 0 {
		return false, nil
	}
	order := make([]int, len(crops))
	for i := range order {
		order[i] = i
	}
	if err := p.read(ctx, img, crops, order, tm); err != nil {
		return false, err
	}
	score := func(c *crop) float64 {
		if !mostlyCJK(c.text) {
			return 0
		}
		return float64(c.score)
	}
	var stand, turned float64
	cjk, n := 0, len(crops)/2
	for i := 0; i+1 < len(crops); i += 2 {
		if mostlyCJK(crops[i].text) {
			cjk++
		}
		stand += score(crops[i])
		turned += score(crops[i+1])
	}
	return 2*cjk > n && stand > uprightMargin*turned, nil
}

// uprightMargin: characters stand upright when, read as they stand, they score this many times
// what they score turned a quarter clockwise.
const uprightMargin = 2.0

// columnCells cuts up to n characters out of col, a column of text as wide as the recognizer's
// input is high, each set in a square of that side on the column's background: the characters
// nearest the middle of the column, where a column's first or last (a bracket, a number
// set across) is least likely to be.
func columnCells(col *image.RGBA, n int) []*image.RGBA {
	b := col.Bounds()
	side := b.Dx()
	ink := inkOf(col)
	if ink.x1 < ink.x0 {
		return nil
	}
	cells := characters(ink.rows, float64(ink.x1-ink.x0+1))
	first := max(0, (len(cells)-n)/2)
	var out []*image.RGBA
	for _, c := range cells[first:min(len(cells), first+n)] {
		sq := image.NewRGBA(image.Rect(0, 0, side, side))
		for i := 0; i < len(sq.Pix); i += 4 {
			sq.Pix[i], sq.Pix[i+1], sq.Pix[i+2], sq.Pix[i+3] = ink.bg.R, ink.bg.G, ink.bg.B, 255
		}
		mid := (c.a + c.b) / 2
		for y := range side {
			sy := mid + y - side/2
			if sy < c.a || sy > c.b {
				continue
			}
			so := col.PixOffset(b.Min.X, b.Min.Y+sy)
			copy(sq.Pix[y*sq.Stride:(y+1)*sq.Stride], col.Pix[so:so+4*side])
		}
		out = append(out, sq)
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mostlyCJK reports whether more than half of s's letters are CJK.
func mostlyCJK(s string) bool {
	cjk, n := 0, 0
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		n++
		if isCJK(r) {
			cjk++
		}
	}
	return n > 0 && 2*cjk > n
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// columnGap is the most white, in characters (a column's width), between two boxes or regions
// of one column: a character the detector missed leaves about 1.2 (its height and the space
// after it).
const columnGap = 1.5

// joinColumns joins the boxes of a page of columns that lie one under the other in the same
// column: the detector splits a column where its characters are set apart, and boxes a stroke
// or two of a character on their own (人 read as "-"). Two boxes join when they overlap across
// the column by half the narrower one's width or more, are within twice each other's width (or
// the narrower lies within the other, which is taller than wide: a piece of a column), and the
// white between them is at most columnGap characters (the wider one's width). Joined boxes
// become the box around them; the others are left as they are.
func joinColumns(quads []geom.Quad) []geom.Quad {
	type box struct{ x0, y0, x1, y1 float64 }
	n := len(quads)
	boxes := make([]box, n)
	for i, q := range quads {
		x0, y0, x1, y1 := q.Bounds()
		boxes[i] = box{x0, y0, x1, y1}
	}
	set := newSets(n)
	find := set.find
	for i := range n {
		a := boxes[i]
		aw := a.x1 - a.x0
		for j := i + 1; j < n; j++ {
			b := boxes[j]
			bw := b.x1 - b.x0
			overlap := min(a.x1, b.x1) - max(a.x0, b.x0)
			gap := max(a.y0, b.y0) - min(a.y1, b.y1)
			// Alike in width, or a piece within the width of a column (taller than wide).
			wide, narrow := a, b
			if bw > aw {
				wide, narrow = b, a
			}
			piece := min(wide.x1, narrow.x1)-max(wide.x0, narrow.x0) >= 0.9*(narrow.x1-narrow.x0) &&
				wide.y1-wide.y0 > wide.x1-wide.x0
			if overlap >= 0.5*min(aw, bw) && (max(aw, bw) <= 2*min(aw, bw) || piece) && gap <= columnGap*max(aw, bw) {
				set.union(i, j)
			}
		}
	}
	joined := make(map[int]box)
	count := make(map[int]int)
	for i, b := range boxes {
		r := find(i)
		count[r]++
		if u, ok := joined[r]; ok {
			b = box{min(u.x0, b.x0), min(u.y0, b.y0), max(u.x1, b.x1), max(u.y1, b.y1)}
		}
		joined[r] = b
	}
	out := make([]geom.Quad, 0, len(joined))
	for i, q := range quads {
		r := find(i)
		if count[r] == 1 {
			out = append(out, q)
			continue
		}
		if b, ok := joined[r]; ok { // the first of its column gives the column's box
			delete(joined, r)
			out = append(out, geom.Quad{{X: b.x0, Y: b.y0}, {X: b.x1, Y: b.y0}, {X: b.x1, Y: b.y1}, {X: b.x0, Y: b.y1}})
		}
	}
	return out
}

// stackColumns joins runs of single CJK characters and CJK columns (TopDown regions) stacked one
// under the other (the detector boxes the characters of a loosely set vertical label one by one,
// or a column in pieces) into one region, a column read top to bottom. regions are in the
// upright page's pixels. A region joins the one above when their middles line up within a third
// of the wider, their widths and character sizes are within 1.5 times of each other, and the
// white between them is at most columnGap characters. Only CJK joins (a column of quantities on
// a receipt is digits, each its own row), and only what has nothing beside it on its row within
// two characters (a table's column of units stays in its rows).
func stackColumns(regions []Region) []Region {
	type box struct{ x0, y0, x1, y1 float64 }
	single := func(r Region) bool {
		if r.TopDown {
			return mostlyCJK(r.Text)
		}
		c, n := utf8.DecodeRuneInString(r.Text)
		return n == len(r.Text) && isCJK(c)
	}
	boxes := make([]box, len(regions))
	for i, r := range regions {
		x0, y0, x1, y1 := r.Quad.Bounds()
		boxes[i] = box{x0, y0, x1, y1}
	}
	// alone: no other region shares i's row within two characters of it. A table's column of
	// units (个, 件 under one another) has its quantities and prices close beside it; a
	// vertical label's characters stand apart from the lines around them.
	alone := func(i int) bool {
		a := boxes[i]
		size := min(a.x1-a.x0, a.y1-a.y0)
		for j, b := range boxes {
			if j == i {
				continue
			}
			across := min(a.y1, b.y1) - max(a.y0, b.y0)
			apart := max(a.x0, b.x0) - min(a.x1, b.x1)
			if across > 0.5*min(a.y1-a.y0, b.y1-b.y0) && apart < 2*size {
				return false
			}
		}
		return true
	}
	var idx []int
	for i, r := range regions {
		if single(r) && alone(i) {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return regions
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(boxes[a].y0, boxes[b].y0) })
	next := make(map[int]int) // the character under each
	taken := make(map[int]bool)
	for k, i := range idx {
		a := boxes[i]
		aw, ah := a.x1-a.x0, a.y1-a.y0
		for _, j := range idx[k+1:] {
			b := boxes[j]
			bw, bh := b.x1-b.x0, b.y1-b.y0
			gap := b.y0 - a.y1
			// A character's height, or a column's width.
			ca, cb := min(ah, aw), min(bh, bw)
			if gap > 2*max(ca, cb) {
				break // sorted by top: the ones after are further
			}
			mid := math.Abs((a.x0+a.x1)/2 - (b.x0+b.x1)/2)
			if taken[j] || gap > columnGap*max(ca, cb) || gap < -0.25*min(ca, cb) || mid > max(aw, bw)/3 ||
				max(aw, bw) > 1.5*min(aw, bw) || max(ca, cb) > 1.5*min(ca, cb) {
				continue
			}
			next[i], taken[j] = j, true
			break
		}
	}
	drop := make(map[int]bool)
	for _, i := range idx {
		if taken[i] {
			continue
		}
		if _, ok := next[i]; !ok {
			continue // alone
		}
		col := regions[i]
		b := boxes[i]
		score, n := float64(col.Score), 1
		words := slices.Clone(col.Words)
		for j, ok := next[i]; ok; j, ok = next[j] {
			r := regions[j]
			col.Text += r.Text
			score += float64(r.Score)
			n++
			words = append(words, r.Words...)
			bj := boxes[j]
			b = box{min(b.x0, bj.x0), min(b.y0, bj.y0), max(b.x1, bj.x1), max(b.y1, bj.y1)}
			drop[j] = true
		}
		col.Score = float32(score / float64(n))
		// Clockwise from the column's top-right corner, as a column crop's (see columnCrop).
		col.Quad = geom.Quad{{X: b.x1, Y: b.y0}, {X: b.x1, Y: b.y1}, {X: b.x0, Y: b.y1}, {X: b.x0, Y: b.y0}}
		col.Words = words
		col.Vertical, col.TopDown, col.Flipped = true, true, false
		regions[i] = col
	}
	if len(drop) == 0 {
		return regions
	}
	out := regions[:0]
	for i, r := range regions {
		if !drop[i] {
			out = append(out, r)
		}
	}
	return out
}
