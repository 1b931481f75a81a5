package docfile

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"image/draw"
	"math"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// A text layer is checked before it is trusted: a few pieces of it (probes) are drawn at the
// recognizer's height and read by OCR, and what OCR reads is compared with what the layer says.
// A layer whose probes OCR disagrees with is not the page's text (a font without a Unicode map
// that says `"7+%-` where the page shows "Phone"); one it agrees with is. Probes are chosen per
// font, because a layer goes wrong font by font: every font the page draws with gets a probe
// before any font gets two. Text the recognizer cannot read (a script outside its dictionary:
// Arabic, Hebrew, Thai, Devanagari…) cannot disagree with it, and is judged by what the layer
// itself shows (see Judge).

// Probe is a few words of one line of a page's text layer, to be read by OCR.
type Probe struct {
	// Text is what the layer says.
	Text string
	// Quad is the words' box in the text layer's pixel space, clockwise from the text's own
	// top-left corner.
	Quad geom.Quad
	// Font names the font the probe's first character is drawn with.
	Font string
	// glyphs are the texts of the probe's glyphs, in order, spaces aside, where its words know
	// them (see Word.parts); nil where they do not. A glyph of several letters is a ligature
	// (ﬃ), which the recognizer may read as fewer letters than it stands for (see Judge).
	glyphs []string
}

// The probes' sizes, in characters of the layer's text (spaces aside).
const (
	// minProbeChars: a probe holds at least this many characters; a line with fewer (a page
	// number, a bullet) is not worth a crop.
	minProbeChars = 4
	// probeChars: a probe grows word by word until it holds this many characters, and stops
	// before a word that would take it past maxProbeChars; a longer first word gives its first
	// probeChars characters. OCR time follows the crop's width: 14 characters are about 350 px
	// at the recognizer's 48.
	probeChars    = 14
	maxProbeChars = 24
)

// A font carries a meaningful share of a page when it draws at least minFontShare of the page's
// characters or a whole line of its own: a layer goes wrong font by font, so each such font is
// probed, even past the n probes asked for (a fifth font of a form, an amount column in a font of
// its own). At most maxFontProbes fonts are probed a page: the cost of a page built of a hundred
// fonts stays bounded, its further fonts judged by the others.
const (
	minFontShare  = 0.02
	maxFontProbes = 12
)

