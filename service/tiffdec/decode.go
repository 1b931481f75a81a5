package tiffdec

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"math"
)

// Decode decodes page p of f. The caller checks p.Plan against its limits first: Decode
// allocates what the plan says and nothing more, and reads no more of the file than the plan
// priced. It looks at ctx between strips and tiles and, inside one, every paceBytes of work (see
// pace; a JPEG strip's stream ends with ctx), so that it stops within milliseconds of ctx's end.
// Errors are a *PageError (ErrCorrupt, ErrUnsupported), or ctx's. A panic is not recovered here:
// it is a bug, which the caller's unit of work reports (see service/work).
func (f *File) Decode(ctx context.Context, p *Page) (image.Image, error) {
	return f.decode(&pace{ctx: ctx}, p)
}

func (f *File) decode(pc *pace, p *Page) (image.Image, error) {
	l, err := p.layout()
	if err != nil {
		return nil, &PageError{Page: p.Number, Err: err}
	}
	img, err := l.decode(pc, f.data, f.bo)
	if err != nil {
		if err := pc.ctx.Err(); err != nil {
			return nil, err
		}
		return nil, &PageError{Page: p.Number, Err: err}
	}
	return img, nil
}

// paceBytes is how much work (bytes read from the file, plus bytes decompressed and written) a
// decode does between looks at its context: a few milliseconds at the slowest codec's rate.
const paceBytes = 256 << 10

// pace is a decode's look at its context, every paceBytes of work, and its count of what it read:
// the bytes of the file's strips and tiles its decompressors went through (a test's bound on
// rescans).
type pace struct {
	ctx  context.Context
	work int64 // done since the last look
	read int64
}

// add counts n bytes of work and looks at the context once paceBytes have been done.
func (p *pace) add(n int) error {
	if p.work += int64(n); p.work < paceBytes {
		return nil
	}
	p.work = 0
	return p.ctx.Err()
}

// canvas is the page being written, with what each kind of sample maps to.
type canvas struct {
	l    *layout
	bo   binary.ByteOrder
	pc   *pace
	img  image.Image
	pix  []byte
	str  int // stride
	gray [256]byte
	bits *[256][8]byte // a byte of 1-bit gray samples as 8 pixels
	row  []byte        // one row of 8-bit samples (or raw sub-byte values)
}

