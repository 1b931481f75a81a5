package tiffdec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
)

// Decode decodes page p of f whole, at its own size. The caller checks p.Plan against its limits
// first: Decode allocates what the plan says and nothing more, and reads no more of the file than
// the plan priced. It looks at ctx between strips and tiles and, inside one, every paceBytes of
// work (see pace; a JPEG strip's stream ends with ctx), so that it stops within milliseconds of
// ctx's end. Errors are a *PageError (ErrCorrupt, ErrUnsupported), or ctx's: a page that is
// damaged in part is an error here (see DecodePage, which reads what it can of it). A panic is
// not recovered here: it is a bug, which the caller's unit of work reports (see service/work).
func (f *File) Decode(ctx context.Context, p *Page) (image.Image, error) {
	d, err := f.decode(&pace{ctx: ctx}, p, 1)
	if err != nil {
		return nil, err
	}
	if d.Damage != nil {
		return nil, &PageError{Page: p.Number, Err: corrupt("%v", d.Damage)}
	}
	return d.Image, nil
}

// Decoded is a page decoded by DecodePage.
type Decoded struct {
	// Image is the page as stored (its Orientation not applied), Shrink times smaller along each
	// side than the page (rounded up): each pixel the mean of the Shrink × Shrink of the page's it
	// covers. A gray or bilevel page is an *image.Gray; a palette page is an *image.Paletted at
	// its own size, colour (RGBA) when shrunk; colour pages are *image.RGBA (*image.NRGBA with
	// unassociated alpha).
	Image  image.Image
	Shrink int
	// Damage, when not nil, says what of the page could not be decoded (a strip or tile missing
	// from the file, data that ends or goes wrong part way): those pixels are white, and the rest
	// are the page's.
	Damage *Damage
}

// DecodePage decodes page p of f at 1/shrink of its size along each side (1: whole; see
// Page.PlanAt, which the caller checks against its limits first, as Decode's), and reads what
// it can of a damaged page: a strip or tile that the file's offsets do not list or that lies
// outside it, or whose data ends or goes wrong part way, is read up to the row where it does,
// and the rest of it left white; the other strips and tiles are read as they are. libtiff reads
// such pages so too (tiff2rgba shows the rows of a damaged fax up to its damage). What was lost
// is the result's Damage. A page of which nothing could be read is an error, the first damaged
// strip's or tile's, as is a page that uses something this package does not read (a strip of it
// before any was decoded). A shrunk decode holds neither the page nor more than a strip or tile
// of it at its own size: each strip or tile is folded into the smaller page as it is decoded.
// Errors and context as Decode.
func (f *File) DecodePage(ctx context.Context, p *Page, shrink int) (Decoded, error) {
	return f.decode(&pace{ctx: ctx}, p, shrink)
}

func (f *File) decode(pc *pace, p *Page, shrink int) (Decoded, error) {
	l, err := p.layout()
	if err == nil {
		err = l.shrinkable(shrink)
	}
	if err != nil {
		return Decoded{}, &PageError{Page: p.Number, Err: err}
	}
	img, dmg, err := l.decode(pc, f.data, f.bo, shrink)
	if err != nil {
		if err := pc.ctx.Err(); err != nil {
			return Decoded{}, err
		}
		return Decoded{}, &PageError{Page: p.Number, Err: err}
	}
	return Decoded{Image: img, Shrink: shrink, Damage: dmg}, nil
}

// Damage is what a decode could not read of a page.
type Damage struct {
	// Lost is how many of the page's pixels (as stored, at its own size) could not be decoded:
	// they are white. Pixels is the page's.
	Lost, Pixels int64
	// FirstRow and LastRow are the first and last rows (0-based, as stored) that hold a lost
	// pixel; both are -1 when none was lost. Rows is the page's.
	FirstRow, LastRow, Rows int
	// Chunks is how many strips or tiles (Tiles) were missing or damaged.
	Chunks int
	Tiles  bool
	// DamagedRows is how many rows were read only as far as their damage (T.4 with EOLs: the next
	// row's EOL resynchronizes, as libtiff reads them).
	DamagedRows int
	// Cause is the first damaged strip's or tile's error, which names it.
	Cause error
}

// String says what was lost, for people: numbers and fixed words, and the cause's.
func (d *Damage) String() string {
	var b strings.Builder
	unit := "strip"
	if d.Tiles {
		unit = "tile"
	}
	if d.Chunks != 1 {
		unit += "s"
	}
	if d.Lost > 0 {
		pct := int64(100)
		if d.Pixels > 0 {
			pct = (100*d.Lost + d.Pixels - 1) / d.Pixels // a lost pixel is never 0 %
		}
		fmt.Fprintf(&b, "%d %% of the page could not be decoded and is left white (rows %d to %d of %d, in %d %s)",
			pct, d.FirstRow+1, d.LastRow+1, d.Rows, d.Chunks, unit)
	}
	if d.DamagedRows > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d rows are damaged and read only up to their damage", d.DamagedRows)
	}
	if d.Cause != nil {
		fmt.Fprintf(&b, "; the first damage: %v", d.Cause)
	}
	return b.String()
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

