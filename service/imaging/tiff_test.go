package imaging

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/tiffdec"
)

// TestTIFFDeflateBombPriced: a 295 KB TIFF whose one Deflate strip inflates to 290 MB, for a
// 7000×7000 1-bit page, is priced at what its decode holds (the 49 MB gray page and the 6 MB
// strip) and decoding allocates no more than that. x/image/tiff allowed such a strip up to 8
// bytes a pixel in a doubling buffer: 1 075 MiB allocated for it.
func TestTIFFDeflateBombPriced(t *testing.T) {
	data := hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20)
	h, err := Inspect(data, Limits{MaxPixels: 50_000_000, MaxSide: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	px := int64(7000 * 7000)
	strip := int64(7000/8) * 7000
	if h.PixelBytes != px || h.WorkBytes < strip || h.WorkBytes > strip+1<<20 {
		t.Fatalf("priced at %d + %d bytes; the page is %d and its strip %d", h.PixelBytes, h.WorkBytes, px, strip)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dec, err := decodeChecked(context.Background(), data, h)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(after.TotalAlloc - before.TotalAlloc); got > h.DecodeBytes()+1<<20 {
		t.Errorf("decoding allocated %d MiB; it was priced at %d MiB", got>>20, h.DecodeBytes()>>20)
	}
	if dec.Width != 7000 || dec.Height != 7000 {
		t.Errorf("decoded %d×%d", dec.Width, dec.Height)
	}
}

// TestTIFFOrientation: a one-page TIFF stored turned or mirrored (the Orientation set; see
// service/tiffdec/testdata/oriented.sh) decodes upright, pixel for pixel the page it was made from
// (ImageMagick's -auto-orient agrees when the set is made), and is priced with its upright copy.
func TestTIFFOrientation(t *testing.T) {
	const dir = "../tiffdec/testdata"
	for _, tc := range []struct {
		file, source string
		orientation  int
	}{
		{"orient-bw-g4-6.tif", "src-bilevel.png", 6},
		{"orient-bw-g4-2.tif", "src-bilevel.png", 2},
		{"orient-bw-g3-5.tif", "src-bilevel.png", 5},
		{"orient-gray8-lzw-3.tif", "src-gray.png", 3},
		{"orient-gray8-zip-8.tif", "src-gray.png", 8},
		{"orient-rgb-lzw-7.tif", "src-color.png", 7},
		{"orient-gray8-lzw-4.tif", "src-gray.png", 4},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			h, err := Inspect(data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if h.Orientation != tc.orientation || h.RotatedBytes == 0 {
				t.Errorf("header: orientation %d, upright copy %d bytes; want %d and a price", h.Orientation, h.RotatedBytes, tc.orientation)
			}
			dec, err := Decode(data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, tc.source))
			if err != nil {
				t.Fatal(err)
			}
			want, err := png.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if w, ht := h.UprightSize(); dec.Width != w || dec.Height != ht || dec.Image.Bounds().Size() != want.Bounds().Size() {
				t.Fatalf("decoded %d×%d (header upright %d×%d), the source is %v", dec.Width, dec.Height, w, ht, want.Bounds().Size())
			}
			diff := 0
			b := want.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					r1, g1, b1, _ := want.At(x, y).RGBA()
					r2, g2, b2, _ := dec.Image.At(x-b.Min.X, y-b.Min.Y).RGBA()
					if r1>>8 != r2>>8 || g1>>8 != g2>>8 || b1>>8 != b2>>8 {
						diff++
					}
				}
			}
			if diff > 0 {
				t.Errorf("%d of %d pixels differ from %s", diff, b.Dx()*b.Dy(), tc.source)
			}
		})
	}
}

