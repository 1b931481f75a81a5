package ocr

import (
	"image"
	"image/color"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestSmooth: a flat crop stays flat, a lone dark pixel spreads over its 3×3 neighbourhood at a
// ninth of its darkness, and alpha is left alone.
func TestSmooth(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 6, 5))
	for i := range img.Pix {
		img.Pix[i] = 0xFF
	}
	img.SetRGBA(2, 2, color.RGBA{A: 0xFF})
	smooth(img)
	for _, tt := range []struct {
		x, y int
		want uint8
	}{{2, 2, 227}, {1, 1, 227}, {3, 3, 227}, {4, 2, 255}, {0, 0, 255}, {5, 4, 255}} {
		if got := img.RGBAAt(tt.x, tt.y); got.R != tt.want || got.G != tt.want || got.B != tt.want || got.A != 0xFF {
			t.Errorf("(%d,%d) = %v, want grey %d", tt.x, tt.y, got, tt.want)
		}
	}
	tiny := image.NewRGBA(image.Rect(0, 0, 1, 4))
	tiny.Pix[0] = 7
	smooth(tiny) // too thin to smooth: left as it is
	if tiny.Pix[0] != 7 {
		t.Errorf("a one-pixel-wide crop was changed")
	}
}

// TestSmoothes: only a language pack's crops are smoothed, only those enlarged packSmoothFrom
// times or more, and never a column.
func TestSmoothes(t *testing.T) {
	box := func(h float64) geom.Quad {
		return geom.Quad{{X: 0, Y: 0}, {X: 200, Y: 0}, {X: 200, Y: h}, {X: 0, Y: h}}
	}
	p := &Pipeline{opt: DefaultOptions(), lang: DefaultLang}
	pack := &Pipeline{opt: DefaultOptions(), lang: "zh-Hant"}
	for _, tt := range []struct {
		p      *Pipeline
		c      crop
		want   bool
		reason string
	}{
		{pack, crop{quad: box(20)}, true, "a pack's crop enlarged 2.4×"},
		{pack, crop{quad: box(32)}, true, "a pack's crop enlarged 1.5×"},
		{pack, crop{quad: box(40)}, false, "a pack's crop enlarged 1.2×"},
		{pack, crop{quad: box(20), column: true}, false, "a column"},
		{p, crop{quad: box(20)}, false, "the default recognizer's crop"},
		{pack, crop{quad: box(0)}, false, "an empty box"},
	} {
		if got := tt.p.smoothes(&tt.c); got != tt.want {
			t.Errorf("%s: smoothes %v, want %v", tt.reason, got, tt.want)
		}
	}
}

// BenchmarkSmooth is the cost of smoothing one crop of the recognizer's height, 320 px wide (a
// line of about ten CJK characters).
func BenchmarkSmooth(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 320, 48))
	for b.Loop() {
		smooth(img)
	}
}
