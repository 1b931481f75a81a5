package jpegdec

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/work"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/hostile from the generators")

// hostileCorpus is the committed seed corpus of FuzzDecode's hostile files, each written by a
// generator in internal/hostile (TestHostileCorpus keeps the two in step).
var hostileCorpus = []struct {
	file string
	gen  func() []byte
}{
	// A 16×16 first frame for image/jpeg, hiding an 8192×8192 one (data cut short).
	{"smuggled_frame.jpg", func() []byte { return hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(8192, 8192), true) }},
	// 1 500 AC scans over a 7071×7071 (50 MP) progressive image.
	{"scan_bomb.jpg", func() []byte { return hostile.ScanBomb(7071, 7071, 1500) }},
	// 364 bytes that start a 7071×7071 progressive 4:4:4 image.
	{"huge_progressive.jpg", func() []byte { return hostile.HugeProgressive(7071, 7071) }},
}

func TestHostileCorpus(t *testing.T) {
	for _, h := range hostileCorpus {
		path := filepath.Join("testdata", "hostile", h.file)
		want := h.gen()
		if *updateCorpus {
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
			t.Errorf("%s differs from its generator; run go test -run HostileCorpus -update-corpus ./service/jpegdec/", path)
		}
	}
}

func TestInspect(t *testing.T) {
	fixture := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name       string
		data       []byte
		want       Info // compared field by field where set
		wantErr    bool
		compareCfg bool // image/jpeg's DecodeConfig must report the same size
	}{
		{"baseline 4:2:0 with restarts", fixture("s420_restart.jpg"),
			Info{Width: 67, Height: 45, Components: 3, H: [4]int{2, 1, 1}, V: [4]int{2, 1, 1}, Sequential: true, Scans: 1}, false, true},
		{"gray", fixture("gray_restart.jpg"),
			Info{Width: 67, Height: 45, Components: 1, H: [4]int{1}, V: [4]int{1}, Sequential: true, Scans: 1}, false, true},
		{"progressive (cjpeg's ten scans)", fixture("progressive.jpg"),
			Info{Width: 67, Height: 45, Components: 3, Progressive: true, Scans: 10}, false, true},
		{"scan bomb", hostile.ScanBomb(7071, 7071, 1500),
			Info{Width: 7071, Height: 7071, Components: 1, Progressive: true, Scans: 1501}, false, true},
		{"tiny huge progressive", hostile.HugeProgressive(7071, 7071),
			Info{Width: 7071, Height: 7071, Components: 3, Progressive: true, Scans: 1}, false, true},
		{"smuggled second frame", hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(64, 64), false), Info{}, true, false},
		{"cut before EOI", fixture("s444.jpg")[:400], Info{}, true, false},
		{"not a JPEG", []byte("\x89PNG\r\n\x1a\n"), Info{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Inspect(tt.data)
			if tt.wantErr {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err = %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			if got.Width != w.Width || got.Height != w.Height || got.Components != w.Components ||
				got.Progressive != w.Progressive || got.Sequential != w.Sequential || got.Scans != w.Scans {
				t.Fatalf("got %+v, want %+v", got, w)
			}
			if w.H != ([4]int{}) && (got.H != w.H || got.V != w.V) {
				t.Fatalf("sampling %v×%v, want %v×%v", got.H, got.V, w.H, w.V)
			}
			if tt.compareCfg {
				cfg, err := jpeg.DecodeConfig(bytes.NewReader(tt.data))
				if err != nil || cfg.Width != got.Width || cfg.Height != got.Height {
					t.Fatalf("image/jpeg: %v %v", cfg, err)
				}
			}
		})
	}
}

// TestFrameChecked: a frame other than the one checked is refused (not declined: the caller must
// not hand it to image/jpeg either) before its pixels are allocated.
func TestFrameChecked(t *testing.T) {
	smuggled := hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(8192, 8192), false)
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(smuggled)); err != nil || cfg.Width != 16 {
		t.Fatalf("the hostile file does not fool image.DecodeConfig: %v %v", cfg, err)
	}
	plain, err := os.ReadFile(filepath.Join("testdata", "s444.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		w, h int
	}{
		{"smuggled 8192×8192 behind 16×16", smuggled, 16, 16},
		{"smuggled, unchecked", smuggled, 0, 0},
		{"67×45 checked as 16×16", plain, 16, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := DecodeSized(tt.data, tt.w, tt.h)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrFrameMismatch) || errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v, want ErrFrameMismatch only", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Fatalf("allocated %d bytes before refusing", grew)
			}
		})
	}
	if _, _, err := DecodeSized(plain, 67, 45); err != nil {
		t.Fatalf("the checked size: %v", err)
	}
}

// TestPanicsLeaveNothingBehind injects a panic into a transform worker and into the entropy
// decoder: the panic reaches the unit of work that called Decode (and nothing else), and no
// goroutine is left running.
func TestPanicsLeaveNothingBehind(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	data := encode(t, testPicture(1400, 1000, 9), 85) // takes the parallel path
	boom := func() { panic("injected") }
	for _, hook := range []*func(){&testHookTransform, &testHookEntropy} {
		before := runtime.NumGoroutine()
		*hook = boom
		err := work.Do(context.Background(), "decode", func() error {
			_, err := Decode(data)
			return err
		})
		*hook = nil
		var p *work.Panic
		if !errors.As(err, &p) || p.Value != "injected" {
			t.Fatalf("err = %v, want the injected panic", err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				t.Fatalf("%d goroutines left behind", runtime.NumGoroutine()-before)
			}
			time.Sleep(time.Millisecond)
		}
		// The workers are gone and the decoder still works.
		equalToStdlib(t, data)
	}
}
