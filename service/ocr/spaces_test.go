package ocr

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// glyphLine draws a crop 48 px high with one black bar per character of text (spaces drawn as
// nothing) and returns it with a reading of text whose steps sit on the bars: bar i spans
// x[i]..x[i]+8, one recognizer step of 8 px. gapSpace is the space probability the model left in
// every gap.
func glyphLine(t *testing.T, text string, x []int, ink uint8, gapSpace float32) (*image.RGBA, ctc.Result) {
	t.Helper()
	rs := []rune(text)
	if len(rs) != len(x) {
		t.Fatalf("%d characters, %d positions", len(rs), len(x))
	}
	w := x[len(x)-1] + 24
	img := image.NewRGBA(image.Rect(0, 0, w, 48))
	draw.Draw(img, img.Rect, image.NewUniform(color.White), image.Point{}, draw.Src)
	var r ctc.Result
	r.Text = text
	for i, c := range rs {
		if c != ' ' {
			draw.Draw(img, image.Rect(x[i], 8, x[i]+8, 40), image.NewUniform(color.RGBA{ink, ink, ink, 255}), image.Point{}, draw.Src)
		}
		r.Steps = append(r.Steps, x[i]/8)
		if c == ' ' {
			r.Probs = append(r.Probs, 0) // restored by ctc
		} else {
			r.Probs = append(r.Probs, 0.99)
		}
		r.GapSpace = append(r.GapSpace, gapSpace)
	}
	return img, r
}

