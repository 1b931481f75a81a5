package main

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Merge is an answered token that is two stretches of the reference interleaved character by
// character: what sorting the glyphs of two overlapping lines by x makes of them
// (`DUep.aSrt.meIntnofdthievTiredasuurayl…`, "Department of the Treasury" into "U.S.
// Individual").
type Merge struct {
	Line  int    // the answer line that holds it, counted from 0
	Token string // the token, as answered
	A, B  string // the two stretches of the reference it is made of, in the reference's order
}

// The definition, on squeezed text (NFKC, white space removed; squeeze). R is the reference's
// lines joined in their order, so that a stretch of R may run on from one line into the next; a
// whole-word stretch of R begins where a word of the reference begins and ends where a word
// ends. Explaining a token T of an answered line (a maximal run of characters other than white
// space) is dealing its characters, keeping their order, into one or two stretches of R,
// skipping a few that fit neither (at most len(T)/8: a character of a third line caught in
// between, such as a colon, or a character OCR misread). T is a line merge when
//
//  1. it can be dealt into two disjoint whole-word stretches of R, x and y, each of 3
//     characters or more, switching between them at least twice (one stretch breaks off and
//     takes up again inside the token);
//  2. that skips fewer characters than any explanation in R's order does: T as one stretch, or
//     as one stretch followed by another (two lines run together, a missing space); and
//  3. x and y are not the same text: a token whose two stretches read alike is a doubling,
//     counted apart, as is a token whose every character is doubled where R holds it once each
//     ("MMaarrrriieedd" from "Married" drawn twice a hair apart, fake bold, and kept twice).
//
// Whole words, because a line's glyphs sorted by x with another line's leave a space only where
// both lines have one: the stretches a merged token holds begin and end at the words of both
// lines. This is what tells a merge from chance: a short OCR misreading of a long reference
// ("Wartosc" for "Wartość") can nearly always be dealt into two fragments of 3 characters
// found somewhere in it ("Wars" × "toc"), but not into two whole words.
//
// So "1112::5050" is a merge of "11:50" and "12:50" (dealt 1 1 | 1 2 | : : | 5 0 | 5 0 …), and
// "prélèvemen2t9:.99" of "prélèvement" and "29.99" with the colon of a third line skipped (read
// in order it would skip the 2 and the colon). "Total:12.00" is not a merge (two lines run
// together: one switch), nor is an OCR misreading such as "Treasnry" (no two stretches of R make
// it), nor "NameJohn" where the reference has "Name" over "John". Words of two lines
// interleaved whole ("Name John Date Today" against "Name Date" and "John Today") are not merges
// either: each token is whole.
//
// Clause 2's count is found for every split of T at once (skipsToStretch). Clause 1 follows
// every dealing at once, one character of T at a time, as a set of states (where each stretch
// began and has reached, which one had the last character, whether it switched twice yet) with
// the fewest skips that reach each. A stretch can only begin at a word of R that holds at least
// 3 characters that T holds in the same order, and where the two stretches could still hold all
// of T; a token whose states outgrow maxStates (a table of the same few characters repeated) is
// left undecided, and not counted.
const maxStates = 1 << 16

// findMerges returns the merged tokens of answer against the reference lines ref, and apart the
// doubled ones (clause 3).
func findMerges(ref, answer []string) (merges, doubled []Merge) {
	r, words := squeezeWords(strings.Join(ref, "\n"))
	rs := string(r)
	for li, line := range answer {
		for _, tok := range strings.Fields(norm.NFKC.String(line)) {
			t := []rune(tok)
			if len(t) < 6 || strings.Contains(rs, tok) {
				continue
			}
			if once, ok := undoubled(t); ok && strings.Contains(rs, once) {
				doubled = append(doubled, Merge{Line: li, Token: tok, A: once, B: once})
				continue
			}
			x, y, ok := merged(t, r, words)
			if !ok {
				continue
			}
			a, b := string(r[x.from:x.to]), string(r[y.from:y.to])
			if y.from < x.from {
				a, b = b, a
			}
			m := Merge{Line: li, Token: tok, A: a, B: b}
			if a == b {
				doubled = append(doubled, m)
			} else {
				merges = append(merges, m)
			}
		}
	}
	return merges, doubled
}

// undoubled is t with every character that it holds twice in a row held once, when all of it is
// so ("MMaarrrriieedd": "Married").
func undoubled(t []rune) (string, bool) {
	if len(t)%2 != 0 {
		return "", false
	}
	once := make([]rune, 0, len(t)/2)
	for i := 0; i < len(t); i += 2 {
		if t[i] != t[i+1] {
			return "", false
		}
		once = append(once, t[i])
	}
	return string(once), true
}

// boundary says where R's words begin and end: bit wordStart of boundary[j] when R's j-th
// character begins a word of the reference, wordEnd when it ends one.
type boundary uint8

const (
	wordStart boundary = 1 << iota
	wordEnd
)

// squeezeWords is squeeze(s) with the word boundaries of each of its characters.
func squeezeWords(s string) ([]rune, []boundary) {
	var out []rune
	var at []boundary
	space := true
	for _, c := range norm.NFKC.String(s) {
		if unicode.IsSpace(c) {
			if len(at) > 0 {
				at[len(at)-1] |= wordEnd
			}
			space = true
			continue
		}
		b := boundary(0)
		if space {
			b = wordStart
		}
		out, at, space = append(out, c), append(at, b), false
	}
	if len(at) > 0 {
		at[len(at)-1] |= wordEnd
	}
	return out, at
}

