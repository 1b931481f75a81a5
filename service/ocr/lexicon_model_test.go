//go:build integration

package ocr_test

import (
	"context"
	"image"
	"image/draw"
	"strings"
	"testing"

	"golang.org/x/image/font"
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

	read := func(lexicon bool) string {
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
	without, with := read(false), read(true)
	t.Logf("without the lexicon %q, with it %q", without, with)
	if without == text {
		t.Fatalf("the recognizer read the broken e's right by itself (%q): the test no longer tests the lexicon", without)
	}
	if with != text {
		t.Errorf("read %q, want %q", with, text)
	}
}
