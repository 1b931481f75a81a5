package ocr

import "image"

// packSmoothFrom is how much a crop is enlarged to the recognizer's height (RecHeight over the
// box's height) from which a language pack's recognizer reads it smoothed (see smooth).
//
// The packs' PP-OCRv3 recognizers read scan grain as strokes where the default PP-OCRv4 one does
// not: on the rendered lines halved to 150 dpi, with grey noise and JPEG at quality 60 (lang_test.go),
// enlarged about 2.2× to 48 px, the Traditional Chinese pack read 0.804 of the characters; the
// same crops smoothed read 0.93 (docs/languages.md). A crop cut at about its own size (the clean
// renders, 40 px lines) is left sharp: its grain is not enlarged into stroke-sized blobs, and
// smoothing it costs clean lines characters.
const packSmoothFrom = 1.5

// smoothes reports whether p's recognizer reads c smoothed: a language pack's, and c enlarged
// packSmoothFrom times or more. The default recognizer's crops are never smoothed: its figures
// (sroie-dev, the rendered lines) are measured sharp.
func (p *Pipeline) smoothes(c *crop) bool {
	if p.lang == DefaultLang || c.column {
		return false
	}
	h := c.quad.Height()
	return h > 0 && float64(p.opt.RecHeight) >= packSmoothFrom*h
}

// smooth replaces every pixel of img with the mean of its 3×3 neighbourhood (edges repeated),
// in place: a box blur over one pixel either way at the recognizer's height, about the size of the
// enlarged grain of a 150 dpi scan. Two passes (rows, then columns) over one scratch buffer of sums.
func smooth(img *image.RGBA) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w < 2 || h < 2 {
		return
	}
	pix, stride := img.Pix, img.Stride
	rows := make([]uint16, 3*w*h) // each pixel's sum of its row neighbours, per colour
	for y := range h {
		line := pix[y*stride : y*stride+4*w]
		for x := range w {
			l, r := max(x-1, 0), min(x+1, w-1)
			for ch := range 3 {
				rows[3*(y*w+x)+ch] = uint16(line[4*l+ch]) + uint16(line[4*x+ch]) + uint16(line[4*r+ch])
			}
		}
	}
	for y := range h {
		up, down := 3*max(y-1, 0)*w, 3*min(y+1, h-1)*w
		mid := 3 * y * w
		line := pix[y*stride : y*stride+4*w]
		for x := range w {
			for ch := range 3 {
				k := 3*x + ch
				s := uint32(rows[up+k]) + uint32(rows[mid+k]) + uint32(rows[down+k])
				line[4*x+ch] = uint8((s + 4) / 9)
			}
		}
	}
}
