package tiffdec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
)

// pixelAt returns a pixel of a decoded page as its channels: gray, or R, G, B, A (a palette
// entry's colour for a palette page).
func pixelAt(img image.Image, x, y int) []uint8 {
	switch m := img.(type) {
	case *image.Gray:
		return []uint8{m.Pix[y*m.Stride+x]}
	case *image.Paletted:
		c := m.Palette[m.Pix[y*m.Stride+x]].(color.RGBA)
		return []uint8{c.R, c.G, c.B, c.A}
	case *image.RGBA:
		return m.Pix[y*m.Stride+4*x:][:4]
	case *image.NRGBA:
		return m.Pix[y*m.Stride+4*x:][:4]
	}
	panic("unexpected image type")
}

func isWhite(px []uint8) bool {
	for i, v := range px {
		if v != 255 && (i != 3 || len(px) != 4) {
			return false
		}
	}
	return true
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// decodeBoth decodes the first page of data whole (Decode, which refuses damage) and as
// DecodePage reads it.
func decodeBoth(t *testing.T, whole, damaged []byte) (image.Image, Decoded, error) {
	t.Helper()
	f, err := Open(context.Background(), whole, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := f.Decode(context.Background(), &f.Pages[0])
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(context.Background(), damaged, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Decode(context.Background(), &g.Pages[0]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode of the damaged page: %v; want ErrCorrupt", err)
	}
	dec, err := g.DecodePage(context.Background(), &g.Pages[0], 1)
	return ref, dec, err
}

// entryValue returns the first value of the entry at e (SHORT or LONG), or where its values lie
// when they do not fit in the entry.
func entryValue(bo binary.ByteOrder, data []byte, e int) (count, first int) {
	typ, n := bo.Uint16(data[e+2:]), int(bo.Uint32(data[e+4:]))
	size := 4
	if typ == 3 {
		size = 2
	}
	at := e + 8
	if n*size > 4 {
		at = int(bo.Uint32(data[e+8:]))
	}
	if size == 2 {
		return n, int(bo.Uint16(data[at:]))
	}
	return n, int(bo.Uint32(data[at:]))
}

// TestDamagedStripReadUpToItsDamage: a G4 page whose data goes wrong part way is read up to the
// row where it does, as libtiff reads it (tiff2rgba of a real 200-dpi G4 form damaged at row
// 1 361 shows rows 1 to 1 360 as they are, the rest white, and so does DecodePage); the rows
// past the damage are white and the page's Damage says which. Decode, which answers whole
// pages only, refuses it.
func TestDamagedStripReadUpToItsDamage(t *testing.T) {
	whole := readTestdata(t, "bw-g4.tif")
	bo, e := firstEntry(t, whole, 273)
	_, off := entryValue(bo, whole, e)
	_, ce := firstEntry(t, whole, 279)
	_, size := entryValue(bo, whole, ce)
	damaged := bytes.Clone(whole)
	for i := off + size/2; i < off+size/2+8; i++ {
		damaged[i] = 0 // zeros: no T.6 code begins so
	}
	ref, dec, err := decodeBoth(t, whole, damaged)
	if err != nil {
		t.Fatal(err)
	}
	h := ref.Bounds().Dy()
	d := dec.Damage
	if d == nil || d.FirstRow <= 0 || d.FirstRow >= h || d.LastRow != h-1 || d.Chunks != 1 || d.Tiles {
		t.Fatalf("damage %+v; want rows from the middle of the page to its end, in 1 strip", d)
	}
	// The damaged row, just above FirstRow, is kept as far as it was read, as libtiff keeps it
	// (codes read before the damage was seen may be wrong already): it is not compared.
	for y := range h {
		for x := range ref.Bounds().Dx() {
			got, want := pixelAt(dec.Image, x, y), pixelAt(ref, x, y)
			if y < d.FirstRow-1 && !bytes.Equal(got, want) || y >= d.FirstRow && !isWhite(got) {
				t.Fatalf("pixel (%d, %d) is %v; want %v above row %d, white from it", x, y, got, want, d.FirstRow)
			}
		}
	}
	if d.Lost != int64(h-d.FirstRow)*int64(ref.Bounds().Dx()) {
		t.Errorf("lost %d pixels; want the rows from %d", d.Lost, d.FirstRow)
	}
}

// TestShortOffsetsList: a tiled page whose TileOffsets and TileByteCounts list fewer tiles than
// it has (3 real tiled files so written answered 422) reads the tiles listed; those not listed
// are white and counted in Damage. libtiff reads the listed tiles too and fails the others.
func TestShortOffsetsList(t *testing.T) {
	for _, name := range []string{"gray8-tiles-lzw.tif", "rgb-lzw-tiles.tif", "rgb-jpeg-ycbcr-tiles.tif"} {
		t.Run(name, func(t *testing.T) {
			whole := readTestdata(t, name)
			damaged := bytes.Clone(whole)
			var n int
			for _, tag := range []uint16{324, 325} {
				bo, e := firstEntry(t, damaged, tag)
				n = int(bo.Uint32(damaged[e+4:]))
				bo.PutUint32(damaged[e+4:], uint32(n-1)) // still more than fit in the entry
			}
			ref, dec, err := decodeBoth(t, whole, damaged)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := Open(context.Background(), whole, Limits{})
			l, _ := f.Pages[0].layout()
			x0, y0 := (l.across-1)*l.cw, (l.down-1)*l.ch // the last tile
			d := dec.Damage
			if d == nil || d.Chunks != 1 || !d.Tiles || d.FirstRow != y0 {
				t.Fatalf("damage %+v; want tile %d of %d, from row %d", d, n, n, y0)
			}
			b := ref.Bounds()
			for y := range b.Dy() {
				for x := range b.Dx() {
					got, want := pixelAt(dec.Image, x, y), pixelAt(ref, x, y)
					lost := x >= x0 && y >= y0
					if !lost && !bytes.Equal(got, want) || lost && !isWhite(got) {
						t.Fatalf("pixel (%d, %d) is %v; want %v, white in the tile not listed", x, y, got, want)
					}
				}
			}
		})
	}
}

// TestNothingReadIsAnError: a page of which not a row could be read is not answered as a white
// page with a warning: it is the first strip's error.
func TestNothingReadIsAnError(t *testing.T) {
	data := bytes.Clone(readTestdata(t, "bw-g4.tif"))
	bo, e := firstEntry(t, data, 273)
	_, off := entryValue(bo, data, e)
	for i := off; i < off+8; i++ {
		data[i] = 0
	}
	f, err := Open(context.Background(), data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DecodePage(context.Background(), &f.Pages[0], 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodePage: %v; want ErrCorrupt", err)
	}
}

// TestShrunkIsTheMeanOfThePage: a page read k times smaller is, pixel for pixel, the mean of the
// k × k pixels of the page it covers (rounded; fewer at the right and bottom edges), for every
// layout of the test set that can be read so (strips and tiles, every codec, subsampled YCbCr,
// palettes, which take their entries' colours), and its plan holds: what the decode allocates
// stays within PlanAt(k), which is the smaller page and one strip or tile, not the page.
func TestShrunkIsTheMeanOfThePage(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range readManifest(t) {
		if e.ref == "corrupt" || e.ref == "unsupported" || seen[e.file] {
			continue
		}
		seen[e.file] = true
		data := readTestdata(t, e.file)
		f, err := Open(context.Background(), data, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		p := &f.Pages[e.page-1]
		full, err := f.Decode(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", e.file, err)
		}
		for _, k := range []int{2, 3} {
			plan, err := p.PlanAt(k)
			if errors.Is(err, ErrUnsupported) {
				continue // separate planes: read at their own size only
			}
			if err != nil {
				t.Fatalf("%s: %v", e.file, err)
			}
			var dec Decoded
			got := allocated(func() { dec, err = f.DecodePage(context.Background(), p, k) })
			if err != nil || dec.Damage != nil {
				t.Fatalf("%s shrunk %d: %v %v", e.file, k, err, dec.Damage)
			}
			l, _ := p.layout()
			chunks := uint64(1)
			if l.compression == compJPEG {
				chunks = uint64(l.across * l.down * l.planes)
			}
			if bound := uint64(plan.PixelBytes) + chunks*uint64(plan.WorkBytes) + 16<<10; got > bound {
				t.Errorf("%s shrunk %d: allocated %d bytes; the plan says %d + %d", e.file, k, got, plan.PixelBytes, plan.WorkBytes)
			}
			fb := full.Bounds()
			if w, h := plan.Size(); dec.Image.Bounds() != image.Rect(0, 0, w, h) || w != (fb.Dx()+k-1)/k || h != (fb.Dy()+k-1)/k {
				t.Fatalf("%s shrunk %d: %v, plan %d×%d, of a %v page", e.file, k, dec.Image.Bounds(), w, h, fb)
			}
			checkMeans(t, e.file, full, dec.Image, k)
		}
	}
}

func checkMeans(t *testing.T, name string, full, small image.Image, k int) {
	t.Helper()
	fb, sb := full.Bounds(), small.Bounds()
	for Y := range sb.Dy() {
		for X := range sb.Dx() {
			var sum [4]int
			n, nch := 0, 0
			for y := Y * k; y < min(Y*k+k, fb.Dy()); y++ {
				for x := X * k; x < min(X*k+k, fb.Dx()); x++ {
					px := pixelAt(full, x, y)
					nch = len(px)
					for c, v := range px {
						sum[c] += int(v)
					}
					n++
				}
			}
			got := pixelAt(small, X, Y)
			if len(got) != nch {
				t.Fatalf("%s shrunk %d: %d channels; the page has %d", name, k, len(got), nch)
			}
			for c := range nch {
				if want := (sum[c] + n/2) / n; int(got[c]) != want {
					t.Fatalf("%s shrunk %d: pixel (%d, %d) channel %d is %d; the mean of the page's is %d", name, k, X, Y, c, got[c], want)
				}
			}
		}
	}
}

// TestShrunkLargePageWithinPlan: a page too large to hold is read shrunk within a plan that is
// the smaller page's: a 7000×7000 Deflate page whose strip inflates to 290 MB, read 4 times
// smaller, holds a 3 MB page and one strip, not its 49 MB.
func TestShrunkLargePageWithinPlan(t *testing.T) {
	data := hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20)
	f, err := Open(context.Background(), data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p := &f.Pages[0]
	whole, _ := p.Plan()
	plan, err := p.PlanAt(4)
	if err != nil {
		t.Fatal(err)
	}
	if plan.PixelBytes*10 > whole.PixelBytes {
		t.Fatalf("plan at a quarter: %d bytes of pixels; whole %d", plan.PixelBytes, whole.PixelBytes)
	}
	var dec Decoded
	got := allocated(func() { dec, err = f.DecodePage(context.Background(), p, 4) })
	if err != nil || dec.Damage != nil {
		t.Fatal(err, dec.Damage)
	}
	if bound := uint64(plan.PixelBytes+plan.WorkBytes) + 16<<10; got > bound {
		t.Errorf("allocated %d bytes; the plan says %d + %d", got, plan.PixelBytes, plan.WorkBytes)
	}
	if got >= uint64(whole.PixelBytes) {
		t.Errorf("allocated %d bytes, as much as the whole page (%d)", got, whole.PixelBytes)
	}
}
