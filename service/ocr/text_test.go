package ocr

import (
	"strings"
	"testing"
)

func TestASCIIWidth(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TOTAL（RM）：9.00", "TOTAL(RM):9.00"},
		{"plain ascii", "plain ascii"},
		{"发票（普通）", "发票（普通）"},
		{"A\u3000B", "A B"},
		{"$ 43、335.00", "$ 43,335.00"},
		{"S. T. BEASLEY 《MRS.》/jlf。", "S. T. BEASLEY (MRS.)/jlf."},
		{"发票、收据。", "发票、收据。"},
		{"ｶﾀｶﾅ（x）", "ｶﾀｶﾅ（x）"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := asciiWidth(tt.in); got != tt.want {
				t.Errorf("asciiWidth(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLatinLookalikes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"INV0ICE N0: 0000118833", "INVOICE NO: 0000118833"},
		{"CARD N0: 7757****6336 APPR0VED AM0UNT RM 444.00", "CARD NO: 7757****6336 APPROVED AMOUNT RM 444.00"},
		{"ballo0n 99.99", "balloon 99.99"},
		{"ba11oon 99.99", "balloon 99.99"},
		{"bal1oon", "balloon"},
		{"ROUNDING ADJ -O.01", "ROUNDING ADJ -0.01"},
		{"CASH 10O.00 CHANGE 12.O0", "CASH 100.00 CHANGE 12.00"},
		{"Qty 3 × 22.20", "Qty 3 x 22.20"},
		// An l in a figure, before a digit: a typewriter's 1.
		{"NEW YORK l0021", "NEW YORK 10021"},
		{"$4l00. and l662,", "$4100. and 1662,"},
		{"(l0O.00)", "(100.00)"},
		// Left alone: an l after the figure (a litre), one digit, a word with other letters.
		{"1.5l 2l l8 5lmm bl64", "1.5l 2l l8 5lmm bl64"},
		// Left alone: the word's other digits say nothing about the 0 or the 1.
		{"A1B2 4G 10A", "A1B2 4G 10A"},
		{"NO. 1", "NO. 1"},
		{"O", "O"},
		{"100.00", "100.00"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := latinLookalikes(tt.in)
			if got != tt.want {
				t.Errorf("latinLookalikes(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len([]rune(got)) != len([]rune(tt.in)) {
				t.Errorf("latinLookalikes(%q) changed the number of runes", tt.in)
			}
		})
	}
}

// TestPutDoubles: a second, wider reading of a crop gives the first the doubled characters it
// lost, word by word, where the wider reading reads the word so and nothing else; the first
// reading keeps its spaces, and every character keeps a timestep for its word's box.
func TestPutDoubles(t *testing.T) {
	tests := []struct {
		name, first, wider, want string
	}{
		{"a doubled letter", "the tre is", "the tree is", "the tree is"},
		{"the first reading's spaces kept", "the tre is", "thetreeis", "the tree is"},
		{"several words", "wil you sel it", "will you sell it", "will you sell it"},
		{"a doubled letter at a word's end", "fil it", "fill it", "fill it"},
		{"asterisks", "7757***6336", "7757****6336", "7757****6336"},
		{"digits", "RM 44.00", "RM 444.00", "RM 444.00"},
		{"only the words read so", "travelr an fery", "traveller, an ferry", "travelr an ferry"},
		{"a word read otherwise is left", "actualy", "actuailly", "actualy"},
		{"a doubled hyphen is a stray mark", "TEL 1-300", "TEL 1--300", "TEL 1-300"},
		{"a character more that doubles nothing", "Invoice No.", "Invoice No.:", "Invoice No."},
		{"nothing more", "committee", "committee", "committee"},
		{"fewer characters", "committee", "comittee", "committee"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len([]rune(tt.first))
			c := &crop{quad: rect(0, 0, float64(8*n), 20), text: tt.first, width: 8 * n, steps: n, rw: 8 * n}
			for i := range n {
				c.runeSteps = append(c.runeSteps, i)
				c.probs = append(c.probs, 0.9)
			}
			c.putDoubles(tt.wider)
			if c.text != tt.want {
				t.Fatalf("putDoubles(%q, %q) = %q, want %q", tt.first, tt.wider, c.text, tt.want)
			}
			if m := len([]rune(c.text)); len(c.runeSteps) != m || len(c.probs) != m {
				t.Fatalf("%d runes, %d steps, %d probabilities", m, len(c.runeSteps), len(c.probs))
			}
			if len(c.words) != len(strings.Fields(tt.want)) && c.text != tt.first {
				t.Fatalf("%d words for %q", len(c.words), c.text)
			}
		})
	}
}
