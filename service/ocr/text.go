package ocr

import (
	"strings"
	"unicode"
)

// asciiWidth turns fullwidth ASCII forms (U+FF01–U+FF5E, and the ideographic space) into plain
// ASCII when a line has no CJK characters. The recognizer's dictionary is Chinese-first, so on
// Latin receipts it often reads "(" as "（" or ":" as "："; in a Latin line those are always the
// ASCII characters. So are the CJK marks it reads for their lookalikes: the ideographic comma
// and full stop, and the double angle brackets for round ones ("$ 43、335.00", "《MRS.)" on
// FUNSD's typed forms). Lines with Han, kana or Hangul keep their fullwidth punctuation, which is
// correct typography there.
func asciiWidth(s string) string {
	if hasCJK(s) {
		return s
	}
	wide := false
	for _, r := range s {
		if asciiOf(r) != r {
			wide = true
		}
	}
	if !wide {
		return s
	}
	return strings.Map(asciiOf, s)
}

// asciiOf is the ASCII character r stands for in a Latin line (see asciiWidth), or r.
func asciiOf(r rune) rune {
	switch {
	case r == '\u3000':
		return ' '
	case r >= '\uff01' && r <= '\uff5e':
		return r - 0xfee0
	case r == '、':
		return ','
	case r == '。':
		return '.'
	case r == '《':
		return '('
	case r == '》':
		return ')'
	}
	return r
}

// latinLookalikes corrects, in a line without CJK characters, the digits and letters that the
// recognizer confuses where the word around them says which is meant: its Chinese-first
// dictionary reads the O of "INVOICE" as 0 and the 0 of "-0.01" as O, and the ll of "balloon" as
// 11. Within a word (characters between spaces):
//   - a 0 or a run of 1s between two letters, or a 0 beside a letter in a word with no other
//     digit, is a letter: o or l beside lower case, O or I beside upper case ("N0:" → "NO:",
//     "ba11oon" → "balloon");
//   - an O in a word whose other letters and digits are all digits is a 0 ("-O.01" → "-0.01",
//     "10O.00" → "100.00"), and so is an l before a digit in such a word of two digits or more
//     a 1 ("l0021" → "10021", see digitEll);
//   - × between digits or a space and a digit is the letter x of "2 x 18.90", as receipts write it.
//
// It works rune for rune, so a reading's timesteps still line up with its characters. Words that
// mix letters and other digits ("A1B2", "4G") are left alone: there the context says nothing.
func latinLookalikes(s string) string {
	rs := []rune(s)
	changed := false
	for lo := 0; lo < len(rs); {
		if rs[lo] == ' ' {
			lo++
			continue
		}
		hi := lo
		for hi < len(rs) && rs[hi] != ' ' {
			hi++
		}
		if fixWord(rs[lo:hi]) {
			changed = true
		}
		lo = hi
	}
	for i, r := range rs {
		if r == '×' && i > 0 && i+1 < len(rs) && (isDigitRune(rs[i-1]) || rs[i-1] == ' ') && (isDigitRune(rs[i+1]) || rs[i+1] == ' ') {
			rs[i] = 'x'
			changed = true
		}
	}
	if !changed {
		return s
	}
	return string(rs)
}

// fixWord applies latinLookalikes' rules to one word in place and reports whether it changed it.
func fixWord(w []rune) bool {
	letters, digits, zeros, ones, ohs := 0, 0, 0, 0, 0
	for _, r := range w {
		switch {
		case r == 'O' || r == 'o':
			ohs++
		case r == '0':
			zeros++
		case r == '1':
			ones++
		case isDigitRune(r):
			digits++
		case isLatinLetter(r):
			letters++
		}
	}
	changed := false
	if n := digitEll(w, letters, digits+zeros+ones); n > 0 {
		letters -= n
		ones += n
		changed = true
	}
	if letters == 0 && ohs > 0 && digits+zeros+ones > 0 {
		// A number read with an O in it.
		for i, r := range w {
			if r == 'O' || r == 'o' {
				w[i] = '0'
				changed = true
			}
		}
		return changed
	}
	if letters == 0 || digits > 0 {
		return changed
	}
	letter := func(i int) bool { return i >= 0 && i < len(w) && (isLatinLetter(w[i]) || w[i] == 'O' || w[i] == 'o') }
	lower := func(i int) bool { return i >= 0 && i < len(w) && unicode.IsLower(w[i]) }
	for i := 0; i < len(w); {
		r := w[i]
		if r != '0' && r != '1' {
			i++
			continue
		}
		j := i
		for j < len(w) && w[j] == r {
			j++
		}
		between := letter(i-1) && letter(j)
		beside := r == '0' && ones == 0 && (letter(i-1) || letter(j))
		if between || beside {
			low := lower(i-1) || lower(j)
			for k := i; k < j; k++ {
				switch {
				case r == '0' && low:
					w[k] = 'o'
				case r == '0':
					w[k] = 'O'
				case low:
					w[k] = 'l'
				default:
					w[k] = 'I'
				}
			}
			changed = true
		}
		i = j
	}
	return changed
}

// digitEll turns into 1s the lower-case ls of a figure, a word whose only letters are ls and
// which holds at least two digits (nums): an l before a digit, at the word's start or after a
// digit ("l0103", "$4l00."), as a typewriter's or a fax's 1 reads. An l after the digits is left
// alone: it may be a litre ("1.5l"). It returns how many it turned.
func digitEll(w []rune, letters, nums int) int {
	ells := 0
	for _, r := range w {
		if r == 'l' {
			ells++
		}
	}
	if ells == 0 || ells != letters || nums < 2 {
		return 0
	}
	n := 0
	for i, r := range w {
		if r == 'l' && i+1 < len(w) && isDigitRune(w[i+1]) && (i == 0 || !letterOrDigit(w[i-1]) || isDigitRune(w[i-1])) {
			w[i] = '1'
			n++
		}
	}
	return n
}

func isDigitRune(r rune) bool { return r >= '0' && r <= '9' }

// isLatinLetter reports whether r is an ASCII letter other than the lookalikes O and o.
func isLatinLetter(r rune) bool {
	return (r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') && r != 'O' && r != 'o'
}

// hasCJK reports whether s holds Han, kana or Hangul.
func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}
