package imaging

import (
	"image"
	"image/color"
	"math"
	"runtime"

	"github.com/ocrgate/ocrgate/service/work"
)

// pixelSource reads one pixel as straight RGB in [0, 255], composited onto white. Coordinates are
// absolute and inside the image's bounds. It is the slow, general way in: hot loops use the row
// readers below, which convert a run of pixels per call instead of paying an interface call each.
type pixelSource interface {
	rgb(x, y int) (r, g, b float32)
}

// sourceFor returns the pixelSource for src, avoiding At (which allocates) for the common types.
func sourceFor(src image.Image) pixelSource {
	switch s := src.(type) {
	case *image.YCbCr:
		if s.Rect.Min.X >= 0 && s.Rect.Min.Y >= 0 && knownSubsample(s.SubsampleRatio) {
			return newYCbCrSource(s)
		}
	case *image.RGBA:
		return rgbaSource{s}
	case *image.NRGBA:
		return nrgbaSource{s}
	case *image.Gray:
		return graySource{s}
	case *image.Paletted:
		return newPalettedSource(s)
	}
	return genericSource{src}
}

// ycbcrSource reads JPEG's YCbCr, converting to RGB with the JFIF formula only the pixels that are
// sampled, so a 35-megapixel scan is never converted (and copied) as a whole.
type ycbcrSource struct {
	p      *image.YCbCr
	xs, ys uint // log2 of the chroma subsampling factors
}

func knownSubsample(r image.YCbCrSubsampleRatio) bool {
	switch r {
	case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410:
		return true
	}
	return false
}

func newYCbCrSource(p *image.YCbCr) ycbcrSource {
	s := ycbcrSource{p: p}
	switch p.SubsampleRatio {
	case image.YCbCrSubsampleRatio422:
		s.xs = 1
	case image.YCbCrSubsampleRatio420:
		s.xs, s.ys = 1, 1
	case image.YCbCrSubsampleRatio440:
		s.ys = 1
	case image.YCbCrSubsampleRatio411:
		s.xs = 2
	case image.YCbCrSubsampleRatio410:
		s.xs, s.ys = 2, 1
	}
	return s
}

// yccToRGB is color.YCbCrToRGB's fixed-point JFIF conversion with 24 bits of result: 255 maps to
// 0xFFFFFF, so r>>16 is exactly the 8-bit value Go's image/draw would produce.
func yccToRGB(y, cb, cr uint8) (r, g, b int32) {
	yy := int32(y) * 0x10101
	cb1 := int32(cb) - 128
	cr1 := int32(cr) - 128
	r = min(max(yy+91881*cr1, 0), 0xFFFFFF)
	g = min(max(yy-22554*cb1-46802*cr1, 0), 0xFFFFFF)
	b = min(max(yy+116130*cb1, 0), 0xFFFFFF)
	return r, g, b
}

// ycc returns the pixel in yccToRGB's fixed point. Valid for non-negative coordinates, which
// newYCbCrSource's callers check, so shifts equal Go's divisions in COffset.
func (s ycbcrSource) ycc(x, y int) (r, g, b int32) {
	p := s.p
	yi := (y-p.Rect.Min.Y)*p.YStride + (x - p.Rect.Min.X)
	ci := ((y>>s.ys)-(p.Rect.Min.Y>>s.ys))*p.CStride + (x >> s.xs) - (p.Rect.Min.X >> s.xs)
	return yccToRGB(p.Y[yi], p.Cb[ci], p.Cr[ci])
}

// The JFIF (ITU-R BT.601 full range) coefficients.
const (
	crToR = 1.402
	cbToG = -0.344136
	crToG = -0.714136
	cbToB = 1.772
)

