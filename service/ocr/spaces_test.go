package ocr

import (
	"image"
	"image/color"
	"image/draw"
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
		{"even gaps", "ABCD", []int{8, 28, 48, 68}, 0, 0.02, "ABCD"},
		{"digits", "1234", []int{8, 20, 32, 60}, 0, 0.02, "1234"},
		{"point", "12.50", []int{8, 20, 48, 60, 72}, 0, 0.02, "12.50"},
		{"colon evenly set", "TEL:07", []int{8, 20, 32, 60, 88, 100}, 0, 0.02, "TEL:07"},
		{"faint print", "ABCD", []int{8, 20, 32, 60}, 60, 0.02, "ABCD"},
		{"space kept", "AB CD", []int{8, 20, 28, 40, 52}, 0, 0, "AB CD"},
		// Asterisks 12 px apart, two spaces ctc restored between them: no wider gap, no space.
		{"restored space inside a card number", "77** * *66", []int{8, 20, 32, 44, 52, 56, 64, 68, 80, 92}, 0, 0, "77****66"},
		{"restored space before a point", "10 .50", []int{8, 20, 28, 32, 44, 56}, 0, 0, "10.50"},
		{"wide restored space in a card number", "77 **66", []int{8, 20, 32, 60, 72, 84, 96}, 0, 0, "77 **66"},
		{"cjk", "文字AB", []int{8, 20, 32, 60}, 0, 0.02, "文字AB"},
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
