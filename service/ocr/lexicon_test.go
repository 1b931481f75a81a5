package ocr

import (
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/ctc"
)

func testLexicon(t *testing.T) *Lexicon {
	t.Helper()
	l, err := LoadLexicon(strings.NewReader("this\nthe\nimprovement\nquality\nprepared\nform\nfirm\ndepartment\ncheck\nchuck\nmadison\nit's\nU.S.\n  spaced  \nnew york\n"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLoadLexicon(t *testing.T) {
	l := testLexicon(t)
	// Lines of anything but letters are skipped; the spaced word is trimmed; the form words
	// are added.
	abbr := map[string]bool{}
	for _, w := range strings.Fields(formWords) {
		abbr[w] = true
	}
	if want := 12 + len(abbr); l.Len() != want {
		t.Errorf("%d words, want %d", l.Len(), want)
	}
	for _, w := range []string{"this", "THIS", "Madison", "spaced", "Sept", "DEPT", "September", "Kentucky"} {
		if !l.has([]rune(w)) {
			t.Errorf("%q not found", w)
		}
	}
	for _, w := range []string{"thls", "it's", "its", "new", "u.s.", "us"} {
		if l.has([]rune(w)) {
			t.Errorf("%q found", w)
		}
	}
	for _, in := range []string{"", "\n\n", "it's\n12\n", strings.Repeat("a", lexiconMaxWord+1)} {
		if _, err := LoadLexicon(strings.NewReader(in)); err == nil {
			t.Errorf("%q: a lexicon of no words was accepted", in)
		}
	}
	// A line too long for the scanner's buffer is an error, not a silent stop.
	if _, err := LoadLexicon(strings.NewReader("this\n" + strings.Repeat("x", 5000) + "\nthe\n")); err == nil {
		t.Error("a 5000-byte line was accepted")
	}
}

// alt is a runner-up for tests: its text and odds.
type alt struct {
	text string
	odds float32
}

// reading builds a decoded line: its text, each rune's probability 0.9 (a space 0), and the
// runners-up given by position.
func reading(text string, alts map[int][2]alt) ctc.Result {
	runes := []rune(text)
	r := ctc.Result{Text: text, Probs: make([]float32, len(runes)), Alts: make([][2]ctc.Alt, len(runes))}
	for i, c := range runes {
		if c != ' ' {
			r.Probs[i] = 0.9
		}
	}
	for i, a := range alts {
		for j := range a {
			r.Alts[i][j] = ctc.Alt{Text: a[j].text, Odds: a[j].odds}
		}
	}
	return r
}

func TestLexiconCorrect(t *testing.T) {
	l := testLexicon(t)
	tests := []struct {
		name string
		in   ctc.Result
		want string
	}{
		{"second choice makes a word", reading("thls form", map[int][2]alt{2: {{"i", .3}, {"1", .1}}}), "this form"},
		{"case of the line kept", reading("IMPROVEHENT", map[int][2]alt{7: {{"m", .2}, {"N", .1}}}), "IMPROVEMENT"},
		{"third choice", reading("Qualjty:", map[int][2]alt{4: {{"y", .4}, {"i", .2}}}), "Quality:"},
		{"two swaps", reading("dcpartmcnt", map[int][2]alt{1: {{"e", .5}, {}}, 7: {{"e", .6}, {}}}), "department"},
		{"two swaps in a short word", reading("chaek", map[int][2]alt{2: {{"e", .5}, {}}, 3: {{"c", .6}, {}}}), "chaek"},
		{"a word is left alone", reading("firm", map[int][2]alt{1: {{"o", .9}, {}}}), "firm"},
		{"odds too low", reading("thls", map[int][2]alt{2: {{"i", .015}, {}}}), "thls"},
		{"two swaps too unlikely together", reading("dcpartmcnt", map[int][2]alt{1: {{"e", .1}, {}}, 7: {{"e", .1}, {}}}), "dcpartmcnt"},
		{"two words alike", reading("chack", map[int][2]alt{2: {{"e", .3}, {"u", .25}}}), "chack"},
		{"the likelier of two words", reading("chack", map[int][2]alt{2: {{"e", .4}, {"u", .05}}}), "check"},
		{"beside a digit", reading("thls2", map[int][2]alt{2: {{"i", .5}, {}}}), "thls2"},
		{"too short", reading("tbe", map[int][2]alt{1: {{"h", .5}, {}}}), "tbe"},
		{"no runner-up", reading("thls", nil), "thls"},
		{"not a letter", reading("thls", map[int][2]alt{2: {{"í", .5}, {"中", .5}}}), "thls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := append([]float32(nil), tt.in.Probs...)
			got := l.correct(tt.in)
			if got.Text != tt.want {
				t.Fatalf("%q corrected to %q, want %q", tt.in.Text, got.Text, tt.want)
			}
			if len([]rune(got.Text)) != len(got.Probs) {
				t.Fatalf("%d runes, %d probabilities", len([]rune(got.Text)), len(got.Probs))
			}
			for i, c := range []rune(got.Text) {
				if c != []rune(tt.in.Text)[i] {
					// A replaced character takes its runner-up's probability.
					if got.Probs[i] >= probs[i] {
						t.Errorf("rune %d %q: probability %v, read %v", i, c, got.Probs[i], probs[i])
					}
				}
			}
		})
	}
	// Without a lexicon, or runners-up, nothing changes.
	var none *Lexicon
	if got := none.correct(reading("thls", map[int][2]alt{2: {{"i", .5}, {}}})); got.Text != "thls" {
		t.Errorf("no lexicon: %q", got.Text)
	}
}

// spacedReading builds a decoded line whose spaces are all restored ones (probability 0) with
// the given evidence, or the model's own (probability 0.9) where evidence is negative; every
// rune's step is its index.
func spacedReading(text string, evidence float32, alts map[int][2]alt) ctc.Result {
	r := reading(text, alts)
	n := len(r.Probs)
	r.Steps, r.GapSpace, r.Doubt = make([]int, n), make([]float32, n), make([]bool, n)
	for i, c := range []rune(text) {
		r.Steps[i] = i
		if c == ' ' {
			if evidence < 0 {
				r.Probs[i] = 0.9
			} else {
				r.GapSpace[i] = evidence
			}
		}
	}
	return r
}

func TestLexiconJoin(t *testing.T) {
	l, err := LoadLexicon(strings.NewReader("concentration\nresearch\nre\nsearch\nthe\ntheist\nalow\nlow\nthank\nyou\nthankyou\nmis\nmisty\nmodule\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		in       ctc.Result
		want     string
		wantStep []int // the steps of the answer's runes, where the test names them
	}{
		{"neither side a word", spacedReading("CONCENTRA TION", 0.03, nil), "CONCENTRATION",
			[]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13}},
		{"neither side a word, strong evidence", spacedReading("CONCENTRA TION:", 0.4, nil), "CONCENTRATION:", nil},
		{"two words", spacedReading("THANK YOU", 0.03, nil), "THANK YOU", nil},
		{"one side a word", spacedReading("Mis ty", 0.03, nil), "Misty", nil},
		{"the model's own space", spacedReading("CONCENTRA TION", -1, nil), "CONCENTRA TION", nil},
		{"a short common word", spacedReading("the Ist", 0.03, nil), "the Ist", nil},
		{"a lone letter", spacedReading("a low", 0.03, nil), "a low", nil},
		{"not a word joined", spacedReading("CONCEN TRATIOM", 0.03, nil), "CONCEN TRATIOM", nil},
		{"beside a digit", spacedReading("2Mis ty", 0.03, nil), "2Mis ty", nil},
		{"joined, then a runner-up", spacedReading("Mod ulc (A)", 0.03, map[int][2]alt{6: {{"e", .3}, {}}}), "Module (A)",
			[]int{0, 1, 2, 4, 5, 6, 7, 8, 9, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := l.correct(tt.in)
			if got.Text != tt.want {
				t.Fatalf("%q read %q, want %q", tt.in.Text, got.Text, tt.want)
			}
			n := len([]rune(got.Text))
			if len(got.Steps) != n || len(got.Probs) != n || len(got.GapSpace) != n || len(got.Doubt) != n || len(got.Alts) != n {
				t.Fatalf("%d runes: %d steps, %d probs, %d gaps, %d doubts, %d alts", n, len(got.Steps), len(got.Probs), len(got.GapSpace), len(got.Doubt), len(got.Alts))
			}
			if tt.wantStep != nil && !slices.Equal(got.Steps, tt.wantStep) {
				t.Errorf("steps %v, want %v", got.Steps, tt.wantStep)
			}
		})
	}
}
