package imaging

import "image"

// resizeYCbCr is ResizeTensor for a JPEG's YCbCr planes. Resampling is linear and the JFIF
// conversion to RGB is affine, so each plane is resampled at its own resolution and the result is
// converted only at the output's pixels. Against converting every source pixel and filtering three
// RGB channels, a 4:2:0 page costs two thirds of the horizontal filtering (every luma row and half
// as many rows of each chroma plane, against three channels of every row) and no conversion of the
// millions of source pixels a scan's detection pass reads: half the time in all. Chroma is interpolated between its samples, which JFIF
// centres between the luma pixels they cover, instead of repeated over them; clamping to [0, 255]
// happens after resampling, where it can only matter for saturated colours.
func resizeYCbCr(dst []float32, p *image.YCbCr, src ycbcrSource, w, h int, n Norm) {
	b := p.Rect
	srcW, srcH := b.Dx(), b.Dy()
	ch, scale, bias := n.affine()
	plane := w * h

	// Luma: as any other source. Chroma: sample k of the plane spans luma [k<<xs, (k+1)<<xs), so
	// an output pixel's luma cell, divided by the subsampling factor, is its cell in chroma samples,
	// counted from the first chroma sample the image touches.
	hf, vf := makeFilter(srcW, w), makeFilter(srcH, h)
	fx, fy := float64(int(1)<<src.xs), float64(int(1)<<src.ys)
	cx0, cy0 := b.Min.X>>src.xs, b.Min.Y>>src.ys
	cw, chh := (b.Max.X-1)>>src.xs+1-cx0, (b.Max.Y-1)>>src.ys+1-cy0
	hfc := makeFilterAt(cw, w, float64(b.Min.X)/fx-float64(cx0), float64(srcW)/float64(w)/fx)
	vfc := makeFilterAt(chh, h, float64(b.Min.Y)/fy-float64(cy0), float64(srcH)/float64(h)/fy)
	// Row k of each plane, counted from the image's first row: p's slices start at its first
	// pixel and at the chroma sample that covers it (image.YCbCr.SubImage keeps them so).
	yRow := func(k int) []uint8 { return p.Y[k*p.YStride:][:srcW] }
	cbRow := func(k int) []uint8 { return p.Cb[k*p.CStride:][:cw] }
	crRow := func(k int) []uint8 { return p.Cr[k*p.CStride:][:cw] }

	minRows := h
	if work := srcW*srcH + plane; work >= 1<<16 {
		minRows = 16
	}
	parallelRows(h, minRows, func(lo, hi int) {
		yr := newRing(vf.width, w)
		cr := newRing(vfc.width, 2*w)
		yOut, cbOut, crOut := make([]float32, w), make([]float32, w), make([]float32, w)
		for i := lo; i < hi; i++ {
			rows := yr.rows(vf, i, func(k int, out []float32) {
				hf.applyBytes(yRow(k), out)
			})
			combineRows(yOut, rows, vf.wts[i*vf.width:], 0, 1, 0)
			rows = cr.rows(vfc, i, func(k int, out []float32) {
				hfc.applyBytes(cbRow(k), out[:w])
				hfc.applyBytes(crRow(k), out[w:])
			})
			wts := vfc.wts[i*vfc.width:]
			combineRows(cbOut, rows, wts, 0, 1, 0)
			combineRows(crOut, rows, wts, w, 1, 0)
			r := dst[ch[0]*plane+i*w:][:w]
			g := dst[ch[1]*plane+i*w:][:w]
			bl := dst[ch[2]*plane+i*w:][:w]
			for j := range w {
				y, cb1, cr1 := yOut[j], cbOut[j]-128, crOut[j]-128
				r[j] = clamp255(y+crToR*cr1)*scale[0] + bias[0]
				g[j] = clamp255(y+cbToG*cb1+crToG*cr1)*scale[1] + bias[1]
				bl[j] = clamp255(y+cbToB*cb1)*scale[2] + bias[2]
			}
		}
	})
}
