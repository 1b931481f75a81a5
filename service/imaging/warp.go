package imaging

import (
	"image"
	"math"
	"sync"

	"github.com/ocrgate/ocrgate/service/geom"
)

// homography maps the unit square onto a quadrilateral:
// (u, v) → ((a·u + b·v + c) / (g·u + h·v + 1), (d·u + e·v + f) / (g·u + h·v + 1)),
// with (0,0), (1,0), (1,1), (0,1) going to the quad's corners in order.
type homography struct{ a, b, c, d, e, f, g, h float64 }

// squareToQuad is Heckbert's closed form of the square-to-quad projective map ("Fundamentals of
// Texture Mapping and Image Warping", 1989): no 8×8 solve and no inversion, because the map is
// needed in exactly this direction (output pixel → source position). A degenerate quad (three
// corners on a line) falls back to the parallelogram spanned by its first three corners.
func squareToQuad(q geom.Quad) homography {
	x0, y0 := q[0].X, q[0].Y
	x1, y1 := q[1].X, q[1].Y
	x2, y2 := q[2].X, q[2].Y
	x3, y3 := q[3].X, q[3].Y
	sx, sy := x0-x1+x2-x3, y0-y1+y2-y3
	affine := homography{a: x1 - x0, b: x3 - x0, c: x0, d: y1 - y0, e: y3 - y0, f: y0}
	if sx == 0 && sy == 0 {
		return affine
	}
	dx1, dx2 := x1-x2, x3-x2
	dy1, dy2 := y1-y2, y3-y2
	den := dx1*dy2 - dx2*dy1
	if math.Abs(den) < 1e-12 {
		return affine
	}
	g := (sx*dy2 - dx2*sy) / den
	h := (dx1*sy - sx*dy1) / den
	return homography{
		a: x1 - x0 + g*x1, b: x3 - x0 + h*x3, c: x0,
		d: y1 - y0 + g*y1, e: y3 - y0 + h*y3, f: y0,
		g: g, h: h,
	}
}

// superMax caps supersampling: 4×4 samples per pixel already keep 1-px strokes of a 4× downscale,
// and more would cost more than a crop is worth.
const superMax = 4

// supersampling returns how many samples per output pixel an axis needs: 1 unless the quad side is
// much longer than the output (scale < 0.7), then ceil(1/scale) capped at superMax.
func supersampling(out, quadLen float64) int {
	if !(quadLen > 0) || out/quadLen >= 0.7 { // also NaN from a broken quad
		return 1
	}
	return int(math.Min(math.Ceil(quadLen/out), superMax)) // in float: quadLen may be huge

}

// Warp samples the quadrilateral q of src into a new w×h RGBA image by a perspective transform:
// q[0]→(0,0), q[1]→(w,0), q[2]→(w,h), q[3]→(0,h). Pixels outside src are replicated from the border.
// Coordinates are continuous: pixel (x, y) covers [x, x+1)×[y, y+1), so an axis-aligned quad with
// integer corners and a matching size is an exact crop. This is how text boxes, possibly rotated or
// skewed, become the upright lines the recognizer reads. Each output pixel center is mapped into src
// and sampled bilinearly; when the quad is much larger than w×h, each output pixel averages up to
// 4×4 samples so thin strokes survive the downscale. The result is opaque (transparent source pixels
// are composited onto white).
func Warp(src image.Image, q geom.Quad, w, h int) *image.RGBA {
	w, h = max(w, 0), max(h, 0)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if w == 0 || h == 0 {
		return dst
	}
	b := src.Bounds()
	if b.Empty() {
		for i := range dst.Pix {
			dst.Pix[i] = 0xFF
		}
		return dst
	}
	job := warpJob{
		m:   squareToQuad(q),
		dst: dst,
		kx:  supersampling(float64(w), math.Max(dist(q[0], q[1]), dist(q[3], q[2]))),
		ky:  supersampling(float64(h), math.Max(dist(q[0], q[3]), dist(q[1], q[2]))),
	}

	// A page has hundreds of boxes, so the usual way is to convert just the pixels around the quad
	// once, with the fast row readers, and sample that; sampling the image directly would convert
	// each pixel for each of the four bilinear taps. A quad far larger than the output (a whole page
	// to a thumbnail) is sampled directly instead, since converting it would cost more.
	if r, ok := quadRegion(q, b); ok && r.Dx()*r.Dy() <= max(4*w*h*job.kx*job.ky, 1<<16) {
		bs, release := convertRegion(src, r)
		defer release()
		warpWith(bs, job)
	} else {
		warpWith(directSampler{sourceFor(src), b}, job)
	}
	return dst
}

