package imaging

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// TestDownscaled: a baseline JPEG offers its 1/8 view for free, as large as it is and no larger;
// formats without one offer nothing.
func TestDownscaled(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 803, 400))
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 251)
	}
	var jpg, pngData bytes.Buffer
	if err := jpeg.Encode(&jpg, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		data    []byte
		minSide int
		want    image.Rectangle // empty: no view
	}{
		{"JPEG, small enough a request", jpg.Bytes(), 50, image.Rect(0, 0, 101, 50)},
		{"JPEG, exactly its size", jpg.Bytes(), 101, image.Rect(0, 0, 101, 50)},
		{"JPEG, more than it has", jpg.Bytes(), 102, image.Rectangle{}},
		{"PNG has none", pngData.Bytes(), 1, image.Rectangle{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode(tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			view, ok := d.Downscaled(tt.minSide)
			if ok != !tt.want.Empty() || (ok && view.Bounds() != tt.want) {
				t.Fatalf("Downscaled(%d) = %v, %v; want %v", tt.minSide, view, ok, tt.want)
			}
			if !ok {
				return
			}
			// Each pixel is the mean of its 8×8 block (within JPEG's loss).
			for _, p := range []image.Point{{0, 0}, {40, 20}, {100, 49}} {
				var sum, n int
				for y := p.Y * 8; y < min(p.Y*8+8, 400); y++ {
					for x := p.X * 8; x < min(p.X*8+8, 803); x++ {
						sum += int(img.GrayAt(x, y).Y)
						n++
					}
				}
				got := int(color.GrayModel.Convert(view.At(p.X, p.Y)).(color.Gray).Y)
				if diff := got - sum/n; diff < -12 || diff > 12 {
					t.Errorf("view pixel %v = %d, block mean %d", p, got, sum/n)
				}
			}
		})
	}
}
