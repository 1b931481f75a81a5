package ocr

import (
	"math"
	"slices"
	"strings"

	"github.com/ocrgate/ocrgate/service/geom"
)

// order sorts regions into reading order — rows top to bottom, left to right within a row — sets
// their Row and Order fields and returns the text, one line per row.
//
// Rows are found in the frame of the upright page (the image turned by rotation degrees
// clockwise) and of its dominant text angle, so a receipt photographed a few degrees askew, or
// sideways, still reads row by row. A region joins a row when its vertical extent overlaps the
// row's first region by at least overlap × the smaller of the two heights.
func order(regions []Region, overlap float64, rotation int) string {
	if len(regions) == 0 {
		return ""
	}
	quads := make([]geom.Quad, len(regions))
	for i, r := range regions {
		quads[i] = upright(r.Quad, rotation)
	}
	angle := dominantAngle(regions, quads)
	sin, cos := math.Sincos(-angle * math.Pi / 180)
	type span struct{ x, top, bottom, mid float64 }
	spans := make([]span, len(regions))
	for i := range regions {
		minY, maxY, sumX := math.Inf(1), math.Inf(-1), 0.0
		for _, p := range quads[i] {
			x := p.X*cos - p.Y*sin
			y := p.X*sin + p.Y*cos
			minY, maxY = math.Min(minY, y), math.Max(maxY, y)
			sumX += x
		}
		spans[i] = span{x: sumX / 4, top: minY, bottom: maxY, mid: (minY + maxY) / 2}
	}
	idx := make([]int, len(regions))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(spans[a].mid, spans[b].mid) })

	var rows [][]int
	for _, i := range idx {
		s := spans[i]
		joined := false
		// Look back over the last few rows: a short region can sort between two members of a row.
		for r := len(rows) - 1; r >= 0 && r >= len(rows)-3; r-- {
			a := spans[rows[r][0]]
			ov := math.Min(s.bottom, a.bottom) - math.Max(s.top, a.top)
			if ov >= overlap*math.Min(s.bottom-s.top, a.bottom-a.top) {
				rows[r] = append(rows[r], i)
				joined = true
				break
			}
		}
		if !joined {
			rows = append(rows, []int{i})
		}
	}

	ordered := make([]Region, 0, len(regions))
	var sb strings.Builder
	for r, row := range rows {
		slices.SortStableFunc(row, func(a, b int) int { return cmpFloat(spans[a].x, spans[b].x) })
		if r > 0 {
			sb.WriteByte('\n')
		}
		for k, i := range row {
			reg := regions[i]
			reg.Row, reg.Order = r, len(ordered)
			ordered = append(ordered, reg)
			if k > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(reg.Text)
		}
	}
	copy(regions, ordered)
	return sb.String()
}

// upright is q in the frame of the image turned rotation degrees clockwise (a multiple of 90),
// up to a shift of the origin, which ordering does not see.
func upright(q geom.Quad, rotation int) geom.Quad {
	for i, p := range q {
		switch rotation {
		case 90:
			q[i] = geom.Point{X: -p.Y, Y: p.X}
		case 180:
			q[i] = geom.Point{X: -p.X, Y: -p.Y}
		case 270:
			q[i] = geom.Point{X: p.Y, Y: -p.X}
		}
	}
	return q
}

// dominantAngle is the median angle of the horizontal regions' baselines (quads, in the upright
// frame), in degrees, within ±45°.
func dominantAngle(regions []Region, quads []geom.Quad) float64 {
	var angles []float64
	for i, r := range regions {
		if r.Vertical {
			continue
		}
		a := quads[i].Angle()
		for a > 90 {
			a -= 180
		}
		for a <= -90 {
			a += 180
		}
		if math.Abs(a) <= 45 {
			angles = append(angles, a)
		}
	}
	if len(angles) == 0 {
		return 0
	}
	slices.Sort(angles)
	return angles[len(angles)/2]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
