package ocr

import (
	"context"
	"image"
	"math"

	"github.com/ocrgate/ocrgate/service/geom"
)

// An enlarged second pass in strips. The memory plan charges a request, before it starts, for
// the detection passes its image can take: a first pass of at most DetLimitSide, and a second
// of the part holding text at up to the image's own resolution (see DetectionPixels). The
// enlarged pass over small print at a low resolution (DetMaxUpscale) would be up to four times
// that, and charging every image for it priced a rendered PDF page over one request's share
// (413) for a pass most images never take. So a second pass larger than what is charged runs
// as full-width strips of the region, each at most the charged size: its input, map and DB
// post-processing are those of one strip at a time, and the request's cost is the one it had
// without the enlarged pass. Each strip reads DetTileOverlap detector pixels past its core
// above and below, keeps the boxes whose centre lies in its core, and drops a box cut by its
// edge; where it dropped one, the first pass's boxes there stand instead. A strip's boxes
// therefore never count twice, and a line is found whole whenever it is at most twice the
// overlap tall at the enlarged scale (small print is about a quarter of that).

// strip is one detector run of a strip pass: in is the image area it reads, core the rows
// whose boxes it keeps (core ⊆ in), both in image pixels.
type strip struct {
	in, core image.Rectangle
}

// minStripCore is the fewest detector rows a strip's core may have: below it the overlaps cost
// more than the strip reads. A region too wide for that within the budget is read at a smaller
// scale.
const minStripCore = 128

// stripPlan splits region, to be read at scale, into full-width strips each of whose detector
// input holds at most budget pixels, their cores partitioning the region, each reading overlap
// detector pixels past its core. It returns the scale the strips are read at (lower than asked
// when the region is too wide for strips of minStripCore rows) and false when no strip fits.
func stripPlan(region image.Rectangle, scale float64, budget int64, overlap int) ([]strip, float64, bool) {
	if region.Empty() || scale <= 0 || budget <= 0 {
		return nil, 0, false
	}
	minRows := int64(minStripCore + 2*overlap)
	if dw := int64(detSize(region.Dx(), scale)); dw*minRows > budget {
		// Read narrower: a width of budget/minRows detector pixels, less the stretch detSize
		// may add.
		scale = float64(budget/minRows) / float64(region.Dx()) * (1 - maxDetStretch) * 31 / 32
		if int64(detSize(region.Dx(), scale))*minRows > budget {
			return nil, 0, false
		}
	}
	dw := int64(detSize(region.Dx(), scale))
	rows := int(budget/dw) / 32 * 32 // detector rows a strip may read
	whole := detSize(region.Dy(), scale)
	if int64(whole)*dw <= budget {
		return []strip{{in: region, core: region}}, scale, true
	}
	// In image rows: a strip reads at most rows/scale of them (detSize never rounds a strip up
	// past a multiple of 32 its rows fit in), its core that less both overlaps.
	ov := int(math.Ceil(float64(overlap) / scale))
	maxIn := int(float64(rows) / scale)
	core := maxIn - 2*ov
	if core < 1 {
		return nil, 0, false
	}
	n := ceilDiv(region.Dy(), core)
	bounds := split(region.Dy(), n)
	strips := make([]strip, n)
	for i := range n {
		c := image.Rect(region.Min.X, region.Min.Y+bounds[i], region.Max.X, region.Min.Y+bounds[i+1])
		in := image.Rect(c.Min.X, c.Min.Y-ov, c.Max.X, c.Max.Y+ov).Intersect(region)
		strips[i] = strip{in: in, core: c}
	}
	return strips, scale, true
}

// detectStrips runs the second pass over region at scale, whole when its input is at most
// budget pixels (the detection memory the request was charged for), else in strips (see
// stripPlan); first are the first pass's boxes, which stand where a strip cut a box. When no
// strip fits, the first pass's boxes are the answer.
func (p *Pipeline) detectStrips(ctx context.Context, img image.Image, region image.Rectangle, scale float64, budget int64, first []detBox, tm *Timings) ([]geom.Quad, error) {
	strips, scale, ok := stripPlan(region, scale, budget, p.opt.DetTileOverlap)
	if !ok {
		return quads(first), nil
	}
	if len(strips) == 1 {
		return p.detectRegionQuads(ctx, img, strips[0].in, scale, tm)
	}
	var out []geom.Quad
	var cut []image.Rectangle // the areas of boxes a strip's edge cut
	edge := 1.5 / scale       // a box this close to a strip's inner edge reaches it
	for _, s := range strips {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		boxes, err := p.detectRegion(ctx, img, s.in, scale, tm)
		if err != nil {
			return nil, err
		}
		for _, b := range boxes {
			_, y0, _, y1 := b.quad.Bounds()
			if cy := (y0 + y1) / 2; cy < float64(s.core.Min.Y) || cy >= float64(s.core.Max.Y) {
				continue // another strip's
			}
			top := s.in.Min.Y > region.Min.Y && y0 <= float64(s.in.Min.Y)+edge
			bottom := s.in.Max.Y < region.Max.Y && y1 >= float64(s.in.Max.Y)-edge
			if top || bottom {
				cut = append(cut, rectOf(b.quad))
				continue
			}
			out = append(out, b.quad)
		}
	}
	return mendCuts(out, cut, first), nil
}

// mendCuts adds to boxes the first pass's boxes that overlap an area where a strip cut a box
// and that the strips' boxes cover less than half of.
func mendCuts(boxes []geom.Quad, cut []image.Rectangle, first []detBox) []geom.Quad {
	if len(cut) == 0 {
		return boxes
	}
	kept := make([]image.Rectangle, len(boxes))
	for i, q := range boxes {
		kept[i] = rectOf(q)
	}
	for _, f := range first {
		r := rectOf(f.quad)
		hit := false
		for _, c := range cut {
			if r.Overlaps(c) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		covered := 0
		for _, k := range kept {
			covered += area(r.Intersect(k))
		}
		if 2*covered < area(r) {
			boxes = append(boxes, f.quad)
		}
	}
	return boxes
}

// rectOf is the pixel rectangle around q.
func rectOf(q geom.Quad) image.Rectangle {
	x0, y0, x1, y1 := q.Bounds()
	return image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1)))
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }
