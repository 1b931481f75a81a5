// Package ctc turns the recognizer's per-timestep class probabilities into text.
//
// PaddleOCR's recognizers are trained with CTC: every timestep of the output predicts one class, where
// class 0 is the CTC blank, classes 1..n are the characters of the dictionary file, and the last class
// is a space. Greedy decoding (argmax, collapse repeats, drop blanks) is what PaddleOCR ships. It is
// accurate for characters but the PP-OCRv4 recognizer often lets the blank win where a space belongs,
// so "SANYU SUPPLY" comes out as "SANYUSUPPLY". The probability the model still gives the space class
// in the blank run between two words is a clear signal (0.1–0.5 between words, under 0.02 inside a
// word), so the decoder puts a space back where that probability is high enough.
package ctc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Charset maps class indexes to text. Index 0 is the blank; the dictionary's characters follow in
// file order; the final class is a space.
type Charset struct {
	classes []string
	space   int
	runes   map[rune]bool // the characters of one-rune classes
}

// LoadCharset reads a PaddleOCR dictionary: one character per line, UTF-8. Lines are kept verbatim
// (the dictionary contains U+3000, an ideographic space, which must not be trimmed away); only the
// line terminator is removed.
func LoadCharset(r io.Reader) (*Charset, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read dictionary: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	classes := []string{""}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("dictionary line %d is not valid UTF-8", len(classes))
		}
		classes = append(classes, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read dictionary: %w", err)
	}
	if len(classes) == 1 {
		return nil, errors.New("dictionary is empty")
	}
	classes = append(classes, " ")
	runes := make(map[rune]bool, len(classes))
	for _, c := range classes {
		if r, n := utf8.DecodeRuneInString(c); n > 0 && n == len(c) {
			runes[r] = true
		}
	}
	return &Charset{classes: classes, space: len(classes) - 1, runes: runes}, nil
}

// Has reports whether the recognizer can read r: whether the dictionary holds it as a character
// (the space included).
func (c *Charset) Has(r rune) bool { return c.runes[r] }

// NumClasses is the number of classes the recognizer must output for this charset: blank,
// dictionary characters and space.
func (c *Charset) NumClasses() int { return len(c.classes) }

// Options tune decoding.
type Options struct {
	// SpaceThreshold is the space-class probability, anywhere in the blank run between two
	// characters, above which a space is restored there. Zero turns restoration off (plain greedy).
	SpaceThreshold float32
}

// DefaultOptions restores spaces where the model gives the space class at least 0.025: above
// the < 0.02 seen inside words, below the 0.1–0.46 seen between words.
func DefaultOptions() Options { return Options{SpaceThreshold: 0.025} }

// Result is one decoded line.
type Result struct {
	Text string
	// Score is the mean of the winning probabilities of the characters kept (restored spaces do not
	// count: they were not the model's first choice). Zero for empty text.
	Score float32
	// Steps holds, for each rune of Text, the timestep it was read at, so callers can locate
	// characters along the crop.
	Steps []int
	// Probs holds, for each rune of Text, the probability the model gave it at its step (0 for
	// a space restored from a blank run: the model did not choose it), so callers can score
	// parts of the line, e.g. words.
	Probs []float32
	// GapSpace holds, for each rune of Text, the highest space-class probability in the blank
	// run just before it (0 where none, and for spaces). Where the model kept a space under
	// the threshold it is the weak evidence that remains, for callers that have more (the
	// pixels of the gap, see ocr's word gaps).
	GapSpace []float32
	// LongestRun is the most consecutive timesteps one character won (0 for no character).
	// Greedy decoding collapses such a run into one character, so a doubled character ("tt",
	// "44", "**") whose blank between the two did not win reads as one; in a line where no
	// character won two steps in a row nothing was collapsed.
	LongestRun int
	// Doubt holds, for each rune of Text, whether the model's steps leave room for it being
	// doubled: it won two timesteps or more in a row (greedy decoding collapses such a run into
	// one character), or a blank step between it and the character before or after it won with
	// less than weakBlank (the model half saw a character there). A doubled character read as one
	// ("tree" read "tre", "will" read "wil") leaves one of these traces; see ocr's second
	// reading of such lines.
	Doubt []bool
	// Alts holds, for each rune of Text, the model's second and third choices at the step where
	// the rune's character won most surely, as ocr's lexicon reads them to correct a misspelled
	// word (a faint e read as c leaves the e second). Empty Text of an Alt means none: a restored
	// space, a blank, the space class or a character the recognizer's output left out.
	Alts [][2]Alt
}

