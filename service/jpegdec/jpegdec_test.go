package jpegdec

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testenv"
)

// equalToStdlib decodes data both ways and fails unless the results have the same type, bounds and
// layout and every sample is within ±1 (the two integer IDCTs round differently).
func equalToStdlib(t testing.TB, data []byte) {
	t.Helper()
	want, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("image/jpeg: %v", err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if msg := diff(want, got); msg != "" {
		t.Fatal(msg)
	}
}

// diff describes how got differs from want beyond ±1 per sample, or returns "".
func diff(want, got image.Image) string {
	if want.Bounds() != got.Bounds() {
		return "bounds " + got.Bounds().String() + ", want " + want.Bounds().String()
	}
	b := want.Bounds()
	far := func(a, b uint8) bool { return int(a) > int(b)+1 || int(b) > int(a)+1 }
	switch w := want.(type) {
	case *image.YCbCr:
		g, ok := got.(*image.YCbCr)
		if !ok {
			return "not *image.YCbCr"
		}
		if g.SubsampleRatio != w.SubsampleRatio {
			return "subsample ratio " + g.SubsampleRatio.String() + ", want " + w.SubsampleRatio.String()
		}
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				wi, gi := w.YOffset(x, y), g.YOffset(x, y)
				wc, gc := w.COffset(x, y), g.COffset(x, y)
				if far(w.Y[wi], g.Y[gi]) || far(w.Cb[wc], g.Cb[gc]) || far(w.Cr[wc], g.Cr[gc]) {
					return "pixel " + image.Pt(x, y).String() + " differs by more than 1"
				}
			}
		}
	case *image.Gray:
		g, ok := got.(*image.Gray)
		if !ok {
			return "not *image.Gray"
		}
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if far(w.GrayAt(x, y).Y, g.GrayAt(x, y).Y) {
					return "pixel " + image.Pt(x, y).String() + " differs by more than 1"
				}
			}
		}
	default:
		return "image/jpeg returned an unexpected type"
	}
	return ""
}

// The fixtures were written by libjpeg-turbo's cjpeg from one 67×45 picture (testdata/README.md):
// every chroma layout image.YCbCr has, restart intervals counted in MCUs and in MCU rows, optimized
// Huffman tables at quality 100, and the encodings this package leaves to image/jpeg.
func TestFixtures(t *testing.T) {
	tests := []struct {
		file        string
		unsupported bool
	}{
		{"s444.jpg", false},
		{"s422.jpg", false},
		{"s440.jpg", false},
		{"s411.jpg", false},
		{"s410.jpg", false},
		{"s420_restart.jpg", false},
		{"s420_restart_rows.jpg", false},
		{"gray_restart.jpg", false},
		{"q100_optimized.jpg", false},
		{"progressive.jpg", true},
		{"arithmetic.jpg", true},
		{"rgb.jpg", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if tt.unsupported {
				if _, err := Decode(data); !errors.Is(err, ErrUnsupported) {
					t.Fatalf("Decode: err = %v, want ErrUnsupported", err)
				}
				return
			}
			equalToStdlib(t, data)
		})
	}
}

