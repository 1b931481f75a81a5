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

// TestTurn: every pixel of a gray, a YCbCr 4:2:0 and an RGBA image lands where a clockwise
// quarter, half or three-quarter turn puts it, and the first two keep their type.
func TestTurn(t *testing.T) {
	const w, h = 6, 4
	gray := image.NewGray(image.Rect(0, 0, w, h))
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := uint8(10*y + x)
			gray.SetGray(x, y, color.Gray{Y: v})
			ycc.Y[ycc.YOffset(x, y)] = v
			rgba.Set(x, y, color.RGBA{R: v, G: v, B: v, A: 255})
		}
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = 128, 128
	}
	for _, deg := range []int{90, 180, 270} {
		for _, img := range []image.Image{gray, ycc, rgba} {
			out := Turn(img, deg)
			if _, same := out.(*image.YCbCr); same != (img == ycc) {
				t.Errorf("%d° of %T gave %T", deg, img, out)
			}
			for y := range h {
				for x := range w {
					tx, ty := x, y
					switch deg {
					case 90:
						tx, ty = h-1-y, x
					case 180:
						tx, ty = w-1-x, h-1-y
					case 270:
						tx, ty = y, w-1-x
					}
					want := uint8(10*y + x)
					if got := color.GrayModel.Convert(out.At(tx, ty)).(color.Gray).Y; got != want {
						t.Fatalf("%d° of %T: (%d,%d) → (%d,%d) holds %d, want %d", deg, img, x, y, tx, ty, got, want)
					}
				}
			}
		}
	}
}