// Probes picks the layer's probes: first the longest probe of each font that carries a
// meaningful share of the page (see minFontShare), the fonts that draw the most characters first,
// up to maxFontProbes of them even past n; then, up to n probes in all, probes of lines spread
// evenly down the page. Each line gives at most one probe: its first words. What is probed is the
// layer's text as it is, whatever it says: a font with no true Unicode map gives punctuation
// (`"7+%-`) as readily as letters.
func (tl *TextLayer) Probes(n int) []Probe {
	if n <= 0 {
		return nil
	}
	type candidate struct {
		Probe
		chars int
	}
	var cands []candidate
	fontChars := map[string]int{}
	wholeLine := map[string]bool{} // fonts that draw a whole line of a probe's length alone
	total := 0
	for _, l := range tl.Lines {
		one, chars := true, 0
		for _, w := range l.Words {
			fontChars[w.font] += len(w.Text)
			total += len(w.Text)
			chars += len(w.Text)
			one = one && w.font == l.Words[0].font
		}
		if one && chars >= minProbeChars {
			wholeLine[l.Words[0].font] = true
		}
		if l.Words[0].undrawn {
			continue // the drawing shows nothing of it to read
		}
		pr, chars := lineProbe(l)
		if chars >= minProbeChars {
			cands = append(cands, candidate{Probe: pr, chars: chars})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	fonts := make([]string, 0, len(fontChars))
	for f := range fontChars {
		fonts = append(fonts, f)
	}
	slices.SortFunc(fonts, func(a, b string) int {
		if c := cmp.Compare(fontChars[b], fontChars[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	taken := make([]bool, len(cands))
	var out []Probe
	for _, f := range fonts {
		// Up to n probes, any font, those that draw the most first; past n, a font that
		// carries a meaningful share of the page.
		meaningful := float64(fontChars[f]) >= minFontShare*float64(total) || wholeLine[f]
		if len(out) >= max(n, maxFontProbes) || len(out) >= n && !meaningful {
			continue
		}
		best := -1
		for i, c := range cands {
			if c.Font == f && !taken[i] && (best < 0 || c.chars > cands[best].chars) {
				best = i
			}
		}
		if best >= 0 {
			taken[best] = true
			out = append(out, cands[best].Probe)
		}
	}
	// Then lines spread evenly down the page, skipping those taken.
	if left := n - len(out); left > 0 {
		free := make([]int, 0, len(cands))
		for i := range cands {
			if !taken[i] {
				free = append(free, i)
			}
		}
		k := min(left, len(free))
		for j := range k {
			out = append(out, cands[free[(2*j+1)*len(free)/(2*k)]].Probe)
		}
	}
	return out
}

// lineProbe is the probe of a line, its first words, and how many characters it holds (spaces
// aside).
func lineProbe(l Line) (Probe, int) {
	var words, glyphs []string
	known := true          // every word taken knows its glyphs
	var box pdfengine.Rect // the words' boxes together: text is turned by quarter turns only
	chars, length := 0, 0  // characters, and runes with the spaces between words
	for k, w := range l.Words {
		n := len([]rune(w.Text))
		if k > 0 && length+1+n > maxProbeChars {
			break
		}
		text, wq, parts := w.Text, w.Quad, w.parts
		if n > maxProbeChars {
			if k > 0 || len(w.parts) == 0 {
				break
			}
			// A long first word (a code, or a layer whose spaces are codes of their own too):
			// its first characters, cut where the last one's ink ends.
			var b strings.Builder
			cut := 0
			for cut < len(w.parts) && len([]rune(b.String())) < probeChars {
				b.WriteString(w.parts[cut])
				cut++
			}
			text, n, parts = b.String(), len([]rune(b.String())), w.parts[:cut]
			f := w.cuts[cut-1]
			wq[1] = geom.Point{X: wq[0].X + f*(wq[1].X-wq[0].X), Y: wq[0].Y + f*(wq[1].Y-wq[0].Y)}
			wq[2] = geom.Point{X: wq[3].X + f*(wq[2].X-wq[3].X), Y: wq[3].Y + f*(wq[2].Y-wq[3].Y)}
		}
		x0, y0, x1, y1 := wq.Bounds()
		box = union(box, pdfengine.Rect{X0: x0, Y0: y0, X1: x1, Y1: y1})
		words = append(words, text)
		glyphs = append(glyphs, parts...)
		known = known && len(parts) > 0
		for _, r := range text {
			if !unicode.IsSpace(r) {
				chars++
			}
		}
		if k > 0 {
			length++
		}
		length += n
		if length >= probeChars {
			break
		}
	}
	if len(words) == 0 {
		return Probe{}, 0
	}
	if !known {
		glyphs = nil
	}
	return Probe{Text: strings.Join(words, " "), Quad: quad(box, quadTurn(l.Quad), 1, 1), Font: l.Words[0].font, glyphs: glyphs}, chars
}

// Probe crops are drawn so that the text's box, with probePad of its height on each side across
// the baseline and twice that along it, is ProbeHeight pixels tall: the recognizer's input
// height, so that it reads the crop as drawn. A strip of n probes is n × ProbeHeight tall.
const (
	ProbeHeight = 48
	probePad    = 0.25
)

// DrawProbes draws each probe's words, from page p at the recognizer's height, one under the
// other in one image, and returns the image with each probe's box in it (clockwise from the
// text's top-left, as the recognizer's crops are given). w×h is the text layer's pixel space.
// Only the probes' areas are drawn: a few thousand pixels each, whatever the page; the strip is
// at most MaxProbeSide wide and (ProbeHeight+1)×len(probes) tall. Errors are the engine's, or
// ctx's.
func (d *Document) DrawProbes(ctx context.Context, p *Page, probes []Probe, w, h int) (*image.RGBA, []geom.Quad, error) {
	if d.format != FormatPDF || len(probes) == 0 {
		return nil, nil, fmt.Errorf("%w: nothing to draw", ErrBadSelection)
	}
	sx, sy := p.Width/float64(w), p.Height/float64(h) // layer pixels to display points
	type area struct {
		rect   pdfengine.Rect
		pw, ph int
		turn   int
	}
	areas := make([]area, len(probes))
	width, height := 0, 0
	for i, pr := range probes {
		x0, y0, x1, y1 := pr.Quad.Bounds()
		r := pdfengine.Rect{X0: x0 * sx, Y0: y0 * sy, X1: x1 * sx, Y1: y1 * sy}
		turn := quadTurn(pr.Quad)
		across, along := r.Y1-r.Y0, r.X1-r.X0
		if turn%2 == 1 {
			across, along = along, across
		}
		if !(across > 0 && along > 0) {
			return nil, nil, fmt.Errorf("%w: an empty probe", ErrBadSelection)
		}
		padA, padL := probePad*across, 2*probePad*across
		if turn%2 == 1 {
			r = pdfengine.Rect{X0: r.X0 - padA, Y0: r.Y0 - padL, X1: r.X1 + padA, Y1: r.Y1 + padL}
		} else {
			r = pdfengine.Rect{X0: r.X0 - padL, Y0: r.Y0 - padA, X1: r.X1 + padL, Y1: r.Y1 + padA}
		}
		// Pixels per point: the recognizer's height across the text, less where the probe would
		// be longer than MaxProbeSide (words of absurd spacing), which the recognizer then reads
		// shrunk rather than not at all.
		s := min(ProbeHeight/(across+2*padA), MaxProbeSide/math.Max(r.X1-r.X0, r.Y1-r.Y0))
		pw := max(1, int(math.Round((r.X1-r.X0)*s)))
		ph := max(1, int(math.Round((r.Y1-r.Y0)*s)))
		areas[i] = area{rect: r, pw: pw, ph: ph, turn: turn}
		width, height = max(width, pw), height+ph
	}
	strip := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(strip, strip.Rect, image.White, image.Point{}, draw.Src)
	quads := make([]geom.Quad, len(probes))
	y := 0
	for i, a := range areas {
		img, err := d.pdf.RenderArea(ctx, p.Number-1, a.rect, a.pw, a.ph)
		if err != nil {
			return nil, nil, pdfError(err)
		}
		draw.Draw(strip, image.Rect(0, y, a.pw, y+a.ph), img, image.Point{}, draw.Src)
		box := pdfengine.Rect{X0: 0, Y0: float64(y), X1: float64(a.pw), Y1: float64(y + a.ph)}
		quads[i] = quad(box, a.turn, 1, 1)
		y += a.ph
	}
	return strip, quads, nil
}

// MaxProbeSide bounds a probe's drawing, and so a strip's width: a probe of maxProbeChars
// characters is under 1 500 px long at the recognizer's height; a longer one is a word of absurd
// spacing, drawn smaller.
const MaxProbeSide = 4096

// quadTurn is the quarter turns, counter-clockwise as seen, of text whose box q starts at the
// text's own top-left corner (see quad).
func quadTurn(q geom.Quad) int {
	dx, dy := q[1].X-q[0].X, q[1].Y-q[0].Y
	switch {
	case math.Abs(dx) >= math.Abs(dy) && dx >= 0:
		return 0
	case math.Abs(dx) >= math.Abs(dy):
		return 2
	case dy < 0:
		return 1
	}
	return 3
}

// Reading is what OCR read in a probe's crop.
type Reading struct {
	Text  string
	Score float32
}

// Check is what the OCR of a page's probes says of its text layer.
type Check struct {
	// Probes were read: Agreed and Disagreed were compared with OCR; Unreadable are in a script
	// the recognizer does not read, and were judged by what the layer shows.
	Probes, Agreed, Disagreed, Unreadable int
	// Similarity is the mean character similarity of OCR's readings to the layer's text over
	// the compared probes (1: every character the same), 0 when none was compared.
	Similarity float64
	// Trusted says whether the layer is the page's text, Reason why.
	Trusted bool
	Reason  Reason
	// Fonts are the fonts every compared probe of which agreed, with their probes' mean
	// similarity: a later page of the same document drawn only with these need not be probed
	// (see Known).
	Fonts map[string]float64
	// Inherited is set on a check that read no probe of its own: every font of the page agreed
	// on an earlier page of the document (see Known).
	Inherited bool
	// Doubted are the fonts whose probes disagreed more often than they agreed on a page whose
	// other fonts' probes agreed: their lines are read again by OCR and the rest of the layer
	// kept (see TextLayer.Doubted), where they are few. A dingbat font's ornaments, a code font,
	// a font whose map is wrong cost their own lines, not the page.
	Doubted []string
}

// Fonts returns the fonts the layer's words are drawn with, each once.
func (tl *TextLayer) Fonts() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range tl.Lines {
		for _, w := range l.Words {
			if !seen[w.font] {
				seen[w.font] = true
				out = append(out, w.font)
			}
		}
	}
	return out
}

// Known is the check of a page drawn only with fonts that agreed on earlier pages of its
// document (known: each font's similarity there), without reading a probe: a layer goes wrong
// font by font, and one font of one document maps its codes the same way on every page. ok is
// false when any of the page's fonts is not known, or has no name (PDFium gave none).
func Known(fonts []string, known map[string]float64) (c Check, ok bool) {
	if len(fonts) == 0 {
		return Check{}, false
	}
	c = Check{Trusted: true, Reason: ReasonLayerAgrees, Inherited: true, Similarity: 1}
	for _, f := range fonts {
		sim, found := known[f]
		if !found || f == "" {
			return Check{}, false
		}
		c.Similarity = min(c.Similarity, sim)
	}
	return c, true
}

// The evidence, for the probes OCR can read.
const (
	// agreeSimilarity: a probe agrees when OCR's reading is this similar to the layer's text,
	// characters compared with the edit distance, spaces and case aside, characters the
	// recognizer does not know matching anything. Clean text reads at 0.9 to 1 (a character
	// or two misread); a layer that says nothing true at under 0.3 (see TestLayerCheck).
	agreeSimilarity = 0.7
	// minCompared: fewer letters and digits the recognizer reads than this, and a probe is
	// judged as text in a script it cannot read.
	minCompared = 3
	// foreignReading: OCR reading a probe of a script it cannot read with this confidence, and
	// at least minCompared characters, contradicts the layer: the crop shows text the
	// recognizer knows. On Arabic, it reads a few stray characters under 0.5.
	foreignReading = 0.8
)

// Judge compares OCR's readings of probes (in order) with the layer's text. reads says which
// characters the recognizer can read.
//
// A probe whose text the recognizer can read (most of its letters and digits are in its
// dictionary, once letters it lacks are taken without their accents: Polish ł reads as l, ó as
// o) agrees when OCR's reading is agreeSimilarity similar or more. Any other probe is text in a
// script the recognizer does not read, and cannot disagree with it; it is taken as the layer
// says when what the layer shows is consistent, that is when every character of it is
// assigned, printable Unicode (none unmapped, none private-use, no controls), each word's
// letters are of one script, no word starts with a combining mark, and OCR reads no text of its
// own in the crop: a confident reading of several characters it knows, beyond those of the
// layer's text it can read (the digits of an Arabic line), means the page shows text of a script
// it reads, not the one the layer claims.
//
// The layer is trusted when at least one probe agreed or was consistent, of a font whose probes
// do not disagree more often than they agree; the fonts whose probes do are Doubted, and the
// caller reads their lines again (see TextLayer.Doubted) or the page, where they are many.
func Judge(probes []Probe, readings []Reading, reads func(rune) bool) Check {
	c := Check{Probes: len(probes)}
	compared := 0
	type tally struct {
		agreed, disagreed int
		sim               float64
	}
	fonts := map[string]*tally{}
	for i, pr := range probes {
		var rd Reading
		if i < len(readings) {
			rd = readings[i]
		}
		t := fonts[pr.Font]
		if t == nil {
			t = &tally{}
			fonts[pr.Font] = t
		}
		want, optional, known := foldLayer(pr, reads)
		if known >= minCompared && 2*known >= len(want) {
			sim := similarity(want, optional, foldReading(rd.Text))
			c.Similarity += sim
			compared++
			if sim >= agreeSimilarity {
				c.Agreed++
				t.agreed++
				t.sim += sim
			} else {
				c.Disagreed++
				t.disagreed++
			}
			continue
		}
		if consistent(pr.Text) && !(rd.Score >= foreignReading && foreign(want, foldReading(rd.Text)) >= minCompared) {
			c.Unreadable++
		} else {
			c.Disagreed++
			t.disagreed++
		}
	}
	if compared > 0 {
		c.Similarity /= float64(compared)
	}
	agreed := 0 // probes that agreed, of fonts not doubted
	for f, t := range fonts {
		if t.disagreed > t.agreed {
			c.Doubted = append(c.Doubted, f)
			continue
		}
		agreed += t.agreed
		if t.agreed > 0 && t.disagreed == 0 {
			if c.Fonts == nil {
				c.Fonts = map[string]float64{}
			}
			c.Fonts[f] = t.sim / float64(t.agreed)
		}
	}
	slices.Sort(c.Doubted)
	switch {
	case agreed > 0:
		c.Trusted, c.Reason = true, ReasonLayerAgrees
	case c.Unreadable > 0:
		c.Trusted, c.Reason = true, ReasonLayerScript
	default:
		c.Reason, c.Fonts, c.Doubted = ReasonLayerDisagrees, nil, nil
	}
	return c
}

// Doubted returns the indices of the lines OCR should read again before the layer answers its
// page under check c: the lines with a word in a font c doubts, the garbled ones (see garbled),
// and those with a drawn character the layer has no Unicode for (U+FFFD: its font maps no
// Unicode to it, and none could be read from the font itself), which the probes cannot judge,
// since they compare only what the recognizer reads; and the share of the layer's characters
// they hold. A word the engine did not draw is the exception: OCR would read nothing there.
func (tl *TextLayer) Doubted(c Check) (lines []int, share float64) {
	total, doubted := 0, 0
	for i, l := range tl.Lines {
		n := 0
		bad := l.Garbled
		for _, w := range l.Words {
			n += len([]rune(w.Text))
			bad = bad || slices.Contains(c.Doubted, w.font) || !w.undrawn && strings.ContainsRune(w.Text, unicode.ReplacementChar)
		}
		total += n
		if bad {
			lines = append(lines, i)
			doubted += n
		}
	}
	if total == 0 {
		return lines, 0
	}
	return lines, float64(doubted) / float64(total)
}

// ReadAs puts OCR's reading of the line in place of the layer's text: its words placed along the
// line's box by their share of its characters.
func (l *Line) ReadAs(text string, score float32) {
	fields := strings.Fields(text)
	l.Text, l.ByOCR, l.Score = strings.Join(fields, " "), true, score
	l.Words = make([]Word, len(fields))
	total := float64(max(1, len([]rune(l.Text))))
	q := l.Quad
	at := func(f float64) (top, bottom geom.Point) {
		return geom.Point{X: q[0].X + f*(q[1].X-q[0].X), Y: q[0].Y + f*(q[1].Y-q[0].Y)},
			geom.Point{X: q[3].X + f*(q[2].X-q[3].X), Y: q[3].Y + f*(q[2].Y-q[3].Y)}
	}
	pos := 0
	for i, f := range fields {
		n := len([]rune(f))
		t0, b0 := at(float64(pos) / total)
		t1, b1 := at(float64(pos+n) / total)
		l.Words[i] = Word{Text: f, Quad: geom.Quad{t0, t1, b1, b0}}
		pos += n + 1
	}
}

// LineProbe is the probe of a whole line, to be read again by OCR in place of the layer's text
// (see Doubted).
func LineProbe(l Line) Probe {
	font := ""
	if len(l.Words) > 0 {
		font = l.Words[0].font
	}
	return Probe{Text: l.Text, Quad: l.Quad, Font: font}
}

// foldLayer turns a probe's text into what OCR's reading is compared with (see fold), each
// character the recognizer cannot read, even without its accents, a wildcard (0). known counts
// the characters that are not wildcards. optional marks the letters of a ligature after its
// first (the f and i of ﬃ): the recognizer reads a ligature's one glyph as its letters or as
// fewer of them (ﬃ as "fi", ﬀ as "f"), and either is the glyph read right.
func foldLayer(pr Probe, reads func(rune) bool) (out []rune, optional []bool, known int) {
	glyphs := pr.glyphs
	if glyphs == nil {
		glyphs = []string{pr.Text} // each character taken as a glyph of its own, below
	}
	for _, g := range glyphs {
		first := len(out)
		for _, r := range g {
			if unicode.IsSpace(r) {
				continue
			}
			tail := pr.glyphs != nil && len(out) > first
			if !reads(r) && !reads(base(r)) && !reads(unicode.ToLower(base(r))) && !reads(unicode.ToUpper(base(r))) {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					out, optional = append(out, 0), append(optional, tail)
				}
				continue
			}
			out, optional = append(out, fold(r)), append(optional, tail)
			known++
		}
	}
	return out, optional, known
}

// foreign counts the characters of OCR's reading that the layer's readable characters (want
// without its wildcards) do not account for: the reading less their longest common subsequence.
func foreign(want, got []rune) int {
	var known []rune
	for _, r := range want {
		if r != 0 {
			known = append(known, r)
		}
	}
	prev := make([]int, len(got)+1)
	cur := make([]int, len(got)+1)
	for i := 1; i <= len(known); i++ {
		for j := 1; j <= len(got); j++ {
			if known[i-1] == got[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return len(got) - prev[len(got)]
}

// foldReading is OCR's reading as it is compared with the layer's: see fold.
func foldReading(s string) []rune {
	var out []rune
	for _, r := range s {
		if !unicode.IsSpace(r) {
			out = append(out, fold(r))
		}
	}
	return out
}

// fold is a character as the comparison sees it: without its accents and its case (the
// recognizer reads ó as o, and a layer's ł is an l to it), the digits and letters it confuses
// for one another by their shape taken as one (0 and o; 1, l, i and |).
func fold(r rune) rune {
	r = unicode.ToLower(base(r))
	switch r {
	case '0':
		return 'o'
	case '1', 'i', '|', '!':
		return 'l'
	}
	return r
}

// base is a letter without its accents (ó → o), and the letters whose accent is not a
// combining mark: ł → l, ø → o, đ → d, ı → i.
func base(r rune) rune {
	switch r {
	case 'ł':
		return 'l'
	case 'ø':
		return 'o'
	case 'đ':
		return 'd'
	case 'ı':
		return 'i'
	case 'ħ':
		return 'h'
	}
	for _, b := range norm.NFD.String(string(r)) {
		return b
	}
	return r
}

// similarity is 1 − the edit distance between want and got over the longer's length; a 0 in
// want (a character the recognizer cannot read) matches any one character, and a character of
// want marked optional (a ligature's later letter) costs nothing to leave out and does not count
// in want's length.
func similarity(want []rune, optional []bool, got []rune) float64 {
	n := max(len(got), len(want)-countTrue(optional))
	if n == 0 {
		return 1
	}
	prev := make([]int, len(got)+1)
	cur := make([]int, len(got)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(want); i++ {
		drop := 1 // leaving want[i-1] out
		if optional[i-1] {
			drop = 0
		}
		cur[0] = prev[0] + drop
		for j := 1; j <= len(got); j++ {
			sub := prev[j-1]
			if want[i-1] != 0 && want[i-1] != got[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+drop, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(got)])/float64(n)
}

// consistent reports whether text the recognizer cannot read is what a font with a true Unicode
// map would give: every character assigned and printable (no replacement character, no private
// use, no controls), each word's letters of one script, and no word starting with a combining
// mark. A wrong map gives what these rule out: a producer's private codes, letters of several
// scripts mixed in a word (a code page read as another), marks with nothing to sit on.
func consistent(text string) bool {
	for _, word := range strings.Fields(text) {
		var script *unicode.RangeTable
		for i, r := range word {
			if r == unicode.ReplacementChar || isPrivateUse(r) || unicode.IsControl(r) || !unicode.IsPrint(r) {
				return false
			}
			if i == 0 && unicode.Is(unicode.Mn, r) {
				return false
			}
			if !unicode.IsLetter(r) {
				continue
			}
			s := scriptOf(r)
			if s == nil {
				return false
			}
			if script == nil {
				script = s
			} else if s != script {
				return false
			}
		}
	}
	return true
}

// scriptOf is the script of letter r, nil for none known.
func scriptOf(r rune) *unicode.RangeTable {
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}