// canvas is the page being written, with what each kind of sample maps to. Writers ask line for
// where a row's pixels go (the page itself; a scratch row when the page is shrunk, which commit
// then folds into it) and hand it back to commit.
type canvas struct {
	l    *layout
	bo   binary.ByteOrder
	pc   *pace
	img  image.Image
	pix  []byte
	str  int // stride
	bpp  int // bytes of a pixel as writers write it: 1 (gray, palette indexes) or 4
	gray [256]byte
	bits *[256][8]byte // a byte of 1-bit gray samples as 8 pixels
	row  []byte        // one row of 8-bit samples (or raw sub-byte values)

	// red folds rows into a page shrunk k times (k > 1); scratch holds the rows writers write
	// for it (up to 4 at once: a row of subsampled YCbCr units), scrStride bytes apart.
	k         int
	red       *reducer
	scratch   []byte
	scrStride int

	// What was lost. good holds, for each strip or tile position of a page in separate planes,
	// how many of its rows from the top every plane decoded (see lose).
	good     []int32
	dmg      Damage
	anything bool // a row of the page has been decoded
}

// whiteIndex is the palette entry a lost pixel of a palette page takes.
func (c *canvas) whiteIndex() byte {
	// The palette's lightest entry stands for the paper.
	best, lum := 0, -1
	for i, e := range c.l.palette {
		r, g, b, _ := e.RGBA()
		if v := int(299*r + 587*g + 114*b); v > lum {
			best, lum = i, v
		}
	}
	return byte(best)
}

func (l *layout) decode(pc *pace, data []byte, bo binary.ByteOrder, shrink int) (image.Image, *Damage, error) {
	c := &canvas{l: l, bo: bo, pc: pc, k: max(shrink, 1), bpp: 1}
	c.dmg.FirstRow, c.dmg.LastRow, c.dmg.Rows, c.dmg.Tiles = -1, -1, l.h, l.tiled
	c.dmg.Pixels = int64(l.w) * int64(l.h)
	if l.out == outRGBA || l.out == outNRGBA || (c.k > 1 && l.out == outPaletted) {
		c.bpp = 4
	}
	if c.k > 1 {
		c.red = newReducer(l, c.k)
		c.img = c.red.img
		rows := 1
		if l.subV > 1 {
			rows = l.subV
		}
		c.scrStride = c.bpp * min(l.cw, l.w)
		c.scratch = make([]byte, rows*c.scrStride)
	} else {
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
	}
	c.grayMap()
	if l.compression == compOJPEG {
		// One stream for the whole page: read whole, or not at all.
		if err := c.jpeg(l.ojpeg, nil, 0, 0, 0, l.w, l.h); err != nil {
			return nil, nil, err
		}
		if c.red != nil {
			c.red.flush(l.h)
		}
		return c.img, nil, nil
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
					return nil, nil, err
				}
				i := plane*per + cy*l.across + cx
				x0, y0 := cx*l.cw, cy*l.ch
				rows := l.chunkRows(i)
				visW, visH := min(l.cw, l.w-x0), min(rows, l.h-y0)
				got, err := c.chunk(data, i, plane, x0, y0, visW, visH, rows, buf, rev, lzw, &zlib, ccitt)
				if err != nil {
					if err := pc.ctx.Err(); err != nil {
						return nil, nil, err
					}
					err = fmt.Errorf("strip or tile %d: %w", i+1, err)
					if errors.Is(err, ErrUnsupported) && !c.anything && got == 0 {
						// A feature this package does not read, not damage.
						return nil, nil, err
					}
					c.lose(cy*l.across+cx, x0, y0, visW, got, visH, err)
				}
				if c.red != nil && l.across > 1 && cx == l.across-1 {
					c.red.flush(min(y0+l.ch, l.h))
				}
			}
		}
	}
	if l.planar == 2 {
		if err := c.finishPlanes(); err != nil {
			return nil, nil, err
		}
	}
	if c.red != nil {
		c.red.flush(l.h)
	}
	c.paintLost()
	if c.dmg.Chunks == 0 && c.dmg.DamagedRows == 0 {
		return c.img, nil, nil
	}
	if c.dmg.Lost+int64(c.dmg.DamagedRows)*int64(l.w) >= c.dmg.Pixels || !c.anything {
		// Nothing of the page could be read: the page is not there to answer for.
		return nil, nil, c.dmg.Cause
	}
	d := c.dmg
	return c.img, &d, nil
}