func TestWordGaps(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		x        []int
		ink      uint8
		gapSpace float32
		want     string
	}{
		// Letters 4 px apart, one gap of 20 px: 5 times the median, 0.62 of the ink's height.
		{"wide gap between letters", "ABCD", []int{8, 20, 32, 60}, 0, 0, "ABC D"},
		{"after a colon", "TEL:03", []int{8, 20, 32, 44, 72, 84}, 0, 0, "TEL: 03"},
		// 12 px: 0.375 of the height, a space only where the model half saw one.
		{"narrower gap, no evidence", "ABCD", []int{8, 20, 32, 52}, 0, 0, "ABCD"},
		{"narrower gap, some evidence", "ABCD", []int{8, 20, 32, 52}, 0, 0.01, "ABC D"},
		// 12 px against a median of 6: twice the letters' gaps, with 0.01 from the model.
		{"twice the median, model half sure", "ABCDE", []int{8, 22, 36, 56, 70}, 0, 0.012, "ABC DE"},
		{"twice the median, model unsure", "ABCDE", []int{8, 22, 36, 56, 70}, 0, 0.006, "ABCDE"},
		{"even gaps", "ABCD", []int{8, 28, 48, 68}, 0, 0.02, "ABCD"},
		{"digits", "1234", []int{8, 20, 32, 60}, 0, 0.02, "1234"},
		{"point", "12.50", []int{8, 20, 48, 60, 72}, 0, 0.02, "12.50"},
		{"colon evenly set", "TEL:07", []int{8, 20, 32, 60, 88, 100}, 0, 0.02, "TEL:07"},
		// A colon that ends a word, in a typewriter's cell: 12 px blank before it, 0.375 of
		// the ink's height, no space; a receipt's "TOTAL :" leaves a cell more, 16 px.
		{"colon in its cell", "ABCD:", []int{8, 20, 32, 44, 64}, 0, 0.02, "ABCD:"},
		{"colon a cell away", "ABCD:", []int{8, 20, 32, 44, 68}, 0, 0.02, "ABCD :"},
		{"faint print", "ABCD", []int{8, 20, 32, 60}, 60, 0.02, "ABCD"},
		{"space kept", "AB CD", []int{8, 20, 28, 40, 52}, 0, 0, "AB CD"},
		// Asterisks 12 px apart, two spaces ctc restored between them: no wider gap, no space.
		{"restored space inside a card number", "77** * *66", []int{8, 20, 32, 44, 52, 56, 64, 68, 80, 92}, 0, 0, "77****66"},
		{"restored space before a point", "10 .50", []int{8, 20, 28, 32, 44, 56}, 0, 0, "10.50"},
		{"wide restored space in a card number", "77 **66", []int{8, 20, 32, 60, 72, 84, 96}, 0, 0, "77 **66"},
		{"cjk", "文字AB", []int{8, 20, 32, 60}, 0, 0.02, "文字AB"},
		// After a comma the model keeps next to no space; the gap says it all.
		{"after a comma", "AB,CD", []int{8, 20, 32, 60, 72}, 0, 0, "AB, CD"},
		{"comma set tight", "AB,CD", []int{8, 20, 32, 44, 56}, 0, 0, "AB,CD"},
		// A monospaced face's comma sits in the middle of its cell: gaps as wide on both sides.
		{"comma in its cell", "AB,CD", []int{8, 20, 40, 60, 72}, 0, 0.02, "AB,CD"},
		{"comma in a number", "1,000", []int{8, 20, 48, 60, 72}, 0, 0.02, "1,000"},
		// A date's year, or the next of a list of figures: the comma ends an item.
		{"comma before a year", "6,1983", []int{8, 20, 48, 60, 72, 84}, 0, 0, "6, 1983"},
		{"comma before a figure", "AB,12", []int{8, 20, 32, 60, 72}, 0, 0.02, "AB, 12"},
		// A comma set in the middle of its gap (a typewriter's) with the model's word for a
		// space after it: taken; with a trace of one, the pixels decide, and they do not.
		{"the model's space after a comma", "6,1983", []int{8, 24, 40, 52, 64, 76}, 0, 0.2, "6, 1983"},
		{"a trace of a space after a comma", "6,1983", []int{8, 24, 40, 52, 64, 76}, 0, 0.05, "6,1983"},
		{"the model's space in thousands", "2,000", []int{8, 24, 40, 52, 64}, 0, 0.2, "2,000"},
		// A group of thousands keeps its comma tight, however wide the gap after it.
		{"thousands set wide", "2,000", []int{8, 20, 48, 60, 72}, 0, 0, "2,000"},
		{"thousands of an amount", "3,488.00", []int{8, 20, 48, 60, 72, 84, 96, 108}, 0, 0, "3,488.00"},
		// Two decimals after a comma are an amount's cents, a point misread or a comma written
		// for one: no space, however wide the monospaced comma's gap.
		{"cents after a comma", "583,08", []int{8, 20, 32, 60, 72, 84}, 0, 0, "583,08"},
		// A point between letters: an initial before a name where the gap after it is the
		// wider by far, not a typewriter's point in the middle of its cell, nor one set tight.
		{"initial before a name", "J.BUX", []int{8, 20, 48, 60, 72}, 0, 0, "J. BUX"},
		// 12 px after the point, 0.375 of the ink's height: enough after a point, as after a
		// comma, with no word from the model.
		{"initial, a narrower gap", "J.BUX", []int{8, 20, 40, 52, 64}, 0, 0, "J. BUX"},
		{"a point in the middle of its gap", "ABC.DEF", []int{8, 20, 32, 52, 72, 84, 96}, 0, 0.02, "ABC.DEF"},
		{"points in their cells", "U.S.A", []int{8, 28, 48, 68, 88}, 0, 0.02, "U.S.A"},
		{"points set tight", "U.S.A", []int{8, 20, 32, 44, 56}, 0, 0.02, "U.S.A"},
		{"point after a digit", "4.AB", []int{8, 20, 48, 60}, 0, 0, "4.AB"},
		// An apostrophe in a typewriter's cell of its own stays with its word.
		{"apostrophe in its cell", "AB'CD", []int{8, 20, 40, 60, 72}, 0, 0.02, "AB'CD"},
		{"after an apostrophe", "AB'CD", []int{8, 20, 32, 60, 72}, 0, 0.02, "AB'CD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, r := glyphLine(t, tt.text, tt.x, tt.ink, tt.gapSpace)
			w := img.Rect.Dx()
			steps := (w + 7) / 8
			got := wordGaps(img, w, w, r, steps, steps*8)
			if got.Text != tt.want {
				t.Fatalf("wordGaps(%q) = %q, want %q", tt.text, got.Text, tt.want)
			}
			n := len([]rune(got.Text))
			if len(got.Steps) != n || len(got.Probs) != n || len(got.GapSpace) != n {
				t.Fatalf("%d runes, %d steps, %d probs, %d gaps", n, len(got.Steps), len(got.Probs), len(got.GapSpace))
			}
			for i, c := range []rune(got.Text) {
				if c == ' ' && got.Probs[i] != 0 {
					t.Errorf("restored space %d has probability %v, want 0", i, got.Probs[i])
				}
			}
		})
	}
}

func TestTrimOverlaps(t *testing.T) {
	// "Receipt No. 000777" cut into two boxes that overlap over the first 0 (x 287-302).
	left := func(last string, lastX0, lastX1 float64) Region {
		return Region{Quad: rect(16, 20, 302, 54), Text: "Receipt No. " + last, Words: []Word{
			{Text: "Receipt", Quad: rect(16, 20, 150, 54)},
			{Text: "No.", Quad: rect(160, 20, 230, 54)},
			{Text: last, Quad: rect(lastX0, 20, lastX1, 54)},
		}}
	}
	right := Region{Quad: rect(287, 19, 421, 50), Text: "000777", Words: []Word{{Text: "000777", Quad: rect(287, 19, 421, 50)}}}
	tests := []struct {
		name     string
		a        Region
		b        Region
		rotation int
		want     string
	}{
		{"lone character inside the next box", left("C", 285, 302), right, 0, "Receipt No."},
		{"lone character before the next box", left("C", 240, 280), right, 0, "Receipt No. C"},
		{"a word, not a character", left("CC", 285, 302), right, 0, "Receipt No. CC"},
		{"turned page", left("C", 285, 302), right, 90, "Receipt No. C"},
		{"next line", left("C", 285, 302), Region{Quad: rect(287, 60, 421, 94), Text: "000777",
			Words: []Word{{Text: "000777", Quad: rect(287, 60, 421, 94)}}}, 0, "Receipt No. C"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			regions := []Region{tt.a, tt.b}
			trimOverlaps(regions, tt.rotation)
			if regions[0].Text != tt.want || regions[1].Text != tt.b.Text {
				t.Fatalf("texts %q, %q; want %q, %q", regions[0].Text, regions[1].Text, tt.want, tt.b.Text)
			}
			if len(regions[0].Words) != len(strings.Fields(tt.want)) {
				t.Fatalf("%d words for %q", len(regions[0].Words), tt.want)
			}
		})
	}
	// The right box's first word read from the left box's last glyph.
	regions := []Region{
		{Quad: rect(16, 20, 302, 54), Text: "Receipt No.", Words: []Word{{Text: "Receipt", Quad: rect(16, 20, 150, 54)}, {Text: "No.", Quad: rect(160, 20, 300, 54)}}},
		{Quad: rect(287, 19, 421, 50), Text: "( 000777", Words: []Word{{Text: "(", Quad: rect(287, 19, 295, 50)}, {Text: "000777", Quad: rect(305, 19, 421, 50)}}},
	}
	trimOverlaps(regions, 0)
	if regions[1].Text != "000777" || len(regions[1].Words) != 1 {
		t.Fatalf("right box %q, %d words; want \"000777\", 1", regions[1].Text, len(regions[1].Words))
	}
}