func (l *layout) decode(pc *pace, data []byte, bo binary.ByteOrder) (image.Image, error) {
	c := &canvas{l: l, bo: bo, pc: pc}
	r := image.Rect(0, 0, l.w, l.h)
	switch l.out {
	case outGray:
		g := image.NewGray(r)
		c.img, c.pix, c.str = g, g.Pix, g.Stride
	case outPaletted:
		g := image.NewPaletted(r, l.palette)
		c.img, c.pix, c.str = g, g.Pix, g.Stride
	case outRGBA:
		g := image.NewRGBA(r)
		c.img, c.pix, c.str = g, g.Pix, g.Stride
	case outNRGBA:
		g := image.NewNRGBA(r)
		c.img, c.pix, c.str = g, g.Pix, g.Stride
	}
	c.grayMap()
	if l.compression == compOJPEG {
		if err := c.jpeg(l.ojpeg, nil, 0, 0, 0, l.w, l.h); err != nil {
			return nil, err
		}
		return c.img, nil
	}
	samples := l.spp
	if l.planar == 2 {
		samples = 1
	}
	if l.compression != compJPEG {
		c.row = make([]byte, l.cw*samples)
	}
	var (
		buf   []byte
		rev   []byte
		lzw   *lzwDecoder
		zlib  inflater
		ccitt *ccittDecoder
	)
	switch l.compression {
	case compJPEG:
	case compLZW:
		lzw = new(lzwDecoder)
	case compCCITTRLE, compRLEW, compT4, compT6:
		ccitt = newCCITT(l)
	}
	if l.compression != compJPEG && (l.compression != compNone || l.predictor == 2) {
		buf = make([]byte, l.chunkBytes)
	}
	if l.reverse {
		rev = make([]byte, l.maxRead)
	}
	per := l.across * l.down
	for plane := range l.planes {
		for cy := range l.down {
			for cx := range l.across {
				if err := pc.ctx.Err(); err != nil {
					return nil, err
				}
				i := plane*per + cy*l.across + cx
				src, err := l.chunk(data, i)
				if err != nil {
					return nil, err
				}
				if l.reverse {
					src = reverseBits(rev[:len(src)], src)
				}
				x0, y0 := cx*l.cw, cy*l.ch
				rows := l.chunkRows(i)
				visW, visH := min(l.cw, l.w-x0), min(rows, l.h-y0)
				if l.compression == compJPEG {
					pc.read += int64(len(src))
					if err := c.jpeg(src, l.jpegTables, plane, x0, y0, visW, visH); err != nil {
						return nil, fmt.Errorf("strip or tile %d: %w", i+1, err)
					}
					continue
				}
				units := rows
				if l.subV > 1 {
					units = (rows + l.subV - 1) / l.subV
				}
				need := l.rowBytes * units
				var out []byte
				switch l.compression {
				case compNone:
					pc.read += int64(len(src))
					out = src[:need]
					if buf != nil {
						out = buf[:need]
						copy(out, src)
					}
					err = pc.add(need)
				case compPackBits:
					out = buf[:need]
					err = unpackBits(out, src, pc)
				case compLZW:
					out = buf[:need]
					err = lzw.decode(out, src, pc)
				case compDeflate, compDeflateA:
					out = buf[:need]
					err = zlib.decode(out, src, pc)
				default:
					out = buf[:need]
					err = ccitt.decode(out, src, rows, l.rowBytes, pc)
				}
				if err != nil {
					if pc.ctx.Err() != nil {
						return nil, pc.ctx.Err()
					}
					return nil, fmt.Errorf("strip or tile %d: %w", i+1, err)
				}
				if l.predictor == 2 {
					l.undoPredictor(out, bo)
				}
				if l.subH > 1 || l.subV > 1 {
					err = c.putYCbCrUnits(out, x0, y0, visW, visH)
				} else {
					err = c.put(out, plane, x0, y0, visW, visH)
				}
				if err != nil {
					return nil, err
				}
			}
		}
	}
	if l.planar == 2 {
		if err := c.finishPlanes(); err != nil {
			return nil, err
		}
	}
	return c.img, nil
}

// reverseBits copies src into dst with each byte's bits reversed (FillOrder 2).
func reverseBits(dst, src []byte) []byte {
	for i, b := range src {
		b = b>>4 | b<<4
		b = (b>>2)&0x33 | (b<<2)&0xCC
		b = (b>>1)&0x55 | (b<<1)&0xAA
		dst[i] = b
	}
	return dst[:len(src)]
}

// undoPredictor reverses horizontal differencing (TIFF 6.0, section 14), libtiff's way: over
// rows of predRow bytes, each sample added to the one a pixel before it.
func (l *layout) undoPredictor(buf []byte, bo binary.ByteOrder) {
	stride := l.spp
	if l.planar == 2 {
		stride = 1
	}
	for r := 0; r+l.predRow <= len(buf); r += l.predRow {
		row := buf[r : r+l.predRow]
		if l.bps == 8 {
			for i := stride; i < len(row); i++ {
				row[i] += row[i-stride]
			}
			continue
		}
		for i := 2 * stride; i+1 < len(row); i += 2 {
			bo.PutUint16(row[i:], bo.Uint16(row[i:])+bo.Uint16(row[i-2*stride:]))
		}
	}
}

// grayMap is what a gray sample of the page's depth shows as 8 bits: libtiff's scale (v × 255 /
// max) and, for WhiteIsZero, its inverse.
func (c *canvas) grayMap() {
	bits := min(c.l.bps, 8)
	maxV := 1<<bits - 1
	for v := 0; v <= maxV; v++ {
		g := v * 255 / maxV
		if c.l.photometric == photoMinIsWhite {
			g = 255 - g
		}
		c.gray[v] = byte(g)
	}
}

