package tiffdec

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"

	"github.com/ocrgate/ocrgate/service/jpegdec"
)

// jpegFrame is what a JPEG stream's frame header says, read before the stream is decoded.
type jpegFrame struct {
	w, h, comps int
}

// scanFrame walks a JPEG stream's marker segments (ITU T.81, annex B) up to its frame header and
// checks that image/jpeg can decode it within what the page's plan priced: a baseline or extended
// sequential Huffman frame (progressive, lossless and arithmetic-coded frames are refused).
func scanFrame(s []byte) (jpegFrame, error) {
	if len(s) < 4 || s[0] != 0xFF || s[1] != 0xD8 {
		return jpegFrame{}, corrupt("a JPEG stream without its start marker")
	}
	i := 2
	for {
		for i < len(s) && s[i] == 0xFF && i+1 < len(s) && s[i+1] == 0xFF {
			i++ // fill bytes
		}
		if i+4 > len(s) || s[i] != 0xFF {
			return jpegFrame{}, corrupt("a JPEG stream without a frame header")
		}
		m := s[i+1]
		n := int(s[i+2])<<8 | int(s[i+3])
		if n < 2 || i+2+n > len(s) {
			return jpegFrame{}, corrupt("a JPEG marker segment runs past its stream")
		}
		switch {
		case m == 0xC0 || m == 0xC1:
			if n < 8 {
				return jpegFrame{}, corrupt("a short JPEG frame header")
			}
			seg := s[i+4:]
			f := jpegFrame{h: int(seg[1])<<8 | int(seg[2]), w: int(seg[3])<<8 | int(seg[4]), comps: int(seg[5])}
			if seg[0] != 8 {
				return jpegFrame{}, unsupported("%d-bit JPEG", seg[0])
			}
			return f, nil
		case m == 0xC2 || m == 0xC6:
			return jpegFrame{}, unsupported("progressive JPEG inside a TIFF")
		case m == 0xC3 || m == 0xC7 || m == 0xCB || m == 0xCF:
			return jpegFrame{}, unsupported("lossless JPEG")
		case m >= 0xC9 && m <= 0xCE && m != 0xCC:
			return jpegFrame{}, unsupported("arithmetic-coded JPEG")
		case m == 0xDA || m == 0xD9:
			return jpegFrame{}, corrupt("a JPEG stream without a frame header")
		}
		i += 2 + n
	}
}

