package ocr

import (
	"context"
	"fmt"
	"image"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/ocrgate/ocrgate/service/ctc"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/work"
)

// crop is one detected box: its geometry is known as soon as the box is, its pixels are cut out
// of the image (upright and scaled to the recognizer's height) by the batch that first reads it.
type crop struct {
	quad  geom.Quad // corners clockwise from the text's own top-left
	width int       // at RecHeight, known before the crop is cut
	// natural is the width that keeps the box's aspect at RecHeight (capped at the widest
	// bucket); width is less when the crop is squeezed (RecSqueeze).
	natural  int
	img      *image.RGBA
	vertical bool
	flipped  bool
	upside   bool // the classifier votes that it is upside down
	// column: the crop is a column of upright characters read top to bottom, cut unrolled (see
	// unrolled); its quad is the vertical crop's, starting at the column's top-right corner.
	column bool
	// turned is the crop turned 180°, read beside it when the classifier votes to turn it: the
	// better of the two readings is kept (see recognize).
	turned *crop
	// unrolled is a vertical crop read as a column of upright CJK characters, beside it: kept
	// when it reads CJK and better (see recognize).
	unrolled *crop
	// parts are the boxes a vertical line was joined from (see joinVertical), read beside it:
	// kept instead of it where they read more surely (see keepParts).
	parts []*crop
	// charStack: parts were boxed a character each, none a word on its side (see charStack).
	charStack bool
	// ink: what a crop found in the page's ink, not by the detector, is (see inkLines); it is
	// kept only where it reads as that.
	ink inkKind
	// choice: the brackets of a typed choice found in the ink (see readChoice).
	choice inkWord
	text   string
	score  float32
	words  []Word
	// longestRun is the most consecutive recognizer timesteps one character of the reading won.
	longestRun int
	// runeSteps, probs and doubt are each rune of text's timestep, probability and doubt (see
	// ctc.Result), steps the timesteps of the padded width rw it was read at: what words are
	// located from, and what tells a reading that may have lost a doubled character.
	runeSteps []int
	probs     []float32
	doubt     []bool
	steps, rw int
}

// pageCrops are a page's crops planned for its orientation, before they are read.
type pageCrops struct {
	crops    []*crop
	byWidth  []int // crops by ascending width
	rotation int   // degrees clockwise that make the page upright (see Result.Rotation)
	// few: the page has fewer than minPageVotes boxes, too few for its shapes or the
	// classifier to tell its orientation: the lines it reads tell it instead (see readRotation).
	few bool
}

// orient plans a crop for every box and finds the page's orientation: from the boxes' shapes
// (see sideways) and the direction classifier's votes on the page's widest lines (see classify),
// which also marks the crops to read both ways. A page of fewer than minPageVotes boxes (once
// stacked single boxes are joined, see stacks) is marked few: its lines' readings decide its
// orientation after recognition (see readRotation).
func (p *Pipeline) orient(ctx context.Context, img image.Image, quads []geom.Quad, tm *Timings) (pageCrops, error) {
	rotation := 0
	columns, lying := false, false
	few := false
	onSide := sideways(quads, p.opt.CropRotateRatio)
	if onSide {
		// A page of vertical CJK columns has the shapes of a page on its side. Its characters
		// stand upright (see readsColumns): only such a page is read as it stands, column by
		// column. Only pages that look sideways pay for the look.
		rotation = 90
		if p.opt.ReadColumns {
			var err error
			if columns, err = p.readsColumns(ctx, img, quads, tm); err != nil {
				return pageCrops{}, err
			}
			if columns {
				rotation = 0
				quads = joinColumns(quads)
			}
		}
		if !columns {
			// So has a grid of single characters taller than wide (a table of digits, a
			// form's column of ticks), whose boxes hold no line: it is read as it stands.
			var err error
			if onSide, err = p.linesOnTheirSide(ctx, img, quads, tm); err != nil {
				return pageCrops{}, err
			}
			if !onSide {
				rotation = 0
			}
		}
	}
	if !onSide {
		quads = stacks(quads, p.opt.CropRotateRatio)
		if few = len(quads) < minPageVotes; few && p.opt.ReadColumns && slices.ContainsFunc(quads, func(q geom.Quad) bool {
			return q.Height() >= p.opt.CropRotateRatio*q.Width()
		}) {
			// A tall box on a page of a line or two is a vertical label or a line on its side:
			// the recognizer reads CJK characters on their side about as surely as upright ones,
			// so the characters themselves are asked, as for a page that looks sideways.
			var err error
			if columns, err = p.readsColumns(ctx, img, quads, tm); err != nil {
				return pageCrops{}, err
			}
			lying = !columns
		}
	}
	px, pxOK := newPixels(img)
	pxOK = pxOK && rotation == 0 && !onSide
	var thr uint8
	found := make(map[geom.Quad]inkWord)
	var inkRuns []inkWord
	if pxOK {
		// An upright page's ink is looked at for the vertical lines the detector left out.
		thr = px.inkThreshold()
		var lines []geom.Quad
		lines, inkRuns = inkLines(px, thr, quads)
		for _, q := range lines {
			found[q] = inkWord{kind: inkLine, quad: q}
			quads = append(quads, q)
		}
	}
	var parts map[geom.Quad][]geom.Quad
	if !onSide && !few {
		quads, parts = joinVertical(quads, float64(img.Bounds().Dy()))
	}
	if pxOK {
		// An upright page's lines are looked past for the marks their boxes cut off.
		quads = reachMarks(px, thr, quads)
		// And the runs along a row it left out are read as lines of their own.
		for _, w := range inkRuns {
			found[w.quad] = w
			quads = append(quads, w.quad)
		}
	}
	crops := p.plan(quads, rotation/90, columns, lying)
	for _, c := range crops {
		key := c.quad
		if c.vertical {
			key = turn(c.quad, 3) // the box as found, before plan turned it to be read
		}
		if w, ok := found[key]; ok {
			c.ink, c.choice = w.kind, w
		}
		if ps := parts[turn(c.quad, 3)]; c.vertical && ps != nil {
			c.parts = p.plan(ps, 0, false, true)
			c.charStack = !slices.ContainsFunc(ps, func(q geom.Quad) bool { return q.Height() >= stampWord*q.Width() })
		}
	}
	if len(crops) == 0 {
		return pageCrops{}, nil
	}
	// Both batched stages sort by aspect ratio (as PaddleOCR does) so that crops of similar width
	// share a batch and little of the batch is padding.
	byWidth := make([]int, len(crops))
	for i := range byWidth {
		byWidth[i] = i
	}
	slices.SortStableFunc(byWidth, func(a, b int) int { return crops[a].width - crops[b].width })

	if p.opt.UseClassifier {
		var err error
		if rotation, err = p.classify(ctx, img, crops, byWidth, rotation, tm); err != nil {
			return pageCrops{}, err
		}
	}
	for _, c := range crops {
		bothWays(c, p.opt.RecHeight)
		for _, pc := range c.parts {
			bothWays(pc, p.opt.RecHeight)
		}
	}
	return pageCrops{crops: crops, byWidth: byWidth, rotation: rotation, few: few}, nil
}

