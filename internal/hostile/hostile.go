// Package hostile builds the images an attacker sends an image service: small files whose headers
// understate, or honestly state, what decoding them costs. They are written byte by byte from the
// format specifications (ITU T.81 for JPEG, the PNG specification), so tests, the fuzz corpus and
// the load generator's hostile mix need no downloaded samples. Nothing in the service uses this
// package.
package hostile

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
)

// SmuggledFrame returns a baseline JPEG whose first frame header, the one image.DecodeConfig
// reports, says shown, followed by a second frame of size hidden with complete image data (or the
// first few hundred bytes of it when truncated). The first frame hides behind "FF 00" followed by
// what looks like a segment length: image/jpeg reads "FF 00" as extraneous data and finds the
// small frame, while a parser that takes 0x00 for a marker with a length skips it and decodes the
// large one.
func SmuggledFrame(shown, hidden image.Point, truncated bool) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xD8})
	// A JFIF APP0 segment: with it, image.DecodeConfig stops at the first frame header.
	segment(&b, 0xE0, []byte{'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0})
	var small bytes.Buffer
	segment(&small, 0xC0, frame(shown, 1, 0x11))
	b.Write([]byte{0xFF, 0x00})
	b.Write(binary.BigEndian.AppendUint16(nil, uint16(2+small.Len())))
	b.Write(small.Bytes())
	quantization(&b)
	huffman(&b, 0, []uint8{0})    // DC: category 0 only, code "0"
	huffman(&b, 0x10, []uint8{0}) // AC: end of block only, code "0"
	segment(&b, 0xC0, frame(hidden, 1, 0x11))
	segment(&b, 0xDA, []byte{1, 1, 0x00, 0, 63, 0})
	// Every block is "DC difference 0, end of block": two zero bits.
	blocks := int64((hidden.X+7)/8) * int64((hidden.Y+7)/8)
	n := (2*blocks + 7) / 8
	if truncated {
		n = min(n, 256)
	}
	b.Write(make([]byte, n))
	b.Write([]byte{0xFF, 0xD9})
	return b.Bytes()
}

// ScanBomb returns a progressive grayscale JPEG of size width×height with a DC scan and then
// scans AC scans, each of which codes every block as part of a run of empty blocks: a few bytes
// per scan, but image/jpeg makes a pass over every block's coefficients for each one, and cannot
// be interrupted. At 7071×7071 with 1 500 scans the file is about 190 KB.
func ScanBomb(width, height, scans int) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xD8})
	quantization(&b)
	huffman(&b, 0, []uint8{0})
	huffman(&b, 0x10, eobRunSymbols())
	size := image.Pt(width, height)
	segment(&b, 0xC2, frame(size, 1, 0x11))
	blocks := int64((width+7)/8) * int64((height+7)/8)
	// DC first scan: difference category 0 for every block, one zero bit each.
	segment(&b, 0xDA, []byte{1, 1, 0x00, 0, 0, 0})
	var w bitWriter
	for range blocks {
		w.bits(0, 1)
	}
	b.Write(w.flush())
	for range scans {
		segment(&b, 0xDA, []byte{1, 1, 0x00, 1, 63, 0})
		b.Write(eobRuns(blocks))
	}
	b.Write([]byte{0xFF, 0xD9})
	return b.Bytes()
}

// HugeProgressive returns a few hundred bytes that are a valid start of a width×height progressive
// YCbCr (4:4:4) JPEG: the headers and the beginning of its first scan. image/jpeg allocates the
// whole image and every component's coefficients (15 bytes a pixel) as soon as the scan starts,
// before it finds the data short.
func HugeProgressive(width, height int) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xD8})
	quantization(&b)
	huffman(&b, 0, []uint8{0})
	huffman(&b, 0x10, eobRunSymbols())
	f := []byte{8, byte(height >> 8), byte(height), byte(width >> 8), byte(width), 3}
	for id := byte(1); id <= 3; id++ {
		f = append(f, id, 0x11, 0)
	}
	segment(&b, 0xC2, f)
	segment(&b, 0xDA, []byte{3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0, 0})
	b.Write(make([]byte, 200))
	b.Write([]byte{0xFF, 0xD9})
	return b.Bytes()
}

// PNG16Bomb returns a width×height PNG of 16-bit RGBA (8 bytes a pixel once decoded) whose pixels
// are all zero, so that deflate squeezes them about a thousandfold: 7071×7071 is a 390 KB file for
// 400 MB of pixels. With rows < height only that many rows of data are written (the decoder
// allocates the whole image before it reads the first row either way).
func PNG16Bomb(width, height, rows int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 16, 6 // 16 bits per sample, RGBA
	chunk(&b, "IHDR", ihdr)
	// Each row is its filter byte (0: none) and zero samples: the image data is all zeros.
	chunk(&b, "IDAT", zlibZeros(int64(min(rows, height))*int64(1+8*width)))
	chunk(&b, "IEND", nil)
	return b.Bytes()
}

