package ocr_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/anthonynsimon/bild/transform"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
)

var (
	engineOnce sync.Once
	emb        *engine.Engine
	engineErr  error
)

// pipeline returns the real pipeline on the embedded ONNX Runtime with default settings. The fast
// tier (-short) has no models: tests that need them skip there, and fake_test.go covers the
// pipeline's own logic on ocrtest's stand-in runtime.
func pipeline(t testing.TB) *ocr.Pipeline {
	t.Helper()
	testenv.Models(t)
	engineOnce.Do(func() {
		cfg, err := config.Load(nil, os.Getenv, os.Stderr)
		if err != nil {
			engineErr = err
			return
		}
		emb, engineErr = engine.Embedded(cfg)
	})
	if engineErr != nil {
		t.Fatalf("embedded runtime: %v", engineErr)
	}
	return emb.Pipeline
}

// face is Go Regular at size px.
func face(t testing.TB, size float64) font.Face { return faceOf(t, goregular.TTF, size) }

// faceOf is the font ttf at size px.
func faceOf(t testing.TB, ttf []byte, size float64) font.Face {
	t.Helper()
	f, err := opentype.Parse(ttf)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	return fc
}

// renderLine draws text in black on a white image just large enough for it (with a margin) and
// returns the image and the ink box of the text inside it.
func renderLine(t testing.TB, text string, size float64) (*image.RGBA, image.Rectangle) {
	fc := face(t, size)
	b, _ := font.BoundString(fc, text)
	margin := int(size / 2)
	w := (b.Max.X - b.Min.X).Ceil() + 2*margin
	h := (b.Max.Y - b.Min.Y).Ceil() + 2*margin
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.Black, Face: fc,
		Dot: fixed.Point26_6{X: fixed.I(margin) - b.Min.X, Y: fixed.I(margin) - b.Min.Y}}
	d.DrawString(text)
	ink := image.Rect(margin, margin, w-margin, h-margin)
	return img, ink
}

// paste draws src onto a white canvas at (x, y), treating transparent pixels as white.
func paste(dst *image.RGBA, src image.Image, x, y int) {
	r := src.Bounds().Sub(src.Bounds().Min).Add(image.Pt(x, y))
	draw.Draw(dst, r, src, src.Bounds().Min, draw.Over)
}

// drawLines renders lines at size on a white w×h canvas, line i at (margin+i·dx, margin+i·dy), and
// returns the canvas and each line's ink box.
func drawLines(t testing.TB, w, h int, lines []string, size float64, margin, dx, dy int) (*image.RGBA, []image.Rectangle) {
	t.Helper()
	img := canvas(w, h)
	var inks []image.Rectangle
	for i, s := range lines {
		line, ink := renderLine(t, s, size)
		x, y := margin+i*dx, margin+i*dy
		paste(img, line, x, y)
		inks = append(inks, ink.Add(image.Pt(x, y)))
	}
	return img, inks
}

