package ocr

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// Lexicon is a list of words the recognizer's misspellings are corrected towards. Greedy CTC
// decoding reads each character on its own, and on faint or broken print the right letter is
// often the model's second choice: a typewriter's e read as c ("reparcd"), an m as H
// ("IMPROVEHENT"), an i as l ("thls"). A word that is not in the lexicon, where one or two of
// the runners-up the model gave at its characters' steps make a word that is, and the model
// thought that spelling nearly as likely, is read as that word. The lexicon only ever chooses
// among the model's own readings of the pixels: a word the model did not half see stays as it
// was read, and so do words that are in the lexicon, numbers and codes.
//
// The words are kept as 64-bit hashes of their lowercase letters: a set without pointers, which
// the garbage collector does not walk (a map of 275 000 strings added a fifth to a form's CPU
// time in collection alone), and which a word's runes are looked up in without building a
// string. A string that is not a word is taken for one only when its hash is a word's: about one
// chance in 10^14 a lookup for a list of 275 000 words.
type Lexicon struct {
	words map[uint64]struct{}
}

// formWords are words of forms, letters and receipts that word lists of common words leave out
// as names, added to every lexicon so that they are read as printed and misreadings of them are
// put right: abbreviations, and the names of months, days and the states of the US (FUNSD's
// training forms hold 158 such names that npm's word-list lacks). Shorter words are never
// corrected or made by a join, so only those of four letters and more are listed.
const formWords = `sept tues thur thurs messrs blvd bldg dept corp attn encl pkgs acct misc approx govt
	natl intl mgmt assn assoc univ labs tech info admin exec treas secy pres gmbh
	january february march april june july august september october november december
	monday tuesday wednesday thursday friday saturday sunday
	alabama alaska arizona arkansas california colorado connecticut delaware florida georgia
	hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts
	michigan minnesota mississippi missouri montana nebraska nevada hampshire jersey mexico york
	carolina dakota ohio oklahoma oregon pennsylvania rhode island tennessee texas utah vermont
	virginia washington wisconsin wyoming`

// Lexicon limits: what LoadLexicon accepts, so that a wrong file is refused rather than held.
const (
	lexiconMaxWords = 2_000_000
	lexiconMaxWord  = 40 // bytes; longer lines are not words
)

// LoadLexicon reads a word list: one word a line, case ignored. Lines that are not one word of
// ASCII letters (possessives, abbreviations with points, phrases) are skipped.
func LoadLexicon(r io.Reader) (*Lexicon, error) {
	l := &Lexicon{words: make(map[uint64]struct{})}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 4096)
	for sc.Scan() {
		w := strings.TrimSpace(sc.Text())
		if len(w) == 0 || len(w) > lexiconMaxWord || !asciiLetters(w) {
			continue
		}
		if len(l.words) == lexiconMaxWords {
			return nil, fmt.Errorf("lexicon holds more than %d words", lexiconMaxWords)
		}
		l.words[wordHash([]rune(w))] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lexicon: %w", err)
	}
	if len(l.words) == 0 {
		return nil, errors.New("lexicon holds no words")
	}
	for _, w := range strings.Fields(formWords) {
		l.words[wordHash([]rune(w))] = struct{}{}
	}
	return l, nil
}

// Len is the number of words.
func (l *Lexicon) Len() int { return len(l.words) }

// has reports whether w, ASCII letters in any case, is a word of the lexicon.
func (l *Lexicon) has(w []rune) bool {
	_, ok := l.words[wordHash(w)]
	return ok
}

// wordHash is the 64-bit FNV-1a hash of w's ASCII letters in lower case.
func wordHash(w []rune) uint64 {
	h := uint64(14695981039346656037)
	for _, r := range w {
		h ^= uint64(r | 0x20)
		h *= 1099511628211
	}
	return h
}

func asciiLetters(s string) bool {
	for i := range len(s) {
		if !asciiLetter(rune(s[i])) {
			return false
		}
	}
	return s != ""
}

func asciiLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// The thresholds, chosen on FUNSD's training forms (docs/pipeline.md has the figures).
const (
	// lexMinWord is the shortest word corrected: shorter ones are too often abbreviations or
	// names the list lacks (Sdn, Loc, Ont), and too many three-letter strings are words.
	lexMinWord = 4
	// lexMinWordTwo is the shortest word in which two characters may be replaced; shorter ones
	// take one.
	lexMinWordTwo = 6
	// lexMinOdds is the least odds against the greedy reading, the product of the runners-up's
	// odds at the characters replaced, at which the lexicon's word is taken.
	lexMinOdds = 0.02
	// lexMargin: the word taken must be this many times likelier than the next lexicon word the
	// runners-up make; two readings the model and the lexicon cannot tell apart leave the word
	// as it was read.
	lexMargin = 4
)

// correct first takes out the spaces ctc restored inside one word (see joinSplit), then
// replaces each word of ASCII letters that is not in the lexicon by the lexicon word the
// model's runners-up make of it, where there is one clear such word. No letter is added or
// dropped, and a space taken out leaves every per-rune slice of r with it, so they stay
// aligned; a replaced character takes its runner-up's probability. A word touching a digit (a
// code such as 4B12X) is left alone.
func (l *Lexicon) correct(r ctc.Result) ctc.Result {
	if l == nil || len(r.Alts) == 0 {
		return r
	}
	runes := []rune(r.Text)
	if len(runes) != len(r.Alts) || len(runes) != len(r.Probs) {
		return r
	}
	runes, r, changed := l.joinSplit(runes, r)
	for i := 0; i < len(runes); {
		if !asciiLetter(runes[i]) {
			i++
			continue
		}
		j := i
		for j < len(runes) && asciiLetter(runes[j]) {
			j++
		}
		if j-i >= lexMinWord && !digitAt(runes, i-1) && !digitAt(runes, j) {
			if l.fix(runes, r.Alts[i:j], r.Probs, i, j) {
				changed = true
			}
		}
		i = j
	}
	if changed {
		r.Text = string(runes)
	}
	return r
}

func digitAt(runes []rune, i int) bool {
	return i >= 0 && i < len(runes) && runes[i] >= '0' && runes[i] <= '9'
}

// swap is one character replaced by a runner-up.
type swap struct {
	at   int // index into the word
	with rune
	odds float32
}

// fix corrects runes[i:j] in place when it is not a lexicon word and its runners-up make one
// clear word; it reports whether it did.
func (l *Lexicon) fix(runes []rune, alts [][2]ctc.Alt, probs []float32, i, j int) bool {
	word := runes[i:j]
	if l.has(word) {
		return false
	}
	var swaps []swap
	for k, a := range alts {
		for _, alt := range a {
			c, size := utf8.DecodeRuneInString(alt.Text)
			if size != len(alt.Text) || !asciiLetter(c) || alt.Odds < lexMinOdds || sameLetter(c, word[k]) {
				continue
			}
			swaps = append(swaps, swap{at: k, with: c, odds: alt.Odds})
		}
	}
	if len(swaps) == 0 {
		return false
	}
	buf := make([]rune, len(word))
	var best, second float32
	var bestSwaps []swap
	try := func(odds float32, set ...swap) {
		if odds < lexMinOdds/lexMargin {
			return
		}
		copy(buf, word)
		for _, s := range set {
			buf[s.at] = s.with
		}
		if !l.has(buf) {
			return
		}
		switch {
		case odds > best:
			best, second = odds, best
			bestSwaps = append(bestSwaps[:0], set...)
		case odds > second:
			second = odds
		}
	}
	for a, s := range swaps {
		try(s.odds, s)
		if len(word) < lexMinWordTwo {
			continue
		}
		for _, t := range swaps[a+1:] {
			if t.at != s.at {
				try(s.odds*t.odds, s, t)
			}
		}
	}
	if best < lexMinOdds || best < lexMargin*second {
		return false
	}
	for _, s := range bestSwaps {
		word[s.at] = inCaseOf(s.with, word[s.at])
		probs[i+s.at] *= s.odds
	}
	return true
}

// sameLetter reports whether a and b are one letter, in either case.
func sameLetter(a, b rune) bool { return a|0x20 == b|0x20 }

