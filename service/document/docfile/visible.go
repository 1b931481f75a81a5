package docfile

import (
	"context"
	"image"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// Hidden counts the characters of a page's text layer that are not page text because no one sees
// them, by why. Such text is dropped, never returned or sent on (a hidden instruction to a chat
// model reading the document is the classic abuse), and the answer says that it was.
type Hidden struct {
	// Invisible: drawn in an invisible text render mode (3, or 7: clipping only), as a scanner's
	// OCR layer is.
	Invisible int
	// OffPage: placed outside the page's visible box (its crop box), where no viewer shows it.
	OffPage int
	// TooSmall: drawn smaller than a person can read, MinTextHeight.
	TooSmall int
	// NoMark: drawn, but the drawn page shows no mark where it is: the colour of what is under
	// it (white on white), or covered by what is drawn after it.
	NoMark int
}

// Chars is the number of characters dropped.
func (h Hidden) Chars() int { return h.Invisible + h.OffPage + h.TooSmall + h.NoMark }

// Reasons names why characters were dropped, in a fixed order, as stable codes:
// "invisible_render_mode", "outside_page", "too_small", "no_visible_mark".
func (h Hidden) Reasons() []string {
	var out []string
	for _, r := range []struct {
		n    int
		code string
	}{{h.Invisible, "invisible_render_mode"}, {h.OffPage, "outside_page"}, {h.TooSmall, "too_small"}, {h.NoMark, "no_visible_mark"}} {
		if r.n > 0 {
			out = append(out, r.code)
		}
	}
	return out
}

// Add returns the sum of two counts.
func (h Hidden) Add(o Hidden) Hidden {
	return Hidden{Invisible: h.Invisible + o.Invisible, OffPage: h.OffPage + o.OffPage, TooSmall: h.TooSmall + o.TooSmall, NoMark: h.NoMark + o.NoMark}
}

// MinTextHeight is the smallest text, in points of the font's box (ascent to descent: about 1.15
// times the font size), that counts as page text: 2 pt is a 1.7 pt font, 0.6 mm, a line of dots
// to the eye. Microprint and text shrunk out of sight are below it; footnotes (6 pt and up) far
// above.
const MinTextHeight = 2.0

// offPage reports whether a character lies outside the page's visible box: the middle of its
// glyph box (its font box when the glyph has no ink) is not on the page.
func offPage(c pdfengine.Char, page pdfengine.Rect) bool {
	b := c.Box
	if b.Empty() {
		b = c.Loose
	}
	if b.Empty() {
		return false // nothing to place; it makes no line either
	}
	x, y := (b.X0+b.X1)/2, (b.Y0+b.Y1)/2
	return !(x >= page.X0 && x <= page.X1 && y >= page.Y0 && y <= page.Y1)
}

// tooSmall reports whether a character is drawn too small to be read (MinTextHeight), measured
// across its baseline whatever the text's direction: the larger of its font box and its ink (a
// font with broken metrics must not make its text vanish).
func tooSmall(c pdfengine.Char) bool {
	if c.Loose.Empty() && c.Box.Empty() {
		return false // nothing to measure: it makes no line either
	}
	t := quarterTurns(c.Angle)
	across := func(b pdfengine.Rect) float64 {
		if b.Empty() {
			return 0
		}
		if t == 1 || t == 3 {
			return b.X1 - b.X0
		}
		return b.Y1 - b.Y0
	}
	return math.Max(across(c.Loose), across(c.Box)) < MinTextHeight
}

// The visibility check draws the page at a low resolution and looks for a mark under every word.
const (
	// checkScale is the resolution of the check, in pixels a point: 72 dpi. Text of MinTextHeight
	// is two pixels tall, enough to leave a mark; an A4 page is half a megapixel.
	checkScale = 1.0
	// checkPixels caps the check's drawing for large pages.
	checkPixels = 2_000_000
	// checkBudget bounds the pixels the check reads, in drawings' worth (see TextLayer).
	checkBudget = 16
	// minContrast is the least difference, of 255, between two pixels under a word in one of
	// the three colour channels for the word to have left a mark: light gray text on white
	// (#E0E0E0 and up) is at the edge of what a person makes out. Colour, not brightness: red
	// text on a dark red cell (#CC2030 on #702830) differs by 92 in red and by 24 in gray,
	// which small text drawn at 72 dpi blurs to less.
	minContrast = 24
)

// TextLayer is what a person sees of a page's text layer.
type TextLayer struct {
	// Lines are the visible lines in reading order, in the w×h pixel space asked for.
	Lines []Line
	// Hidden counts every character dropped: Page.Hidden and the ones the drawn page shows no
	// mark of.
	Hidden Hidden
	// Undrawn counts the characters kept though the drawing shows nothing of them, because the
	// engine drew none of their glyphs (a font it has no outlines for, see undrawnGlyph): that
	// is no proof no one sees them, and OCR of the drawing cannot read or check them.
	Undrawn int
	// Invisible is set for a layer of invisible text over a page image (see
	// Page.InvisibleLayer): no mark is looked for under it, and it stands only where OCR of its
	// probes agrees with it. Such a layer is never taken by its structure alone.
	Invisible bool
}

// MostlyUndrawn reports whether most of the layer's characters are in glyphs the engine did not
// draw (see Undrawn): OCR of the drawing cannot check the layer.
func (tl *TextLayer) MostlyUndrawn() bool {
	n := 0
	for _, l := range tl.Lines {
		for _, r := range l.Text {
			if !unicode.IsSpace(r) {
				n++
			}
		}
	}
	return tl.Undrawn > 0 && 2*tl.Undrawn > n
}

// Rotation is how far, in degrees clockwise (0, 90, 180 or 270), the page as displayed must be
// turned for its text layer to read upright: the turn of the lines that hold most of its
// characters, 0 when no turn holds most. It is what OCR answers for the page drawn: a sideways
// table on a /Rotate 90 page (its rows drawn across the page's own frame, run down the page as
// displayed) is laid out turned, row by row, not column by column; a stamp up the margin of an
// upright page is too few characters to turn the page.
func (tl *TextLayer) Rotation() int {
	var byTurn [4]int
	total := 0
	for _, l := range tl.Lines {
		n := utf8.RuneCountInString(l.Text)
		byTurn[((l.turn%4)+4)%4] += n
		total += n
	}
	for turn := 1; turn < 4; turn++ {
		if 2*byTurn[turn] > total {
			return 90 * turn
		}
	}
	return 0
}

// TextLayer returns the page's text layer as a person sees it, with boxes in a w×h pixel space
// over the page (see Lines). It draws the page in colour at 72 dpi and drops every word under
// which the drawing shows no mark: text the colour of its background, or covered by what is drawn over
// it. Page has already dropped invisible, off-page and too small text (an invisible layer over a
// page image is kept whole, unlooked at: see Page.InvisibleLayer). Raster pages and pages
// without text give an empty layer and draw nothing. Errors are the engine's, or ctx's.
func (d *Document) TextLayer(ctx context.Context, p *Page, w, h int) (*TextLayer, error) {
	tl := &TextLayer{Hidden: p.Hidden, Invisible: p.InvisibleLayer}
	lines := p.Lines(w, h)
	if len(lines) == 0 || d.format != FormatPDF || p.InvisibleLayer {
		tl.Lines = lines
		return tl, nil
	}
	s := math.Min(checkScale, math.Sqrt(checkPixels/(p.Width*p.Height)))
	gw, gh := max(1, int(math.Round(p.Width*s))), max(1, int(math.Round(p.Height*s)))
	img, err := d.pdf.Render(ctx, p.Number-1, gw, gh)
	if err != nil {
		return nil, pdfError(err)
	}
	tl.Lines, tl.Hidden.NoMark, tl.Undrawn = dropUnmarked(img, lines, float64(gw)/float64(w), float64(gh)/float64(h))
	return tl, nil
}

// dropUnmarked keeps the words of lines under which the drawing img (the lines' pixel space
// scaled by fx, fy) shows a mark, and counts the characters of the others. Words the engine drew
// no glyph of are kept unlooked at, and their characters counted as undrawn.
//
// The words' boxes of a real page add up to a fraction of it; a page built of a hundred thousand
// page-sized words would have every one read in full. Past checkBudget drawings' worth of pixels,
// the boxes are read on a grid coarse enough to stay within it.
func dropUnmarked(img *image.RGBA, lines []Line, fx, fy float64) (kept []Line, noMark, undrawn int) {
	var area int64
	for _, l := range lines {
		for _, wd := range l.Words {
			r := wordRect(img, wd, fx, fy)
			area += int64(r.Dx()) * int64(r.Dy())
		}
	}
	step := checkStep(area, img.Rect.Dx(), img.Rect.Dy())
	out := lines[:0]
	for _, l := range lines {
		var words []Word
		for _, wd := range l.Words {
			if wd.undrawn {
				words = append(words, wd)
				undrawn += utf8.RuneCountInString(strings.Join(strings.Fields(wd.Text), ""))
				continue
			}
			if tooSmallToJudge(wd, fy) || marked(img, wordRect(img, wd, fx, fy), step) {
				words = append(words, wd)
				continue
			}
			for _, r := range wd.Text {
				if !unicode.IsSpace(r) {
					noMark++
				}
			}
		}
		if len(words) == 0 {
			continue
		}
		if len(words) < len(l.Words) {
			l = joinWords(l, words)
		}
		out = append(out, l)
	}
	return out, noMark, undrawn
}

// minJudged is the least height, in the check's pixels, at which a word's mark is judged: a page
// too large for checkScale is drawn smaller, and text it draws under two pixels tall leaves an
// anti-aliased smudge that may fall under minContrast, more so in colour than in gray. Such a word
// is kept: dropping visible text as hidden is a silent loss, and text too small to read at all
// was dropped before (Page's TooSmall).
const minJudged = 2.0

// tooSmallToJudge reports whether word wd's font is drawn under minJudged pixels tall in the
// check's drawing (the lines' pixel space scaled by fy). The font's size, not the ink's: blank
// glyphs of a readable size are hidden text, and judged.
func tooSmallToJudge(wd Word, fy float64) bool {
	return wd.size > 0 && wd.size*fy < minJudged
}

// checkStep is the grid step that reads boxes of area pixels in all within checkBudget drawings
// of w×h.
func checkStep(area int64, w, h int) int {
	budget := checkBudget * int64(w) * int64(h)
	if area <= budget || budget <= 0 {
		return 1
	}
	return int(math.Ceil(math.Sqrt(float64(area) / float64(budget))))
}

// wordRect is a word's box in the drawing, whose pixel space is the text layer's scaled by fx,
// fy.
func wordRect(img *image.RGBA, wd Word, fx, fy float64) image.Rectangle {
	x0, y0, x1, y1 := wd.Quad.Bounds()
	return image.Rect(int(math.Floor(x0*fx)), int(math.Floor(y0*fy)), int(math.Ceil(x1*fx)), int(math.Ceil(y1*fy))).Intersect(img.Rect)
}

// marked reports whether the drawing shows a mark in r: two of its pixels, every step-th of each
// row and column, differ by minContrast or more in one colour channel (text of any colour on a
// ground of any other, however alike their brightness).
func marked(img *image.RGBA, r image.Rectangle, step int) bool {
	if r.Empty() {
		return false
	}
	lo, hi := [3]uint8{255, 255, 255}, [3]uint8{}
	for y := r.Min.Y; y < r.Max.Y; y += step {
		row := img.Pix[(y-img.Rect.Min.Y)*img.Stride+4*(r.Min.X-img.Rect.Min.X):][:4*r.Dx()]
		for x := 0; x < len(row); x += 4 * step {
			for c := range 3 {
				lo[c], hi[c] = min(lo[c], row[x+c]), max(hi[c], row[x+c])
			}
		}
		for c := range 3 {
			if int(hi[c])-int(lo[c]) >= minContrast {
				return true
			}
		}
	}
	return false
}

// joinWords is a line with only some of its words: its text and box are theirs.
func joinWords(l Line, words []Word) Line {
	l.Words = words
	texts := make([]string, len(words))
	for i, w := range words {
		texts[i] = w.Text
	}
	l.Text = joinSpace(texts)
	// The box: the first word's start to the last word's end along the line, the line's own
	// extent across it (the corners are clockwise from the text's top-left).
	first, last := words[0].Quad, words[len(words)-1].Quad
	l.Quad[0], l.Quad[3] = first[0], first[3]
	l.Quad[1], l.Quad[2] = last[1], last[2]
	return l
}

func joinSpace(s []string) string {
	n := len(s) - 1
	for _, t := range s {
		n += len(t)
	}
	b := make([]byte, 0, max(0, n))
	for i, t := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, t...)
	}
	return string(b)
}