// bothWays has a vertical line (a crop of at least columnRatio characters' length, turned to be
// read) read turned 180° as well, when the classifier has not asked for it already: text runs up
// a margin as often as down, and the classifier, reading the line squeezed into 192 px, tells
// the two apart no better than the recognizer's scores do (see stamps.go).
func bothWays(c *crop, recHeight int) {
	if !c.vertical || c.column || c.turned != nil || float64(c.natural) < columnRatio*float64(recHeight) {
		return
	}
	c.turned = &crop{quad: turn(c.quad, 2), width: c.width, natural: c.natural, vertical: true, flipped: true}
}

// recognize reads the crops orient planned. Regions scoring under MinScore or reading as
// nothing are dropped.
//
// Crops are cut by the classifier and recognizer batches that read them, not all up front: a
// batch cuts its crops while the batch beside it runs its model, so on a page of a hundred lines
// the cutting (10–30 ms on an A4 scan) is hidden behind inference instead of preceding it, and
// only the crops of the batches in flight are in memory at once.
func (p *Pipeline) recognize(ctx context.Context, img image.Image, pc pageCrops, tm *Timings) ([]Region, error) {
	crops := pc.crops
	all, order := withAlternatives(crops, pc.byWidth)
	if err := p.read(ctx, img, all, order, tm); err != nil {
		return nil, err
	}
	if err := p.redouble(ctx, img, all, tm); err != nil {
		return nil, err
	}
	boxes, err := p.checkBoxes(ctx, img, crops, tm)
	if err != nil {
		return nil, err
	}
	regions := make([]Region, 0, len(crops)+len(boxes))
	add := func(c *crop) {
		if c.text == "" || c.score < p.opt.MinScore {
			return
		}
		regions = append(regions, Region{Quad: c.quad, Text: c.text, Score: c.score, Vertical: c.vertical, Flipped: c.flipped,
			TopDown: c.column, Words: c.words})
	}
	for _, c := range crops {
		best := chosen(c)
		switch {
		case c.ink == inkLine && !inkLineReads(best),
			c.ink == inkText && !inkWordReads(best),
			c.ink == inkChoice && !readChoice(best, c.choice):
			continue
		}
		if c.parts == nil {
			add(best)
			continue
		}
		// A line joined from characters boxed one by one is one number or word: read with a
		// space in it, it was a column of marks (a table's X in each row), and they stay apart.
		spaced := c.charStack && strings.Contains(strings.TrimSpace(best.text), " ")
		if !keepParts(best, c.parts) && !spaced {
			trimStray(best)
			add(best)
			continue
		}
		for _, pc := range c.parts {
			add(chosen(pc))
		}
	}
	trimOverlaps(regions, pc.rotation)
	return append(regions, boxes...), nil
}

// chosen is the reading of c kept: the crop as cut, turned 180° or unrolled as a column of
// CJK characters, whichever reads best.
func chosen(c *crop) *crop {
	u := c.unrolled
	if t := c.turned; t != nil && better(t, c) {
		c = t
	}
	if u != nil && hasCJK(u.text) && better(u, c) {
		c = u
	}
	return c
}

// sideways reports whether the detector's boxes say the page lies on its side: its long boxes
// (at least twice as long as high, or ratio times as high as long) run up the page for more than
// twice the length that runs across it. Lines of text are long boxes along the text; a page
// turned 90° has them upright.
func sideways(quads []geom.Quad, ratio float64) bool {
	var up, across float64
	n := 0
	for _, q := range quads {
		w, h := q.Width(), q.Height()
		switch {
		case h >= max(2, ratio)*w:
			up += h
			n++
		case w >= 2*h:
			across += w
		}
	}
	return n >= 2 && up > 2*across
}

// sidewaysSample is how many of the tall boxes of a page that looks sideways linesOnTheirSide
// reads.
const sidewaysSample = 8

