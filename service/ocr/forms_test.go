//go:build integration

package ocr_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
)

// formLines are the small print of the rendered form: labels, fine print and field values as a
// scanned business form sets them.
var formLines = []string{
	"This message is intended only for the use of the addressee named above.",
	"Please return the signed copy to the Research Center by Friday.",
	"Compound source: Organic Chemistry, lot 4 received 9/3/80",
	"Report number 24-7716, notebook page 113, investigator H. S. Tong",
	"Copies to the following: accounting, quality control and the file.",
	"If you received this in error, notify the sender at once by telephone.",
	"Date of issue 12/ 04/ 95, form 1187-B, revised edition of March.",
	"Signature of the person in charge and the name of the department.",
	"Brand and style: Carlton 100's, tar and nicotine per cigarette.",
	"Total expenses: travel, lodging, meals and other, with receipts.",
}

// fax degrades img as a fax does: a hard threshold, then a few pixels of speckle flipped, the
// same ones every run.
func fax(img *image.RGBA, seed uint64) *image.Gray {
	b := img.Bounds()
	out := image.NewGray(b)
	rng := rand.New(rand.NewPCG(seed, 1))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			v := color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y
			g := uint8(255)
			if v < 150 {
				g = 0
			}
			if rng.IntN(400) == 0 {
				g = 255 - g
			}
			out.SetGray(x, y, color.Gray{Y: g})
		}
	}
	return out
}

// sizeForCapHeight is the Go Regular size whose capitals are capH pixels tall.
func sizeForCapHeight(t *testing.T, capH float64) float64 {
	b, _ := font.BoundString(face(t, 100), "H")
	return capH * 100 / float64((b.Max.Y - b.Min.Y).Round())
}

// TestSmallPrintForm reads a 100-dpi form's small print, degraded to fax quality, line by line (ten lines, a page of
// them, not a line or two):
// capitals 7, 9 and 12 px tall, some lines sitting on a ruling line with a frame's rule before
// them. From 9 px on, at least 95 % of the characters must read; at 7 px,
// 85 %.
func TestSmallPrintForm(t *testing.T) {
	// The enlarged pass over small print on (OCRGATE_DET_MAX_UPSCALE=2; opt-in), in strips.
	opt := pipeline(t).Options()
	opt.DetMaxUpscale = 2
	p, err := pipeline(t).With(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, capH := range []float64{7, 9, 12} {
		t.Run(fmt.Sprintf("%gpx", capH), func(t *testing.T) {
			size := sizeForCapHeight(t, capH)
			img := canvas(762, 1000)
			step := int(capH*3.2) + 6
			var bands []image.Rectangle
			for i, s := range formLines {
				line, ink := renderLine(t, s, size)
				x, y := 40+(i%2)*20, 60+i*step
				paste(img, line, x, y)
				band := ink.Add(image.Pt(x, y))
				bands = append(bands, band)
				if i%2 == 1 { // ruled: a rule under the line, a frame's rule before it
					draw.Draw(img, image.Rect(band.Min.X-4, band.Max.Y+3, 740, band.Max.Y+4), image.Black, image.Point{}, draw.Src)
					draw.Draw(img, image.Rect(band.Min.X-8, band.Min.Y-6, band.Min.X-6, band.Max.Y+8), image.Black, image.Point{}, draw.Src)
				}
			}
			res, err := p.Run(context.Background(), encodePNG(t, fax(img, uint64(capH))))
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for i, band := range bands {
				type piece struct {
					x    float64
					text string
				}
				var pieces []piece
				for _, r := range res.Regions {
					x0, y0, _, y1 := r.Quad.Bounds()
					if cy := (y0 + y1) / 2; cy >= float64(band.Min.Y) && cy <= float64(band.Max.Y) {
						pieces = append(pieces, piece{x0, r.Text})
					}
				}
				slices.SortFunc(pieces, func(a, b piece) int {
					if a.x < b.x {
						return -1
					}
					return 1
				})
				var texts []string
				for _, pc := range pieces {
					texts = append(texts, pc.text)
				}
				line := strings.Join(texts, " ")
				if line != formLines[i] {
					t.Logf("read %q, want %q", line, formLines[i])
				}
				want, got = append(want, formLines[i]), append(got, line)
			}
			acc := charAccuracy(strings.Join(want, "\n"), strings.Join(got, "\n"))
			t.Logf("capitals %g px (Go Regular %.1f px): characters %.3f", capH, size, acc)
			// 7 px capitals read 0.79 at the page's own scale, 0.88 with the enlarged second
			// detection pass (OCRGATE_DET_MAX_UPSCALE); 9 px 0.97 either way.
			floor := 0.95
			if capH < 9 {
				floor = 0.85
			}
			if acc < floor {
				t.Errorf("characters %.3f at %g px capitals, want at least %.2f", acc, capH, floor)
			}
		})
	}
}

// TestCheckBoxes reads a 100-dpi form's check boxes, degraded to fax quality: each box answers
// as a region of its own, ☐ or ☑ (marked with an X), where it is drawn, and the label beside it
// reads whole, with no O, D or 口 for the box glued to it. Capitals are 9 px tall, the boxes 13.
func TestCheckBoxes(t *testing.T) {
	type item struct {
		label  string
		marked bool
	}
	rows := [][]item{
		{{"Oral", false}, {"Dermal", true}, {"Inhalation", false}},
		{{"Saline", true}, {"Water", false}, {"Other", false}},
		{{"Yes", false}, {"No", true}, {"Pending", false}},
	}
	const side = 13
	size := sizeForCapHeight(t, 9)
	img := canvas(762, 320)
	type drawn struct {
		r      image.Rectangle
		marked bool
	}
	var boxes []drawn
	var bands []image.Rectangle
	for i, row := range rows {
		x, y := 60, 60+i*80
		band := image.Rect(0, y-10, 762, y+side+10)
		for _, it := range row {
			line, ink := renderLine(t, it.label, size)
			// The label's capitals sit on the box's lower part, as a form sets them.
			lx, ly := x+side+6, y+side-2-ink.Max.Y
			paste(img, line, lx-ink.Min.X, ly)
			r := image.Rect(x, y, x+side, y+side)
			for _, e := range []image.Rectangle{
				image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y),
				image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y),
			} {
				draw.Draw(img, e, image.Black, image.Point{}, draw.Src)
			}
			if it.marked {
				for k := 3; k < side-3; k++ {
					draw.Draw(img, image.Rect(x+k, y+k, x+k+2, y+k+1), image.Black, image.Point{}, draw.Src)
					draw.Draw(img, image.Rect(x+side-2-k, y+k, x+side-k, y+k+1), image.Black, image.Point{}, draw.Src)
				}
			}
			boxes = append(boxes, drawn{r, it.marked})
			x = lx + ink.Dx() + 40
		}
		bands = append(bands, band)
	}
	page := encodePNG(t, fax(img, 7))
	res, err := pipeline(t).Run(context.Background(), page)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range boxes {
		want := "☐"
		if b.marked {
			want = "☑"
		}
		found := false
		for _, r := range res.Regions {
			x0, y0, x1, y1 := r.Quad.Bounds()
			c := image.Pt(int((x0+x1)/2), int((y0+y1)/2))
			if c.In(b.r) {
				if r.Text != want {
					t.Errorf("box at %v reads %q, want %q", b.r, r.Text, want)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no region for the box at %v (%s)", b.r, want)
		}
	}
	for i, band := range bands {
		var words []string
		for _, r := range res.Regions {
			_, y0, _, y1 := r.Quad.Bounds()
			if cy := (y0 + y1) / 2; cy >= float64(band.Min.Y) && cy <= float64(band.Max.Y) && r.Text != "☐" && r.Text != "☑" {
				// A fax's speckles read as points and ticks: words are what is compared.
				for _, w := range strings.Fields(r.Text) {
					if w = strings.TrimFunc(w, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }); w != "" {
						words = append(words, w)
					}
				}
			}
		}
		var want []string
		for _, it := range rows[i] {
			want = append(want, strings.Fields(it.label)...)
		}
		slices.Sort(words)
		slices.Sort(want)
		if !slices.Equal(words, want) {
			t.Errorf("row %d reads %q, want the labels %q alone", i, words, want)
		}
	}
	// What the page read before boxes were found, for the record.
	opt := pipeline(t).Options()
	opt.CheckBoxes = false
	off, err := pipeline(t).With(opt)
	if err != nil {
		t.Fatal(err)
	}
	before, err := off.Run(context.Background(), page)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, r := range before.Regions {
		texts = append(texts, r.Text)
	}
	t.Logf("without check boxes: %q", texts)
}