// Alt is a runner-up to a character: its text, and its odds against the winner, the ratio of
// the two probabilities at that step (in [0, 1]).
type Alt struct {
	Text string
	Odds float32
}

// weakBlank is the probability under which a blank step leaves room for a character beside it
// (see Result.Doubt): where a doubled letter was read as one in small print, the blank that took
// the second letter's place won with 0.50–0.70, where blanks between letters usually win with
// 0.95 and more.
const weakBlank = 0.75

// Decode decodes one sequence of T timesteps × C classes (row-major softmax output).
// It returns an error when the shape does not fit the charset.
func (c *Charset) Decode(probs []float32, T, C int, opt Options) (Result, error) {
	if C != len(c.classes) {
		return Result{}, fmt.Errorf("recognizer outputs %d classes, dictionary has %d", C, len(c.classes))
	}
	if T < 0 || len(probs) < T*C {
		return Result{}, fmt.Errorf("recognizer output holds %d values, want %d×%d", len(probs), T, C)
	}
	d := decoder{c: c, opt: opt, lastKept: -1, minBlank: 2}
	// When the rows are probability distributions (the recognizer ends in a softmax), a value
	// above one half is the row's maximum: the scan over thousands of classes stops there, and a
	// step where the blank is above one half, which is most steps, costs one comparison.
	var settled float32 = 2 // never reached unless the rows are distributions
	if T > 0 && isDistribution(probs[:C]) {
		settled = 0.5
	}
	for t := 0; t < T; t++ {
		row := probs[t*C : (t+1)*C]
		best, bestP := 0, row[0]
		if bestP <= settled {
			for k := 1; k < C; k++ {
				if row[k] > bestP {
					best, bestP = k, row[k]
					if bestP > settled {
						break
					}
				}
			}
		}
		var alts [2]Alt
		if best != 0 && best != c.space {
			alts = c.runnersUp(row, best, bestP)
		}
		d.step(t, best, bestP, row[c.space], alts)
	}
	return d.result(), nil
}

// runnersUp finds the second and third classes of a full row whose winner is best.
func (c *Charset) runnersUp(row []float32, best int, bestP float32) [2]Alt {
	k2, k3 := -1, -1
	for k, v := range row {
		if k == best {
			continue
		}
		switch {
		case k2 < 0 || v > row[k2]:
			k2, k3 = k, k2
		case k3 < 0 || v > row[k3]:
			k3 = k
		}
	}
	return [2]Alt{c.alt(k2, row[k2], bestP), c.alt(k3, row[k3], bestP)}
}

// alt is class k, of probability p at a step its winner took with bestP, as a runner-up: none
// for the blank and the space.
func (c *Charset) alt(k int, p, bestP float32) Alt {
	if k <= 0 || k == c.space || k >= len(c.classes) || !(bestP > 0) {
		return Alt{}
	}
	return Alt{Text: c.classes[k], Odds: min(max(p/bestP, 0), 1)}
}

// TopWidth is the number of values per timestep of a recognizer that ends in the compact CTC
// output (onnxgraph.CTCTop): the winning class (as a float), its probability, the space class's
// probability, the second and third classes and their probabilities.
const TopWidth = 7

// DecodeTop decodes one sequence of T timesteps in the compact form: per step the winning class,
// its probability, the space class's probability and the two runners-up, which is all greedy
// decoding with space restoration and the lexicon's corrections read. It gives what Decode gives
// on the full rows.
func (c *Charset) DecodeTop(top []float32, T int, opt Options) (Result, error) {
	if T < 0 || len(top) < T*TopWidth {
		return Result{}, fmt.Errorf("recognizer output holds %d values, want %d×%d", len(top), T, TopWidth)
	}
	d := decoder{c: c, opt: opt, lastKept: -1, minBlank: 2}
	for t := 0; t < T; t++ {
		k := top[t*TopWidth]
		if !(k >= 0 && int(k) < len(c.classes)) || k != float32(int(k)) {
			return Result{}, fmt.Errorf("recognizer output names class %v at step %d, dictionary has %d", k, t, len(c.classes))
		}
		v := top[t*TopWidth : (t+1)*TopWidth]
		var alts [2]Alt
		if best := int(k); best != 0 && best != c.space {
			for j := range alts {
				r := v[3+j]
				if !(r >= 0 && int(r) < len(c.classes)) || r != float32(int(r)) {
					return Result{}, fmt.Errorf("recognizer output names class %v at step %d, dictionary has %d", r, t, len(c.classes))
				}
				alts[j] = c.alt(int(r), v[5+j], v[1])
			}
		}
		d.step(t, int(k), v[1], v[2], alts)
	}
	return d.result(), nil
}

