package imaging

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"testing"

	"golang.org/x/image/webp"
)

// No Go package encodes WebP, so the tests write their own: losslessWebP is a minimal lossless
// (VP8L) WebP of two grey levels, ink where ink(x, y) is true and paper elsewhere. VP8L's
// bitstream (RFC 9649) is read least significant bit first: a signature byte, the size, no
// transforms, no colour cache, one group of five prefix codes, then the pixels. The codes are
// "simple" ones of one or two symbols: green, red and blue each have two (ink's level and
// paper's, one bit a pixel each), alpha and the unused backward-reference distance one (no bits).
func losslessWebP(w, h int, ink func(x, y int) bool) []byte {
	const inkLevel, paperLevel = 24, 236 // the smaller symbol has code 0
	var bw bitWriter
	bw.write(0x2f, 8) // signature
	bw.write(uint32(w-1), 14)
	bw.write(uint32(h-1), 14)
	bw.write(0, 1) // alpha_is_used
	bw.write(0, 3) // version
	bw.write(0, 1) // no transform
	bw.write(0, 1) // no colour cache
	bw.write(0, 1) // one prefix code group for the whole image
	twoSymbols := func(a, b uint32) {
		bw.write(1, 1) // simple code
		bw.write(1, 1) // two symbols
		bw.write(1, 1) // the first in 8 bits
		bw.write(a, 8)
		bw.write(b, 8)
	}
	twoSymbols(inkLevel, paperLevel) // green
	twoSymbols(inkLevel, paperLevel) // red
	twoSymbols(inkLevel, paperLevel) // blue
	bw.write(1, 1)                   // alpha: simple code,
	bw.write(0, 1)                   // one symbol,
	bw.write(1, 1)                   // in 8 bits:
	bw.write(255, 8)                 // opaque
	bw.write(1, 1)                   // distance: simple code,
	bw.write(0, 1)                   // one symbol,
	bw.write(0, 1)                   // in 1 bit:
	bw.write(0, 1)                   // 0
	for y := range h {
		for x := range w {
			bit := uint32(1)
			if ink(x, y) {
				bit = 0
			}
			bw.write(bit, 1) // green
			bw.write(bit, 1) // red
			bw.write(bit, 1) // blue
		}
	}
	payload := bw.bytes()
	var b bytes.Buffer
	b.WriteString("RIFF")
	size := 4 + 8 + len(payload) + len(payload)%2
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(size)))
	b.WriteString("WEBPVP8L")
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(payload))))
	b.Write(payload)
	if len(payload)%2 == 1 {
		b.WriteByte(0) // chunks are padded to an even length
	}
	return b.Bytes()
}

// bitWriter packs values least significant bit first, as VP8L reads them.
type bitWriter struct {
	buf  []byte
	bits uint64
	n    uint
}

func (w *bitWriter) write(v uint32, n uint) {
	w.bits |= uint64(v) << w.n
	w.n += n
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.bits))
		w.bits >>= 8
		w.n -= 8
	}
}

func (w *bitWriter) bytes() []byte {
	if w.n > 0 {
		return append(w.buf, byte(w.bits))
	}
	return w.buf
}

// stripes is the test WebP's picture: slanted bars of ink, a few pixels wide.
func stripes(x, y int) bool { return (x+y/3)%7 < 2 }

// TestLosslessWebP checks the test's WebP writer against golang.org/x/image/webp, pixel by
// pixel, so that TestDecodeFormats decodes a valid file.
func TestLosslessWebP(t *testing.T) {
	const w, h = 97, 31
	img, err := webp.Decode(bytes.NewReader(losslessWebP(w, h, stripes)))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("bounds %v", img.Bounds())
	}
	for y := range h {
		for x := range w {
			want := color.NRGBA{236, 236, 236, 255}
			if stripes(x, y) {
				want = color.NRGBA{24, 24, 24, 255}
			}
			if got := color.NRGBAModel.Convert(img.At(x, y)); got != want {
				t.Fatalf("pixel (%d, %d) is %v, want %v", x, y, got, want)
			}
		}
	}
}
