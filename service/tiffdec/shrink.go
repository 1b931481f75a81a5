package tiffdec

import "image"

// MaxShrink is the most times DecodePage shrinks a page along each side: the sums of a pixel's
// samples (MaxShrink² of them at 255) stay within 16 bits.
const MaxShrink = 16

// A page too large to hold whole is read shrunk (DecodePage with shrink k > 1): every pixel of
// the smaller page is the mean of the k × k pixels of the page it covers (fewer at the right and
// bottom edges), which is how a scan at a lower resolution would have seen them, and which keeps
// thin strokes as gray where dropping rows or columns would lose them. The page is folded in as
// its strips or tiles are decoded, a row at a time: what a shrunk decode holds is the smaller
// page, one strip or tile at its own size, and the sums of the smaller rows the strips or tiles
// being decoded reach (a tile row's worth; two rows for strips, which span the page's width and
// arrive in order).

// shrinkable checks that the page can be decoded shrunk k times. A page in separate planes is
// read at its own size only: its planes arrive one after the other, each over the whole page,
// and a pixel's colour is known only once its last plane is in.
func (l *layout) shrinkable(k int) error {
	switch {
	case k < 1 || k > MaxShrink:
		return unsupported("a page read %d times smaller", k)
	case k > 1 && l.planar == 2:
		return unsupported("a page in separate planes read at a reduced size")
	}
	return nil
}

// reducer folds rows of a page into a page k times smaller (see above).
type reducer struct {
	k, w, h int // the page
	ow, oh  int // the smaller page
	nch     int // channels summed: 1 (gray) or 4
	sums    []uint32
	slots   int // smaller rows the sums hold, reused in turn
	next    int // the first smaller row not yet written
	img     image.Image
	pix     []byte
	str     int
}

// shrunkOut is the kind of pixels a page shrunk has: gray stays gray, and a palette page takes
// the colours of its entries.
func (l *layout) shrunkOut() int {
	if l.out == outPaletted {
		return outRGBA
	}
	return l.out
}

// reducerSlots is how many smaller rows of sums a decode shrunk k times holds at once: those a
// row of tiles reaches (its first may straddle the previous row of tiles), or two for strips.
func (l *layout) reducerSlots(k int) int {
	if l.across == 1 {
		return 2
	}
	return (l.ch+k-1)/k + 2
}

func newReducer(l *layout, k int) *reducer {
	r := &reducer{k: k, w: l.w, h: l.h, ow: (l.w + k - 1) / k, oh: (l.h + k - 1) / k, nch: 4, slots: l.reducerSlots(k)}
	rect := image.Rect(0, 0, r.ow, r.oh)
	switch l.shrunkOut() {
	case outGray:
		g := image.NewGray(rect)
		r.img, r.pix, r.str, r.nch = g, g.Pix, g.Stride, 1
	case outNRGBA:
		g := image.NewNRGBA(rect)
		r.img, r.pix, r.str = g, g.Pix, g.Stride
	default:
		g := image.NewRGBA(rect)
		r.img, r.pix, r.str = g, g.Pix, g.Stride
	}
	r.sums = make([]uint32, r.slots*r.ow*r.nch)
	return r
}

// add folds the pixels d of page row y, from column x0 on (nch bytes a pixel), into the sums.
func (r *reducer) add(y, x0 int, d []byte) {
	k := r.k
	row := r.sums[(y/k%r.slots)*r.ow*r.nch:][:r.ow*r.nch]
	X, n := x0/k, x0%k
	if r.nch == 1 {
		for _, v := range d {
			row[X] += uint32(v)
			if n++; n == k {
				X, n = X+1, 0
			}
		}
		return
	}
	for i := 0; i+3 < len(d); i += 4 {
		s := row[4*X : 4*X+4]
		s[0] += uint32(d[i])
		s[1] += uint32(d[i+1])
		s[2] += uint32(d[i+2])
		s[3] += uint32(d[i+3])
		if n++; n == k {
			X, n = X+1, 0
		}
	}
}

// flush writes the smaller rows whose page rows are all in, now that every page row above
// complete is.
func (r *reducer) flush(complete int) {
	for r.next < r.oh {
		top := r.next * r.k
		bottom := min(top+r.k, r.h)
		if bottom > complete {
			return
		}
		row := r.sums[(r.next%r.slots)*r.ow*r.nch:][:r.ow*r.nch]
		out := r.pix[r.next*r.str:][:r.ow*r.nch]
		bh := bottom - top
		for X := range r.ow {
			n := uint32(min(r.k, r.w-X*r.k) * bh)
			for c := range r.nch {
				i := X*r.nch + c
				out[i] = byte((row[i] + n/2) / n)
			}
		}
		clear(row)
		r.next++
	}
}