// TestTIFFFaxSquarePixels: a fax at standard resolution (204 × 98 dpi, 800 × 147 px stored)
// decodes at square pixels, 800 × 306, gray, each row the stored row under its centre, and is
// priced with that copy.
func TestTIFFFaxSquarePixels(t *testing.T) {
	data, err := os.ReadFile("../tiffdec/testdata/fax-std-g3.tif")
	if err != nil {
		t.Fatal(err)
	}
	h, err := Inspect(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if w, ht := h.UprightSize(); w != 800 || ht != 306 || h.Width != 800 || h.Height != 147 || h.RotatedBytes != 800*306 {
		t.Fatalf("header %+v: shown %d×%d", h, w, ht)
	}
	stored, err := decodeTIFF(context.Background(), data, h)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Decode(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := dec.Image.(*image.Gray)
	if !ok || dec.Width != 800 || dec.Height != 306 {
		t.Fatalf("decoded %T %d×%d", dec.Image, dec.Width, dec.Height)
	}
	s := stored.Image.(*image.Gray)
	for y := range 306 {
		sy := (2*y + 1) * 147 / (2 * 306)
		if !bytes.Equal(g.Pix[y*g.Stride:y*g.Stride+800], s.Pix[sy*s.Stride:sy*s.Stride+800]) {
			t.Fatalf("row %d is not stored row %d", y, sy)
		}
	}
}

// TestTIFFZeroBitSamplesUndecodable (issue 33): a TIFF whose samples have 0 bits is corrupt
// (422), not a valid file in a format this service lacks (415, as it was answered).
func TestTIFFZeroBitSamplesUndecodable(t *testing.T) {
	_, err := Inspect(hostile.TIFFZeroBitSamples(), Limits{})
	if !errors.Is(err, ErrUndecodable) || errors.Is(err, ErrUnsupportedFormat) {
		t.Fatalf("Inspect: %v; want ErrUndecodable", err)
	}
}

// TestTIFFWalkedOnce (issue 33): the directories InspectContext walks travel in the Header to
// the decode, which reads the page from them. Inspect, then DecodeContext (which inspected the
// file again and then reopened it to decode) walked the chain three times.
func TestTIFFWalkedOnce(t *testing.T) {
	data, err := os.ReadFile("../tiffdec/testdata/orient-gray8-lzw-3.tif")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := tiffdec.Walks()
	h, err := InspectContext(ctx, data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeHeader(ctx, data, h, nil); err != nil {
		t.Fatal(err)
	}
	if n := tiffdec.Walks() - before; n != 1 {
		t.Errorf("inspecting and decoding a one-page TIFF walked its directories %d times; want 1", n)
	}
}

// TestTIFFDecodeSeesTheRequestContext (issue 33): the request's context reaches the TIFF
// decoder, which stops soon after it ends (the deadline, the client's hang-up, the shutdown). It
// was handed context.Background(): a TIFF that decodes for minutes kept its admission and a core
// that long after its request had been answered 504. The page here is one Deflate strip of
// 48 MB, which the decoder used to look at its context only before.
func TestTIFFDecodeSeesTheRequestContext(t *testing.T) {
	data := hostile.TIFFDeflateBomb(8000, 6000, 8, 48_000_000)
	h, err := Inspect(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := decodeChecked(ended, data, h); !errors.Is(err, context.Canceled) {
		t.Fatalf("decoding under a context that has ended: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled atomic.Int64
	time.AfterFunc(5*time.Millisecond, func() { cancelled.Store(time.Now().UnixNano()); cancel() })
	_, err = decodeChecked(ctx, data, h)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("decoding while the context ends: %v", err)
	}
	// Measured generously: the decoder looks at its context every 256 KiB of work.
	if late := time.Duration(time.Now().UnixNano() - cancelled.Load()); late > time.Second {
		t.Errorf("the decode stopped %v after its context ended", late)
	}
}

// TestTIFFDecodeChargesCPU: a TIFF decode is priced against the request's CPU budget before it
// starts (a budget its estimate does not fit refuses it, nothing decoded), and what it uses is
// charged.
func TestTIFFDecodeChargesCPU(t *testing.T) {
	data := hostile.TIFFDeflateBomb(4000, 4000, 8, 16_000_000)
	h, err := Inspect(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if h.CPU <= 0 {
		t.Fatalf("the header prices no CPU time: %+v", h)
	}
	small := cpubudget.New(h.CPU / 2)
	_, err = DecodeHeader(cpubudget.With(context.Background(), small), data, h, nil)
	// Refused before the decode starts: what was spent is the way there (the decode's goroutine
	// is charged from its start), a small part of the estimate.
	if !errors.Is(err, cpubudget.ErrExceeded) || small.Spent() > h.CPU/10 {
		t.Fatalf("a budget of half the estimate: %v, %v spent; want it refused before it starts", err, small.Spent())
	}
	b := cpubudget.New(time.Minute)
	if _, err := DecodeHeader(cpubudget.With(context.Background(), b), data, h, nil); err != nil {
		t.Fatal(err)
	}
	if b.Spent() <= 0 || b.Planned() != h.CPU {
		t.Errorf("spent %v, planned %v; want the decode charged and its estimate %v planned", b.Spent(), b.Planned(), h.CPU)
	}
}