// chunk decodes strip or tile i (of plane plane) and writes its visible visW×visH part at
// (x0, y0). It returns how many of its visible rows it wrote from the top, all of them unless
// its data is missing, ends, or goes wrong first, and why not then.
func (c *canvas) chunk(data []byte, i, plane, x0, y0, visW, visH, rows int, buf, rev []byte, lzw *lzwDecoder,
	zlib *inflater, ccitt *ccittDecoder) (int, error) {
	l, pc := c.l, c.pc
	src, err := l.chunk(data, i)
	if err != nil {
		return 0, err
	}
	if l.reverse {
		src = reverseBits(rev[:len(src)], src)
	}
	if l.compression == compJPEG {
		pc.read += int64(len(src))
		if err := c.jpeg(src, l.jpegTables, plane, x0, y0, visW, visH); err != nil {
			return 0, err
		}
		c.anything = true
		return visH, nil
	}
	units := rows
	if l.subV > 1 {
		units = (rows + l.subV - 1) / l.subV
	}
	need := l.rowBytes * units
	var out []byte
	var got int  // bytes decompressed
	partial := 0 // 1 when the last row written is a damaged one, kept as far as it was read
	switch l.compression {
	case compNone:
		pc.read += int64(len(src))
		got = min(len(src), need)
		out = src[:got]
		if buf != nil {
			out = buf[:got]
			copy(out, src)
		}
		if err = pc.add(got); err == nil && got < need {
			err = corrupt("the data ends %d bytes short", need-got)
		}
	case compPackBits:
		out = buf[:need]
		got, err = unpackBits(out, src, pc)
	case compLZW:
		out = buf[:need]
		got, err = lzw.decode(out, src, pc)
	case compDeflate, compDeflateA:
		out = buf[:need]
		got, err = zlib.decode(out, src, pc)
	default:
		out = buf[:need]
		var lines int
		lines, err = ccitt.decode(out, src, rows, l.rowBytes, pc)
		got = lines * l.rowBytes
		if ccitt.partial && err != nil {
			// The damaged line, kept as far as it was read, is written too; it does not
			// count as a row read (see decode's "nothing could be read").
			got += l.rowBytes
			partial = 1
		}
		if ccitt.damaged > 0 {
			c.damagedRows(ccitt.damaged, fmt.Errorf("strip or tile %d: %w", i+1, ccitt.damage))
		}
	}
	if err != nil && pc.ctx.Err() != nil {
		return 0, pc.ctx.Err()
	}
	// Whole rows only (of subsampled YCbCr, whole rows of units).
	units = got / max(l.rowBytes, 1)
	out = out[:units*l.rowBytes]
	done := min(units*max(l.subV, 1), visH)
	if done-partial > 0 {
		c.anything = true
	}
	if l.predictor == 2 {
		l.undoPredictor(out, c.bo)
	}
	if done > 0 {
		var perr error
		if l.subH > 1 || l.subV > 1 {
			perr = c.putYCbCrUnits(out, x0, y0, visW, done)
		} else {
			perr = c.put(out, plane, x0, y0, visW, done)
		}
		if perr != nil {
			return 0, perr
		}
	}
	if err == nil && done < visH {
		err = corrupt("the data ends at row %d of %d", done+1, visH)
	}
	return done, err
}

// lose records that rows from..h of the visible w-pixel wide part of the strip or tile at
// position pos (x0, y0) could not be decoded, for cause. They are made white at once, except in
// separate planes at full size, where the other planes' strips still write into them: those are
// whitened at the end (see paintLost).
func (c *canvas) lose(pos, x0, y0, w, from, h int, cause error) {
	if c.dmg.Cause == nil {
		c.dmg.Cause = cause
	}
	c.dmg.Chunks++
	if from >= h {
		return
	}
	if c.l.planar == 2 && c.red == nil {
		if c.good == nil {
			c.good = make([]int32, c.l.across*c.l.down)
			for k := range c.good {
				c.good[k] = math.MaxInt32
			}
		}
		c.good[pos] = min(c.good[pos], int32(from))
		return
	}
	c.whiten(x0, y0+from, w, h-from)
}

// whiten makes the w×h pixels at (x0, y0) of the page white, and counts them lost.
func (c *canvas) whiten(x0, y0, w, h int) {
	c.dmg.Lost += int64(h) * int64(w)
	if c.dmg.FirstRow < 0 || y0 < c.dmg.FirstRow {
		c.dmg.FirstRow = y0
	}
	c.dmg.LastRow = max(c.dmg.LastRow, y0+h-1)
	white := [4]byte{255, 255, 255, 255}
	if c.red == nil && c.l.out == outPaletted {
		white[0] = c.whiteIndex()
	}
	for y := y0; y < y0+h; y++ {
		d := c.line(y, x0, w, 0)
		for k := range d {
			d[k] = white[k%c.bpp]
		}
		c.commit(y, x0, d)
	}
}

