package ocr

import (
	"image"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// Word gaps: the spaces the recognizer drops where the pixels show them.
//
// The PP-OCRv4 recognizer lets the CTC blank win most word spaces, and ctc restores those where
// the space class keeps a clear probability in the gap. After a colon and between capitals it
// often keeps next to none ("TEL:03-3311", "INVOICENO:", "PLEASECOMEAGAIN": 0.000–0.024 where
// 0.1–0.46 is usual between words), yet the crop shows a gap there three to eight times as wide
// as the gaps between the letters of the same line. So a gap between two characters of a Latin
// line is read as a space when its blank columns are, at the crop's natural aspect, at least
// wordGapHeight of the ink's height and wordGapRatio times the line's median gap between
// characters, and the model gave the space at least wordGapSpace there or the gap is wider still
// (wordGapWide). Both sides must be ink, so the margin before a line's first letter (or above a
// cut-off crossbar of a T) is no gap.
//
// Some pairs are never split this way: a digit and a digit or a following colon (a proportional
// font's 1 stands alone in its cell, "1100", "15:53"), asterisks, points but for a point
// between letters (an initial before a name: "J.BUXTON"), and commas but for a comma before a
// letter or before digits that are neither a group of thousands nor an amount's two decimals (a
// monospaced face's point or asterisk sits in a gap as wide as a proportional face's word
// space), either side of an apostrophe, and the inside of brackets or the front of ")", ";",
// "!", "?", "%". Amounts and card numbers are what a stray
// space would harm most: "220,000" and "3,488,000.00" keep their commas tight, where a date's
// "June 6, 1983" gets its space back (the model keeps none after the comma: 48 of FUNSD's 55
// dates so written read "6,1983"). A mark of punctuation belongs to one of its sides, so a space
// beside it must be wordGapSide times the gap on its other side ("TEL:07" set with even gaps is
// no "TEL :07"), and one before a colon that ends a word wordGapColon of the ink's height; a
// comma's gaps, or a point's, are measured together, and the space after it
// must be wordGapCommaSide times the gap before it (a typewriter sets "U.S.A." with a gap as
// wide on both sides of each point), unless the model itself gave the space wordGapCommaModel
// after a comma. And only crisp print is read (see minGapContrast).
//
// Figure: on the rendered line set 128 → 146 of 152 lines read exactly (trimOverlaps takes it to
// 148); on sroie-dev word F1 (ci)
// 0.8622 → 0.8655, every change one that the ground truth writes ("Tel: +603", "TOTAL :").
const (
	wordGapHeight = 0.34
	wordGapRatio  = 3.0
	wordGapSpace  = 0.004
	wordGapWide   = 0.46
	wordGapSide   = 1.5
	// A gap only twice the median is enough where the model gave the space 0.01 or more
	// (still under ctc's 0.025): the diagonal foot of an A narrows "E A" to that.
	wordGapSeenRatio = 2.0
	wordGapSeenSpace = 0.01
	wordGapKeep      = 1.5
	// After a comma the gap is narrower: the comma's own side bearing is small.
	wordGapComma = 0.25
	// wordGapCommaModel is the space probability after a comma at which the model's word is
	// taken without the pixels': between digits the decoder restores no space ("1,000"), yet
	// after the comma of a date written "June 6, 1983" the model mostly keeps 0.1–0.49 where a
	// list's or an amount's comma keeps under 0.01.
	wordGapCommaModel = float32(0.1)
	// A monospaced face sets a comma in the middle of its cell, so the gap after it is up to
	// 2.2 times the one before it with no space: a space makes it wider still.
	wordGapCommaSide = 2.3
	// wordGapColon is the least gap, of the ink's height, before a colon that ends a word for
	// a space to stand there. A typewriter centres the colon in its cell, so "PERSONNEL:"
	// shows 0.34–0.42 of the height blank before it (FUNSD's typed forms); a receipt's
	// "TOTAL :" prints a cell of space there as well, 0.47 and more.
	wordGapColon = 0.45
)

// endColon reports whether rs[i] is a colon or a semicolon that ends a word.
func endColon(rs []rune, i int) bool {
	return (rs[i] == ':' || rs[i] == ';') && (i+1 == len(rs) || rs[i+1] == ' ')
}

// insideNumber reports whether the space at rs[i] splits what reads as one number: digits or
// asterisks on both sides ("7757** **6336"), or a digit before a point or comma and a digit
// ("100 .00").
func insideNumber(rs []rune, i int) bool {
	if i == 0 || i+1 >= len(rs) {
		return false
	}
	a, b := rs[i-1], rs[i+1]
	masked := func(c rune) bool { return isDigitRune(c) || c == '*' }
	if masked(a) && masked(b) && (a == '*' || b == '*') {
		return true
	}
	return isDigitRune(a) && (b == '.' || b == ',') && i+2 < len(rs) && isDigitRune(rs[i+2])
}

// numberGap is the widest gap between two characters of the number that the space at rs[i]
// splits (see insideNumber) with no space between them: in a monospaced face a point or an
// asterisk sits in a gap that wide, and the space is only a space where the gap is wider still.
func numberGap(rs []rune, i int, gap func(int) int) int {
	part := func(c rune) bool { return isDigitRune(c) || c == '*' || c == '.' || c == ',' }
	lo, hi := i-1, i+1
	for lo > 0 && part(rs[lo-1]) {
		lo--
	}
	for hi+1 < len(rs) && part(rs[hi+1]) {
		hi++
	}
	widest := 1
	for j := lo; j < hi; j++ {
		if j != i-1 && j != i {
			widest = max(widest, gap(j))
		}
	}
	return widest
}

// restoredSpace reports whether rune i of rs is a space ctc restored (not one the model chose).
func restoredSpace(rs []rune, probs []float32, i int) bool { return rs[i] == ' ' && probs[i] == 0 }

// letterOrDigit reports whether r is an ASCII letter or digit.
func letterOrDigit(r rune) bool { return isLatinLetter(r) || r == 'O' || r == 'o' || isDigitRune(r) }

// wordGaps returns r with the spaces its crop's pixels show put back (see above). img is the
// crop as the recognizer read it, its first width columns the line; natural is the width that
// keeps the box's aspect; a timestep spans rw/steps columns.
func wordGaps(img *image.RGBA, width, natural int, r ctc.Result, steps, rw int) ctc.Result {
	rs := []rune(r.Text)
	if img == nil || len(rs) < 2 || len(r.Steps) != len(rs) || len(r.GapSpace) != len(rs) || steps <= 0 || hasCJK(r.Text) {
		return r
	}
	candidate := false
	for i := 0; i+1 < len(rs); i++ {
		if gapCandidate(rs[i], rs[i+1]) || restoredSpace(rs, r.Probs, i) {
			candidate = true
			break
		}
	}
	if !candidate {
		return r
	}
	cols, inkH := inkColumns(img, width)
	if inkH == 0 {
		return r
	}
	scale := float64(rw) / float64(steps)
	// gapsTo are the widest and the second widest runs of blank columns with ink on both sides
	// between the steps of runes i and j (the step of j taken to its end: a character's step can
	// fire at its left edge).
	gapsTo := func(i, j int) (int, int) {
		lo := int((float64(r.Steps[i]) + 0.5) * scale)
		hi := min(width-1, int((float64(r.Steps[j])+1.5)*scale))
		best, second, run, seen := 0, 0, 0, false
		for x := max(0, lo); x <= hi; x++ {
			if cols[x] == 0 {
				run++
				continue
			}
			if seen && run > 0 {
				if run > best {
					best, second = run, best
				} else {
					second = max(second, run)
				}
			}
			seen, run = true, 0
		}
		return best, second
	}
	gapTo := func(i, j int) int {
		g, _ := gapsTo(i, j)
		return g
	}
	gap := func(i int) int { return gapTo(i, i+1) }
	gaps := make([]int, 0, len(rs))
	for i := 0; i+1 < len(rs); i++ {
		if rs[i] != ' ' && rs[i+1] != ' ' && rs[i] != '*' && rs[i+1] != '*' {
			gaps = append(gaps, gap(i))
		}
	}
	if len(gaps) < 2 {
		return r
	}
	slices.Sort(gaps)
	median := max(1, gaps[len(gaps)/2])
	// At the natural aspect, relative to the ink's height: squeezing narrows gaps, not heights.
	norm := float64(natural) / float64(width) / float64(inkH)
	var insert []int // rune indexes a space goes before
	drop := make(map[int]bool)
	for i := 0; i+1 < len(rs); i++ {
		if restoredSpace(rs, r.Probs, i) && i > 0 {
			// A space ctc restored from the model's weak evidence inside a card number or an
			// amount, where the pixels show no gap wider than the characters': "7757** * *6336"
			// or "100 .00" in a monospaced face.
			if insideNumber(rs, i) && float64(gapTo(i-1, i+1)) < wordGapKeep*float64(numberGap(rs, i, gap)) {
				drop[i] = true
			}
			continue
		}
		if !gapCandidate(rs[i], rs[i+1]) {
			continue
		}
		g := gap(i)
		switch rs[i] {
		case ',':
			// The model fires a comma's step anywhere from its ink to the next character, so
			// the gaps on both sides of it are measured together, from the character before
			// it to the one after: the wider must be clearly wider than the other, since the
			// comma belongs to the word before it ("a, b", not "a,b" set loosely).
			if i == 0 || rs[i-1] == ' ' || thousands(rs, i+1) || isDigitRune(rs[i-1]) && cents(rs, i+1) {
				continue
			}
			if r.GapSpace[i+1] >= wordGapCommaModel {
				insert = append(insert, i+1)
				continue
			}
			var other int
			if g, other = gapsTo(i-1, i+1); float64(g) < wordGapCommaSide*float64(other) {
				continue
			}
		case '.':
			// A point between letters: an initial before a name ("J.BUXTON"), an abbreviation
			// before the next word ("EST.REDEMPTION"). Its gaps are measured as a comma's:
			// "U.S.A." set in a typewriter's cells has gaps as wide on both sides of each
			// point, and a proportional face's point hugs the letter before it.
			if i == 0 || !isLatinLetter(rs[i-1]) && rs[i-1] != 'O' && rs[i-1] != 'o' {
				continue
			}
			var other int
			if g, other = gapsTo(i-1, i+1); float64(g) < wordGapCommaSide*float64(other) {
				continue
			}
		default:
			// A mark of punctuation belongs to one of its sides: a space beside it must be
			// clearly wider than the gap on its other side ("TEL:07" set with even gaps is no
			// "TEL :07").
			if !letterOrDigit(rs[i]) && i > 0 && rs[i-1] != ' ' && float64(g) < wordGapSide*float64(gap(i-1)) {
				continue
			}
			if !letterOrDigit(rs[i+1]) && i+2 < len(rs) && rs[i+2] != ' ' && float64(g) < wordGapSide*float64(gap(i+1)) {
				continue
			}
		}
		h := float64(g) * norm
		space, least := r.GapSpace[i+1], wordGapHeight
		if endColon(rs, i+1) {
			least = wordGapColon
		}
		if rs[i] == ',' || rs[i] == '.' {
			// The comma or point itself says a word may end there; the model, which keeps
			// next to no space after either, need not say so too.
			space, least = 1, wordGapComma
		}
		wide := float64(g) >= wordGapRatio*float64(median) && (space >= wordGapSpace || h >= wordGapWide)
		seen := float64(g) >= wordGapSeenRatio*float64(median) && space >= wordGapSeenSpace
		if h >= least && (wide || seen) {
			insert = append(insert, i+1)
		}
	}
	if len(insert) == 0 && len(drop) == 0 {
		return r
	}
	out := ctc.Result{Score: r.Score, LongestRun: r.LongestRun}
	text := make([]byte, 0, len(r.Text)+len(insert))
	doubt := len(r.Doubt) == len(rs)
	k := 0
	for i, c := range rs {
		if k < len(insert) && insert[k] == i {
			text = addSpace(text, &out, r.Steps[i], doubt)
			k++
		}
		if drop[i] {
			continue
		}
		text = keepRune(text, &out, r, i, c, doubt)
	}
	out.Text = string(text)
	return out
}

// thousands reports whether rs from i on is a group of thousands: three digits, then no more
// digits ("220,000", "3,488,000.00", "14,165,00").
func thousands(rs []rune, i int) bool {
	n := 0
	for i+n < len(rs) && isDigitRune(rs[i+n]) {
		n++
	}
	return n == 3
}

// cents reports whether rs from i on is two digits, then no more digits: the decimals of an
// amount written with a comma ("12,50", or "381,583,08" for a point misread).
func cents(rs []rune, i int) bool {
	n := 0
	for i+n < len(rs) && isDigitRune(rs[i+n]) {
		n++
	}
	return n == 2
}

// gapCandidate reports whether a space may be put back between a and b from the pixels alone.
func gapCandidate(a, b rune) bool {
	if a == ' ' || b == ' ' || a >= utf8.RuneSelf || b >= utf8.RuneSelf {
		return false
	}
	if isDigitRune(a) && (isDigitRune(b) || b == ':') {
		return false
	}
	switch {
	case a == '(' || a == '[' || a == '{':
		return false
	case a == '\'' || b == '\'':
		// An apostrophe sits in a gap of its own in a typewriter's face, and belongs to the
		// word around it: "100's", "Shiffert's".
		return false
	case b == ')' || b == ']' || b == '}' || b == ';' || b == '!' || b == '?' || b == '%':
		return false
	}
	if a == ',' && letterOrDigit(b) {
		// A comma before a letter ends a clause or an item, and the model keeps next to no
		// space after it (0.000–0.024 where the text has one); so does one before a year or
		// the next of a list of figures. The side rule (see wordGaps) still asks for a gap
		// clearly wider than the one before the comma, which a monospaced face's comma, centred
		// in its cell, does not have, and a group of thousands is never split (see thousands).
		return true
	}
	if a == '.' && (isLatinLetter(b) || b == 'O' || b == 'o') {
		return true
	}
	for _, c := range []rune{a, b} {
		if c == '.' || c == ',' || c == '*' {
			return false
		}
	}
	return true
}

// inkColumns counts, for each of the first width columns of img, its ink pixels: darker than
// three quarters of the way from the crop's darkest to its lightest pixel, so that the faint
// edge of a stroke counts as ink and a gap is only what is really blank. It also returns the
// height of the rows that hold ink (0 for a crop of too little contrast to tell).
func inkColumns(img *image.RGBA, width int) ([]int, int) {
	b := img.Rect
	width = min(width, b.Dx())
	h := b.Dy()
	lum := make([]uint8, width*h)
	lo, hi := uint8(255), uint8(0)
	for y := range h {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range width {
			p := row[4*x : 4*x+3 : 4*x+3]
			l := uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
			lum[y*width+x] = l
			lo, hi = min(lo, l), max(hi, l)
		}
	}
	if int(hi)-int(lo) < minGapContrast {
		return nil, 0
	}
	th := hi - (hi-lo)/4
	cols := make([]int, width)
	top, bottom := -1, -1
	longRun := int(ruleRun * float64(h))
	for y := range h {
		row := lum[y*width : (y+1)*width]
		band := float64(y) < ruleBand*float64(h) || float64(y) >= (1-ruleBand)*float64(h)
		if band && inkShare(row, th) >= ruleCover {
			continue
		}
		n := 0
		inkRuns(row, th, func(x0, x1 int) {
			if band && x1-x0 >= longRun {
				return
			}
			for k := x0; k < x1; k++ {
				cols[k]++
			}
			n += x1 - x0
		})
		if n > 0 {
			if top < 0 {
				top = y
			}
			bottom = y
		}
	}
	if top < 0 {
		return nil, 0
	}
	return cols, bottom - top + 1
}

// A rule under or over the line (a field's underline, a table's rule cut into the crop) is ink
// in every column it crosses, so it hides the gaps between the words above it ("March 27,1984"
// typed on a line) and adds its height to the ink's. inkColumns leaves out, in the crop's top
// and bottom ruleBand of rows, a row inked across ruleCover of the crop's width or more (a rule
// under the whole line, even broken) and any run of ink ruleRun times the crop's height long or
// longer (a rule under part of it): no letter is that wide, and a stroke in the middle band (a
// dash) is left alone.
const (
	ruleBand  = 0.3
	ruleCover = 0.7
	ruleRun   = 1.5
)

// inkRuns calls fn with each run of ink along row, pixels darker than th, x0 to x1 exclusive.
func inkRuns(row []uint8, th uint8, fn func(x0, x1 int)) {
	for x := 0; x < len(row); {
		if row[x] >= th {
			x++
			continue
		}
		x0 := x
		for x < len(row) && row[x] < th {
			x++
		}
		fn(x0, x)
	}
}

// inkShare is the share of row's pixels darker than th.
func inkShare(row []uint8, th uint8) float64 {
	n := 0
	for _, l := range row {
		if l < th {
			n++
		}
	}
	return float64(n) / float64(len(row))
}

// minGapContrast is the least difference between a crop's darkest and lightest pixel for its
// gaps to be read: crisp print. Faint or broken print (a thermal receipt's worn line, 172–226 on
// sroie-dev) loses parts of strokes, the foot of an L or the bar of a T, and a lost stroke
// leaves a gap as wide as a word's ("SOL D", "C ashe!"); crisp print (250–255) does not.
const minGapContrast = 235

// trimOverlaps drops, where the detector cut one line into two boxes that overlap, the lone
// character one box read from the edge of the other's first or last glyph: "Receipt No. C" and
// "000777" for "Receipt No. 000777", the C being the left half of the 0. Such a character is a
// one-character word at the end of its region, lying inside the other region's box on the same
// line; the other region reads that glyph whole. rotation is the page's (only an upright page's
// lines run left to right in the image).
func trimOverlaps(regions []Region, rotation int) {
	if rotation != 0 {
		return
	}
	for a := range regions {
		for b := range regions {
			A, B := &regions[a], &regions[b]
			if a == b || A.Vertical || B.Vertical || A.TopDown || B.TopDown {
				continue
			}
			ax0, ay0, ax1, ay1 := A.Quad.Bounds()
			bx0, by0, bx1, by1 := B.Quad.Bounds()
			overlapY := min(ay1, by1) - max(ay0, by0)
			if overlapY < 0.5*min(ay1-ay0, by1-by0) || !(ax0 < bx0 && ax1 > bx0 && ax1 < bx1) {
				continue
			}
			// A is the left box, reaching into B.
			if n := len(A.Words); n >= 2 && utf8.RuneCountInString(A.Words[n-1].Text) == 1 {
				t := strings.TrimRight(A.Text, " ")
				if x0, _, x1, _ := A.Words[n-1].Quad.Bounds(); (x0+x1)/2 >= bx0 && strings.LastIndexByte(t, ' ') > 0 {
					A.Words = A.Words[:n-1]
					A.Text = strings.TrimRight(t[:strings.LastIndexByte(t, ' ')], " ")
				}
			}
			if n := len(B.Words); n >= 2 && utf8.RuneCountInString(B.Words[0].Text) == 1 {
				t := strings.TrimLeft(B.Text, " ")
				if x0, _, x1, _ := B.Words[0].Quad.Bounds(); (x0+x1)/2 <= ax1 && strings.IndexByte(t, ' ') > 0 {
					B.Words = B.Words[1:]
					B.Text = strings.TrimLeft(t[strings.IndexByte(t, ' '):], " ")
				}
			}
		}
	}
}

// addSpace appends a space the pixels put back (no probability of its own, never in doubt) to a
// reading being rebuilt, at CTC step step.
func addSpace(text []byte, out *ctc.Result, step int, doubt bool) []byte {
	out.Steps = append(out.Steps, step)
	out.Probs = append(out.Probs, 0)
	out.GapSpace = append(out.GapSpace, 0)
	if doubt {
		out.Doubt = append(out.Doubt, false)
	}
	return append(text, ' ')
}

// keepRune appends character i of reading r (rune c) to a reading being rebuilt, with its step,
// probability, gap and doubt.
func keepRune(text []byte, out *ctc.Result, r ctc.Result, i int, c rune, doubt bool) []byte {
	out.Steps = append(out.Steps, r.Steps[i])
	out.Probs = append(out.Probs, r.Probs[i])
	out.GapSpace = append(out.GapSpace, r.GapSpace[i])
	if doubt {
		out.Doubt = append(out.Doubt, r.Doubt[i])
	}
	return utf8.AppendRune(text, c)
}

// bracketSpaces returns r without the spaces just inside a bracket: after an opening one before
// a letter or a digit, before a closing one after a letter or a digit. A typewriter sets a
// bracket in a cell of its own, and the gap it leaves reads as a space, from the model or from
// the pixels: "( 42)", "(Indiana )" (18 such on FUNSD's training forms, where neither its truth nor
// sroie-dev's writes one). An empty pair, "( )", keeps its space.
func bracketSpaces(r ctc.Result) ctc.Result {
	rs := []rune(r.Text)
	if len(r.Steps) != len(rs) || len(r.Probs) != len(rs) || len(r.GapSpace) != len(rs) {
		return r
	}
	var drop []int
	for i := 1; i+1 < len(rs); i++ {
		if rs[i] != ' ' {
			continue
		}
		if strings.ContainsRune("([{", rs[i-1]) && wordRune(rs[i+1]) || strings.ContainsRune(")]}", rs[i+1]) && wordRune(rs[i-1]) {
			drop = append(drop, i)
		}
	}
	if len(drop) == 0 {
		return r
	}
	doubt := len(r.Doubt) == len(rs)
	out := ctc.Result{Score: r.Score, LongestRun: r.LongestRun}
	text := make([]byte, 0, len(r.Text))
	for i, c := range rs {
		if len(drop) > 0 && drop[0] == i {
			drop = drop[1:]
			continue
		}
		text = keepRune(text, &out, r, i, c, doubt)
	}
	out.Text = string(text)
	return out
}
