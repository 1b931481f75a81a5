package testdoc

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/go-pdf/fpdf"
)

// LayoutPage is a born-digital page laid out in columns, tables and headers, with the order its
// lines are read in.
type LayoutPage struct {
	Name string
	Text []Text
	// Lines are the page's lines in reading order: columns top to bottom, left column first; a
	// table row by row, its cells left to right; a header spanning the columns before them.
	Lines []string
}

// LayoutPages are the reading-order test pages: two columns, three columns, a column beside a
// table, and a header spanning two columns over a footer. Their prose is drawn from a fixed
// vocabulary by a seeded generator, so every run writes the same pages.
func LayoutPages() []LayoutPage {
	return []LayoutPage{twoColumns(), threeColumns(), columnBesideTable(), headerOverColumns()}
}

// A4 in points, and the margins of the layout pages.
const (
	a4W, a4H = 595.28, 841.89
	margin   = 50.0
)

// writer places wrapped prose and cells on a page and records its lines in reading order.
type writer struct {
	page LayoutPage
	rng  *rand.Rand
	pdf  *fpdf.Fpdf // measures strings
}

func newWriter(name string, seed uint64) *writer {
	pdf := fpdf.New("P", "pt", "A4", "")
	return &writer{page: LayoutPage{Name: name}, rng: rand.New(rand.NewPCG(seed, 26)), pdf: pdf}
}

func (w *writer) width(s string, size float64) float64 {
	w.pdf.SetFont("Helvetica", "", size)
	return w.pdf.GetStringWidth(s)
}

// line draws s with its left end at x and its baseline at y.
func (w *writer) line(x, y, size float64, s string) {
	w.page.Text = append(w.page.Text, Text{X: x, Y: y, Size: size, Text: s})
	w.page.Lines = append(w.page.Lines, s)
}

// centred draws s centred between x0 and x1.
func (w *writer) centred(x0, x1, y, size float64, s string) {
	w.line(x0+(x1-x0-w.width(s, size))/2, y, size, s)
}

// column fills the column between x0 and x1 from baseline y down to baseline bottom with
// paragraphs of prose, leading apart, an empty line between paragraphs, and returns the
// baseline under its last line.
func (w *writer) column(x0, x1, y, bottom, size, leading float64) float64 {
	for y <= bottom {
		words := w.sentence(20 + w.rng.IntN(40))
		var cur []string
		for _, word := range words {
			next := strings.Join(append(cur, word), " ")
			if len(cur) > 0 && w.width(next, size) > x1-x0 {
				w.line(x0, y, size, strings.Join(cur, " "))
				y += leading
				cur = nil
				if y > bottom {
					return y
				}
			}
			cur = append(cur, word)
		}
		if len(cur) > 0 {
			w.line(x0, y, size, strings.Join(cur, " "))
			y += leading
		}
		y += leading // the empty line between paragraphs
	}
	return y
}

// sentence is n words of prose, the first capitalised, with a full stop after the last.
func (w *writer) sentence(n int) []string {
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[w.rng.IntN(len(vocabulary))]
		if w.rng.IntN(12) == 0 {
			words[i] = fmt.Sprintf("%d", 10+w.rng.IntN(990))
		}
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	words[n-1] += "."
	return words
}

// vocabulary is the prose's words: common English and the words of invoices and reports.
var vocabulary = strings.Fields(`the of and to in a is that for it as was with be by on not he this are or his
from at which but have an they you were her she there one all we their can been has more if will would
about when so who what no out up into than them only other time new some could these two may first then
do any like my now over such our man me even most made after also did many before must through back
years where much your way well down should because each just those people how too little state good very
make world still own see men work long get here between both life being under never day same another know
while last might us great old year off come since against go came right used take three invoice total
amount payment account balance order delivery customer service report quarter budget office market
figure table column page section summary review audit tax rate price quantity item supplier contract
meeting committee member council board policy project schedule record notice public annual regional
average increase decrease during within across following included received approved requested
reported printed issued measured planned expected current previous monthly weekly daily`)

func twoColumns() LayoutPage {
	w := newWriter("two columns", 1)
	gutter := 20.0
	mid := a4W / 2
	w.column(margin, mid-gutter/2, 70, a4H-70, 10, 13)
	w.column(mid+gutter/2, a4W-margin, 70, a4H-140, 10, 13)
	return w.page
}

func threeColumns() LayoutPage {
	w := newWriter("three columns", 2)
	gutter := 16.0
	colW := (a4W - 2*margin - 2*gutter) / 3
	for c := range 3 {
		x0 := margin + float64(c)*(colW+gutter)
		w.column(x0, x0+colW, 70, a4H-70-float64(c)*60, 9, 11.5)
	}
	return w.page
}

func columnBesideTable() LayoutPage {
	w := newWriter("a column beside a table", 3)
	// The prose column on the left, the table on the right.
	w.column(margin, 300, 70, a4H-90, 10, 13)
	x := [3]float64{325, 450, 505} // item, quantity, amount
	y := 70.0
	w.line(x[0], y, 10, "Item")
	w.line(x[1], y, 10, "Qty")
	w.line(x[2], y, 10, "Amount")
	for range 24 {
		y += 20
		item := vocabulary[w.rng.IntN(len(vocabulary))] + " " + vocabulary[w.rng.IntN(len(vocabulary))]
		w.line(x[0], y, 10, item)
		w.line(x[1], y, 10, fmt.Sprintf("%d", 1+w.rng.IntN(40)))
		w.line(x[2], y, 10, fmt.Sprintf("%d.%02d", 1+w.rng.IntN(900), w.rng.IntN(100)))
	}
	return w.page
}

func headerOverColumns() LayoutPage {
	w := newWriter("a header spanning two columns", 4)
	w.centred(margin, a4W-margin, 70, 20, "Annual Review of the Regional Council")
	w.line(margin, 96, 10, "Published by the committee office for every member of the board and the public, with the figures of the year")
	gutter := 20.0
	mid := a4W / 2
	w.column(margin, mid-gutter/2, 130, a4H-110, 10, 13)
	w.column(mid+gutter/2, a4W-margin, 130, a4H-130, 10, 13)
	w.centred(margin, a4W-margin, a4H-60, 9, "Page 1 of 1 printed for the annual meeting")
	return w.page
}
