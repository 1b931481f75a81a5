package ocr

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/layout"
)

// Block is a group of regions read together: a paragraph, a column's run of lines, a table
// (see the layout package).
type Block struct {
	// Quad is the box around the block's regions, in the coordinates of the image as sent,
	// clockwise from the block's top-left corner on the upright page.
	Quad geom.Quad
	// Regions are the indexes of the block's regions in Result.Regions: consecutive, in
	// reading order.
	Regions []int
}

// BlockSeparator separates the blocks' texts in Result.Text: an empty line, as between
// paragraphs.
const BlockSeparator = "\n\n"

// Arrange sorts res.Regions into reading order, sets their Row and Order fields, and sets
// res.Blocks and res.Text: the blocks' texts in order, separated by BlockSeparator, each one
// line per row with the regions of a row separated by a space.
//
// Blocks are found by the layout package in the frame of the upright page (the image turned by
// res.Rotation degrees clockwise) and of its dominant text angle, so that a receipt photographed
// a few degrees askew, or sideways, still reads row by row. A region joins a row when its
// vertical extent overlaps the row's first region by at least overlap × the smaller of the two
// heights.
func Arrange(res *Result, overlap float64) {
	regions := res.Regions
	res.Blocks, res.Text = nil, ""
	if len(regions) == 0 {
		return
	}
	// A page of vertical columns (most of its text in regions read top to bottom) is laid out
	// turned a quarter counterclockwise: its columns, right to left, become rows, top to bottom,
	// each read left to right, which is top to bottom on the page.
	frame := res.Rotation
	if verticalPage(regions) {
		frame = (frame + 270) % 360
	}
	quads := make([]geom.Quad, len(regions))
	for i, r := range regions {
		quads[i] = upright(r.Quad, frame)
	}
	angle := 0.0
	if frame == res.Rotation {
		angle = dominantAngle(regions, quads)
	}
	sin, cos := math.Sincos(-angle * math.Pi / 180)
	boxes := make([]layout.Box, len(regions))
	for i := range regions {
		b := layout.Box{X0: math.Inf(1), Y0: math.Inf(1), X1: math.Inf(-1), Y1: math.Inf(-1)}
		for _, p := range quads[i] {
			x := p.X*cos - p.Y*sin
			y := p.X*sin + p.Y*cos
			b.X0, b.X1 = math.Min(b.X0, x), math.Max(b.X1, x)
			b.Y0, b.Y1 = math.Min(b.Y0, y), math.Max(b.Y1, y)
		}
		boxes[i] = b
	}
	blocks := layout.Arrange(boxes, layout.Options{RowOverlap: overlap})

	ordered := make([]Region, 0, len(regions))
	res.Blocks = make([]Block, len(blocks))
	var sb strings.Builder
	row := 0
	for k, b := range blocks {
		if k > 0 {
			sb.WriteString(BlockSeparator)
		}
		first := len(ordered)
		for r, items := range b.Rows {
			if r > 0 {
				sb.WriteByte('\n')
			}
			for j, i := range items {
				reg := regions[i]
				reg.Row, reg.Order = row, len(ordered)
				ordered = append(ordered, reg)
				if j > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(reg.Text)
			}
			row++
		}
		ids := make([]int, len(ordered)-first)
		for j := range ids {
			ids[j] = first + j
		}
		res.Blocks[k] = Block{Quad: back(b.Box, -angle, frame), Regions: ids}
	}
	copy(regions, ordered)
	res.Text = sb.String()
}

// verticalPage reports whether most of the regions' characters are in columns read top to
// bottom (Region.TopDown).
func verticalPage(regions []Region) bool {
	var down, across int
	for _, r := range regions {
		n := utf8.RuneCountInString(r.Text)
		if r.TopDown {
			down += n
		} else {
			across += n
		}
	}
	return down > across
}

// back maps a box of the reading frame (the upright page turned by angle degrees) to a quad in
// the image's coordinates: the inverse of Arrange's frame. The reading frame is the image's up to
// a shift of the origin, which the turns below undo.
func back(b layout.Box, angle float64, rotation int) geom.Quad {
	sin, cos := math.Sincos(-angle * math.Pi / 180)
	q := geom.Quad{{X: b.X0, Y: b.Y0}, {X: b.X1, Y: b.Y0}, {X: b.X1, Y: b.Y1}, {X: b.X0, Y: b.Y1}}
	for i, p := range q {
		p = geom.Point{X: p.X*cos - p.Y*sin, Y: p.X*sin + p.Y*cos}
		switch rotation { // the inverse of upright
		case 90:
			p = geom.Point{X: p.Y, Y: -p.X}
		case 180:
			p = geom.Point{X: -p.X, Y: -p.Y}
		case 270:
			p = geom.Point{X: -p.Y, Y: p.X}
		}
		q[i] = p
	}
	return q
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
// frame), in degrees, within ±45°, each region weighted by its length. A short region cannot
// resolve a skew of a degree (the detector boxes a table cell of a page scanned 0.6° askew at 0°,
// as the same page's long lines are boxed at 0.6°), and a page's cells may outnumber its lines:
// counted alike, they would lay a skewed page out unturned, and its lines' boxes, taller by the
// skew, would reach into the rows of a table beside them.
func dominantAngle(regions []Region, quads []geom.Quad) float64 {
	type vote struct{ angle, weight float64 }
	var votes []vote
	total := 0.0
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
		if w := quads[i].Width(); math.Abs(a) <= 45 && w > 0 {
			votes = append(votes, vote{a, w})
			total += w
		}
	}
	if len(votes) == 0 {
		return 0
	}
	slices.SortFunc(votes, func(p, q vote) int { return cmp.Compare(p.angle, q.angle) })
	acc := 0.0
	for _, v := range votes {
		if acc += v.weight; acc >= total/2 {
			return v.angle
		}
	}
	return votes[len(votes)-1].angle
}