// TestCondensedSmallPrint reads fine print set condensed (Go Regular at 11 px capitals, narrowed
// to 0.65 of its width) and degraded to fax quality. Read with too few recognizer timesteps a
// character, such a line loses the first letter of word after word ("If yo are n e innded reipie
// are heb ntifd a an demintin", as FUNSD's confidentiality notes read), the model keeping a space
// only in the blank runs; the pipeline reads it again wider and keeps the better reading.
func TestCondensedSmallPrint(t *testing.T) {
	lines := []string{
		"expenditures have been made, the amount, date, place, and reason for the expenditure.",
		"If you are not the intended recipient, you are hereby notified that any dissemination, distribution or copying of this",
		"responsible to deliver it to the intended recipient, you are hereby notified that any copying is prohibited.",
	}
	const capH, narrow = 11, 0.65
	size := sizeForCapHeight(t, capH)
	img := canvas(762, 200)
	var bands []image.Rectangle
	for i, s := range lines {
		// Drawn at twice the size and scaled down: a narrowed face, not a narrower one.
		l, ink := renderLine(t, s, size*2)
		b := l.Bounds()
		small := image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*narrow/2), b.Dy()/2))
		xdraw.CatmullRom.Scale(small, small.Rect, l, b, draw.Src, nil)
		x, y := 20, 20+i*int(capH*4)
		paste(img, small, x, y)
		bands = append(bands, image.Rect(x, y+ink.Min.Y/2, x+small.Rect.Dx(), y+ink.Max.Y/2))
	}
	res, err := pipeline(t).Run(context.Background(), encodePNG(t, fax(img, 5)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Regions {
		x0, y0, _, y1 := r.Quad.Bounds()
		if cy := (y0 + y1) / 2; x0 < 40 && cy >= float64(bands[1].Min.Y) && cy <= float64(bands[1].Max.Y) {
			got = append(got, r.Text)
		}
	}
	line := strings.Join(got, " ")
	acc := charAccuracy(lines[1], line)
	t.Logf("read %q: characters %.3f", line, acc)
	if acc < 0.9 {
		t.Errorf("characters %.3f, want at least 0.9: read %q", acc, line)
	}
}
