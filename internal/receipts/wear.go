package receipts

import (
	"math"
	"math/rand/v2"
)

// Wear is what a thermal printer and time do to the ink on the paper. The zero Wear leaves the
// print as drawn (smooth, anti-aliased type, as a laser or an ink-jet prints it).
type Wear struct {
	Seed uint64
	// Dots prints every paper pixel fully or not at all, as a thermal head's dots are: the type
	// loses its anti-aliasing and its curves become steps.
	Dots bool
	// Dropout is the share of inked dots that did not print (a dirty or worn head, grit).
	Dropout float64
	// WeakColumns worn heating elements print faint vertical streaks through the text: each is a
	// few dots wide and prints at WeakStrength of the ink.
	WeakColumns  int
	WeakStrength float64
	// Fade varies the print's strength down the paper (the head's temperature, the paper's age):
	// the ink is multiplied by 1 − Fade·(½ + ½·sin), in waves of about FadePeriod pixels.
	Fade       float64
	FadePeriod float64
}

func (w Wear) apply(p *Paper) {
	if w == (Wear{}) {
		return
	}
	rng := rand.New(rand.NewPCG(w.Seed, 0x7ea7))
	ink := p.Ink
	width, height := ink.Rect.Dx(), ink.Rect.Dy()
	weak := make([]float64, width)
	for i := range weak {
		weak[i] = 1
	}
	for range w.WeakColumns {
		x0, n := rng.IntN(width), 1+rng.IntN(3)
		for x := x0; x < min(x0+n, width); x++ {
			weak[x] = w.WeakStrength
		}
	}
	phase := rng.Float64() * 2 * math.Pi
	for y := range height {
		fade := 1.0
		if w.Fade > 0 && w.FadePeriod > 0 {
			fade = 1 - w.Fade*(0.5+0.5*math.Sin(phase+2*math.Pi*float64(y)/w.FadePeriod))
		}
		row := ink.Pix[y*ink.Stride : y*ink.Stride+width]
		for x, a := range row {
			if a == 0 {
				continue
			}
			v := float64(a) / 255
			if w.Dots {
				v = 0
				if a >= 110 {
					v = 1
				}
			}
			if v > 0 && w.Dropout > 0 && rng.Float64() < w.Dropout {
				v = 0
			}
			row[x] = uint8(math.Round(255 * v * fade * weak[x]))
		}
	}
}
