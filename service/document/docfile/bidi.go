package docfile

import (
	"slices"

	"golang.org/x/text/unicode/bidi"
)

// logical reorders a line drawn left to right (seq: glyph indices, -1 between words) into the
// order it is read in, Unicode's logical order, and reports which of its items were read right to
// left (their brackets are drawn mirrored). A line without right-to-left letters is returned as
// it is: nearly every line, for the cost of a class lookup a glyph.
//
// A PDF draws glyphs where they are seen: a right-to-left line is placed right to left whatever
// order its content draws it in, so the line, once its glyphs are put in order along the
// baseline, is in visual order. Visual order is turned into logical order by the Unicode
// Bidirectional Algorithm's own reordering (rule L2: reverse every run at or above each odd
// level), applied to levels resolved on the visual line with the classes of
// golang.org/x/text/unicode/bidi: right-to-left letters (R, AL) at level 1; in a right-to-left
// line (more right-to-left letters than left-to-right ones) left-to-right letters and numbers at
// level 2; in a left-to-right line numbers between right-to-left letters at level 2; neutrals
// (spaces, punctuation) take the direction of the letters on both sides when they agree, and the
// line's otherwise (rules W1–N2, without explicit embeddings, which a PDF's text never holds).
// Reversing a run twice restores it, so this recovers the logical order the line was shaped
// from: "2024 مكل اركش" as drawn reads "شكرا لكم 2024".
func logical(seq []int, runeOf func(int) rune) ([]int, []bool) {
	type class uint8
	const (
		neutral class = iota
		ltr
		rtl
		number
	)
	classes := make([]class, len(seq))
	nl, nr := 0, 0
	for k, i := range seq {
		if i < 0 {
			continue // between words: a space
		}
		p, _ := bidi.LookupRune(runeOf(i))
		switch p.Class() {
		case bidi.L:
			classes[k] = ltr
			nl++
		case bidi.R, bidi.AL:
			classes[k] = rtl
			nr++
		case bidi.EN, bidi.AN:
			classes[k] = number
		case bidi.ES, bidi.CS, bidi.ET:
			// Separators and terminators inside a number belong to it (W4, W5): 1,299.00 -5%.
			if k > 0 && classes[k-1] == number && k+1 < len(seq) && seq[k+1] >= 0 {
				if q, _ := bidi.LookupRune(runeOf(seq[k+1])); q.Class() == bidi.EN || q.Class() == bidi.AN {
					classes[k] = number
				}
			}
		}
	}
	if nr == 0 {
		return seq, make([]bool, len(seq))
	}
	base := 0
	if nr > nl {
		base = 1
	}
	// A number's direction for the neutrals around it (N1): right to left.
	dir := func(c class) class {
		if c == number {
			return rtl
		}
		return c
	}
	levels := make([]int, len(seq))
	for k, c := range classes {
		switch c {
		case rtl:
			levels[k] = 1
		case ltr:
			levels[k] = 2 * base
		case number:
			if base == 1 {
				levels[k] = 2
			} else {
				// Between right-to-left letters, a number is read within them.
				left, right := neighbour(classes, k, -1), neighbour(classes, k, 1)
				if dir(left) == rtl && dir(right) == rtl {
					levels[k] = 2
				}
			}
		}
	}
	for k, c := range classes {
		if c != neutral {
			continue
		}
		left, right := dir(neighbour(classes, k, -1)), dir(neighbour(classes, k, 1))
		switch {
		case left == rtl && right == rtl:
			levels[k] = 1
		case left == ltr && right == ltr:
			levels[k] = 2 * base
		default:
			levels[k] = base
		}
	}
	order := slices.Clone(seq)
	lv := slices.Clone(levels)
	for top := slices.Max(lv); top >= 1; top-- {
		for k := 0; k < len(order); {
			if lv[k] < top {
				k++
				continue
			}
			e := k
			for e < len(order) && lv[e] >= top {
				e++
			}
			slices.Reverse(order[k:e])
			slices.Reverse(lv[k:e])
			k = e
		}
	}
	odd := make([]bool, len(order))
	for k := range lv {
		odd[k] = lv[k]%2 == 1
	}
	return order, odd
}

// neighbour is the class of the nearest item of seq before (step -1) or after (step 1) k that is
// not neutral; neutral when there is none, which then counts as the line's direction.
func neighbour[C ~uint8](classes []C, k, step int) C {
	for j := k + step; j >= 0 && j < len(classes); j += step {
		if classes[j] != 0 {
			return classes[j]
		}
	}
	return 0
}

// mirror is the glyph a right-to-left run draws for r: its mirror image for brackets and the
// like ("(" drawn where ")" is read).
func mirror(r rune) rune {
	p, _ := bidi.LookupRune(r)
	if !p.IsBracket() && r != '<' && r != '>' && r != '«' && r != '»' {
		return r
	}
	for _, m := range bidi.ReverseString(string(r)) {
		return m
	}
	return r
}

// rightToLeft reports whether r is a letter of a right-to-left script (Hebrew, Arabic).
func rightToLeft(r rune) bool {
	p, _ := bidi.LookupRune(r)
	return p.Class() == bidi.R || p.Class() == bidi.AL
}
