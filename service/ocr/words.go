package ocr

import (
	"math"
	"slices"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Word is one word of a region: its text, the mean probability of its characters and its box,
// located from the recognizer's timesteps.
type Word struct {
	Text  string
	Score float32
	// Quad is the part of the region's box that holds the word, clockwise from the text's
	// top-left corner like the region's.
	Quad geom.Quad
}

// lineWords splits a recognized line into words and locates each along its region's box.
//
// The recognizer reads a crop warped from quad, contentW pixels wide, padded to paddedW, and
// emits steps timesteps evenly spread over the padded width. CTC decoding reports the timestep
// each character was read at (steps of runes, probs their probabilities); a character's peak sits
// near its centre, so a word spans from half a character pitch before its first character to
// half a pitch after its last (never past the midpoint to a neighbouring character), where the
// pitch is the median distance between consecutive characters of the line. That fraction of the
// crop's width is mapped back onto the quad's top and bottom edges.
func lineWords(quad geom.Quad, text string, runeSteps []int, probs []float32, steps, contentW, paddedW int) []Word {
	runes := []rune(text)
	if len(runes) == 0 || len(runeSteps) != len(runes) || len(probs) != len(runes) || steps <= 0 || contentW <= 0 || paddedW <= 0 {
		return nil
	}
	// Centre of each character in crop pixels.
	colW := float64(paddedW) / float64(steps)
	centre := func(i int) float64 { return (float64(runeSteps[i]) + 0.5) * colW }
	var gaps []float64
	prev := -1
	for i, r := range runes {
		if r == ' ' {
			continue
		}
		if prev >= 0 && runeSteps[i] > runeSteps[prev] {
			gaps = append(gaps, centre(i)-centre(prev))
		}
		prev = i
	}
	pitch := colW * 2
	if len(gaps) > 0 {
		slices.Sort(gaps)
		pitch = gaps[len(gaps)/2]
	}
	// The neighbouring characters (not spaces) of each position, for the midpoint limits.
	prevChar := func(i int) int {
		for j := i - 1; j >= 0; j-- {
			if runes[j] != ' ' {
				return j
			}
		}
		return -1
	}
	nextChar := func(i int) int {
		for j := i + 1; j < len(runes); j++ {
			if runes[j] != ' ' {
				return j
			}
		}
		return -1
	}
	var words []Word
	for i := 0; i < len(runes); {
		if runes[i] == ' ' {
			i++
			continue
		}
		j := i
		for j+1 < len(runes) && runes[j+1] != ' ' {
			j++
		}
		left := centre(i) - pitch/2
		if p := prevChar(i); p >= 0 {
			left = math.Max(left, (centre(p)+centre(i))/2)
		}
		right := centre(j) + pitch/2
		if n := nextChar(j); n >= 0 {
			right = math.Min(right, (centre(j)+centre(n))/2)
		}
		f0 := math.Max(0, math.Min(1, left/float64(contentW)))
		f1 := math.Max(f0, math.Min(1, right/float64(contentW)))
		var sum float32
		for k := i; k <= j; k++ {
			sum += probs[k]
		}
		words = append(words, Word{
			Text:  string(runes[i : j+1]),
			Score: sum / float32(j-i+1),
			Quad: geom.Quad{
				lerp(quad[0], quad[1], f0), lerp(quad[0], quad[1], f1),
				lerp(quad[3], quad[2], f1), lerp(quad[3], quad[2], f0),
			},
		})
		i = j + 1
	}
	return words
}

func lerp(a, b geom.Point, f float64) geom.Point {
	return geom.Point{X: a.X + f*(b.X-a.X), Y: a.Y + f*(b.Y-a.Y)}
}
