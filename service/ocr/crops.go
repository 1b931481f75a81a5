package ocr

import (
	"context"
	"image"
	"math"
	"slices"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Reading is what the recognizer reads in one crop.
type Reading struct {
	Text  string
	Score float32 // recognition confidence in [0,1]; 0 for no text
}

// ReadCrops recognizes the text in the given boxes of img, and does nothing else: no detection,
// no direction classifier, no page orientation, no squeeze (each crop is read at its natural
// width, up to the widest bucket). Each quad's corners run clockwise from its text's own top-left
// corner, as Region.Quad's do, so text of any direction is cut upright. It is for a caller that
// knows where text is and wants what the recognizer reads there: a document's text layer checked
// against OCR of a few of its lines.
func (p *Pipeline) ReadCrops(ctx context.Context, img image.Image, quads []geom.Quad) ([]Reading, error) {
	widest := p.opt.RecWidthBuckets[len(p.opt.RecWidthBuckets)-1]
	crops := make([]*crop, len(quads))
	for i, q := range quads {
		w, h := q.Width(), q.Height()
		cw := widest
		if w >= 1 && h >= 1 {
			cw = min(widest, max(1, int(math.Ceil(float64(p.opt.RecHeight)*w/h))))
		}
		crops[i] = &crop{quad: q, width: cw, natural: cw}
	}
	byWidth := make([]int, len(crops))
	for i := range byWidth {
		byWidth[i] = i
	}
	slices.SortStableFunc(byWidth, func(a, b int) int { return crops[a].width - crops[b].width })
	var tm Timings
	if err := p.read(ctx, img, crops, byWidth, &tm); err != nil {
		return nil, err
	}
	out := make([]Reading, len(crops))
	for i, c := range crops {
		out[i] = Reading{Text: c.text, Score: c.score}
	}
	return out, nil
}

// Reads reports whether the recognizer can read r: whether its dictionary holds it.
func (p *Pipeline) Reads(r rune) bool { return p.charset.Has(r) }