// jpeg decodes one JPEG-compressed strip or tile (with the page's JPEGTables spliced in before
// it) and writes its visible w×h part at (x0, y0). The frame must fit the chunk the plan priced.
func (c *canvas) jpeg(stream, tables []byte, plane, x0, y0, w, h int) error {
	l := c.l
	if len(tables) >= 4 && len(stream) >= 2 {
		// An abbreviated table specification (SOI, tables, EOI) and an abbreviated image (SOI,
		// frame, scans, EOI): one stream, SOI tables frame scans EOI. The copy is priced in the
		// plan (tables plus the largest chunk).
		t := tables
		if t[len(t)-2] == 0xFF && t[len(t)-1] == 0xD9 {
			t = t[:len(t)-2]
		}
		merged := make([]byte, 0, len(t)+len(stream))
		merged = append(append(merged, t...), stream[2:]...)
		stream = merged
	}
	f, err := scanFrame(stream)
	if err != nil {
		return err
	}
	comps := l.spp
	if l.planar == 2 {
		comps = 1
	}
	if f.w < w || f.h < h || f.w > l.cw || f.h > l.ch || f.comps != comps {
		return corrupt("a %d×%d JPEG frame of %d components in a %d×%d chunk of %d samples", f.w, f.h, f.comps, l.cw, l.ch, comps)
	}
	if comps > 1 && (l.out == outGray || l.out == outPaletted) {
		// A gray or palette page's extra samples coded as the components of one stream: the
		// stream is colour, the page is not.
		return unsupported("a JPEG stream of %d components on a gray or palette page", comps)
	}
	// image/jpeg decodes every scan of a sequential frame in full, and a frame codes each
	// component in one scan: more scans (a few bytes each) would each be a pass over the chunk.
	info, err := jpegdec.Inspect(stream)
	if err != nil {
		return corrupt("bad JPEG data: %v", err)
	}
	if info.Sequential && info.Scans > info.Components {
		return corrupt("a sequential JPEG stream of %d scans for %d components", info.Scans, info.Components)
	}
	c.pc.read += 3 * int64(len(stream)) // scanFrame, Inspect and image/jpeg each read it
	img, err := jpeg.Decode(&stopReader{r: bytes.NewReader(stream), pc: c.pc})
	if err != nil {
		var ue jpeg.UnsupportedError
		if errors.As(err, &ue) {
			return unsupported("a JPEG stream: %v", err)
		}
		if l.compression == compOJPEG {
			// libtiff reads more kinds of old-style JPEG than the one whole stream read here
			// (tables in the directory, scans in the strips): not a corrupt file.
			return unsupported("an old-style JPEG stream that is not whole (%v)", err)
		}
		return corrupt("bad JPEG data: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < w || b.Dy() < h {
		return corrupt("the JPEG stream decodes smaller than its frame")
	}
	switch m := img.(type) {
	case *image.Gray:
		for y := range h {
			if err := c.pc.add(w); err != nil {
				return err
			}
			src := m.Pix[y*m.Stride : y*m.Stride+w]
			c.put8(src, 1, plane, x0, y0+y, w)
		}
	case *image.YCbCr:
		if l.photometric == photoRGB && m.SubsampleRatio != image.YCbCrSubsampleRatio444 {
			return corrupt("subsampled RGB in a JPEG stream")
		}
		// libtiff hands old-style JPEG data to its own YCbCr conversion, which replicates
		// chroma samples; new-style JPEG is converted by libjpeg.
		up := newUpsampler(m, w, l.compression == compOJPEG)
		for y := range h {
			if err := c.pc.add(4 * w); err != nil {
				return err
			}
			d := c.line(y0+y, x0, w, 0)
			yrow := m.Y[m.YOffset(0, y):]
			if l.photometric == photoRGB {
				// libtiff takes the components of an RGB page as they are.
				crow, rrow := m.Cb[m.COffset(0, y):], m.Cr[m.COffset(0, y):]
				for x := range w {
					d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = yrow[x], crow[x], rrow[x], 255
				}
				c.commit(y0+y, x0, d)
				continue
			}
			cb, cr := up.row(y)
			for x := range w {
				var r, g, bb byte
				if up.replicate {
					r, g, bb = l.ycc.rgb(yrow[x], cb[x], cr[x])
				} else {
					r, g, bb = color.YCbCrToRGB(yrow[x], cb[x], cr[x])
				}
				d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = r, g, bb, 255
			}
			c.commit(y0+y, x0, d)
		}
	case *image.RGBA: // image/jpeg's RGB (an Adobe marker with transform 0)
		for y := range h {
			d := c.line(y0+y, x0, w, 0)
			copy(d, m.Pix[y*m.Stride:y*m.Stride+4*w])
			c.commit(y0+y, x0, d)
		}
	case *image.CMYK:
		// image/jpeg inverts Adobe CMYK (Photoshop's convention); libtiff's ink values are the
		// stored ones.
		for y := range h {
			d := c.line(y0+y, x0, w, 0)
			s := m.Pix[y*m.Stride:]
			for x := range w {
				d[4*x], d[4*x+1], d[4*x+2] = cmyk(255-s[4*x], 255-s[4*x+1], 255-s[4*x+2], 255-s[4*x+3])
				d[4*x+3] = 255
			}
			c.commit(y0+y, x0, d)
		}
	default:
		return unsupported("a JPEG stream of an unexpected colour model")
	}
	return nil
}

// stopReader is a JPEG stream that ends when the decode's context does. image/jpeg reads its
// input a few KiB at a time and decodes as it reads, so it stops within milliseconds of the
// context's end, not after the whole strip. (A stream it decodes to RGBA, an Adobe RGB one, is
// then converted in one pass that cannot be stopped: 10 ns a pixel.)
type stopReader struct {
	r  *bytes.Reader
	pc *pace
}

func (s *stopReader) Read(p []byte) (int, error) {
	if err := s.pc.ctx.Err(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}

// put8 writes w 8-bit samples of one plane (or gray pixels, or palette indexes) at (x0, y).
func (c *canvas) put8(s []byte, samples, plane, x0, y, w int) {
	if c.l.planar == 2 {
		c.putPlane(c.pix[y*c.str:], s, plane, x0, w)
		return
	}
	d := c.line(y, x0, w, 0)
	switch c.l.out {
	case outGray:
		for x := range d {
			d[x] = c.gray[s[x*samples]]
		}
	case outPaletted:
		c.putIndexes(d, s, samples, w)
	default:
		for x := range w {
			g := c.gray[s[x*samples]]
			d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = g, g, g, 255
		}
	}
	c.commit(y, x0, d)
}

// upsampler gives a YCbCr image's chroma at full resolution, row by row, interpolated the way
// libjpeg does by default ("fancy" upsampling: each output sample is 3/4 the nearer input sample
// and 1/4 the farther, in each subsampled direction, with edges replicated), so that JPEG pages
// show the colours libtiff shows. Other ratios replicate samples.
type upsampler struct {
	replicate  bool
	m          *image.YCbCr
	w, cw, chh int
	cb, cr     []byte
	sumB, sumR []int32
}

func newUpsampler(m *image.YCbCr, w int, replicate bool) *upsampler {
	b := m.Bounds()
	u := &upsampler{replicate: replicate, m: m, w: w, cb: make([]byte, b.Dx()), cr: make([]byte, b.Dx())}
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio420:
		u.cw, u.chh = (b.Dx()+1)/2, (b.Dy()+1)/2
	case image.YCbCrSubsampleRatio422:
		u.cw, u.chh = (b.Dx()+1)/2, b.Dy()
	}
	u.sumB, u.sumR = make([]int32, u.cw), make([]int32, u.cw)
	return u
}

func (u *upsampler) row(y int) (cb, cr []byte) {
	m := u.m
	ratio := m.SubsampleRatio
	if u.replicate {
		ratio = -1
	}
	switch ratio {
	case image.YCbCrSubsampleRatio420:
		i := y / 2
		far := i - 1
		if y%2 == 1 {
			far = i + 1
		}
		far = min(max(far, 0), u.chh-1)
		near, other := i*m.CStride, far*m.CStride
		for c := range u.cw {
			u.sumB[c] = 3*int32(m.Cb[near+c]) + int32(m.Cb[other+c])
			u.sumR[c] = 3*int32(m.Cr[near+c]) + int32(m.Cr[other+c])
		}
		fancy2(u.cb[:u.w], u.sumB, 4)
		fancy2(u.cr[:u.w], u.sumR, 4)
	case image.YCbCrSubsampleRatio422:
		o := y * m.CStride
		for c := range u.cw {
			u.sumB[c], u.sumR[c] = int32(m.Cb[o+c]), int32(m.Cr[o+c])
		}
		fancy2(u.cb[:u.w], u.sumB, 1)
		fancy2(u.cr[:u.w], u.sumR, 1)
	default:
		for x := range u.w {
			o := m.COffset(x, y)
			u.cb[x], u.cr[x] = m.Cb[o], m.Cr[o]
		}
	}
	return u.cb, u.cr
}

// fancy2 doubles a row of column sums horizontally: out[2c] = (3 s[c] + s[c-1]) / 4·scale and
// out[2c+1] = (3 s[c] + s[c+1]) / 4·scale, rounding as libjpeg (biases 8 and 7 for sums of
// two rows, 1 and 2 for one row), the ends replicated.
func fancy2(out []byte, s []int32, scale int32) {
	n := len(s)
	shift, lo, hi := uint(2), int32(1), int32(2)
	if scale == 4 {
		shift, lo, hi = 4, 8, 7
	}
	put := func(i int, v int32) {
		if i < len(out) {
			out[i] = byte(v >> shift)
		}
	}
	if n == 1 {
		put(0, s[0]*4+lo)
		put(1, s[0]*4+hi)
		return
	}
	for c := range n {
		prev, next := s[max(c-1, 0)], s[min(c+1, n-1)]
		put(2*c, s[c]*3+prev+lo)
		put(2*c+1, s[c]*3+next+hi)
	}
}
