package ocr

import (
	"image"
	"slices"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// page is the text line every scene below has, boxed as the detector would box it, so that the
// page's median line height is 14.
var pageLine = box(20, 10, 300, 24)

func box(x0, y0, x1, y1 float64) geom.Quad {
	return joinedQuad([4]float64{x0, y0, x1, y1})
}

// lying is a character on its side, w across and h along its column: a frame with a bar across,
// as a digit's strokes are, not solid.
func lying(x, y, w, h int) []image.Rectangle {
	return []image.Rectangle{
		image.Rect(x, y, x+w, y+1), image.Rect(x, y+h-1, x+w, y+h),
		image.Rect(x, y, x+1, y+h), image.Rect(x+w-1, y, x+w, y+h),
		image.Rect(x, y+h/2, x+w, y+h/2+1),
	}
}

// column is n characters on their side, one under the other, gap pixels apart.
func column(x, y, n, gap int) []image.Rectangle {
	var out []image.Rectangle
	for i := range n {
		out = append(out, lying(x, y+i*(8+gap), 13, 8)...)
	}
	return out
}

// standing is a character standing, w wide and h tall: a frame with a bar.
func standing(x, y, w, h int) []image.Rectangle { return lying(x, y, w, h) }

func TestInkLines(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rects []image.Rectangle
		boxes []geom.Quad
		want  []image.Rectangle // the lines found, their pieces' extent
	}{
		{"a stamp on its side", column(200, 60, 8, 2), nil, []image.Rectangle{image.Rect(200, 60, 213, 138)}},
		{"a stamp with a word space", slices.Concat(column(200, 60, 4, 2), column(200, 108, 4, 2)), nil,
			[]image.Rectangle{image.Rect(200, 60, 213, 146)}},
		// The detector found it: nothing to add.
		{"boxed by the detector", column(200, 60, 8, 2), []geom.Quad{box(196, 56, 217, 142)}, nil},
		// One character of it boxed alone does not hide the rest.
		{"one character boxed alone", column(200, 60, 8, 2), []geom.Quad{box(198, 58, 215, 70)},
			[]image.Rectangle{image.Rect(200, 60, 213, 138)}},
		{"too short for a line", column(200, 60, 3, 2), nil, nil},
		// A table's column of characters stands a line's space apart, not a letter's.
		{"rows of a table", column(200, 60, 8, 14), nil, nil},
		{"a rule", []image.Rectangle{image.Rect(200, 40, 203, 190)}, nil, nil},
		{"a bar", []image.Rectangle{image.Rect(200, 40, 212, 190)}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			px, _ := newPixels(scene(400, 240, tt.rects...))
			lines, _ := inkLines(px, px.inkThreshold(), append([]geom.Quad{pageLine}, tt.boxes...))
			if len(lines) != len(tt.want) {
				t.Fatalf("found %v, want %v", lines, tt.want)
			}
			for i, q := range lines {
				x0, y0, x1, y1 := q.Bounds()
				w := tt.want[i]
				// The box holds the pieces with a little white around them, no more than a third
				// of the line's width on either side.
				pad := float64(w.Dx()) / 3
				if x0 > float64(w.Min.X) || y0 > float64(w.Min.Y) || x1 < float64(w.Max.X) || y1 < float64(w.Max.Y) ||
					x0 < float64(w.Min.X)-pad || y0 < float64(w.Min.Y)-pad || x1 > float64(w.Max.X)+pad || y1 > float64(w.Max.Y)+pad {
					t.Errorf("line %d: box %.0f,%.0f-%.0f,%.0f, want just around %v", i, x0, y0, x1, y1, w)
				}
			}
		})
	}
}

