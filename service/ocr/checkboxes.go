package ocr

import (
	"context"
	"image"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
)

// Check boxes: the small square frames a form puts before its choices.
//
// The recognizer has no class for a check box, so it reads one as the nearest thing it knows,
// glued to the label beside it: "口P.O.", "DXOTHER", "O CORN OIL", or it drops the label's first
// letter into the frame. On FUNSD's training forms, 123 of the truth's words are check boxes
// (written ☐ and ☑ there), and most of the labels beside them read wrong.
//
// So a page's check boxes are found from its pixels, after its lines are read: a square of ink
// (sides checkBoxMinSide–checkBoxMaxSide times the page's median line height, and at least
// checkBoxMinPixels), each side at least checkBoxCover inked, three of its corners ink, its frame
// thin, nothing touching it from outside (checkBoxRing), blank before it for 0.6 of its width
// and two columns after it, taller than the print after it (checkBoxOverPrint), and its inside
// not filled (a bullet). A square whose inside holds ink (checkBoxMarkedShare of it or more: an
// X, a tick) with no bar across it (a B, an E) is marked. Each becomes a region of its own, "☐"
// or "☑" (U+2610, U+2611, as FUNSD writes them), and a line the square lies in is read again
// with the square painted out, so the label reads alone.
//
// At 100 dpi a box is the size of a capital, and a bold O, D, B or Q at a word's start is a
// square too: the gaps around it and the print's height after it are what tell them apart, and
// they are set for precision. Measured against FUNSD's 123 check boxes in its 149 training forms
// (the median truth word's height standing in for the line height): 26 found, 12 squares found
// that the truth has no box for (some of them real boxes it left out), 97 not found, most of
// them boxes whose mark runs over the frame or whose label touches it.
//
// A square inside a line that reads CJK (other than the square itself, read as 口 or, marked, as
// 区) is left alone: there it is likely the character 口.
const (
	checkBoxMinSide   = 0.5
	checkBoxMaxSide   = 1.9
	checkBoxMinPixels = 6
	checkBoxCover     = 0.85
	// checkBoxRing is the most of the ring two pixels outside the frame that may be ink: a
	// letter set close beside a box, or a mark's stroke past the frame, touches it at a few
	// pixels, a table's rule at many.
	checkBoxRing = 0.25
	// checkBoxMarkedShare is the least of the inside, within the frame, that is ink for a mark;
	// checkBoxFilledShare the most before the square is a filled block, not a box.
	checkBoxMarkedShare = 0.08
	checkBoxFilledShare = 0.8
	// checkBoxOverPrint is how many times as tall as the print after it a box is at least.
	checkBoxOverPrint = 1.12
	// checkBoxWideMax, checkBoxWideMin, checkBoxWideInk, checkBoxWideLine: an empty box may be
	// wider than tall (a date's box, a field's frame left blank): up to checkBoxWideMax line
	// heights wide and as little as checkBoxWideMin of its width tall, kept only with at most
	// checkBoxWideInk of its inside inked, since a wide frame with print in it is a field, not a
	// choice, and only at least checkBoxWideLine of a line tall (a zero lying on its side in a
	// margin stamp is a short wide frame).
	checkBoxWideMax  = 5.5
	checkBoxWideMin  = 0.25
	checkBoxWideInk  = 0.02
	checkBoxWideLine = 0.8
	// maxCheckBoxes bounds the squares one page keeps (and the pixels saved to paint them out).
	maxCheckBoxes = 400
)

// Check box readings.
const (
	checkBoxEmpty  = "☐"
	checkBoxMarked = "☑"
)

// checkBox is one check box found on a page.
type checkBox struct {
	r      image.Rectangle // the frame, its outer edge
	marked bool
	cover  float64 // the least inked share of the four sides
}

// pixels is a read and paint view of a decoded page's luminance: the page types the decoder
// gives, each through its own plane, with no copy of the page.
type pixels struct {
	img image.Image
	b   image.Rectangle
}

// newPixels returns the view of img, or false for an image type it does not know.
func newPixels(img image.Image) (pixels, bool) {
	switch img.(type) {
	case *image.Gray, *image.RGBA, *image.NRGBA, *image.YCbCr:
		return pixels{img: img, b: img.Bounds()}, true
	}
	return pixels{}, false
}