// merged reports whether t is a merge of two whole-word stretches of r (the definition above),
// and which.
func merged(t, r []rune, words []boundary) (x, y stretch, ok bool) {
	pre, suf := skipsToStretch(t, r, false), skipsToStretch(t, r, true)
	inOrder := len(t)
	for k := range pre {
		inOrder = min(inOrder, pre[k]+suf[k])
	}
	if inOrder == 0 {
		return x, y, false
	}
	return dealt(t, r, words, min(len(t)/8, inOrder-1))
}

// skipsToStretch returns, for every k, the fewest characters of t[:k] that must be skipped for
// the rest to be one stretch of r (possibly empty); with fromEnd, the same of t[k:]. It keeps, for
// each end of a stretch in r, the fewest skips that bring t's characters read so far to it.
func skipsToStretch(t, r []rune, fromEnd bool) []int {
	n, m := len(t), len(r)
	at := func(s []rune, i int) rune {
		if fromEnd {
			return s[len(s)-1-i]
		}
		return s[i]
	}
	out := make([]int, n+1)
	cur, next := make([]int, m+1), make([]int, m+1) // cur[j]: a stretch ending before r's j-th character
	for i := range n {
		c := at(t, i)
		best := i + 1
		for j := 0; j <= m; j++ {
			v := cur[j] + 1
			if j > 0 && at(r, j-1) == c {
				v = min(v, cur[j-1])
			}
			next[j] = v
			best = min(best, v)
		}
		cur, next = next, cur
		if fromEnd {
			out[n-1-i] = best
		} else {
			out[i+1] = best
		}
	}
	return out
}

// stretch is r[from:to]; from < 0 when it has not begun.
type stretch struct{ from, to int32 }

func (s stretch) len() int32 { return s.to - s.from }

// dealing is a state of the search: how far the characters of t dealt so far have taken each
// stretch, which had the last one (1: x, 2: y), and how often it switched (2 at most: enough).
type dealing struct {
	x, y           stretch
	last, switches int8
}

// dealt looks for a dealing of t into two disjoint whole-word stretches of r of 3 characters or
// more that switches at least twice, with at most allowed characters skipped.
func dealt(t, r []rune, words []boundary, allowed int) (x, y stretch, ok bool) {
	// reach[j]: how many characters from r's j-th on t holds in the same order; a stretch that
	// begins at j holds at most that many.
	reach := make([]int32, len(r))
	best := int32(0)
	for j := range r {
		k, i := j, 0
		for k < len(r) && i < len(t) {
			if t[i] == r[k] {
				k++
			}
			i++
		}
		reach[j] = int32(k - j)
		best = max(best, reach[j])
	}
	need := int32(len(t) - allowed) // characters the two stretches must hold between them
	at := map[rune][]int32{}
	for j, c := range r {
		if words[j]&wordStart != 0 && reach[j] >= 3 && reach[j]+best >= need {
			at[c] = append(at[c], int32(j))
		}
	}
	cur := map[dealing]int{{x: stretch{-1, -1}, y: stretch{-1, -1}}: 0}
	for _, c := range t {
		next := make(map[dealing]int, len(cur))
		put := func(d dealing, to int8, skips int) {
			if d.last != 0 && d.last != to {
				d.switches = min(d.switches+1, 2)
			}
			d.last = to
			if v, seen := next[d]; !seen || skips < v {
				next[d] = skips
			}
		}
		for d, skips := range cur {
			if skips < allowed { // the character skipped
				if v, seen := next[d]; !seen || skips+1 < v {
					next[d] = skips + 1
				}
			}
			switch {
			case d.x.from < 0: // the first character dealt begins x
				for _, j := range at[c] {
					put(dealing{x: stretch{j, j + 1}, y: d.y}, 1, skips)
				}
				continue
			case int(d.x.to) < len(r) && r[d.x.to] == c:
				n := d
				n.x.to++
				put(n, 1, skips)
			}
			switch {
			case d.y.from < 0:
				for _, j := range at[c] {
					if reach[j]+reach[d.x.from] >= need {
						n := d
						n.y = stretch{j, j + 1}
						put(n, 2, skips)
					}
				}
			case int(d.y.to) < len(r) && r[d.y.to] == c:
				n := d
				n.y.to++
				put(n, 2, skips)
			}
		}
		if len(next) > maxStates || len(next) == 0 {
			return x, y, false
		}
		cur = next
	}
	for d := range cur {
		if d.switches < 2 || d.x.len() < 3 || d.y.len() < 3 || (d.x.to > d.y.from && d.y.to > d.x.from) ||
			words[d.x.to-1]&wordEnd == 0 || words[d.y.to-1]&wordEnd == 0 {
			continue
		}
		// The longest dealing, the first in r among equals: the same answer every run.
		if !ok || d.x.len()+d.y.len() > x.len()+y.len() ||
			(d.x.len()+d.y.len() == x.len()+y.len() && (d.x.from < x.from || d.x.from == x.from && d.y.from < y.from)) {
			x, y, ok = d.x, d.y, true
		}
	}
	return x, y, ok
}