// zlibZeros returns a zlib stream (RFC 1950) of n zero bytes, written directly rather than
// compressed (compressing hundreds of megabytes takes seconds, minutes under the race detector).
// It is one dynamic-Huffman deflate block (RFC 1951, 3.2.7) using three symbols: a literal zero
// (code 10), the longest match, 258 bytes at distance 1 (codes 0 and 0), and end of block (11).
// Two bits per 258 bytes is what a good compressor achieves on zeros too.
func zlibZeros(n int64) []byte {
	size := n
	var w lsbWriter
	w.bits(1, 1)  // final block
	w.bits(2, 2)  // dynamic Huffman codes
	w.bits(29, 5) // 286 literal/length codes
	w.bits(0, 5)  // 1 distance code
	w.bits(14, 4) // 18 code length codes
	// Code length code lengths, in the order RFC 1951 lists them (16, 17, 18, 0, 8, 7, 9, 6,
	// 10, 5, 11, 4, 12, 3, 13, 2, 14, 1): symbol 18 and 2 get two bits, 1 gets one bit.
	for _, l := range []uint32{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1} {
		w.bits(l, 3)
	}
	// Canonical code length codes: 1 → "0", 2 → "10", 18 → "11" (18: zeros, 11 + 7 bits).
	length := func(v uint32) {
		switch v {
		case 1:
			w.code(0, 1)
		case 2:
			w.code(2, 2)
		}
	}
	zeroRun := func(k uint32) { w.code(3, 2); w.bits(k-11, 7) }
	length(2)    // literal 0: two bits
	zeroRun(138) // literals 1…138
	zeroRun(117) // literals 139…255
	length(2)    // end of block: two bits
	zeroRun(28)  // lengths 257…284 unused
	length(1)    // length 285 (258 bytes): one bit
	length(1)    // distance code 0 (distance 1): one bit
	if n > 0 {
		w.code(2, 2) // the first zero as a literal
		n--
	}
	for ; n >= 258; n -= 258 {
		w.code(0, 1) // 258 bytes…
		w.code(0, 1) // …at distance 1
	}
	for ; n > 0; n-- {
		w.code(2, 2)
	}
	w.code(3, 2) // end of block
	out := append([]byte{0x78, 0xDA}, w.flush()...)
	// Adler-32 of zeros: the byte sum stays 0 (a = 1) and b adds a once a byte.
	return binary.BigEndian.AppendUint32(out, uint32(size%65521)<<16|1)
}

// lsbWriter packs bits least significant first, as deflate does.
type lsbWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

// bits writes the n low bits of v, least significant first (header fields, extra bits).
func (w *lsbWriter) bits(v uint32, n uint) {
	w.acc |= uint64(v) << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes a Huffman code of n bits, most significant bit first.
func (w *lsbWriter) code(c uint32, n uint) {
	var r uint32
	for range n {
		r = r<<1 | c&1
		c >>= 1
	}
	w.bits(r, n)
}

func (w *lsbWriter) flush() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.nacc = 0, 0
	}
	return w.out
}

func chunk(w *bytes.Buffer, typ string, data []byte) {
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
	w.WriteString(typ)
	w.Write(data)
	w.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(append([]byte(typ), data...))))
}

// segment writes a JPEG marker segment: marker, length (which counts itself), payload.
func segment(w *bytes.Buffer, marker byte, payload []byte) {
	w.Write([]byte{0xFF, marker})
	w.Write(binary.BigEndian.AppendUint16(nil, uint16(2+len(payload))))
	w.Write(payload)
}

// frame is a frame header's payload for 8-bit samples, components with ids 1…n sharing one
// sampling byte and quantization table 0.
func frame(size image.Point, components int, sampling byte) []byte {
	f := []byte{8, byte(size.Y >> 8), byte(size.Y), byte(size.X >> 8), byte(size.X), byte(components)}
	for id := 1; id <= components; id++ {
		f = append(f, byte(id), sampling, 0)
	}
	return f
}

// quantization writes table 0 with every step 1.
func quantization(w *bytes.Buffer) {
	q := make([]byte, 65)
	for i := 1; i < 65; i++ {
		q[i] = 1
	}
	segment(w, 0xDB, q)
}

// huffman writes table tcth (class<<4 | id) giving the symbols codes of the shortest equal
// length: one symbol gets the one-bit code "0".
func huffman(w *bytes.Buffer, tcth byte, symbols []uint8) {
	l := 1
	for 1<<l < len(symbols)+1 { // a code of all ones is reserved
		l++
	}
	p := make([]byte, 17, 17+len(symbols))
	p[0] = tcth
	p[l] = byte(len(symbols))
	segment(w, 0xC4, append(p, symbols...))
}

// eobRunSymbols are the AC symbols for end-of-band runs of 2^r blocks (r = 0…14), coded in four
// bits each, code r for symbol r<<4 (see huffman).
func eobRunSymbols() []uint8 {
	s := make([]uint8, 15)
	for r := range s {
		s[r] = uint8(r << 4)
	}
	return s
}

// eobRuns codes n empty blocks of a progressive AC scan as end-of-band runs (ITU T.81 G.1.2.2):
// symbol r<<4 followed by r bits says 2^r plus those bits.
func eobRuns(n int64) []byte {
	var w bitWriter
	for n > 0 {
		r := 14
		for int64(1)<<r > n {
			r--
		}
		run := min(n, int64(1)<<(r+1)-1)
		w.bits(uint32(r), 4)
		w.bits(uint32(run-int64(1)<<r), r)
		n -= run
	}
	return w.flush()
}

// bitWriter packs entropy-coded bits most significant first, stuffing a zero byte after each
// 0xFF as ITU T.81 requires.
type bitWriter struct {
	out  []byte
	acc  uint32
	nacc int
}

func (w *bitWriter) bits(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (v>>i)&1
		w.nacc++
		if w.nacc == 8 {
			w.emit(byte(w.acc))
			w.acc, w.nacc = 0, 0
		}
	}
}

func (w *bitWriter) emit(c byte) {
	w.out = append(w.out, c)
	if c == 0xFF {
		w.out = append(w.out, 0)
	}
}

// flush pads the last byte with one bits and returns the data.
func (w *bitWriter) flush() []byte {
	if w.nacc > 0 {
		w.emit(byte(w.acc<<(8-w.nacc) | (1<<(8-w.nacc) - 1)))
		w.acc, w.nacc = 0, 0
	}
	return w.out
}
