package ocr

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"
	"time"

	"github.com/ocrgate/ocrgate/service/dbnet"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
)

// detect finds text boxes in original-image coordinates.
//
// Size policy: a detector sees text best when it is roughly 10–40 px tall in its input. PaddleOCR
// scales every image so its long side is at most 960 px, which suits photos and phone scans but
// shrinks the print of a 600-dpi A4 scan (7016 px tall) to 7–8 px, where DB loses it or merges
// lines. So the first pass runs at that size and measures the text it finds; when the median text
// height is below DetMinTextHeight, a second pass runs on just the area that holds text (receipts
// fill a third of such pages), scaled so text is DetTargetTextHeight px tall, capped at DetMaxPixels.
// Big photos with big text stay at one cheap pass. The first pass over a huge JPEG reads the
// downscaled view the decoder may offer for free (see firstPass).
//
// A page decoded at half size whose print turns out small (HalfMinTextHeight) is decoded again
// whole here, so detect returns the image the boxes refer to and the rest of the run reads.
func (p *Pipeline) detect(ctx context.Context, dec imaging.Decoded, tm *Timings) ([]geom.Quad, imaging.Decoded, error) {
	boxes, scale, err := p.firstPass(ctx, dec, tm)
	if err != nil {
		return nil, imaging.Decoded{}, err
	}
	// The size of the print is judged on the boxes the detector is sure of (sizingBoxScore):
	// a box it is less sure of is kept, but at a small scale it may be several lines of print
	// blurred into one, and would pass for large print.
	sure := sureBoxes(boxes, p.opt.DB.BoxThreshold)
	if f := float64(dec.Factor()); f > 1 && len(sure) > 0 && medianHeight(sure)/scale*f < p.opt.HalfMinTextHeight {
		start := time.Now()
		whole, err := dec.Whole(ctx)
		if err != nil {
			return nil, imaging.Decoded{}, err
		}
		tm.track(StageDecode, start)
		dec = whole
		W, H := float64(dec.Width), float64(dec.Height)
		for i := range boxes {
			boxes[i].quad = boxes[i].quad.Scale(f, f, W, H)
		}
		scale /= f
	}
	region, scale2, ok := p.secondPass(image.Rect(0, 0, dec.Width, dec.Height), scale, sureBoxes(boxes, p.opt.DB.BoxThreshold))
	if !ok {
		return quads(boxes), dec, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, imaging.Decoded{}, err
	}
	first, second := p.opt.DetectionPixels(dec.Width, dec.Height)
	q, err := p.detectStrips(ctx, dec.Image, region, scale2, max(first, second), boxes, tm)
	return q, dec, err
}

// medianHeight is the median of the boxes' heights in detector pixels (boxes must not be empty).
func medianHeight(boxes []detBox) float64 {
	heights := make([]float64, len(boxes))
	for i, b := range boxes {
		heights[i] = b.detHeight
	}
	slices.Sort(heights)
	return heights[len(heights)/2]
}

// previewMinFraction is how large, relative to DetLimitSide, a free downscaled view must be for the
// first pass to use it: upscaling it by up to 1.25 loses less than reading a 35-megapixel page
// costs.
const previewMinFraction = 0.8

// firstPass runs the detector on the whole image, scaled so its long side is at most DetLimitSide.
// A huge image is read through the downscaled view decoding gave for free (a baseline JPEG's,
// see imaging.Decoded.Downscaled) when that is nearly as large as the detector input: reading it
// instead of the whole page takes a scan's detection pre-processing from tens of milliseconds to
// almost nothing. It returns the boxes in image coordinates and the scale (detector pixels per
// image pixel) the detector saw the image at.
func (p *Pipeline) firstPass(ctx context.Context, dec imaging.Decoded, tm *Timings) ([]detBox, float64, error) {
	w, h := dec.Width, dec.Height
	scale := math.Min(1, float64(p.opt.DetLimitSide)/float64(max(w, h)))
	var pv image.Image
	ok := false
	if p.opt.DetPreview && scale < 1 {
		pv, ok = dec.Downscaled(int(math.Ceil(previewMinFraction * float64(p.opt.DetLimitSide))))
	}
	if !ok {
		boxes, err := p.detectRegion(ctx, dec.Image, image.Rect(0, 0, w, h), scale, tm)
		return boxes, scale, err
	}
	pb := pv.Bounds()
	pscale := math.Min(1, float64(p.opt.DetLimitSide)/float64(max(pb.Dx(), pb.Dy())))
	boxes, err := p.detectRegion(ctx, pv, pb, pscale, tm)
	if err != nil {
		return nil, 0, err
	}
	// The view covers the image edge to edge (a 1/8 preview's last row and column are partial
	// blocks), so it scales back by the ratio of the sides.
	fx, fy := float64(w)/float64(pb.Dx()), float64(h)/float64(pb.Dy())
	for i := range boxes {
		boxes[i].quad = boxes[i].quad.Scale(fx, fy, float64(w), float64(h))
	}
	return boxes, pscale / math.Max(fx, fy), nil
}

