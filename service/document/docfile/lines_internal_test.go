package docfile

import (
	"cmp"
	"slices"
	"testing"

	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// run is text laid out for a test: each rune a glyph of one advance, on a baseline at y
// (display points, y down), with a font box from 0.8 of the size above the baseline to 0.2 below.
type run struct {
	x, y, size, advance float64
	text                string
}

// chars lays out runs in the order given, as a content stream would draw them, a space between
// runs.
func chars(runs ...run) []pdfengine.Char {
	var out []pdfengine.Char
	for _, r := range runs {
		x := r.x
		for _, c := range r.text {
			if c == ' ' {
				out = append(out, pdfengine.Char{Rune: ' '})
				x += r.advance
				continue
			}
			loose := pdfengine.Rect{X0: x, Y0: r.y - 0.8*r.size, X1: x + r.advance, Y1: r.y + 0.2*r.size}
			ink := pdfengine.Rect{X0: x + 0.05*r.advance, Y0: r.y - 0.7*r.size, X1: x + 0.95*r.advance, Y1: r.y}
			out = append(out, pdfengine.Char{Rune: c, Box: ink, Loose: loose, Font: "F"})
			x += r.advance
		}
		out = append(out, pdfengine.Char{Rune: ' ', Generated: true})
	}
	return out
}

func lineTexts(cs []pdfengine.Char) []string {
	p := &Page{Width: 600, Height: 800, chars: cs}
	var out []string
	for _, l := range p.Lines(600, 800) {
		out = append(out, l.Text)
	}
	return out
}

// TestLinesFromBaselines: a line is the glyphs of one baseline and one size. The cases are the
// real ones that were read as one line sorted by x (see docs/documents.md): a small line over a
// large one (a tax form's header), cells stacked less than a row apart beside a tall one (a
// timetable), an amount drawn over the end of its label (an invoice); and what must stay one
// line: a footnote mark before its line, fake bold, a ligature's letters, a word in a bold face.
func TestLinesFromBaselines(t *testing.T) {
	for _, c := range []struct {
		name  string
		chars []pdfengine.Char
		want  []string
	}{
		{
			name: "small line over a large one",
			chars: chars(
				run{x: 100, y: 60, size: 14, advance: 8, text: "Income Tax Return"},
				run{x: 100, y: 50, size: 7, advance: 3.5, text: "Department of the Treasury Internal Revenue Service"}),
			want: []string{"Department of the Treasury Internal Revenue Service", "Income Tax Return"},
		},
		{
			// The header of a US tax form: a form number 29 pt tall, then two lines within its
			// band, 7 and 14 pt tall, overlapping each other.
			name: "small lines beside a large form number, within its band",
			chars: chars(
				run{x: 50, y: 53, size: 29, advance: 12.5, text: "1040"},
				run{x: 109, y: 43.8, size: 7, advance: 3.4, text: "Department of the Treasury—Internal Revenue Service"},
				run{x: 109, y: 56.4, size: 14.2, advance: 6.5, text: "U.S. Individual Income Tax Return"}),
			want: []string{"1040", "Department of the Treasury—Internal Revenue Service", "U.S. Individual Income Tax Return"},
		},
		{
			// tracemonkey's authors: affiliation marks set at 0.77 of the line's size, raised
			// (neither one size with the line nor on its baseline), and the piece after them
			// beyond a line's reach of the name before them.
			name: "superscript marks between pieces of a line",
			chars: chars(
				run{x: 100, y: 147.54, size: 9.8, advance: 5, text: "Andreas Gal"},
				run{x: 155, y: 143.2, size: 7.5, advance: 5.65, text: "∗+"},
				run{x: 166.8, y: 147.54, size: 9.8, advance: 5, text: ", Brendan Eich"}),
			want: []string{"Andreas Gal ∗+ , Brendan Eich"}, // the spaces are the runs' (see chars)
		},
		{
			name: "cells stacked half a row apart beside a tall cell",
			chars: chars(
				run{x: 100, y: 100, size: 6, advance: 3.4, text: "11:50"},
				run{x: 100, y: 105.3, size: 6, advance: 3.4, text: "11:55"},
				run{x: 118, y: 103, size: 6, advance: 3.4, text: "Tesla"},
				run{x: 100, y: 110.6, size: 6, advance: 3.4, text: "12:00"}),
			want: []string{"11:50", "11:55", "Tesla", "12:00"},
		},
		{
			name: "an amount drawn over the end of its label",
			chars: chars(
				run{x: 46, y: 582, size: 9.3, advance: 4.9, text: "Montant du prélèvement :"},
				run{x: 140, y: 582, size: 9.3, advance: 5.1, text: "29.99 €"}),
			want: []string{"Montant du prélèvement :", "29.99 €"},
		},
		{
			name: "a footnote mark before its line",
			chars: chars(
				run{x: 50, y: 97, size: 6, advance: 3, text: "1"},
				run{x: 53, y: 100, size: 10, advance: 5, text: "Preliminary report"}),
			want: []string{"1 Preliminary report"},
		},
		{
			// A font-size sample sheet: "5" set in 5 pt just under a heading's first letters,
			// within its band, is a line of its own.
			name: "a small number under a heading's first letters",
			chars: chars(
				run{x: 71, y: 95, size: 20, advance: 10, text: "Arial font"},
				run{x: 72, y: 99, size: 5, advance: 2.8, text: "5"}),
			want: []string{"Arial font", "5"},
		},
		{
			name: "a word in another face of the same size",
			chars: chars(
				run{x: 50, y: 100, size: 10, advance: 5, text: "Total"},
				run{x: 80, y: 100.4, size: 11, advance: 5.5, text: "29.99"}),
			want: []string{"Total 29.99"},
		},
		{
			name: "a tall brace beside two lines",
			chars: chars(
				run{x: 50, y: 100, size: 8, advance: 4, text: "Married resident"},
				run{x: 120, y: 106, size: 24, advance: 6, text: "}"},
				run{x: 50, y: 112, size: 8, advance: 4, text: "Married nonresident"}),
			want: []string{"Married resident", "}", "Married nonresident"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := lineTexts(c.chars)
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("lines %q, want %q", got, c.want)
			}
		})
	}
}

