package jpegdec

import (
	"bytes"
	"errors"
	"fmt"
)

// The marker syntax here follows image/jpeg's decoder byte for byte, because image/jpeg is what
// the size limit is checked with (image.DecodeConfig) and what decodes every file this package
// declines. Two parsers that disagree on where a segment starts can be made to read different
// frames from the same bytes: a file whose first frame is 16×16 for image/jpeg and 60 000 × 60 000
// for a more literal reader. ITU T.81 B.1.1.2 allows fill bytes (0xFF) before any marker; on top
// of that image/jpeg skips bytes that are not part of a marker (as libjpeg does) and treats
// "FF 00" outside a scan as such extraneous data, but a 0x00 after fill bytes as an unknown
// marker.

// nextMarker returns the marker found at or after pos, and the offset just past it, the way
// image/jpeg's decode loop reads one: two bytes at a time, sliding over anything that does not
// start with 0xFF, skipping "FF 00", then over fill bytes. The marker is 0 for "FF FF… 00", which
// image/jpeg then refuses as an unknown marker. ok is false when the data ends first.
func nextMarker(data []byte, pos int) (marker byte, next int, ok bool) {
	for {
		if pos+2 > len(data) {
			return 0, pos, false
		}
		a, b := data[pos], data[pos+1]
		pos += 2
		for a != 0xFF {
			if pos >= len(data) {
				return 0, pos, false
			}
			a, b = b, data[pos]
			pos++
		}
		if b == 0 {
			continue // "FF 00" between segments is extraneous data
		}
		for b == 0xFF {
			if pos >= len(data) {
				return 0, pos, false
			}
			b = data[pos]
			pos++
		}
		return b, pos, true
	}
}

// Segment markers image/jpeg reads past (ITU T.81 table B.1): application data and comments. Every
// other marker with a length that is not handled explicitly is an error there.
func skippable(m byte) bool { return m >= 0xE0 && m <= 0xEF || m == 0xFE }

func isRST(m byte) bool { return m >= markRST0 && m <= markRST7 }

// ErrMalformed wraps the reasons Inspect refuses a file: its marker structure is broken in a way
// image/jpeg refuses too, or it has a second frame header.
var ErrMalformed = errors.New("malformed JPEG")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// Info is what a JPEG's marker segments say about the work of decoding it, read without decoding.
type Info struct {
	Width, Height int
	Precision     int      // bits per sample
	Components    int      // 1 (gray), 3 (YCbCr or RGB), 4 (CMYK or YCCK)
	IDs           [4]uint8 // component identifiers, in frame order
	H, V          [4]int   // sampling factors of each component
	Progressive   bool     // SOF2: image/jpeg keeps every coefficient until the last scan
	Sequential    bool     // SOF0 or SOF1
	Scans         int      // start-of-scan segments before the end of the image
	Adobe         bool     // an Adobe APP14 segment is present
	Transform     uint8    // its colour transform (0: RGB or CMYK, 1: YCbCr, 2: YCCK)
	JFIF          bool     // a JFIF APP0 segment is present (three components are then YCbCr)
}

// RGB reports whether image/jpeg reads three components as RGB rather than YCbCr (and converts
// them to an RGBA image): not in a JFIF file; in an Adobe one when its transform says so; else
// when the components are named R, G and B.
func (info Info) RGB() bool {
	switch {
	case info.Components != 3 || info.JFIF:
		return false
	case info.Adobe:
		return info.Transform == 0
	}
	return info.IDs[0] == 'R' && info.IDs[1] == 'G' && info.IDs[2] == 'B'
}

