package scoring

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// box returns the axis-aligned quad of the rectangle (x0, y0)-(x1, y1), clockwise from top-left.
func box(x0, y0, x1, y1 float64) geom.Quad {
	return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

func TestQuadRect(t *testing.T) {
	tests := []struct {
		name string
		q    geom.Quad
		want rect
	}{
		// points_to_rect([[3, 4], [10, 2], {"x": 7, "y": 9}]) == (3.0, 2.0, 10.0, 9.0)
		{"doctest", geom.Quad{{X: 3, Y: 4}, {X: 10, Y: 2}, {X: 7, Y: 9}, {X: 7, Y: 9}}, rect{3, 2, 10, 9}},
		{"axis aligned", box(1, 2, 30, 12), rect{1, 2, 30, 12}},
		{"rotated", geom.Quad{{X: 5, Y: 0}, {X: 10, Y: 5}, {X: 5, Y: 10}, {X: 0, Y: 5}}, rect{0, 0, 10, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quadRect(tt.q); got != tt.want {
				t.Errorf("quadRect = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIoU(t *testing.T) {
	tests := []struct {
		name string
		a, b rect
		want float64
	}{
		{"identical", rect{0, 0, 10, 10}, rect{0, 0, 10, 10}, 1.0},
		{"third", rect{0, 0, 10, 10}, rect{5, 0, 15, 10}, 0.3333333333333333},
		{"disjoint", rect{0, 0, 1, 1}, rect{2, 2, 3, 3}, 0.0},
		{"touching edge", rect{0, 0, 1, 1}, rect{1, 0, 2, 1}, 0.0},
		{"half", rect{0, 0, 10, 10}, rect{0, 0, 10, 5}, 0.5},
		{"degenerate", rect{0, 0, 0, 0}, rect{-5, -5, 5, 5}, 0.0},
		{"shifted segment", rect{150, 40, 200, 60}, rect{175, 40, 225, 60}, 1.0 / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := iou(tt.a, tt.b); got != tt.want {
				t.Errorf("iou = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGreedyMatch(t *testing.T) {
	tests := []struct {
		name     string
		gt, pred []rect
		thr      float64
		want     []pair
	}{
		{"doctest best wins", []rect{{0, 0, 10, 10}}, []rect{{0, 0, 10, 9}, {0, 0, 10, 10}}, 0.5,
			[]pair{{0, 1, 1.0}}},
		{"doctest below threshold", []rect{{0, 0, 10, 10}}, []rect{{5, 0, 15, 10}}, 0.5, nil},
		{"IoU equal to threshold matches", []rect{{0, 0, 10, 10}}, []rect{{0, 0, 10, 5}}, 0.5,
			[]pair{{0, 0, 0.5}}},
		{"threshold 0 still needs overlap", []rect{{0, 0, 1, 1}}, []rect{{2, 2, 3, 3}}, 0, nil},
		{"tie on IoU: lower gt index first", []rect{{0, 0, 10, 10}, {0, 0, 10, 10}}, []rect{{0, 0, 10, 10}}, 0.5,
			[]pair{{0, 0, 1.0}}},
		{"tie on IoU: lower pred index first", []rect{{0, 0, 10, 10}}, []rect{{0, 0, 10, 10}, {0, 0, 10, 10}}, 0.5,
			[]pair{{0, 0, 1.0}}},
		{"one-to-one", []rect{{0, 0, 10, 10}, {0, 0, 10, 9}}, []rect{{0, 0, 10, 10}, {0, 0, 10, 9.5}}, 0.5,
			[]pair{{0, 0, 1.0}, {1, 1, 9 / 9.5}}},
		{"no predictions", []rect{{0, 0, 1, 1}}, nil, 0.5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := greedyMatch(tt.gt, tt.pred, tt.thr); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("greedyMatch = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"TOTAL 9.00", "TOTAL 9.08", 1},
		{"straße", "strasse", 2}, // code points, not bytes
		{"日本語", "日本", 1},
		{"flaw", "lawn", 2},
	}
	for _, tt := range tests {
		t.Run(tt.a+"/"+tt.b, func(t *testing.T) {
			if got := levenshtein(tt.a, tt.b); got != tt.want {
				t.Errorf("levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestSquashAndFields(t *testing.T) {
	tests := []struct {
		name, in, squash string
		fields           []string
	}{
		{"doctest", "  TOTAL \t  9.00 ", "TOTAL 9.00", []string{"TOTAL", "9.00"}},
		{"empty", "", "", nil},
		{"only space", " \t\r\n", "", nil},
		{"no-break space", "RM\u00a09.00", "RM 9.00", []string{"RM", "9.00"}},
		{"ideographic space", "A\u3000B", "A B", []string{"A", "B"}},
		{"python-only separators", "A\x1cB\x1fC", "A B C", []string{"A", "B", "C"}},
		{"zero width space is not space", "A\u200bB", "A\u200bB", []string{"A\u200bB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := squash(tt.in); got != tt.squash {
				t.Errorf("squash(%q) = %q, want %q", tt.in, got, tt.squash)
			}
			if got := pyFields(tt.in); !slices.Equal(got, tt.fields) {
				t.Errorf("pyFields(%q) = %q, want %q", tt.in, got, tt.fields)
			}
		})
	}
}

func TestPySplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a\nb\n", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\r\rb", []string{"a", "", "b"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\vb\fc\x1cd\x1de\x1ef\u0085g\u2028h\u2029i", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
		{"a\x1fb", []string{"a\x1fb"}},
		{"", nil},
		{"\n", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := pySplitLines(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pySplitLines(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCasefold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TOTAL RM", "total rm"},
		{"Straße", "strasse"},          // strings.ToLower keeps ß
		{"STRASSE", "strasse"},         // so both spellings compare equal
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"},         // no final-sigma rule
		{"ς", "σ"},                     // final sigma folds to σ
		{"ﬁsh", "fish"},                // ligature expands
		{"İ", "i\u0307"},               // dotted capital I: i + combining dot
		{"µ", "μ"},                     // micro sign -> Greek mu
		{"ſ", "s"},                     // long s
		{"ᏸ", "Ᏸ"},                     // Cherokee folds to upper case
		{"ꭰ", "Ꭰ"},                     // Cherokee small letter a
		{"Ꭰ", "Ꭰ"},                     // Cherokee capital stays
		{"K", "k"},                     // Kelvin sign
		{"ǅ", "ǆ"},                     // title-case digraph
		{"ı", "ı"},                     // dotless i is its own fold
		{"12:30 NO.2,", "12:30 no.2,"}, // non-letters unchanged
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := casefold(tt.in); got != tt.want {
				t.Errorf("casefold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPRF(t *testing.T) {
	tests := []struct {
		name                 string
		correct, nPred, nGT  int
		wantP, wantR, wantF1 float64
	}{
		{"nothing expected nothing predicted", 0, 0, 0, 1, 1, 1},
		{"no predictions", 0, 0, 5, 0, 0, 0},
		{"predictions without GT", 0, 3, 0, 0, 1, 0},
		{"doctest", 2, 4, 2, 0.5, 1, 0.6666666666666666},
		{"none correct", 0, 4, 4, 0, 0, 0},
		{"perfect", 6, 6, 6, 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, r, f := prf(tt.correct, tt.nPred, tt.nGT)
			if p != tt.wantP || r != tt.wantR || f != tt.wantF1 {
				t.Errorf("prf(%d, %d, %d) = (%v, %v, %v), want (%v, %v, %v)",
					tt.correct, tt.nPred, tt.nGT, p, r, f, tt.wantP, tt.wantR, tt.wantF1)
			}
		})
	}
	if got := ratio(1, 0, 0.0); got != 0 {
		t.Errorf("ratio(1, 0, 0) = %v, want 0", got)
	}
	if got := ratio(1, 4, 0.0); got != 0.25 {
		t.Errorf("ratio(1, 4, 0) = %v, want 0.25", got)
	}
}

func TestScoreImage(t *testing.T) {
	gt := []Line{
		{"NO 12, JALAN 3/4,", box(10, 10, 200, 30)},
		{"TOTAL", box(10, 40, 120, 60)},
		{"9.00", box(150, 40, 200, 60)},
	}
	with := func(i int, l Line) []Line {
		p := append([]Line(nil), gt...)
		p[i] = l
		return p
	}
	tests := []struct {
		name     string
		gt, pred []Line
		thr      float64
		want     Counts
		check    func(t *testing.T, s Summary)
	}{
		{
			name: "doctest one substitution",
			gt:   []Line{{"TOTAL 9.00", box(0, 0, 100, 20)}},
			pred: []Line{{"TOTAL 9.08", box(1, 1, 99, 21)}},
			thr:  0.5,
			want: Counts{Images: 1, GTLines: 1, PredLines: 1, DetMatch: 1, GTWords: 2, PredWords: 2,
				WordCorrect: 1, WordCorrectCI: 1, CharED: 1, CharEDCI: 1, CharGT: 10, CharGTAll: 10, CharEDAll: 1},
		},
		{
			name: "perfect", gt: gt, pred: gt, thr: 0.5,
			want: Counts{Images: 1, GTLines: 3, PredLines: 3, DetMatch: 3, GTWords: 6, PredWords: 6,
				WordCorrect: 6, WordCorrectCI: 6, CharGT: 26, CharGTAll: 26, LineExact: 3},
			check: func(t *testing.T, s Summary) {
				want := Summary{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
				if s != want {
					t.Errorf("summary = %+v, want all 1", s)
				}
			},
		},
		{
			name: "empty prediction", gt: gt, pred: nil, thr: 0.5,
			want: Counts{Images: 1, GTLines: 3, GTWords: 6, CharGTAll: 26, CharEDAll: 26},
			check: func(t *testing.T, s Summary) {
				if s.DetRecall != 0 || s.WordRecall != 0 || s.CharAccAll != 0 || s.CharAcc != 1 || s.LineExact != 0 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "nothing at all", thr: 0.5,
			want: Counts{Images: 1},
			check: func(t *testing.T, s Summary) {
				if s.DetHmean != 1 || s.WordF1 != 1 || s.CharAcc != 1 || s.CharAccAll != 1 || s.LineExact != 0 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "one-char error", gt: gt, pred: with(2, Line{"9.08", box(150, 40, 200, 60)}), thr: 0.5,
			want: Counts{Images: 1, GTLines: 3, PredLines: 3, DetMatch: 3, GTWords: 6, PredWords: 6,
				WordCorrect: 5, WordCorrectCI: 5, CharED: 1, CharEDCI: 1, CharGT: 26, CharGTAll: 26, CharEDAll: 1, LineExact: 2},
			check: func(t *testing.T, s Summary) {
				if s.CharAcc != 1-1.0/26 || s.WordPrecision != 5.0/6 || s.WordRecall != 5.0/6 || s.DetHmean != 1 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "case handling", gt: gt, pred: with(0, Line{"no 12, jalan 3/4,", box(10, 10, 200, 30)}), thr: 0.5,
			want: Counts{Images: 1, GTLines: 3, PredLines: 3, DetMatch: 3, GTWords: 6, PredWords: 6,
				WordCorrect: 4, WordCorrectCI: 6, CharED: 7, CharGT: 26, CharGTAll: 26, CharEDAll: 7, LineExact: 2},
			check: func(t *testing.T, s Summary) {
				if s.WordRecall != 4.0/6 || s.WordCIRecall != 1 || s.CharAcc >= 1 || s.CharAccCI != 1 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "IoU below threshold: unmatched but words count", gt: gt,
			pred: with(2, Line{"9.00", box(175, 40, 225, 60)}), thr: 0.5,
			want: Counts{Images: 1, GTLines: 3, PredLines: 3, DetMatch: 2, GTWords: 6, PredWords: 6,
				WordCorrect: 6, WordCorrectCI: 6, CharGT: 22, CharGTAll: 26, CharEDAll: 4, LineExact: 2},
		},
		{
			name: "lower threshold matches it", gt: gt,
			pred: with(2, Line{"9.00", box(175, 40, 225, 60)}), thr: 0.3,
			want: Counts{Images: 1, GTLines: 3, PredLines: 3, DetMatch: 3, GTWords: 6, PredWords: 6,
				WordCorrect: 6, WordCorrectCI: 6, CharGT: 26, CharGTAll: 26, LineExact: 3},
		},
		{
			name: "duplicate box is one-to-one", gt: gt,
			pred: append(append([]Line(nil), gt...), Line{"TOTAL", box(10, 40, 118, 60)}), thr: 0.5,
			want: Counts{Images: 1, GTLines: 3, PredLines: 4, DetMatch: 3, GTWords: 6, PredWords: 7,
				WordCorrect: 6, WordCorrectCI: 6, CharGT: 26, CharGTAll: 26, LineExact: 3},
			check: func(t *testing.T, s Summary) {
				if s.DetPrecision != 0.75 || s.WordPrecision != 6.0/7 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "region without area never matches",
			gt:   []Line{{"A", box(0, 0, 10, 10)}}, pred: []Line{{"A", geom.Quad{}}}, thr: 0.5,
			want: Counts{Images: 1, GTLines: 1, PredLines: 1, GTWords: 1, PredWords: 1, WordCorrect: 1,
				WordCorrectCI: 1, CharGTAll: 1, CharEDAll: 1},
		},
		{
			name: "merged row matches the larger segment only",
			gt:   gt[1:], pred: []Line{{"TOTAL   9.00", box(10, 40, 200, 60)}}, thr: 0.5,
			want: Counts{Images: 1, GTLines: 2, PredLines: 1, DetMatch: 1, GTWords: 2, PredWords: 2, WordCorrect: 2,
				WordCorrectCI: 2, CharED: 5, CharEDCI: 5, CharGT: 5, CharGTAll: 9, CharEDAll: 9},
		},
		{
			name: "squash before comparing lines, multiset words",
			gt:   []Line{{" A  A B ", box(0, 0, 10, 10)}}, pred: []Line{{"A A\tA", box(0, 0, 10, 10)}}, thr: 0.5,
			want: Counts{Images: 1, GTLines: 1, PredLines: 1, DetMatch: 1, GTWords: 3, PredWords: 3,
				WordCorrect: 2, WordCorrectCI: 2, CharED: 1, CharEDCI: 1, CharGT: 5, CharGTAll: 5, CharEDAll: 1},
		},
		{
			name: "casefold ß",
			gt:   []Line{{"STRASSE", box(0, 0, 10, 10)}}, pred: []Line{{"Straße", box(0, 0, 10, 10)}}, thr: 0.5,
			want: Counts{Images: 1, GTLines: 1, PredLines: 1, DetMatch: 1, GTWords: 1, PredWords: 1,
				WordCorrectCI: 1, CharED: 6, CharGT: 7, CharGTAll: 7, CharEDAll: 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScoreImage(tt.gt, tt.pred, tt.thr)
			if got != tt.want {
				t.Errorf("ScoreImage =\n %+v\nwant\n %+v", got, tt.want)
			}
			if tt.check != nil {
				tt.check(t, got.Summary())
			}
		})
	}
}

func TestCountsAdd(t *testing.T) {
	a := Counts{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	var sum Counts
	sum.Add(a)
	sum.Add(a)
	if want := (Counts{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28}); sum != want {
		t.Errorf("Add = %+v, want %+v", sum, want)
	}
	// Micro-average: sums first, then divide.
	var c Counts
	c.Add(Counts{Images: 1, GTLines: 1, PredLines: 1, DetMatch: 1})
	c.Add(Counts{Images: 1, GTLines: 3, PredLines: 1})
	if s := c.Summary(); s.DetRecall != 0.25 || s.DetPrecision != 0.5 {
		t.Errorf("micro summary = %+v", s)
	}
}

func TestDecodeBytes(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		text     string
		encoding string
	}{
		{"utf-8 BOM", []byte("\xef\xbb\xbfABC"), "ABC", "utf-8-sig"},
		{"cp1252", []byte("CAF\xc9"), "CAFÉ", "cp1252"},
		{"utf-16 LE", []byte("\xff\xfex\x00"), "x", "utf-16"},
		{"utf-16 BE", []byte("\xfe\xff\x00x\x00\xe9"), "xé", "utf-16"},
		{"latin-1", []byte("\x81\x8d"), "\u0081\u008d", "latin-1"},
		{"utf-8", []byte("NO.2, JALAN"), "NO.2, JALAN", "utf-8"},
		{"cp1252 euro", []byte("\x805.00"), "€5.00", "cp1252"},
		{"odd utf-16 falls back", []byte("\xff\xfeA"), "ÿþA", "cp1252"},
		{"lone surrogate falls back", []byte("\xff\xfe\x00\xd8"), "ÿþ\x00Ø", "cp1252"},
		{"utf-16 surrogate pair", []byte("\xff\xfe\x3d\xd8\x00\xde"), "😀", "utf-16"},
		{"empty", nil, "", "utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, enc := decodeBytes(tt.in)
			if text != tt.text || enc != tt.encoding {
				t.Errorf("decodeBytes(%q) = (%q, %q), want (%q, %q)", tt.in, text, enc, tt.text, tt.encoding)
			}
		})
	}
}

func TestParseBoxText(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []Line
		malformed int
	}{
		{"doctest commas CRLF blank junk", "1,2,30,2,30,12,1,12,NO 5, JALAN 3,\r\n\njunk\n",
			[]Line{{"NO 5, JALAN 3,", box(1, 2, 30, 12)}}, 1},
		{"doctest no text", "0,0,5,0,5,5,0,5\n", []Line{{"", box(0, 0, 5, 5)}}, 0},
		{"sroie commas", "137,357,641,357,641,399,137,399,NO.2, JALAN TEMENGGUNG 19/9,\n",
			[]Line{{"NO.2, JALAN TEMENGGUNG 19/9,", box(137, 357, 641, 399)}}, 0},
		{"trailing comma keeps empty text", "0,0,5,0,5,5,0,5,\n", []Line{{"", box(0, 0, 5, 5)}}, 0},
		{"seven numbers", "1,2,3,4,5,6,7\n", nil, 1},
		{"non-number coordinate", "1,2,3,4,5,6,7,x,TEXT\n", nil, 1},
		{"spaces, sign, underscore, decimals", " 1 ,+2,3_0,2.0,30,12e0,1,12 , A \n",
			[]Line{{" A ", box(1, 2, 30, 12)}}, 0},
		{"BOM on a later line", "\ufeff1,2,30,2,30,12,1,12,A\n\ufeff\ufeff1,2,30,2,30,12,1,12,B\n",
			[]Line{{"A", box(1, 2, 30, 12)}, {"B", box(1, 2, 30, 12)}}, 0},
		{"whitespace-only lines skipped", " \t\n\u3000\n", nil, 0},
		{"CR only", "1,2,30,2,30,12,1,12,A\r1,2,30,2,30,12,1,12,B", []Line{{"A", box(1, 2, 30, 12)}, {"B", box(1, 2, 30, 12)}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := parseBoxText(tt.in)
			if !reflect.DeepEqual(got, tt.want) || bad != tt.malformed {
				t.Errorf("parseBoxText(%q) = %+v, %d; want %+v, %d", tt.in, got, bad, tt.want, tt.malformed)
			}
		})
	}
}

func TestPyFloat(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"12", 12, true}, {" 12 ", 12, true}, {"+1.5", 1.5, true}, {"-3", -3, true},
		{".5", 0.5, true}, {"5.", 5, true}, {"1.e3", 1000, true}, {"1_000", 1000, true},
		{"1e1_0", 1e10, true}, {"1E-2", 0.01, true}, {"inf", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true}, {"1e400", math.Inf(1), true}, {"١٢", 12, true},
		{"１２.５", 12.5, true},
		{"", 0, false}, {".", 0, false}, {"1__0", 0, false}, {"_1", 0, false}, {"1_", 0, false},
		{"1_.5", 0, false}, {"1e", 0, false}, {"e1", 0, false}, {"--1", 0, false},
		{"0x10", 0, false}, {"1 2", 0, false}, {"infinit", 0, false}, {"1,5", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := pyFloat(tt.in)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("pyFloat(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
	if f, ok := pyFloat("-nan"); !ok || !math.IsNaN(f) {
		t.Errorf("pyFloat(-nan) = %v, %v", f, ok)
	}
}

func TestPyNumberString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"9.5", "9.5"}, {"100", "100"}, {"-0", "0"}, {"-0.0", "-0.0"}, {"1e2", "100.0"},
		{"1e16", "1e+16"}, {"1e15", "1000000000000000.0"}, {"0.0001", "0.0001"}, {"0.00001", "1e-05"},
		{"12345678901234567890", "12345678901234567890"}, {"1e400", "inf"}, {"80.90", "80.9"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := pyNumberString(tt.in); got != tt.want {
				t.Errorf("pyNumberString(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScoreKeys(t *testing.T) {
	gt := map[string]string{"company": "ABC SDN BHD", "date": "01/02/2018", "address": "NO 12, JALAN 3/4,", "total": "9.00"}
	tests := []struct {
		name  string
		gt    map[string]string
		pred  map[string]string
		check func(t *testing.T, k KeyCounts, s KeySummary)
	}{
		{
			name: "doctest",
			gt:   map[string]string{"company": "A  B", "total": "9.00", "date": ""},
			pred: map[string]string{"company": "a b", "total": "9.0"},
			check: func(t *testing.T, k KeyCounts, s KeySummary) {
				if k.Fields[0].Correct != 1 || k.Fields[3].Correct != 0 || k.Fields[3].GT != 1 || k.Fields[1].GT != 0 {
					t.Errorf("counts = %+v", k)
				}
			},
		},
		{
			name: "selftest: normalised match, empty pred, wrong total", gt: gt,
			pred: map[string]string{"company": " abc  sdn bhd", "date": "01/02/2018", "address": "", "total": "9.0"},
			check: func(t *testing.T, k KeyCounts, s KeySummary) {
				f := s.Fields
				if f["company"].Correct != 1 || f["date"].Correct != 1 || f["address"].Correct != 0 || f["total"].Correct != 0 {
					t.Errorf("fields = %+v", f)
				}
				if s.OverallAccuracy != 0.5 || s.Task3Precision != 2.0/3 || s.Task3Recall != 0.5 ||
					!(s.Task3F1CaseSensitive < s.Task3F1) || s.ImagesAllFieldsCorrect != 0 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "selftest: perfect", gt: gt, pred: gt,
			check: func(t *testing.T, k KeyCounts, s KeySummary) {
				if s.Task3F1 != 1 || s.Task3F1CaseSensitive != 1 || s.ImagesAllFieldsCorrect != 1 || s.Fields["all"].Accuracy != 1 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "missing prediction", gt: gt, pred: nil,
			check: func(t *testing.T, k KeyCounts, s KeySummary) {
				if s.Task3Precision != 0 || s.Task3Recall != 0 || s.Task3F1 != 0 || k.All.GT != 4 || k.All.Pred != 0 {
					t.Errorf("summary = %+v", s)
				}
			},
		},
		{
			name: "no GT fields, nothing predicted: all correct", gt: nil, pred: nil,
			check: func(t *testing.T, k KeyCounts, s KeySummary) {
				if k.ImagesAllCorrect != 1 || s.Task3F1 != 1 || s.OverallAccuracy != 0 {
					t.Errorf("counts = %+v summary = %+v", k, s)
				}
			},
		},
		{
			name: "ß folds", gt: map[string]string{"company": "STRASSE"}, pred: map[string]string{"company": "Straße", "other": "x"},
			check: func(t *testing.T, k KeyCounts, s KeySummary) {
				if k.Fields[0].Correct != 1 || k.AllCaseSensitive.Correct != 0 || k.All.Pred != 1 {
					t.Errorf("counts = %+v", k)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := ScoreKeys(tt.gt, tt.pred)
			tt.check(t, k, k.Summary())
		})
	}
	var sum KeyCounts
	sum.Add(ScoreKeys(gt, gt))
	sum.Add(ScoreKeys(gt, nil))
	if s := sum.Summary(); s.ImagesAllFieldsCorrect != 0.5 || s.Task3Precision != 1 || s.Task3Recall != 0.5 || sum.Images != 2 {
		t.Errorf("summed = %+v", s)
	}
}

func TestValidText(t *testing.T) {
	if got := validText("A\xff\xfeB"); got != "A\uFFFD\uFFFDB" || strings.Count(got, "\uFFFD") != 2 {
		t.Errorf("validText = %q", got)
	}
}
