package ocr

import (
	"image"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// Letter-spaced text: a heading set with space between its letters ("D A V I S   P O L K").
// The recognizer reads every such gap as a word space, or some of them, so the heading comes
// back as words broken at random ("DAVI S P O LK"), with stray points read from the white
// between letters. Which spaces are words is in the gaps: the white between the letters of a
// letter-spaced word is the tracking, the same all along the line, and a word space is that and
// a space more. A line is letter-spaced when it reads as mostly single letters (at least
// letterRunMin one-letter words, half of its words or more), or when it holds letterRunMin
// letters or more and its tracking (the gap a third of the way up, a gap between letters in
// any line) is at least letterTrack of the ink's height at the crop's natural aspect: set close,
// letters are a pixel or two apart. In such a line the spaces are taken from the pixels alone:
// the blank columns between each two characters, located by their CTC timesteps, and a space
// where that gap is at least letterGapRatio times the tracking. A point or middle dot between
// two letters goes, a space read between two digits stays (figures in a row are numbers apart:
// "8 1"), and a column of one inked pixel (a fax's speck) is white.
const (
	letterRunMin   = 3
	letterGapRatio = 1.8
	letterTrack    = 0.3
)

// letterSpacing returns r with the words of a letter-spaced line (see above) taken from the
// gaps of its crop img, its first width columns the line; a timestep spans rw/steps columns.
func letterSpacing(img *image.RGBA, width, natural int, r ctc.Result, steps, rw int) ctc.Result {
	rs := []rune(r.Text)
	if img == nil || steps <= 0 || len(r.Steps) != len(rs) || len(r.Probs) != len(rs) || len(r.GapSpace) != len(rs) || hasCJK(r.Text) {
		return r
	}
	fields := strings.Fields(r.Text)
	singles := 0
	for _, f := range fields {
		if c, _ := utf8.DecodeRuneInString(f); utf8.RuneCountInString(f) == 1 && unicode.IsLetter(c) {
			singles++
		}
	}
	spaced := singles >= letterRunMin && 2*singles >= len(fields)
	// The characters kept: no spaces, and no point read from the white between two letters
	// (a decimal point between digits stays).
	var keep []int
	for i, c := range rs {
		if c == ' ' {
			continue
		}
		if c == '.' || c == '·' || c == '•' {
			before, after := neighbour(rs, i, -1), neighbour(rs, i, 1)
			letterSide := func(c rune) bool { return c == 0 || unicode.IsLetter(c) || c == '&' }
			if letterSide(before) && letterSide(after) {
				continue
			}
		}
		keep = append(keep, i)
	}
	if len(keep) < 2 {
		return r
	}
	letters := 0
	for _, c := range rs {
		if unicode.IsLetter(c) {
			letters++
		}
	}
	if !spaced && (len(fields) < 2 || letters < letterRunMin) {
		return r
	}
	cols, inkH := inkColumns(img, width)
	if inkH == 0 {
		return r
	}
	scale := float64(rw) / float64(steps)
	gap := func(i, j int) int { // the widest blank run with ink on both sides between the steps of i and j
		lo := int((float64(r.Steps[i]) + 0.5) * scale)
		hi := min(len(cols)-1, int((float64(r.Steps[j])+1.5)*scale))
		best, run, seen := 0, 0, false
		for x := max(0, lo); x <= hi; x++ {
			if cols[x] <= 1 { // a speck is no ink
				run++
				continue
			}
			if seen && run > 0 {
				best = max(best, run)
			}
			seen, run = true, 0
		}
		return best
	}
	gaps := make([]int, len(keep)-1)
	for k := range gaps {
		gaps[k] = gap(keep[k], keep[k+1])
	}
	sorted := slices.Clone(gaps)
	slices.Sort(sorted)
	track := max(1, sorted[len(sorted)/3])
	if !spaced && (float64(track)*float64(natural)/float64(width) < letterTrack*float64(inkH)) {
		return r
	}
	out := ctc.Result{Score: r.Score, LongestRun: r.LongestRun}
	doubt := len(r.Doubt) == len(rs)
	text := make([]byte, 0, len(r.Text))
	for k, i := range keep {
		digits := k > 0 && isDigitRune(rs[keep[k-1]]) && isDigitRune(rs[i]) && strings.ContainsRune(string(rs[keep[k-1]:i]), ' ')
		if k > 0 && (digits || float64(gaps[k-1]) >= letterGapRatio*float64(track)) {
			text = addSpace(text, &out, r.Steps[i], doubt)
		}
		text = keepRune(text, &out, r, i, rs[i], doubt)
	}
	out.Text = string(text)
	return out
}

// neighbour is the first rune from rs[i] in direction dir (±1) that is not a space, or 0.
func neighbour(rs []rune, i, dir int) rune {
	for j := i + dir; j >= 0 && j < len(rs); j += dir {
		if rs[j] != ' ' && rs[j] != '.' && rs[j] != '·' && rs[j] != '•' {
			return rs[j]
		}
	}
	return 0
}