// Inspect walks a JPEG's marker segments exactly as image/jpeg's decoder does, skipping the
// entropy-coded data of each scan, and reports the frame header and the number of scans. It reads
// every byte once and allocates nothing, so it is the cheap way to know, before decoding, how much
// memory and how many passes decoding will take: a progressive file costs one pass over its
// coefficients per scan, and a few kilobytes of tiny scans can ask for thousands of passes.
//
// A second frame header is refused (image/jpeg refuses it too, but only after decoding the first
// frame's scans), and so is a file whose structure ends before its end-of-image marker.
func Inspect(data []byte) (Info, error) {
	var info Info
	if len(data) < 2 || data[0] != 0xFF || data[1] != markSOI {
		return info, malformed("missing SOI marker")
	}
	seenFrame := false
	pos := 2
	for {
		m, p, ok := nextMarker(data, pos)
		if !ok {
			return info, malformed("the data ends before the end-of-image marker")
		}
		pos = p
		switch {
		case m == markEOI:
			if !seenFrame {
				return info, malformed("no frame header")
			}
			if info.Scans == 0 {
				return info, malformed("no scan")
			}
			return info, nil
		case isRST(m):
			continue
		}
		if pos+2 > len(data) {
			return info, malformed("truncated segment length")
		}
		n := int(data[pos])<<8 | int(data[pos+1])
		if n < 2 || pos+n > len(data) {
			return info, malformed("marker %#x: segment length %d runs past the data", m, n)
		}
		seg := data[pos+2 : pos+n]
		pos += n
		switch {
		case m == markSOF0 || m == markSOF1 || m == markSOF2:
			if seenFrame {
				return info, malformed("a second frame header")
			}
			seenFrame = true
			if err := info.frame(m, seg); err != nil {
				return info, err
			}
		case m == markSOS:
			if !seenFrame {
				return info, malformed("scan before the frame header")
			}
			info.Scans++
			pos = skipScan(data, pos)
		case m == 0xE0:
			if len(seg) >= 5 && string(seg[:5]) == "JFIF\x00" {
				info.JFIF = true
			}
		case m == markAP14:
			// image/jpeg reads the transform from segments of at least 12 bytes.
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				info.Adobe, info.Transform = true, seg[11]
			}
		case m == markDHT || m == markDQT || m == markDRI || skippable(m):
		default:
			return info, malformed("marker %#x", m)
		}
	}
}

func (info *Info) frame(m byte, seg []byte) error {
	if len(seg) < 6 {
		return malformed("short frame header")
	}
	info.Progressive = m == markSOF2
	info.Sequential = !info.Progressive
	info.Precision = int(seg[0])
	info.Height = int(seg[1])<<8 | int(seg[2])
	info.Width = int(seg[3])<<8 | int(seg[4])
	info.Components = int(seg[5])
	if info.Components != 1 && info.Components != 3 && info.Components != 4 || len(seg) != 6+3*info.Components {
		return malformed("frame header with %d components in %d bytes", info.Components, len(seg))
	}
	for i := range info.Components {
		info.IDs[i] = seg[6+3*i]
		hv := seg[7+3*i]
		info.H[i], info.V[i] = max(1, int(hv>>4)), max(1, int(hv&15))
	}
	if info.Components == 1 {
		info.H[0], info.V[0] = 1, 1 // one component is non-interleaved: its MCU is one block
	}
	return nil
}

// skipScan returns the offset of the first marker after the entropy-coded data starting at pos:
// the first 0xFF that is neither a stuffed zero byte nor a restart marker. image/jpeg stops its
// Huffman decoding at the same place (a 0xFF not followed by 0x00 ends its data) and resumes its
// marker loop there.
func skipScan(data []byte, pos int) int {
	for pos+1 < len(data) {
		i := bytes.IndexByte(data[pos:len(data)-1], 0xFF)
		if i < 0 {
			return len(data)
		}
		pos += i
		if b := data[pos+1]; b == 0 || isRST(b) {
			pos += 2
			continue
		}
		return pos
	}
	return len(data)
}

// MCUs returns the number of MCU columns and rows of the frame, as image/jpeg lays them out.
func (info Info) MCUs() (cols, rows int) {
	h0, v0 := max(1, info.H[0]), max(1, info.V[0])
	return (info.Width + 8*h0 - 1) / (8 * h0), (info.Height + 8*v0 - 1) / (8 * v0)
}

// Blocks returns the number of 8×8 blocks all components hold, padding to whole MCUs included.
func (info Info) Blocks() int64 {
	cols, rows := info.MCUs()
	var n int64
	for i := range info.Components {
		n += int64(cols) * int64(rows) * int64(info.H[i]) * int64(info.V[i])
	}
	return n
}
