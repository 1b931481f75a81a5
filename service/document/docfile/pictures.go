package docfile

import (
	"image"
	"math"
)

// A page answered from its text layer can also carry pictures of text: a scanned notice pasted
// into a born-digital page, under a heading and a page number that are real text. Its layer then
// holds a few lines where the page shows hundreds of words. Such pictures are found from the
// page's facts and its layer alone, without drawing anything: large images on which the layer
// draws (almost) nothing. A logo is too small to be one, and an image under the page's text (a
// letterhead's background, a form's scanned frame) has the layer's lines over it.
const (
	// minPictureShare: an image smaller than this share of the page (a logo, a signature, a
	// stamp) is not read, whatever it shows.
	minPictureShare = 0.05
	// minPicturesShare: the pictures of a page must together cover this share of it, or none is
	// read: below it, what they could add is a caption's worth, and the page pays a detection for
	// it.
	minPicturesShare = 0.2
	// maxLayerOverPicture: an image on which the layer's lines cover more than this share of its
	// area is under the page's text, not a picture of text of its own.
	maxLayerOverPicture = 0.02
	// maxPictures bounds the pictures a page reads: beyond it, overlapping or touching ones are
	// read as the box around them all.
	maxPictures = 8
	// maxLargeImages bounds the work of merging overlapping images (quadratic in their number).
	maxLargeImages = 64
)

// Pictures returns the boxes, in the w×h pixel space of the page's text layer tl (as asked of
// Document.TextLayer), of the page's images that may be pictures of text its layer lacks: each
// at least minPictureShare of the page, the layer's lines covering at most maxLayerOverPicture of
// it, together at least minPicturesShare of the page. Images that overlap are one box. None on a
// TIFF page (it is OCR'd whole) or when no image qualifies.
//
// What they show is not known here: a photograph qualifies as well as a scanned page. Reading
// one costs OCR of its box alone (a detection over its pixels, the recognizer on what that
// finds), never the page's.
func (p *Page) Pictures(tl *TextLayer, w, h int) []image.Rectangle {
	if p.Raster || len(p.images) == 0 || !(p.Width > 0) || !(p.Height > 0) || w <= 0 || h <= 0 {
		return nil
	}
	sx, sy := float64(w)/p.Width, float64(h)/p.Height
	page := float64(w) * float64(h)
	var boxes []image.Rectangle
	for _, im := range p.images {
		r := image.Rect(int(math.Floor(im.X0*sx)), int(math.Floor(im.Y0*sy)), int(math.Ceil(im.X1*sx)), int(math.Ceil(im.Y1*sy))).
			Intersect(image.Rect(0, 0, w, h))
		if float64(r.Dx())*float64(r.Dy()) < minPictureShare*page {
			continue
		}
		boxes = append(boxes, r)
	}
	if len(boxes) > maxLargeImages {
		// Many large images (tiles of one picture, or a page built to cost): one box around them.
		u := boxes[0]
		for _, r := range boxes[1:] {
			u = u.Union(r)
		}
		boxes = []image.Rectangle{u}
	}
	boxes = mergeOverlapping(boxes)
	var kept []image.Rectangle
	var area float64
	for _, r := range boxes {
		a := float64(r.Dx()) * float64(r.Dy())
		if layerOver(tl, r) > maxLayerOverPicture*a {
			continue
		}
		kept, area = append(kept, r), area+a
	}
	if area < minPicturesShare*page {
		return nil
	}
	if len(kept) > maxPictures {
		u := kept[0]
		for _, r := range kept[1:] {
			u = u.Union(r)
		}
		kept = []image.Rectangle{u}
	}
	return kept
}

// mergeOverlapping replaces boxes that overlap by the box around them, until none does, so that no
// pixel is read twice.
func mergeOverlapping(boxes []image.Rectangle) []image.Rectangle {
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(boxes) && !merged; i++ {
			for j := i + 1; j < len(boxes); j++ {
				if boxes[i].Overlaps(boxes[j]) {
					boxes[i] = boxes[i].Union(boxes[j])
					boxes = append(boxes[:j], boxes[j+1:]...)
					merged = true
					break
				}
			}
		}
	}
	return boxes
}

// layerOver is the area, in pixels, of the layer's line boxes within r.
func layerOver(tl *TextLayer, r image.Rectangle) float64 {
	var a float64
	for _, l := range tl.Lines {
		b := quadBounds(l)
		a += float64(b.Intersect(r).Dx()) * float64(b.Intersect(r).Dy())
	}
	return a
}

// quadBounds is the pixel rectangle around a line's box.
func quadBounds(l Line) image.Rectangle {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, pt := range l.Quad {
		x0, x1 = math.Min(x0, pt.X), math.Max(x1, pt.X)
		y0, y1 = math.Min(y0, pt.Y), math.Max(y1, pt.Y)
	}
	return image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1)))
}