// decoder is greedy CTC decoding with space restoration, fed one timestep at a time.
type decoder struct {
	c        *Charset
	opt      Options
	sb       strings.Builder
	steps    []int
	probs    []float32 // per rune of sb, as Result.Probs
	gaps     []float32 // per rune of sb, as Result.GapSpace
	sum      float32
	kept     int
	prev     int     // class of the previous timestep
	gapSpace float32 // highest space probability since the last kept character
	lastKept int     // class of the last kept character (-1: none yet)
	// afterPoint: the last kept character is a point or comma right after a digit.
	afterPoint bool
	// enumSpace is the byte offset of a space restored after an opening "1." (0: none).
	enumSpace int
	gapAtEnum float32  // the space probability of the gap of enumSpace
	run       int      // timesteps the current winning class has lasted
	longest   int      // the longest run of one character so far
	doubt     []bool   // per rune of sb, as Result.Doubt
	alts      [][2]Alt // per rune of sb, as Result.Alts
	altP      float32  // the winning probability of the step the last rune's alts are from
	minBlank  float32  // the least blank probability since the last kept character (2: none)
}

// step takes timestep t: its winning class and probability, the space class's probability, and
// the runners-up.
func (d *decoder) step(t, best int, bestP, spaceP float32, alts [2]Alt) {
	c := d.c
	if best == d.prev {
		d.run++
	} else {
		d.run = 1
	}
	if best != 0 && best != c.space {
		d.longest = max(d.longest, d.run)
	}
	if best == 0 || best == d.prev {
		if best == 0 && spaceP > d.gapSpace {
			d.gapSpace = spaceP
		}
		if n := len(d.doubt); n > 0 && best != 0 && best != c.space && d.run == 2 {
			// The last character won a second step in a row.
			d.doubt[n-1] = true
		}
		if n := len(d.alts); n > 0 && best != 0 && best != c.space && bestP > d.altP {
			// The runners-up of the step the character won most surely.
			d.alts[n-1], d.altP = alts, bestP
		}
		if best == 0 {
			d.minBlank = min(d.minBlank, bestP)
		}
		d.prev = best
		return
	}
	d.prev = best
	if best == c.space {
		// A space the model chose itself. Leading spaces and doubled spaces add nothing.
		if d.lastKept != -1 && d.lastKept != c.space {
			d.sb.WriteByte(' ')
			d.steps = append(d.steps, t)
			d.probs = append(d.probs, bestP)
			d.gaps = append(d.gaps, 0)
			d.doubt = append(d.doubt, false)
			d.alts = append(d.alts, [2]Alt{})
			d.lastKept = best
		}
		d.sum += bestP
		d.kept++
		d.gapSpace = 0
		d.minBlank = 2
		return
	}
	restored := false
	if d.opt.SpaceThreshold > 0 && d.lastKept != -1 && d.lastKept != c.space && d.gapSpace >= d.opt.SpaceThreshold {
		// Restored, except inside a number: the blank run after the point of "42.04" or the
		// comma of "1,000" carries some space probability (more so in narrow crops), and a
		// space there splits one amount into two. After an opening "1." or "12." the space
		// probability cannot tell an enumeration ("1. 7002-0014") from an amount ("1.26"):
		// 0.04–0.13 against 0.03–0.21 on sroie-dev. Such a space is restored and taken back in
		// result when only digits follow it.
		inNumber := d.afterPoint && isDigit(c.classes[best])
		if !inNumber || enumeration(d.sb.String()) {
			if inNumber {
				d.enumSpace = d.sb.Len()
				d.gapAtEnum = d.gapSpace
			}
			d.sb.WriteByte(' ')
			d.steps = append(d.steps, t)
			d.probs = append(d.probs, 0)
			d.gaps = append(d.gaps, 0)
			d.doubt = append(d.doubt, false)
			d.alts = append(d.alts, [2]Alt{})
			restored = true
		}
	}
	// A weak blank between two characters leaves room for another of either.
	weak := d.minBlank < weakBlank && !restored && d.lastKept != -1 && d.lastKept != c.space
	if weak {
		d.doubt[len(d.doubt)-1] = true
	}
	d.minBlank = 2
	d.sb.WriteString(c.classes[best])
	gap := d.gapSpace
	if restored || d.lastKept == -1 {
		gap = 0
	}
	multi := utf8.RuneCountInString(c.classes[best]) > 1
	for range utf8.RuneCountInString(c.classes[best]) {
		d.steps = append(d.steps, t)
		d.probs = append(d.probs, bestP)
		d.gaps = append(d.gaps, gap)
		d.doubt = append(d.doubt, weak)
		if multi {
			// A class of several runes has no runner-up rune for rune.
			d.alts = append(d.alts, [2]Alt{})
		} else {
			d.alts = append(d.alts, alts)
		}
	}
	d.altP = bestP
	d.sum += bestP
	d.kept++
	d.afterPoint = separator(c.classes[best]) && !restored && d.lastKept != -1 && isDigit(c.classes[d.lastKept])
	d.lastKept = best
	d.gapSpace = 0
}

