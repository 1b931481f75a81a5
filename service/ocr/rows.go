package ocr

import (
	"math"
	"slices"

	"github.com/ocrgate/ocrgate/service/dbnet"
	"github.com/ocrgate/ocrgate/service/geom"
)

// One box, one row. Where two lines of small print touch (a descender on the next line's
// capitals, a speck between them), DB's region joins them and the box spans both rows: the
// recognizer, reading a crop two rows high squeezed to 48 px, reads garbage of both. The
// probability map still shows the rows: inside the box, the share of each map row's pixels above
// the threshold is high along a line and falls near zero between the two. So a box that runs
// across (at least twice as wide as high, its sides the map's axes) and is at least rowSplitHeight
// times the page's median box height is split at each such valley (a row under rowValley of the
// profile's peak) that has rows at least rowMinPart of the median height on both sides. Each
// part keeps the box's outer edges and runs to the middle of its valley.
const (
	rowSplitHeight = 1.7
	rowValley      = 0.15
	rowMinPart     = 0.5
	// rowMinBoxes: a page needs this many boxes across for its median height to say what a
	// row is.
	rowMinBoxes = 5
)

// splitRows returns boxes (in map coordinates of the w×h map prob) with those that span
// several rows split into one box a row (see above). threshold is DB's bitmap threshold.
func splitRows(boxes []dbnet.Box, prob []float32, w, h int, threshold float32) []dbnet.Box {
	var heights []float64
	for _, b := range boxes {
		if across(b.Quad) {
			heights = append(heights, b.Quad.Height())
		}
	}
	if len(heights) < rowMinBoxes {
		return boxes
	}
	slices.Sort(heights)
	median := heights[len(heights)/2]
	var out []dbnet.Box
	for i, b := range boxes {
		if !across(b.Quad) || b.Quad.Height() < rowSplitHeight*median {
			if out != nil {
				out = append(out, b)
			}
			continue
		}
		parts := rowParts(b.Quad, prob, w, h, threshold, median)
		if len(parts) < 2 {
			if out != nil {
				out = append(out, b)
			}
			continue
		}
		if out == nil {
			out = append(make([]dbnet.Box, 0, len(boxes)+len(parts)), boxes[:i]...)
		}
		for _, q := range parts {
			out = append(out, dbnet.Box{Quad: q, Score: b.Score})
		}
	}
	if out == nil {
		return boxes
	}
	return out
}

// across reports whether q runs across with its sides on the map's axes (within a pixel).
func across(q geom.Quad) bool {
	x0, y0, x1, y1 := q.Bounds()
	return q.Width() >= 2*q.Height() && x1-x0 <= q.Width()+1 && y1-y0 <= q.Height()+1
}

// rowParts splits the axis-aligned box q at the valleys of its row profile (see splitRows) and
// returns the parts, or nil when it holds one row.
func rowParts(q geom.Quad, prob []float32, w, h int, threshold float32, median float64) []geom.Quad {
	fx0, fy0, fx1, fy1 := q.Bounds()
	x0, x1 := max(0, int(math.Floor(fx0))), min(w-1, int(math.Ceil(fx1)))
	y0, y1 := max(0, int(math.Floor(fy0))), min(h-1, int(math.Ceil(fy1)))
	if x1 <= x0 || y1 <= y0 {
		return nil
	}
	profile := make([]float64, y1-y0+1)
	peak := 0.0
	for y := y0; y <= y1; y++ {
		n := 0
		for _, v := range prob[y*w+x0 : y*w+x1+1] {
			if v > threshold {
				n++
			}
		}
		profile[y-y0] = float64(n) / float64(x1-x0+1)
		peak = max(peak, profile[y-y0])
	}
	if peak == 0 {
		return nil
	}
	// Cuts: the middle of each run of valley rows with enough row above and below it.
	minPart := rowMinPart * median
	var cuts []float64
	last := fy0 // where the part being built starts
	for y := 0; y < len(profile); {
		if profile[y] >= rowValley*peak {
			y++
			continue
		}
		e := y
		for e+1 < len(profile) && profile[e+1] < rowValley*peak {
			e++
		}
		mid := float64(y0) + float64(y+e)/2
		inkAbove := y > 0 && slices.Max(profile[:y]) >= rowValley*peak
		inkBelow := e+1 < len(profile) && slices.Max(profile[e+1:]) >= rowValley*peak
		if inkAbove && inkBelow && mid-last >= minPart && fy1-mid >= minPart {
			cuts = append(cuts, mid)
			last = mid
		}
		y = e + 1
	}
	if len(cuts) == 0 {
		return nil
	}
	var parts []geom.Quad
	top := fy0
	for _, c := range append(cuts, fy1) {
		parts = append(parts, geom.Quad{{X: fx0, Y: top}, {X: fx1, Y: top}, {X: fx1, Y: c}, {X: fx0, Y: c}})
		top = c
	}
	return parts
}
