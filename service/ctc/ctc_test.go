package ctc

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// testCharset has classes: 0 blank, 1 'A', 2 'B', 3 'C', 4 '中', 5 ' ' (space).
func testCharset(t *testing.T) *Charset {
	t.Helper()
	cs, err := LoadCharset(strings.NewReader("A\nB\nC\n中"))
	if err != nil {
		t.Fatal(err)
	}
	if cs.NumClasses() != 6 {
		t.Fatalf("NumClasses = %d, want 6", cs.NumClasses())
	}
	return cs
}

// step is one timestep: the winning class, its probability, and the space class's probability.
type step struct {
	class  int
	p      float32
	spaceP float32
}

// probs builds a T×6 softmax-like matrix from steps.
func probs(steps []step) []float32 { return probsN(6, steps) }

// probsN builds a T×C softmax-like matrix from steps; class C-1 is the space.
func probsN(C int, steps []step) []float32 {
	out := make([]float32, len(steps)*C)
	for t, s := range steps {
		row := out[t*C : (t+1)*C]
		rest := 1 - s.p
		row[s.class] = s.p
		if s.class != C-1 {
			row[C-1] = min(s.spaceP, rest)
			rest -= row[C-1]
		}
		// spread what is left over the other classes, each below the winner
		for k := range row {
			if k != s.class && k != C-1 {
				row[k] += rest / float32(C-2)
			}
		}
	}
	return out
}

func TestDecode(t *testing.T) {
	cs := testCharset(t)
	tests := []struct {
		name      string
		steps     []step
		opt       Options
		want      string
		wantScore float32
	}{
		{"empty sequence", nil, DefaultOptions(), "", 0},
		{"all blank", []step{{0, .9, 0}, {0, .9, 0}}, DefaultOptions(), "", 0},
		{"repeats collapse", []step{{1, .9, 0}, {1, .8, 0}, {2, .7, 0}}, DefaultOptions(), "AB", .8},
		{"blank separates a doubled letter", []step{{1, .9, 0}, {0, .9, 0}, {1, .7, 0}}, DefaultOptions(), "AA", .8},
		{"space class kept", []step{{1, .9, 0}, {5, .8, 0}, {2, .7, 0}}, DefaultOptions(), "A B", .8},
		{"leading and trailing spaces dropped", []step{{5, .9, 0}, {1, .9, 0}, {5, .9, 0}}, DefaultOptions(), "A", .9},
		{"doubled spaces collapse", []step{{1, .9, 0}, {5, .9, 0}, {0, .9, 0}, {5, .9, 0}, {2, .9, 0}}, DefaultOptions(), "A B", .9},
		{"multi-byte character", []step{{4, .9, 0}, {3, .9, 0}}, DefaultOptions(), "中C", .9},
		{"space restored from gap probability", []step{{1, .9, 0}, {0, .6, .3}, {2, .9, 0}}, DefaultOptions(), "A B", .9},
		{"weak gap probability is not a space", []step{{1, .9, 0}, {0, .9, .01}, {2, .9, 0}}, DefaultOptions(), "AB", .9},
		{"restoration off", []step{{1, .9, 0}, {0, .6, .3}, {2, .9, 0}}, Options{}, "AB", .9},
		{"no space restored before the first character", []step{{0, .6, .3}, {1, .9, 0}}, DefaultOptions(), "A", .9},
		{"no space restored after the last character", []step{{1, .9, 0}, {0, .6, .3}}, DefaultOptions(), "A", .9},
		{"gap inside a repeat run does not count", []step{{1, .9, 0}, {1, .9, .3}, {2, .9, 0}}, DefaultOptions(), "AB", .9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := cs.Decode(probs(tt.steps), len(tt.steps), 6, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != tt.want {
				t.Errorf("text = %q, want %q", r.Text, tt.want)
			}
			if d := r.Score - tt.wantScore; d > 1e-5 || d < -1e-5 {
				t.Errorf("score = %v, want %v", r.Score, tt.wantScore)
			}
			if n := len([]rune(r.Text)); len(r.Steps) != n || len(r.Probs) != n || len(r.GapSpace) != n {
				t.Errorf("len(Steps) = %d, len(Probs) = %d, want one per rune (%d)", len(r.Steps), len(r.Probs), n)
			}
			// The compact output a prepared recognizer gives reads the same.
			c, err := cs.DecodeTop(compact(probs(tt.steps), len(tt.steps), 6), len(tt.steps), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if c.Text != r.Text || c.Score != r.Score || !slices.Equal(c.Steps, r.Steps) || !slices.Equal(c.Probs, r.Probs) || !slices.Equal(c.Alts, r.Alts) {
				t.Errorf("DecodeTop = %q %v %v, Decode = %q %v %v", c.Text, c.Score, c.Steps, r.Text, r.Score, r.Steps)
			}
		})
	}
}

// TestDecodeNumberSpaces: no space is restored inside a number ("42.04", "1,000"), where narrow
// crops leave some space probability after the point, except after an enumeration that opens
// the line ("1. 7002-0014"), and that one is taken back when only digits follow ("1.26").
func TestDecodeNumberSpaces(t *testing.T) {
	const dict = "0\n1\n2\n4\n6\n.\n,\n．\n-\nA"
	cs, err := LoadCharset(strings.NewReader(dict))
	if err != nil {
		t.Fatal(err)
	}
	C := cs.NumClasses()
	class := map[rune]int{}
	for i, r := range []rune(strings.ReplaceAll(dict, "\n", "")) {
		class[r] = i + 1
	}
	// line spells s: each character one step and a blank after it; '|' is a blank run whose
	// space probability is 0.3 (a restored space), '_' the space class itself.
	line := func(s string) []step {
		var out []step
		for _, r := range s {
			switch r {
			case '|':
				out = append(out, step{0, .6, .3})
			case '_':
				out = append(out, step{C - 1, .8, 0})
			default:
				out = append(out, step{class[r], .9, 0}, step{0, .9, 0})
			}
		}
		return out
	}
	tests := []struct{ in, want string }{
		{"42.|04", "42.04"},
		{"1,|000", "1,000"},
		{"1240.|6", "1240.6"},
		{"A1.|26", "A1.26"},
		{"A|1.|26", "A 1.26"},
		{"1.|26", "1.26"},
		{"12．|26", "12．26"},
		{"1.|20-16", "1. 20-16"},
		{"1.|2|6", "1. 2 6"},
		{"1.|A", "1. A"},
		{"A.|1", "A. 1"},
		{"A|1", "A 1"},
		{"1|.|2", "1 . 2"},
		{"42._04", "42. 04"}, // the model's own space stays
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			steps := line(tt.in)
			r, err := cs.Decode(probsN(C, steps), len(steps), C, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != tt.want {
				t.Errorf("text = %q, want %q", r.Text, tt.want)
			}
			if n := len([]rune(r.Text)); len(r.Steps) != n || len(r.Probs) != n || len(r.GapSpace) != n {
				t.Fatalf("len(Steps) = %d, len(Probs) = %d, want one per rune (%d)", len(r.Steps), len(r.Probs), n)
			}
			for i, ch := range []rune(r.Text) {
				if (r.Probs[i] == 0) != (ch == ' ' && !strings.Contains(tt.in, "_")) {
					t.Errorf("rune %d %q has probability %v", i, ch, r.Probs[i])
				}
			}
			if !slices.IsSorted(r.Steps) {
				t.Errorf("steps %v out of order", r.Steps)
			}
			c, err := cs.DecodeTop(compact(probsN(C, steps), len(steps), C), len(steps), DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if c.Text != r.Text || !slices.Equal(c.Steps, r.Steps) || !slices.Equal(c.Probs, r.Probs) || !slices.Equal(c.Alts, r.Alts) {
				t.Errorf("DecodeTop = %q %v, Decode = %q %v", c.Text, c.Steps, r.Text, r.Steps)
			}
		})
	}
}

// TestDecodeAlts: each character carries the runners-up of the step it won most surely, with
// their odds against it; a space carries none, and neither the blank nor the space is a
// runner-up.
func TestDecodeAlts(t *testing.T) {
	cs := testCharset(t)
	row := func(p ...float32) []float32 { return p } // blank A B C 中 space
	rows := slices.Concat(
		row(0, .6, 0, .3, .1, 0),   // A, C second
		row(0, .8, 0, 0, .1, .1),   // A again, surer: 中 second, the space third and not counted
		row(.9, 0, .05, 0, 0, .05), // blank
		row(.2, 0, 0, .5, 0, .3),   // C, blank and space beaten: no runner-up
		row(0, 0, 0, 0, 0, 1),      // space
		row(0, .25, .5, 0, .25, 0), // B: A and 中 tie, the first of equals second
	)
	want := [][2]Alt{{{"中", .125}, {}}, {}, {}, {{"A", .5}, {"中", .5}}}
	for _, top := range []bool{false, true} {
		var r Result
		var err error
		if top {
			r, err = cs.DecodeTop(compact(rows, 6, 6), 6, Options{})
		} else {
			r, err = cs.Decode(rows, 6, 6, Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != "AC B" {
			t.Fatalf("text %q", r.Text)
		}
		if !slices.Equal(r.Alts, want) {
			t.Errorf("top %v: alts %v, want %v", top, r.Alts, want)
		}
	}
}

// TestDecodeProbs: each rune carries the probability it was read with; a restored space, which
// the model did not choose, carries 0.
func TestDecodeProbs(t *testing.T) {
	cs := testCharset(t)
	r, err := cs.Decode(probs([]step{{1, .9, 0}, {1, .95, 0}, {0, .6, .3}, {2, .7, 0}, {5, .8, 0}, {3, .6, 0}}), 6, 6, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "A B C" {
		t.Fatalf("text %q", r.Text)
	}
	want := []float32{.9, 0, .7, .8, .6}
	for i := range want {
		if d := r.Probs[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Errorf("probs %v, want %v", r.Probs, want)
			break
		}
	}
}

// compact turns full softmax rows into the recognizer's compact output: per step the winning class
// (first of equals), its probability, the space class's (the last), the second and third classes
// and their probabilities.
func compact(probs []float32, T, C int) []float32 {
	out := make([]float32, 0, T*TopWidth)
	for t := range T {
		row := probs[t*C : (t+1)*C]
		order := make([]int, C)
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(row[b], row[a]) })
		k1, k2, k3 := order[0], order[1], order[2]
		out = append(out, float32(k1), row[k1], row[C-1], float32(k2), float32(k3), row[k2], row[k3])
	}
	return out
}

func TestDecodeTopRejects(t *testing.T) {
	cs := testCharset(t)
	for _, top := range [][]float32{{7, .9, 0, 2, 3, .05, .01}, {-1, .9, 0, 2, 3, .05, .01}, {1.5, .9, 0, 2, 3, .05, .01}, {1, .9, 0, 2, 3, .05}, {1, .9, 0, 9, 3, .05, .01}, {1, .9, 0, 2, 2.5, .05, .01}} {
		if _, err := cs.DecodeTop(top, 1, DefaultOptions()); err == nil {
			t.Errorf("%v accepted", top)
		}
	}
}

func TestDecodeRejectsWrongShape(t *testing.T) {
	cs := testCharset(t)
	if _, err := cs.Decode(make([]float32, 10), 2, 5, DefaultOptions()); err == nil {
		t.Error("class count mismatch accepted")
	}
	if _, err := cs.Decode(make([]float32, 10), 2, 6, DefaultOptions()); err == nil {
		t.Error("short data accepted")
	}
}

func TestLoadCharset(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		classes int
		wantErr bool
	}{
		{"plain", "a\nb\n", 4, false},
		{"crlf and bom", "\ufeffa\r\nb\r\n", 4, false},
		{"ideographic space kept", "a\n\u3000\nb", 5, false},
		{"empty", "", 0, true},
		{"invalid utf-8", "a\n\xff\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := LoadCharset(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && cs.NumClasses() != tt.classes {
				t.Errorf("NumClasses = %d, want %d", cs.NumClasses(), tt.classes)
			}
		})
	}
}

