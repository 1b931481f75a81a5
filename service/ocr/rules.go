package ocr

import (
	"image"
	"strings"
	"unicode"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// Rules read as underscores.
//
// A field's underline, or the rule a form types its answers on, lies under the line's letters,
// and the detector's box takes some of it in. Where the rule shows past a word's first or last
// letter the recognizer reads it as an underscore glued to the word ("The_ current _ system",
// "_YES", "$_ 47.711.47": 91 of the words and lone marks it read on FUNSD's 149 training
// forms, where the truth has one underscore in 21 935 words). Painting the rule out of the crop
// before it is read does worse: under the letters it takes the foot of an E or the tail of a g
// with it, and the pieces it leaves there read as underscores in turn (word F1 0.7811 → 0.7774,
// 154 regions worse against 86 better). So the rule stays in the crop, and an underscore read over
// it is taken out of the text: one that begins or ends a word, or stands alone, where the crop's
// bottom ruleBand of rows holds a run of ink ruleRun times the crop's height long or a row inked
// across ruleCover of its width; one between a mark and a word ("lose,_California") filled a word
// space, and reads as one. No typed underscore is that long alone; a row of them typed as a
// blank to fill in is the same rule. An underscore inside a word ("file_name", an underlined
// address) stays.
//
// ruleContrast is the least difference between a crop's darkest and lightest pixel for a rule
// to be looked for: in a crop of little contrast the ink threshold lies near the paper, and a
// row of grain would pass for a rule.
const ruleContrast = 96

// ruledUnderscores returns r without the underscores its crop shows to be a rule (see above).
// img is the crop as the recognizer read it, its first width columns the line; a timestep spans
// rw/steps columns.
func ruledUnderscores(img *image.RGBA, width int, r ctc.Result, steps, rw int) ctc.Result {
	rs := []rune(r.Text)
	if img == nil || steps <= 0 || !strings.ContainsRune(r.Text, '_') || len(r.Steps) != len(rs) || len(r.Probs) != len(rs) || len(r.GapSpace) != len(rs) {
		return r
	}
	var drop []int
	for i, c := range rs {
		if c != '_' {
			continue
		}
		// The run of underscores this one belongs to, and whether it begins or ends a word.
		a, b := i, i
		for a > 0 && rs[a-1] == '_' {
			a--
		}
		for b+1 < len(rs) && rs[b+1] == '_' {
			b++
		}
		edge := a == 0 || rs[a-1] == ' ' || b+1 == len(rs) || rs[b+1] == ' '
		if edge || !wordRune(rs[a-1]) || !wordRune(rs[b+1]) {
			drop = append(drop, i)
		}
	}
	if len(drop) == 0 {
		return r
	}
	ruled := ruledColumns(img, width)
	if ruled == nil {
		return r
	}
	scale := float64(rw) / float64(steps)
	gone := make(map[int]bool, len(drop))
	for _, i := range drop {
		// The columns of the underscore's step, and its neighbours': a step fires anywhere
		// along its character.
		x0 := max(0, int((float64(r.Steps[i])-0.5)*scale))
		x1 := min(len(ruled), int((float64(r.Steps[i])+1.5)*scale)+1)
		for x := x0; x < x1; x++ {
			if ruled[x] {
				gone[i] = true
				break
			}
		}
	}
	if len(gone) == 0 {
		return r
	}
	doubt := len(r.Doubt) == len(rs)
	out := ctc.Result{Score: r.Score, LongestRun: r.LongestRun}
	var text []byte
	for i, c := range rs {
		if gone[i] {
			// Between a mark and a word ("lose,_California") the rule filled a word space.
			end := i
			for end+1 < len(rs) && gone[end+1] {
				end++
			}
			if i > 0 && !gone[i-1] && rs[i-1] != ' ' && end+1 < len(rs) && rs[end+1] != ' ' {
				text = addSpace(text, &out, r.Steps[i], doubt)
			}
			continue
		}
		// A space the dropped underscores leave doubled, or at the line's start, goes too.
		if c == ' ' && (len(text) == 0 || text[len(text)-1] == ' ') {
			continue
		}
		text = keepRune(text, &out, r, i, c, doubt)
	}
	for len(text) > 0 && text[len(text)-1] == ' ' {
		text = text[:len(text)-1]
		out.Steps, out.Probs, out.GapSpace = out.Steps[:len(out.Steps)-1], out.Probs[:len(out.Probs)-1], out.GapSpace[:len(out.GapSpace)-1]
		if doubt {
			out.Doubt = out.Doubt[:len(out.Doubt)-1]
		}
	}
	out.Text = string(text)
	return out
}

// wordRune reports whether c is a letter or a digit: an underscore between two of them is part of
// what was typed ("file_name").
func wordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

// ruledColumns marks the columns, of img's first width, over which its bottom ruleBand of rows
// holds a rule: a run of ink ruleRun times the crop's height long, or a row inked across ruleCover
// of the width. It returns nil where there is none, or too little contrast to tell.
func ruledColumns(img *image.RGBA, width int) []bool {
	b := img.Rect
	width = min(width, b.Dx())
	h := b.Dy()
	if width < 1 || h < 4 {
		return nil
	}
	lo, hi := uint8(255), uint8(0)
	lum := func(x, y int) uint8 {
		p := img.Pix[img.PixOffset(b.Min.X+x, b.Min.Y+y):]
		return uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
	}
	for y := range h {
		for x := range width {
			l := lum(x, y)
			lo, hi = min(lo, l), max(hi, l)
		}
	}
	if int(hi)-int(lo) < ruleContrast {
		return nil
	}
	th := hi - (hi-lo)/4
	longRun := int(ruleRun * float64(h))
	var ruled []bool
	row := make([]uint8, width)
	for y := int((1 - ruleBand) * float64(h)); y < h; y++ {
		for x := range width {
			row[x] = lum(x, y)
		}
		whole := inkShare(row, th) >= ruleCover
		inkRuns(row, th, func(x0, x1 int) {
			if !whole && x1-x0 < longRun {
				return
			}
			if ruled == nil {
				ruled = make([]bool, width)
			}
			for k := x0; k < x1; k++ {
				ruled[k] = true
			}
		})
	}
	return ruled
}
