package main

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
)

// Score is one answered page compared with its reference text.
type Score struct {
	RefWords, Words int // words (white-space separated, NFKC) in the reference and the answer
	// WordsLost are the reference's words the answer lacks, WordsExtra the answer's the
	// reference lacks (as multisets, case kept): what made F1 what it is.
	WordsLost, WordsExtra []string
	F1, F1Fold            float64 // bag-of-words F1, case kept and case folded
	// CharAcc is how much of the reference's text the answer holds: 1 − the summed edit
	// distance of each reference line to its closest stretch of the answer over the reference's
	// characters (white space aside). Each line is found wherever the answer has it, so the
	// answer's order of lines costs nothing, the order of characters inside a line everything.
	CharAcc float64
	// Lost are the reference's lines the answer does not hold; Extra the answer's lines the
	// reference does not hold (a line is held when some stretch of the other text is within a
	// fifth of its length in edits; lines under 3 characters are not counted).
	Lost, Extra []string
	// Merges are the answer's tokens made of two reference lines interleaved (findMerges);
	// Doubled those made of one stretch dealt with itself (a line drawn twice, kept twice).
	Merges, Doubled []Merge
}

// MergedLines is how many of the answer's lines hold a merge.
func (s Score) MergedLines() int {
	n, last := 0, -1
	for _, m := range s.Merges {
		if m.Line != last {
			n, last = n+1, m.Line
		}
	}
	return n
}

// compare scores answer lines against reference lines. Both are read as a person reads text:
// NFKC (so a ligature is its letters and a full-width digit a digit), words split at white
// space, a word hyphenated at the end of a line read whole (pdftotext joins them, a page's lines
// keep them as printed).
func compare(ref, answer []string) Score {
	var s Score
	refText, ansText := strings.Join(ref, "\n"), strings.Join(answer, "\n")
	refWords, ansWords := lineWords(ref), lineWords(answer)
	s.RefWords, s.Words = len(refWords), len(ansWords)
	s.F1 = bagF1(refWords, ansWords)
	s.WordsLost, s.WordsExtra = bagDiff(refWords, ansWords), bagDiff(ansWords, refWords)
	fold := cases.Fold()
	for i := range refWords {
		refWords[i] = fold.String(refWords[i])
	}
	for i := range ansWords {
		ansWords[i] = fold.String(ansWords[i])
	}
	s.F1Fold = bagF1(refWords, ansWords)

	refDist, refLen := distances(ref, ansText)
	var edits, total int
	for i, line := range ref {
		edits += min(refDist[i], refLen[i])
		total += refLen[i]
		if refLen[i] >= 3 && refDist[i] > refLen[i]/5 {
			s.Lost = append(s.Lost, line)
		}
	}
	s.CharAcc = 1
	if total > 0 {
		s.CharAcc = 1 - float64(edits)/float64(total)
	}
	ansDist, ansLen := distances(answer, refText)
	for i, line := range answer {
		if ansLen[i] >= 3 && ansDist[i] > ansLen[i]/5 {
			s.Extra = append(s.Extra, line)
		}
	}
	s.Merges, s.Doubled = findMerges(ref, answer)
	return s
}

// lineWords are the white-space separated words of lines in NFKC, a word that ends a line with
// a hyphen after a letter joined with the next line's first word when that begins with a
// lower-case letter ("Ex-" and "isting": "Existing").
func lineWords(lines []string) []string {
	var out []string
	hyphenated := false
	for _, l := range lines {
		ws := strings.Fields(norm.NFKC.String(l))
		if len(ws) == 0 {
			continue
		}
		if first, _ := utf8.DecodeRuneInString(ws[0]); hyphenated && unicode.IsLower(first) {
			last := out[len(out)-1]
			out[len(out)-1] = last[:len(last)-1] + ws[0]
			ws = ws[1:]
		}
		out = append(out, ws...)
		hyphenated = false
		if len(ws) > 0 {
			w := []rune(ws[len(ws)-1])
			hyphenated = len(w) >= 2 && w[len(w)-1] == '-' && unicode.IsLetter(w[len(w)-2])
		}
	}
	return out
}

// bagDiff is what want holds that got lacks, as multisets, in want's order.
func bagDiff(want, got []string) []string {
	count := make(map[string]int, len(got))
	for _, g := range got {
		count[g]++
	}
	var out []string
	for _, w := range want {
		if count[w] > 0 {
			count[w]--
			continue
		}
		out = append(out, w)
	}
	return out
}

// bagF1 is the F1 score of got against want as multisets of words (SROIE's word protocol, as
// ocr_score.py counts it): nothing against nothing is 1, anything against nothing 0.
func bagF1(want, got []string) float64 {
	if len(want) == 0 && len(got) == 0 {
		return 1
	}
	if len(want) == 0 || len(got) == 0 {
		return 0
	}
	return 2 * float64(ocrscore.SharedWords(want, got)) / float64(len(want)+len(got))
}

// squeeze is s in NFKC with its white space removed: the characters a line is made of,
// whatever spacing a reader puts between its words.
func squeeze(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range norm.NFKC.String(s) {
		if !unicode.IsSpace(r) {
			out = append(out, r)
		}
	}
	return out
}

// distances finds each of lines in other (both squeezed): the fewest edits that make the line a
// stretch of other (nearest), and the line's length. Lines are looked for longest first, and a
// line found exactly uses its stretch up: a line the one text repeats must be in the other as
// often (a timetable's "11:50" is not found twice in one "11:50"), and a short line is not found
// inside a longer one's stretch.
func distances(lines []string, other string) (dist, length []int) {
	hay := squeeze(other)
	sq := make([][]rune, len(lines))
	order := make([]int, len(lines))
	for i, l := range lines {
		sq[i], order[i] = squeeze(l), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(sq[b]) - len(sq[a]) })
	dist, length = make([]int, len(lines)), make([]int, len(lines))
	str := string(hay)
	for _, i := range order {
		l := sq[i]
		length[i] = len(l)
		if len(l) == 0 {
			continue
		}
		if at := strings.Index(str, string(l)); at >= 0 {
			from := utf8.RuneCountInString(str[:at])
			for k := from; k < from+len(l); k++ {
				hay[k] = used
			}
			str = string(hay)
			continue
		}
		dist[i] = nearest(l, hay)
	}
	return dist, length
}

// used marks a character of a text that a line found exactly has taken: no text holds it.
const used = '\uFFFF'

// nearest is the fewest edits (insertions, deletions, substitutions of one character) that
// turn pattern into some stretch of text: 0 when text holds it, len(pattern) at most.
func nearest(pattern, text []rune) int {
	if len(pattern) == 0 {
		return 0
	}
	// Sellers' dynamic programme: col[i] is the fewest edits that turn pattern[:i] into a
	// stretch of text ending at the current character; a stretch may start anywhere, so
	// col[0] stays 0.
	col := make([]int, len(pattern)+1)
	for i := range col {
		col[i] = i
	}
	best := col[len(pattern)]
	for _, c := range text {
		diag := col[0]
		for i := 1; i <= len(pattern); i++ {
			up := col[i]
			cost := diag
			if pattern[i-1] != c {
				cost++
			}
			cost = min(cost, up+1, col[i-1]+1)
			diag, col[i] = up, cost
		}
		best = min(best, col[len(pattern)])
		if best == 0 {
			break
		}
	}
	return best
}
