package hostile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
)

// TIFFOverlappingIFDs returns a TIFF whose chain holds ifds image directories that overlap, each
// claiming entries directory entries (odd, at most 65 535): a reader that believes each count reads
// entries×ifds entries from a file of 24 bytes a directory plus 12 an entry. Every directory is a
// thumbnail (NewSubfileType 1), so that a reader that skips thumbnails walks the whole chain, and
// there is no page at the end. At 50 000 directories of 4095 entries the file is about 1.2 MB and
// claims 205 million entries.
//
// The file is built of 24-byte units, one a directory: the entry count (2 bytes), a
// NewSubfileType entry (12), and 10 bytes in which, (entries−1)/2 units later, lies the
// next-directory offset of a directory (a directory's offset field follows its last entry, and
// every second of the entries it claims is one of those units' NewSubfileType entries).
func TIFFOverlappingIFDs(ifds, entries int) []byte {
	if entries%2 == 0 {
		entries++
	}
	const unit = 24
	lag := (entries - 1) / 2 // where, in units after its own, a directory's next offset lies
	base := 8
	units := ifds + lag + 1
	b := make([]byte, base+unit*units)
	le := binary.LittleEndian
	copy(b, "II*\x00")
	le.PutUint32(b[4:], uint32(base))
	for j := range units {
		u := b[base+unit*j:]
		le.PutUint16(u[0:], uint16(entries))
		le.PutUint16(u[2:], 254) // NewSubfileType
		le.PutUint16(u[4:], 4)   // LONG
		le.PutUint32(u[6:], 1)
		le.PutUint32(u[10:], 1) // a reduced-resolution image
		if i := j - lag; i >= 0 && i < ifds-1 {
			le.PutUint32(u[14:], uint32(base+unit*(i+1)))
		}
	}
	return b
}

// TIFFDeflateBomb returns a one-strip width×height gray TIFF of bitsPerSample bits whose
// Deflate strip inflates to inflated bytes of zeros (at most ~1 000 times its compressed size):
// as many as the strip needs, or far more. A decoder that inflates a strip into a buffer it grows
// until the stream ends, up to a bound in bytes a pixel rather than the strip's real size, holds
// that many bytes (and the doubling's copies) for an image that needs bitsPerSample/8 a pixel.
func TIFFDeflateBomb(width, height, bitsPerSample int, inflated int64) []byte {
	strip := zlibZeros(inflated)
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("II*\x00")
	ifd := 8 + len(strip) + len(strip)%2
	b.Write(le.AppendUint32(nil, uint32(ifd)))
	b.Write(strip)
	if len(strip)%2 == 1 {
		b.WriteByte(0)
	}
	type entry struct {
		tag, typ uint16
		val      uint32
	}
	entries := []entry{
		{256, 4, uint32(width)}, {257, 4, uint32(height)}, {258, 3, uint32(bitsPerSample)},
		{259, 3, 8}, // Deflate
		{262, 3, 1}, // BlackIsZero
		{273, 4, 8}, {277, 3, 1}, {278, 4, uint32(height)}, {279, 4, uint32(len(strip))},
	}
	b.Write(le.AppendUint16(nil, uint16(len(entries))))
	for _, e := range entries {
		b.Write(le.AppendUint16(nil, e.tag))
		b.Write(le.AppendUint16(nil, e.typ))
		b.Write(le.AppendUint32(nil, 1))
		if e.typ == 3 {
			b.Write(le.AppendUint16(nil, uint16(e.val)))
			b.Write(le.AppendUint16(nil, 0))
		} else {
			b.Write(le.AppendUint32(nil, e.val))
		}
	}
	b.Write(le.AppendUint32(nil, 0))
	return b.Bytes()
}

// ifdEntry is one directory entry to write: its values, encoded in the file's byte order (little
// endian), written in its value field when they fit in four bytes and after the IFD otherwise; or,
// when at is not 0, a count of values that lie at offset at already (arrays several pages share).
type ifdEntry struct {
	tag, typ uint16
	count    uint32
	values   []byte
	at       uint32
}