// TestDoubleLetters: fake bold's copies are dropped, a real double letter is not. PDFium gives a
// ligature (ﬀ in "différer" on a French invoice) as its letters one after the other with the
// ligature's box; fake bold draws its copy a fraction of a point off, or after the run.
func TestDoubleLetters(t *testing.T) {
	lig := chars(run{x: 50, y: 100, size: 10, advance: 5, text: "dif"})
	lig = lig[:len(lig)-1]
	ff := lig[len(lig)-1]
	ff.Box.X1 += 3
	ff.Loose.X1 += 3
	lig[len(lig)-1] = ff
	lig = append(lig, ff)
	rest := chars(run{x: 68, y: 100, size: 10, advance: 5, text: "érer"})
	lig = append(lig, rest...)

	bold := chars(run{x: 50, y: 100, size: 10, advance: 5, text: "TOTAL"})
	var perChar []pdfengine.Char
	for _, c := range bold {
		perChar = append(perChar, c)
		if c.Rune != ' ' {
			c.Box.X0, c.Box.X1 = c.Box.X0+0.3, c.Box.X1+0.3
			c.Loose.X0, c.Loose.X1 = c.Loose.X0+0.3, c.Loose.X1+0.3
			perChar = append(perChar, c)
		}
	}
	again := append(chars(run{x: 50, y: 100, size: 10, advance: 5, text: "AMOUNT PAID"}),
		chars(run{x: 50.7, y: 100.2, size: 10, advance: 5, text: "AMOUNT PAID"})...)
	for _, c := range []struct {
		name  string
		chars []pdfengine.Char
		want  string
	}{
		{"a ligature's letters", lig, "différer"},
		{"each letter drawn twice", perChar, "TOTAL"},
		{"a line drawn again", again, "AMOUNT PAID"},
		{"a real double letter", chars(run{x: 50, y: 100, size: 10, advance: 5, text: "tree will"}), "tree will"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := lineTexts(c.chars)
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("lines %q, want [%q]", got, c.want)
			}
		})
	}
}

// glyphsOf places chars as group does, each a glyph of its own, in the order given.
func glyphsOf(cs []pdfengine.Char) []glyph {
	var gl []glyph
	for _, c := range cs {
		if c.Rune == ' ' || c.Generated {
			continue
		}
		u0, u1, v0, v1 := frame(c.Loose, 0)
		i0, i1, _, _ := frame(c.Box, 0)
		gl = append(gl, glyph{r: c.Rune, box: c.Box, u0: u0, u1: u1, v0: v0, v1: v1, i0: i0, i1: i1, prev: len(gl) - 1})
	}
	return gl
}

// TestGarbled: the check that catches two lines read as one by a sort along the baseline, as
// lines were built before they were built by baseline: the header of a tax form (a small line over
// a large one), two timetable cells stacked less than a row apart, an amount drawn over its
// label. One line, a line with a subscript, and a condensed font whose letters overlap are not
// garbled.
func TestGarbled(t *testing.T) {
	condensed := chars(run{x: 72, y: 200, size: 40, advance: 7, text: "transport actif"})
	for i := range condensed {
		condensed[i].Loose.X1 += 5 // each letter's box reaches well into the next one's
	}
	for _, c := range []struct {
		name  string
		chars []pdfengine.Char
		want  bool
	}{
		{"a small line over a large one", chars(
			run{x: 109, y: 56.4, size: 14.2, advance: 6.5, text: "U.S. Individual Income Tax Return"},
			run{x: 109, y: 43.8, size: 7, advance: 3.4, text: "Department of the Treasury—Internal Revenue Service"}), true},
		{"cells stacked half a row apart", chars(
			run{x: 100, y: 100, size: 6, advance: 3.4, text: "11:50"},
			run{x: 100, y: 103, size: 6, advance: 3.4, text: "12:05"}), true},
		{"an amount over its label", chars(
			run{x: 46, y: 582, size: 9.3, advance: 4.9, text: "Montant du prélèvement :"},
			run{x: 140, y: 582, size: 9.3, advance: 5.1, text: "29.99 €"}), true},
		{"one line", chars(run{x: 46, y: 582, size: 9.3, advance: 4.9, text: "Montant du prélèvement : 29.99 €"}), false},
		{"a subscript", chars(
			run{x: 50, y: 100, size: 10, advance: 5, text: "baisse du HCO"},
			run{x: 115, y: 102, size: 6, advance: 3, text: "3"},
			run{x: 118, y: 100, size: 10, advance: 5, text: " plasmatique"}), false},
		{"a condensed font", condensed, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			gl := glyphsOf(c.chars)
			idx := make([]int, len(gl))
			for i := range idx {
				idx[i] = i
			}
			// The lines merged as a sort by x merged them.
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(gl[a].middle(), gl[b].middle()) })
			if got := garbled(gl, idx); got != c.want {
				t.Errorf("garbled %v, want %v", got, c.want)
			}
		})
	}
}
