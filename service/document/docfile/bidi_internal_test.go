package docfile

import (
	"testing"

	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// TestLogical: a line as drawn (visual order, left to right) reads in logical order, as Unicode's
// algorithm would have drawn it from that order.
func TestLogical(t *testing.T) {
	tests := []struct{ visual, logical string }{
		{"Total 12.00", "Total 12.00"},
		{"2024 مكل اركش", "شكرا لكم 2024"},
		{"Paid to ةكرش Ltd", "Paid to شركة Ltd"},
		{"ةروتاف 118 مقر", "رقم 118 فاتورة"},
		{"(ةكرش)", "(شركة)"},
		{"ABC ةكرش", "شركة ABC"},
	}
	for _, tc := range tests {
		runes := []rune(tc.visual)
		var seq []int
		for i, r := range runes {
			if r == ' ' {
				seq = append(seq, -1)
				continue
			}
			seq = append(seq, i)
		}
		order, rtl := logical(seq, func(i int) rune { return runes[i] })
		var got []rune
		for k, i := range order {
			switch {
			case i < 0:
				got = append(got, ' ')
			case rtl[k]:
				got = append(got, mirror(runes[i]))
			default:
				got = append(got, runes[i])
			}
		}
		if string(got) != tc.logical {
			t.Errorf("%q reads %q, want %q", tc.visual, string(got), tc.logical)
		}
	}
}

// TestLigatureLettersKeepTheirOrder: PDFium gives a ligature's letters one by one, in the order
// they are read, each with the ligature's box. pdf.js's ArabicCIDTrueType.pdf draws الخطوط with
// the lam–khah ligature (ﳋ), which came out as اخلطوط. Its letters are read in their order,
// right to left as left to right (ﬁ).
func TestLigatureLettersKeepTheirOrder(t *testing.T) {
	// Each glyph: its runes in the order PDFium gives them, and its box's left edge (all 10 pt
	// wide, on one baseline).
	type drawn struct {
		runes string
		x     float64
	}
	tests := []struct {
		name  string
		chars []drawn
		want  string
	}{
		{"lam–khah, right to left", []drawn{{"ا", 100}, {"لخ", 90}, {"ط", 80}, {"و", 70}, {"ط", 60}}, "الخطوط"},
		{"fi, left to right", []drawn{{"fi", 60}, {"n", 70}, {"e", 80}}, "fine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var chars []pdfengine.Char
			for _, d := range tc.chars {
				for _, r := range d.runes {
					box := pdfengine.Rect{X0: d.x, Y0: 100, X1: d.x + 10, Y1: 112}
					chars = append(chars, pdfengine.Char{Rune: r, Box: box, Loose: box})
				}
			}
			lines := group(chars)
			if len(lines) != 1 {
				t.Fatalf("%d lines", len(lines))
			}
			words := lines[0].words()
			if len(words) != 1 || words[0].text != tc.want {
				t.Errorf("words %+v, want %q", words, tc.want)
			}
		})
	}
}
