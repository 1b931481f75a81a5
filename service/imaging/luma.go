package imaging

import "image"

// Luma is the luma of img's pixel (x, y), 0–255 (Rec. 601 weights), read straight from the
// planes of the types decoding and rendering give (a JPEG's Y plane as it is) and through At for
// any other. (x, y) must lie in img.
func Luma(img image.Image, x, y int) uint8 {
	switch m := img.(type) {
	case *image.Gray:
		return m.Pix[m.PixOffset(x, y)]
	case *image.YCbCr:
		return m.Y[m.YOffset(x, y)]
	case *image.RGBA:
		i := m.PixOffset(x, y)
		return luma601(m.Pix[i], m.Pix[i+1], m.Pix[i+2])
	case *image.NRGBA:
		i := m.PixOffset(x, y)
		return luma601(m.Pix[i], m.Pix[i+1], m.Pix[i+2])
	}
	r, g, b, _ := img.At(x, y).RGBA()
	return luma601(uint8(r>>8), uint8(g>>8), uint8(b>>8))
}

func luma601(r, g, b uint8) uint8 {
	return uint8((299*int(r) + 587*int(g) + 114*int(b)) / 1000)
}