// linesOnTheirSide reports whether the tall boxes of a page that looks sideways (see sideways)
// are lines of text on their side, as on a page turned a quarter, rather than characters that
// stand upright, each in a box of its own, taller than wide (a grid of digits or letters in a
// narrow face: a box around "1" or "I" is three times taller than wide). The recognizer tells
// them apart: a few of the tall boxes (up to sidewaysSample, the tallest) are read as they stand
// and turned a quarter each way. A line on its side reads as several characters turned the right
// way, and as little or nothing as it stands; an upright character reads as itself standing, and
// as one character at most turned ("1" and "I" lying down read "一" or "-"). The page is on its
// side when most of the boxes read, turned, as more than one character and better than they
// read as they stand. A box of one character either way has no say; when no box has one, no box
// is shown to be a line, and the page is read as it stands.
func (p *Pipeline) linesOnTheirSide(ctx context.Context, img image.Image, quads []geom.Quad, tm *Timings) (bool, error) {
	var tall []geom.Quad
	for _, q := range quads {
		if w, h := q.Width(), q.Height(); w >= 1 && h >= max(2, p.opt.CropRotateRatio)*w {
			tall = append(tall, q)
		}
	}
	slices.SortFunc(tall, func(a, b geom.Quad) int { return -cmpFloat(a.Height(), b.Height()) })
	tall = tall[:min(len(tall), sidewaysSample)]
	side := p.opt.RecHeight
	widest := p.opt.RecWidthBuckets[len(p.opt.RecWidthBuckets)-1]
	var crops []*crop // triples: as it stands, turned a quarter clockwise, counterclockwise
	for _, q := range tall {
		stand := max(side/4, int(math.Round(float64(side)*q.Width()/q.Height())))
		length := min(widest, max(side, int(math.Round(float64(side)*q.Height()/q.Width()))))
		col := imaging.Warp(img, q, side, length)
		cw, ok1 := imaging.Turn(col, 90).(*image.RGBA)
		ccw, ok2 := imaging.Turn(col, 270).(*image.RGBA)
		if !ok1 || !ok2 {
			continue
		}
		up := framed(imaging.Warp(img, q, stand, side), side)
		crops = append(crops,
			&crop{img: up, width: up.Bounds().Dx(), natural: up.Bounds().Dx()},
			&crop{img: cw, width: length, natural: length},
			&crop{img: ccw, width: length, natural: length})
	}
	if len(crops) == 0 {
		return true, nil
	}
	order := make([]int, len(crops))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return crops[a].width - crops[b].width })
	if err := p.read(ctx, img, crops, order, tm); err != nil {
		return false, err
	}
	lines, said := 0, 0
	for i := 0; i+2 < len(crops); i += 3 {
		stand, turned := crops[i], crops[i+1]
		if better(crops[i+2], turned) {
			turned = crops[i+2]
		}
		if len(inkRunes(turned.text)) < 2 && len(inkRunes(stand.text)) < 2 {
			continue // one character: no say
		}
		said++
		if len(inkRunes(turned.text)) >= 2 && better(turned, stand) {
			lines++
		}
	}
	return 2*lines > said, nil
}

// framed returns a crop narrower than side set in the middle of a side-wide strip of its own
// background (its first pixel): the recognizer reads a character from a crop a quarter as wide
// as it is high as nothing, and the same character with room around it as itself.
func framed(c *image.RGBA, side int) *image.RGBA {
	b := c.Bounds()
	if b.Dx() >= side {
		return c
	}
	out := image.NewRGBA(image.Rect(0, 0, side, b.Dy()))
	bg := c.Pix[0:4]
	for i := 0; i < len(out.Pix); i += 4 {
		copy(out.Pix[i:i+4], bg)
	}
	left := (side - b.Dx()) / 2
	for y := range b.Dy() {
		copy(out.Pix[y*out.Stride+4*left:], c.Pix[y*c.Stride:y*c.Stride+4*b.Dx()])
	}
	return out
}

// stacks returns the boxes of a page that holds fewer than minPageVotes of them once the boxes
// stacked one under the other are joined (see joinColumns), joined; any other page's boxes as
// they are. The detector boxes the characters of a line turned on its side one by one where they
// are set apart (a phone number on a sign read as a column of single digits), and does the same
// to a vertical label: joined, such a column is read as one tall box, as a line on its side or as
// a column of upright characters (see readsColumns). Only a page of a line or two joins: on a
// page of lines, stacked single characters are a table's column, each in its own row. A page
// with minPageVotes lines across (at least twice as long as high) is such a page at once.
func stacks(quads []geom.Quad, ratio float64) []geom.Quad {
	if len(quads) < 2 {
		return quads
	}
	var across, rest []geom.Quad
	for _, q := range quads {
		if q.Width() >= 2*q.Height() {
			if across = append(across, q); len(across) >= minPageVotes {
				return quads
			}
		} else {
			rest = append(rest, q)
		}
	}
	joined := joinColumns(rest)
	if len(joined) == len(rest) || len(across)+len(joined) >= minPageVotes {
		return quads
	}
	out := append(across, joined...)
	for _, q := range out {
		if w, h := q.Width(), q.Height(); w < 2*h && h < ratio*w {
			// Neither across nor tall: the stack did not make a line.
			return quads
		}
	}
	return out
}

// turn relabels q's corners for text turned by quarter quarter-turns clockwise of its box's
// labels, so that the warp cuts it upright: one quarter makes text that runs bottom to top
// read left to right.
func turn(q geom.Quad, quarter int) geom.Quad {
	var out geom.Quad
	for i := range 4 {
		out[i] = q[(i+4-quarter%4)%4]
	}
	return out
}

