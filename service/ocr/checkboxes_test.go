package ocr

import (
	"image"
	"image/color"
	"slices"
	"testing"
)

// scene is a white page with black rectangles drawn on it.
func scene(w, h int, rects ...image.Rectangle) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for _, r := range rects {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetGray(x, y, color.Gray{})
			}
		}
	}
	return img
}

// frame is a square frame of side s and stroke 1 at (x, y).
func frame(x, y, s int) []image.Rectangle {
	return []image.Rectangle{
		image.Rect(x, y, x+s, y+1), image.Rect(x, y+s-1, x+s, y+s),
		image.Rect(x, y, x+1, y+s), image.Rect(x+s-1, y, x+s, y+s),
	}
}

// rectFrame is a frame w wide and h tall, of stroke 1, at (x, y).
func rectFrame(x, y, w, h int) []image.Rectangle {
	return []image.Rectangle{
		image.Rect(x, y, x+w, y+1), image.Rect(x, y+h-1, x+w, y+h),
		image.Rect(x, y, x+1, y+h), image.Rect(x+w-1, y, x+w, y+h),
	}
}

// cross is an X drawn inside a frame of side s at (x, y).
func cross(x, y, s int) []image.Rectangle {
	var out []image.Rectangle
	for i := 2; i < s-2; i++ {
		out = append(out, image.Rect(x+i, y+i, x+i+1, y+i+1), image.Rect(x+s-1-i, y+i, x+s-i, y+i+1))
	}
	return out
}

// print is a label of n letters h pixels tall from (x, y) at its top: upright strokes with a
// bar over each, as far apart as letters.
func print(x, y, h, n int) []image.Rectangle {
	var out []image.Rectangle
	for i := range n {
		lx := x + 6*i
		out = append(out, image.Rect(lx, y, lx+1, y+h), image.Rect(lx, y, lx+4, y+1))
	}
	return out
}

func TestFindCheckBoxes(t *testing.T) {
	const lineHeight = 14
	for _, tt := range []struct {
		name   string
		rects  []image.Rectangle
		marked []bool // the boxes found, left to right, and whether each is marked
	}{
		{"an empty box before its label", slices.Concat(frame(40, 40, 11), print(55, 42, 8, 3)), []bool{false}},
		{"a marked box", slices.Concat(frame(40, 40, 11), cross(40, 40, 11), print(55, 42, 8, 3)), []bool{true}},
		{"a box alone", frame(40, 40, 11), []bool{false}},
		// A scan thickens a side by a column that stands outside the top edge's run, where
		// the top and bottom edges stop (seen on FUNSD): the frame reaches to that column, and
		// the two blank columns after it are counted from there.
		{"a side one column outside the top edge", slices.Concat(frame(40, 40, 11), []image.Rectangle{image.Rect(51, 41, 52, 51)}, print(55, 42, 8, 3)), []bool{false}},
		{"two boxes on a row", slices.Concat(frame(40, 40, 10), print(54, 42, 7, 2), frame(90, 40, 10), cross(90, 40, 10), print(104, 42, 7, 2)), []bool{false, true}},
		// A square of the print's own height (a capital O or D at this size) is a letter.
		{"as tall as the print after it", slices.Concat(frame(40, 40, 9), print(52, 40, 9, 3)), nil},
		// The next letter one column after it: a word starting with a capital.
		{"a letter one column after it", slices.Concat(frame(40, 40, 11), print(52, 43, 7, 3)), nil},
		{"a letter just before it", slices.Concat(print(30, 40, 11, 1), frame(36, 40, 11), print(55, 42, 8, 3)), nil},
		{"a bar across its inside (a B, an E)", slices.Concat(frame(40, 40, 11), []image.Rectangle{image.Rect(41, 45, 50, 46)}), nil},
		{"filled (a bullet)", []image.Rectangle{image.Rect(40, 40, 51, 51)}, nil},
		{"a table's cells", slices.Concat(frame(40, 40, 11), frame(50, 40, 11), frame(40, 50, 11), frame(50, 50, 11)), nil},
		{"a rule runs through it", slices.Concat(frame(40, 40, 11), []image.Rectangle{image.Rect(20, 45, 120, 46)}), nil},
		{"too small for the page's lines", frame(40, 40, 5), nil},
		{"too large for the page's lines", frame(40, 40, 40), nil},
		// A date's box, a field's frame left blank: wider than tall, and empty.
		{"a wide empty box", slices.Concat(rectFrame(40, 40, 30, 16), print(76, 43, 9, 3)), []bool{false}},
		{"a wide box stacked on another", slices.Concat(rectFrame(40, 40, 30, 16), rectFrame(40, 55, 30, 16)), []bool{false, false}},
		// A wide frame with print in it is a field, filled in.
		{"a wide box with print in it", slices.Concat(rectFrame(40, 40, 30, 16), print(43, 44, 8, 4)), nil},
		// A zero or an O lying on its side in a margin stamp is a wide frame too, but short.
		{"a wide frame shorter than a line", rectFrame(40, 40, 13, 8), nil},
		{"a wide frame wider than a field's", rectFrame(40, 40, 90, 16), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			px, ok := newPixels(scene(160, 100, tt.rects...))
			if !ok {
				t.Fatal("a gray page has no view")
			}
			got := findCheckBoxes(px, lineHeight)
			var marked []bool
			for _, b := range got {
				marked = append(marked, b.marked)
			}
			if !slices.Equal(marked, tt.marked) {
				t.Fatalf("found %+v, want marked %v", got, tt.marked)
			}
		})
	}
}

