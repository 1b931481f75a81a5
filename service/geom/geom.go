// Package geom holds the small geometric vocabulary shared by the OCR stages: points and the
// four-cornered text boxes that detection produces, cropping consumes and the API reports.
package geom

import "math"

// Point is a position in pixel coordinates (x to the right, y down). Coordinates are float64 because
// boxes are computed on a resized probability map and scaled back to the original image.
type Point struct {
	X, Y float64
}

// Quad is a text box as four corners, clockwise from the top-left corner of the text:
// top-left, top-right, bottom-right, bottom-left. The box may be rotated.
type Quad [4]Point

// Width is the mean length of the top and bottom edges: the extent of the text along its baseline.
func (q Quad) Width() float64 {
	return (dist(q[0], q[1]) + dist(q[3], q[2])) / 2
}

// Height is the mean length of the left and right edges.
func (q Quad) Height() float64 {
	return (dist(q[0], q[3]) + dist(q[1], q[2])) / 2
}

// Angle is the direction of the top edge in degrees, in (-180, 180]; 0 for level text.
func (q Quad) Angle() float64 {
	return math.Atan2(q[1].Y-q[0].Y, q[1].X-q[0].X) * 180 / math.Pi
}

// Bounds returns the axis-aligned bounding rectangle of the corners.
func (q Quad) Bounds() (minX, minY, maxX, maxY float64) {
	minX, minY = q[0].X, q[0].Y
	maxX, maxY = minX, minY
	for _, p := range q[1:] {
		minX, maxX = math.Min(minX, p.X), math.Max(maxX, p.X)
		minY, maxY = math.Min(minY, p.Y), math.Max(maxY, p.Y)
	}
	return minX, minY, maxX, maxY
}

// Scale multiplies every corner by (sx, sy) and clamps it into [0, w]×[0, h].
func (q Quad) Scale(sx, sy, w, h float64) Quad {
	var out Quad
	for i, p := range q {
		out[i] = Point{X: clamp(p.X*sx, 0, w), Y: clamp(p.Y*sy, 0, h)}
	}
	return out
}

func dist(a, b Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
