package server

import (
	"testing"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/pdffile"
)

// TestSameShape: a page of the page tree matches the page PDFium drew when its box, turned by
// /Rotate, has the answer's proportions, within rounding to whole pixels.
func TestSameShape(t *testing.T) {
	a4 := [4]float64{0, 0, 595.28, 841.89}
	for _, tt := range []struct {
		name   string
		box    [4]float64
		rotate int
		w, h   int
		want   bool
	}{
		{"A4 at 200 dpi", a4, 0, 1654, 2339, true},
		{"A4 turned", a4, 90, 2339, 1654, true},
		{"A4 turned, answered upright", a4, 270, 1654, 2339, false},
		{"a crop box, offset", [4]float64{20, 10, 380, 290}, 0, 720, 560, true},
		{"a thin strip, a pixel of rounding", [4]float64{0, 0, 500, 3.3}, 0, 1389, 9, true},
		{"Letter for A4", [4]float64{0, 0, 612, 792}, 0, 1654, 2339, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := sameShape(pdffile.Page{Box: tt.box, Rotate: tt.rotate}, api.Page{Width: tt.w, Height: tt.h})
			if got != tt.want {
				t.Errorf("sameShape = %v, want %v", got, tt.want)
			}
		})
	}
}
