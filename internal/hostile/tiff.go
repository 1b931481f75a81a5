package hostile

import (
	"bytes"
	"encoding/binary"
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
