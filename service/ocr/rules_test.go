package ocr

import (
	"image"
	"image/color"
	"image/draw"
	"testing"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/ctc"
)

func TestRuledUnderscores(t *testing.T) {
	// Each character sits in a cell of 12 px, one recognizer step of 12 px; letters and marks
	// are bars over the middle rows, an underscore is drawn by the case itself.
	const cell = 12
	line := func(text string, ink uint8) (*image.RGBA, ctc.Result) {
		rs := []rune(text)
		w := cell * (len(rs) + 1)
		img := image.NewRGBA(image.Rect(0, 0, w, 48))
		draw.Draw(img, img.Rect, image.NewUniform(color.White), image.Point{}, draw.Src)
		r := ctc.Result{Text: text}
		for i, c := range rs {
			if c != ' ' && c != '_' {
				draw.Draw(img, image.Rect(i*cell+2, 12, i*cell+10, 36), image.NewUniform(color.Gray{Y: ink}), image.Point{}, draw.Src)
			}
			r.Steps = append(r.Steps, i)
			r.Probs = append(r.Probs, 0.9)
			r.GapSpace = append(r.GapSpace, 0)
		}
		return img, r
	}
	rule := func(x0, x1, y int) image.Rectangle { return image.Rect(x0, y, x1, y+3) }
	tests := []struct {
		name  string
		text  string
		ink   uint8
		marks func(w int) []image.Rectangle
		want  string
	}{
		{"a rule under the whole line", "The_ current _ system", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(0, w, 40)} }, "The current system"},
		{"a field's rule before its value", "X _YES", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(2*cell, w, 40)} }, "X YES"},
		{"a blank to fill in", "Name: ________", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(6*cell, w, 40)} }, "Name:"},
		{"between a mark and a word", "lose,_California", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(0, w, 40)} }, "lose, California"},
		// An underlined address keeps the underscores typed inside it.
		{"inside a word", "file_name", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(0, w, 40)} }, "file_name"},
		// A typed underscore alone is no wider than its cell: no rule.
		{"a typed underscore", "_init", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(0, cell, 40)} }, "_init"},
		// A rule over the line is no underscore's.
		{"a rule over the line", "_init", 0, func(w int) []image.Rectangle { return []image.Rectangle{rule(0, cell, 40), rule(0, w, 2)} }, "_init"},
		// Too faint a crop to tell a rule from the paper's grain.
		{"faint", "The_ current", 200, func(w int) []image.Rectangle { return nil }, "The_ current"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, r := line(tt.text, tt.ink)
			w := img.Rect.Dx()
			fill := image.NewUniform(color.Gray{Y: tt.ink})
			for _, m := range tt.marks(w) {
				draw.Draw(img, m, fill, image.Point{}, draw.Src)
			}
			steps := w / cell
			got := ruledUnderscores(img, w, r, steps, steps*cell)
			if got.Text != tt.want {
				t.Fatalf("ruledUnderscores(%q) = %q, want %q", tt.text, got.Text, tt.want)
			}
			n := utf8.RuneCountInString(got.Text)
			if len(got.Steps) != n || len(got.Probs) != n || len(got.GapSpace) != n {
				t.Fatalf("%q: %d steps, %d probabilities, %d gaps for %d runes", got.Text, len(got.Steps), len(got.Probs), len(got.GapSpace), n)
			}
		})
	}
}