// plan gives every box its crop's geometry, its corners first relabelled for the page's
// orientation (quarter turns, see turn). Boxes then at least CropRotateRatio times taller than
// wide hold vertical text: their corners are re-labelled so the warp itself turns them 90°
// clockwise, which makes text running bottom to top upright (the classifier catches the other
// direction). On a page of vertical columns (columns), such a box is instead a column of upright
// characters, read top to bottom (see unrolled); elsewhere a box at least columnRatio times
// taller than wide is also read so, beside its turned reading (a CJK label set vertically in a
// margin), unless lying says the page's characters lie on their side (see readsColumns).
func (p *Pipeline) plan(quads []geom.Quad, quarter int, columns, lying bool) []*crop {
	crops := make([]*crop, 0, len(quads))
	widest := p.opt.RecWidthBuckets[len(p.opt.RecWidthBuckets)-1]
	for _, q := range quads {
		q = turn(q, quarter)
		w, h := q.Width(), q.Height()
		if w < 1 || h < 1 {
			continue
		}
		vertical := h >= p.opt.CropRotateRatio*w
		if vertical && columns {
			nw := min(widest, max(1, int(math.Ceil(float64(p.opt.RecHeight)*h/w))))
			crops = append(crops, columnCrop(q, nw))
			continue
		}
		tall := h >= columnRatio*w
		original := q
		if vertical {
			q = turn(q, 1)
			w, h = h, w
		}
		natural := float64(p.opt.RecHeight) * w / h
		nw := min(widest, max(1, int(math.Ceil(natural))))
		if natural > float64(p.opt.RecSqueezeFrom) {
			natural *= p.opt.RecSqueeze
		}
		cw := min(widest, max(1, int(math.Ceil(natural))))
		c := &crop{quad: q, width: cw, natural: nw, vertical: vertical}
		if tall && p.opt.ReadColumns && !lying {
			c.unrolled = columnCrop(original, nw)
		}
		crops = append(crops, c)
	}
	return crops
}

// cut warps the crops idx that are not cut yet out of img, spread over the cores.
func (p *Pipeline) cut(img image.Image, crops []*crop, idx []int, tm *Timings) {
	start := time.Now()
	parallel(len(idx), func(j int) {
		switch c := crops[idx[j]]; {
		case c.img != nil:
		case c.column:
			c.img = unrolled(img, turn(c.quad, 1), c.width, p.opt.RecHeight)
		default:
			c.img = imaging.Warp(img, c.quad, c.width, p.opt.RecHeight)
			if p.smoothes(c) {
				smooth(c.img)
			}
		}
	})
	tm.track(StageCrop, start)
}

// classify runs the 0°/180° classifier: it finds whether the page (turned by rotation so far)
// is upside down, and which of the crops that are not are to be read turned. It returns the
// page's rotation.
//
// On an upright page the classifier's only effect is harm: on sroie-dev it turned 1–3 short,
// upright crops of most receipts (word F1 0.848 without it, 0.842 with it). So with ClsPageSample
// set it first reads the page's widest horizontal crops, the ones it judges most reliably. When
// at most one in six of those is upside down the page is upright; when at least two in three of
// three or more are, the page is upside down and every crop is turned. Either way no other
// horizontal crop is classified (nor are the sample's read turned). Otherwise (a vote between
// those, or too few lines to tell a page), and always for vertical crops, whose reading
// direction only the classifier can tell, every crop is classified on its own and one it votes
// to turn is read both ways (see withTurned).
func (p *Pipeline) classify(ctx context.Context, img image.Image, crops []*crop, byWidth []int, rotation int, tm *Timings) (int, error) {
	var horizontal, vertical []int
	for _, i := range byWidth {
		if crops[i].column {
			continue // upright already: its characters stand as they are read
		}
		if crops[i].vertical {
			vertical = append(vertical, i)
		} else {
			horizontal = append(horizontal, i)
		}
	}
	todo := byWidth
	if k := p.opt.ClsPageSample; k > 0 && len(horizontal) > 0 {
		sample := horizontal[max(0, len(horizontal)-k):] // byWidth ascends: the widest
		if err := p.classifyCrops(ctx, img, crops, sample, tm); err != nil {
			return 0, err
		}
		upside := 0
		for _, i := range sample {
			if crops[i].upside {
				upside++
			}
		}
		n := len(sample)
		decided := true // the sample speaks for the page
		switch {
		case upside*6 <= n:
			todo = vertical
		case n >= minPageVotes && upside*3 >= 2*n:
			rotation = (rotation + 180) % 360
			for _, c := range crops {
				c.quad = turn(c.quad, 2)
				if c.img != nil {
					c.img = imaging.Rotate180(c.img)
				}
			}
			todo = vertical
		default:
			todo = append(horizontal[:len(horizontal)-n:len(horizontal)-n], vertical...)
			decided = false
		}
		if decided {
			for _, i := range sample {
				crops[i].upside = false
			}
		}
	}
	if err := p.classifyCrops(ctx, img, crops, todo, tm); err != nil {
		return 0, err
	}
	for _, c := range crops {
		if c.upside { // classified, so cut
			c.turned = &crop{
				quad:     turn(c.quad, 2),
				width:    c.width,
				img:      imaging.Rotate180(c.img),
				natural:  c.natural,
				vertical: c.vertical,
				flipped:  true,
			}
		}
	}
	return rotation, nil
}

// minPageVotes is how many of the sample's crops the classifier must have read to turn a whole
// page: one line is no page (a lone receipt line in a condensed face was voted upside down).
const minPageVotes = 3