// quadRegion returns the pixels of b that bilinear sampling inside q can touch: q's bounding box
// grown by a pixel and clamped into b. Clamping sample positions to this region instead of to b
// changes nothing for a convex quad, and keeps the region non-empty (the nearest border pixels)
// for a quad lying outside the image. ok is false for non-finite corners.
func quadRegion(q geom.Quad, b image.Rectangle) (r image.Rectangle, ok bool) {
	minX, minY, maxX, maxY := q.Bounds()
	for _, v := range []float64{minX, minY, maxX, maxY} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return b, false
		}
	}
	clampTo := func(v float64, lo, hi int) int {
		return int(math.Max(float64(lo), math.Min(v, float64(hi))))
	}
	r.Min.X = clampTo(math.Floor(minX)-1, b.Min.X, b.Max.X-1)
	r.Min.Y = clampTo(math.Floor(minY)-1, b.Min.Y, b.Max.Y-1)
	r.Max.X = clampTo(math.Ceil(maxX)+1, r.Min.X+1, b.Max.X)
	r.Max.Y = clampTo(math.Ceil(maxY)+1, r.Min.Y+1, b.Max.Y)
	return r, true
}

// regionBuffers recycles the float buffers of convertRegion: a page's crops are warped one after
// another and would otherwise each leave half a megabyte of garbage.
var regionBuffers sync.Pool

// convertRegion converts region r of src into a bufSource. Call release when done with it.
func convertRegion(src image.Image, r image.Rectangle) (bufSource, func()) {
	n := 3 * r.Dx() * r.Dy()
	bp, _ := regionBuffers.Get().(*[]float32)
	if bp == nil || cap(*bp) < n {
		bp = new([]float32)
		*bp = make([]float32, n)
	}
	pix := (*bp)[:n]
	read := rowReaderFor(src)
	stride := 3 * r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		o := (y - r.Min.Y) * stride
		read(y, r.Min.X, r.Max.X, pix[o:o+stride])
	}
	return bufSource{pix: pix, stride: stride, rect: r}, func() { regionBuffers.Put(bp) }
}

func dist(p, q geom.Point) float64 { return math.Hypot(p.X-q.X, p.Y-q.Y) }

type warpJob struct {
	m      homography
	dst    *image.RGBA
	kx, ky int // samples per output pixel along each axis
}

// sampler accumulates one row of samples: for output pixel x it adds, to acc[3x:3x+3], the colors
// at the source positions of u = us[x*kx+i] (i < kx) and the given v, bilinearly interpolated with
// pixel centers at +0.5 and positions clamped into the sampler's pixels, which replicates the
// border. One call per row keeps the per-sample work free of interface calls.
type sampler interface {
	accumulateRow(acc []float32, us []float64, kx int, m homography, v float64)
}

func warpWith(s sampler, j warpJob) {
	w, h := j.dst.Rect.Dx(), j.dst.Rect.Dy()
	kx, ky := j.kx, j.ky
	// u of every sample column, computed once: (x + (sx+0.5)/kx) / w.
	us := make([]float64, w*kx)
	for i := range us {
		us[i] = (float64(i/kx) + (float64(i%kx)+0.5)/float64(kx)) / float64(w)
	}
	minRows := h
	if w*h*kx*ky >= 1<<16 {
		minRows = 8
	}
	if bs, ok := s.(bufSource); ok && kx == 1 && ky == 1 {
		// Every recognizer crop of sroie-dev (1 181 of them) takes this path: text is never far
		// taller than the recognizer's 48 rows once large scans are decoded at half size.
		warpOne(bs, j, us, minRows)
		return
	}
	parallelRows(h, minRows, func(lo, hi int) {
		inv := 1 / float32(kx*ky)
		acc := make([]float32, 3*w)
		for y := lo; y < hi; y++ {
			clear(acc)
			for sy := range ky {
				s.accumulateRow(acc, us, kx, j.m, (float64(y)+(float64(sy)+0.5)/float64(ky))/float64(h))
			}
			row := j.dst.Pix[y*j.dst.Stride : y*j.dst.Stride+4*w]
			for x := range w {
				a := acc[3*x : 3*x+3 : 3*x+3]
				o := row[4*x : 4*x+4 : 4*x+4]
				o[0] = uint8(min(a[0]*inv+0.5, 255))
				o[1] = uint8(min(a[1]*inv+0.5, 255))
				o[2] = uint8(min(a[2]*inv+0.5, 255))
				o[3] = 0xFF
			}
		}
	})
}