func canvas(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// iou of the axis-aligned bounds of a region and a rectangle.
func iou(q ocr.Region, r image.Rectangle) float64 {
	x0, y0, x1, y1 := q.Quad.Bounds()
	ix := math.Min(x1, float64(r.Max.X)) - math.Max(x0, float64(r.Min.X))
	iy := math.Min(y1, float64(r.Max.Y)) - math.Max(y0, float64(r.Min.Y))
	if ix <= 0 || iy <= 0 {
		return 0
	}
	inter := ix * iy
	return inter / ((x1-x0)*(y1-y0) + float64(r.Dx()*r.Dy()) - inter)
}

func TestCleanLines(t *testing.T) {
	p := pipeline(t)
	lines := []string{"INVOICE NO 2024-1121", "Total Amount 89.50", "Thank you for shopping"}
	img, inks := drawLines(t, 900, 420, lines, 34, 40, 60, 120)
	res, err := p.Run(context.Background(), encodePNG(t, img))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Text, strings.Join(lines, "\n"); got != want {
		t.Fatalf("text = %q, want %q", got, want)
	}
	if len(res.Regions) != len(lines) {
		t.Fatalf("%d regions, want %d", len(res.Regions), len(lines))
	}
	for i, r := range res.Regions {
		if r.Text != lines[i] || r.Row != i || r.Order != i {
			t.Errorf("region %d = %q row %d order %d, want %q row %d", i, r.Text, r.Row, r.Order, lines[i], i)
		}
		// DB boxes are the ink box grown by the unclip margin, so they overlap it well but not exactly.
		if v := iou(r, inks[i]); v < 0.5 {
			t.Errorf("region %d box %v overlaps the drawn text %v with IoU %.2f, want ≥ 0.5", i, r.Quad, inks[i], v)
		}
		if r.Score < 0.9 {
			t.Errorf("region %d score %.3f, want ≥ 0.9 on clean print", i, r.Score)
		}
		if math.Abs(r.Quad.Angle()) > 2 {
			t.Errorf("region %d angle %.1f°, want level", i, r.Quad.Angle())
		}
	}
	if res.Width != 900 || res.Height != 420 || res.Format != "png" {
		t.Errorf("image info %dx%d %s", res.Width, res.Height, res.Format)
	}
}

func TestTurnedLines(t *testing.T) {
	p := pipeline(t)
	tests := []struct {
		name         string
		text         string
		angle        float64 // clockwise degrees, as bild rotates
		wantVertical bool
		wantFlipped  bool
		wantAngle    float64 // of the returned box's top edge (text direction)
		wantRotation int
	}{
		{"rotated 10 degrees", "ROTATED LINE 4521", 10, false, false, 10, 0},
		{"rotated minus 8 degrees", "Invoice Date 21/11", -8, false, false, -8, 0},
		// A page of one line is too few lines for a page vote: the line, read turned, turns the
		// page, which is then read upright (so the region itself is neither turned nor flipped).
		{"upside down", "UPSIDE DOWN 2718", 180, false, false, 180, 180},
		{"turned 90, bottom to top", "VERTICAL TEXT 77", -90, false, false, -90, 90},
		{"turned 90, top to bottom", "VERTICAL TEXT 77", 90, false, false, 90, 270},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, _ := renderLine(t, tt.text, 34)
			rot := transform.Rotate(line, tt.angle, &transform.RotationOptions{ResizeBounds: true})
			img := canvas(rot.Bounds().Dx()+80, rot.Bounds().Dy()+80)
			paste(img, rot, 40, 40)
			res, err := p.Run(context.Background(), encodePNG(t, img))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Regions) != 1 {
				t.Fatalf("%d regions (%q), want 1", len(res.Regions), res.Text)
			}
			if res.Rotation != tt.wantRotation {
				t.Errorf("rotation %d, want %d", res.Rotation, tt.wantRotation)
			}
			r := res.Regions[0]
			if r.Text != tt.text {
				t.Errorf("text = %q, want %q", r.Text, tt.text)
			}
			if r.Vertical != tt.wantVertical || r.Flipped != tt.wantFlipped {
				t.Errorf("vertical %v flipped %v, want %v %v", r.Vertical, r.Flipped, tt.wantVertical, tt.wantFlipped)
			}
			// The box's first corner is the text's own top-left, so its top edge points along the text.
			if d := math.Abs(math.Remainder(r.Quad.Angle()-tt.wantAngle, 360)); d > 3 {
				t.Errorf("box angle %.1f°, want %.1f°", r.Quad.Angle(), tt.wantAngle)
			}
		})
	}
}

// TestSpacedLineTurned reads a line of digits set apart (a phone number on a sign), turned on its
// side: the detector boxes its characters one by one, and the page, a column of single boxes, is
// still read as one line of a page on its side, and answers its turn.
func TestSpacedLineTurned(t *testing.T) {
	p := pipeline(t)
	const text = "139 2219 1631"
	fc := face(t, 40)
	adv := font.MeasureString(fc, "0").Ceil()
	gap := adv * 6 / 10 // white between the characters: the detector boxes each alone
	line := canvas(len(text)*(adv+gap)+40, 80)
	d := font.Drawer{Dst: line, Src: image.Black, Face: fc}
	for i, c := range text {
		d.Dot = fixed.P(20+i*(adv+gap), 55)
		d.DrawString(string(c))
	}
	for _, tt := range []struct {
		angle    float64 // clockwise
		rotation int
	}{{0, 0}, {90, 270}, {180, 180}, {-90, 90}} {
		t.Run(strconv.Itoa(tt.rotation), func(t *testing.T) {
			img := transform.Rotate(line, tt.angle, &transform.RotationOptions{ResizeBounds: true})
			res, err := p.Run(context.Background(), encodePNG(t, img))
			if err != nil {
				t.Fatal(err)
			}
			if res.Rotation != tt.rotation {
				t.Errorf("rotation %d, want %d", res.Rotation, tt.rotation)
			}
			if got := strings.Join(strings.Fields(res.Text), ""); got != strings.ReplaceAll(text, " ", "") {
				t.Errorf("read %q, want %q", res.Text, text)
			}
		})
	}
}