// testPicture draws something with both smooth areas and sharp edges, so blocks range from flat to
// full of high-frequency coefficients.
func testPicture(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, 1))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(x * 255 / max(1, w)), uint8(y * 255 / max(1, h)), uint8((x ^ y) * 3), 255}
			if (x/5+y/7)%4 == 0 {
				c = color.RGBA{10, 10, 10, 255} // ink
			}
			if r.IntN(50) == 0 {
				c = color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

func encode(t testing.TB, img image.Image, quality int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodedByGo covers sizes that end mid-MCU, one-pixel images and the whole quality range
// (quality 1 makes nearly every block flat; 100 makes the largest coefficients), in colour (4:2:0)
// and grayscale.
func TestEncodedByGo(t *testing.T) {
	for _, size := range []image.Point{{1, 1}, {7, 3}, {16, 16}, {17, 9}, {67, 45}, {333, 77}} {
		for _, q := range []int{1, 50, 90, 100} {
			pic := testPicture(size.X, size.Y, uint64(q))
			gray := image.NewGray(pic.Bounds())
			for y := range size.Y {
				for x := range size.X {
					gray.Set(x, y, pic.At(x, y))
				}
			}
			for name, img := range map[string]image.Image{"color": pic, "gray": gray} {
				t.Run(name+"/"+size.String(), func(t *testing.T) {
					equalToStdlib(t, encode(t, img, q))
				})
			}
		}
	}
}

// TestParallel decodes an image big enough for the split between the entropy decoder and the IDCT
// workers, with several workers even on a one-core runner.
func TestParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	data := encode(t, testPicture(1400, 1000, 3), 85)
	if blocks := 1400 * 1000 * 3 / 2 / 64; blocks < parallelMinBlocks {
		t.Fatalf("test image has %d blocks, below the parallel threshold %d", blocks, parallelMinBlocks)
	}
	for range 3 { // chunks are recycled between images: a stale coefficient would show here
		equalToStdlib(t, data)
	}
}

// TestScans checks receipts: a 600-dpi A4 scan (the case this package exists for) and a phone
// photo, from the receipts the repository renders (testdata/receipts).
func TestScans(t *testing.T) {
	for _, id := range []string{"a4scan", "dense"} {
		t.Run(id, func(t *testing.T) {
			equalToStdlib(t, testenv.Receipt(t, id))
		})
	}
}

// TestCorrupt damages a fixture in the ways uploads get damaged — cut short, bytes overwritten,
// restart markers renumbered — and requires an error wrapping ErrUnsupported (so the caller falls
// back to image/jpeg) or an image of the right size; never a panic or a hang.
func TestCorrupt(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "s420_restart.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, data []byte) {
		img, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v does not wrap ErrUnsupported", err)
			}
			return
		}
		if img.Bounds() != image.Rect(0, 0, 67, 45) {
			t.Fatalf("bounds %v", img.Bounds())
		}
	}
	for n := 0; n < len(base); n += 7 {
		check(t, base[:n])
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		data := bytes.Clone(base)
		for range 1 + r.IntN(4) {
			data[r.IntN(len(data))] = byte(r.IntN(256))
		}
		check(t, data)
	}

	// A restart marker with the wrong number is refused, not decoded as if it were right.
	i := bytes.Index(base, []byte{0xFF, 0xD1})
	if i < 0 {
		t.Fatal("fixture has no RST1 marker")
	}
	data := bytes.Clone(base)
	data[i+1] = 0xD5
	if _, err := Decode(data); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("renumbered restart marker: err = %v, want ErrUnsupported", err)
	}
	// So is a scan cut off before its end of image.
	if _, err := Decode(base[:len(base)-2]); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("missing EOI: err = %v, want ErrUnsupported", err)
	}
}

// FuzzDecode checks that no input panics, that whatever DecodeSized accepts image/jpeg decodes to
// the same picture (accepting bytes the reference refuses, or reading them differently, would make
// results depend on which decoder ran), and that Inspect, DecodeSized and image.DecodeConfig agree
// on which frame a file holds: the size limit is checked on DecodeConfig's answer, so a decoder
// that finds another frame decodes something nobody checked.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"s444.jpg", "s420_restart.jpg", "gray_restart.jpg", "q100_optimized.jpg", "s411.jpg", "progressive.jpg"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, h := range hostileCorpus {
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", h.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xD9})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, cfgErr := jpeg.DecodeConfig(bytes.NewReader(data))
		info, infoErr := Inspect(data)
		if infoErr != nil && !errors.Is(infoErr, ErrMalformed) {
			t.Fatalf("Inspect error %v does not wrap ErrMalformed", infoErr)
		}
		if cfgErr == nil && infoErr == nil && (info.Width != cfg.Width || info.Height != cfg.Height) {
			t.Fatalf("Inspect read a %d×%d frame, image/jpeg %d×%d", info.Width, info.Height, cfg.Width, cfg.Height)
		}
		// Callers check the header's size first; allocating gigabytes is not the point. Inspect
		// reports the first frame header even when it refuses the file later on.
		if cfgErr == nil && cfg.Width*cfg.Height > 1<<22 || info.Width*info.Height > 1<<22 {
			return
		}
		want := image.Point{}
		if cfgErr == nil {
			want = image.Pt(cfg.Width, cfg.Height)
		}
		got, _, err := DecodeSized(data, want.X, want.Y)
		if err != nil {
			switch {
			case errors.Is(err, ErrFrameMismatch):
				if infoErr == nil {
					t.Fatalf("DecodeSized found another frame than the %v checked, and Inspect saw none: %v", want, err)
				}
			case !errors.Is(err, ErrUnsupported):
				t.Fatalf("error %v wraps neither ErrUnsupported nor ErrFrameMismatch", err)
			}
			return
		}
		if infoErr != nil || !info.Sequential || info.Scans != 1 {
			t.Fatalf("decoded a file Inspect reads as %+v (%v); only single-scan sequential files decode here", info, infoErr)
		}
		if b := got.Bounds(); b.Dx() != info.Width || b.Dy() != info.Height {
			t.Fatalf("decoded %v, the frame header says %d×%d", b, info.Width, info.Height)
		}
		ref, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Decode accepted what image/jpeg refuses (%v)", err)
		}
		if msg := diff(ref, got); msg != "" {
			t.Fatal(msg)
		}
		// What decodes at full size decodes at half size, to the 2×2 means.
		half, _, err := DecodeHalf(data, want.X, want.Y)
		if err != nil {
			t.Fatalf("DecodeHalf refused what DecodeSized decoded: %v", err)
		}
		if msg := halfDiff(got, half); msg != "" {
			t.Fatalf("DecodeHalf: %s", msg)
		}
	})
}

