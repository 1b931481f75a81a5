package imaging

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/work"
)

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestInspect checks the header facts the cost model works from, format by format: the decoded
// image's bytes (its pixel type), the decoder's working memory and the rotation copy.
func TestInspect(t *testing.T) {
	const w, h = 40, 24
	px := int64(w * h)
	rgba16 := image.NewNRGBA64(image.Rect(0, 0, w, h))
	rgba16.Set(1, 1, color.NRGBA64{1, 2, 3, 4})
	gray := image.NewGray(image.Rect(0, 0, w, h))
	jpegBlocks := int64(3 * 2 * 6) // 4:2:0: 3×2 MCUs of 16×16, each 4 luma and 2 chroma blocks
	tests := []struct {
		name               string
		data               []byte
		pixels, work, turn int64
		progressive        bool
	}{
		{"png rgba8", encode(t, "png", pattern(w, h)), 4 * px, 0, 0, false},
		{"png rgba16", encodePNG(t, rgba16), 8 * px, 0, 0, false},
		{"png gray", encodePNG(t, gray), px, 0, 0, false},
		// Deflate: the strip (RGBA, as x/image/tiff writes), a row of samples, the reader's state.
		{"tiff", encode(t, "tiff", pattern(w, h)), 4 * px, 4*px + 4*w + 4<<10 + 64<<10, 0, false},
		{"gif", encode(t, "gif", pattern(w, h)), px, 4 * px, 0, false},
		{"bmp", encode(t, "bmp", pattern(w, h)), 4 * px, 0, 0, false},
		{"jpeg 4:2:0", encode(t, "jpeg", pattern(w, h)), 65 * jpegBlocks, 0, 0, false},
		{"jpeg turned by EXIF", exifJPEG(t, gradientQuadrants(true), []byte("II"), 6), 65 * (2 * 1 * 6), 0, 4 * 32 * 16, false},
		{"gray jpeg turned by EXIF", exifJPEG(t, gradientQuadrants(false), []byte("MM"), 8), 65 * (4 * 2), 0, 32 * 16, false},
		{"progressive 4:4:4", hostile.HugeProgressive(64, 32), 65 * 3 * 32, 256 * 3 * 32, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hd, err := Inspect(tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if hd.PixelBytes != tt.pixels || hd.WorkBytes != tt.work || hd.RotatedBytes != tt.turn || hd.Progressive != tt.progressive {
				t.Fatalf("pixels %d work %d rotated %d progressive %v; want %d %d %d %v",
					hd.PixelBytes, hd.WorkBytes, hd.RotatedBytes, hd.Progressive, tt.pixels, tt.work, tt.turn, tt.progressive)
			}
			if tt.turn > 0 {
				if uw, uh := hd.UprightSize(); uw != hd.Height || uh != hd.Width {
					t.Fatalf("upright %d×%d for a %d×%d image turned 90°", uw, uh, hd.Width, hd.Height)
				}
			}
			if hd.DecodeBytes() < hd.ResidentBytes() {
				t.Fatalf("decoding (%d) holds less than the result (%d)", hd.DecodeBytes(), hd.ResidentBytes())
			}
		})
	}
}

// TestInspectRefuses: the checks made before any pixel is decoded.
func TestInspectRefuses(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		lim  Limits
		want error
	}{
		{"a scan over the limit", hostile.ScanBomb(64, 64, 20), Limits{MaxScans: 20}, ErrTooManyScans},
		{"1 500 scans", hostile.ScanBomb(7071, 7071, 1500), Limits{MaxScans: 64}, ErrTooManyScans},
		{"a frame behind another", hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(8192, 8192), true), Limits{}, ErrUndecodable},
		{"PNG bomb over the pixel limit", hostile.PNG16Bomb(7071, 7071, 1), Limits{MaxPixels: 40_000_000}, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Inspect(tt.data, tt.lim)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if _, err := Decode(tt.data, tt.lim); !errors.Is(err, tt.want) {
				t.Fatalf("Decode: err = %v, want %v", err, tt.want)
			}
		})
	}
	// 20 scans are fine where 20 are allowed.
	if _, err := Decode(hostile.ScanBomb(64, 64, 19), Limits{MaxScans: 20}); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeContext: a decode slower than the deadline returns at the deadline; the goroutine
// it leaves keeps the admission it was given until it ends, and then nothing is left behind.
func TestDecodeContext(t *testing.T) {
	data := hostile.ScanBomb(4000, 4000, 60) // seconds of image/jpeg under the race detector
	gate := admission.New(admission.Options{Budget: 1 << 30})
	release, err := gate.Acquire(context.Background(), 123)
	if err != nil {
		t.Fatal(err)
	}
	lease, release := admission.Share(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	before := runtime.NumGoroutine()
	start := time.Now()
	_, err = DecodeContext(ctx, data, Limits{MaxScans: 64}, lease)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("returned after %v", took)
	}
	release() // the request is over; the decoder is not
	if gate.Stats().Used != 123 {
		t.Fatal("the admission went back while the decoder runs")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for gate.Stats().Used != 0 || runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("after the decoder: %+v, %d goroutines (%d before)", gate.Stats(), runtime.NumGoroutine(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Without a deadline it decodes.
	d, err := DecodeContext(context.Background(), hostile.ScanBomb(64, 48, 3), Limits{}, nil)
	if err != nil || d.Width != 64 || d.Height != 48 {
		t.Fatalf("%v, %d×%d", err, d.Width, d.Height)
	}
}

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/hostile from the generators")

// The hostile files of the seed corpus (testdata/hostile, see TestHostileCorpus): for images, a
// 16-bit RGBA PNG bomb (its IDAT cut after the first rows: the decoder allocates every pixel
// before it reads the first) and the JPEG attacks.
var hostileCorpus = []struct {
	file string
	gen  func() []byte
}{
	{"png16_bomb.png", func() []byte { return hostile.PNG16Bomb(7071, 7071, 16) }},
	{"smuggled_frame.jpg", func() []byte { return hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(8192, 8192), true) }},
	{"huge_progressive.jpg", func() []byte { return hostile.HugeProgressive(7071, 7071) }},
	{"scan_bomb.jpg", func() []byte { return hostile.ScanBomb(2000, 2000, 1500) }},
}

func TestHostileCorpus(t *testing.T) {
	for _, h := range hostileCorpus {
		path := filepath.Join("testdata", "hostile", h.file)
		want := h.gen()
		if *updateCorpus {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its generator; run go test -run HostileCorpus ./service/imaging/ -update-corpus", path)
		}
	}
}

// TestWorkerPanicReachesTheCaller: a panic on one of parallelRows' goroutines is raised again on
// the caller's, where the unit of work's recovery turns it into an error; no worker is left
// running.
func TestWorkerPanicReachesTheCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	running := goleak.IgnoreCurrent()
	err := work.Do(context.Background(), "test", func() error {
		parallelRows(1000, 1, func(lo, hi int) {
			if lo > 0 {
				panic("a bug in a worker")
			}
		})
		return nil
	})
	var p *work.Panic
	if !errors.As(err, &p) || p.Value != "a bug in a worker" {
		t.Fatalf("err = %v, want the recovered panic", err)
	}
	// A worker may still be on its way out after signalling that it is done: goleak retries
	// until none is left, and fails if one stays.
	goleak.VerifyNone(t, running)
}