// redouble reads again, wider, the crops whose reading may have lost a doubled character, and
// keeps the doubled characters the wider reading finds.
//
// Greedy CTC decoding reads a doubled character ("tt", "44", "**") only where a timestep between
// the two is won by the blank, so a line read with too few timesteps per character loses
// doubles: squeezed (RecSqueeze), the rendered lines read "7757****6336" as "7757***6336"; small
// or narrow print reads "tree" as "tre" and "will" as "wil" at the width PaddleOCR gives it.
// Such a loss leaves a trace in the reading (see againWidth), and only crops with one are read
// again, at a width with more timesteps per character.
//
// A dense line's wider reading is the better one as a whole, not only at doubles: small print
// reads better larger. It is kept where it scores higher (see better), which it nearly always
// does: on the double-letter set, 10 294 → 10 335 of 10 576 words read exactly against putting
// only its doubles into the first reading. A squeezed line's natural-width reading is not: the
// squeezed one restores spaces better, and the natural width reads stray characters of its own
// (sroie-dev, the rendered lines). Where the first reading stays, it takes from the wider one only
// what a doubled character explains, word by word (see putDoubles), its spaces kept.
func (p *Pipeline) redouble(ctx context.Context, img image.Image, crops []*crop, tm *Timings) error {
	var again, first []*crop
	var dense []bool
	for _, c := range crops {
		if w, d := p.againWidth(c); w > c.width {
			again = append(again, &crop{quad: c.quad, width: w, natural: c.natural, vertical: c.vertical, flipped: c.flipped})
			first = append(first, c)
			dense = append(dense, d)
		}
	}
	if len(again) == 0 {
		return nil
	}
	byWidth := make([]int, len(again))
	for i := range byWidth {
		byWidth[i] = i
	}
	slices.SortStableFunc(byWidth, func(a, b int) int { return again[a].width - again[b].width })
	if err := p.read(ctx, img, again, byWidth, tm); err != nil {
		return err
	}
	for k, c := range first {
		if a := again[k]; dense[k] && better(a, c) {
			c.width, c.text, c.score, c.words = a.width, a.text, a.score, a.words
			c.runeSteps, c.probs, c.doubt, c.steps, c.rw, c.longestRun = a.runeSteps, a.probs, a.doubt, a.steps, a.rw, a.longestRun
		} else {
			c.putDoubles(a.text)
		}
	}
	return nil
}

// againWidth is the width crop c is to be read again at to find the doubled characters its
// reading may have lost, or its own width where its reading shows no such loss, and whether c
// is a dense line:
//
//   - a squeezed crop where one character won RecSqueezeRun timesteps in a row or more (a long
//     run collapsed into one character) is read at its natural width, where PaddleOCR reads it;
//   - a dense line, read with fewer than RecDenseSteps timesteps per character, where some
//     letter may stand for two (ctc.Result.Doubt: it won two steps in a row, or a weak blank
//     beside it), is read at RecDenseWidth timesteps per character. Such characters are
//     narrower than 1.8 steps of 8 px at the recognizer's 48 px height: small or narrow print
//     (Go Regular at 10 px, Nimbus Sans Narrow at 12–18 px). Most doubles lost at all are lost
//     in such lines, while receipts have few of them (10 of sroie-dev's 1 111 crops);
//   - a line of small print that lost letters to too few timesteps, its spaces restored by the
//     decoder (see restoredSpaces), is read at RecDenseWidth timesteps per character too.
//
// A column of CJK characters is never read again: no doubled letter to find, and its crop is
// cut differently.
func (p *Pipeline) againWidth(c *crop) (int, bool) {
	w, dense := c.width, false
	if c.column || c.text == "" {
		return w, false
	}
	if p.opt.RecSqueezeRun > 0 && c.width < c.natural && c.longestRun >= p.opt.RecSqueezeRun {
		w = c.natural
	}
	if d := c.stepsPerChar(); p.opt.RecDenseSteps > 0 && d > 0 && len(inkRunes(c.text)) >= minDenseChars && !hasCJK(c.text) &&
		(d < p.opt.RecDenseSteps && c.doubtfulLetters() > 0 || d < p.opt.RecDenseWidth && c.restoredSpaces()) {
		w, dense = max(w, int(math.Ceil(float64(c.width)*p.opt.RecDenseWidth/d))), true
	}
	return min(w, p.opt.RecWidthBuckets[len(p.opt.RecWidthBuckets)-1]), dense
}

// Small print read with too few timesteps a character loses the first letter of word after
// word, the model keeping next to no space of its own: "expenditres have en ade t mount at lace
// nd eason for th xpendit" for "expenditures have been made, the amount, date, place, and
// reason for the expenditure." (FUNSD's 100-dpi forms, Times at 6–7 px x-height). What is left
// holds too few letters in doubt for the line to be read again as a dense one, but the decoder
// restored its spaces from the blank runs, where the space class keeps a trace. So a line with
// restoredSpacesMin or more spaces so restored, two thirds of its spaces, read with fewer than
// RecDenseWidth timesteps a character, is read again at RecDenseWidth, and the better-scoring
// reading is kept. Lines read with more steps are left: read again 1.25 times as wide from 2.7
// steps a character, they scored as often worse as better (sroie-dev's word F1 (ci) 0.8667 →
// 0.8663 against 0.8673 so).
const restoredSpacesMin = 3

// restoredSpaces reports whether c's reading holds restoredSpacesMin or more spaces that ctc
// restored (the model kept some space in a blank run, not a space of its own), and two thirds
// of its spaces so.
func (c *crop) restoredSpaces() bool {
	n, restored := 0, 0
	for i, r := range []rune(c.text) {
		if r != ' ' || i >= len(c.probs) {
			continue
		}
		n++
		if c.probs[i] == 0 {
			restored++
		}
	}
	return restored >= restoredSpacesMin && 3*restored >= 2*n
}

// minDenseChars is the fewest characters (spaces aside) a reading needs for its timesteps per
// character to say how dense its print is: a short crop's margins weigh too much.
const minDenseChars = 4

// stepsPerChar is the recognizer timesteps per character (spaces included) of c's reading: the
// timesteps of the crop's own width, its padding aside.
func (c *crop) stepsPerChar() float64 {
	n := utf8.RuneCountInString(c.text)
	if n == 0 || c.rw <= 0 {
		return 0
	}
	return float64(c.width) * float64(c.steps) / float64(c.rw) / float64(n)
}

