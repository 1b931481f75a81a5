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

// Stretch returns img resampled to w × h by nearest neighbour: each output pixel is the source
// pixel under its centre. It makes a page's pixels square (a standard-resolution fax, 204 × 98
// dpi, is stored half as tall as it is shown). Nearest neighbour keeps a bilevel page's strokes
// sharp: on public pages made standard-resolution faxes it read more words than linear
// interpolation did (word F1 against the page's own OCR, see docs/documents.md). Gray stays gray;
// everything else becomes RGBA.
func Stretch(img image.Image, w, h int) image.Image {
	b := img.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return img
	}
	xs, ys := make([]int, w), make([]int, h)
	for x := range xs {
		xs[x] = min(b.Min.X+(2*x+1)*b.Dx()/(2*w), b.Max.X-1)
	}
	for y := range ys {
		ys[y] = min(b.Min.Y+(2*y+1)*b.Dy()/(2*h), b.Max.Y-1)
	}
	if g, ok := img.(*image.Gray); ok {
		out := image.NewGray(image.Rect(0, 0, w, h))
		for y, sy := range ys {
			off := g.PixOffset(0, sy) // + sx is pixel (sx, sy)
			row := out.Pix[y*out.Stride : y*out.Stride+w]
			for x, sx := range xs {
				row[x] = g.Pix[off+sx]
			}
		}
		return out
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y, sy := range ys {
		for x, sx := range xs {
			out.Set(x, y, img.At(sx, sy))
		}
	}
	return out
}
