package docfile

import (
	"image"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestCheckIsBounded: a hundred thousand page-sized words over a blank drawing (text that shows
// nothing, stacked at one place) are all dropped, reading a bounded number of pixels: checkStep
// grows with the words' area, and a real page's words are read pixel by pixel.
func TestCheckIsBounded(t *testing.T) {
	const w, h = 600, 800
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	page := geom.Quad{{X: 0, Y: 0}, {X: w, Y: 0}, {X: w, Y: h}, {X: 0, Y: h}}
	words := make([]Word, 100_000)
	for i := range words {
		words[i] = Word{Text: "W", Quad: page}
	}
	start := time.Now()
	kept, noMark, _ := dropUnmarked(img, []Line{{Text: strings.Repeat("W ", len(words)), Quad: page, Words: words}}, 1, 1)
	t.Logf("checked in %v", time.Since(start))
	if len(kept) != 0 || noMark != len(words) {
		t.Errorf("%d lines kept, %d characters dropped; want none kept, %d dropped", len(kept), noMark, len(words))
	}
	if s := checkStep(int64(len(words))*w*h, w, h); s < 70 {
		t.Errorf("step %d for 100 000 page-sized words: reads more than %d drawings", s, checkBudget)
	}
	if s := checkStep(w*h/3, w, h); s != 1 {
		t.Errorf("step %d for a page whose words cover a third of it; want every pixel read", s)
	}
}