// doubtfulLetters counts the letters of c's reading that may stand for two (see ctc.Result.Doubt).
func (c *crop) doubtfulLetters() int {
	n := 0
	for i, r := range []rune(c.text) {
		if i < len(c.doubt) && c.doubt[i] && unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// putDoubles puts into c's reading the doubled characters that wider, another reading of the same
// crop, holds once more, word by word (see doubledWords). c keeps its spaces, and each character
// put in takes its twin's timestep and probability.
func (c *crop) putDoubles(wider string) {
	rs := []rune(c.text)
	extra := doubledWords(rs, inkRunes(wider))
	if extra == nil || len(c.runeSteps) != len(rs) || len(c.probs) != len(rs) {
		return
	}
	n := len(rs)
	for _, e := range extra {
		n += e
	}
	out := make([]rune, 0, n)
	steps := make([]int, 0, n)
	probs := make([]float32, 0, n)
	for i, r := range rs {
		for range 1 + extra[i] {
			out = append(out, r)
			steps = append(steps, c.runeSteps[i])
			probs = append(probs, c.probs[i])
		}
	}
	c.text, c.runeSteps, c.probs, c.doubt = string(out), steps, probs, nil
	c.words = lineWords(c.quad, c.text, c.runeSteps, c.probs, c.steps, c.width, c.rw)
}

// doubledWords aligns line (a reading, its spaces included) with wider (another reading's
// characters, spaces left out) and returns, for each rune of line, how many more copies of it
// wider reads, in the words of line that wider reads as the same characters with some doubled and
// nothing else; nil where no word is so read. Only letters, digits and asterisks count as doubled
// ("tree", "1100", "7757****6336"): a doubled hyphen or point is a wide reading's stray mark.
//
// Word by word, because a wider reading of small print is better at doubles and worse at the
// rest: where 12 px Nimbus Sans Narrow read "Make travelr an cabbage part with otery fery
// shoping", the wider reading had "traveller,", "lottery", "ferry" and "shopping", and elsewhere
// "actuailly" for "actually"; the first reading takes "ferry", "shopping" and "ottery" (its lost
// l is no double) and nothing else. A word at a time is also the most a wrong double costs.
func doubledWords(line, wider []rune) []int {
	var ink []int // line's non-space runes, as indexes into line
	for i, r := range line {
		if r != ' ' {
			ink = append(ink, i)
		}
	}
	n, m := len(ink), len(wider)
	if n == 0 || m <= n {
		return nil
	}
	// Edit distance between line's characters and wider, then one shortest alignment.
	d := make([]int, (n+1)*(m+1))
	at := func(i, j int) *int { return &d[i*(m+1)+j] }
	for i := range n + 1 {
		*at(i, 0) = i
	}
	for j := range m + 1 {
		*at(0, j) = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			cost := 1
			if line[ink[i-1]] == wider[j-1] {
				cost = 0
			}
			*at(i, j) = min(*at(i-1, j-1)+cost, *at(i-1, j)+1, *at(i, j-1)+1)
		}
	}
	// Walking back: same[k] says ink rune k is read as itself; extra[k] counts the copies of it
	// wider inserts beside it; odd[k] marks an insertion before ink rune k (k == n: after the
	// last) that doubles neither neighbour.
	same := make([]bool, n)
	extra := make([]int, n)
	odd := make([]bool, n+1)
	for i, j := n, m; i > 0 || j > 0; {
		switch {
		case i > 0 && j > 0 && line[ink[i-1]] == wider[j-1] && *at(i, j) == *at(i-1, j-1):
			same[i-1] = true
			i, j = i-1, j-1
		case i > 0 && j > 0 && *at(i, j) == *at(i-1, j-1)+1:
			i, j = i-1, j-1
		case i > 0 && *at(i, j) == *at(i-1, j)+1:
			i--
		default:
			switch r := wider[j-1]; {
			case !doubles(r):
				odd[i] = true
			case i > 0 && r == line[ink[i-1]]:
				extra[i-1]++
			case i < n && r == line[ink[i]]:
				extra[i]++
			default:
				odd[i] = true
			}
			j--
		}
	}
	out := make([]int, len(line))
	found := false
	for lo := 0; lo < n; {
		hi := lo + 1 // the word is ink runes lo..hi-1
		for hi < n && ink[hi] == ink[hi-1]+1 {
			hi++
		}
		clean, more := true, false
		for k := lo; k < hi; k++ {
			clean = clean && same[k] && (k == lo || !odd[k])
			more = more || extra[k] > 0
		}
		if clean && more {
			for k := lo; k < hi; k++ {
				out[ink[k]] = extra[k]
			}
			found = true
		}
		lo = hi
	}
	if !found {
		return nil
	}
	return out
}

// doubles reports whether r is a character a doubled pair of which is worth putting back.
func doubles(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '*' }

// inkRunes is s without its spaces.
func inkRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if !unicode.IsSpace(r) {
			out = append(out, r)
		}
	}
	return out
}

// withAlternatives returns the crops followed by their other readings (the turned copies of
// those the classifier voted to turn, the unrolled copies of vertical crops), and their order by
// width, so that one pass of the recognizer reads every way of each.
//
// The classifier alone decides nothing: it reads a crop squeezed into 192 px, and on a long
// upright line in a condensed face it voted 180° (a receipt's card number line read upside down as
// "P" at 0.09, under MinScore: the line was lost). Reading both ways costs one more crop per
// vote, and votes are rare: an upright page's horizontal crops are not classified (see classify),
// and a page turned as a whole is turned before detection.
func withAlternatives(crops []*crop, byWidth []int) ([]*crop, []int) {
	all := crops
	for _, c := range crops {
		alts := []*crop{c.turned, c.unrolled}
		for _, pc := range c.parts {
			alts = append(alts, pc, pc.turned)
		}
		for _, alt := range alts {
			if alt != nil {
				if len(all) == len(crops) {
					all = slices.Clip(crops)
				}
				all = append(all, alt)
			}
		}
	}
	if len(all) == len(crops) {
		return crops, byWidth
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return all[a].width - all[b].width })
	return all, order
}

