package tiffpages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"testing"
)

// ifdFile builds a minimal uncompressed 8-bit gray TIFF by hand, in either byte order, from pages
// given as (width, height, subfile type); each page's pixels are its index.
func ifdFile(bo binary.ByteOrder, pages [][3]uint32) []byte {
	var b bytes.Buffer
	if bo == binary.LittleEndian {
		b.WriteString("II*\x00")
	} else {
		b.WriteString("MM\x00*")
	}
	binary.Write(&b, bo, uint32(0)) // first IFD, patched below
	prevNext := 4
	for i, p := range pages {
		w, h, sub := p[0], p[1], p[2]
		pix := b.Len()
		b.Write(bytes.Repeat([]byte{byte(i * 40)}, int(w*h)))
		if b.Len()%2 == 1 {
			b.WriteByte(0)
		}
		ifd := b.Len()
		out := b.Bytes()
		bo.PutUint32(out[prevNext:], uint32(ifd))
		type entry struct {
			tag, typ uint16
			val      uint32
		}
		entries := []entry{
			{254, 4, sub}, {256, 4, w}, {257, 4, h}, {258, 3, 8}, {259, 3, 1}, {262, 3, 1},
			{273, 4, uint32(pix)}, {277, 3, 1}, {278, 4, h}, {279, 4, w * h},
		}
		binary.Write(&b, bo, uint16(len(entries)))
		for _, e := range entries {
			binary.Write(&b, bo, e.tag)
			binary.Write(&b, bo, e.typ)
			binary.Write(&b, bo, uint32(1))
			if e.typ == 3 {
				binary.Write(&b, bo, uint16(e.val))
				binary.Write(&b, bo, uint16(0))
			} else {
				binary.Write(&b, bo, e.val)
			}
		}
		prevNext = b.Len()
		binary.Write(&b, bo, uint32(0))
	}
	return b.Bytes()
}

func TestPagesAndDecode(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(bo.String(), func(t *testing.T) {
			// Page 2 is a thumbnail of page 1 (NewSubfileType bit 0) and is skipped.
			data := ifdFile(bo, [][3]uint32{{30, 20, 0}, {6, 4, 1}, {10, 40, 2}})
			pages, err := Pages(data, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(pages) != 2 || pages[0].Width != 30 || pages[0].Height != 20 || pages[1].Width != 10 || pages[1].Height != 40 {
				t.Fatalf("pages %+v", pages)
			}
			for i, want := range []uint8{0, 80} { // the third IFD holds page 2's pixels
				img, err := Decode(data, pages[i])
				if err != nil {
					t.Fatalf("page %d: %v", i+1, err)
				}
				if img.Bounds() != image.Rect(0, 0, pages[i].Width, pages[i].Height) {
					t.Fatalf("page %d: bounds %v", i+1, img.Bounds())
				}
				if g := color.GrayModel.Convert(img.At(3, 3)).(color.Gray).Y; g != want {
					t.Errorf("page %d: pixel %d, want %d", i+1, g, want)
				}
			}
			if _, err := Pages(data, 1); !errors.Is(err, ErrTooManyPages) {
				t.Errorf("limit 1: %v", err)
			}
		})
	}
}

func TestPagesRejects(t *testing.T) {
	good := ifdFile(binary.LittleEndian, [][3]uint32{{8, 8, 0}, {8, 8, 0}})
	loop := bytes.Clone(good)
	first := binary.LittleEndian.Uint32(loop[4:])
	n := binary.LittleEndian.Uint16(loop[first:])
	binary.LittleEndian.PutUint32(loop[first+2+12*uint32(n):], first)
	noSize := ifdFile(binary.LittleEndian, [][3]uint32{{0, 8, 0}})
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"not a TIFF", []byte("GIF89a...."), ErrFormat},
		{"BigTIFF", []byte("II+\x00\x08\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00"), ErrFormat},
		{"IFD chain loops", loop, ErrCorrupt},
		{"IFD before the header ends", append([]byte("II*\x00\x04\x00\x00\x00"), make([]byte, 16)...), ErrCorrupt},
		{"IFD past the end", good[:len(good)-6], ErrCorrupt},
		{"page without a size", noSize, ErrCorrupt},
		{"no IFD", []byte("II*\x00\x00\x00\x00\x00"), ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Pages(c.data, 0); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}