func shorts(tag uint16, v ...uint16) ifdEntry {
	b := make([]byte, 0, 2*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return ifdEntry{tag: tag, typ: 3, count: uint32(len(v)), values: b}
}

func longs(tag uint16, v ...uint32) ifdEntry {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return ifdEntry{tag: tag, typ: 4, count: uint32(len(v)), values: b}
}

// writeTIFF writes a little-endian TIFF: its header, data from offset 8 (so that a byte at i in
// data is at 8+i in the file), then each IFD's out-of-line values and the IFD, chained in order.
// Each IFD's entries must be in ascending tag order.
func writeTIFF(data []byte, ifds ...[]ifdEntry) []byte {
	le := binary.LittleEndian
	b := append([]byte("II*\x00\x08\x00\x00\x00"), data...)
	next := 4 // where the offset of the next IFD goes
	for _, entries := range ifds {
		vals := make([]uint32, len(entries))
		for i, e := range entries {
			if e.at != 0 || len(e.values) <= 4 {
				continue
			}
			if len(b)%2 == 1 {
				b = append(b, 0)
			}
			vals[i] = uint32(len(b))
			b = append(b, e.values...)
		}
		if len(b)%2 == 1 {
			b = append(b, 0)
		}
		le.PutUint32(b[next:], uint32(len(b)))
		b = le.AppendUint16(b, uint16(len(entries)))
		for i, e := range entries {
			b = le.AppendUint16(b, e.tag)
			b = le.AppendUint16(b, e.typ)
			b = le.AppendUint32(b, e.count)
			switch {
			case e.at != 0:
				b = le.AppendUint32(b, e.at)
			case len(e.values) <= 4:
				var field [4]byte
				copy(field[:], e.values)
				b = append(b, field[:]...)
			default:
				b = le.AppendUint32(b, vals[i])
			}
		}
		next = len(b)
		b = le.AppendUint32(b, 0)
	}
	return b
}

// bitString appends codes given as strings of '0' and '1', most significant bit first, as CCITT
// data is written (FillOrder 1).
type bitString struct {
	out  []byte
	acc  byte
	nacc int
}

func (w *bitString) code(c string) {
	for i := 0; i < len(c); i++ {
		w.acc = w.acc<<1 | (c[i] - '0')
		if w.nacc++; w.nacc == 8 {
			w.out = append(w.out, w.acc)
			w.acc, w.nacc = 0, 0
		}
	}
}

func (w *bitString) bytes() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, w.acc<<(8-w.nacc))
		w.acc, w.nacc = 0, 0
	}
	return w.out
}

// CCITT codes (ITU-T T.4, tables 1 to 3) the generators below write.
const (
	eol             = "000000000001"
	whiteMakeup1728 = "010011011"
	white0          = "00110101"
	white18         = "0100111"
	black0          = "0000110111"
)

// TIFFG3NoEOLStrips returns a page of one-dimensional T.4 (Group 3) data written without EOLs
// (T4Options 0; libtiff writes such files and reads them since 4.7.1), 1746 px wide, in strips of
// rows rows each. Its data is coded bytes of rows of white, each row 16 bits (make-up 1728,
// terminating 18); strip i starts at row i×rows and its byte count runs to the end of the data,
// as a writer that does not know where its rows end might say. Each strip decodes its rows from
// its first 2×rows bytes, while a reader that looks through a strip's whole extent first (for an
// EOL, or to copy it) reads about strips×coded/2 bytes: at 10 000 one-row strips and 4 MB, 20 GB.
func TIFFG3NoEOLStrips(strips, rows, coded int) []byte {
	coded = max(coded, 2*strips*rows)
	var w bitString
	for range coded / 2 {
		w.code(whiteMakeup1728 + white18)
	}
	data := w.bytes()
	offsets := make([]uint32, strips)
	counts := make([]uint32, strips)
	for i := range strips {
		offsets[i] = uint32(8 + 2*rows*i)
		counts[i] = uint32(len(data) - 2*rows*i)
	}
	return writeTIFF(data, []ifdEntry{
		longs(256, 1746), longs(257, uint32(strips*rows)), shorts(258, 1), shorts(259, 3), shorts(262, 0),
		longs(273, offsets...), shorts(277, 1), longs(278, uint32(rows)), longs(279, counts...), longs(292, 0),
	})
}

// TIFFCCITTZeroRuns returns a 1728-px wide page of height rows of one-dimensional T.4 with EOLs,
// in one strip, each row pairs pairs of zero-length runs (white 0, black 0: 18 bits that move
// nothing) before a white run of the whole row. The codes are valid; a decoder that keeps one
// changing element a run holds 2×pairs of them for a row of 1728 pixels: at 500 000 pairs, 4 MB
// for a row that needs 7 KB.
func TIFFCCITTZeroRuns(height, pairs int) []byte {
	var w bitString
	for range height {
		w.code(eol)
		for range pairs {
			w.code(white0 + black0)
		}
		w.code(whiteMakeup1728 + white0)
	}
	data := w.bytes()
	return writeTIFF(data, []ifdEntry{
		longs(256, 1728), longs(257, uint32(height)), shorts(258, 1), shorts(259, 3), shorts(262, 0),
		longs(273, 8), shorts(277, 1), longs(278, uint32(height)), longs(279, uint32(len(data))), longs(292, 0),
	})
}