// better reports whether reading a is to be kept over reading b of the same box: the higher
// recognition score, where a reading of nothing scores nothing. A tie keeps b (the crop as it
// was cut).
func better(a, b *crop) bool {
	sa, sb := a.score, b.score
	if a.text == "" {
		sa = 0
	}
	if b.text == "" {
		sb = 0
	}
	return sa > sb
}

// classifyCrops runs the classifier on the crops idx (in batches, BatchParallel at a time, like
// the recognizer's) and marks those it is sure are upside down.
func (p *Pipeline) classifyCrops(ctx context.Context, img image.Image, crops []*crop, idx []int, tm *Timings) error {
	var batches [][]int
	for lo := 0; lo < len(idx); lo += p.opt.ClsBatchSize {
		batches = append(batches, idx[lo:min(lo+p.opt.ClsBatchSize, len(idx))])
	}
	weights := make([]int64, len(batches))
	for i, b := range batches {
		weights[i] = int64(len(b)) * int64(p.opt.ClsHeight) * int64(p.opt.ClsWidth)
	}
	return p.inFlight(ctx, weights, tm, func(ctx context.Context, i int, tm *Timings) error {
		return p.classifyBatch(ctx, img, crops, batches[i], tm)
	})
}

// classifyBatch cuts and classifies one batch of crops.
func (p *Pipeline) classifyBatch(ctx context.Context, img image.Image, crops []*crop, batch []int, tm *Timings) error {
	p.cut(img, crops, batch, tm)
	start := time.Now()
	cw, ch := p.opt.ClsWidth, p.opt.ClsHeight
	n := len(batch)
	plane := 3 * ch * cw
	in := Tensor{Shape: []int64{int64(n), 3, int64(ch), int64(cw)}, Data: make([]float32, n*plane)}
	// Spread over the cores: the page sample's batch runs alone, so nothing else would use them.
	parallel(n, func(j int) {
		c := crops[batch[j]].img
		if c.Rect.Dx() > cw {
			// PaddleOCR squeezes wide crops into the classifier's width rather than cutting them.
			c = imaging.ResizeWidth(c, cw)
		}
		imaging.TensorInto(in.Data[j*plane:(j+1)*plane], c, cw, p.opt.ClsNorm)
	})
	start = tm.track(StageClsPre, start)
	out, err := p.rt.Infer(ctx, Classifier, in)
	if err != nil {
		return fmt.Errorf("direction classifier: %w", err)
	}
	start = tm.track(StageClsInfer, start)
	if len(out.Shape) != 2 || out.Shape[0] != int64(n) || out.Shape[1] != 2 || len(out.Data) != 2*n {
		return fmt.Errorf("direction classifier: output shape %v, want [%d 2]: %w", out.Shape, n, ErrRuntimeFailed)
	}
	for j, idx := range batch {
		p0, p180 := out.Data[2*j], out.Data[2*j+1]
		crops[idx].upside = p180 > p0 && p180 >= p.opt.ClsThreshold
	}
	tm.track(StageClsPre, start)
	return nil
}

// read runs the recognizer batch by batch and decodes each line with CTC (see recBatches).
func (p *Pipeline) read(ctx context.Context, img image.Image, crops []*crop, byWidth []int, tm *Timings) error {
	batches, widths := p.recBatches(crops, byWidth)
	weights := make([]int64, len(batches))
	for i, b := range batches {
		weights[i] = int64(len(b)) * int64(p.opt.RecHeight) * int64(widths[i])
	}
	return p.inFlight(ctx, weights, tm, func(ctx context.Context, i int, tm *Timings) error {
		return p.readBatch(ctx, img, crops, batches[i], widths[i], tm)
	})
}

// recBatches groups the crops (byWidth: ascending width) into recognizer batches of crops that
// share a padded width (see Pipeline.padded), at most recBatchCrops of them, and gives each batch's
// width. Crops are not padded further to fill a batch: the recognizer's time follows the columns
// it reads, padding included, and on one thread barely the batch size (batches of one read
// sroie-dev as fast), and its attention spans the whole width, so padding also changes what it
// reads (word F1 (ci) 0.8491 with no extra padding, 0.8472 with up to 5 %, 0.8462 with up to
// 10 %). The batches come widest first: the widest take longest, so started first they do not
// leave one core working alone on the last of them while the others idle.
func (p *Pipeline) recBatches(crops []*crop, byWidth []int) (batches [][]int, widths []int) {
	for hi := len(byWidth); hi > 0; {
		rw := p.padded(crops[byWidth[hi-1]].width)
		size := p.opt.recBatchCrops(rw)
		lo := hi - 1
		for lo > 0 && hi-lo < size && p.padded(crops[byWidth[lo-1]].width) == rw {
			lo--
		}
		batches = append(batches, byWidth[lo:hi])
		widths = append(widths, rw)
		hi = lo
	}
	return batches, widths
}

