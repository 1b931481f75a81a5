package ocr

import (
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestJoinVertical checks which stacked boxes make one vertical line: the words of a margin
// stamp do; a table's column of single digits, lines across and boxes of other widths do not.
func TestJoinVertical(t *testing.T) {
	box := func(x0, y0, x1, y1 float64) geom.Quad {
		return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
	}
	for _, tt := range []struct {
		name      string
		quads     []geom.Quad
		wantBoxes int
		wantParts int // boxes of the one joined line; 0: none joined
	}{
		{"a stamp's three words", []geom.Quad{box(10, 300, 30, 350), box(11, 360, 31, 400), box(10, 410, 30, 440)}, 1, 3},
		{"a stamp beside lines across", []geom.Quad{box(10, 300, 30, 350), box(11, 360, 31, 400), box(60, 300, 500, 320), box(60, 340, 500, 360)}, 3, 2},
		{"a column of single digits", []geom.Quad{box(100, 100, 112, 120), box(100, 130, 112, 150), box(100, 160, 112, 180)}, 3, 0},
		{"a table's rows of single digits, four or more", []geom.Quad{box(100, 100, 112, 112), box(100, 120, 112, 132), box(100, 140, 112, 152), box(100, 160, 112, 172)}, 4, 0},
		{"a stamp's characters, each boxed", []geom.Quad{box(700, 800, 715, 812), box(701, 814, 716, 826), box(700, 828, 715, 841), box(700, 843, 715, 855), box(701, 857, 716, 869)}, 1, 5},
		{"three characters boxed are too few", []geom.Quad{box(700, 800, 715, 812), box(701, 814, 716, 826), box(700, 828, 715, 841)}, 3, 0},
		{"lines across, one under the other", []geom.Quad{box(10, 10, 200, 30), box(10, 35, 200, 55)}, 2, 0},
		{"a word on its side and a wide box under it", []geom.Quad{box(10, 300, 30, 350), box(5, 355, 60, 380)}, 2, 0},
		{"two words far apart", []geom.Quad{box(10, 100, 30, 150), box(10, 300, 30, 350)}, 2, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, parts := joinVertical(tt.quads, 1000)
			if len(out) != tt.wantBoxes {
				t.Fatalf("%d boxes %v, want %d", len(out), out, tt.wantBoxes)
			}
			n := 0
			for j, ps := range parts {
				n += len(ps)
				if _, y0, _, y1 := j.Bounds(); y1-y0 < columnRatio*j.Width() {
					t.Errorf("joined %v is no line", j)
				}
			}
			if n != tt.wantParts {
				t.Errorf("%d boxes joined, want %d", n, tt.wantParts)
			}
		})
	}
}

// TestTrimStray checks that a joined line's lone marks at its ends go and its words stay.
func TestTrimStray(t *testing.T) {
	for in, want := range map[string]string{
		". ABC 2045 7781":   "ABC 2045 7781",
		"Page 14 of 20 .":   "Page 14 of 20",
		"‘ BATES 0012 3456": "BATES 0012 3456",
		"REV 3/95":          "REV 3/95",
		"A 1":               "A 1",
		".":                 ".",
	} {
		c := &crop{text: in}
		trimStray(c)
		if c.text != want {
			t.Errorf("%q: %q, want %q", in, c.text, want)
		}
	}
}
