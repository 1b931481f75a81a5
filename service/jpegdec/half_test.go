package jpegdec

import (
	"image"
	"os"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testenv"
)

// halfDiff compares half, a DecodeHalf result, with the 2×2 means of full, the DecodeSized result
// of the same file. Every sample must be within ±1 of the mean (rounding), except where the full
// decode clamped one of the four to 0 or 255: DecodeHalf averages before clamping. It returns a
// description of the first sample that is not, or "".
func halfDiff(full, half image.Image) string {
	fb, hb := full.Bounds(), half.Bounds()
	if hb != image.Rect(0, 0, (fb.Dx()+1)/2, (fb.Dy()+1)/2) {
		return "bounds " + hb.String() + " for a " + fb.String() + " image"
	}
	type plane struct {
		full, half []uint8
		fs, hs     int // strides
		w, h       int // the full plane's samples, as the decoder allocated them
	}
	var planes []plane
	switch f := full.(type) {
	case *image.YCbCr:
		h, ok := half.(*image.YCbCr)
		if !ok || h.SubsampleRatio != f.SubsampleRatio {
			return "not a *image.YCbCr of the same chroma layout"
		}
		planes = []plane{
			{f.Y, h.Y, f.YStride, h.YStride, f.YStride, len(f.Y) / f.YStride},
			{f.Cb, h.Cb, f.CStride, h.CStride, f.CStride, len(f.Cb) / f.CStride},
			{f.Cr, h.Cr, f.CStride, h.CStride, f.CStride, len(f.Cr) / f.CStride},
		}
	case *image.Gray:
		h, ok := half.(*image.Gray)
		if !ok {
			return "not a *image.Gray"
		}
		planes = []plane{{f.Pix, h.Pix, f.Stride, h.Stride, f.Stride, len(f.Pix) / f.Stride}}
	default:
		return "unexpected type"
	}
	for i, p := range planes {
		// Whole blocks: the planes hold every decoded block, padding included.
		for y := 0; y+1 < p.h; y += 2 {
			for x := 0; x+1 < p.w; x += 2 {
				a, b := p.full[y*p.fs+x], p.full[y*p.fs+x+1]
				c, d := p.full[(y+1)*p.fs+x], p.full[(y+1)*p.fs+x+1]
				clamped := false
				for _, v := range [4]uint8{a, b, c, d} {
					clamped = clamped || v == 0 || v == 255
				}
				sum := int(a) + int(b) + int(c) + int(d)
				got := int(p.half[(y/2)*p.hs+x/2])
				if !clamped && (4*got < sum-4 || 4*got > sum+4) { // within ±1 of the mean
					return "plane " + string(rune('0'+i)) + " sample " + image.Pt(x/2, y/2).String() + " is not the mean of its 2×2 square"
				}
			}
		}
	}
	return ""
}

// TestDecodeHalf checks DecodeHalf against the 2×2 means of the full decode on every chroma layout,
// restart intervals, optimized tables, sizes that end mid-block and mid-MCU, grayscale and the
// parallel path, and that its preview is the full decode's.
func TestDecodeHalf(t *testing.T) {
	inputs := map[string][]byte{
		"go-color-odd": encode(t, testPicture(333, 77, 5), 90),
		"go-q100":      encode(t, testPicture(67, 45, 2), 100),
		"go-tiny":      encode(t, testPicture(3, 1, 1), 75),
		"go-big":       encode(t, testPicture(1400, 1001, 6), 80), // the parallel path
	}
	gray := image.NewGray(image.Rect(0, 0, 125, 61))
	pic := testPicture(125, 61, 4)
	for y := range 61 {
		for x := range 125 {
			gray.Set(x, y, pic.At(x, y))
		}
	}
	inputs["go-gray"] = encode(t, gray, 85)
	addFixtures(t, inputs, "s444.jpg", "s422.jpg", "s440.jpg", "s411.jpg", "s410.jpg", "s420_restart.jpg", "gray_restart.jpg", "q100_optimized.jpg")
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			full, fullPv, err := DecodePreview(data)
			if err != nil {
				t.Fatal(err)
			}
			b := full.Bounds()
			half, halfPv, err := DecodeHalf(data, b.Dx(), b.Dy())
			if err != nil {
				t.Fatal(err)
			}
			if msg := halfDiff(full, half); msg != "" {
				t.Fatal(msg)
			}
			if msg := diff(fullPv, halfPv); msg != "" {
				t.Fatalf("preview: %s", msg)
			}
		})
	}
}

// BenchmarkDecodeHalf is BenchmarkDecode's scan at half size.
func BenchmarkDecodeHalf(b *testing.B) {
	data, err := os.ReadFile(testenv.ReceiptPath(b, "a4scan"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := DecodeHalf(data, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}
