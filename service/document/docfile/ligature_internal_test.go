package docfile

import (
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// ligatureLine lays out "abcdef", the seven Latin ligatures (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) and "ghi" on one
// baseline, each letter or ligature one glyph of its own box, as pdf.js's copy_paste_ligatures.pdf
// draws them. oneByOne gives each ligature as PDFium gives a glyph its font maps to several
// letters: its letters one after the other, each with the ligature's box; otherwise as the
// ligature's own code (U+FB03).
func ligatureLine(oneByOne bool) []pdfengine.Char {
	glyphs := []string{"a", "b", "c", "d", "e", "f", "ff", "fi", "fl", "ffi", "ffl", "ſt", "st", "g", "h", "i"}
	codes := map[string]rune{"ff": 'ﬀ', "fi": 'ﬁ', "fl": 'ﬂ', "ffi": 'ﬃ', "ffl": 'ﬄ', "ſt": 'ﬅ', "st": 'ﬆ'}
	var out []pdfengine.Char
	x := 50.0
	for _, g := range glyphs {
		w := 5.0 * float64(len([]rune(g)))
		loose := pdfengine.Rect{X0: x, Y0: 92, X1: x + w, Y1: 102}
		ink := pdfengine.Rect{X0: x + 0.25, Y0: 93, X1: x + w - 0.25, Y1: 100}
		if c, ok := codes[g]; ok && !oneByOne {
			g = string(c)
		}
		for _, r := range g {
			out = append(out, pdfengine.Char{Rune: r, Box: ink, Loose: loose, Font: "F"})
		}
		x += w
	}
	return out
}

// TestLigaturesWhole: every ligature comes out as all its letters, however PDFium gives it; a
// ligature's letters are one part (one glyph) of their word.
func TestLigaturesWhole(t *testing.T) {
	for _, tc := range []struct {
		name     string
		oneByOne bool
		want     string
	}{
		{"letters one by one", true, "abcdeffffiflffifflſtstghi"},
		{"ligature codes", false, "abcdeffffiflffifflststghi"}, // NFKC: ﬅ is st
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Page{Width: 600, Height: 800, chars: ligatureLine(tc.oneByOne)}
			lines := p.Lines(600, 800)
			if len(lines) != 1 || len(lines[0].Words) != 1 {
				t.Fatalf("lines %+v, want one word", lines)
			}
			w := lines[0].Words[0]
			if w.Text != tc.want {
				t.Errorf("text %q, want %q", w.Text, tc.want)
			}
			if strings.Join(w.parts, "") != tc.want || len(w.parts) != 16 || len(w.cuts) != 16 {
				t.Errorf("parts %q (%d cuts), want the 16 glyphs of %q", w.parts, len(w.cuts), tc.want)
			}
		})
	}
}

// TestLigatureProbeAgrees: the recognizer reads a ligature as its letters or as fewer of them;
// either is the layer read right. On copy_paste_ligatures.pdf it read "abcdeffif" for
// "abcdefﬀﬁﬂﬃ", and the page, whose layer is exact, was OCR'd as text_layer_disagrees. Letters
// the layer has and the glyphs lack still count.
func TestLigatureProbeAgrees(t *testing.T) {
	latin := func(r rune) bool { return r < 0x17F }
	p := &Page{Width: 600, Height: 800, chars: ligatureLine(true)}
	lines := p.Lines(600, 800)
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	pr, _ := lineProbe(lines[0])
	if pr.Text != "abcdeffffiflffi" || !slices.Equal(pr.glyphs, []string{"a", "b", "c", "d", "e", "f", "ff", "fi", "fl", "ffi"}) {
		t.Fatalf("probe %q glyphs %q: cut inside a ligature", pr.Text, pr.glyphs)
	}
	for _, tc := range []struct {
		reading string
		agrees  bool
	}{
		{"abcdeffffiflffi", true},
		{"abcdeffif", true}, // the real misreading
		{"abcdef", false},   // a ligature's first letter is not optional
		{"xyzuvwqrst", false},
	} {
		c := Judge([]Probe{pr}, []Reading{{Text: tc.reading, Score: 0.9}}, latin)
		if (c.Agreed == 1) != tc.agrees {
			t.Errorf("reading %q: %+v, want agreed %v", tc.reading, c, tc.agrees)
		}
	}
	// Without the glyphs (a line read right to left), each letter counts.
	pr.glyphs = nil
	if c := Judge([]Probe{pr}, []Reading{{Text: "abcdeffif", Score: 0.9}}, latin); c.Agreed != 0 {
		t.Errorf("without glyphs: %+v, want the misreading to disagree", c)
	}
}

// TestUnmappedLinesDoubted: a line with a character its font maps to no Unicode (U+FFFD) is read
// again by OCR, however the probes of the page agreed: they compare only what the recognizer
// reads, and it reads no U+FFFD, so the layer's gap went unjudged ("There�s" on pdfminer's
// issue-00352 page, marked text_layer_agrees). A word the engine did not draw is not.
func TestUnmappedLinesDoubted(t *testing.T) {
	word := func(text string, undrawn bool) Word { return Word{Text: text, font: "F", undrawn: undrawn} }
	tl := &TextLayer{Lines: []Line{
		{Text: "Thursday meeting", Words: []Word{word("Thursday", false), word("meeting", false)}},
		{Text: "There\uFFFDs more", Words: []Word{word("There\uFFFDs", false), word("more", false)}},
		{Text: "\uFFFD", Words: []Word{word("\uFFFD", true)}},
	}}
	lines, share := tl.Doubted(Check{Trusted: true, Reason: ReasonLayerAgrees})
	if !slices.Equal(lines, []int{1}) {
		t.Errorf("doubted lines %v, want [1]", lines)
	}
	if share <= 0 || share >= 1 {
		t.Errorf("share %v", share)
	}
}