func (c *canvas) damagedRows(n int, cause error) {
	c.dmg.DamagedRows += n
	if c.dmg.Cause == nil {
		c.dmg.Cause = cause
	}
}

// paintLost whitens what a whole-size decode in separate planes lost, once every plane is in
// and converted.
func (c *canvas) paintLost() {
	l := c.l
	for pos, g := range c.good {
		cx, cy := pos%l.across, pos/l.across
		x0, y0 := cx*l.cw, cy*l.ch
		w, h := min(l.cw, l.w-x0), min(l.chunkRows(pos), l.h-y0)
		if from := int(g); from < h {
			c.whiten(x0, y0+from, w, h-from)
		}
	}
}

// line returns where the n pixels of page row y from column x0 are written: the page itself, or
// when it is shrunk, scratch row j (writers that fill several rows at once use several), which
// commit then folds into the smaller page.
func (c *canvas) line(y, x0, n, j int) []byte {
	if c.red == nil {
		o := y*c.str + x0*c.bpp
		return c.pix[o : o+n*c.bpp]
	}
	o := j * c.scrStride
	return c.scratch[o : o+n*c.bpp]
}

// commit hands a row line gave back once it is written: a shrunk page folds it in (and, when its
// strips or tiles span the page's width, writes each smaller row as soon as its rows are in).
func (c *canvas) commit(y, x0 int, d []byte) {
	if c.red == nil {
		return
	}
	c.red.add(y, x0, d)
	if c.l.across == 1 {
		c.red.flush(y + 1)
	}
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
		if l.planar == 2 {
			s := c.samples8(chunk[y*l.rowBytes:], w*samples)
			c.putPlane(c.pix[(y0+y)*c.str:], s, plane, x0, w)
			continue
		}
		d := c.line(y0+y, x0, w, 0)
		if l.out == outGray && l.bps == 1 && samples == 1 {
			c.putBits(d, chunk[y*l.rowBytes:])
			c.commit(y0+y, x0, d)
			continue
		}
		s := c.samples8(chunk[y*l.rowBytes:], w*samples)
		switch {
		case l.out == outGray:
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
			c.putIndexes(d, s, samples, w)
		case l.colors == 1: // gray with alpha
			for x := range w {
				g := c.gray[s[x*samples]]
				d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = g, g, g, s[x*samples+1]
			}
		default:
			c.putColor(d, s, samples, w)
		}
		c.commit(y0+y, x0, d)
	}
	return nil
}

// putIndexes writes w palette indexes (every samples-th of s): as they are at full size, as the
// colours they stand for when the page is shrunk (a mean of indexes means nothing).
func (c *canvas) putIndexes(d, s []byte, samples, w int) {
	if c.bpp == 1 {
		for x := range w {
			d[x] = s[x*samples]
		}
		return
	}
	pal := c.l.palette
	for x := range w {
		r, g, b := byte(0), byte(0), byte(0)
		if i := int(s[x*samples]); i < len(pal) {
			e := pal[i].(color.RGBA)
			r, g, b = e.R, e.G, e.B
		}
		d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = r, g, b, 255
	}
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

// putYCbCrUnits writes subsampled YCbCr data: units of subH×subV luma samples, then Cb and Cr;
// w×h pixels at (x0, y0), a row of units (subV rows) at a time.
func (c *canvas) putYCbCrUnits(chunk []byte, x0, y0, w, h int) error {
	l := c.l
	uw := l.subH*l.subV + 2
	for uy := 0; uy*l.subV < h; uy++ {
		if err := c.pc.add(4 * w * l.subV); err != nil {
			return err
		}
		row := chunk[uy*l.rowBytes:]
		for j := range l.subV {
			y := uy*l.subV + j
			if y >= h {
				break
			}
			d := c.line(y0+y, x0, w, j)
			for ux := 0; ux*l.subH < w; ux++ {
				u := row[ux*uw : (ux+1)*uw]
				cb, cr := u[uw-2], u[uw-1]
				for i := range l.subH {
					x := ux*l.subH + i
					if x >= w {
						break
					}
					r, g, b := l.ycc.rgb(u[j*l.subH+i], cb, cr)
					d[4*x], d[4*x+1], d[4*x+2], d[4*x+3] = r, g, b, 255
				}
			}
			c.commit(y0+y, x0, d)
		}
	}
	return nil
}
