package imaging

import (
	"image"

	"github.com/anthonynsimon/bild/transform"
)

// Rotate180 turns img upside down: every pixel moves to the opposite corner, none is interpolated.
// It is the one 180° turn of the service (EXIF orientation 3, crops the direction classifier finds
// upside down). bild, the design's image library, does it with two flips, and does it faster than
// a pixel remapping of our own: 99 µs against 227 µs for a 320×48 crop, 49 ms against 79 ms for a
// 3000×2000 photo (BenchmarkRotate, 2-core machine). Quarter turns are a different matter; see
// orient.
func Rotate180(img image.Image) *image.RGBA {
	return transform.FlipV(transform.FlipH(img))
}

// Turn turns img clockwise by degrees (0, 90, 180 or 270; anything else returns img): how a page
// found lying on its side or upside down is set upright before it is read again. A JPEG's YCbCr
// image (4:4:4 or 4:2:0) and a gray image stay what they are, plane by plane, so the turned copy
// takes no more memory than the image; other images become RGBA, as an EXIF orientation does.
func Turn(img image.Image, degrees int) image.Image {
	switch degrees {
	case 90, 180, 270:
	default:
		return img
	}
	b := img.Bounds()
	switch m := img.(type) {
	case *image.Gray:
		w, h := b.Dx(), b.Dy()
		out := image.NewGray(turnedRect(w, h, degrees))
		turnPlane(out.Pix, out.Stride, m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], m.Stride, w, h, degrees)
		return out
	case *image.YCbCr:
		if b.Min.X == 0 && b.Min.Y == 0 && (m.SubsampleRatio == image.YCbCrSubsampleRatio444 || m.SubsampleRatio == image.YCbCrSubsampleRatio420) {
			w, h := b.Dx(), b.Dy()
			out := image.NewYCbCr(turnedRect(w, h, degrees), m.SubsampleRatio)
			turnPlane(out.Y, out.YStride, m.Y, m.YStride, w, h, degrees)
			cw, ch := w, h
			if m.SubsampleRatio == image.YCbCrSubsampleRatio420 {
				cw, ch = (w+1)/2, (h+1)/2
			}
			turnPlane(out.Cb, out.CStride, m.Cb, m.CStride, cw, ch, degrees)
			turnPlane(out.Cr, out.CStride, m.Cr, m.CStride, cw, ch, degrees)
			return out
		}
	}
	// EXIF orientations 6, 3 and 8 are these turns.
	return Orient(img, map[int]int{90: 6, 180: 3, 270: 8}[degrees])
}

func turnedRect(w, h, degrees int) image.Rectangle {
	if degrees == 180 {
		return image.Rect(0, 0, w, h)
	}
	return image.Rect(0, 0, h, w)
}

// turnPlane writes the w×h byte plane src (row stride ss) turned clockwise by degrees into dst
// (row stride ds).
func turnPlane(dst []uint8, ds int, src []uint8, ss, w, h, degrees int) {
	parallelRows(h, 64, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			row := src[y*ss:][:w]
			for x, v := range row {
				switch degrees {
				case 90: // (x, y) → (h-1-y, x)
					dst[x*ds+h-1-y] = v
				case 180:
					dst[(h-1-y)*ds+w-1-x] = v
				case 270: // (x, y) → (y, w-1-x)
					dst[(w-1-x)*ds+y] = v
				}
			}
		}
	})
}
