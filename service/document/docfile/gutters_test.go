package docfile_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
)

// justified sets words in justified lines between x0 and x1 from baseline y, leading apart: each
// word drawn on its own, the spaces of every full line stretched to fill the width, as a
// typesetter does. It returns what it drew and the lines' texts.
func justified(words []string, x0, x1, y, size, leading float64, rows int) ([]drawn, []string) {
	pdf := fpdf.New("P", "pt", "A4", "")
	pdf.SetFont("Helvetica", "", size)
	space := pdf.GetStringWidth(" ")
	var out []drawn
	var lines []string
	k := 0
	for r := 0; r < rows; r++ {
		var line []string
		w := 0.0
		for {
			word := words[k%len(words)]
			ww := pdf.GetStringWidth(word)
			if len(line) > 0 && w+space+ww > x1-x0 {
				break
			}
			if len(line) > 0 {
				w += space
			}
			line, w = append(line, word), w+ww
			k++
		}
		gap := space
		if len(line) > 1 {
			gap += (x1 - x0 - w) / float64(len(line)-1)
		}
		x := x0
		for _, word := range line {
			out = append(out, drawn{X: x, Y: y + float64(r)*leading, Size: size, Text: word})
			x += pdf.GetStringWidth(word) + gap
		}
		lines = append(lines, strings.Join(line, " "))
	}
	return out, lines
}

// TestLinesSplitAtColumnGutters: three justified columns of 8-point text set 9 points apart (a
// Federal Register page's gutter, about one text height) share their baselines. A line of one
// column and the line beside it are within reach of each other; they are cut at the gutter,
// which runs white down the page, and never at a word space, however far justification
// stretches it.
func TestLinesSplitAtColumnGutters(t *testing.T) {
	vocab := strings.Fields(`the agency proposes to amend its rules for the reporting of emissions
		from stationary sources and requests comment on the costs of compliance for small entities
		under the regulatory flexibility act within sixty days of publication in the register`)
	const size, leading, rows = 8.0, 9.5, 40
	var page []drawn
	want := map[string]bool{}
	x0, colW, gutter := 50.0, 158.0, 9.0
	for c := 0; c < 3; c++ {
		words := slices.Clone(vocab)
		for i := range words {
			words[i] = vocab[(i*(c+3))%len(vocab)]
		}
		d, lines := justified(words, x0, x0+colW, 80, size, leading, rows)
		page = append(page, d...)
		for _, l := range lines {
			want[l] = true
		}
		x0 += colW + gutter
	}
	// A single justified column under them, its spaces stretched: cut nowhere.
	wide, wideLines := justified(strings.Fields("a b reporting c emissions d costs e"), 50, 270, 80+rows*leading+20, size, leading, 6)
	page = append(page, wide...)
	for _, l := range wideLines {
		want[l] = true
	}
	// A numbered list with a hanging indent: its labels leave a white strip down the list, with
	// text at both sides, but a label is no column.
	y := 80 + rows*leading + 100
	for i := 1; i <= 4; i++ {
		label := "(" + string(rune('0'+i)) + ")"
		page = append(page, drawn{X: 50, Y: y, Size: size, Text: label},
			drawn{X: 68, Y: y, Size: size, Text: "Things I want to do at home"},
			drawn{X: 68, Y: y + leading, Size: size, Text: "do not get done because of my job."})
		want[label+" Things I want to do at home"] = true
		want["do not get done because of my job."] = true
		y += 2 * leading
	}
	data, _ := bornDigital(t, page)
	doc := open(t, data)
	p, err := doc.Page(ctxFor(t, time.Minute), 1)
	if err != nil {
		t.Fatal(err)
	}
	lines := p.Lines(int(p.Width), int(p.Height))
	if len(lines) != 3*rows+6+8 {
		t.Errorf("%d lines, want %d", len(lines), 3*rows+6+8)
	}
	for _, l := range lines {
		if !want[l.Text] {
			t.Errorf("line %q is not a line of one column", l.Text)
		}
	}
}
