package imaging

import (
	"image"
	"image/color"
	"testing"
)

// TestRotate180 checks that a half turn moves every pixel to the opposite corner, exactly, for the
// image types the pipeline turns: RGBA crops, gray and YCbCr photos, and images off the origin.
func TestRotate180(t *testing.T) {
	rgba := image.NewRGBA(image.Rect(0, 0, 7, 3))
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(i*37 + 1)
	}
	for i := 3; i < len(rgba.Pix); i += 4 {
		rgba.Pix[i] = 0xFF
	}
	gray := image.NewGray(image.Rect(2, 5, 11, 9))
	for i := range gray.Pix {
		gray.Pix[i] = uint8(i * 13)
	}
	ycc := image.NewYCbCr(image.Rect(0, 0, 6, 4), image.YCbCrSubsampleRatio444)
	for i := range ycc.Y {
		ycc.Y[i], ycc.Cb[i], ycc.Cr[i] = uint8(i*9), uint8(100+i), uint8(140-i)
	}
	for _, tt := range []struct {
		name string
		src  image.Image
	}{{"RGBA crop", rgba}, {"gray off the origin", gray}, {"YCbCr", ycc}} {
		src := tt.src
		t.Run(tt.name, func(t *testing.T) {
			got := Rotate180(src)
			b := src.Bounds()
			if got.Bounds().Dx() != b.Dx() || got.Bounds().Dy() != b.Dy() {
				t.Fatalf("bounds %v from %v", got.Bounds(), b)
			}
			g0 := got.Bounds().Min
			for y := range b.Dy() {
				for x := range b.Dx() {
					want := color.RGBAModel.Convert(src.At(b.Min.X+b.Dx()-1-x, b.Min.Y+b.Dy()-1-y))
					if have := got.At(g0.X+x, g0.Y+y); have != want {
						t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, have, want)
					}
				}
			}
		})
	}
}
