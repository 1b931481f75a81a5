package document

import (
	"image"
	"image/color"
	"math/rand"
	"testing"
)

// TestPrintLike: print on paper (dark strokes over a light background, in gray or in colour) is
// read; a photograph's spread of levels, a blank sheet and a dark picture are not.
func TestPrintLike(t *testing.T) {
	const w, h = 400, 300
	fill := func(at func(x, y int) color.Color) image.Image {
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				m.Set(x, y, at(x, y))
			}
		}
		return m
	}
	rng := rand.New(rand.NewSource(1))
	cream := color.RGBA{245, 240, 225, 255}
	lines := func(x, y int) color.Color { // lines of text: strokes 2 px wide, rows 8 px tall every 20 px
		if y%20 >= 6 && y%20 < 14 && x%6 < 2 && x > 20 && x < 380 {
			return color.Black
		}
		return cream
	}
	for _, tt := range []struct {
		name string
		img  image.Image
		want bool
	}{
		{"lines of print", fill(lines), true},
		{"print in gray", func() image.Image {
			g := image.NewGray(image.Rect(0, 0, w, h))
			for y := range h {
				for x := range w {
					g.SetGray(x, y, color.GrayModel.Convert(lines(x, y)).(color.Gray))
				}
			}
			return g
		}(), true},
		{"a photograph", fill(func(x, y int) color.Color {
			return color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8(rng.Intn(256)), 255}
		}), false},
		{"a blank sheet", fill(func(int, int) color.Color { return cream }), false},
		{"a dark picture", fill(func(x, y int) color.Color { return color.RGBA{20, 20, uint8(40 + x%30), 255} }), false},
	} {
		if got := printLike(tt.img); got != tt.want {
			t.Errorf("%s: printLike %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCropSharesPixels: a crop of a render starts at (0, 0) and shows the render's pixels.
func TestCropSharesPixels(t *testing.T) {
	m := image.NewRGBA(image.Rect(0, 0, 50, 40))
	m.Set(30, 25, color.RGBA{1, 2, 3, 255})
	c := crop(m, image.Rect(20, 15, 45, 35))
	if c.Bounds() != image.Rect(0, 0, 25, 20) {
		t.Fatalf("bounds %v", c.Bounds())
	}
	if got := c.At(10, 10); got != (color.RGBA{1, 2, 3, 255}) {
		t.Errorf("pixel %v", got)
	}
}