// warpOne is warpWith for one sample per output pixel on a converted region, the usual case:
// each pixel is written straight from its four taps, with no accumulator row to clear, add into
// and average. Its arithmetic is accumulateRow's step for step, so the output is byte for byte
// the same. For a quad whose sides are the image's axes (most boxes of a straight page: 654 of
// 1 181 over sroie-dev), a column's taps are the same on every row and a row's on every column,
// so each is worked out once.
func warpOne(s bufSource, j warpJob, us []float64, minRows int) {
	w, h := j.dst.Rect.Dx(), j.dst.Rect.Dy()
	m := j.m
	ox, oy := float64(s.rect.Min.X), float64(s.rect.Min.Y)
	axis := m.b == 0 && m.d == 0 && m.g == 0 && m.h == 0
	var cols []colTap
	if axis {
		// With b = d = g = h = 0 the map is x = a·u + c, y = e·v + f; accumulateRow's terms
		// reduce to exactly these (its den is 1 and its b·v is 0).
		cols = make([]colTap, w)
		for x, u := range us {
			c := &cols[x]
			c.x0, c.x1, c.t = tap(float32(m.a*u+m.c-ox), s.rect.Dx())
			c.x0, c.x1 = 3*c.x0, 3*c.x1
		}
	}
	parallelRows(h, minRows, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			v := (float64(y) + 0.5) / float64(h)
			row := j.dst.Pix[y*j.dst.Stride : y*j.dst.Stride+4*w]
			if axis {
				s.straightRow(row, cols, float32(m.e*v+m.f-oy))
			} else {
				s.sampleRow(row, us, m, v)
			}
		}
	})
}

// straightRow writes one output row of a straight quad (see warpOne): columns' taps in cols, the
// row's position py in the region.
func (s bufSource) straightRow(row []uint8, cols []colTap, py float32) {
	y0, y1, ty := tap(py, s.rect.Dy())
	r0, r1 := s.pix[y0*s.stride:y0*s.stride+s.stride], s.pix[y1*s.stride:y1*s.stride+s.stride]
	for x, c := range cols {
		p00, p10 := r0[c.x0:c.x0+3:c.x0+3], r0[c.x1:c.x1+3:c.x1+3]
		p01, p11 := r1[c.x0:c.x0+3:c.x0+3], r1[c.x1:c.x1+3:c.x1+3]
		o := row[4*x : 4*x+4 : 4*x+4]
		o[0] = uint8(min(lerp2(p00[0], p10[0], p01[0], p11[0], c.t, ty)+0.5, 255))
		o[1] = uint8(min(lerp2(p00[1], p10[1], p01[1], p11[1], c.t, ty)+0.5, 255))
		o[2] = uint8(min(lerp2(p00[2], p10[2], p01[2], p11[2], c.t, ty)+0.5, 255))
		o[3] = 0xFF
	}
}

// sampleRow writes one output row of any quad, one sample per pixel: accumulateRow's arithmetic
// with kx = 1, each pixel written as warpWith would average it.
func (s bufSource) sampleRow(row []uint8, us []float64, m homography, v float64) {
	bx, by, bd := m.b*v+m.c, m.e*v+m.f, m.h*v+1
	ox, oy := float64(s.rect.Min.X), float64(s.rect.Min.Y)
	w, h := s.rect.Dx(), s.rect.Dy()
	for x, u := range us {
		den := 1 / (m.g*u + bd)
		x0, y0, x1, y1, tx, ty := taps(float32((m.a*u+bx)*den-ox), float32((m.d*u+by)*den-oy), w, h)
		r0, r1 := s.pix[y0*s.stride:], s.pix[y1*s.stride:]
		p00, p10 := r0[3*x0:3*x0+3:3*x0+3], r0[3*x1:3*x1+3:3*x1+3]
		p01, p11 := r1[3*x0:3*x0+3:3*x0+3], r1[3*x1:3*x1+3:3*x1+3]
		o := row[4*x : 4*x+4 : 4*x+4]
		o[0] = uint8(min(lerp2(p00[0], p10[0], p01[0], p11[0], tx, ty)+0.5, 255))
		o[1] = uint8(min(lerp2(p00[1], p10[1], p01[1], p11[1], tx, ty)+0.5, 255))
		o[2] = uint8(min(lerp2(p00[2], p10[2], p01[2], p11[2], tx, ty)+0.5, 255))
		o[3] = 0xFF
	}
}

