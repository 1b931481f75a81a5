package tiffdec

import (
	"bytes"
	"context"
	"errors"
	"image"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
)

// underBudget runs fn under a CPU budget of limit and fails the test when fn needs more: the way
// a speed bound is held without a timed test (a decode that rescans its input needs minutes of
// CPU where it should need milliseconds; the limit is far from both).
func underBudget(t *testing.T, limit time.Duration, fn func(ctx context.Context) error) {
	t.Helper()
	ctx := cpubudget.With(context.Background(), cpubudget.New(limit))
	used, err := cpubudget.Run(ctx, fn)
	if errors.Is(err, cpubudget.ErrExceeded) {
		t.Fatalf("stopped after %v of CPU: %v", used, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v of CPU", used)
}

// TestG3WithoutEOLOverOverlappingStrips (issue 33, C1): one-dimensional T.4 without EOLs in 2 000
// one-row strips whose byte counts each run to the end of 2 MB of data. Each strip decodes from
// its first two bytes; a decoder that looked through each strip's whole extent for an EOL first
// read 2 GB at 35 ns a byte (70 CPU-s; the 10 000 strips of 4 MB took 1 470). The bytes
// a decode reads are bounded by its output, strip by strip.
func TestG3WithoutEOLOverOverlappingStrips(t *testing.T) {
	data := hostile.TIFFG3NoEOLStrips(2000, 1, 2<<20)
	underBudget(t, 10*time.Second, func(ctx context.Context) error {
		f, err := Open(ctx, data, Limits{})
		if err != nil {
			return err
		}
		img, err := f.Decode(ctx, &f.Pages[0])
		if err != nil {
			return err
		}
		// Every row is white.
		g := img.(*image.Gray)
		if g.Rect.Dx() != 1746 || g.Rect.Dy() != 2000 || bytes.Count(g.Pix, []byte{255}) != len(g.Pix) {
			t.Errorf("decoded %v, not a white page", g.Rect)
		}
		return nil
	})
}

// TestPlanIsCheap (issue 33, H2): pages whose tiles are one pixel each, every page's offsets one
// shared array of 4 million entries. Planning went through every tile of every page (27–68 ms a
// page here, 0.5 s in the 2 000-page file: 960 CPU-s before the survey could refuse
// the request); a page's plan now costs the same whatever its tile count.
func TestPlanIsCheap(t *testing.T) {
	data := hostile.TIFFManyPages(300, 2000)
	underBudget(t, 5*time.Second, func(ctx context.Context) error {
		f, err := Open(ctx, data, Limits{})
		if err != nil {
			return err
		}
		for i := range f.Pages {
			if _, err := f.Pages[i].Plan(); err != nil {
				return err
			}
		}
		return nil
	})
}

// countdown is a context that reports itself canceled from its n-th look on: a decode that looks
// at its context only between strips decodes a one-strip page whole whatever its context says.
type countdown struct {
	context.Context
	looks atomic.Int64
	n     int64
}

func (c *countdown) Err() error {
	if c.looks.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

// TestDecodeLooksAtItsContextInsideAStrip: a decode stops within a bounded amount of work after
// its context ends, inside one strip as between strips. Each page here is one strip of
// megabytes, which the decoder looked at its context only before.
func TestDecodeLooksAtItsContextInsideAStrip(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"Deflate, 4000×4000 gray", hostile.TIFFDeflateBomb(4000, 4000, 8, 16_000_000)},
		{"T.4 with EOLs, 1728×8000", hostile.TIFFCCITTZeroRuns(8000, 0)},
		{"T.4 without EOLs, 1746×8000", hostile.TIFFG3NoEOLStrips(1, 8000, 16_000)},
		{"JPEG, 6000×4000 gray", hostile.TIFFJPEGStrip(6000, 4000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(context.Background(), tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Decode(context.Background(), &f.Pages[0]); err != nil {
				t.Fatalf("the page does not decode: %v", err)
			}
			ctx := &countdown{Context: context.Background(), n: 3}
			_, err = f.Decode(ctx, &f.Pages[0])
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Decode: %v after %d looks at its context; want it to stop at the 3rd", err, ctx.looks.Load())
			}
		})
	}
}

// TestZeroBitSamplesAreCorrupt (issue 33): no TIFF has samples of 0 bits, so such a page is
// corrupt, not a valid file in a depth this reader lacks (which was answered 415).
func TestZeroBitSamplesAreCorrupt(t *testing.T) {
	f, err := Open(context.Background(), hostile.TIFFZeroBitSamples(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Pages[0].Plan()
	var pe *PageError
	if !errors.As(err, &pe) || !errors.Is(pe.Kind(), ErrCorrupt) || errors.Is(err, ErrUnsupported) {
		t.Fatalf("Plan: %v; want a *PageError wrapping ErrCorrupt", err)
	}
}

// TestPaletteWithAnExtraPlane (issue 33, L1): a palette page with an extra sample in separate
// planes panicked ("index out of range [600] with length 600": the palette's indexes written
// as RGBA). It decodes as the same page stored contiguously does, which is what libtiff's
// tiff2rgba gives for that one (it refuses the planar one: "Sorry, can not handle image"):
// the indexes through the palette, the extra sample ignored.
func TestPaletteWithAnExtraPlane(t *testing.T) {
	decode := func(planar bool) *image.Paletted {
		t.Helper()
		f, err := Open(context.Background(), hostile.TIFFPaletteExtra(150, 20, planar), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		img, err := f.Decode(context.Background(), &f.Pages[0])
		if err != nil {
			t.Fatalf("planar %v: %v", planar, err)
		}
		p, ok := img.(*image.Paletted)
		if !ok {
			t.Fatalf("planar %v: decoded a %T", planar, img)
		}
		return p
	}
	planar, contig := decode(true), decode(false)
	if !bytes.Equal(planar.Pix, contig.Pix) || len(planar.Palette) != len(contig.Palette) {
		t.Fatal("the planar page decodes otherwise than the contiguous one")
	}
	for i, v := range contig.Pix {
		x, y := i%150, i/150
		if v != byte(x+y) {
			t.Fatalf("pixel (%d, %d) is index %d, want %d", x, y, v, byte(x+y))
		}
	}
	if r, g, b, _ := contig.Palette[200].RGBA(); r>>8 != 200 || g>>8 != 55 || b>>8 != 100 {
		t.Errorf("palette entry 200 is %v", contig.Palette[200])
	}
}

// TestCMYKWithAlpha (issue 33, L1's audit): a CMYK page with an alpha sample shows as libtiff's
// tiff2rgba shows it, opaque, its alpha ignored, in either planar layout. Stored in separate
// planes, the alpha plane was written over black (127 levels off libtiff's pixels); stored
// contiguously, its alpha was applied (128 off).
func TestCMYKWithAlpha(t *testing.T) {
	for _, planar := range []bool{false, true} {
		f, err := Open(context.Background(), hostile.TIFFCMYKAlpha(64, 32, planar), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		img, err := f.Decode(context.Background(), &f.Pages[0])
		if err != nil {
			t.Fatalf("planar %v: %v", planar, err)
		}
		for y := range 32 {
			for x := range 64 {
				r, g, b := cmyk(byte(x), byte(y), 64, 32)
				if got, want := overWhite(img.At(x, y)), [3]int{int(r), int(g), int(b)}; got != want {
					t.Fatalf("planar %v: pixel (%d, %d) shows %v, want %v", planar, x, y, got, want)
				}
			}
		}
	}
}

// TestReadsLinearInOutput (issue 33, C1): what a decode reads of the file is bounded by what it
// writes, whatever the strips' byte counts claim and however they overlap. 2 000 one-row strips,
// each claiming the rest of 2 MB, read 2 GB before (see TestG3WithoutEOLOverOverlappingStrips).
func TestReadsLinearInOutput(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"G3 without EOLs, 2000 strips over 2 MB", hostile.TIFFG3NoEOLStrips(2000, 1, 2<<20)},
		{"G3 without EOLs, one strip of 8000 rows", hostile.TIFFG3NoEOLStrips(1, 8000, 16_000)},
		{"Deflate bomb", hostile.TIFFDeflateBomb(2000, 2000, 8, 64<<20)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(context.Background(), tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			p := &f.Pages[0]
			l, err := p.layout()
			if err != nil {
				t.Fatal(err)
			}
			pc := &pace{ctx: context.Background()}
			if _, err := f.decode(pc, p, 1); err != nil {
				t.Fatal(err)
			}
			out := int64(l.rowBytes) * int64(l.h) // the page decompressed
			if pc.read > 16*out+int64(len(tt.data)) {
				t.Errorf("read %d bytes of a %d-byte file for %d bytes of output", pc.read, len(tt.data), out)
			}
			t.Logf("read %d bytes of a %d-byte file for %d bytes of output", pc.read, len(tt.data), out)
		})
	}
}

// TestSubsampledYCbCrPredicted (issue 33, L1's audit): horizontal differencing of subsampled
// YCbCr runs as libtiff runs it, over its scanlines (a row of units divided by the vertical
// subsampling), a pixel's three samples apart: each page decodes as the same page stored without
// differencing does (and as libtiff's tiff2rgba decodes both). It ran over 3 bytes a pixel of
// the page's width instead: past the row at 4×1 (a panic, "index out of range [96] with length
// 96"), and across two scanlines at 2×2. Rows that are not whole pixels (2×1 and 1×2: 4-byte
// units) are corrupt, as libtiff refuses them ("horAcc8: (cc%stride)!=0").
func TestSubsampledYCbCrPredicted(t *testing.T) {
	decode := func(data []byte) (image.Image, error) {
		f, err := Open(context.Background(), data, Limits{})
		if err != nil {
			return nil, err
		}
		return f.Decode(context.Background(), &f.Pages[0])
	}
	for _, s := range [][2]int{{4, 1}, {2, 2}, {4, 4}} {
		want, err := decode(hostile.TIFFYCbCrSubsampled(64, 16, s[0], s[1], false))
		if err != nil {
			t.Fatalf("%d×%d: %v", s[0], s[1], err)
		}
		got, err := decode(hostile.TIFFYCbCrSubsampled(64, 16, s[0], s[1], true))
		if err != nil {
			t.Fatalf("%d×%d, differenced: %v", s[0], s[1], err)
		}
		if !bytes.Equal(got.(*image.RGBA).Pix, want.(*image.RGBA).Pix) {
			t.Errorf("%d×%d: the differenced page decodes otherwise", s[0], s[1])
		}
	}
	for _, s := range [][2]int{{2, 1}, {1, 2}} {
		if _, err := decode(hostile.TIFFYCbCrSubsampled(64, 16, s[0], s[1], true)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%d×%d, differenced over 4-byte units: %v; want ErrCorrupt", s[0], s[1], err)
		}
	}
}