// lum is the luminance at (x, y), which must lie in the image.
func (p pixels) lum(x, y int) uint8 { return imaging.Luma(p.img, x, y) }

// row is the bytes of row y from x0 to x1 (exclusive) of the plane lum reads, and the bytes a
// pixel takes there.
func (p pixels) row(y, x0, x1 int) ([]byte, int) {
	switch m := p.img.(type) {
	case *image.Gray:
		i := m.PixOffset(x0, y)
		return m.Pix[i : i+(x1-x0)], 1
	case *image.YCbCr:
		i := m.YOffset(x0, y)
		return m.Y[i : i+(x1-x0)], 1
	case *image.RGBA:
		i := m.PixOffset(x0, y)
		return m.Pix[i : i+4*(x1-x0)], 4
	case *image.NRGBA:
		i := m.PixOffset(x0, y)
		return m.Pix[i : i+4*(x1-x0)], 4
	}
	return nil, 1
}

// paintOut paints rects white and returns what puts their pixels back.
func (p pixels) paintOut(rects []image.Rectangle) (restore func()) {
	type saved struct {
		y, x0, x1 int
		bytes     []byte
	}
	var keep []saved
	for _, r := range rects {
		r = r.Intersect(p.b)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			px, n := p.row(y, r.Min.X, r.Max.X)
			keep = append(keep, saved{y, r.Min.X, r.Max.X, slices.Clone(px)})
			for i := range px {
				if n == 1 || i%4 != 3 { // alpha stays
					px[i] = 255
				}
			}
		}
	}
	return func() {
		for _, s := range slices.Backward(keep) {
			px, _ := p.row(s.y, s.x0, s.x1)
			copy(px, s.bytes)
		}
	}
}

// inkThreshold is Otsu's threshold over a sample of the page's luminance: below it is ink.
func (p pixels) inkThreshold() uint8 {
	var hist [256]int
	step := max(1, (p.b.Dx()*p.b.Dy())/250_000)
	n := 0
	for y := p.b.Min.Y; y < p.b.Max.Y; y += step {
		for x := p.b.Min.X + (y % step); x < p.b.Max.X; x += step {
			hist[p.lum(x, y)]++
			n++
		}
	}
	var sum float64
	for v, c := range hist {
		sum += float64(v * c)
	}
	var sumB, best float64
	wB := 0
	thr := 128
	for v := range 256 {
		wB += hist[v]
		if wB == 0 {
			continue
		}
		wF := n - wB
		if wF == 0 {
			break
		}
		sumB += float64(v * hist[v])
		mB, mF := sumB/float64(wB), (sum-sumB)/float64(wF)
		if between := float64(wB) * float64(wF) * (mB - mF) * (mB - mF); between > best {
			best, thr = between, v+1
		}
	}
	return uint8(min(thr, 200))
}

// findCheckBoxes returns the check boxes of the page p (see above), lineHeight its median line
// height in pixels. It reads the page row by row and keeps nothing page-sized.
func findCheckBoxes(p pixels, lineHeight float64) []checkBox {
	lo := max(checkBoxMinPixels, int(checkBoxMinSide*lineHeight))
	hi := int(checkBoxMaxSide*lineHeight + 0.5)
	wideHi := int(checkBoxWideMax*lineHeight + 0.5)
	if hi < lo || p.b.Dx() < lo+2 || p.b.Dy() < lo+2 {
		return nil
	}
	thr := p.inkThreshold()
	ink := func(x, y int) bool {
		return image.Pt(x, y).In(p.b) && p.lum(x, y) < thr
	}
	var found []checkBox
	taken := func(x, y int) bool {
		for _, c := range found {
			// A box's bottom edge may be the top edge of the box under it (a stack of choices
			// drawn as one grid).
			if image.Pt(x, y).In(c.r) && y < c.r.Max.Y-1 {
				return true
			}
		}
		return false
	}
	for y := p.b.Min.Y + 1; y < p.b.Max.Y-lo; y++ {
		x := p.b.Min.X
		for x < p.b.Max.X {
			if !ink(x, y) {
				x++
				continue
			}
			// A run of ink along the row. Single-pixel breaks are not bridged: that joins the
			// tops of an E and the I beside it into one square.
			x0 := x
			for x < p.b.Max.X && ink(x, y) {
				x++
			}
			x1 := x // exclusive
			if l := x1 - x0; l >= lo && l <= wideHi && !taken(x0, y) && !taken(x1-1, y) {
				if c, ok := squareAt(ink, x0, x1, y, lo, hi, lineHeight); ok {
					found = append(found, c)
					if len(found) == maxCheckBoxes {
						return found
					}
				}
			}
		}
	}
	return found
}

