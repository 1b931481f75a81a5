package ocr

import (
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

func rect(x0, y0, x1, y1 float64) geom.Quad {
	return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// TestStackColumns: single CJK characters (and pieces of columns) stacked one under the other
// become one column read top to bottom; digits stacked (a receipt's quantities), characters side
// by side, and characters far apart stay as they are.
func TestStackColumns(t *testing.T) {
	tests := []struct {
		name    string
		regions []Region
		want    []string
	}{
		{"a loose label", []Region{
			{Quad: rect(10, 50, 40, 80), Text: "业", Score: 1},
			{Quad: rect(10, 10, 40, 40), Text: "营", Score: 1},
			{Quad: rect(11, 90, 41, 120), Text: "执", Score: 1},
		}, []string{"营业执"}},
		{"a column in pieces", []Region{
			{Quad: rect(10, 10, 40, 120), Text: "营业执", Score: 1, TopDown: true},
			{Quad: rect(10, 160, 40, 300), Text: "注册号码", Score: 1, TopDown: true},
		}, []string{"营业执注册号码"}},
		{"digits stay rows", []Region{
			{Quad: rect(10, 10, 25, 40), Text: "1", Score: 1},
			{Quad: rect(10, 50, 25, 80), Text: "2", Score: 1},
		}, []string{"1", "2"}},
		{"a table's units stay rows", []Region{
			{Quad: rect(10, 10, 30, 40), Text: "2", Score: 1},
			{Quad: rect(50, 10, 80, 40), Text: "个", Score: 1},
			{Quad: rect(10, 50, 30, 80), Text: "3", Score: 1},
			{Quad: rect(50, 50, 80, 80), Text: "个", Score: 1},
		}, []string{"2", "个", "3", "个"}},
		{"side by side", []Region{
			{Quad: rect(10, 10, 40, 40), Text: "营", Score: 1},
			{Quad: rect(50, 10, 80, 40), Text: "业", Score: 1},
		}, []string{"营", "业"}},
		{"far apart", []Region{
			{Quad: rect(10, 10, 40, 40), Text: "营", Score: 1},
			{Quad: rect(10, 200, 40, 230), Text: "业", Score: 1},
		}, []string{"营", "业"}},
		{"a line above a character", []Region{
			{Quad: rect(10, 10, 300, 40), Text: "营业执照", Score: 1},
			{Quad: rect(10, 50, 40, 80), Text: "业", Score: 1},
		}, []string{"营业执照", "业"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stackColumns(append([]Region(nil), tt.regions...))
			var texts []string
			for _, r := range got {
				texts = append(texts, r.Text)
				if len(got) < len(tt.regions) && !r.TopDown {
					t.Errorf("%q: joined, not read top to bottom", r.Text)
				}
			}
			if len(texts) != len(tt.want) {
				t.Fatalf("regions %q, want %q", texts, tt.want)
			}
			for i := range texts {
				if texts[i] != tt.want[i] {
					t.Fatalf("regions %q, want %q", texts, tt.want)
				}
			}
		})
	}
}

// TestJoinColumns: on a page of columns, the boxes of one column join into its box; the columns
// beside it do not.
func TestJoinColumns(t *testing.T) {
	quads := []geom.Quad{
		rect(100, 10, 130, 150), // right column, in two pieces and a stroke
		rect(101, 190, 131, 300),
		rect(108, 158, 122, 166),
		rect(50, 10, 80, 300), // left column
	}
	got := joinColumns(quads)
	if len(got) != 2 {
		t.Fatalf("%d boxes, want 2: %v", len(got), got)
	}
	if x0, y0, x1, y1 := got[0].Bounds(); x0 != 100 || y0 != 10 || x1 != 131 || y1 != 300 {
		t.Errorf("right column %v, want 100,10–131,300", got[0])
	}
	if got[1] != quads[3] {
		t.Errorf("left column %v, want %v", got[1], quads[3])
	}
}