// TIFFPaletteExtra returns a valid width×height page of 8-bit palette indexes with an extra
// sample of unspecified meaning (ExtraSamples 0), uncompressed, in separate planes (planar
// configuration 2: all indexes, then all extra samples) or contiguous (index and extra sample
// pixel by pixel). Indexes are (x+y) mod 256, extra samples 255; the palette maps index i to
// (i, 255−i, i/2). Both layouts show the same page: the indexes through the palette, the extra
// sample ignored (libtiff's tiff2rgba reads the contiguous one so, and refuses the planar one).
func TIFFPaletteExtra(width, height int, planar bool) []byte {
	plane := width * height
	data := make([]byte, 2*plane)
	for y := range height {
		for x := range width {
			i := y*width + x
			if planar {
				data[i], data[plane+i] = byte(x+y), 255
			} else {
				data[2*i], data[2*i+1] = byte(x+y), 255
			}
		}
	}
	cmap := make([]uint16, 3*256)
	for i := range 256 {
		cmap[i], cmap[256+i], cmap[512+i] = uint16(i)*257, uint16(255-i)*257, uint16(i/2)*257
	}
	strips := []ifdEntry{longs(273, 8), longs(279, uint32(2*plane)), shorts(284, 1)}
	if planar {
		strips = []ifdEntry{longs(273, 8, uint32(8+plane)), longs(279, uint32(plane), uint32(plane)), shorts(284, 2)}
	}
	return writeTIFF(data, []ifdEntry{
		longs(256, uint32(width)), longs(257, uint32(height)), shorts(258, 8, 8), shorts(259, 1), shorts(262, 3),
		strips[0], shorts(277, 2), longs(278, uint32(height)), strips[1], strips[2], shorts(320, cmap...), shorts(338, 0),
	})
}

// TIFFZeroBitSamples returns an 8×8 gray page whose BitsPerSample is 0: not a depth any TIFF may
// have, so the file is corrupt (not a valid file in a depth a reader lacks).
func TIFFZeroBitSamples() []byte {
	return writeTIFF(make([]byte, 64), []ifdEntry{
		longs(256, 8), longs(257, 8), shorts(258, 0), shorts(259, 1), shorts(262, 1),
		longs(273, 8), shorts(277, 1), longs(278, 8), longs(279, 64),
	})
}

// TIFFManyPages returns pages pages of side×side 8-bit gray pixels, uncompressed, in tiles of one
// pixel: side² tiles a page, whose offsets are one array of side² bytes (BYTE values, each tile's
// pixel among the first 256 bytes of the file) that every page's TileOffsets names. The file is
// about side² bytes and 150 a page; a reader that goes through a page's tiles to plan it does
// side² steps a page, pages×side² for the document: at 2 000 pages of 2 000², 8 billion.
func TIFFManyPages(pages, side int) []byte {
	n := side * side
	data := make([]byte, 256+n)
	for i := range 256 {
		data[i] = byte(i)
	}
	for i := range n {
		data[256+i] = byte(8 + i*7%248) // a pixel among the file's bytes 8 to 255
	}
	ifd := []ifdEntry{
		longs(256, uint32(side)), longs(257, uint32(side)), shorts(258, 8), shorts(259, 1), shorts(262, 1),
		shorts(277, 1), longs(322, 1), longs(323, 1),
		{tag: 324, typ: 1, count: uint32(n), at: 8 + 256},
	}
	ifds := make([][]ifdEntry, pages)
	for i := range ifds {
		ifds[i] = ifd
	}
	return writeTIFF(data, ifds...)
}

