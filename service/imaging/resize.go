package imaging

import (
	"fmt"
	"image"
)

// Norm describes how pixels become model inputs: value = (v/255 - Mean[c]) / Std[c], where c is the
// tensor channel. With BGR, tensor channel 0 is blue (PaddleOCR's models were trained on OpenCV's
// BGR). A zero Std is treated as 1 so that a misconfigured model yields wrong numbers, not NaNs.
type Norm struct {
	Mean, Std [3]float32
	BGR       bool
}

// affine returns, for each RGB source channel, the tensor channel it goes to and the scale and
// offset that turn a pixel value in [0, 255] into the model's input.
func (n Norm) affine() (ch [3]int, scale, bias [3]float32) {
	for s := range 3 {
		c := s
		if n.BGR {
			c = 2 - s
		}
		std := n.Std[c]
		if std == 0 {
			std = 1
		}
		ch[s] = c
		scale[s] = 1 / (255 * std)
		bias[s] = -n.Mean[c] / std
	}
	return ch, scale, bias
}

// ResizeTensor resizes src to w×h and writes it normalized, planar (CHW), into dst (len ≥ 3*w*h).
// This is the detector's input: PaddleOCR resizes pages with cv2.resize(INTER_LINEAR), which this
// matches for scale factors ≥ 0.5; for stronger downscaling (a 4961×7016 scan to ~1824×2560) it
// averages the covered area instead, because point sampling would drop thin strokes. The resize is
// separable: each source row is converted and filtered horizontally once, kept in a small ring, and
// combined vertically straight into dst, with rows split over GOMAXPROCS goroutines; a JPEG's
// YCbCr planes are resampled each on its own and converted at the output (resizeYCbCr). It panics
// if dst is too short, which is a programming error.
func ResizeTensor(dst []float32, src image.Image, w, h int, n Norm) {
	if w <= 0 || h <= 0 {
		return
	}
	plane := w * h
	if len(dst) < 3*plane {
		panic(fmt.Sprintf("imaging: tensor of %d floats is too short for 3×%d×%d", len(dst), h, w))
	}
	b := src.Bounds()
	if b.Empty() {
		src = image.NewUniform(image.White) // nothing to show: behave as a blank page
		b = image.Rect(0, 0, 1, 1)
	}
	if p, ok := src.(*image.YCbCr); ok && p.Rect.Min.X >= 0 && p.Rect.Min.Y >= 0 && knownSubsample(p.SubsampleRatio) {
		resizeYCbCr(dst, p, newYCbCrSource(p), w, h, n)
		return
	}
	read := rowReaderFor(src)
	ch, scale, bias := n.affine()
	hf, vf := makeFilter(b.Dx(), w), makeFilter(b.Dy(), h)
	srcW := b.Dx()

	// Parallelize only when there is enough work to pay for the goroutines.
	minRows := h
	if work := srcW*b.Dy() + plane; work >= 1<<16 {
		minRows = 16
	}
	parallelRows(h, minRows, func(lo, hi int) {
		rg := newRing(vf.width, 3*w)
		row := make([]float32, 3*srcW)
		for i := lo; i < hi; i++ {
			rows := rg.rows(vf, i, func(k int, out []float32) {
				read(b.Min.Y+k, b.Min.X, b.Max.X, row)
				hf.applyRGB(row, out)
			})
			wts := vf.wts[i*vf.width:]
			for s := range 3 {
				out := dst[ch[s]*plane+i*w : ch[s]*plane+i*w+w]
				combineRows(out, rows, wts, s*w, scale[s], bias[s])
			}
		}
	})
}

// ring keeps the last few horizontally filtered source rows of one output stripe, so that each
// source row is filtered once however many output rows read it.
type ring struct {
	slots [][]float32
	held  []int // the source row each slot holds, -1 for none
	out   [][]float32
}

func newRing(n, width int) *ring {
	r := &ring{slots: make([][]float32, n), held: make([]int, n), out: make([][]float32, n)}
	for i := range r.slots {
		r.slots[i] = make([]float32, width)
		r.held[i] = -1
	}
	return r
}

// rows returns the filtered source rows output row i of f reads, filling the ones not held yet
// with fill(source row, slot).
func (r *ring) rows(f filter, i int, fill func(k int, out []float32)) [][]float32 {
	s0, cnt := int(f.start[i]), int(f.count[i])
	for k := range cnt {
		row := s0 + k
		slot := row % len(r.slots)
		if r.held[slot] != row {
			fill(row, r.slots[slot])
			r.held[slot] = row
		}
		r.out[k] = r.slots[slot]
	}
	return r.out[:cnt]
}