// inCaseOf is letter c in the case of letter like: the runner-up is the model's choice of
// character, the word's case is the line's.
func inCaseOf(c, like rune) rune {
	if like >= 'A' && like <= 'Z' {
		return c &^ 0x20
	}
	return c | 0x20
}

// lexMinPart is the fewest letters either side of a restored space that joinSplit joins: a lone
// letter is too often a word of its own ("a", "I") or an initial.
const lexMinPart = 2

// shortWords are the commonest short words of English. One of them beside a restored space is
// taken for a word of its own, whatever the other side reads: "the 1st" read "the Ist" is no
// "theist", "for th" no "forth".
var shortWords = map[string]bool{"the": true, "and": true, "for": true, "of": true, "to": true, "in": true,
	"on": true, "at": true, "by": true, "or": true, "as": true, "is": true, "an": true, "it": true}

// shortWord reports whether w, in any case, is one of shortWords.
func shortWord(w []rune) bool {
	if len(w) > 3 {
		return false
	}
	return shortWords[strings.ToLower(string(w))]
}

// joinSplit takes out the spaces ctc restored (the model did not choose them, see
// ctc.Result.Probs) inside what is one word of the lexicon: a typewriter's narrow letters (l, i,
// t) leave gaps wide enough for the space class to keep some probability, and "CONCENTRATION"
// reads "CONCENTRA TION", "INTERNATIONAL" "INTERNAT IONAL". A space stays where both sides are
// words: the lexicon holds "thankyou" and "website", and "THANK YOU" is two words however little
// the model saw of its space (FUNSD's "Re search" and "list ed" stay split for that). It stays
// too where either side is shorter than lexMinPart letters or is one of shortWords. Where
// neither side is a word, the joined letters may be a word the runners-up make ("Descri
// ptlon"), which correct then makes.
func (l *Lexicon) joinSplit(runes []rune, r ctc.Result) ([]rune, ctc.Result, bool) {
	if len(r.Steps) != len(runes) || len(r.GapSpace) != len(runes) || len(r.Doubt) != len(runes) {
		return runes, r, false
	}
	changed := false
	for s := 1; s+1 < len(runes); s++ {
		if runes[s] != ' ' || r.Probs[s] != 0 {
			continue
		}
		i, j := s, s+1
		for i > 0 && asciiLetter(runes[i-1]) {
			i--
		}
		for j < len(runes) && asciiLetter(runes[j]) {
			j++
		}
		if s-i < lexMinPart || j-s-1 < lexMinPart || letterOrDigitAt(runes, i-1) || letterOrDigitAt(runes, j) {
			continue
		}
		left, right := runes[i:s], runes[s+1:j]
		lw, rw := l.has(left), l.has(right)
		if lw && rw || lw && shortWord(left) || rw && shortWord(right) {
			continue
		}
		joined := append(append(make([]rune, 0, j-i-1), left...), right...)
		if !l.has(joined) && (lw || rw || !l.fixable(joined, r, i, s, j)) {
			continue
		}
		runes = append(runes[:s], runes[s+1:]...)
		r.Steps = append(r.Steps[:s], r.Steps[s+1:]...)
		r.Probs = append(r.Probs[:s], r.Probs[s+1:]...)
		r.GapSpace = append(r.GapSpace[:s], r.GapSpace[s+1:]...)
		r.Doubt = append(r.Doubt[:s], r.Doubt[s+1:]...)
		r.Alts = append(r.Alts[:s], r.Alts[s+1:]...)
		changed = true
	}
	return runes, r, changed
}

// fixable reports whether joined, the letters of runes i..j of r less the space at s, is a word
// the runners-up make (see fix); the word loop of correct then makes it.
func (l *Lexicon) fixable(joined []rune, r ctc.Result, i, s, j int) bool {
	alts := append(append(make([][2]ctc.Alt, 0, j-i-1), r.Alts[i:s]...), r.Alts[s+1:j]...)
	probs := make([]float32, len(joined))
	return len(joined) >= lexMinWord && l.fix(slices.Clone(joined), alts, probs, 0, len(joined))
}

func letterOrDigitAt(runes []rune, i int) bool {
	return i >= 0 && i < len(runes) && (asciiLetter(runes[i]) || runes[i] >= '0' && runes[i] <= '9')
}