// samples8 returns row of a chunk as one byte a sample: 8-bit data as it is, 16-bit data reduced
// to 8 bits (rounded, as libtiff's 16-to-8 table), sub-byte data as raw values.
func (c *canvas) samples8(row []byte, n int) []byte {
	switch c.l.bps {
	case 8:
		return row[:n]
	case 16:
		out := c.row[:n]
		for i := range out {
			out[i] = byte((uint32(c.bo.Uint16(row[2*i:])) + 128) / 257)
		}
		return out
	}
	out := c.row[:n]
	bits := c.l.bps
	mask := byte(1<<bits - 1)
	per := 8 / bits
	for i := range out {
		b := row[i/per]
		shift := 8 - bits*(i%per+1)
		out[i] = (b >> shift) & mask
	}
	return out
}

// put writes the visible w×h part of a decompressed chunk at (x0, y0): every sample of each pixel
// (contiguous), or one plane's samples. It stops when the decode's context has ended.
func (c *canvas) put(chunk []byte, plane, x0, y0, w, h int) error {
	l := c.l
	samples := l.spp
	if l.planar == 2 {
		samples = 1
	}
	for y := range h {
		if err := c.pc.add(w * samples); err != nil {
			return err
		}
		if l.out == outGray && l.bps == 1 && samples == 1 && l.planar == 1 {
			c.putBits(c.pix[(y0+y)*c.str+x0:(y0+y)*c.str+x0+w], chunk[y*l.rowBytes:])
			continue
		}
		s := c.samples8(chunk[y*l.rowBytes:], w*samples)
		dst := c.pix[(y0+y)*c.str:]
		switch {
		case l.planar == 2:
			c.putPlane(dst, s, plane, x0, w)
		case l.out == outGray:
			d := dst[x0 : x0+w]
			if samples == 1 {
				for x, v := range s {
					d[x] = c.gray[v]
				}
			} else {
				for x := range d {
					d[x] = c.gray[s[x*samples]]
				}
			}
		case l.out == outPaletted:
			copy(dst[x0:x0+w], s)
			if samples > 1 {
				for x := range w {
					dst[x0+x] = s[x*samples]
				}
			}
		case l.colors == 1: // gray with alpha
			d := dst[4*x0 : 4*(x0+w)]
			for x := range w {
				g := c.gray[s[x*samples]]
				d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = g, g, g, s[x*samples+1]
			}
		default:
			c.putColor(dst[4*x0:4*(x0+w)], s, samples, w)
		}
	}
	return nil
}

// putBits writes a row of 1-bit gray samples, eight pixels a byte through a table (bilevel pages
// are the largest: a fax page is 4 to 9 Mpx).
func (c *canvas) putBits(d, row []byte) {
	if c.bits == nil {
		c.bits = new([256][8]byte)
		for v := range 256 {
			for k := range 8 {
				c.bits[v][k] = c.gray[(v>>(7-k))&1]
			}
		}
	}
	full := len(d) / 8
	for i := range full {
		copy(d[8*i:8*i+8], c.bits[row[i]][:])
	}
	if rest := len(d) - 8*full; rest > 0 {
		copy(d[8*full:], c.bits[row[full]][:rest])
	}
}

// putColor converts w pixels of RGB, CMYK or YCbCr samples (alpha after the colours where there
// is one) into RGBA bytes.
func (c *canvas) putColor(d, s []byte, samples, w int) {
	l := c.l
	for x := range w {
		p := s[x*samples : x*samples+samples]
		a := byte(255)
		if l.alpha != 0 {
			a = p[l.colors]
		}
		var r, g, b byte
		switch l.photometric {
		case photoRGB:
			r, g, b = p[0], p[1], p[2]
		case photoSeparated:
			r, g, b = cmyk(p[0], p[1], p[2], p[3])
		case photoYCbCr:
			r, g, b = l.ycc.rgb(p[0], p[1], p[2])
		}
		d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = r, g, b, a
	}
}

// cmyk is libtiff's conversion of CMYK ink to RGB, for matching its pixels.
func cmyk(c, m, y, k byte) (r, g, b byte) {
	kk := 255 - uint32(k)
	return byte(kk * (255 - uint32(c)) / 255), byte(kk * (255 - uint32(m)) / 255), byte(kk * (255 - uint32(y)) / 255)
}

