package document

import (
	"context"
	"image"
	"image/draw"
	"math"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// readPictures OCRs the pictures of page t (see docfile.Page.Pictures) on its render dec, each box
// alone, and answers the page's layer with what they read added beside its lines: each region says
// where it came from (source), and the whole is laid out again in reading order (ocr.Arrange), so
// that a picture's lines take their place among the layer's. A reading that falls on a line of the
// layer is the layer's already and is not added; a picture that reads turned (a table on its side)
// is left out, since its lines would not sit in the page's rows. Each box is a pipeline run of its
// own, charged to the request's CPU budget like any OCR (the page's memory is admitted at its whole
// render, which no box exceeds).
func (r *Reader) readPictures(ctx context.Context, p Pipeline, req Request, t pending, dec imaging.Decoded) (Page, error) {
	pg := *t.layer
	layer := pg.Result
	var added []ocr.Region
	for _, box := range t.pictures {
		box = box.Intersect(image.Rect(0, 0, dec.Width, dec.Height))
		if box.Empty() {
			continue
		}
		img := crop(dec.Image, box)
		if !printLike(img) {
			continue
		}
		res, err := p.RunImage(ctx, imaging.Decoded{Image: img, Format: dec.Format, Width: box.Dx(), Height: box.Dy()})
		if err != nil {
			return Page{}, err
		}
		if res.Rotation != 0 {
			continue
		}
		for _, reg := range res.Regions {
			reg.Quad = shift(reg.Quad, box.Min)
			for k := range reg.Words {
				reg.Words[k].Quad = shift(reg.Words[k].Quad, box.Min)
			}
			if onLayer(reg.Quad, layer.Regions) {
				continue
			}
			reg.Source = string(OCR)
			added = append(added, reg)
		}
	}
	if len(added) == 0 {
		return pg, nil
	}
	res := *layer
	res.Regions = make([]ocr.Region, 0, len(layer.Regions)+len(added))
	for _, reg := range layer.Regions {
		if reg.Source == "" {
			reg.Source = string(TextLayer)
		}
		res.Regions = append(res.Regions, reg)
	}
	res.Regions = append(res.Regions, added...)
	ocr.Arrange(&res, p.Options().RowOverlap)
	if err := req.Budget.addAnswer(answerBytes(&res, req.Words) - answerBytes(layer, req.Words)); err != nil {
		return Page{}, err
	}
	pg.Result = &res
	pg.Confidence = confidence(&res)
	return pg, nil
}

// layerAlone answers a page whose pictures could not be read (the page's own failure: too large,
// too complex to draw) from its layer alone, as it was answered before its pictures were looked
// at; any other error, and any error of a page without a layer, is returned as it is.
func (r *Reader) layerAlone(t pending, err error) (Page, error) {
	if t.layer != nil && pageFailure(t.number, err) != nil {
		return *t.layer, nil
	}
	return Page{}, err
}

// crop is the part box of img as an image whose bounds start at (0, 0), as the pipeline takes
// images: the render's own pixels where its type allows (no copy), a copy otherwise.
func crop(img image.Image, box image.Rectangle) image.Image {
	at := func(stride, bpp int) int {
		return (box.Min.Y-img.Bounds().Min.Y)*stride + (box.Min.X-img.Bounds().Min.X)*bpp
	}
	size := image.Rect(0, 0, box.Dx(), box.Dy())
	switch m := img.(type) {
	case *image.RGBA:
		return &image.RGBA{Pix: m.Pix[at(m.Stride, 4):], Stride: m.Stride, Rect: size}
	case *image.NRGBA:
		return &image.NRGBA{Pix: m.Pix[at(m.Stride, 4):], Stride: m.Stride, Rect: size}
	case *image.Gray:
		return &image.Gray{Pix: m.Pix[at(m.Stride, 1):], Stride: m.Stride, Rect: size}
	}
	out := image.NewRGBA(size)
	draw.Draw(out, size, img, box.Min, draw.Src)
	return out
}

// shift moves q by d.
func shift(q geom.Quad, d image.Point) geom.Quad {
	for i := range q {
		q[i].X += float64(d.X)
		q[i].Y += float64(d.Y)
	}
	return q
}

// onLayer reports whether the middle of q lies within one of the layer's regions.
func onLayer(q geom.Quad, regions []ocr.Region) bool {
	cx, cy := (q[0].X+q[2].X)/2, (q[0].Y+q[2].Y)/2
	for _, r := range regions {
		x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, pt := range r.Quad {
			x0, x1 = math.Min(x0, pt.X), math.Max(x1, pt.X)
			y0, y1 = math.Min(y0, pt.Y), math.Max(y1, pt.Y)
		}
		if cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 {
			return true
		}
	}
	return false
}

// A picture of text is print on paper: most of it is one light background level, and the rest is
// ink well darker than it, covering a small share. A photograph, a map in colour or a painted
// cover spreads over many levels and is not read: looking costs a pass over a sample of its
// pixels, where OCR would cost a detection over all of them and find little.
const (
	// printSample: one pixel in printSample along each side is looked at.
	printSample = 3
	// paperLevels: a pixel within this many gray levels of the most common level is paper.
	paperLevels = 40
	// inkLevels: a pixel this many gray levels darker than the paper is ink.
	inkLevels = 96
	// minPaper is the least share of paper, and minInk, maxInk the share of ink, of print.
	minPaper, minInk, maxInk = 0.6, 0.003, 0.35
)

// printLike reports whether img looks like print on paper (see minPaper).
func printLike(img image.Image) bool {
	b := img.Bounds()
	var hist [256]int
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y += printSample {
		for x := b.Min.X; x < b.Max.X; x += printSample {
			hist[imaging.Luma(img, x, y)]++
			n++
		}
	}
	if n == 0 {
		return false
	}
	paper := 0
	for v := range hist {
		if hist[v] > hist[paper] {
			paper = v
		}
	}
	var onPaper, ink int
	for v, k := range hist {
		switch {
		case v >= paper-paperLevels && v <= paper+paperLevels:
			onPaper += k
		case v <= paper-inkLevels:
			ink += k
		}
	}
	return float64(onPaper) >= minPaper*float64(n) && float64(ink) >= minInk*float64(n) && float64(ink) <= maxInk*float64(n)
}
