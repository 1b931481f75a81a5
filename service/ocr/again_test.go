package ocr

import (
	"strings"
	"testing"
)

// TestAgainWidth: which readings are read again wider, and how wide.
func TestAgainWidth(t *testing.T) {
	p := &Pipeline{opt: DefaultOptions()}
	// reading is a crop read from width px (one timestep of 8 px), its spaces restored by ctc
	// (probability 0) where restored says so, every other character at 0.9.
	reading := func(text string, width int, restored bool) *crop {
		c := &crop{width: width, natural: width, text: text, steps: width / 8, rw: width}
		for _, r := range text {
			pr := float32(0.9)
			if r == ' ' && restored {
				pr = 0
			}
			c.probs = append(c.probs, pr)
			c.doubt = append(c.doubt, false)
		}
		return c
	}
	// Small print read with too few timesteps loses the first letter of word after word, the
	// model keeping a space only in the blank runs: 63 characters over 132 steps, 2.1 a character.
	lost := "expenditres have en ade t mount at lace nd eason for th xpendit"
	tests := []struct {
		name      string
		c         *crop
		wantDense bool
	}{
		{"letters lost, spaces restored", reading(lost, 1056, true), true},
		{"the same with the model's own spaces", reading(lost, 1056, false), false},
		// As many restored spaces in print read with room to spare: 2.6 steps a character.
		{"spaces restored, room to spare", reading(lost, 1312, true), false},
		{"two restored spaces", reading("Tipping and Application", 384, true), false},
		{"cjk", reading(strings.Repeat("文字 ", 10), 480, true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dense := p.againWidth(tt.c)
			if dense != tt.wantDense {
				t.Fatalf("againWidth: dense %v, want %v (%.2f steps a character)", dense, tt.wantDense, tt.c.stepsPerChar())
			}
			if dense && float64(w) < float64(tt.c.width)*p.opt.RecDenseWidth/tt.c.stepsPerChar()-1 {
				t.Errorf("read again at %d px, want %.0f", w, float64(tt.c.width)*p.opt.RecDenseWidth/tt.c.stepsPerChar())
			}
			if !dense && w != tt.c.width {
				t.Errorf("read again at %d px, want none", w)
			}
		})
	}
}