// FuzzDecode: any matrix decodes without panicking, into valid text with one step per rune.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 250, 3, 7, 9, 0, 0})
	f.Add([]byte{})
	f.Add([]byte{255, 255, 255, 255, 255, 255})
	// Digits and a point, so the rules for spaces inside numbers are explored too.
	cs, err := LoadCharset(strings.NewReader("1\n.\nA\n中"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		T := len(data) / 6
		p := make([]float32, T*6)
		for i := range p {
			p[i] = float32(data[i]) / 255
		}
		r, err := cs.Decode(p, T, 6, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Steps) != len([]rune(r.Text)) {
			t.Fatalf("steps %d for %q", len(r.Steps), r.Text)
		}
		if strings.HasPrefix(r.Text, " ") || strings.HasSuffix(r.Text, " ") || strings.Contains(r.Text, "  ") {
			t.Fatalf("bad spacing in %q", r.Text)
		}
		if r.Score < 0 || r.Score > 1 {
			t.Fatalf("score %v", r.Score)
		}
	})
}

// TestDecodeSoftmaxShortcut: on probability rows the decoder stops scanning a row at a value above
// one half. It must pick the same classes as a full scan, which it does on logits (log
// probabilities have the same argmax and are not a distribution, so they take the full scan).
func TestDecodeSoftmaxShortcut(t *testing.T) {
	var dict strings.Builder
	for r := 'a'; r <= 'z'; r++ {
		dict.WriteString(string(r) + "\n" + strings.ToUpper(string(r)) + "\n")
	}
	cs, err := LoadCharset(strings.NewReader(dict.String()))
	if err != nil {
		t.Fatal(err)
	}
	C := cs.NumClasses()
	rng := rand.New(rand.NewPCG(4, 2))
	opt := DefaultOptions()
	opt.SpaceThreshold = 0 // the restored spaces read probabilities, which logits are not
	for trial := range 200 {
		T := 1 + rng.IntN(60)
		p := make([]float32, T*C)
		logits := make([]float32, T*C)
		for ti := range T {
			row := p[ti*C : (ti+1)*C]
			// Peaky rows (one class far ahead, often the blank) and flat rows (no value above
			// one half) in every trial.
			peak := 1 + 9*rng.Float64()*float64(trial%3)
			var sum float64
			raw := make([]float64, C)
			for k := range raw {
				raw[k] = math.Exp(rng.NormFloat64())
			}
			hot := rng.IntN(C)
			if rng.IntN(2) == 0 {
				hot = 0
			}
			raw[hot] *= math.Exp(peak)
			for _, v := range raw {
				sum += v
			}
			for k, v := range raw {
				row[k] = float32(v / sum)
				logits[ti*C+k] = float32(math.Log(v / sum))
			}
		}
		if !isDistribution(p[:C]) || isDistribution(logits[:C]) {
			t.Fatal("test rows are not what they should be")
		}
		fast, err := cs.Decode(p, T, C, opt)
		if err != nil {
			t.Fatal(err)
		}
		full, err := cs.Decode(logits, T, C, opt)
		if err != nil {
			t.Fatal(err)
		}
		if fast.Text != full.Text || !slices.Equal(fast.Steps, full.Steps) {
			t.Fatalf("trial %d: shortcut read %q %v, full scan %q %v", trial, fast.Text, fast.Steps, full.Text, full.Steps)
		}
	}
}

