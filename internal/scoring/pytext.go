package scoring

// Python string semantics that ocr_score.py relies on: str.isspace / split() / strip(),
// str.splitlines(), str.casefold(), float() and the scorer's decode_bytes fallbacks.

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// isPySpace reports whether Python's str.isspace() is true for r. It is unicode.IsSpace plus the
// information separators U+001C..U+001F, which Python counts as whitespace and Go does not.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyFields is Python's s.split() with no arguments: the non-empty runs between whitespace.
func pyFields(s string) []string { return strings.FieldsFunc(s, isPySpace) }

// pyStrip is Python's s.strip() with no arguments.
func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }

// squash strips s and collapses inner whitespace runs to one space (" ".join(s.split())).
func squash(s string) string { return strings.Join(pyFields(s), " ") }

// isPyLineBreak reports whether Python's str.splitlines() breaks at r.
func isPyLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// pySplitLines is Python's s.splitlines(): "\r\n" is one break, and a break at the very end
// does not start another (empty) line.
func pySplitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPyLineBreak(r) {
			i += size
			continue
		}
		out = append(out, s[start:i])
		i += size
		if r == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// casefold is Python's str.casefold() (full Unicode case folding, applied per code point).
// It is exact for every code point: unicode.ToLower differs from Python only for the entries of
// casefoldExceptions (e.g. "ß" -> "ss", "ς" -> "σ", "ﬁ" -> "fi", "İ" -> "i̇") and for Cherokee,
// which case-folds to the upper-case letters.
func casefold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 0x13A0 && r <= 0x13F5: // Cherokee capitals fold to themselves
			b.WriteRune(r)
		case r >= 0x13F8 && r <= 0x13FD:
			b.WriteRune(r - 8)
		case r >= 0xAB70 && r <= 0xABBF:
			b.WriteRune(r - 0xAB70 + 0x13A0)
		default:
			if f, ok := casefoldExceptions[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
	}
	return b.String()
}

// validText returns s with each byte of an invalid UTF-8 sequence replaced by U+FFFD, which is
// what the text becomes on its way to Python through encoding/json.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// cp1252High maps bytes 0x80..0x9F of Windows-1252; 0 marks the five bytes Python's cp1252 codec
// rejects (0x81, 0x8D, 0x8F, 0x90, 0x9D). Bytes 0xA0..0xFF equal their Latin-1 code points.
var cp1252High = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

// decodeBytes is ocr_score.py's decode_bytes: UTF-16 when the data starts with a UTF-16 BOM and
// decodes strictly, else UTF-8 (a leading UTF-8 BOM removed), else cp1252, else Latin-1. It
// returns the text and the Python name of the encoding used.
func decodeBytes(data []byte) (string, string) {
	if len(data) >= 2 && ((data[0] == 0xFF && data[1] == 0xFE) || (data[0] == 0xFE && data[1] == 0xFF)) {
		if s, ok := decodeUTF16(data); ok {
			return s, "utf-16"
		}
	}
	if utf8.Valid(data) {
		if rest, ok := strings.CutPrefix(string(data), "\uFEFF"); ok {
			return rest, "utf-8-sig"
		}
		return string(data), "utf-8"
	}
	var b strings.Builder
	ok := true
	for _, c := range data {
		r := rune(c)
		if c >= 0x80 && c <= 0x9F {
			r = cp1252High[c-0x80]
			if r == 0 {
				ok = false
				break
			}
		}
		b.WriteRune(r)
	}
	if ok {
		return b.String(), "cp1252"
	}
	b.Reset()
	for _, c := range data {
		b.WriteRune(rune(c))
	}
	return b.String(), "latin-1"
}

// decodeUTF16 decodes data that starts with a byte order mark, strictly (an odd length or an
// unpaired surrogate fails), and drops the mark, as Python's "utf-16" codec does.
func decodeUTF16(data []byte) (string, bool) {
	if len(data)%2 != 0 {
		return "", false
	}
	big := data[0] == 0xFE
	units := make([]uint16, 0, len(data)/2-1)
	for i := 2; i < len(data); i += 2 {
		if big {
			units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
		} else {
			units = append(units, uint16(data[i+1])<<8|uint16(data[i]))
		}
	}
	var b strings.Builder
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		switch {
		case utf16.IsSurrogate(u) && u < 0xDC00 && i+1 < len(units):
			r := utf16.DecodeRune(u, rune(units[i+1]))
			if r == utf8.RuneError {
				return "", false
			}
			b.WriteRune(r)
			i++
		case utf16.IsSurrogate(u):
			return "", false
		default:
			b.WriteRune(u)
		}
	}
	return b.String(), true
}

// pyFloat is Python's float(s) for a string: surrounding whitespace, a sign, "_" between digits,
// any Unicode decimal digits, "inf"/"infinity"/"nan" in any case, and values that overflow to
// ±inf are accepted; hexadecimal and other Go-only syntax is rejected.
func pyFloat(s string) (float64, bool) {
	rs := []rune(pyStrip(s))
	var b strings.Builder
	i, n := 0, len(rs)
	sign := 1
	if i < n && (rs[i] == '+' || rs[i] == '-') {
		if rs[i] == '-' {
			sign = -1
		}
		b.WriteRune(rs[i])
		i++
	}
	switch asciiLower(rs[i:]) {
	case "inf", "infinity":
		return math.Inf(sign), true
	case "nan":
		return math.NaN(), true
	}
	// digitpart: digit (["_"] digit)*; returns the number of digits read.
	digits := func() int {
		count := 0
		for i < n {
			d, ok := decimalValue(rs[i])
			if ok {
				b.WriteByte(byte('0' + d))
				count++
				i++
				continue
			}
			if rs[i] == '_' && count > 0 && i+1 < n {
				if _, next := decimalValue(rs[i+1]); next {
					i++
					continue
				}
			}
			break
		}
		return count
	}
	intDigits := digits()
	fracDigits := 0
	if i < n && rs[i] == '.' {
		b.WriteByte('.')
		i++
		fracDigits = digits()
	}
	if intDigits == 0 && fracDigits == 0 {
		return 0, false
	}
	if i < n && (rs[i] == 'e' || rs[i] == 'E') {
		b.WriteByte('e')
		i++
		if i < n && (rs[i] == '+' || rs[i] == '-') {
			b.WriteRune(rs[i])
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if i != n {
		return 0, false
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}

// decimalValue returns the value of a Unicode decimal digit (category Nd). Unicode encodes every
// decimal digit set as a contiguous run of ten code points, 0 to 9.
func decimalValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10, true
}

// asciiLower lower-cases rs if it is all ASCII and returns "" otherwise.
func asciiLower(rs []rune) string {
	b := make([]byte, len(rs))
	for i, r := range rs {
		if r >= utf8.RuneSelf {
			return ""
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		b[i] = byte(r)
	}
	return string(b)
}
