package ocr

import (
	"strings"
	"unicode"
)

// asciiWidth turns fullwidth ASCII forms (U+FF01–U+FF5E, and the ideographic space) into plain
// ASCII when a line has no CJK characters. The recognizer's dictionary is Chinese-first, so on
// Latin receipts it often reads "(" as "（" or ":" as "："; in a Latin line those are always the
// ASCII characters. Lines with Han, kana or Hangul keep their fullwidth punctuation, which is
// correct typography there.
func asciiWidth(s string) string {
	wide := false
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			return s
		case r == '\u3000' || (r >= '\uff01' && r <= '\uff5e'):
			wide = true
		}
	}
	if !wide {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u3000':
			return ' '
		case r >= '\uff01' && r <= '\uff5e':
			return r - 0xfee0
		}
		return r
	}, s)
}
