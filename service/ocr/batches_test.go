package ocr

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestRecBatches checks how crops are grouped for the recognizer: only crops of one padded width
// share a batch, no batch exceeds its crop count, and the widest batch comes first.
func TestRecBatches(t *testing.T) {
	for _, tt := range []struct {
		name   string
		step   int
		widths []int // ascending, as byWidth sorts them
		want   string
	}{
		{"steps of 8: equal padded widths only", 8, []int{50, 53, 56, 57, 120, 121, 122}, "[128:121,122] [120:120] [64:57] [56:50,53,56]"},
		{"buckets", 0, []int{50, 53, 56, 57, 120, 121}, "[128:120,121] [64:50,53,56,57]"},
		{"batch size", 8, []int{40, 40, 40, 40, 40, 40, 40, 40}, "[40:40,40,40,40,40,40] [40:40,40]"},
		{"wide crops: fewer per batch", 8, []int{1200, 1200, 1200, 1200, 1200, 1200}, "[1200:1200,1200,1200,1200] [1200:1200,1200]"},
		{"wider than the last bucket", 8, []int{2560, 2560}, "[2560:2560,2560]"},
		{"one crop", 8, []int{7}, "[8:7]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.RecWidthStep = tt.step
			p := &Pipeline{opt: o}
			crops := make([]*crop, len(tt.widths))
			byWidth := make([]int, len(tt.widths))
			for i, w := range tt.widths {
				crops[i], byWidth[i] = &crop{width: w}, i
			}
			batches, widths := p.recBatches(crops, byWidth)
			var got []string
			for i, b := range batches {
				ws := make([]string, len(b))
				for j, k := range b {
					ws[j] = fmt.Sprint(crops[k].width)
					if crops[k].width > widths[i] {
						t.Errorf("crop of %d px in a batch %d px wide", crops[k].width, widths[i])
					}
				}
				got = append(got, fmt.Sprintf("[%d:%s]", widths[i], strings.Join(ws, ",")))
				if len(b) > o.recBatchCrops(widths[i]) {
					t.Errorf("batch of %d crops at %d px; at most %d", len(b), widths[i], o.recBatchCrops(widths[i]))
				}
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("batches %s, want %s", s, tt.want)
			}
			if !slices.IsSortedFunc(widths, func(a, b int) int { return b - a }) {
				t.Errorf("batch widths %v, want widest first", widths)
			}
		})
	}
}

// TestPlanWidths checks a crop's width at the recognizer's height: its box's aspect, narrowed by
// RecSqueeze only above RecSqueezeFrom, capped by the last bucket, and turned for vertical text.
func TestPlanWidths(t *testing.T) {
	box := func(w, h float64) geom.Quad {
		return geom.Quad{{X: 10, Y: 20}, {X: 10 + w, Y: 20}, {X: 10 + w, Y: 20 + h}, {X: 10, Y: 20 + h}}
	}
	for _, tt := range []struct {
		name        string
		squeeze     float64
		from        int
		quad        geom.Quad
		want        int
		wantTurned  bool
		description string
	}{
		{"short word keeps its aspect", 0.85, 192, box(96, 24), 192, false, "192 px is not above 192"},
		{"long line squeezed", 0.85, 192, box(400, 24), 680, false, "800 × 0.85"},
		{"just above the threshold", 0.85, 192, box(97, 24), 165, false, "ceil(194 × 0.85)"},
		{"squeeze 1 keeps every aspect", 1, 192, box(400, 24), 800, false, ""},
		{"from 0 squeezes everything", 0.5, 0, box(30, 24), 30, false, "ceil(60 × 0.5)"},
		{"capped at the last bucket", 0.85, 192, box(5000, 20), 2560, false, ""},
		{"vertical text turned, then squeezed", 0.85, 192, box(24, 400), 680, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.RecSqueeze, o.RecSqueezeFrom = tt.squeeze, tt.from
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			crops := (&Pipeline{opt: o}).plan([]geom.Quad{tt.quad}, 0, false, false)
			if len(crops) != 1 || crops[0].width != tt.want || crops[0].vertical != tt.wantTurned {
				t.Fatalf("crops %+v; want one %d px wide (%s), vertical %v", crops, tt.want, tt.description, tt.wantTurned)
			}
		})
	}
	for _, bad := range []float64{0, -0.5, 1.01} {
		o := DefaultOptions()
		o.RecSqueeze = bad
		if o.Validate() == nil {
			t.Errorf("squeeze %v accepted", bad)
		}
	}
}
