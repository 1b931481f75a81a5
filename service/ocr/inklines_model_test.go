//go:build integration

package ocr_test

import (
	"context"
	"image"
	"image/draw"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/math/fixed"

	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// monoLine draws text in Go Mono Bold, a typewriter's face, black on white with a margin.
func monoLine(t *testing.T, text string, size float64) *image.RGBA {
	t.Helper()
	fc := faceOf(t, gomonobold.TTF, size)
	b, _ := font.BoundString(fc, text)
	m := int(size / 2)
	img := canvas((b.Max.X-b.Min.X).Ceil()+2*m, (b.Max.Y-b.Min.Y).Ceil()+2*m)
	d := font.Drawer{Dst: img, Src: image.Black, Face: fc, Dot: fixed.Point26_6{X: fixed.I(m) - b.Min.X, Y: fixed.I(m) - b.Min.Y}}
	d.DrawString(text)
	return img
}

// scanned is img as a 100-dpi scan thresholded to black and white gives it: fax's threshold
// without its speckle. Speckle is left out on purpose: a speck that breaks a box's frame or
// joins a stamp's characters to the next costs what this test looks for (see docs/pipeline.md,
// "What the detector leaves out").
func scanned(img *image.RGBA) *image.Gray {
	b := img.Bounds()
	out := image.NewGray(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if c := img.RGBAAt(x, y); int(c.R)+int(c.G)+int(c.B) >= 3*150 {
				out.Pix[out.PixOffset(x, y)] = 255
			}
		}
	}
	return out
}

// regionsIn is the text of the regions whose centre lies in r.
func regionsIn(regions []ocr.Region, r image.Rectangle) []string {
	var out []string
	for _, g := range regions {
		x0, y0, x1, y1 := g.Quad.Bounds()
		if image.Pt(int((x0+x1)/2), int((y0+y1)/2)).In(r) {
			out = append(out, g.Text)
		}
	}
	return out
}

// TestWhatTheDetectorLeavesOut reads a 100-dpi typewritten form, thresholded as a scan, with
// what DB finds least on such a page: choices typed as "(   )" before their labels, a Bates
// number in a typewriter face up the margin, and date boxes drawn wider than tall. The choices
// read "( )", the number whole as one region, and each empty box "☐". DB boxes none of the
// choices; it does box this rendered number, which the pieces of ink must then leave alone (a
// stamp it does not box is TestInkLines's, and FUNSD's three in docs/pipeline.md).
func TestWhatTheDetectorLeavesOut(t *testing.T) {
	const size = 15 // Go Mono Bold at 15 px: capitals about 9 px tall, as on a 100-dpi scan
	img := canvas(762, 560)
	labels := []string{"DOCUMENT COPIES ARE IN THE SAME SEQUENCE", "PAGE NUMBERS OF THE ORIGINAL", "PAGES MISSING FROM THE ORIGINAL"}
	var choices []image.Rectangle
	for i, s := range labels {
		y := 60 + i*60
		open, shut := monoLine(t, "(", size), monoLine(t, ")", size)
		paste(img, open, 60, y)
		paste(img, shut, 96, y)
		choices = append(choices, image.Rect(60, y, 96+shut.Bounds().Dx(), y+shut.Bounds().Dy()))
		paste(img, monoLine(t, s, size), 150, y)
	}
	stamp := imaging.Turn(monoLine(t, "00283913", size+2), 90)
	paste(img, stamp, 700, 280)
	sb := stamp.Bounds().Add(image.Pt(700, 280))
	var dates []image.Rectangle
	for i, s := range []string{"SEPT 21", "NOV 9"} {
		y := 300 + i*40
		line := monoLine(t, s, size)
		paste(img, line, 60, y)
		r := image.Rect(60+line.Bounds().Dx()+8, y+1, 60+line.Bounds().Dx()+8+40, y+19)
		for _, e := range []image.Rectangle{
			image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y),
			image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y),
		} {
			draw.Draw(img, e, image.Black, image.Point{}, draw.Src)
		}
		dates = append(dates, r)
	}
	res, err := pipeline(t).Run(context.Background(), encodePNG(t, scanned(img)))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range choices {
		got := regionsIn(res.Regions, r)
		t.Logf("choice %d reads %q", i, got)
		if len(got) != 1 || got[0] != "( )" {
			t.Errorf("choice %d at %v reads %q, want one region \"( )\"", i, r, got)
		}
	}
	got := regionsIn(res.Regions, sb.Inset(-4))
	t.Logf("the stamp reads %q", got)
	if len(got) != 1 || strings.ReplaceAll(got[0], " ", "") != "00283913" {
		t.Errorf("the stamp reads %q, want one region \"00283913\"", got)
	}
	for i, r := range dates {
		got := regionsIn(res.Regions, r)
		if len(got) != 1 || got[0] != "☐" {
			t.Errorf("date box %d at %v reads %q, want \"☐\"", i, r, got)
		}
	}
}