func TestInkWords(t *testing.T) {
	for _, tt := range []struct {
		name   string
		rects  []image.Rectangle
		boxes  []geom.Quad
		want   []image.Rectangle // the runs found, their pieces' extent
		choice []bool
	}{
		{"a number the detector left out", slices.Concat(standing(100, 100, 7, 12), standing(110, 100, 7, 12)), nil,
			[]image.Rectangle{image.Rect(100, 100, 117, 112)}, []bool{false}},
		{"with its point", slices.Concat(standing(100, 100, 7, 12), []image.Rectangle{image.Rect(109, 110, 111, 112)}), nil,
			[]image.Rectangle{image.Rect(100, 100, 111, 112)}, []bool{false}},
		{"a typed choice", slices.Concat(standing(100, 100, 4, 13), standing(132, 100, 4, 13)), nil,
			[]image.Rectangle{image.Rect(100, 100, 136, 113)}, []bool{true}},
		// Strokes as far apart but of different heights are two things, not a choice.
		{"two strokes of different heights", slices.Concat(standing(100, 100, 4, 13), standing(132, 100, 4, 8)), nil,
			[]image.Rectangle{image.Rect(100, 100, 104, 113), image.Rect(132, 100, 136, 108)}, []bool{false, false}},
		{"words a word space apart are one run", slices.Concat(standing(100, 100, 7, 12), standing(130, 100, 7, 12)), nil,
			[]image.Rectangle{image.Rect(100, 100, 137, 112)}, []bool{false}},
		{"covered by a box", slices.Concat(standing(100, 100, 7, 12), standing(110, 100, 7, 12)), []geom.Quad{box(96, 96, 122, 116)}, nil, nil},
		// A letter just past a box's end is part of its line: read with the line, not alone.
		{"beside a box", standing(106, 100, 7, 12), []geom.Quad{box(40, 96, 108, 116)}, nil, nil},
		{"a speck", []image.Rectangle{image.Rect(100, 100, 102, 102)}, nil, nil, nil},
		{"taller than print", standing(100, 100, 7, 40), nil, nil, nil},
		{"solid", []image.Rectangle{image.Rect(100, 100, 110, 112)}, nil, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			px, _ := newPixels(scene(400, 240, tt.rects...))
			_, words := inkLines(px, px.inkThreshold(), append([]geom.Quad{pageLine}, tt.boxes...))
			if len(words) != len(tt.want) {
				t.Fatalf("found %v, want %v", words, tt.want)
			}
			for i, w := range words {
				x0, y0, x1, y1 := w.quad.Bounds()
				r := tt.want[i]
				if x0 > float64(r.Min.X) || y0 > float64(r.Min.Y) || x1 < float64(r.Max.X) || y1 < float64(r.Max.Y) {
					t.Errorf("run %d: box %.0f,%.0f-%.0f,%.0f does not hold %v", i, x0, y0, x1, y1, r)
				}
				if x0 < float64(r.Min.X)-10 || x1 > float64(r.Max.X)+10 || y0 < float64(r.Min.Y)-4 || y1 > float64(r.Max.Y)+4 {
					t.Errorf("run %d: box %.0f,%.0f-%.0f,%.0f is well past %v", i, x0, y0, x1, y1, r)
				}
				if choice := w.kind == inkChoice; choice != tt.choice[i] {
					t.Errorf("run %d: choice %v, want %v", i, choice, tt.choice[i])
				}
			}
		})
	}
}

func TestInkReadings(t *testing.T) {
	for _, tt := range []struct {
		text        string
		score       float32
		line, words bool
	}{
		{"00283913", 0.96, true, true},
		{"00283913", 0.6, false, false},
		{"二二二", 0.99, false, false},
		{"7", 0.95, false, true},
		{"0", 0.95, false, false},  // a check box's frame reads as much
		{"J", 0.99, false, false},  // a letter alone: a logo's piece, a stroke of handwriting
		{"TO:", 0.95, false, true}, // two letters: too few for a line on its side
		{"BATES", 0.9, true, true},
		{"R&D", 0.98, false, true},
		{"", 0.99, false, false},
	} {
		c := &crop{text: tt.text, score: tt.score}
		if got := inkLineReads(c); got != tt.line {
			t.Errorf("%q at %.2f: reads as a line %v, want %v", tt.text, tt.score, got, tt.line)
		}
		if got := inkWordReads(c); got != tt.words {
			t.Errorf("%q at %.2f: reads as print %v, want %v", tt.text, tt.score, got, tt.words)
		}
	}
}

func TestReadChoice(t *testing.T) {
	w := inkWord{kind: inkChoice, brackets: [2]bounds{{100, 100, 104, 113}, {132, 100, 136, 113}}}
	for _, tt := range []struct {
		text  string
		score float32
		want  string // "" where it is not kept
	}{
		{"()", 0.6, "( )"},
		{"( )", 0.7, "( )"},
		{"(X)", 0.8, "(X)"},
		{"(.)", 0.7, "( )"},
		{"()", 0.3, ""},
		{"(10)", 0.9, ""},
		{"C)", 0.9, ""},
	} {
		c := &crop{text: tt.text, score: tt.score}
		ok := readChoice(c, w)
		if got := map[bool]string{true: c.text}[ok]; got != tt.want {
			t.Errorf("%q at %.2f: kept as %q, want %q", tt.text, tt.score, got, tt.want)
		}
		if ok && c.text == "( )" {
			if len(c.words) != 2 || c.words[0].Text != "(" || c.words[1].Text != ")" {
				t.Errorf("%q: words %+v, want ( and ) at their brackets", tt.text, c.words)
			} else if x0, _, _, _ := c.words[1].Quad.Bounds(); x0 != 132 {
				t.Errorf("%q: the closing bracket's word starts at %.0f, want 132", tt.text, x0)
			}
		}
	}
}

// An RGBA page is labelled by its pixels' luma, as a gray one is: the same pieces.
func TestInkPiecesRGBA(t *testing.T) {
	g := scene(120, 80, slices.Concat(column(20, 10, 4, 2), standing(60, 30, 7, 12))...)
	rgba := image.NewRGBA(g.Bounds())
	for i, v := range g.Pix {
		rgba.Pix[4*i], rgba.Pix[4*i+1], rgba.Pix[4*i+2], rgba.Pix[4*i+3] = v, v, v, 255
	}
	// Red ink: dark by its luma, though its red channel is full.
	for i := range rgba.Pix {
		if i%4 == 0 && rgba.Pix[i] == 0 {
			rgba.Pix[i] = 255
		}
	}
	gp, _ := newPixels(g)
	rp, _ := newPixels(rgba)
	want := inkPieces(gp, 128)
	got := inkPieces(rp, 128)
	if len(want) != 5 || !slices.Equal(got, want) {
		t.Fatalf("RGBA pieces %v, want the gray page's %v (5)", got, want)
	}
}