// rgb converts one pixel with the JFIF formula in float, for the sampling in Warp.
func (s ycbcrSource) rgb(x, y int) (float32, float32, float32) {
	p := s.p
	yi := (y-p.Rect.Min.Y)*p.YStride + (x - p.Rect.Min.X)
	ci := ((y>>s.ys)-(p.Rect.Min.Y>>s.ys))*p.CStride + (x >> s.xs) - (p.Rect.Min.X >> s.xs)
	yf := float32(p.Y[yi])
	cb1, cr1 := float32(p.Cb[ci])-128, float32(p.Cr[ci])-128
	return clamp255(yf + crToR*cr1), clamp255(yf + cbToG*cb1 + crToG*cr1), clamp255(yf + cbToB*cb1)
}

// clamp255 limits a converted channel to [0, 255]. Branches, not min/max: they are almost never
// taken, and float min/max carries NaN handling this value cannot need.
func clamp255(v float32) float32 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return v
}

// Row conversion works in quarter levels through a table: Y·4 plus a chroma term rounded to a
// quarter level indexes the clamped float value, so a channel costs an add and a load, with no
// branch and no int-to-float conversion. The rounding (≤ 1/8 level) is far below what the models
// can see. Chroma terms lie within ±227 levels, so indexes stay below quarterN, a power of two so
// that masking the index replaces the bounds check.
const (
	quarterOff = 232 * 4 // index of level 0
	quarterN   = 4096
)

var quarterLevels = func() (t [quarterN]float32) {
	for i := range t {
		t[i] = clamp255(float32(i-quarterOff) / 4)
	}
	return t
}()

// chromaTables hold the JFIF chroma terms per 8-bit value: red and blue in quarter levels plus
// quarterOff; green's two terms in 1/4096 of a quarter level so their sum rounds once.
var chromaTables = func() (t struct{ r, b, gCb, gCr [256]int32 }) {
	for v := range 256 {
		c := float64(v - 128)
		t.r[v] = int32(math.Round(4*crToR*c)) + quarterOff
		t.b[v] = int32(math.Round(4*cbToB*c)) + quarterOff
		t.gCb[v] = int32(math.Round(4 * 4096 * cbToG * c))
		t.gCr[v] = int32(math.Round(4*4096*crToG*c)) + quarterOff<<12 + 2048
	}
	return t
}()

// chroma4 returns the JFIF chroma terms of (cb, cr) in quarter levels plus quarterOff, ready to be
// added to 4·Y to index quarterLevels.
func chroma4(cb, cr uint8) (dr, dg, db int) {
	t := &chromaTables
	return int(t.r[cr]), int((t.gCb[cb] + t.gCr[cr]) >> 12), int(t.b[cb])
}

// readRow writes row y, columns [x0, x1), into buf as RGB triples in [0, 255], for Warp's rows
// (ResizeTensor resamples the planes themselves, see resizeYCbCr): luma is read per pixel, the
// chroma terms once per chroma sample, and the common 4:2:0 and 4:2:2 layouts convert two pixels
// per chroma sample without an inner loop.
func (s ycbcrSource) readRow(y, x0, x1 int, buf []float32) {
	p := s.p
	n := x1 - x0
	yrow := p.Y[(y-p.Rect.Min.Y)*p.YStride+(x0-p.Rect.Min.X):]
	yrow = yrow[:n:n]
	cbase := ((y >> s.ys) - (p.Rect.Min.Y >> s.ys)) * p.CStride
	mx := p.Rect.Min.X >> s.xs
	cbRow, crRow := p.Cb[cbase:], p.Cr[cbase:]
	buf = buf[: 3*n : 3*n]
	t := &quarterLevels
	const mask = quarterN - 1

	i := 0 // pixel index in the row
	if s.xs == 1 {
		if x0&1 == 1 && n > 0 {
			// The first pixel shares its chroma sample with a pixel left of x0.
			s.convertRun(yrow, cbRow, crRow, mx, x0, 0, 1, buf)
			i = 1
		}
		for ; i+2 <= n; i += 2 {
			c := (x0+i)>>1 - mx
			dr, dg, db := chroma4(cbRow[c], crRow[c])
			y0, y1 := 4*int(yrow[i]), 4*int(yrow[i+1])
			o := buf[3*i : 3*i+6 : 3*i+6]
			o[0], o[1], o[2] = t[(y0+dr)&mask], t[(y0+dg)&mask], t[(y0+db)&mask]
			o[3], o[4], o[5] = t[(y1+dr)&mask], t[(y1+dg)&mask], t[(y1+db)&mask]
		}
	}
	s.convertRun(yrow, cbRow, crRow, mx, x0, i, n, buf)
}

