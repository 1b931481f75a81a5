package ocr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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