// squareAt checks for a check box whose top edge is the run of ink x0..x1 (exclusive) on row y.
func squareAt(ink func(x, y int) bool, x0, x1, y, lo, hi int, lineHeight float64) (checkBox, bool) {
	w := x1 - x0
	rowCover := func(yy int) float64 {
		n := 0
		for x := x0; x < x1; x++ {
			if ink(x, yy) {
				n++
			}
		}
		return float64(n) / float64(w)
	}
	colCover := func(xx, ya, yb int) float64 { return float64(colInk(ink, xx, ya, yb)) / float64(yb-ya+1) }
	// The top edge: the first covered row (a blurred edge's lighter row above it may be
	// partly ink).
	if rowCover(y-1) >= checkBoxCover {
		return checkBox{}, false
	}
	tTop := 0
	for tTop < max(2, w/4)+1 && rowCover(y+tTop) >= checkBoxCover {
		tTop++
	}
	if tTop == 0 || tTop > max(2, w/4) {
		return checkBox{}, false
	}
	// The bottom edge: the last row of a band of covered rows, with nothing just below.
	minH, maxH := max(lo, int(checkBoxWideMin*float64(w))), min(hi, int(1.33*float64(w)+1))
	bottom := -1
	for yb := y + minH - 1; yb <= y+maxH-1; yb++ {
		if rowCover(yb) >= checkBoxCover && rowCover(yb+1) < checkBoxCover {
			bottom = yb
			break
		}
	}
	if bottom < 0 {
		return checkBox{}, false
	}
	tBot := 0
	for tBot < max(2, w/4)+1 && rowCover(bottom-tBot) >= checkBoxCover {
		tBot++
	}
	// The sides: the best-covered column within the frame's thickness at each end.
	t := max(tTop, tBot)
	// A blurred side may stand one pixel outside the top edge's run.
	side := func(from, dir int) (best float64, th, edge int) {
		edge = from
		covered := false
		for k := -1; k <= t; k++ {
			c := colCover(from+dir*k, y, bottom)
			best = max(best, c)
			if c >= checkBoxCover {
				// The outermost covered column is the edge; th, counted from `from`, is
				// 0 for a side standing wholly outside the run, so it cannot say whether
				// one was found.
				if !covered {
					edge, covered = from+dir*k, true
				}
				th = k + 1
			}
		}
		return best, th, edge
	}
	left, tl, xl := side(x0, 1)
	right, tr, xr := side(x1-1, -1)
	x0, x1 = min(x0, xl), max(x1, xr+1)
	cover := min(left, right, rowCover(y), rowCover(bottom))
	if left < checkBoxCover || right < checkBoxCover {
		return checkBox{}, false
	}
	t = max(t, tl, tr)
	h := bottom - y + 1
	wide := 4*h < 3*w
	if !wide && w > hi || wide && float64(h) < checkBoxWideLine*lineHeight {
		return checkBox{}, false
	}
	// Square corners: a frame's corners are ink where a rounded glyph's (O, 0, D) are not.
	corners := 0
	for _, c := range [4]image.Point{{x0, y}, {x1 - 1, y}, {x0, bottom}, {x1 - 1, bottom}} {
		if ink(c.X, c.Y) {
			corners++
		}
	}
	if corners < 3 {
		return checkBox{}, false
	}
	if t > max(2, min(w, h)/4) {
		return checkBox{}, false
	}
	// Nothing touches it from outside: the ring two pixels out (past a blurred edge) is mostly
	// blank.
	ringInk, ringN := 0, 0
	for x := x0 - 2; x <= x1+1; x++ {
		ringN += 2
		if ink(x, y-2) {
			ringInk++
		}
		if ink(x, bottom+2) {
			ringInk++
		}
	}
	for yy := y - 1; yy <= bottom+1; yy++ {
		ringN += 2
		if ink(x0-2, yy) {
			ringInk++
		}
		if ink(x1+1, yy) {
			ringInk++
		}
	}
	if float64(ringInk) > checkBoxRing*float64(ringN) {
		return checkBox{}, false
	}
	// Blank before it, 0.6 of a box's width: a box stands apart from what precedes it, where
	// an O or a 0 of the same size stands within its word at the letters' spacing. No letter
	// is as wide as a wide box: two blank columns before it are enough there, and its label may
	// stand close before it.
	before := x0 - 2 - (3*w)/5
	if wide {
		before = x0 - 4
	}
	for x := before; x < x0-2; x++ {
		if colInk(ink, x, y, bottom) >= 2 {
			return checkBox{}, false
		}
	}
	// Two blank columns after it: a label is set apart from its box, where the next letter of a
	// word starting with a capital D, B or Q follows one column after it.
	for x := x1; x < x1+2; x++ {
		if colInk(ink, x, y+1, bottom-1) >= 2 {
			return checkBox{}, false
		}
	}
	// Taller than the print beside it: a box is drawn at least a little taller than the
	// capitals of its label, where an O or a 0 is as tall as the letters it stands among.
	if th := printHeightAfter(ink, x1+1, y, bottom, w); !wide && th > 0 && float64(h) < checkBoxOverPrint*float64(th) {
		return checkBox{}, false
	}
	// The inside, one pixel in from the frame: empty, marked, or filled (no box).
	inInk, inN := 0, 0
	for yy := y + t + 1; yy < bottom-t; yy++ {
		for x := x0 + t + 1; x < x1-1-t; x++ {
			inN++
			if ink(x, yy) {
				inInk++
			}
		}
	}
	share := 0.0
	if inN > 0 {
		share = float64(inInk) / float64(inN)
	}
	if share >= checkBoxMarkedShare && crossBar(ink, x0+t+1, y+t+1, x1-1-t, bottom-t) {
		// A bar from side to side inside: a B, an E, an 8, an A, not a mark.
		return checkBox{}, false
	}
	if share > checkBoxFilledShare || wide && share > checkBoxWideInk {
		return checkBox{}, false
	}
	return checkBox{r: image.Rect(x0, y, x1, bottom+1), marked: share >= checkBoxMarkedShare, cover: cover}, true
}