// colTap is one output column's horizontal taps: offsets into a row of a bufSource (3 floats a
// pixel) and the fraction between them.
type colTap struct {
	x0, x1 int
	t      float32
}

// taps returns the pixel offsets (relative to the rectangle's origin, w×h pixels) and fractions of
// a bilinear sample at (px, py), which is relative to the origin as well. Clamping first makes the
// position non-negative, so truncation is floor; NaN clamps to 0.
func taps(px, py float32, w, h int) (x0, y0, x1, y1 int, tx, ty float32) {
	x0, x1, tx = tap(px, w)
	y0, y1, ty = tap(py, h)
	return x0, y0, x1, y1, tx, ty
}

// tap is taps along one axis of n pixels.
func tap(p float32, n int) (i0, i1 int, t float32) {
	f := clampF(p-0.5, 0, float32(n-1))
	i0 = int(f)
	return i0, min(i0+1, n-1), f - float32(i0)
}

// lerp2 interpolates four corner values along x on both rows, then along y.
func lerp2(v00, v10, v01, v11, tx, ty float32) float32 {
	top := v00 + tx*(v10-v00)
	bottom := v01 + tx*(v11-v01)
	return top + ty*(bottom-top)
}

// accumulateRow implements sampler on a converted region: four direct loads per channel.
func (s bufSource) accumulateRow(acc []float32, us []float64, kx int, m homography, v float64) {
	bx, by, bd := m.b*v+m.c, m.e*v+m.f, m.h*v+1 // the parts of the map that depend on v only
	ox, oy := float64(s.rect.Min.X), float64(s.rect.Min.Y)
	w, h := s.rect.Dx(), s.rect.Dy()
	for x := range len(us) / kx {
		a := acc[3*x : 3*x+3 : 3*x+3]
		for _, u := range us[x*kx : x*kx+kx] {
			den := 1 / (m.g*u + bd)
			x0, y0, x1, y1, tx, ty := taps(float32((m.a*u+bx)*den-ox), float32((m.d*u+by)*den-oy), w, h)
			r0, r1 := s.pix[y0*s.stride:], s.pix[y1*s.stride:]
			p00, p10 := r0[3*x0:3*x0+3:3*x0+3], r0[3*x1:3*x1+3:3*x1+3]
			p01, p11 := r1[3*x0:3*x0+3:3*x0+3], r1[3*x1:3*x1+3:3*x1+3]
			a[0] += lerp2(p00[0], p10[0], p01[0], p11[0], tx, ty)
			a[1] += lerp2(p00[1], p10[1], p01[1], p11[1], tx, ty)
			a[2] += lerp2(p00[2], p10[2], p01[2], p11[2], tx, ty)
		}
	}
}

// directSampler samples an image through its pixelSource, for quads too large to convert first.
type directSampler struct {
	src pixelSource
	b   image.Rectangle
}

func (d directSampler) accumulateRow(acc []float32, us []float64, kx int, m homography, v float64) {
	bx, by, bd := m.b*v+m.c, m.e*v+m.f, m.h*v+1
	ox, oy := float64(d.b.Min.X), float64(d.b.Min.Y)
	w, h := d.b.Dx(), d.b.Dy()
	for x := range len(us) / kx {
		a := acc[3*x : 3*x+3 : 3*x+3]
		for _, u := range us[x*kx : x*kx+kx] {
			den := 1 / (m.g*u + bd)
			x0, y0, x1, y1, tx, ty := taps(float32((m.a*u+bx)*den-ox), float32((m.d*u+by)*den-oy), w, h)
			x0, y0, x1, y1 = x0+d.b.Min.X, y0+d.b.Min.Y, x1+d.b.Min.X, y1+d.b.Min.Y
			r00, g00, b00 := d.src.rgb(x0, y0)
			r10, g10, b10 := d.src.rgb(x1, y0)
			r01, g01, b01 := d.src.rgb(x0, y1)
			r11, g11, b11 := d.src.rgb(x1, y1)
			a[0] += lerp2(r00, r10, r01, r11, tx, ty)
			a[1] += lerp2(g00, g10, g01, g11, tx, ty)
			a[2] += lerp2(b00, b10, b01, b11, tx, ty)
		}
	}
}

// clampF clamps v into [lo, hi], mapping NaN to lo.
func clampF(v, lo, hi float32) float32 {
	if !(v >= lo) {
		return lo
	}
	return min(v, hi)
}
