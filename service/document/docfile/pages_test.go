package docfile_test

import (
	"encoding/binary"
	"errors"
	"image"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/tiffdec"
)

func TestParsePages(t *testing.T) {
	for _, c := range []struct {
		spec        string
		count, max  int
		want        []int
		err         error
		pagesInText bool // the error's message states the page count
	}{
		{spec: "", count: 3, max: 50, want: []int{1, 2, 3}},
		{spec: "1-3,5", count: 6, max: 50, want: []int{1, 2, 3, 5}},
		{spec: " 5, 1 - 2 ", count: 6, max: 50, want: []int{1, 2, 5}},
		{spec: "2,2,1-2", count: 3, max: 50, want: []int{1, 2}},
		{spec: "4-", count: 6, max: 50, want: []int{4, 5, 6}},
		{spec: "7", count: 7, max: 50, want: []int{7}},
		{spec: "8", count: 7, max: 50, err: docfile.ErrBadSelection, pagesInText: true},
		{spec: "1-999999999", count: 7, max: 50, err: docfile.ErrBadSelection, pagesInText: true},
		{spec: "0", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "3-1", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "1,,2", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "a", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "-3", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "1-2-3", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "+1", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "99999999999999999999", count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: strings.Repeat("1,", 600), count: 7, max: 50, err: docfile.ErrBadSelection},
		{spec: "", count: 51, max: 50, err: docfile.ErrTooManyPages},
		{spec: "1-51", count: 60, max: 50, err: docfile.ErrTooManyPages},
		{spec: "1-50", count: 60, max: 50, want: seq(1, 50)},
		{spec: "", count: 60, max: 0, want: seq(1, 60)},
	} {
		t.Run(c.spec, func(t *testing.T) {
			got, err := docfile.ParsePages(c.spec, c.count, c.max)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, %v; want %v", got, err, c.err)
				}
				var se *docfile.SelectionError
				if errors.As(err, &se) && se.Pages != c.count {
					t.Errorf("error carries %d pages, want %d", se.Pages, c.count)
				}
				if c.pagesInText && !strings.Contains(err.Error(), "has 7 pages") {
					t.Errorf("message %q does not state the page count", err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func seq(a, b int) []int {
	var out []int
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

// TestMultiPageTIFF reads each page of a three-page TIFF with different sizes and contents.
func TestMultiPageTIFF(t *testing.T) {
	imgs := []image.Image{stripes(60, 40, 0), stripes(50, 70, 1), stripes(80, 20, 2)}
	data := tiffPages(t, imgs...)
	doc := open(t, data)
	if doc.Format() != docfile.FormatTIFF || doc.NumPages() != 3 || doc.Bytes() != len(data) {
		t.Fatalf("format %q, %d pages, %d bytes", doc.Format(), doc.NumPages(), doc.Bytes())
	}
	ctx := ctxFor(t, time.Minute)
	for n, want := range imgs {
		page, err := doc.Page(ctx, n+1)
		if err != nil {
			t.Fatal(err)
		}
		wb := want.Bounds()
		if !page.Raster || int(page.Width) != wb.Dx() || int(page.Height) != wb.Dy() {
			t.Errorf("page %d: %v×%v raster %v; want %d×%d", n+1, page.Width, page.Height, page.Raster, wb.Dx(), wb.Dy())
		}
		if s := scaleOf(t, page, docfile.Limits{}); s != 1 {
			t.Errorf("page %d: scale %v, want 1", n+1, s)
		}
		if d := page.TextUsable(); d.Usable {
			t.Errorf("page %d: a raster page has a usable text layer", n+1)
		}
		dec, err := doc.Render(ctx, page, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		img := dec.Image
		if img.Bounds() != wb {
			t.Fatalf("page %d: %v, want %v", n+1, img.Bounds(), wb)
		}
		for y := 0; y < wb.Dy(); y++ {
			for x := 0; x < wb.Dx(); x++ {
				g, _, _, _ := img.At(x, y).RGBA()
				w, _, _, _ := want.At(x, y).RGBA()
				if g != w {
					t.Fatalf("page %d: pixel (%d,%d) is %d, want %d", n+1, x, y, g, w)
				}
			}
		}
	}
	if _, err := doc.Page(ctx, 4); !errors.Is(err, docfile.ErrBadSelection) {
		t.Errorf("page 4 of 3: %v", err)
	}
}

func TestTIFFErrors(t *testing.T) {
	good := tiffPages(t, stripes(30, 20, 0), stripes(30, 20, 1))
	ifd2 := binary.LittleEndian.Uint32(good[4:]) // first IFD; its next pointer follows its entries
	n := binary.LittleEndian.Uint16(good[ifd2:])
	next := ifd2 + 2 + 12*uint32(n)

	loop := slices.Clone(good)
	binary.LittleEndian.PutUint32(loop[next:], ifd2) // page 1 points back at itself
	outside := slices.Clone(good)
	binary.LittleEndian.PutUint32(outside[next:], uint32(len(good)+100))
	huge := tiffPages(t, stripes(30, 20, 0), stripes(30, 20, 1))
	setSize(t, huge, 1, 60000, 60000) // page 2 claims 3.6 Gpx
	big := testReader(t).WithLimits(docfile.Limits{MaxDocumentPages: 1})

	ctx := ctxFor(t, time.Minute)
	for _, c := range []struct {
		name string
		r    *docfile.Reader
		data []byte
		page int
		want error
	}{
		// As libtiff: a chain that loops back ends there; page 1 is read (page 2 is lost).
		{"looping chain", testReader(t), loop, 1, nil},
		{"next IFD outside the file", testReader(t), outside, 0, docfile.ErrCorrupt},
		{"truncated in the chain", testReader(t), good[:len(good)/2], 0, docfile.ErrCorrupt},
		{"truncated in the pixels", testReader(t), stripCut(t, good), 2, docfile.ErrCorrupt},
		{"bigtiff", testReader(t), []byte("II+\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 0, docfile.ErrUnsupported},
		{"more pages than the document limit", big, good, 0, docfile.ErrTooManyPages},
		{"a page over the pixel limit", testReader(t), huge, 2, docfile.ErrTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := c.r.Open(ctx, c.data)
			if err == nil && c.page > 0 {
				defer doc.Close()
				var p *docfile.Page
				if p, err = doc.Page(ctx, c.page); err == nil {
					_, err = doc.Render(ctx, p, 1, nil)
				}
			} else if err == nil {
				doc.Close()
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v; want %v", err, c.want)
			}
			// An error about one page names it.
			var pe *tiffdec.PageError
			if c.page > 0 && c.want != nil && !errors.Is(c.want, docfile.ErrTooLarge) && (!errors.As(err, &pe) || pe.Page != c.page) {
				t.Fatalf("error %v; want a *tiffdec.PageError for page %d", err, c.page)
			}
		})
	}
}

// stripCut points page 2's pixel data past the end of the file (its IFD stays intact).
func stripCut(t testing.TB, data []byte) []byte {
	t.Helper()
	data = slices.Clone(data)
	off := binary.LittleEndian.Uint32(data[4:])
	n := binary.LittleEndian.Uint16(data[off:])
	off = binary.LittleEndian.Uint32(data[off+2+12*uint32(n):])
	n = binary.LittleEndian.Uint16(data[off:])
	for k := uint32(0); k < uint32(n); k++ {
		e := data[off+2+12*k:]
		if binary.LittleEndian.Uint16(e) == 273 { // StripOffsets
			binary.LittleEndian.PutUint32(e[8:], uint32(len(data)-4))
		}
	}
	return data
}

// setSize rewrites page index's ImageWidth and ImageLength entries in a little-endian TIFF.
func setSize(t testing.TB, data []byte, index int, w, h uint32) {
	t.Helper()
	off := binary.LittleEndian.Uint32(data[4:])
	for ; index > 0; index-- {
		n := binary.LittleEndian.Uint16(data[off:])
		off = binary.LittleEndian.Uint32(data[off+2+12*uint32(n):])
	}
	n := binary.LittleEndian.Uint16(data[off:])
	for k := uint32(0); k < uint32(n); k++ {
		e := data[off+2+12*k:]
		switch binary.LittleEndian.Uint16(e) {
		case 256, 257:
			v := w
			if binary.LittleEndian.Uint16(e) == 257 {
				v = h
			}
			binary.LittleEndian.PutUint16(e[2:], 4) // LONG
			binary.LittleEndian.PutUint32(e[8:], v)
		}
	}
}