// printHeightAfter is the height of the ink that follows a square (rows y..bottom, w wide)
// from column x: the rows the first ink within 3w columns spans, over up to 1.5w columns, in a
// band half the square's height above and below it; 0 where nothing follows.
func printHeightAfter(ink func(x, y int) bool, x, y, bottom, w int) int {
	h := bottom - y + 1
	top, end := y-h/2, bottom+h/2
	first := -1
	for xx := x; xx < x+3*w && first < 0; xx++ {
		if colInk(ink, xx, y, bottom) >= 2 {
			first = xx
		}
	}
	if first < 0 {
		return 0
	}
	lo, hi := end+1, top-1
	for yy := top; yy <= end; yy++ {
		n := 0
		for xx := first; xx < first+(3*w)/2; xx++ {
			if ink(xx, yy) {
				n++
			}
		}
		if n >= 2 { // a fax's lone speckle is no print
			lo, hi = min(lo, yy), max(hi, yy)
		}
	}
	if hi < lo {
		return 0
	}
	return hi - lo + 1
}

// crossBar reports whether a row or a column of the inside x0..x1, y0..y1 (exclusive) is inked
// across three quarters of it or more: a letter's bar, where a mark (an X, a tick) crosses the
// inside on a slant.
func crossBar(ink func(x, y int) bool, x0, y0, x1, y1 int) bool {
	if x1 <= x0 || y1 <= y0 {
		return false
	}
	for y := y0; y < y1; y++ {
		n := 0
		for x := x0; x < x1; x++ {
			if ink(x, y) {
				n++
			}
		}
		if 4*n >= 3*(x1-x0) && x1-x0 >= 2 {
			return true
		}
	}
	for x := x0; x < x1; x++ {
		n := 0
		for y := y0; y < y1; y++ {
			if ink(x, y) {
				n++
			}
		}
		if 4*n >= 3*(y1-y0) && y1-y0 >= 2 {
			return true
		}
	}
	return false
}