// separator reports whether class s is a point or a comma, ASCII or fullwidth (which the
// Chinese-first dictionary often reads on Latin print).
func separator(s string) bool { return s == "." || s == "," || s == "．" || s == "，" }

// enumeration reports whether line is one to three digits and a point: "1.", "12.", "3．".
func enumeration(line string) bool {
	n := len(line) - 1
	if strings.HasSuffix(line, "．") {
		n = len(line) - len("．")
	} else if !strings.HasSuffix(line, ".") {
		return false
	}
	return n <= 3 && digits(line[:n])
}

// digits reports whether s is one or more ASCII digits and nothing else.
func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isDigit reports whether class s is one of the ASCII digits.
func isDigit(s string) bool { return len(s) == 1 && digits(s) }

func (d *decoder) result() Result {
	text, steps, probs, gaps, doubt, alts := d.sb.String(), d.steps, d.probs, d.gaps, d.doubt, d.alts
	if trimmed := strings.TrimRight(text, " "); len(trimmed) != len(text) {
		steps = steps[:utf8.RuneCountInString(trimmed)]
		probs = probs[:len(steps)]
		gaps = gaps[:len(steps)]
		doubt = doubt[:len(steps)]
		alts = alts[:len(steps)]
		text = trimmed
	}
	if i := d.enumSpace; i > 0 && digits(text[i+1:]) {
		// "1. 26" is an amount. The prefix before the space is ASCII digits and one point, so its
		// byte offset is not its rune index only when the point is fullwidth.
		r := utf8.RuneCountInString(text[:i])
		text = text[:i] + text[i+1:]
		steps = append(steps[:r], steps[r+1:]...)
		probs = append(probs[:r], probs[r+1:]...)
		// The digit after the space takes back the space's evidence.
		gaps[r+1] = d.gapAtEnum
		gaps = append(gaps[:r], gaps[r+1:]...)
		doubt = append(doubt[:r], doubt[r+1:]...)
		alts = append(alts[:r], alts[r+1:]...)
	}
	res := Result{Text: text, Steps: steps, Probs: probs, GapSpace: gaps, Doubt: doubt, Alts: alts, LongestRun: d.longest}
	if d.kept > 0 && text != "" {
		res.Score = d.sum / float32(d.kept)
	}
	return res
}

// isDistribution reports whether row is a probability distribution: no negative value and a sum
// within float32 rounding of 1. Logits fail it, and are then decoded by full scans.
func isDistribution(row []float32) bool {
	var sum float64
	for _, v := range row {
		if !(v >= 0) {
			return false
		}
		sum += float64(v)
	}
	return math.Abs(sum-1) < 1e-3
}