// TestLongestRun: the decoder reports the most consecutive steps one character won, which is
// where greedy decoding may have collapsed a doubled character; blanks and spaces do not count.
func TestLongestRun(t *testing.T) {
	cs := testCharset(t)
	tests := []struct {
		name  string
		steps []step
		want  int
	}{
		{"nothing", []step{{0, .9, 0}, {0, .9, 0}}, 0},
		{"one step each", []step{{1, .9, 0}, {0, .9, 0}, {1, .9, 0}, {2, .9, 0}}, 1},
		{"a doubled letter read as one", []step{{1, .9, 0}, {1, .6, 0}, {1, .9, 0}, {2, .9, 0}}, 3},
		{"runs apart", []step{{1, .9, 0}, {1, .9, 0}, {0, .9, 0}, {1, .9, 0}, {1, .9, 0}}, 2},
		{"spaces do not count", []step{{1, .9, 0}, {5, .9, 0}, {5, .9, 0}, {5, .9, 0}, {2, .9, 0}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := cs.Decode(probs(tt.steps), len(tt.steps), 6, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			c, err := cs.DecodeTop(compact(probs(tt.steps), len(tt.steps), 6), len(tt.steps), DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if r.LongestRun != tt.want || c.LongestRun != tt.want {
				t.Errorf("LongestRun = %d (compact %d), want %d", r.LongestRun, c.LongestRun, tt.want)
			}
		})
	}
}

// TestDoubt: the decoder marks the characters whose steps leave room for a doubled one read as
// one: a character winning two steps in a row, or a weak blank (under weakBlank) between it and
// its neighbour; a clear blank, a space and a blank run at the end of the line mark nothing.
func TestDoubt(t *testing.T) {
	cs := testCharset(t)
	tests := []struct {
		name  string
		steps []step
		want  string // one letter per rune of the text: d where it is doubtful, - where not
	}{
		{"clear blanks", []step{{1, .9, 0}, {0, .99, 0}, {2, .9, 0}, {0, .99, 0}, {3, .9, 0}}, "---"},
		{"two steps in a row", []step{{1, .9, 0}, {2, .9, 0}, {2, .9, 0}, {0, .99, 0}, {3, .9, 0}}, "-d-"},
		{"a weak blank between two letters", []step{{1, .9, 0}, {0, .99, 0}, {2, .9, 0}, {0, .6, 0}, {3, .9, 0}}, "-dd"},
		{"a weak blank at the end", []step{{1, .9, 0}, {0, .99, 0}, {2, .9, 0}, {0, .6, 0}}, "--"},
		{"a weak blank before the model's space", []step{{1, .9, 0}, {0, .6, 0}, {5, .9, 0}, {2, .9, 0}}, "---"},
		{"a weak blank where a space is restored", []step{{1, .9, 0}, {0, .6, .3}, {2, .9, 0}}, "---"},
		{"the model's space is never doubtful", []step{{1, .9, 0}, {5, .9, 0}, {5, .9, 0}, {2, .9, 0}}, "---"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := cs.Decode(probs(tt.steps), len(tt.steps), 6, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			c, err := cs.DecodeTop(compact(probs(tt.steps), len(tt.steps), 6), len(tt.steps), DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, d := range r.Doubt {
				if d {
					got.WriteByte('d')
				} else {
					got.WriteByte('-')
				}
			}
			if got.String() != tt.want || !slices.Equal(r.Doubt, c.Doubt) {
				t.Errorf("%q: Doubt = %s (compact %v), want %s", r.Text, got.String(), c.Doubt, tt.want)
			}
		})
	}
}