// combineRows writes out[j] = (Σ wts[k]·rows[k][off+j])·scale + bias: the vertical filter fused with
// normalization. Up to four taps (bilinear, and area averaging down to a third) run in one pass.
func combineRows(out []float32, rows [][]float32, wts []float32, off int, scale, bias float32) {
	n := len(out)
	switch len(rows) {
	case 1:
		r0 := rows[0][off : off+n]
		w0 := wts[0] * scale
		for j := range out {
			out[j] = r0[j]*w0 + bias
		}
	case 2:
		r0, r1 := rows[0][off:off+n], rows[1][off:off+n]
		w0, w1 := wts[0]*scale, wts[1]*scale
		for j := range out {
			out[j] = r0[j]*w0 + r1[j]*w1 + bias
		}
	case 3:
		r0, r1, r2 := rows[0][off:off+n], rows[1][off:off+n], rows[2][off:off+n]
		w0, w1, w2 := wts[0]*scale, wts[1]*scale, wts[2]*scale
		for j := range out {
			out[j] = r0[j]*w0 + r1[j]*w1 + r2[j]*w2 + bias
		}
	case 4:
		r0, r1, r2, r3 := rows[0][off:off+n], rows[1][off:off+n], rows[2][off:off+n], rows[3][off:off+n]
		w0, w1, w2, w3 := wts[0]*scale, wts[1]*scale, wts[2]*scale, wts[3]*scale
		for j := range out {
			out[j] = r0[j]*w0 + r1[j]*w1 + r2[j]*w2 + r3[j]*w3 + bias
		}
	default:
		r0 := rows[0][off : off+n]
		w0 := wts[0]
		for j := range out {
			out[j] = r0[j] * w0
		}
		for k := 1; k < len(rows); k++ {
			rk := rows[k][off : off+n]
			wk := wts[k]
			for j := range out {
				out[j] += rk[j] * wk
			}
		}
		for j := range out {
			out[j] = out[j]*scale + bias
		}
	}
}

// TensorInto writes img (height must equal the tensor height) normalized into the CHW slot dst of
// width W, left-aligned; columns beyond img's width are zero (PaddleOCR pads after normalizing, so a
// zero is "mean gray", not black). A wider img is cut at W. It panics if dst is shorter than
// 3·height·W, which is a programming error.
func TensorInto(dst []float32, img *image.RGBA, W int, n Norm) {
	b := img.Bounds()
	h := b.Dy()
	if W <= 0 || h <= 0 {
		return
	}
	plane := h * W
	if len(dst) < 3*plane {
		panic(fmt.Sprintf("imaging: tensor slot of %d floats is too short for 3×%d×%d", len(dst), h, W))
	}
	ch, scale, bias := n.affine()
	cols := min(b.Dx(), W)
	for y := range h {
		var pix []uint8
		if cols > 0 {
			pix = img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		}
		for s := range 3 {
			out := dst[ch[s]*plane+y*W : ch[s]*plane+y*W+W]
			sc, bi := scale[s], bias[s]
			for x := range cols {
				p := pix[4*x : 4*x+4 : 4*x+4]
				out[x] = float32(int32(p[s])+255-int32(p[3]))*sc + bi // over white (premultiplied)
			}
			clear(out[cols:])
		}
	}
}

// ResizeWidth returns img scaled horizontally to width w (height unchanged), bilinear like OpenCV
// down to half width and area-averaging below that. The recognizer needs a fixed height and a
// bounded width; Warp already produces the height, so only the width is resampled. Premultiplied
// channels are filtered together, which is correct for any alpha.
func ResizeWidth(img *image.RGBA, w int) *image.RGBA {
	b := img.Bounds()
	w = max(w, 0)
	out := image.NewRGBA(image.Rect(0, 0, w, b.Dy()))
	if w == 0 || b.Empty() {
		return out
	}
	f := makeFilter(b.Dx(), w)
	// An opaque image (every crop Warp cuts) stays opaque: its weights sum to one, so alpha
	// rounds back to 255 and no colour can exceed it. Leaving alpha out of the sums takes a
	// quarter of the work.
	opaque := img.Opaque()
	for y := range b.Dy() {
		row := img.PixOffset(b.Min.X, b.Min.Y+y)
		src := img.Pix[row : row+4*b.Dx()]
		dst := out.Pix[y*out.Stride : y*out.Stride+4*w]
		for i := range w {
			s, c := 4*int(f.start[i]), int(f.count[i])
			wts := f.wts[i*f.width : i*f.width+c]
			px := src[s : s+4*c]
			o := (*[4]uint8)(dst[4*i:])
			if opaque {
				var r, g, b float32
				for k, wk := range wts {
					p := (*[4]uint8)(px[4*k:])
					r += wk * float32(p[0])
					g += wk * float32(p[1])
					b += wk * float32(p[2])
				}
				o[0], o[1], o[2], o[3] = roundByte(r), roundByte(g), roundByte(b), 0xFF
				continue
			}
			var acc [4]float32
			for k, wk := range wts {
				p := (*[4]uint8)(px[4*k:])
				acc[0] += wk * float32(p[0])
				acc[1] += wk * float32(p[1])
				acc[2] += wk * float32(p[2])
				acc[3] += wk * float32(p[3])
			}
			for c := range 4 {
				o[c] = roundByte(acc[c])
			}
			// Rounding could leave a color above its alpha, which premultiplied RGBA forbids.
			o[0], o[1], o[2] = min(o[0], o[3]), min(o[1], o[3]), min(o[2], o[3])
		}
	}
	return out
}

// roundByte rounds a filtered sample (finite) to the nearest byte, clamped into [0, 255]: the
// conversion truncates, which is the floor of v+0.5 wherever that is not negative.
func roundByte(v float32) uint8 { return uint8(min(max(int32(v+0.5), 0), 255)) }
