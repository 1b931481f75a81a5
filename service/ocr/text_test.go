package ocr

import "testing"

func TestASCIIWidth(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TOTAL（RM）：9.00", "TOTAL(RM):9.00"},
		{"plain ascii", "plain ascii"},
		{"发票（普通）", "发票（普通）"},
		{"A\u3000B", "A B"},
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

func TestUndoubles(t *testing.T) {
	tests := []struct {
		whole, squeezed string
		want            bool
	}{
		{"7757****6336", "7757***6336", true},
		{"committee", "committe", true},
		{"bookkeeper 1100.00", "bookeeper 1100.00", true},
		{"RM 444.00", "RM 44.00", true},
		{"Invoice No.:", "Invoice No.", false}, // a character more that doubles nothing
		{"SET--PTC", "SET-PIC", false},         // and a different one
		{"committee", "committee", false},      // nothing more
		{"comittee", "committee", false},
		{"A B", "AB", false}, // spaces aside, the same
	}
	for _, tt := range tests {
		if got := undoubles(tt.whole, tt.squeezed); got != tt.want {
			t.Errorf("undoubles(%q, %q) = %v, want %v", tt.whole, tt.squeezed, got, tt.want)
		}
	}
}