// TestWordGapsUnderRule reads a line's gaps through a rule drawn under or across it: a rule in
// the crop's top or bottom band is no ink between words, a stroke through the middle is.
func TestWordGapsUnderRule(t *testing.T) {
	black := image.NewUniform(color.Black)
	dashed := func(x0, x1, y int) []image.Rectangle {
		var rs []image.Rectangle
		for x := x0; x < x1; x += 12 {
			rs = append(rs, image.Rect(x, y, min(x+10, x1), y+2))
		}
		return rs
	}
	nine := []int{8, 20, 32, 60, 72, 84, 96, 108, 120}
	tests := []struct {
		name  string
		text  string
		x     []int
		rules func(w int) []image.Rectangle
		want  string
	}{
		{"underlined", "ABCD", []int{8, 20, 32, 60}, func(w int) []image.Rectangle { return []image.Rectangle{image.Rect(0, 42, w, 44)} }, "ABC D"},
		{"a rule over it", "ABCD", []int{8, 20, 32, 60}, func(w int) []image.Rectangle { return []image.Rectangle{image.Rect(0, 2, w, 4)} }, "ABC D"},
		// Under part of the line only: a run of ink longer than any letter is wide.
		{"underlined in part", "ABCDEFGHI", nine, func(w int) []image.Rectangle { return []image.Rectangle{image.Rect(4, 42, 80, 44)} }, "ABC DEFGHI"},
		// A broken rule under the whole line: short runs, but a row inked across.
		{"a dashed underline", "ABCD", []int{8, 20, 32, 60}, func(w int) []image.Rectangle { return dashed(0, w, 42) }, "ABC D"},
		// A stroke through the letters' middle is ink in the gap: no space is seen through it.
		{"struck through", "ABCD", []int{8, 20, 32, 60}, func(w int) []image.Rectangle { return []image.Rectangle{image.Rect(0, 23, w, 25)} }, "ABCD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, r := glyphLine(t, tt.text, tt.x, 0, 0.02)
			w := img.Rect.Dx()
			for _, rr := range tt.rules(w) {
				draw.Draw(img, rr, black, image.Point{}, draw.Src)
			}
			steps := (w + 7) / 8
			if got := wordGaps(img, w, w, r, steps, steps*8); got.Text != tt.want {
				t.Fatalf("wordGaps(%q) = %q, want %q", tt.text, got.Text, tt.want)
			}
		})
	}
}

func TestBracketSpaces(t *testing.T) {
	tests := []struct{ in, want string }{
		{"( 42)", "(42)"},
		{"Indiana )", "Indiana)"},
		{"( if approved )", "(if approved)"},
		{"[ 3 ]", "[3]"},
		// An empty pair keeps its space; one outside the brackets is no concern of this.
		{"( )", "( )"},
		{"1) Current (see below) next", "1) Current (see below) next"},
		{"a ( - ) b", "a ( - ) b"},
	}
	for _, tt := range tests {
		r := ctc.Result{Text: tt.in}
		for range []rune(tt.in) {
			r.Steps = append(r.Steps, len(r.Steps))
			r.Probs = append(r.Probs, 0.9)
			r.GapSpace = append(r.GapSpace, 0)
		}
		got := bracketSpaces(r)
		if got.Text != tt.want {
			t.Errorf("bracketSpaces(%q) = %q, want %q", tt.in, got.Text, tt.want)
		}
		if n := len([]rune(got.Text)); len(got.Steps) != n || len(got.Probs) != n || len(got.GapSpace) != n {
			t.Errorf("%q: %d runes, %d steps, %d probs, %d gaps", got.Text, n, len(got.Steps), len(got.Probs), len(got.GapSpace))
		}
	}
}
