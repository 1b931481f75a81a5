package receipts

import (
	"bytes"
	"image"
	"math"
	"strings"
	"testing"
)

// small is a receipt in the Go fonts only (no DejaVu needed): a tall heading, a comma inside a
// segment, right-aligned amounts, a rule, thermal wear and a slanted, curled, lit photo of it.
func small() Receipt {
	return Receipt{
		ID:  "small",
		Key: Key{Company: "TEST SHOP", Date: "01/02/2020", Address: "1, JALAN SATU", Total: "9.50"},
		Page: Page{Width: 300, Margin: 12, Leading: 1.4, Styles: []Style{{Font: GoRegular, Size: 16}, {Font: GoMonoBold, Size: 14, Tall: true}},
			Rows: []Row{
				centred(1, "TEST SHOP"),
				centred(0, "1, JALAN SATU"),
				rule,
				row(at(0, 0, "Tea"), right(1, 0, "3.50")),
				row(at(0, 0, "Cake"), right(1, 0, "6.00")),
				row(at(0, 1, "TOTAL"), right(1, 1, "9.50")),
			}},
		Wear: Wear{Seed: 1, Dots: true, Dropout: 0.05, WeakColumns: 2, WeakStrength: 0.5, Fade: 0.2, FadePeriod: 100},
		Shot: Capture{Seed: 1, Width: 360, Height: 320, Center: [2]float64{0.5, 0.5}, Angle: 3, Keystone: 0.05, Bow: 3,
			Paper: [3]float64{245, 245, 240}, Ink: [3]float64{20, 20, 20}, Background: [3]float64{90, 70, 50}, Texture: 5,
			EdgeShadow: 0.3, EdgeWidth: 4, Blur: 0.6, Noise: 2, Light: Light{Gradient: [2]float64{0.1, 0.1}, Vignette: 0.1}},
		Quality: 90,
		CRLF:    true,
	}
}

// TestBoxesHoldTheInk: every segment's box holds dark pixels, and the paper's dark pixels lie in
// some box (the rule aside), in the output's pixels after the slant, the curl and the turn.
func TestBoxesHoldTheInk(t *testing.T) {
	out, err := Render(small(), NewFonts(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Boxes) != 8 {
		t.Fatalf("%d boxes, want one per cell (8)", len(out.Boxes))
	}
	img := out.Image.(*image.RGBA)
	dark := func(x, y int) bool {
		if !(image.Point{x, y}.In(img.Rect)) {
			return false
		}
		i := img.PixOffset(x, y)
		return int(img.Pix[i])+int(img.Pix[i+1])+int(img.Pix[i+2]) < 3*110
	}
	inside := func(q Quad, x, y float64) bool { // convex, clockwise
		for k := range 4 {
			a, b := q[k], q[(k+1)%4]
			if (b[0]-a[0])*(y-a[1])-(b[1]-a[1])*(x-a[0]) < 0 {
				return false
			}
		}
		return true
	}
	for _, b := range out.Boxes {
		n := 0
		for y := 0; y < img.Rect.Dy(); y++ {
			for x := 0; x < img.Rect.Dx(); x++ {
				if dark(x, y) && inside(b.Quad, float64(x)+0.5, float64(y)+0.5) {
					n++
				}
			}
		}
		if n < 10*len(b.Text) {
			t.Errorf("box of %q holds %d dark pixels", b.Text, n)
		}
	}
	// The paper's own area, less a few pixels at its edge (the background is dark too): dark
	// pixels there are ink, and ink is in a box, except the rule's.
	stray := 0
	for y := 0; y < img.Rect.Dy(); y++ {
		for x := 0; x < img.Rect.Dx(); x++ {
			if !dark(x, y) {
				continue
			}
			in := false
			for _, b := range out.Boxes {
				in = in || inside(b.Quad, float64(x)+0.5, float64(y)+0.5)
			}
			if !in && paperAround(img, x, y) {
				stray++
			}
		}
	}
	if stray > 400 { // the rule: about 280 px long, a pixel or two thick
		t.Errorf("%d dark pixels of the paper are in no box", stray)
	}
}

// paperAround says whether the 9×9 square around (x, y) is mostly light: inside the paper, not
// on the background.
func paperAround(img *image.RGBA, x, y int) bool {
	light := 0
	for dy := -4; dy <= 4; dy++ {
		for dx := -4; dx <= 4; dx++ {
			p := image.Pt(x+dx, y+dy)
			if p.In(img.Rect) && img.Pix[img.PixOffset(p.X, p.Y)+1] > 180 {
				light++
			}
		}
	}
	return light > 40
}

// TestTruthFiles: the box file splits into eight numbers and the text, commas kept; CRLF when
// asked; the same receipt renders to the same pixels twice.
func TestTruthFiles(t *testing.T) {
	r := small()
	a, err := Render(r, NewFonts(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, crlf := range []bool{false, true} {
		file := string(BoxFile(a.Boxes, crlf))
		if crlf != strings.Contains(file, "\r\n") || strings.Count(file, "\n") != len(a.Boxes) {
			t.Errorf("crlf %v: %q", crlf, file)
		}
		for i, line := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(file, "\r\n", "\n"), "\n"), "\n") {
			if f := strings.SplitN(line, ",", 9); len(f) != 9 || f[8] != a.Boxes[i].Text {
				t.Errorf("line %d %q, want the text %q after eight numbers", i, line, a.Boxes[i].Text)
			}
		}
	}
	key, err := KeyFile(r.Key, true)
	if err != nil || !bytes.HasSuffix(key, []byte("}\r\n")) || bytes.Contains(bytes.ReplaceAll(key, []byte("\r\n"), nil), []byte("\n")) {
		t.Errorf("key file %q (%v), want CRLF throughout", key, err)
	}
	b, err := Render(r, NewFonts(""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Image.(*image.RGBA).Pix, b.Image.(*image.RGBA).Pix) {
		t.Error("two renders of one receipt differ")
	}
}

// TestMapping: the paper's corners land where the capture puts them, and backward undoes
// forward, the curl included.
func TestMapping(t *testing.T) {
	src := [4][2]float64{{0, 0}, {200, 0}, {200, 500}, {0, 500}}
	dst := [4][2]float64{{10, 20}, {190, 30}, {220, 480}, {-5, 470}}
	m := mapping{width: 200, bow: 4}
	m.h = homography(src, dst)
	m.inv = invert(m.h)
	for i, p := range src {
		if x, y := project(m.h, p[0], p[1]); math.Hypot(x-dst[i][0], y-dst[i][1]) > 1e-6 {
			t.Errorf("corner %d goes to (%g, %g), want %v", i, x, y, dst[i])
		}
	}
	for _, p := range [][2]float64{{0, 0}, {100, 250}, {37, 411}, {199, 3}} {
		x, y := m.forward(p[0], p[1])
		if bx, by := m.backward(x, y); math.Hypot(bx-p[0], by-p[1]) > 1e-6 {
			t.Errorf("%v → (%g, %g) → (%g, %g)", p, x, y, bx, by)
		}
	}
}

func TestMoney(t *testing.T) {
	for cents, want := range map[int]string{0: "0.00", 5: "0.05", 125000: "1,250.00", 123456789: "1,234,567.89", -1: "-0.01"} {
		if got := money(cents); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
}