// addFixtures reads the named files of testdata into inputs, by name.
func addFixtures(t *testing.T, inputs map[string][]byte, names ...string) {
	t.Helper()
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
}

// BenchmarkDecode compares this package with image/jpeg on a 600-dpi A4 receipt scan (a4scan of
// testdata/receipts).
func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(testenv.ReceiptPath(b, "a4scan"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("jpegdec", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("image-jpeg", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPreview checks that each preview sample is the mean of its 8×8 block in every plane, that the
// preview has the promised size and type, and that Decode and DecodePreview agree.
func TestPreview(t *testing.T) {
	var inputs = map[string][]byte{
		"go-color": encode(t, testPicture(333, 77, 5), 90),
		"go-big":   encode(t, testPicture(1400, 1000, 6), 80), // the parallel path
	}
	addFixtures(t, inputs, "s444.jpg", "s422.jpg", "s411.jpg", "s410.jpg", "s440.jpg", "gray_restart.jpg")
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			img, pv, err := DecodePreview(data)
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			if want := image.Rect(0, 0, (b.Dx()+7)/8, (b.Dy()+7)/8); pv.Bounds() != want {
				t.Fatalf("preview bounds %v, want %v", pv.Bounds(), want)
			}
			plain, err := Decode(data)
			if err != nil || diff(plain, img) != "" {
				t.Fatalf("Decode and DecodePreview disagree: %v", err)
			}
			type plane struct {
				full, small             []uint8
				fullStride, smallStride int
			}
			var planes []plane
			switch f := img.(type) {
			case *image.YCbCr:
				p, ok := pv.(*image.YCbCr)
				if !ok || p.SubsampleRatio != f.SubsampleRatio {
					t.Fatalf("preview is %T, want *image.YCbCr %v", pv, f.SubsampleRatio)
				}
				planes = []plane{{f.Y, p.Y, f.YStride, p.YStride}, {f.Cb, p.Cb, f.CStride, p.CStride}, {f.Cr, p.Cr, f.CStride, p.CStride}}
			case *image.Gray:
				p, ok := pv.(*image.Gray)
				if !ok {
					t.Fatalf("preview is %T, want *image.Gray", pv)
				}
				planes = []plane{{f.Pix, p.Pix, f.Stride, p.Stride}}
			}
			var blocks, sum float64
			for _, pl := range planes {
				rows := len(pl.small) / pl.smallStride
				for by := range rows {
					for bx := range pl.smallStride {
						mean := 0
						for y := range 8 {
							for x := range 8 {
								mean += int(pl.full[(8*by+y)*pl.fullStride+8*bx+x])
							}
						}
						d := float64(pl.small[by*pl.smallStride+bx]) - float64(mean)/64
						if d < 0 {
							d = -d
						}
						// Saturated pixels are clipped after the transform, which moves the mean
						// away from the DC; by a few levels at most in these pictures.
						if d > 6 {
							t.Fatalf("block (%d,%d): preview %d, block mean %.2f", bx, by, pl.small[by*pl.smallStride+bx], float64(mean)/64)
						}
						blocks++
						sum += d
					}
				}
			}
			if avg := sum / blocks; avg > 0.6 {
				t.Fatalf("preview differs from block means by %.2f on average", avg)
			}
		})
	}
}
