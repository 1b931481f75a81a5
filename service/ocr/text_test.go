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
