package imaging

import (
	"bytes"
	"image"
	"image/jpeg"
	"testing"

	"github.com/anthonynsimon/bild/transform"

	"github.com/ocrgate/ocrgate/service/geom"
)

// syntheticScan is a page-like 4:2:0 YCbCr image: white paper with dark horizontal "text" strokes
// and a little colour, so the benchmarks do not run on an unrealistically uniform image.
func syntheticScan(w, h int) *image.YCbCr {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			v := uint8(235)
			if (y/40)%2 == 0 && (x/7+y/3)%5 < 2 {
				v = 30
			}
			img.Y[y*img.YStride+x] = v
		}
	}
	for i := range img.Cb {
		img.Cb[i] = uint8(120 + i%17)
		img.Cr[i] = uint8(130 - i%13)
	}
	return img
}

func BenchmarkResizeTensorLargeScan(b *testing.B) {
	src := syntheticScan(4961, 7016)
	const w, h = 1824, 2560
	dst := make([]float32, 3*w*h)
	n := Norm{Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}, BGR: true}
	b.ResetTimer()
	for b.Loop() {
		ResizeTensor(dst, src, w, h, n)
	}
}

// BenchmarkWarp cuts a 600×40 px line of text out of a page into a 720×48 recognizer crop: tilted
// by a few degrees, and straight (a box whose sides are the page's axes, most boxes of a page).
func BenchmarkWarp(b *testing.B) {
	src := syntheticScan(1200, 900)
	quads := []struct {
		name string
		q    geom.Quad
	}{
		{"tilted", geom.Quad{{X: 100, Y: 300}, {X: 698.5, Y: 331.4}, {X: 696.4, Y: 371.4}, {X: 97.9, Y: 340}}},
		{"straight", geom.Quad{{X: 100, Y: 300}, {X: 700, Y: 300}, {X: 700, Y: 340}, {X: 100, Y: 340}}},
	}
	for _, c := range quads {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Warp(src, c.q, 720, 48)
			}
		})
	}
}

func BenchmarkDecodeJPEG(b *testing.B) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, syntheticScan(2000, 3000), &jpeg.Options{Quality: 85}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Decode(data, Limits{MaxPixels: 50_000_000, MaxSide: 10_000}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRotate compares our quarter turn and bild's (why orient keeps its own), and times the
// half turn, which bild's flips do (Rotate180), on a recognizer crop and on a photo.
//
//	go test -run x -bench Rotate ./service/imaging/
func BenchmarkRotate(b *testing.B) {
	photo := syntheticScan(3000, 2000)
	crop := image.NewRGBA(image.Rect(0, 0, 320, 48))
	for i := range crop.Pix {
		crop.Pix[i] = uint8(i * 7)
	}
	b.Run("90/photo/ours", func(b *testing.B) {
		for b.Loop() {
			Orient(photo, 6)
		}
	})
	b.Run("90/photo/bild", func(b *testing.B) {
		for b.Loop() {
			transform.Rotate(photo, 90, &transform.RotationOptions{ResizeBounds: true})
		}
	})
	b.Run("180/photo", func(b *testing.B) {
		for b.Loop() {
			Rotate180(photo)
		}
	})
	b.Run("180/crop", func(b *testing.B) {
		for b.Loop() {
			Rotate180(crop)
		}
	})
}

// BenchmarkResizeWidth squeezes a wide recognizer crop (48×800, opaque, as Warp makes them) into
// the direction classifier's 192 columns: the classifier's pre-processing of a page's widest lines.
func BenchmarkResizeWidth(b *testing.B) {
	crop := Warp(syntheticScan(1200, 900), geom.Quad{{X: 100, Y: 300}, {X: 900, Y: 300}, {X: 900, Y: 348}, {X: 100, Y: 348}}, 800, 48)
	for b.Loop() {
		ResizeWidth(crop, 192)
	}
}
