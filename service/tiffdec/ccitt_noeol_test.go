package tiffdec

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"math/bits"
	"path/filepath"
	"slices"
	"testing"
)

// TestG3WithoutEOL: one-dimensional T.4 written without EOLs, rows following each other bit
// after bit (libtiff writes it so, and reads it since 4.7.1), decodes to the page it was made
// from. It was refused as corrupt: "T.4 data ends at line 1 of 37". No tool here writes such a
// file, so the test does: src-fax.png, a page of make.sh's, set on a wider sheet, coded row by
// row with the modified Huffman codes of T.4 (the tables in ccitt_codes.go, which
// TestMatchesLibtiff holds to libtiff through the EOL-framed G3 pages of the test set). The
// sheets are a fax's width in strips of 37 rows, as libtiff's own test page of this kind was,
// and a wider one in one strip with the bits of each byte reversed (FillOrder 2), whose blank
// rows need T.4's longest make-up codes.
func TestG3WithoutEOL(t *testing.T) {
	src := readPNG(t, filepath.Join("testdata", "src-fax.png"))
	for _, tt := range []struct {
		name                 string
		width, rowsPerStrip  int
		fillOrder            uint16
		left, top, bottomPad int
	}{
		{"fax width, strips of 37 rows", 1728, 37, 1, 200, 40, 45},
		{"2600 wide, one strip, bits reversed", 2600, 0, 2, 1500, 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sb := src.Bounds()
			page := image.NewGray(image.Rect(0, 0, tt.width, tt.top+sb.Dy()+tt.bottomPad))
			for i := range page.Pix {
				page.Pix[i] = 255
			}
			for y := range sb.Dy() {
				for x := range sb.Dx() {
					if r, _, _, _ := src.At(sb.Min.X+x, sb.Min.Y+y).RGBA(); r < 0x8000 {
						page.Pix[(tt.top+y)*page.Stride+tt.left+x] = 0
					}
				}
			}
			rows := tt.rowsPerStrip
			if rows == 0 {
				rows = page.Rect.Dy()
			}
			data := g3NoEOLTIFF(page, rows, tt.fillOrder)
			f, err := Open(context.Background(), data, Limits{MaxPages: 1})
			if err != nil {
				t.Fatal(err)
			}
			img, err := f.Decode(context.Background(), &f.Pages[0])
			if err != nil {
				t.Fatal(err)
			}
			got, ok := img.(*image.Gray)
			if !ok {
				t.Fatalf("decodes to %T", img)
			}
			if got.Rect != page.Rect || !bytes.Equal(got.Pix, page.Pix) {
				t.Fatalf("decoded %v; the page is %v, and the pixels differ", got.Rect, page.Rect)
			}
			if black := bytes.Count(got.Pix, []byte{0}); black < len(got.Pix)/400 {
				t.Errorf("%d black pixels of %d: a page of text was expected", black, len(got.Pix))
			}
		})
	}
}

// g3NoEOLTIFF writes page (0 black, 255 white) as a little-endian TIFF of one bilevel page,
// Compression 3 (T.4) with T4Options 0 (one-dimensional), WhiteIsZero, rowsPerStrip rows a strip,
// each strip's rows coded one after another with no EOL and no padding between them.
func g3NoEOLTIFF(page *image.Gray, rowsPerStrip int, fillOrder uint16) []byte {
	w, h := page.Rect.Dx(), page.Rect.Dy()
	var strips [][]byte
	for y0 := 0; y0 < h; y0 += rowsPerStrip {
		var codes codeWriter
		for y := y0; y < min(y0+rowsPerStrip, h); y++ {
			row := page.Pix[y*page.Stride : y*page.Stride+w]
			black, run := false, 0
			for x := 0; x <= w; x++ {
				if x < w && (row[x] == 0) == black {
					run++
					continue
				}
				codes.run(run, black) // a line starts white: a black first pixel gives a white run of 0
				black, run = !black, 1
			}
		}
		data := codes.bytes()
		if fillOrder == 2 {
			for i, b := range data {
				data[i] = bits.Reverse8(b)
			}
		}
		strips = append(strips, data)
	}
	type entry struct {
		tag, typ uint16
		values   []uint32
	}
	const short, long = 3, 4
	offsets, counts := make([]uint32, len(strips)), make([]uint32, len(strips))
	entries := []entry{
		{256, long, []uint32{uint32(w)}}, {257, long, []uint32{uint32(h)}},
		{258, short, []uint32{1}}, {259, short, []uint32{3}}, {262, short, []uint32{0}},
		{266, short, []uint32{uint32(fillOrder)}}, {273, long, offsets}, {277, short, []uint32{1}},
		{278, long, []uint32{uint32(rowsPerStrip)}}, {279, long, counts}, {292, long, []uint32{0}},
	}
	// Header, then the strips, then the arrays of more than one value, then the directory.
	out := []byte("II*\x00\x00\x00\x00\x00")
	for i, s := range strips {
		offsets[i], counts[i] = uint32(len(out)), uint32(len(s))
		out = append(out, s...)
	}
	if len(out)%2 == 1 {
		out = append(out, 0)
	}
	arrays := map[uint16]uint32{}
	for _, e := range entries {
		if len(e.values) > 1 {
			arrays[e.tag] = uint32(len(out))
			for _, v := range e.values {
				out = binary.LittleEndian.AppendUint32(out, v)
			}
		}
	}
	binary.LittleEndian.PutUint32(out[4:], uint32(len(out)))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(entries)))
	for _, e := range entries {
		out = binary.LittleEndian.AppendUint16(out, e.tag)
		out = binary.LittleEndian.AppendUint16(out, e.typ)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e.values)))
		switch {
		case len(e.values) > 1:
			out = binary.LittleEndian.AppendUint32(out, arrays[e.tag])
		case e.typ == short:
			out = binary.LittleEndian.AppendUint16(out, uint16(e.values[0]))
			out = append(out, 0, 0)
		default:
			out = binary.LittleEndian.AppendUint32(out, e.values[0])
		}
	}
	return binary.LittleEndian.AppendUint32(out, 0) // no next directory
}

// codeWriter writes T.4 codes, given as strings of bits, first bit first (FillOrder 1).
type codeWriter struct {
	buf []byte
	n   int // bits written
}

func (c *codeWriter) code(bits string) {
	for _, b := range bits {
		if c.n%8 == 0 {
			c.buf = append(c.buf, 0)
		}
		if b == '1' {
			c.buf[len(c.buf)-1] |= 0x80 >> (c.n % 8)
		}
		c.n++
	}
}

// run writes one run length of a colour: make-up codes (2560 as often as needed, then the largest
// that fits), then the terminating code.
func (c *codeWriter) run(n int, black bool) {
	term, makeup := whiteTerm, whiteMakeup
	if black {
		term, makeup = blackTerm, blackMakeup
	}
	for n >= 64 {
		m := min(n, 2560) / 64 * 64
		if m >= 1792 {
			c.code(extMakeup[(m-1792)/64])
		} else {
			c.code(makeup[m/64-1])
		}
		n -= m
	}
	c.code(term[n])
}

func (c *codeWriter) bytes() []byte { return slices.Clone(c.buf) }