func (p *Pipeline) detectRegionQuads(ctx context.Context, img image.Image, r image.Rectangle, scale float64, tm *Timings) ([]geom.Quad, error) {
	boxes, err := p.detectRegion(ctx, img, r, scale, tm)
	if err != nil {
		return nil, err
	}
	return quads(boxes), nil
}

// detBox is a detected box in original-image coordinates with its height in detector pixels.
type detBox struct {
	quad      geom.Quad
	detHeight float64
	score     float32 // the mean probability inside (dbnet.Box.Score)
}

// sizingBoxScore is the least score of a box the print's size is judged by (PaddleOCR's box
// threshold), where the box threshold keeping boxes is lower (0.5 by default, for faint words on
// forms). At a small scale several lines of small print blur into one box of 0.5–0.6: taken for
// one line of large print, it kept a 6000 × 8000 page read smaller from its second pass, and the
// page read "PO" for its print.
const sizingBoxScore = 0.6

// sureBoxes are the boxes scoring at least sizingBoxScore (or threshold, where higher).
func sureBoxes(boxes []detBox, threshold float32) []detBox {
	least := max(threshold, sizingBoxScore)
	if threshold >= least {
		return boxes
	}
	out := make([]detBox, 0, len(boxes))
	for _, b := range boxes {
		if b.score >= least {
			out = append(out, b)
		}
	}
	return out
}

func quads(boxes []detBox) []geom.Quad {
	out := make([]geom.Quad, len(boxes))
	for i, b := range boxes {
		out[i] = b.quad
	}
	return out
}

// secondPass decides whether the first pass's text was too small to trust, and if so returns the
// area to look at again and the scale to use there.
//
// Two cases call for it. Small print on a large scan (text under DetMinTextHeight in the
// detector's input) is looked at again at up to the image's own resolution. Small print at the
// image's own resolution (a form scanned at 100 dpi, its labels and footers 7–9 px tall, boxes
// under DetSmallTextHeight image pixels) is looked at again enlarged, up to DetMaxUpscale: at
// its own scale the detector cuts the first letter off labels set beside a ruling line
// (`OURCE` for `SOURCE:`) and misses lines of fine print. Pages whose print is larger in the
// image, receipts among them, never take the enlarged pass.
func (p *Pipeline) secondPass(full image.Rectangle, scale float64, boxes []detBox) (image.Rectangle, float64, bool) {
	limit := 1.0 // the largest scale the pass may use: the image's own resolution
	textH := 0.0
	if len(boxes) > 0 {
		textH = medianHeight(boxes)
		if p.opt.DetMaxUpscale > 1 && len(boxes) >= upscaleMinBoxes && textH/scale < p.opt.DetSmallTextHeight {
			limit = p.opt.DetMaxUpscale
		} else if textH >= p.opt.DetMinTextHeight {
			return image.Rectangle{}, 0, false
		}
	}
	if scale >= limit {
		return image.Rectangle{}, 0, false // already at the largest scale: nothing to gain
	}
	region := full
	if len(boxes) > 0 {
		// The area holding text, with a margin of a few text heights (in original pixels) so
		// boxes the first pass missed near the edge are still inside.
		minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, b := range boxes {
			x0, y0, x1, y1 := b.quad.Bounds()
			minX, minY = math.Min(minX, x0), math.Min(minY, y0)
			maxX, maxY = math.Max(maxX, x1), math.Max(maxY, y1)
		}
		margin := 4 * textH / scale
		region = image.Rect(int(minX-margin), int(minY-margin), int(math.Ceil(maxX+margin)), int(math.Ceil(maxY+margin))).Intersect(full)
	} else if scale > 0.5 {
		// Nothing found on an image that was barely shrunk: there is no small text to rescue.
		return image.Rectangle{}, 0, false
	}
	scale2 := 1.0
	if textH > 0 {
		scale2 = math.Min(limit, scale*p.opt.DetTargetTextHeight/textH)
	}
	area := float64(region.Dx()) * float64(region.Dy())
	if capScale := math.Sqrt(float64(p.opt.DetMaxPixels) / area); capScale < scale2 {
		scale2 = capScale
	}
	if region.Empty() || scale2 < scale*1.2 {
		return image.Rectangle{}, 0, false
	}
	return region, scale2, true
}

// upscaleMinBoxes is how many boxes the first pass must find for the enlarged second pass: a page
// of text, a form. An image of a line or two is left at its own scale: there the median says
// little, and the detector enlarged split capitals off short lines (`T EL: 03-3311`).
const upscaleMinBoxes = 8

