package imaging

import "math"

// filter holds precomputed 1-D resampling weights from srcN to dstN samples: output i is
// Σ wts[i*width+k] · in[start[i]+k] for k < count[i]. Weights are computed once per axis, so the
// inner loops are multiply-adds only.
type filter struct {
	start  []int32
	count  []int32
	wts    []float32
	width  int  // the largest count; the stride of wts
	padded bool // every count equals width (see pad)
}

// areaBelow is the scale factor under which averaging replaces bilinear interpolation. At exactly
// 0.5 both give the mean of two pixels, so quality does not jump at the switch.
const areaBelow = 0.5

// makeFilter builds weights for resizing srcN samples to dstN (both ≥ 1). For dstN/srcN ≥ 0.5 it
// reproduces OpenCV's cv2.resize INTER_LINEAR (half-pixel centers, edge clamping), which is what
// PaddleOCR's models saw in training. Below that, bilinear would skip source pixels and lose thin
// strokes (and moiré a page scan), so it averages the covered area like INTER_AREA.
func makeFilter(srcN, dstN int) filter {
	return makeFilterAt(srcN, dstN, 0, float64(srcN)/float64(dstN))
}

// makeFilterAt is makeFilter for outputs that are not spread over the whole source: output pixel i
// covers source positions [off + i·scale, off + (i+1)·scale), in a continuous coordinate where
// source sample k spans [k, k+1). A chroma plane needs it: its samples span two luma pixels each,
// and a sub-image may start inside one of them.
func makeFilterAt(srcN, dstN int, off, scale float64) filter {
	f := filter{start: make([]int32, dstN), count: make([]int32, dstN)}
	if 1/scale >= areaBelow {
		f.width = 2
		f.wts = make([]float32, 2*dstN)
		for i := range dstN {
			sx := off + (float64(i)+0.5)*scale - 0.5
			x0 := math.Floor(sx)
			t := sx - x0
			i0 := int(x0)
			if i0 < 0 {
				i0, t = 0, 0
			}
			if i0 >= srcN-1 {
				i0, t = srcN-1, 0
			}
			f.start[i] = int32(i0)
			if t == 0 {
				f.count[i] = 1
				f.wts[2*i] = 1
			} else {
				f.count[i] = 2
				f.wts[2*i], f.wts[2*i+1] = float32(1-t), float32(t)
			}
		}
		f.pad(srcN)
		return f
	}

	f.width = int(math.Ceil(scale)) + 1
	f.wts = make([]float32, f.width*dstN)
	for i := range dstN {
		lo := off + float64(i)*scale
		hi := min(lo+scale, float64(srcN))
		first := int(math.Floor(lo))
		last := min(int(math.Ceil(hi)), srcN) // exclusive
		w := f.wts[i*f.width : (i+1)*f.width]
		n, sum := 0, 0.0
		for x := first; x < last && n < f.width; x++ {
			// Overlap of source pixel [x, x+1) with the output cell [lo, hi).
			ov := min(float64(x+1), hi) - max(float64(x), lo)
			if ov <= 1e-9 {
				if n == 0 {
					first = x + 1 // skip a sliver at the start so weights stay contiguous
				}
				continue
			}
			w[n] = float32(ov)
			sum += ov
			n++
		}
		for k := range n {
			w[k] = float32(float64(w[k]) / sum)
		}
		f.start[i], f.count[i] = int32(first), int32(n)
	}
	f.pad(srcN)
	return f
}

// pad gives every output exactly width taps, adding zero weights (and moving the start left at the
// far edge), so the inner loops can be unrolled for a fixed tap count instead of branching on a
// count that changes from pixel to pixel. Sources shorter than width keep their natural counts.
func (f *filter) pad(srcN int) {
	if srcN < f.width {
		return
	}
	f.padded = true
	for i := range f.start {
		c := int(f.count[i])
		if c == f.width {
			continue
		}
		w := f.wts[i*f.width : (i+1)*f.width]
		if shift := int(f.start[i]) + f.width - srcN; shift > 0 {
			copy(w[shift:], w[:c])
			clear(w[:shift])
			f.start[i] -= int32(shift)
		} else {
			clear(w[c:])
		}
		f.count[i] = int32(f.width)
	}
}

