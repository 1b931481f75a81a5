//go:build integration

package ocr_test

import (
	"context"
	"fmt"
	"image"
	"image/draw"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// letterSpaced are headings set with space between their letters, as a letterhead or a form's
// title sets them.
var letterSpaced = []string{
	"DAVIS POLK & WARDWELL",
	"CONFIDENTIAL",
	"SUMMARY OF RESULTS",
	"Research Center",
	"ORDER FORM 1187",
}

// drawSpaced draws text at (x, y) (the top of its ink) with track pixels between its letters
// and word pixels for a space, and returns the ink box.
func drawSpaced(t *testing.T, img *image.RGBA, text string, size float64, track, word int, x, y int) image.Rectangle {
	fc := face(t, size)
	m := fc.Metrics()
	d := font.Drawer{Dst: img, Src: image.Black, Face: fc, Dot: fixed.Point26_6{X: fixed.I(x), Y: fixed.I(y) + m.Ascent}}
	for _, r := range text {
		if r == ' ' {
			d.Dot.X += fixed.I(word)
			continue
		}
		d.DrawString(string(r))
		d.Dot.X += fixed.I(track)
	}
	return image.Rect(x, y, d.Dot.X.Ceil(), y+(m.Ascent+m.Descent).Ceil())
}

// TestLetterSpacedHeadings reads letter-spaced headings on a rendered page (with lines of
// ordinary text, degraded to fax quality) as words: "D A V I S  P O L K" is "DAVIS POLK". Read
// as the recognizer spaces them, none of the 15 read right ("C O N F I D E N T I A L"); at
// least 6 must now, the rest a space or a speck's mark away ("CON FIDENTIAL").
func TestLetterSpacedHeadings(t *testing.T) {
	p := pipeline(t)
	total := 0
	defer func() {
		if total < 6 {
			t.Errorf("%d of %d headings read as words, want at least 6", total, 3*len(letterSpaced))
		}
	}()
	for _, tt := range []struct {
		size        float64
		track, word int
	}{
		{20, 7, 22},
		{16, 6, 18},
		{24, 10, 28},
	} {
		t.Run(fmt.Sprintf("%gpx track %d", tt.size, tt.track), func(t *testing.T) {
			img := canvas(900, 1000)
			var bands []image.Rectangle
			for i, s := range letterSpaced {
				bands = append(bands, drawSpaced(t, img, s, tt.size, tt.track, tt.word, 60, 60+i*150))
				line, _ := renderLine(t, formLines[i], sizeForCapHeight(t, 12))
				draw.Draw(img, line.Bounds().Add(image.Pt(60, 120+i*150)), line, image.Point{}, draw.Over)
			}
			res, err := p.Run(context.Background(), encodePNG(t, fax(img, 3)))
			if err != nil {
				t.Fatal(err)
			}
			exact := 0
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
				got := strings.Join(texts, " ")
				if got == letterSpaced[i] {
					exact++
				} else {
					t.Logf("read %q, want %q", got, letterSpaced[i])
				}
			}
			t.Logf("%d of %d headings read as words", exact, len(letterSpaced))
			total += exact
		})
	}
}
