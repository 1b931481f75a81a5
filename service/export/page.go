package export

import (
	"math"

	"github.com/ocrgate/ocrgate/api"
)

// ImagePage is an image's answer as the one page of a document, so that one writer serves both.
func ImagePage(r api.OCRResult) api.Page {
	return api.Page{Page: 1, Width: r.ImageInfo.Width, Height: r.ImageInfo.Height, Source: "ocr",
		Rotation: r.Rotation, Regions: r.Regions, Blocks: r.Blocks, Text: r.Text, Warning: r.Warning}
}

// box is an axis-aligned rectangle in pixels: x0,y0 inclusive, x1,y1 exclusive.
type box struct{ x0, y0, x1, y1 int }

func (b box) empty() bool { return b.x1 <= b.x0 || b.y1 <= b.y0 }

// union is the smallest box holding both; an empty box adds nothing.
func (b box) union(o box) box {
	switch {
	case o.empty():
		return b
	case b.empty():
		return o
	}
	return box{min(b.x0, o.x0), min(b.y0, o.y0), max(b.x1, o.x1), max(b.y1, o.y1)}
}

// shapeBox is the rectangle around a shape's points, kept inside the page (w×h): a box of the
// answer may stick out of the page by a pixel or two (unclipped detection), which hOCR and ALTO
// readers take for an error.
func shapeBox(s api.BoundingShape, w, h int) box {
	if len(s.Points) == 0 {
		return box{}
	}
	b := box{math.MaxInt, math.MaxInt, math.MinInt, math.MinInt}
	for _, p := range s.Points {
		b.x0, b.y0 = min(b.x0, p.X), min(b.y0, p.Y)
		b.x1, b.y1 = max(b.x1, p.X), max(b.y1, p.Y)
	}
	return b.clip(w, h)
}

func (b box) clip(w, h int) box {
	c := box{max(0, min(b.x0, w)), max(0, min(b.y0, h)), max(0, min(b.x1, w)), max(0, min(b.y1, h))}
	if c.x1 == c.x0 && c.x1 < w {
		c.x1++
	}
	if c.y1 == c.y0 && c.y1 < h {
		c.y1++
	}
	return c
}

// word is a word as the writers place it: its text, box and confidence.
type word struct {
	text string
	conf float64
	box  box
}

// line is a region as the writers place it: its words, and a box that holds them all.
type line struct {
	id    int
	text  string
	conf  float64
	lang  string
	words []word
	box   box
}

// block is a group of lines and a box that holds them all.
type block struct {
	lines []line
	box   box
}

// layout is a page's blocks, lines and words with boxes that nest: a word's box lies inside its
// line's, a line's inside its block's, and each inside the page (hOCR and ALTO readers expect
// both). A region whose words are not known (they were not asked for, or could not be located)
// is one word, its whole text on its whole box; regions no block lists get a block each.
func layout(p api.Page) []block {
	w, h := p.Width, p.Height
	lines := make([]line, len(p.Regions))
	for i, r := range p.Regions {
		l := line{id: i, text: r.Text, conf: r.Confidence, box: shapeBox(r.BoundingShape, w, h)}
		if r.Language != "" && r.Language != "unknown" {
			l.lang = r.Language
		}
		for _, wd := range r.Words {
			if wd.Text == "" {
				continue
			}
			wb := shapeBox(wd.BoundingShape, w, h)
			l.words = append(l.words, word{text: wd.Text, conf: wd.Confidence, box: wb})
			l.box = l.box.union(wb)
		}
		if len(l.words) == 0 && r.Text != "" {
			l.words = []word{{text: r.Text, conf: r.Confidence, box: l.box}}
		}
		lines[i] = l
	}
	used := make([]bool, len(lines))
	var blocks []block
	add := func(ids []int, b box) {
		var bl block
		bl.box = b
		for _, id := range ids {
			if id < 0 || id >= len(lines) || used[id] || len(lines[id].words) == 0 {
				continue
			}
			used[id] = true
			bl.lines = append(bl.lines, lines[id])
			bl.box = bl.box.union(lines[id].box)
		}
		if len(bl.lines) > 0 {
			blocks = append(blocks, bl)
		}
	}
	for _, b := range p.Blocks {
		add(b.Regions, shapeBox(b.BoundingShape, w, h))
	}
	for i := range lines {
		if !used[i] {
			add([]int{i}, box{})
		}
	}
	return blocks
}
