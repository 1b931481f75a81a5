//go:build integration

package ocr_test

import (
	"context"
	"image"
	"image/draw"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/math/fixed"
)

// TestLexiconBrokenType reads a line whose e's lost their crossbars, as a worn typewriter's or
// a fax's do: the recognizer alone reads c's where the crossbar is worn through ("dcpartmcnt
// preparcd"), with the e as its second choice, and the lexicon puts the words right. Words whose letters are whole,
// and the line's numbers, read the same with it and without it.
func TestLexiconBrokenType(t *testing.T) {
	const text = "Form 1187-B: the department prepared the order"
	broken := map[string]bool{"department": true, "prepared": true}
	const size = 15.0
	fc := face(t, size)
	img, ink := renderLine(t, text, size)
	// The dot's start, as renderLine placed it.
	b, _ := font.BoundString(fc, text)
	x0 := fixed.I(ink.Min.X) - b.Min.X
	baseline := (fixed.I(ink.Min.Y) - b.Min.Y).Round()
	eb, _ := font.BoundString(fc, "e")
	start := 0
	for _, word := range strings.Fields(text) {
		at := strings.Index(text[start:], word) + start
		start = at + len(word)
		if !broken[word] {
			continue
		}
		for i := range len(word) {
			if word[i] != 'e' {
				continue
			}
			x := x0 + font.MeasureString(fc, text[:at+i])
			// The crossbar's rows, from 40 % to 80 % of the glyph's width: a crossbar worn through
			// in the middle. Erased whole, the e is a c to the model as well (its odds under
			// 0.02), and stays one.
			top, bot := baseline+eb.Min.Y.Round(), baseline+eb.Max.Y.Round()
			mid := (top + bot) / 2
			w := (eb.Max.X - eb.Min.X).Round()
			left := (x + eb.Min.X).Round() + w*4/10
			right := (x + eb.Min.X).Round() + w*8/10
			draw.Draw(img, image.Rect(left, mid-2, right, mid+1), image.White, image.Point{}, draw.Src)
		}
	}
	page := canvas(img.Bounds().Dx()+80, img.Bounds().Dy()+80)
	paste(page, img, 40, 40)
	png := encodePNG(t, page)

	without, with := readLexicon(t, png, false), readLexicon(t, png, true)
	t.Logf("without the lexicon %q, with it %q", without, with)
	if without == text {
		t.Fatalf("the recognizer read the broken e's right by itself (%q): the test no longer tests the lexicon", without)
	}
	if with != text {
		t.Errorf("read %q, want %q", with, text)
	}
}

// readLexicon is what the pipeline reads of png, its regions' texts joined by spaces, with the
// installed lexicon or without one.
func readLexicon(t *testing.T, png []byte, lexicon bool) string {
	t.Helper()
	opt := pipeline(t).Options()
	if !lexicon {
		opt.Lexicon = nil
	} else if opt.Lexicon == nil {
		t.Fatal("the pipeline has no lexicon: make models installs models/words.txt")
	}
	p, err := pipeline(t).With(opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), png)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, r := range res.Regions {
		parts = append(parts, r.Text)
	}
	return strings.Join(parts, " ")
}

// typewritten draws text in Go Mono at size px, each character in a cell one pixel wider than
// the face's: a typewriter's fixed pitch, which leaves an l or an i blank on both sides.
func typewritten(t *testing.T, text string, size float64) *image.RGBA {
	t.Helper()
	fc := faceOf(t, gomono.TTF, size)
	adv, _ := fc.GlyphAdvance('M')
	pitch := adv + fixed.I(1)
	m := int(size)
	img := canvas((fixed.Int26_6(len(text))*pitch).Ceil()+2*m, int(size*2))
	x := fixed.I(m)
	for _, r := range text {
		d := font.Drawer{Dst: img, Src: image.Black, Face: fc, Dot: fixed.Point26_6{X: x, Y: fixed.I(int(size * 1.4))}}
		d.DrawString(string(r))
		x += pitch
	}
	return img
}

// TestLexiconSplitWords reads words set at a typewriter's pitch, where the narrow letters leave
// gaps in which the decoder restores a space ("Pennsyl vania"): the lexicon takes it out again.
func TestLexiconSplitWords(t *testing.T) {
	for _, tt := range []struct {
		text string
		size float64
	}{
		{"Pennsylvania", 11},
		{"Louisiana", 13},
	} {
		t.Run(tt.text, func(t *testing.T) {
			img := typewritten(t, tt.text, tt.size)
			page := canvas(img.Bounds().Dx()+80, img.Bounds().Dy()+80)
			paste(page, img, 40, 40)
			png := encodePNG(t, page)
			without, with := readLexicon(t, png, false), readLexicon(t, png, true)
			t.Logf("without the lexicon %q, with it %q", without, with)
			if !strings.Contains(without, " ") {
				t.Fatalf("read %q without the lexicon, with no space restored: the test no longer tests the joins", without)
			}
			if with != tt.text {
				t.Errorf("read %q, want %q", with, tt.text)
			}
		})
	}
}