// detectRegion runs the detector on rectangle r of img scaled by scale.
func (p *Pipeline) detectRegion(ctx context.Context, img image.Image, r image.Rectangle, scale float64, tm *Timings) ([]detBox, error) {
	start := time.Now()
	sw, sh := scaledSide(r.Dx(), scale), scaledSide(r.Dy(), scale)
	dw, dh := detSize(r.Dx(), scale), detSize(r.Dy(), scale)
	in := Tensor{Shape: []int64{1, 3, int64(dh), int64(dw)}, Data: make([]float32, 3*dw*dh)}
	src := img
	if r != img.Bounds() {
		src = subImage(img, r)
	}
	imaging.ResizeTensor(in.Data, src, sw, sh, p.opt.DetNorm)
	if sw != dw || sh != dh {
		pad(in.Data, sw, sh, dw, dh)
	}
	start = tm.track(StageDetPre, start)

	var prob []float32
	if tiles := tilePlan(dw, dh, p.opt.DetTilePixels, p.opt.DetTileOverlap); len(tiles) > 1 {
		var err error
		if prob, err = p.inferTiled(ctx, in, dw, dh, tiles); err != nil {
			return nil, fmt.Errorf("detection: %w", err)
		}
	} else {
		out, err := p.rt.Infer(ctx, Detector, in)
		if err != nil {
			return nil, fmt.Errorf("detection: %w", err)
		}
		if len(out.Shape) != 4 || out.Shape[0] != 1 || out.Shape[1] != 1 || out.Shape[2] != int64(dh) || out.Shape[3] != int64(dw) || len(out.Data) != dw*dh {
			return nil, fmt.Errorf("detection: output shape %v, want [1 1 %d %d]: %w", out.Shape, dh, dw, ErrRuntimeFailed)
		}
		prob = out.Data
	}
	start = tm.track(StageDetInfer, start)

	found := splitRows(dbnet.Boxes(prob, dw, dh, p.opt.DB), prob, dw, dh, p.opt.DB.Threshold)
	sx, sy := float64(r.Dx())/float64(sw), float64(r.Dy())/float64(sh)
	boxes := make([]detBox, 0, len(found))
	W, H := float64(img.Bounds().Dx()), float64(img.Bounds().Dy())
	for _, b := range found {
		q := b.Quad
		for i := range q {
			q[i] = geom.Point{X: float64(r.Min.X) + q[i].X*sx, Y: float64(r.Min.Y) + q[i].Y*sy}
		}
		q = q.Scale(1, 1, W, H) // clamp into the image
		if q.Width() < 1 || q.Height() < 1 {
			continue
		}
		boxes = append(boxes, detBox{quad: q, detHeight: math.Min(b.Quad.Width(), b.Quad.Height()), score: b.Score})
	}
	tm.track(StageDetPost, start)
	return boxes, nil
}

// detSize is the detector's input side for an image side at scale: a multiple of 32 (the
// detector downsamples 32×). PaddleOCR rounds the scaled side to the nearest multiple and
// stretches the image to it, which is harmless on a long side (960 px change by at most 1.7 %)
// but not on a short one: a 1 017 × 50 px receipt line became 960 × 32, squashed to two thirds
// of its height while its width shrank by 6 %, and the detector found only its two ends. So a
// side is stretched only while that changes it by at most maxDetStretch; otherwise it keeps
// its scale and is padded up to the next multiple (see scaledSide).
func detSize(side int, scale float64) int {
	s := float64(side) * scale
	r := max(32, int(math.Round(s/32))*32)
	if math.Abs(float64(r)-s) <= maxDetStretch*s {
		return r
	}
	return (scaledSide(side, scale) + 31) / 32 * 32
}

// pad spreads the planar sw×sh tensor at the start of t out to the top-left of a dw×dh tensor
// in t, in place, and fills the rest by repeating its last column and row: the page's own
// margin, where a constant would draw an edge the detector could take for something. Every row
// moves to a place at or after its own, so going backwards each is moved before it is written
// over.
func pad(t []float32, sw, sh, dw, dh int) {
	for c := 2; c >= 0; c-- {
		for y := sh - 1; y >= 0; y-- {
			row := t[c*dw*dh+y*dw:][:dw]
			copy(row, t[c*sw*sh+y*sw:][:sw])
			for x := sw; x < dw; x++ {
				row[x] = row[sw-1]
			}
		}
		plane := t[c*dw*dh:][:dw*dh]
		last := plane[(sh-1)*dw:][:dw]
		for y := sh; y < dh; y++ {
			copy(plane[y*dw:][:dw], last)
		}
	}
}

// maxDetStretch is how much rounding may stretch or squash a side of the detector's input.
const maxDetStretch = 0.04

// scaledSide is the side's extent in the detector's input: detSize when that is within
// maxDetStretch of the side at scale, else the side at scale, which the input pads to detSize.
func scaledSide(side int, scale float64) int {
	s := float64(side) * scale
	r := max(32, int(math.Round(s/32))*32)
	if math.Abs(float64(r)-s) <= maxDetStretch*s {
		return r
	}
	return max(1, int(math.Round(s)))
}

// subImage returns the part r of img, without copying when the type allows it.
func subImage(img image.Image, r image.Rectangle) image.Image {
	if s, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok {
		return s.SubImage(r)
	}
	return img
}
