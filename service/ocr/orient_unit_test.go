package ocr

import (
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

// TestClaimedRotation: a page claims the rotation it was read at only when some text was read.
func TestClaimedRotation(t *testing.T) {
	for _, tt := range []struct {
		name     string
		rotation int
		regions  []Region
		want     int
	}{
		{"turned, no regions", 90, nil, 0},
		{"turned, only blank regions", 270, []Region{{Text: " "}, {Text: ""}}, 0},
		{"turned, text read", 90, []Region{{Text: ""}, {Text: "TOTAL"}}, 90},
		{"upright", 0, []Region{{Text: "TOTAL"}}, 0},
	} {
		if got := claimed(tt.rotation, tt.regions); got != tt.want {
			t.Errorf("%s: claimed = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestReadRotation: a page's lines decide its turn only when every line of two characters or
// more read turned the same way.
func TestReadRotation(t *testing.T) {
	line := func(text string, vertical, flipped, topDown bool) Region {
		return Region{Text: text, Vertical: vertical, Flipped: flipped, TopDown: topDown}
	}
	tests := []struct {
		name    string
		regions []Region
		want    int
	}{
		{"none", nil, 0},
		{"upright", []Region{line("TOTAL 12.00", false, false, false)}, 0},
		{"flipped", []Region{line("TOTAL 12.00", false, true, false)}, 180},
		{"both flipped", []Region{line("TOTAL", false, true, false), line("12.00", false, true, false)}, 180},
		{"one of two flipped", []Region{line("TOTAL", false, true, false), line("12.00", false, false, false)}, 0},
		{"bottom to top", []Region{line("VERTICAL", true, false, false)}, 90},
		{"top to bottom", []Region{line("VERTICAL", true, true, false)}, 270},
		{"column of upright characters", []Region{line("营业执照", true, false, true)}, 0},
		{"turned and flipped disagree", []Region{line("ABC", true, false, false), line("DEF", false, true, false)}, 0},
		{"a lone character has no say", []Region{line("1", true, false, false)}, 0},
		{"beside a line it has none either", []Region{line("1", false, false, false), line("TOTAL", false, true, false)}, 180},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readRotation(tt.regions); got != tt.want {
				t.Errorf("readRotation = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestStacks: on a page of a line or two, single boxes stacked one under the other join into one
// tall box; a page of lines across, or boxes side by side, stays as it is.
func TestStacks(t *testing.T) {
	digits := rect(10, 0, 46, 36)
	var stacked []geom.Quad
	for i := range 8 {
		stacked = append(stacked, rect(10, float64(i*40), 46, float64(i*40+36)))
	}
	tests := []struct {
		name  string
		quads []geom.Quad
		want  int // boxes after
	}{
		{"one box", []geom.Quad{digits}, 1},
		{"a column of single boxes", stacked, 1},
		{"a column beside one line across", append([]geom.Quad{rect(100, 0, 400, 30)}, stacked...), 2},
		{"three lines across and a column", append([]geom.Quad{rect(100, 0, 400, 30), rect(100, 40, 400, 70), rect(100, 80, 400, 110)}, stacked...), 11},
		{"boxes side by side", []geom.Quad{rect(0, 0, 36, 36), rect(60, 0, 96, 36), rect(120, 0, 156, 36)}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stacks(tt.quads, 1.5); len(got) != tt.want {
				t.Errorf("%d boxes, want %d: %v", len(got), tt.want, got)
			}
		})
	}
}