// rgb converts TIFF YCbCr samples with the page's coefficients and reference black and white
// (TIFF 6.0, section 21).
func (p yccParams) rgb(y8, cb8, cr8 byte) (r, g, b byte) {
	code := func(v byte, black, white, scale float64) float64 {
		d := white - black
		if d == 0 {
			d = 1
		}
		return (float64(v) - black) * scale / d
	}
	y := code(y8, p.ref[0], p.ref[1], 255)
	cb := code(cb8, p.ref[2], p.ref[3], 127)
	cr := code(cr8, p.ref[4], p.ref[5], 127)
	rf := y + cr*(2-2*p.lr)
	bf := y + cb*(2-2*p.lb)
	gf := (y - p.lb*bf - p.lr*rf) / p.lg
	return clamp8(rf), clamp8(gf), clamp8(bf)
}

func clamp8(v float64) byte {
	v = math.Round(v)
	switch {
	case v < 0:
		return 0
	case v > 255:
		return 255
	}
	return byte(v)
}

// putPlane writes one plane's samples into their channel; finishPlanes converts afterwards.
func (c *canvas) putPlane(dst, s []byte, plane, x0, w int) {
	l := c.l
	switch l.out {
	case outGray:
		if plane == 0 {
			d := dst[x0 : x0+w]
			for x, v := range s[:w] {
				d[x] = c.gray[v]
			}
		}
		return
	case outPaletted: // indexes in plane 0; extra samples are not shown
		if plane == 0 {
			copy(dst[x0:x0+w], s[:w])
		}
		return
	}
	ch := plane
	switch {
	case l.colors == 1 && plane == 0: // gray: into R, G and B
		d := dst[4*x0:]
		for x, v := range s[:w] {
			g := c.gray[v]
			d[4*x], d[4*x+1], d[4*x+2] = g, g, g
		}
		return
	case l.colors == 1 && plane == 1:
		ch = 3
	case plane == l.colors && l.alpha != 0:
		ch = 3
	case plane >= l.colors && (l.photometric != photoSeparated || plane != 3):
		return // extra samples that are not alpha
	}
	d := dst[4*x0:]
	for x, v := range s[:w] {
		d[4*x+ch] = v
	}
}

// finishPlanes converts pixels assembled plane by plane.
func (c *canvas) finishPlanes() error {
	l := c.l
	if l.out == outGray || l.out == outPaletted {
		return nil
	}
	for y := range l.h {
		if err := c.pc.add(4 * l.w); err != nil {
			return err
		}
		d := c.pix[y*c.str : y*c.str+4*l.w]
		for x := 0; x < len(d); x += 4 {
			p := d[x : x+4]
			switch l.photometric {
			case photoSeparated:
				a := byte(255)
				p[0], p[1], p[2] = cmyk(p[0], p[1], p[2], p[3])
				p[3] = a
				continue
			case photoYCbCr:
				p[0], p[1], p[2] = l.ycc.rgb(p[0], p[1], p[2])
			}
			if l.alpha == 0 {
				p[3] = 255
			}
		}
	}
	return nil
}

// putYCbCrUnits writes subsampled YCbCr data: units of subH×subV luma samples, then Cb and Cr.
func (c *canvas) putYCbCrUnits(chunk []byte, x0, y0, w, h int) error {
	l := c.l
	uw := l.subH*l.subV + 2
	for uy := 0; uy*l.subV < h; uy++ {
		if err := c.pc.add(4 * w * l.subV); err != nil {
			return err
		}
		row := chunk[uy*l.rowBytes:]
		for ux := 0; ux*l.subH < w; ux++ {
			u := row[ux*uw : (ux+1)*uw]
			cb, cr := u[uw-2], u[uw-1]
			for j := range l.subV {
				y := uy*l.subV + j
				if y >= h {
					break
				}
				d := c.pix[(y0+y)*c.str:]
				for i := range l.subH {
					x := ux*l.subH + i
					if x >= w {
						break
					}
					r, g, b := l.ycc.rgb(u[j*l.subH+i], cb, cr)
					o := 4 * (x0 + x)
					d[o], d[o+1], d[o+2], d[o+3] = r, g, b, 255
				}
			}
		}
	}
	return nil
}
