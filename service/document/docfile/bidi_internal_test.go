package docfile

import "testing"

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
