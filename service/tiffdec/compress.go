package tiffdec

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
)

// unpackBits decodes PackBits (TIFF 6.0, section 9) from src into dst, which it must fill,
// looking at the decode's context as it goes. It returns how many bytes of dst it wrote, all of
// them unless the data ends or goes wrong first (what was written is the data's, up to there).
func unpackBits(dst, src []byte, pc *pace) (written int, err error) {
	n, i, done := 0, 0, 0 // done: work (bytes read and written) counted so far
	defer func() { pc.read += int64(i) }()
	for n < len(dst) {
		if w := i + n; w-done >= 4096 {
			if err := pc.add(w - done); err != nil {
				return n, err
			}
			done = w
		}
		if i >= len(src) {
			return n, corrupt("PackBits data ends %d bytes short", len(dst)-n)
		}
		c := int8(src[i])
		i++
		switch {
		case c >= 0: // copy the next c+1 bytes
			k := int(c) + 1
			if i+k > len(src) {
				return n, corrupt("PackBits data ends inside a literal run")
			}
			n += copy(dst[n:], src[i:i+k])
			i += k
		case c != -128: // repeat the next byte 1-c times
			if i >= len(src) {
				return n, corrupt("PackBits data ends inside a repeat")
			}
			b := src[i]
			i++
			for k := 1 - int(c); k > 0 && n < len(dst); k-- {
				dst[n] = b
				n++
			}
		}
	}
	return n, nil
}

// lzwDecoder decodes TIFF's LZW (TIFF 6.0, section 13): codes written most significant bit first,
// 9 to 12 bits wide, widening one code early (at 511, 1023 and 2047), Clear 256, EndOfInformation
// 257. Its table is fixed-size and reused from strip to strip.
type lzwDecoder struct {
	prefix [4096]uint16
	suffix [4096]byte
	first  [4096]byte
	length [4096]uint16
}

const (
	lzwClear = 256
	lzwEOI   = 257
)

// decode fills dst from src; data after dst is full is ignored, as libtiff does. Data that
// starts as libtiff recognizes the codes of writers before TIFF 6.0 (a clear code written least
// significant bit first) is read that way: codes least significant bit first, widened when the
// next code reaches 512, 1024 and 2048 rather than one code early. It looks at the decode's
// context every 4 KiB of codes. It returns how many bytes of dst it wrote before the data ended
// or went wrong (all of them when it did not).
func (z *lzwDecoder) decode(dst, src []byte, pc *pace) (int, error) {
	compat := len(src) >= 2 && src[0] == 0 && src[1]&1 != 0
	for i := range 256 {
		z.suffix[i], z.first[i], z.length[i] = byte(i), byte(i), 1
	}
	var (
		bits  uint64
		nbits uint
		pos   int
		width uint = 9
		next       = 258
		prev       = -1
		n     int
		done  int // work (bytes read and written) counted so far
	)
	defer func() { pc.read += int64(pos) }()
	for n < len(dst) {
		if w := pos + n; w-done >= 4096 {
			if err := pc.add(w - done); err != nil {
				return n, err
			}
			done = w
		}
		for nbits < width {
			if pos >= len(src) {
				return n, corrupt("LZW data ends %d bytes short", len(dst)-n)
			}
			if compat {
				bits |= uint64(src[pos]) << nbits
			} else {
				bits = bits<<8 | uint64(src[pos])
			}
			pos++
			nbits += 8
		}
		var code int
		if compat {
			code = int(bits & (1<<width - 1))
			bits >>= width
		} else {
			code = int(bits>>(nbits-width)) & (1<<width - 1)
		}
		nbits -= width
		switch {
		case code == lzwClear:
			width, next, prev = 9, 258, -1
			continue
		case code == lzwEOI:
			return n, corrupt("LZW data ends %d bytes short", len(dst)-n)
		case prev < 0:
			if code > 255 {
				return n, corrupt("LZW code %d after a clear", code)
			}
			dst[n] = byte(code)
			n++
			prev = code
			continue
		}
		var firstByte byte
		switch {
		case code < next:
			firstByte = z.first[code]
			n = z.write(dst, n, code)
		case code == next && next < 4096:
			// KwKwK: the code being defined, the previous string plus its own first byte.
			firstByte = z.first[prev]
			n = z.write(dst, n, prev)
			if n < len(dst) {
				dst[n] = firstByte
				n++
			}
		default:
			return n, corrupt("LZW code %d before it is defined", code)
		}
		if next < 4096 {
			z.prefix[next], z.suffix[next], z.first[next] = uint16(prev), firstByte, z.first[prev]
			z.length[next] = z.length[prev] + 1
			next++
			if early := next + 1; compat {
				if early == 513 || early == 1025 || early == 2049 {
					width++
				}
			} else if next == 511 || next == 1023 || next == 2047 {
				width++
			}
		}
		prev = code
	}
	return n, nil
}

// write copies the string of code into dst at n (as much of it as fits) and returns the new n.
func (z *lzwDecoder) write(dst []byte, n, code int) int {
	l := int(z.length[code])
	end := n + l
	for c, i := code, end-1; i >= n; i-- {
		if i < len(dst) {
			dst[i] = z.suffix[c]
		}
		c = int(z.prefix[c])
	}
	return min(end, len(dst))
}

// inflater decodes Deflate (zlib) data, reusing its state from strip to strip.
type inflater struct {
	r  io.ReadCloser
	br bytes.Reader
}

// decode fills dst from src, 64 KiB at a time, looking at the decode's context between. It
// returns how many bytes of dst it wrote before the data ended or went wrong (all of them when it
// did not).
func (f *inflater) decode(dst, src []byte, pc *pace) (int, error) {
	f.br.Reset(src)
	defer func() { pc.read += int64(len(src) - f.br.Len()) }()
	var err error
	if f.r == nil {
		f.r, err = zlib.NewReader(&f.br)
	} else {
		err = f.r.(zlib.Resetter).Reset(&f.br, nil)
	}
	if err != nil {
		return 0, corrupt("bad Deflate header")
	}
	n := 0
	for in := f.br.Len(); n < len(dst); {
		k, err := io.ReadFull(f.r, dst[n:n+min(len(dst)-n, 64<<10)])
		n += k
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return n, corrupt("Deflate data ends %d bytes short", len(dst)-n)
		case err != nil:
			return n, corrupt("bad Deflate data")
		}
		left := f.br.Len()
		if err := pc.add(k + in - left); err != nil {
			return n, err
		}
		in = left
	}
	return n, nil
}
