package ocr

import (
	"math"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestDominantAngle: a page's skew is its long lines' angle, even where short regions boxed level
// outnumber them (the cells of a table beside a column of text on a page scanned askew).
func TestDominantAngle(t *testing.T) {
	// at is a region width px long from (x, y), its baseline turned deg degrees clockwise.
	at := func(x, y, width, deg float64) geom.Quad {
		sin, cos := math.Sincos(deg * math.Pi / 180)
		dx, dy := width*cos, width*sin
		return geom.Quad{{X: x, Y: y}, {X: x + dx, Y: y + dy}, {X: x + dx - 30*sin, Y: y + dy + 30*cos}, {X: x - 30*sin, Y: y + 30*cos}}
	}
	tests := []struct {
		name  string
		lines int     // 500 px lines at 0.6°
		cells int     // 60 px cells at 0°
		want  float64 // degrees
	}{
		{"lines alone", 10, 0, 0.6},
		{"cells alone", 0, 10, 0},
		{"more cells than lines", 40, 75, 0.6},
		{"a few lines among many cells", 2, 60, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var regions []Region
			var quads []geom.Quad
			for i := range tt.lines {
				regions = append(regions, Region{Text: "line"})
				quads = append(quads, at(100, float64(100+30*i), 500, 0.6))
			}
			for i := range tt.cells {
				regions = append(regions, Region{Text: "cell"})
				quads = append(quads, at(700, float64(100+40*i), 60, 0))
			}
			if got := dominantAngle(regions, quads); math.Abs(got-tt.want) > 0.01 {
				t.Errorf("dominantAngle = %.2f°, want %.2f°", got, tt.want)
			}
		})
	}
}