// colInk counts the ink of column x from row y0 to y1 (inclusive). Gaps are judged by columns of
// two or more: a fax's lone speckle is no print.
func colInk(ink func(x, y int) bool, x, y0, y1 int) int {
	n := 0
	for y := y0; y <= y1; y++ {
		if ink(x, y) {
			n++
		}
	}
	return n
}

// medianLineHeight is the median height of the page's horizontal crops' boxes; 0 without any.
func medianLineHeight(crops []*crop) float64 {
	var hs []float64
	for _, c := range crops {
		if !c.vertical && !c.column {
			hs = append(hs, c.quad.Height())
		}
	}
	if len(hs) == 0 {
		return 0
	}
	sort.Float64s(hs)
	return hs[len(hs)/2]
}

// boxGlyphs are the CJK characters a check box itself reads as: 口 empty, 区 with an X in it.
const boxGlyphs = "口区囗回"

// readsCJK reports whether text holds a CJK character other than those a check box itself reads
// as (boxGlyphs).
func readsCJK(text string) bool {
	return hasCJK(strings.Map(func(r rune) rune {
		if strings.ContainsRune(boxGlyphs, r) {
			return -1
		}
		return r
	}, text))
}

// overlapShare is the share of r's area that q's bounding box covers.
func overlapShare(r image.Rectangle, q geom.Quad) float64 {
	x0, y0, x1, y1 := q.Bounds()
	ix := min(float64(r.Max.X), x1) - max(float64(r.Min.X), x0)
	iy := min(float64(r.Max.Y), y1) - max(float64(r.Min.Y), y0)
	if ix <= 0 || iy <= 0 {
		return 0
	}
	return ix * iy / float64(r.Dx()*r.Dy())
}

// checkBoxes finds the page's check boxes once its crops are read, reads again with the boxes
// painted out the crops a box lies in, and returns the boxes as regions of their own. Crops that
// are read turned, unrolled or from parts are left as read.
func (p *Pipeline) checkBoxes(ctx context.Context, img image.Image, crops []*crop, tm *Timings) ([]Region, error) {
	px, ok := newPixels(img)
	if !ok || !p.opt.CheckBoxes {
		return nil, nil
	}
	h := medianLineHeight(crops)
	if h <= 0 {
		return nil, nil
	}
	start := time.Now()
	boxes := findCheckBoxes(px, h)
	tm.track(StageCrop, start)
	if len(boxes) == 0 {
		return nil, nil
	}
	var keep []checkBox
	var paint []image.Rectangle
	again := map[*crop]bool{}
	for _, b := range boxes {
		cjk := false
		var in []*crop
		for _, c := range crops {
			if overlapShare(b.r, c.quad) < 0.3 {
				continue
			}
			if readsCJK(chosen(c).text) {
				cjk = true
				break
			}
			in = append(in, c)
		}
		if cjk {
			continue
		}
		keep = append(keep, b)
		paint = append(paint, b.r.Inset(-1))
		for _, c := range in {
			if c.turned == nil && c.unrolled == nil && c.parts == nil && !c.vertical && !c.column {
				again[c] = true
			}
		}
	}
	if len(again) > 0 {
		var redo []*crop
		for _, c := range crops {
			if again[c] {
				c.img, c.text, c.score, c.words = nil, "", 0, nil
				redo = append(redo, c)
			}
		}
		order := make([]int, len(redo))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return redo[a].width - redo[b].width })
		restore := px.paintOut(paint)
		err := p.read(ctx, img, redo, order, tm)
		restore()
		if err != nil {
			return nil, err
		}
	}
	regions := make([]Region, 0, len(keep))
	for _, b := range keep {
		text := checkBoxEmpty
		if b.marked {
			text = checkBoxMarked
		}
		q := geom.Quad{{X: float64(b.r.Min.X), Y: float64(b.r.Min.Y)}, {X: float64(b.r.Max.X), Y: float64(b.r.Min.Y)},
			{X: float64(b.r.Max.X), Y: float64(b.r.Max.Y)}, {X: float64(b.r.Min.X), Y: float64(b.r.Max.Y)}}
		score := float32(b.cover)
		regions = append(regions, Region{Quad: q, Text: text, Score: score, Words: []Word{{Quad: q, Text: text, Score: score}}})
	}
	return regions, nil
}
