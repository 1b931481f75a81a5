package tiffdec

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
)

// chain builds a TIFF of n one-entry directories, each a thumbnail unless it is the last, which is
// a 1×1 page (no pixels: Open reads directories only), with subIFDs SubIFDs claimed by the first.
func chain(n int, subIFDs uint32, loop bool) []byte {
	le := binary.LittleEndian
	b := []byte("II*\x00\x08\x00\x00\x00")
	for i := range n {
		entries := [][3]uint32{{254, 4, 1}}
		if i == n-1 {
			entries = [][3]uint32{{256, 4, 1}, {257, 4, 1}}
		}
		if i == 0 && subIFDs > 0 {
			entries = append(entries, [3]uint32{330, 13, subIFDs})
		}
		b = le.AppendUint16(b, uint16(len(entries)))
		for _, e := range entries {
			val := uint32(1)
			if e[0] == 330 {
				val = 8 // offsets nobody reads
			}
			b = le.AppendUint16(b, uint16(e[0]))
			b = le.AppendUint16(b, uint16(e[1]))
			b = le.AppendUint32(b, e[2])
			b = le.AppendUint32(b, val)
		}
		next := uint32(len(b) + 4)
		if i == n-1 {
			next = 0
			if loop {
				next = 8
			}
		}
		b = le.AppendUint32(b, next)
	}
	return b
}

// TestChainBounds: the walk is bounded in directories (thumbnails and SubIFDs counted) and in
// entries (overlapping directories gain nothing), ends at a loop and stops when its context ends.
// The 50 000-directory chain of overlapping 4095-entry directories took 9.3 s a walk (three walks a
// request) before these bounds.
func TestChainBounds(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		data []byte
		lim  Limits
		want error
	}{
		{"50000 overlapping directories of 4095 entries", ctx, hostile.TIFFOverlappingIFDs(50_000, 4095), Limits{}, ErrCorrupt},
		{"directories of 65535 entries", ctx, hostile.TIFFOverlappingIFDs(100, 65535), Limits{}, ErrCorrupt},
		{"50000 thumbnails before a page", ctx, chain(50_000, 0, false), Limits{}, ErrTooManyPages},
		{"a page with a million SubIFDs", ctx, chain(1, 1_000_000, false), Limits{}, ErrTooManyPages},
		{"a cancelled walk", cancelled, chain(1000, 0, false), Limits{MaxIFDs: 5000}, context.Canceled},
		{"thumbnails beyond the fixed bound", ctx, chain(20, 0, false), Limits{MaxPages: 1, MaxIFDs: 8}, ErrTooManyPages},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.ctx, tt.data, tt.lim)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open: %v; want %v", err, tt.want)
			}
		})
	}
	// Within the bounds, the same shapes open; a chain that loops back ends there, its pages
	// read (as libtiff does).
	f, err := Open(ctx, chain(100, 0, false), Limits{})
	if err != nil || len(f.Pages) != 1 || f.IFDs != 100 {
		t.Fatalf("100 directories: %v", err)
	}
	f, err = Open(ctx, chain(3, 0, true), Limits{})
	if err != nil || len(f.Pages) != 1 || f.IFDs != 3 {
		t.Fatalf("a chain that loops: %v", err)
	}
}

// allocated returns the bytes fn allocates (runtime.MemStats.TotalAlloc: every allocation, even
// one freed at once, so it bounds the peak from above).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecodeWithinPlan: decoding allocates no more than the page's plan says, whether it
// succeeds or not. A 295 KB Deflate TIFF of a 7000×7000 1-bit page whose strip inflates to
// 290 MB allocated 1 075 MiB in x/image/tiff; here it holds its 49 MB page and its 6 MB strip.
// Rows of 200 000 zero-length CCITT runs each (issue 33, M1) grew 18 MB of changing elements
// for a plan of 27 KB (resident memory grew 219 MiB a request in the issue); they are refused as
// libtiff refuses them, within the plan. Every page of the test set is held to its plan the
// same way (a JPEG page's decoder state is priced per strip or tile, and each is garbage before
// the next: they are counted once a chunk).
func TestDecodeWithinPlan(t *testing.T) {
	type page struct {
		name    string
		data    []byte
		n       int
		corrupt bool // decoding fails, within the plan
	}
	pages := []page{
		{"Deflate bomb", hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20), 1, false},
		{"CCITT rows of zero-length runs", hostile.TIFFCCITTZeroRuns(4, 200_000), 1, true},
		{"G3 without EOLs over 2000 overlapping strips", hostile.TIFFG3NoEOLStrips(2000, 1, 2<<20), 1, false},
	}
	for _, e := range readManifest(t) {
		if e.ref == "corrupt" || e.ref == "unsupported" {
			continue
		}
		data, err := os.ReadFile(filepath.Join("testdata", e.file))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page{e.file, data, e.page, false})
	}
	const slack = 16 << 10 // the error values, closures and small slices of one decode
	for _, p := range pages {
		f, err := Open(context.Background(), p.data, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		pg := &f.Pages[p.n-1]
		plan, err := pg.Plan()
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		l, _ := pg.layout()
		chunks := uint64(1)
		if l.compression == compJPEG {
			chunks = uint64(l.across * l.down * l.planes)
		}
		var derr error
		got := allocated(func() { _, derr = f.Decode(context.Background(), pg) })
		if p.corrupt && !errors.Is(derr, ErrCorrupt) || !p.corrupt && derr != nil {
			t.Fatalf("%s: %v", p.name, derr)
		}
		bound := uint64(plan.PixelBytes) + chunks*uint64(plan.WorkBytes) + slack
		if got > bound {
			t.Errorf("%s page %d: decoding allocated %d bytes; the plan says %d + %d", p.name, p.n, got, plan.PixelBytes, plan.WorkBytes)
		}
	}
}

// BenchmarkOpenLongestChain walks the most directories Open accepts by default (2×10 000 + 16),
// in a 20 MiB file whose directories fill it with entries: the bound on what one walk costs.
func BenchmarkOpenLongestChain(b *testing.B) {
	lim := Limits{}.withDefaults()
	n := lim.MaxIFDs
	perIFD := (20<<20)/n/12 - 1
	le := binary.LittleEndian
	data := []byte("II*\x00\x08\x00\x00\x00")
	for i := range n {
		data = le.AppendUint16(data, uint16(perIFD))
		for k := range perIFD {
			tag, val := uint16(254), uint32(1)
			if i == n-1 {
				tag = uint16(256 + min(k, 2)) // width, height, then bits a sample
			}
			data = le.AppendUint16(data, tag)
			data = le.AppendUint16(data, 4)
			data = le.AppendUint32(data, 1)
			data = le.AppendUint32(data, val)
		}
		next := uint32(len(data) + 4)
		if i == n-1 {
			next = 0
		}
		data = le.AppendUint32(data, next)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := Open(context.Background(), data, Limits{})
		if err != nil || len(f.Pages) != 1 {
			b.Fatal(err)
		}
	}
}
