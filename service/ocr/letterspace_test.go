package ocr

import (
	"image"
	"image/color"
	"testing"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// TestLetterSpacing checks which spaces of a reading the gaps of its crop keep: letters set
// apart by their tracking are one word, a gap of a tracking and a space more splits words, a
// point read from the white goes, and lines set close or spaces between digits stay as read.
func TestLetterSpacing(t *testing.T) {
	// spaced draws one 4-px-wide glyph per rune of ink at the given gaps (gaps[i] before rune
	// i+1 of ink), 20 px tall in a 48-px crop, and the reading text with its runes' steps (one
	// step a column) at their glyphs' left edges; a space or a point of text sits in the gap
	// before the next glyph.
	spaced := func(ink string, gaps []int, text string) (*image.RGBA, ctc.Result, int) {
		x := 4
		var lefts []int
		for i := range []rune(ink) {
			lefts = append(lefts, x)
			x += 4
			if i < len(gaps) {
				x += gaps[i]
			}
		}
		width := x + 4
		img := image.NewRGBA(image.Rect(0, 0, width, 48))
		for i := range img.Pix {
			img.Pix[i] = 255
		}
		for _, l := range lefts {
			for y := 14; y < 34; y++ {
				for dx := range 4 {
					img.SetRGBA(l+dx, y, color.RGBA{0, 0, 0, 255})
				}
			}
		}
		var r ctc.Result
		r.Text = text
		k := 0
		for _, c := range text {
			step := lefts[min(k, len(lefts)-1)]
			if c == ' ' || c == '.' {
				step = max(0, step-2) // in the gap before the next glyph
			} else {
				k++
			}
			r.Steps = append(r.Steps, step)
			r.Probs = append(r.Probs, 0.9)
			r.GapSpace = append(r.GapSpace, 0)
		}
		return img, r, width
	}
	for _, tt := range []struct {
		name, ink string
		gaps      []int
		text      string
		want      string
	}{
		{"a letter-spaced heading", "DAVISPOLK", []int{6, 6, 6, 6, 18, 6, 6, 6}, "D A V I S P O L K", "DAVIS POLK"},
		{"broken at random", "DAVISPOLK", []int{6, 6, 6, 6, 18, 6, 6, 6}, "DAVI S P O LK", "DAVIS POLK"},
		{"a point from the white", "WARDWELL", []int{7, 7, 7, 7, 7, 7, 7}, "W A R.D W E L L", "WARDWELL"},
		{"set close", "THEBOOK", []int{1, 1, 8, 1, 1, 1}, "THE BOOK", "THE BOOK"},
		{"figures apart", "81", []int{12}, "8 1", "8 1"},
		{"letter-spaced with figures", "FORM1187", []int{8, 8, 8, 20, 8, 8, 8}, "F O R M 1 1 8 7", "FORM 1 1 8 7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img, r, width := spaced(tt.ink, tt.gaps, tt.text)
			got := letterSpacing(img, width, width, r, width, width)
			if got.Text != tt.want {
				t.Fatalf("%q: %q, want %q", tt.text, got.Text, tt.want)
			}
			if n := len([]rune(got.Text)); len(got.Steps) != n || len(got.Probs) != n || len(got.GapSpace) != n {
				t.Fatalf("%d runes, %d steps, %d probs, %d gap spaces", n, len(got.Steps), len(got.Probs), len(got.GapSpace))
			}
		})
	}
}