// applyRGB filters one row of interleaved RGB triples (len 3·srcN) into planar output: dst[0:n] red,
// dst[n:2n] green, dst[2n:3n] blue, n = dstN. The common tap counts have unrolled loops.
func (f *filter) applyRGB(src, dst []float32) {
	n := len(f.start)
	dr, dg, db := dst[:n:n], dst[n:2*n:2*n], dst[2*n:3*n:3*n]
	padded := f.padded
	switch {
	case padded && f.width == 2:
		for i := range n {
			s := 3 * int(f.start[i])
			p := src[s : s+6 : s+6]
			w := f.wts[2*i : 2*i+2 : 2*i+2]
			dr[i] = w[0]*p[0] + w[1]*p[3]
			dg[i] = w[0]*p[1] + w[1]*p[4]
			db[i] = w[0]*p[2] + w[1]*p[5]
		}
	case padded && f.width == 3:
		for i := range n {
			s := 3 * int(f.start[i])
			p := src[s : s+9 : s+9]
			w := f.wts[3*i : 3*i+3 : 3*i+3]
			dr[i] = w[0]*p[0] + w[1]*p[3] + w[2]*p[6]
			dg[i] = w[0]*p[1] + w[1]*p[4] + w[2]*p[7]
			db[i] = w[0]*p[2] + w[1]*p[5] + w[2]*p[8]
		}
	case padded && f.width == 4:
		for i := range n {
			s := 3 * int(f.start[i])
			p := src[s : s+12 : s+12]
			w := f.wts[4*i : 4*i+4 : 4*i+4]
			dr[i] = w[0]*p[0] + w[1]*p[3] + w[2]*p[6] + w[3]*p[9]
			dg[i] = w[0]*p[1] + w[1]*p[4] + w[2]*p[7] + w[3]*p[10]
			db[i] = w[0]*p[2] + w[1]*p[5] + w[2]*p[8] + w[3]*p[11]
		}
	default:
		for i := range n {
			s, c := 3*int(f.start[i]), int(f.count[i])
			w := f.wts[i*f.width : i*f.width+c]
			px := src[s : s+3*c]
			var r, g, b float32
			for k, wk := range w {
				p := px[3*k : 3*k+3 : 3*k+3]
				r += wk * p[0]
				g += wk * p[1]
				b += wk * p[2]
			}
			dr[i], dg[i], db[i] = r, g, b
		}
	}
}

// applyBytes filters one row of 8-bit samples (len srcN) into dst (len dstN), like applyRGB for a
// single channel; it reads the bytes as they are, without converting the row first.
func (f *filter) applyBytes(src []uint8, dst []float32) {
	n := len(f.start)
	dst = dst[:n:n]
	switch {
	case f.padded && f.width == 2:
		for i := range n {
			s := int(f.start[i])
			p := src[s : s+2 : s+2]
			w := f.wts[2*i : 2*i+2 : 2*i+2]
			dst[i] = w[0]*float32(p[0]) + w[1]*float32(p[1])
		}
	case f.padded && f.width == 3:
		for i := range n {
			s := int(f.start[i])
			p := src[s : s+3 : s+3]
			w := f.wts[3*i : 3*i+3 : 3*i+3]
			dst[i] = w[0]*float32(p[0]) + w[1]*float32(p[1]) + w[2]*float32(p[2])
		}
	case f.padded && f.width == 4:
		for i := range n {
			s := int(f.start[i])
			p := src[s : s+4 : s+4]
			w := f.wts[4*i : 4*i+4 : 4*i+4]
			dst[i] = w[0]*float32(p[0]) + w[1]*float32(p[1]) + w[2]*float32(p[2]) + w[3]*float32(p[3])
		}
	default:
		for i := range n {
			s, c := int(f.start[i]), int(f.count[i])
			w := f.wts[i*f.width : i*f.width+c]
			p := src[s : s+c]
			var v float32
			for k, wk := range w {
				v += wk * float32(p[k])
			}
			dst[i] = v
		}
	}
}
