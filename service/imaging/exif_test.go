package imaging

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

// Quadrant levels of the test image: top-left, top-right, bottom-left, bottom-right.
const qA, qB, qC, qD = 20, 90, 160, 230

// gradientQuadrants is a 32×16 image whose four 16×8 quadrants have distinct gray levels, so any
// flip or rotation is visible. The quadrants align with JPEG's 8×8 blocks to keep edges clean.
func gradientQuadrants(colour bool) image.Image {
	levels := [2][2]uint8{{qA, qB}, {qC, qD}}
	if !colour {
		g := image.NewGray(image.Rect(0, 0, 32, 16))
		for y := range 16 {
			for x := range 32 {
				g.SetGray(x, y, color.Gray{levels[y/8][x/16]})
			}
		}
		return g
	}
	c := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for y := range 16 {
		for x := range 32 {
			v := levels[y/8][x/16]
			c.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	return c
}

// tiffOrientationIFD is a TIFF structure in byte order bo ("II" or "MM") with one IFD0 entry:
// Orientation (0x0112), SHORT, count 1, value o.
func tiffOrientationIFD(bo string, o uint16) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if bo == "MM" {
		order = binary.BigEndian
	}
	t := []byte(bo)
	t = order.AppendUint16(t, 42)
	t = order.AppendUint32(t, 8) // IFD0 right after the header
	t = order.AppendUint16(t, 1) // one entry
	t = order.AppendUint16(t, 0x0112)
	t = order.AppendUint16(t, 3) // SHORT
	t = order.AppendUint32(t, 1)
	t = order.AppendUint16(t, o)
	t = order.AppendUint16(t, 0) // padding of the 4-byte value field
	t = order.AppendUint32(t, 0) // no next IFD
	return t
}

// withAPP1 inserts an APP1 segment with the given payload right after a JPEG's SOI marker.
func withAPP1(t testing.TB, jpg, payload []byte) []byte {
	t.Helper()
	if len(payload)+2 > 0xFFFF {
		t.Fatal("APP1 payload too long")
	}
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xFF, 0xE1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(payload)+2))
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

// exifJPEG encodes img as JPEG with an Exif APP1 segment giving orientation o in byte order bo.
func exifJPEG(t testing.TB, img image.Image, bo []byte, o uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return withAPP1(t, buf.Bytes(), append([]byte("Exif\x00\x00"), tiffOrientationIFD(string(bo), o)...))
}

func TestEXIFOrientation(t *testing.T) {
	// What the upright image shows, as quadrant levels [top row; bottom row], for each orientation.
	tests := []struct {
		o    uint16
		w, h int
		want [2][2]uint8
	}{
		{1, 32, 16, [2][2]uint8{{qA, qB}, {qC, qD}}},
		{2, 32, 16, [2][2]uint8{{qB, qA}, {qD, qC}}}, // mirrored
		{3, 32, 16, [2][2]uint8{{qD, qC}, {qB, qA}}}, // upside down
		{4, 32, 16, [2][2]uint8{{qC, qD}, {qA, qB}}}, // flipped
		{5, 16, 32, [2][2]uint8{{qA, qC}, {qB, qD}}}, // transposed
		{6, 16, 32, [2][2]uint8{{qC, qA}, {qD, qB}}}, // stored lying on its left side: turned clockwise
		{7, 16, 32, [2][2]uint8{{qD, qB}, {qC, qA}}}, // transversed
		{8, 16, 32, [2][2]uint8{{qB, qD}, {qA, qC}}}, // stored lying on its right side: turned back
	}
	// Decoded at half size too (Limits.HalfPixels): the half image turns the same way, and its
	// full size is the upright file's.
	for _, shrink := range []int{1, 2} {
		lim := Limits{}
		if shrink == 2 {
			lim.HalfPixels = 1
		}
		for _, colour := range []bool{false, true} {
			for _, bo := range []string{"II", "MM"} {
				for _, tt := range tests {
					name := fmt.Sprintf("shrink=%d/%s/colour=%v/orientation=%d", shrink, bo, colour, tt.o)
					t.Run(name, func(t *testing.T) {
						exifCase(t, exifJPEG(t, gradientQuadrants(colour), []byte(bo), tt.o), lim, shrink, tt.w, tt.h, tt.o, colour, tt.want)
					})
				}
			}
		}
	}
}