// inFlight runs batch(0..n-1) with up to BatchParallel of them in flight, in order of i, and
// returns the first error (the others are cancelled). Each batch is one model run and the Go work
// around it; with the embedded runtime's single-threaded recognizer and classifier sessions, this
// is what keeps every core busy, with no thread pool for runs of concurrent requests to fight
// over. With Triton it overlaps one batch's transfer with another's inference.
//
// weights[i] is batch i's input size in pixels: the batches in flight hold at most
// BatchPixelsInFlight together (a larger batch runs alone), so the memory an image's batches
// take is bounded whatever the core count (see Cost).
func (p *Pipeline) inFlight(ctx context.Context, weights []int64, tm *Timings, batch func(ctx context.Context, i int, tm *Timings) error) error {
	n := len(weights)
	if n == 0 {
		return nil
	}
	limit := int64(p.opt.BatchPixelsInFlight)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	limit = max(limit, slices.Max(weights))
	var (
		mu     sync.Mutex
		pixels = semaphore.NewWeighted(limit)
	)
	// Each batch is a unit of work: a panic in one fails the image (as any batch's error does),
	// not the process.
	return work.All(ctx, n, p.opt.BatchParallel, "recognizer batch", func(ctx context.Context, i int) error {
		if err := pixels.Acquire(ctx, weights[i]); err != nil {
			return err
		}
		defer pixels.Release(weights[i])
		var local Timings
		err := batch(ctx, i, &local)
		mu.Lock()
		tm.add(&local)
		mu.Unlock()
		return err
	})
}

// readBatch cuts the crops of one batch, runs the recognizer on them padded to width rw and decodes
// each crop.
func (p *Pipeline) readBatch(ctx context.Context, img image.Image, crops []*crop, batch []int, rw int, tm *Timings) error {
	p.cut(img, crops, batch, tm)
	start := time.Now()
	rh := p.opt.RecHeight
	n := len(batch)
	plane := 3 * rh * rw
	in := Tensor{Shape: []int64{int64(n), 3, int64(rh), int64(rw)}, Data: make([]float32, n*plane)}
	parallel(n, func(j int) {
		imaging.TensorInto(in.Data[j*plane:(j+1)*plane], crops[batch[j]].img, rw, p.opt.RecNorm)
	})
	start = tm.track(StageRecPre, start)
	out, err := p.rt.Infer(ctx, p.rec, in)
	if err != nil {
		return fmt.Errorf("recognition: %w", err)
	}
	start = tm.track(StageRecInfer, start)
	// The recognizer answers per time step either every class's probability (the exported graph)
	// or the seven values the decoder reads (a prepared graph, see ctc.DecodeTop).
	classes := p.charset.NumClasses()
	if len(out.Shape) != 3 || out.Shape[0] != int64(n) || (out.Shape[2] != int64(classes) && out.Shape[2] != ctc.TopWidth) || int64(len(out.Data)) != out.Shape[0]*out.Shape[1]*out.Shape[2] {
		return fmt.Errorf("recognition: output shape %v, want [%d T %d] or [%d T %d]: %w", out.Shape, n, classes, n, ctc.TopWidth, ErrRuntimeFailed)
	}
	steps, width := int(out.Shape[1]), int(out.Shape[2])
	var mu sync.Mutex
	var firstErr error
	parallel(n, func(j int) {
		row := out.Data[j*steps*width : (j+1)*steps*width]
		var r ctc.Result
		var err error
		if width == ctc.TopWidth {
			r, err = p.charset.DecodeTop(row, steps, p.opt.CTC)
		} else {
			r, err = p.charset.Decode(row, steps, width, p.opt.CTC)
		}
		if err != nil {
			mu.Lock()
			firstErr = err
			mu.Unlock()
			return
		}
		c := crops[batch[j]]
		if p.opt.ASCIIPunctuation {
			// Rune for rune, so the steps still line up.
			r.Text = asciiWidth(r.Text)
		}
		// Before the steps below, which may add or drop spaces: Alts is aligned with the
		// decoder's text, and the lexicon only swaps characters and takes out the spaces the
		// decoder restored, keeping every per-rune slice aligned.
		r = p.opt.Lexicon.correct(r)
		r.Alts = nil
		if !c.column {
			r = ruledUnderscores(c.img, c.width, r, steps, rw)
		}
		if p.opt.CTC.SpaceThreshold > 0 {
			r = wordGaps(c.img, c.width, c.natural, r, steps, rw)
			r = letterSpacing(c.img, c.width, c.natural, r, steps, rw)
			r = bracketSpaces(r)
		}
		c.text, c.score = r.Text, r.Score
		if p.opt.ASCIIPunctuation && !hasCJK(c.text) {
			c.text = latinLookalikes(c.text)
		}
		c.words = lineWords(c.quad, c.text, r.Steps, r.Probs, steps, c.width, rw)
		c.longestRun = r.LongestRun
		c.doubt = r.Doubt
		c.runeSteps, c.probs, c.steps, c.rw = r.Steps, r.Probs, steps, rw
		c.img = nil // read: its pixels are garbage now
	})
	if firstErr != nil {
		return fmt.Errorf("recognition: %w: %w", firstErr, ErrRuntimeFailed)
	}
	tm.track(StageCTC, start)
	return nil
}

// padded is the width a crop of width w is padded to: w rounded up to RecWidthStep, or with no
// step the narrowest width bucket it fits.
func (p *Pipeline) padded(w int) int {
	widest := p.opt.RecWidthBuckets[len(p.opt.RecWidthBuckets)-1]
	if s := p.opt.RecWidthStep; s > 0 {
		return min(widest, (w+s-1)/s*s)
	}
	for _, b := range p.opt.RecWidthBuckets {
		if w <= b {
			return b
		}
	}
	return p.opt.RecWidthBuckets[len(p.opt.RecWidthBuckets)-1]
}

// parallel calls fn(0..n-1) spread over the available cores. The stages it runs are short CPU
// loops between inference calls, when the runtime's threads are idle. A panic in fn is raised
// again on the caller's goroutine (see work.Spread), where the image's unit of work recovers it.
func parallel(n int, fn func(i int)) {
	work.Spread(n, runtime.GOMAXPROCS(0), fn)
}