// TIFFCMYKAlpha returns a valid width×height CMYK page with unassociated alpha (five 8-bit
// samples a pixel, ExtraSamples 2), uncompressed, in separate planes or contiguous: cyan x mod
// 256, magenta y mod 256, yellow 64, black 32, alpha 128. libtiff's tiff2rgba shows such a page
// opaque, its alpha ignored (and refuses the planar one); a reader that takes the fifth plane
// for the fourth channel shows alpha where black belongs.
func TIFFCMYKAlpha(width, height int, planar bool) []byte {
	plane := width * height
	data := make([]byte, 5*plane)
	for y := range height {
		for x := range width {
			i := y*width + x
			for k, v := range [5]byte{byte(x), byte(y), 64, 32, 128} {
				if planar {
					data[k*plane+i] = v
				} else {
					data[5*i+k] = v
				}
			}
		}
	}
	offsets, counts, config := []uint32{8}, []uint32{uint32(5 * plane)}, uint16(1)
	if planar {
		offsets, counts, config = nil, nil, 2
		for k := range 5 {
			offsets = append(offsets, uint32(8+k*plane))
			counts = append(counts, uint32(plane))
		}
	}
	return writeTIFF(data, []ifdEntry{
		longs(256, uint32(width)), longs(257, uint32(height)), shorts(258, 8, 8, 8, 8, 8), shorts(259, 1), shorts(262, 5),
		longs(273, offsets...), shorts(277, 5), longs(278, uint32(height)), longs(279, counts...), shorts(284, config),
		shorts(338, 2),
	})
}

// TIFFJPEGStrip returns a width×height gray page of JPEG compression (7) in one strip: a valid
// baseline stream whose every block is "DC difference 0, end of block", two bits, so that a few
// hundred kilobytes hold a page of tens of megapixels. A decoder that hands the strip to a JPEG
// decoder in one call without a way to stop it decodes the whole page whatever its context says.
func TIFFJPEGStrip(width, height int) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xD8})
	quantization(&b)
	huffman(&b, 0, []uint8{0})    // DC: category 0 only, code "0"
	huffman(&b, 0x10, []uint8{0}) // AC: end of block only, code "0"
	segment(&b, 0xC0, frame(image.Pt(width, height), 1, 0x11))
	segment(&b, 0xDA, []byte{1, 1, 0x00, 0, 63, 0})
	blocks := int64((width+7)/8) * int64((height+7)/8)
	b.Write(make([]byte, (2*blocks+7)/8))
	b.Write([]byte{0xFF, 0xD9})
	stream := b.Bytes()
	return writeTIFF(stream, []ifdEntry{
		longs(256, uint32(width)), longs(257, uint32(height)), shorts(258, 8), shorts(259, 7), shorts(262, 1),
		longs(273, 8), shorts(277, 1), longs(278, uint32(height)), longs(279, uint32(len(stream))),
	})
}

// TIFFYCbCrSubsampled returns a valid width×height YCbCr page subsampled subH×subV (not JPEG:
// units of subH×subV luma samples, then Cb and Cr), Deflate-compressed in one strip, with
// horizontal differencing (predictor 2) or without. libtiff differences such data as it is
// stored, three bytes apart (the samples a pixel), in rows of its scanline size: a row of units
// divided by subV. At 4×1 subsampling a row holds 1.5 bytes a pixel, half what a reader that
// differences 3 bytes a pixel walks through. Luma steps by 4 from 16 along x+y, Cb is 100 and Cr
// 150; width must be a multiple of subH.
func TIFFYCbCrSubsampled(width, height, subH, subV int, predictor bool) []byte {
	units := (width + subH - 1) / subH
	unit := subH*subV + 2
	rowBytes := units * unit
	rowsOfUnits := (height + subV - 1) / subV
	raw := make([]byte, rowBytes*rowsOfUnits)
	for uy := range rowsOfUnits {
		row := raw[uy*rowBytes : (uy+1)*rowBytes]
		for ux := range units {
			u := row[ux*unit : (ux+1)*unit]
			for j := range subV {
				for i := range subH {
					u[j*subH+i] = byte(16 + 4*((ux*subH+i+uy*subV+j)%56))
				}
			}
			u[unit-2], u[unit-1] = 100, 150
		}
	}
	pred := uint16(1)
	if predictor {
		pred = 2
		scanline := rowBytes / subV
		for r := 0; r+scanline <= len(raw); r += scanline {
			row := raw[r : r+scanline]
			for i := len(row) - 1; i >= 3; i-- {
				row[i] -= row[i-3]
			}
		}
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(raw) // a bytes.Buffer does not fail
	_ = zw.Close()
	strip := z.Bytes()
	return writeTIFF(strip, []ifdEntry{
		longs(256, uint32(width)), longs(257, uint32(height)), shorts(258, 8, 8, 8), shorts(259, 8), shorts(262, 6),
		longs(273, 8), shorts(277, 3), longs(278, uint32(height)), longs(279, uint32(len(strip))),
		shorts(317, pred), shorts(530, uint16(subH), uint16(subV)),
	})
}