// convertRun converts pixels [from, to) of a row prepared by readRow, one at a time.
func (s ycbcrSource) convertRun(yrow, cbRow, crRow []uint8, mx, x0, from, to int, buf []float32) {
	t := &quarterLevels
	const mask = quarterN - 1
	for i := from; i < to; i++ {
		c := (x0+i)>>s.xs - mx
		dr, dg, db := chroma4(cbRow[c], crRow[c])
		y4 := 4 * int(yrow[i])
		o := buf[3*i : 3*i+3 : 3*i+3]
		o[0], o[1], o[2] = t[(y4+dr)&mask], t[(y4+dg)&mask], t[(y4+db)&mask]
	}
}

type rgbaSource struct{ p *image.RGBA }

// rgb composites premultiplied RGBA over white: c + (255 - a).
func (s rgbaSource) rgb(x, y int) (float32, float32, float32) {
	i := s.p.PixOffset(x, y)
	p := s.p.Pix[i : i+4 : i+4]
	t := 255 - int32(p[3])
	return levels[(int32(p[0])+t)&511], levels[(int32(p[1])+t)&511], levels[(int32(p[2])+t)&511]
}

type nrgbaSource struct{ p *image.NRGBA }

// rgb composites straight-alpha RGBA over white: c·a/255 + (255 - a).
func (s nrgbaSource) rgb(x, y int) (float32, float32, float32) {
	i := s.p.PixOffset(x, y)
	return nrgbaOverWhite(s.p.Pix[i : i+4 : i+4])
}

type graySource struct{ p *image.Gray }

func (s graySource) rgb(x, y int) (float32, float32, float32) {
	v := float32(s.p.Pix[s.p.PixOffset(x, y)])
	return v, v, v
}

// palettedSource serves paletted PNGs (common for bilevel scans) and GIFs through a lookup table.
type palettedSource struct {
	p   *image.Paletted
	lut *[256][3]float32
}

func newPalettedSource(p *image.Paletted) palettedSource {
	lut := new([256][3]float32)
	for i := range lut {
		c := color.Color(color.Transparent) // indexes past the palette read as nothing: white
		if i < len(p.Palette) && p.Palette[i] != nil {
			c = p.Palette[i]
		}
		lut[i] = compositeWhite(c)
	}
	return palettedSource{p, lut}
}

func (s palettedSource) rgb(x, y int) (float32, float32, float32) {
	c := &s.lut[s.p.Pix[s.p.PixOffset(x, y)]]
	return c[0], c[1], c[2]
}

// genericSource handles every other image type (16-bit PNG, CMYK JPEG, WebP with alpha) through
// At, which is slow but correct.
type genericSource struct{ img image.Image }

func (s genericSource) rgb(x, y int) (float32, float32, float32) {
	c := compositeWhite(s.img.At(x, y))
	return c[0], c[1], c[2]
}

// compositeWhite returns c over white as RGB in [0, 255].
func compositeWhite(c color.Color) [3]float32 {
	r, g, b, a := c.RGBA() // premultiplied, 16 bits
	t := 0xFFFF - a
	const k = 1.0 / 257
	return [3]float32{float32(r+t) * k, float32(g+t) * k, float32(b+t) * k}
}

// rowReader writes row y, columns [x0, x1) (absolute coordinates inside the image), into buf as RGB
// triples in [0, 255], composited onto white.
type rowReader func(y, x0, x1 int, buf []float32)