// exifCase decodes an oriented JPEG of fw×fh upright pixels with lim and checks the size, the
// quadrants (want) and the free preview of the result, decoded at 1/shrink of its size.
func exifCase(t *testing.T, data []byte, lim Limits, shrink, fw, fh int, o uint16, colour bool, want [2][2]uint8) {
	t.Helper()
	d, err := Decode(data, lim)
	if err != nil {
		t.Fatal(err)
	}
	w, h := fw/shrink, fh/shrink
	if d.Width != w || d.Height != h || d.Image.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("size %d×%d (bounds %v), want %d×%d", d.Width, d.Height, d.Image.Bounds(), w, h)
	}
	if gw, gh := d.FullSize(); gw != fw || gh != fh || d.Factor() != shrink {
		t.Fatalf("full size %d×%d, factor %d; want %d×%d, %d", gw, gh, d.Factor(), fw, fh, shrink)
	}
	for qy := range 2 {
		for qx := range 2 {
			x, y := qx*w/2+w/4, qy*h/2+h/4
			got := color.GrayModel.Convert(d.Image.At(x, y)).(color.Gray).Y
			if diff := int(got) - int(want[qy][qx]); diff < -8 || diff > 8 {
				t.Errorf("quadrant (%d,%d) at (%d,%d) is %d, want %d", qx, qy, x, y, got, want[qy][qx])
			}
		}
	}
	// The free downscaled view (block means) is turned the same way.
	pw, ph := fw/8, fh/8
	preview, ok := d.Downscaled(1)
	if !ok || preview.Bounds() != image.Rect(0, 0, pw, ph) {
		t.Fatalf("downscaled view %v (%v), want %d×%d", preview, ok, pw, ph)
	}
	for qy := range 2 {
		for qx := range 2 {
			got := color.GrayModel.Convert(preview.At(qx*pw/2, qy*ph/2)).(color.Gray).Y
			if diff := int(got) - int(want[qy][qx]); diff < -8 || diff > 8 {
				t.Errorf("preview quadrant (%d,%d) is %d, want %d", qx, qy, got, want[qy][qx])
			}
		}
	}
	if o == 1 && colour {
		if _, ok := d.Image.(*image.YCbCr); !ok {
			t.Errorf("orientation 1 converted the image to %T", d.Image)
		}
	}
}

func TestEXIFMalformed(t *testing.T) {
	le := binary.LittleEndian
	entry := func(tag, typ uint16, count uint32, value uint16) []byte {
		e := le.AppendUint16(nil, tag)
		e = le.AppendUint16(e, typ)
		e = le.AppendUint32(e, count)
		e = le.AppendUint16(e, value)
		return append(e, 0, 0)
	}
	header := func(ifd uint32) []byte { return le.AppendUint32([]byte("II*\x00"), ifd) }
	tests := []struct {
		name    string
		payload []byte
	}{
		{"no tiff", []byte("Exif\x00\x00")},
		{"short tiff header", []byte("Exif\x00\x00II*\x00")},
		{"bad byte order", append([]byte("Exif\x00\x00XX*\x00\x08\x00\x00\x00"), entry(0x0112, 3, 1, 6)...)},
		{"bad magic", append([]byte("Exif\x00\x00II+\x00\x08\x00\x00\x00"), entry(0x0112, 3, 1, 6)...)},
		{"IFD offset past end", append([]byte("Exif\x00\x00"), header(0xFFFFFFF0)...)},
		{"IFD offset at end", append([]byte("Exif\x00\x00"), header(8)...)},
		{"entry count past end", append(append([]byte("Exif\x00\x00"), header(8)...), 0xFF, 0xFF, 0x12, 0x01, 3)},
		{"truncated entry", append(append(append([]byte("Exif\x00\x00"), header(8)...), 1, 0), entry(0x0112, 3, 1, 6)[:9]...)},
		{"orientation 0", append(append(append([]byte("Exif\x00\x00"), header(8)...), 1, 0), entry(0x0112, 3, 1, 0)...)},
		{"orientation 9", append(append(append([]byte("Exif\x00\x00"), header(8)...), 1, 0), entry(0x0112, 3, 1, 9)...)},
		{"orientation as ASCII", append(append(append([]byte("Exif\x00\x00"), header(8)...), 1, 0), entry(0x0112, 2, 1, 6)...)},
		{"zero count", append(append(append([]byte("Exif\x00\x00"), header(8)...), 1, 0), entry(0x0112, 3, 0, 6)...)},
		{"not exif", []byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta/>")},
		{"empty segment", nil},
	}
	var plain bytes.Buffer
	if err := jpeg.Encode(&plain, gradientQuadrants(false), nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode(withAPP1(t, plain.Bytes(), tt.payload), Limits{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d.Width != 32 || d.Height != 16 {
				t.Errorf("size %d×%d, want the stored 32×16", d.Width, d.Height)
			}
		})
	}
}

// TestJPEGOrientationBytes runs the marker walk over broken streams that the JPEG decoder itself
// would reject, which Decode never shows the parser, to check that it stays in bounds.
func TestJPEGOrientationBytes(t *testing.T) {
	good := exifJPEG(t, gradientQuadrants(false), []byte("MM"), 6)
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"valid", good, 6},
		{"nil", nil, 1},
		{"soi only", []byte{0xFF, 0xD8}, 1},
		{"segment length past end", []byte{0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 'E', 'x'}, 1},
		{"segment length too small", []byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01, 0, 0}, 1},
		{"fill bytes", append([]byte{0xFF, 0xD8, 0xFF, 0xFF}, good[2:]...), 6},
		{"garbage after soi", []byte{0xFF, 0xD8, 0x12, 0x34, 0x56, 0x78}, 1},
		{"truncated in tiff", good[:20], 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jpegOrientation(tt.data); got != tt.want {
				t.Errorf("orientation %d, want %d", got, tt.want)
			}
		})
	}
	for n := range len(good) {
		jpegOrientation(good[:n]) // must not panic at any cut
	}
}
