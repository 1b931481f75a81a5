package imaging

import (
	"image"
	"image/color"
	"testing"
)

// TestLuma reads the same pixels through each image type's own plane and through At.
func TestLuma(t *testing.T) {
	r := image.Rect(0, 0, 4, 2)
	gray := image.NewGray(r)
	rgba := image.NewRGBA(r)
	nrgba := image.NewNRGBA(r)
	ycc := image.NewYCbCr(r, image.YCbCrSubsampleRatio444)
	g16 := image.NewGray16(r)
	for x := range 4 {
		v := uint8(60 * x)
		for y := range 2 {
			gray.SetGray(x, y, color.Gray{Y: v})
			rgba.Set(x, y, color.RGBA{v, v, v, 255})
			nrgba.Set(x, y, color.NRGBA{v, v, v, 255})
			ycc.Y[ycc.YOffset(x, y)] = v
			g16.SetGray16(x, y, color.Gray16{Y: uint16(v) * 257})
		}
	}
	for _, img := range []image.Image{gray, rgba, nrgba, ycc, g16} {
		for x := range 4 {
			if got, want := Luma(img, x, 1), uint8(60*x); got != want {
				t.Errorf("%T at x %d: %d, want %d", img, x, got, want)
			}
		}
	}
	// Colour weighs as Rec. 601 does: pure green is brighter than pure red, red than blue.
	c := image.NewRGBA(image.Rect(0, 0, 3, 1))
	c.Set(0, 0, color.RGBA{255, 0, 0, 255})
	c.Set(1, 0, color.RGBA{0, 255, 0, 255})
	c.Set(2, 0, color.RGBA{0, 0, 255, 255})
	if red, green, blue := Luma(c, 0, 0), Luma(c, 1, 0), Luma(c, 2, 0); red != 76 || green != 149 || blue != 29 {
		t.Errorf("red %d green %d blue %d, want 76 149 29", red, green, blue)
	}
}