// rowReaderFor returns the fastest row reader for src's type.
func rowReaderFor(src image.Image) rowReader {
	switch s := src.(type) {
	case *image.YCbCr:
		if s.Rect.Min.X >= 0 && s.Rect.Min.Y >= 0 && knownSubsample(s.SubsampleRatio) {
			return newYCbCrSource(s).readRow
		}
	case *image.RGBA:
		return func(y, x0, x1 int, buf []float32) {
			// Premultiplied over white: c + (255 - a).
			pix := s.Pix[s.PixOffset(x0, y):][:4*(x1-x0)]
			buf = buf[:3*(x1-x0)]
			for i := range x1 - x0 {
				p := pix[4*i : 4*i+4 : 4*i+4]
				o := buf[3*i : 3*i+3 : 3*i+3]
				t := 255 - int32(p[3])
				o[0], o[1], o[2] = levels[(int32(p[0])+t)&511], levels[(int32(p[1])+t)&511], levels[(int32(p[2])+t)&511]
			}
		}
	case *image.NRGBA:
		return func(y, x0, x1 int, buf []float32) {
			pix := s.Pix[s.PixOffset(x0, y):][:4*(x1-x0)]
			buf = buf[:3*(x1-x0)]
			for i := range x1 - x0 {
				p := pix[4*i : 4*i+4 : 4*i+4]
				o := buf[3*i : 3*i+3 : 3*i+3]
				if p[3] == 255 {
					o[0], o[1], o[2] = levels[p[0]], levels[p[1]], levels[p[2]]
					continue
				}
				o[0], o[1], o[2] = nrgbaOverWhite(p)
			}
		}
	case *image.Gray:
		return func(y, x0, x1 int, buf []float32) {
			pix := s.Pix[s.PixOffset(x0, y):][:x1-x0]
			buf = buf[:3*(x1-x0)]
			for i, v := range pix {
				o := buf[3*i : 3*i+3 : 3*i+3]
				f := levels[v]
				o[0], o[1], o[2] = f, f, f
			}
		}
	case *image.Paletted:
		lut := newPalettedSource(s).lut
		return func(y, x0, x1 int, buf []float32) {
			pix := s.Pix[s.PixOffset(x0, y):][:x1-x0]
			buf = buf[:3*(x1-x0)]
			for i, v := range pix {
				copy(buf[3*i:3*i+3], lut[v][:])
			}
		}
	}
	ps := genericSource{src}
	return func(y, x0, x1 int, buf []float32) {
		buf = buf[:3*(x1-x0)]
		for x := x0; x < x1; x++ {
			o := buf[3*(x-x0) : 3*(x-x0)+3 : 3*(x-x0)+3]
			o[0], o[1], o[2] = ps.rgb(x, y)
		}
	}
}

// levels holds the float32 value of each 8-bit level (and up to 510, for c + 255 - a), which is
// cheaper to load than to convert.
var levels = func() (t [512]float32) {
	for i := range t {
		t[i] = float32(min(i, 255))
	}
	return t
}()

// nrgbaOverWhite composites a straight-alpha pixel over white: c·a/255 + (255 - a).
func nrgbaOverWhite(p []uint8) (r, g, b float32) {
	a := int32(p[3])
	t := 255 * (255 - a)
	const k = 1.0 / 255
	return float32(int32(p[0])*a+t) * k, float32(int32(p[1])*a+t) * k, float32(int32(p[2])*a+t) * k
}

// bufSource is a region of an image already converted to RGB triples in [0, 255].
type bufSource struct {
	pix    []float32
	stride int             // floats per row
	rect   image.Rectangle // the region, in image coordinates
}

// parallelRows splits [0, n) into contiguous ranges over GOMAXPROCS goroutines, giving each at
// least minPer items so that small jobs are not slowed down by goroutine start-up. A panic on one
// of them is raised again on the caller's goroutine once all are done (see work.Range), where the
// unit of work that called it recovers it.
func parallelRows(n, minPer int, fn func(lo, hi int)) {
	work.Range(n, minPer, runtime.GOMAXPROCS(0), fn)
}