func TestBlankImage(t *testing.T) {
	res, err := pipeline(t).Run(context.Background(), encodePNG(t, canvas(640, 480)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Regions) != 0 || res.Text != "" {
		t.Errorf("blank image read as %q", res.Text)
	}
}

func TestCanceledContext(t *testing.T) {
	line, _ := renderLine(t, "CANCELED", 30)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pipeline(t).Run(ctx, encodePNG(t, line))
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDeterministic(t *testing.T) {
	p := pipeline(t)
	data := testenv.Receipt(t, "photo")
	a, err := p.Run(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Run(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != b.Text || len(a.Regions) != len(b.Regions) {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a.Text, b.Text)
	}
	for i := range a.Regions {
		if a.Regions[i].Quad != b.Regions[i].Quad || a.Regions[i].Score != b.Regions[i].Score {
			t.Errorf("region %d differs: %+v vs %+v", i, a.Regions[i], b.Regions[i])
		}
	}
}

// TestRecParallelSameResult: batches one at a time read exactly what batches in flight at once
// (the service's default) read.
func TestRecParallelSameResult(t *testing.T) {
	base := pipeline(t)
	data := testenv.Receipt(t, "dense")
	want, err := base.Run(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := engine.Charset(mustConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	opt := base.Options()
	if opt.BatchParallel < 2 {
		t.Fatalf("the default runs %d batches at once, want them in flight side by side", opt.BatchParallel)
	}
	opt.BatchParallel = 1
	par, err := ocr.New(emb.Runtime, cs, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := par.Run(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text || len(got.Regions) != len(want.Regions) {
		t.Fatalf("one batch at a time differs:\n%s\n---\n%s", got.Text, want.Text)
	}
}

// countingRuntime counts the crops the classifier and the recognizer are asked about.
type countingRuntime struct {
	ocr.Runtime
	mu    sync.Mutex
	crops int // classifier
	read  int // recognizer
}

func (c *countingRuntime) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	c.mu.Lock()
	switch m {
	case ocr.Classifier:
		c.crops += int(in.Shape[0])
	case ocr.Recognizer:
		c.read += int(in.Shape[0])
	}
	c.mu.Unlock()
	return c.Runtime.Infer(ctx, m, in)
}

// TestClassifierPageSample reads a page of 16 lines upright: the classifier sees only the sample
// of widest lines, nothing is turned and each line is read once (TestPageOrientation reads it
// turned).
func TestClassifierPageSample(t *testing.T) {
	base := pipeline(t)
	cs, err := engine.Charset(mustConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := &countingRuntime{Runtime: emb.Runtime}
	p, err := ocr.New(counter, cs, base.Options())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	img := canvas(700, 16*64+40)
	for i := range 16 {
		s := fmt.Sprintf("Total Amount %d.%02d", 10+i, (i*37)%100)
		lines = append(lines, s)
		line, _ := renderLine(t, s, 34)
		paste(img, line, 30+(i%3)*40, 20+i*64)
	}
	slices.Sort(lines)
	want := strings.Join(lines, "\n")
	for _, tt := range []struct {
		name        string
		img         image.Image
		wantFlipped bool
	}{
		{"upright", img, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			counter.crops, counter.read = 0, 0
			res, err := p.Run(context.Background(), encodePNG(t, tt.img))
			if err != nil {
				t.Fatal(err)
			}
			// Spaces aside (restoring them is the decoder's business, not the classifier's), every
			// line must read right: a crop turned the wrong way reads as garbage.
			var got []string
			for _, r := range res.Regions {
				got = append(got, strings.ReplaceAll(r.Text, " ", ""))
			}
			slices.Sort(got)
			if strings.Join(got, "\n") != strings.ReplaceAll(want, " ", "") {
				t.Errorf("lines = %q, want %q", got, lines)
			}
			for _, r := range res.Regions {
				if r.Flipped != tt.wantFlipped {
					t.Errorf("region %q flipped %v, want %v", r.Text, r.Flipped, tt.wantFlipped)
				}
			}
			sample := base.Options().ClsPageSample
			if tt.wantFlipped && counter.crops != len(lines) || !tt.wantFlipped && counter.crops != sample {
				t.Errorf("classifier read %d crops (sample %d, %d lines)", counter.crops, sample, len(lines))
			}
			// Each line is read once, a line the classifier votes to turn once more (both ways),
			// and a line whose reading may have lost a doubled character once more, wider.
			if tt.wantFlipped && counter.read < 2*len(lines) || counter.read > 2*len(lines)+len(lines)/4 ||
				!tt.wantFlipped && counter.read > len(lines)+len(lines)/4 {
				t.Errorf("recognizer read %d crops for %d lines", counter.read, len(lines))
			}
		})
	}
}

func mustConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Load(nil, os.Getenv, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHalfDecodeBoxes runs one page decoded whole and decoded at half size (Limits.HalfPixels):
// the half-size run must read the same lines and report its boxes in the file's pixels, on top
// of the whole run's and of the drawn text, with the file's size, also when the sides are odd.
// The text is drawn at an 80 px em, 9.6 pt at 600 dpi: the print the policy is meant for. At a
// 64 px em the half-size run lost the spaces of one line (its crops are upscaled to the
// recognizer's 48 px), which is why only images of 24 megapixels and more are shrunk.
// TestHalfDecodeSmallPrint: pages decoded at half size whose lines measure under
// HalfMinTextHeight are decoded again whole and read as the whole decode reads them. At a 64 px
// em (boxes of about 54 px) the half-size crops lost the spaces of a line; a 96 px em (74 px)
// stays at half size and reads right too. Both report their boxes in the file's pixels.
func TestHalfDecodeSmallPrint(t *testing.T) {
	p := pipeline(t)
	opt := p.Options()
	opt.Limits.HalfPixels = 1
	half, err := p.With(opt)
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"INVOICE NO 2024-1121 PAID", "Total Amount 89.50 RM", "Thank you for shopping here"}
	for _, em := range []float64{48, 64, 96} {
		t.Run(fmt.Sprint(em), func(t *testing.T) {
			w, h := int(20*em), int(9*em)
			img, inks := drawLines(t, w, h, lines, em, int(em), 0, int(2.5*em))
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
				t.Fatal(err)
			}
			res, err := half.Run(context.Background(), buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if res.Width != w || res.Height != h {
				t.Fatalf("size %d×%d, want %d×%d", res.Width, res.Height, w, h)
			}
			if res.Text != strings.Join(lines, "\n") {
				t.Fatalf("text %q, want %q", res.Text, strings.Join(lines, "\n"))
			}
			for i, r := range res.Regions {
				if v := iou(r, inks[i]); v < 0.5 {
					t.Errorf("region %d: box %v overlaps the drawn text %v with IoU %.2f, want ≥ 0.5", i, r.Quad, inks[i], v)
				}
			}
		})
	}
}

func TestHalfDecodeBoxes(t *testing.T) {
	p := pipeline(t)
	lines := []string{"INVOICE NO 2024-1121", "Total Amount 89.50", "Thank you for shopping"}
	img, inks := drawLines(t, 1501, 811, lines, 80, 60, 90, 240)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	opt := p.Options()
	opt.Limits.HalfPixels = 1
	opt.HalfMinTextHeight = 0 // this print would be decoded again whole (TestHalfDecodeSmallPrint)
	half, err := p.With(opt)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := p.Run(context.Background(), buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	res, err := half.Run(context.Background(), buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if res.Width != 1501 || res.Height != 811 || whole.Width != 1501 {
		t.Fatalf("sizes %d×%d (half) and %d×%d (whole), want 1501×811", res.Width, res.Height, whole.Width, whole.Height)
	}
	if res.Text != whole.Text || res.Text != strings.Join(lines, "\n") {
		t.Fatalf("half-size text %q, whole %q, want %q", res.Text, whole.Text, strings.Join(lines, "\n"))
	}
	for i, r := range res.Regions {
		x0, y0, x1, y1 := whole.Regions[i].Quad.Bounds()
		box := image.Rect(int(x0), int(y0), int(x1), int(y1))
		if v := iou(r, box); v < 0.85 {
			t.Errorf("region %d: half-size box %v against the whole decode's %v, IoU %.2f, want ≥ 0.85", i, r.Quad, whole.Regions[i].Quad, v)
		}
		if v := iou(r, inks[i]); v < 0.5 {
			t.Errorf("region %d: box %v overlaps the drawn text %v with IoU %.2f, want ≥ 0.5", i, r.Quad, inks[i], v)
		}
		for _, w := range r.Words {
			if wx0, _, wx1, _ := w.Quad.Bounds(); wx0 < float64(box.Min.X)-20 || wx1 > float64(box.Max.X)+20 {
				t.Errorf("region %d word %q at x %.0f…%.0f lies outside its line %v", i, w.Text, wx0, wx1, box)
			}
		}
	}
}

// TestPageOrientation reads a page of 16 lines as sent upright and turned a quarter, a half and
// three quarters clockwise. Each turn is found (rotation: how far the image must be turned back),
// every line reads as upright, and each region's box, in the coordinates of the image as sent,
// lies where the upright page's box of the same line lies once turned.
func TestPageOrientation(t *testing.T) {
	p := pipeline(t)
	var lines []string
	page := canvas(700, 16*64+40)
	for i := range 16 {
		s := fmt.Sprintf("Total Amount %d.%02d", 10+i, (i*37)%100)
		lines = append(lines, s)
		line, _ := renderLine(t, s, 34)
		paste(page, line, 30+(i%3)*40, 20+i*64)
	}
	upright, err := p.Run(context.Background(), encodePNG(t, page))
	if err != nil {
		t.Fatal(err)
	}
	centres := map[string]geom.Point{}
	for _, r := range upright.Regions {
		centres[strings.ReplaceAll(r.Text, " ", "")] = centre(r.Quad)
	}
	for _, s := range lines {
		if _, ok := centres[strings.ReplaceAll(s, " ", "")]; !ok {
			t.Errorf("upright page: line %q not read as one region", s)
		}
	}
	W, H := float64(page.Rect.Dx()), float64(page.Rect.Dy())
	for _, turn := range []int{0, 90, 180, 270} {
		t.Run(fmt.Sprintf("turned %d", turn), func(t *testing.T) {
			img := imaging.Turn(page, turn)
			res, err := p.Run(context.Background(), encodePNG(t, img))
			if err != nil {
				t.Fatal(err)
			}
			if want := (360 - turn) % 360; res.Rotation != want {
				t.Errorf("rotation %d, want %d", res.Rotation, want)
			}
			if got := strings.ReplaceAll(res.Text, " ", ""); got != strings.ReplaceAll(upright.Text, " ", "") {
				t.Errorf("text %q, want the upright page's %q", res.Text, upright.Text)
			}
			for _, r := range res.Regions {
				want, ok := centres[strings.ReplaceAll(r.Text, " ", "")]
				if !ok {
					continue // the text check names it
				}
				// Where the upright centre lands in the turned image.
				switch turn {
				case 90:
					want = geom.Point{X: H - want.Y, Y: want.X}
				case 180:
					want = geom.Point{X: W - want.X, Y: H - want.Y}
				case 270:
					want = geom.Point{X: want.Y, Y: W - want.X}
				}
				if c := centre(r.Quad); math.Hypot(c.X-want.X, c.Y-want.Y) > 6 {
					t.Errorf("%q: box centred at (%.0f,%.0f), want (%.0f,%.0f)", r.Text, c.X, c.Y, want.X, want.Y)
				}
			}
		})
	}
}

func centre(q geom.Quad) geom.Point {
	var c geom.Point
	for _, p := range q {
		c.X += p.X / 4
		c.Y += p.Y / 4
	}
	return c
}

// TestUprightGridOfTallCharacters reads a grid of single characters set apart, each at least twice
// as tall as wide ("1", "I", "l": a table of digits, a form's column of marks). Their boxes have the
// shapes of lines on a page lying on its side, and the page was answered rotation 90; read turned,
// they hold one character each, so the page is read as it stands: rotation 0, and its characters
// read as such (turned, a "1" lying down reads "一").
func TestUprightGridOfTallCharacters(t *testing.T) {
	p := pipeline(t)
	const chars = "1Il1I"
	page := canvas(1000, 900)
	for row := range 5 {
		for col := range 6 {
			glyph, ink := renderLine(t, string(chars[(row+col)%len(chars)]), 64)
			paste(page, glyph.SubImage(ink), 60+col*148, 40+row*170)
		}
	}
	res, err := p.Run(context.Background(), encodePNG(t, page))
	if err != nil {
		t.Fatal(err)
	}
	if res.Rotation != 0 {
		t.Errorf("rotation %d, want 0: an upright grid is not a page on its side", res.Rotation)
	}
	read := 0
	for _, c := range res.Text {
		if strings.ContainsRune("1IlL|", c) {
			read++
		}
	}
	if read < 10 {
		t.Errorf("%d of 30 characters read: %q", read, res.Text)
	}
}