func TestFindCheckBoxesFrameAt(t *testing.T) {
	px, _ := newPixels(scene(160, 100, slices.Concat(frame(40, 30, 11), print(55, 32, 8, 3))...))
	got := findCheckBoxes(px, 14)
	if len(got) != 1 || got[0].r != image.Rect(40, 30, 51, 41) {
		t.Fatalf("found %+v, want the frame at (40,30)-(51,41)", got)
	}
}

// TestPaintOutRestores paints squares out of each page type the decoder gives and puts them
// back: the page must be as it was, byte for byte, and white where painted in between.
func TestPaintOutRestores(t *testing.T) {
	gray := scene(40, 30, image.Rect(5, 5, 20, 20))
	rgba := image.NewRGBA(gray.Bounds())
	nrgba := image.NewNRGBA(gray.Bounds())
	ycc := image.NewYCbCr(gray.Bounds(), image.YCbCrSubsampleRatio420)
	for y := range 30 {
		for x := range 40 {
			v := gray.GrayAt(x, y).Y
			rgba.Set(x, y, color.RGBA{v, v / 2, v, 255})
			nrgba.Set(x, y, color.NRGBA{v, v, v / 3, 200})
			ycc.Y[ycc.YOffset(x, y)] = v
		}
	}
	for _, img := range []image.Image{gray, rgba, nrgba, ycc} {
		px, ok := newPixels(img)
		if !ok {
			t.Fatalf("%T has no view", img)
		}
		before := snapshot(img)
		restore := px.paintOut([]image.Rectangle{image.Rect(4, 4, 12, 12), image.Rect(35, 25, 50, 40)})
		if v := px.lum(6, 6); v != 255 {
			t.Errorf("%T: painted pixel reads %d, want 255", img, v)
		}
		if v := px.lum(15, 15); v != 0 {
			t.Errorf("%T: an unpainted pixel reads %d, want 0", img, v)
		}
		restore()
		if !slices.Equal(snapshot(img), before) {
			t.Errorf("%T: not restored", img)
		}
	}
	if _, ok := newPixels(image.NewGray16(image.Rect(0, 0, 2, 2))); ok {
		t.Error("a 16-bit page has a view; it must be left alone")
	}
}

// snapshot copies every plane of img.
func snapshot(img image.Image) []byte {
	switch m := img.(type) {
	case *image.Gray:
		return slices.Clone(m.Pix)
	case *image.RGBA:
		return slices.Clone(m.Pix)
	case *image.NRGBA:
		return slices.Clone(m.Pix)
	case *image.YCbCr:
		return slices.Concat(m.Y, m.Cb, m.Cr)
	}
	return nil
}

func TestReadsCJK(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"口P.O.", false}, // the box read as 口
		{"：区 No", false}, // a marked box read as 区
		{"地区", true},
		{"CORN OIL", false},
		{"出口", true},
		{"口座番号", true},
		{"☐ Yes", false},
	} {
		if got := readsCJK(tt.text); got != tt.want {
			t.Errorf("readsCJK(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
