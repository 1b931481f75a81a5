package tiffdec

import (
	"bufio"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// orientedEntry is one line of testdata/oriented.tsv (written by testdata/oriented.sh): a page
// stored turned or mirrored, the Orientation tag it carries, and the upright page it shows.
type orientedEntry struct {
	file        string
	page        int
	orientation int
	source      string
}

func readOriented(t testing.TB) []orientedEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "oriented.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []orientedEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			t.Fatalf("oriented.tsv line %q", sc.Text())
		}
		e := orientedEntry{file: parts[0], page: 1, source: parts[2]}
		if name, p, ok := strings.Cut(e.file, "#"); ok {
			e.file = name
			e.page, _ = strconv.Atoi(p)
		}
		e.orientation, _ = strconv.Atoi(parts[1])
		out = append(out, e)
	}
	if len(out) < 8 {
		t.Fatalf("oriented.tsv lists %d pages", len(out))
	}
	return out
}

// TestOrientationTag: every page of the Orientation set says the orientation libtiff's tiffset
// wrote, its upright size is its source page's, its plan prices the upright copy (a byte a pixel
// for gray and bilevel, 4 for colour), and it decodes as stored.
func TestOrientationTag(t *testing.T) {
	for _, e := range readOriented(t) {
		t.Run(e.file+"#"+strconv.Itoa(e.page), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", e.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(context.Background(), data, Limits{MaxPages: 10})
			if err != nil {
				t.Fatal(err)
			}
			p := &f.Pages[e.page-1]
			if p.Orientation != e.orientation {
				t.Errorf("orientation %d, want %d", p.Orientation, e.orientation)
			}
			src := readPNG(t, filepath.Join("testdata", e.source)).Bounds()
			if w, h := p.UprightSize(); w != src.Dx() || h != src.Dy() {
				t.Errorf("upright %d×%d, the source page is %v", w, h, src.Size())
			}
			plan, err := p.Plan()
			if err != nil {
				t.Fatal(err)
			}
			bpp := int64(1)
			if e.source == "src-color.png" {
				bpp = 4
			}
			want := int64(0)
			if e.orientation > 1 {
				want += bpp * int64(p.Width) * int64(p.Height)
			}
			if w, h := p.UprightSize(); w*h != p.Width*p.Height {
				want += bpp * int64(w) * int64(h) // the square-pixel copy
			}
			if plan.UprightBytes != want {
				t.Errorf("UprightBytes %d, want %d", plan.UprightBytes, want)
			}
			if plan.Bytes() != plan.PixelBytes+max(plan.WorkBytes, plan.UprightBytes) {
				t.Errorf("Bytes %d does not count the upright copy (%+v)", plan.Bytes(), plan)
			}
			img, err := f.Decode(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != p.Width || b.Dy() != p.Height {
				t.Errorf("decoded %v, stored %d×%d", b.Size(), p.Width, p.Height)
			}
		})
	}
}

// TestOrientationOutOfRange: a tag outside 1–8 (0, 9, a LONG of 2^16+6) is read as 1, as libtiff
// reads it, not as a transformation nobody defined.
func TestOrientationOutOfRange(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "orient-bw-g4-6.tif"))
	if err != nil {
		t.Fatal(err)
	}
	bo, at := firstEntry(t, data, tagOrientation)
	for _, tc := range []struct {
		name string
		typ  uint16
		v    uint32
		want int
	}{
		{"as written", typeShort, 6, 6},
		{"0", typeShort, 0, 1},
		{"9", typeShort, 9, 1},
		{"a LONG of 2^16+6", typeLong, 1<<16 + 6, 1},
		{"a LONG of 8", typeLong, 8, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := append([]byte(nil), data...)
			bo.PutUint16(d[at+2:], tc.typ)
			if tc.typ == typeShort {
				bo.PutUint16(d[at+8:], uint16(tc.v))
				bo.PutUint16(d[at+10:], 0)
			} else {
				bo.PutUint32(d[at+8:], tc.v)
			}
			f, err := Open(context.Background(), d, Limits{MaxPages: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Pages[0].Orientation; got != tc.want {
				t.Errorf("orientation %d, want %d", got, tc.want)
			}
		})
	}
}

// TestResolutionStretch: a page whose X and Y resolutions differ by more than 10 % (a fax at
// standard resolution, 204 × 98 dpi) is shown at square pixels, its lower-resolution axis
// stretched; resolutions within 10 %, more than fourfold apart, or unreadable leave it as stored.
func TestResolutionStretch(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fax-std-g3.tif"))
	if err != nil {
		t.Fatal(err)
	}
	// Where the two RATIONAL entries keep their values.
	bo, xe := firstEntry(t, data, tagXResolution)
	_, ye := firstEntry(t, data, tagYResolution)
	at := map[uint16]uint32{tagXResolution: bo.Uint32(data[xe+8:]), tagYResolution: bo.Uint32(data[ye+8:])}
	for _, tc := range []struct {
		name               string
		xn, xd, yn, yd     uint32
		stretchX, stretchY float64
		w, h               int
	}{
		{"standard fax, 204 × 98", 204, 1, 98, 1, 1, 204.0 / 98, 800, 306},
		{"fine fax, 204 × 196: within 10 %", 204, 1, 196, 1, 1, 1, 800, 147},
		{"Y finer than X: X is stretched", 98, 1, 204, 1, 204.0 / 98, 1, 1665, 147},
		{"eightfold apart: read as stored", 800, 1, 100, 1, 1, 1, 800, 147},
		{"a zero denominator: read as stored", 204, 0, 98, 1, 1, 1, 800, 147},
		{"a zero resolution: read as stored", 0, 1, 98, 1, 1, 1, 800, 147},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := append([]byte(nil), data...)
			bo.PutUint32(d[at[tagXResolution]:], tc.xn)
			bo.PutUint32(d[at[tagXResolution]+4:], tc.xd)
			bo.PutUint32(d[at[tagYResolution]:], tc.yn)
			bo.PutUint32(d[at[tagYResolution]+4:], tc.yd)
			f, err := Open(context.Background(), d, Limits{MaxPages: 1})
			if err != nil {
				t.Fatal(err)
			}
			p := &f.Pages[0]
			if math.Abs(p.StretchX-tc.stretchX) > 1e-9 || math.Abs(p.StretchY-tc.stretchY) > 1e-9 {
				t.Errorf("stretch %g × %g, want %g × %g", p.StretchX, p.StretchY, tc.stretchX, tc.stretchY)
			}
			if w, h := p.UprightSize(); w != tc.w || h != tc.h {
				t.Errorf("shown at %d×%d, want %d×%d", w, h, tc.w, tc.h)
			}
		})
	}
}

// firstEntry returns the file's byte order and where the entry of tag lies in its first IFD.
func firstEntry(t *testing.T, data []byte, tag uint16) (binary.ByteOrder, int) {
	t.Helper()
	bo := binary.ByteOrder(binary.LittleEndian)
	if string(data[:2]) == "MM" {
		bo = binary.BigEndian
	}
	ifd := int(bo.Uint32(data[4:]))
	for i := range int(bo.Uint16(data[ifd:])) {
		if e := ifd + 2 + 12*i; bo.Uint16(data[e:]) == tag {
			return bo, e
		}
	}
	t.Fatalf("no entry %d in the first IFD", tag)
	return nil, 0
}
