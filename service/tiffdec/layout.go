package tiffdec

import (
	"image/color"
	"math"
	"time"
)

// Compression schemes (TIFF 6.0 and its technical notes).
const (
	compNone     = 1
	compCCITTRLE = 2
	compT4       = 3
	compT6       = 4
	compLZW      = 5
	compOJPEG    = 6
	compJPEG     = 7
	compDeflate  = 8
	compRLEW     = 32771
	compPackBits = 32773
	compDeflateA = 32946 // Adobe's code for Deflate, as libtiff writes it
)

// Photometric interpretations.
const (
	photoMinIsWhite = 0
	photoMinIsBlack = 1
	photoRGB        = 2
	photoPalette    = 3
	photoSeparated  = 5
	photoYCbCr      = 6
)

// Output pixel kinds.
const (
	outGray     = iota // *image.Gray
	outPaletted        // *image.Paletted
	outRGBA            // *image.RGBA (alpha premultiplied, or opaque)
	outNRGBA           // *image.NRGBA (unassociated alpha)
)

// MaxBytesPerPixel and MaxStateBytes bound any page's plan before its directory is read:
// Plan.Bytes() ≤ MaxBytesPerPixel × pixels + MaxStateBytes + the file's length (a bit-reversed or
// spliced copy of compressed data). The worst ordinary layout is 8 samples of 16 bits in one
// strip: 16 bytes a pixel of strip, 4 of output. Plan refuses the layouts that would cost more
// (tiles far larger than a tiny page, JPEG strips of one row): valid, but no scanner writes them.
const (
	MaxBytesPerPixel = 20
	MaxStateBytes    = 4 << 20
)

// Plan is what decoding a page allocates, priced before anything is allocated.
type Plan struct {
	// PixelBytes is the decoded page: 1 byte a pixel for bilevel, gray and palette pages, 4 for
	// colour (and for a palette page read shrunk, which takes its entries' colours).
	PixelBytes int64
	// WorkBytes is what the decoder holds beside it at most: one strip or tile (decompressed, at
	// its real bit depth), a bit-reversed copy of its compressed bytes where FillOrder asks for one,
	// a JPEG decoder's planes and the stream with its tables, the decompressors' state; read
	// shrunk, the rows it folds in and their sums.
	WorkBytes int64
	// UprightBytes is what showing the decoded page takes: the copy its Orientation makes
	// (imaging.Orient) and the copy stretched to square pixels (imaging.Stretch), a byte a pixel
	// for gray and 4 for the rest, each held beside what it is made from; 0 for a page stored
	// upright in square pixels.
	UprightBytes int64
	// Width, Height are the page's size as stored.
	Width, Height int
	// Shrink is how many times smaller than the page along each side the decode is (see
	// DecodePage): 1 for the page at its own size.
	Shrink int
	// CPU is what decoding the page costs in CPU time at most, upright copies included: the
	// bytes it reads of the file, the bytes they decompress to, the pixels it writes and the
	// strips or tiles it goes through, each at what the slowest of them costs on this
	// machine's reference inputs (see cpuCost). A caller that decodes the page charges it
	// against the request's CPU budget first (cpubudget.Budget.Plan).
	CPU time.Duration
}

// Bytes is the most the decode holds at once, showing the page upright included (the decoder's
// working memory is free by then).
func (p Plan) Bytes() int64 { return p.PixelBytes + max(p.WorkBytes, p.UprightBytes) }

// Size is the size of the image the decode gives, as stored: the page's, Shrink times smaller
// (rounded up).
func (p Plan) Size() (w, h int) {
	k := max(p.Shrink, 1)
	return (p.Width + k - 1) / k, (p.Height + k - 1) / k
}

// layout is a page's directory, checked: everything Decode needs.
type layout struct {
	w, h        int
	compression uint32
	photometric uint32
	bps, spp    int
	colors      int // colour samples a pixel: 1 (gray, palette), 3 (RGB, YCbCr) or 4 (CMYK)
	alpha       int // 0: none; 1: associated; 2: unassociated (the sample after the colours)
	planar      int // 1 contiguous, 2 separate
	predictor   int
	reverse     bool // FillOrder 2: reverse the bits of each compressed byte
	t4, t6      uint32

	tiled        bool
	cw, ch       int // a chunk's (strip's or tile's) width and height
	across, down int // chunks across and down, per plane
	planes       int
	offsets      intArray
	counts       intArray // empty: each chunk runs to the end of the file
	fileLen      int64
	rowBytes     int // bytes of one decompressed row of a full-width chunk (one plane)
	predRow      int // bytes horizontal differencing runs over at a time (see chunks)
	// subH, subV: YCbCr subsampling of uncompressed/losslessly compressed YCbCr data (1 otherwise).
	subH, subV int

	// readBytes is what decoding reads of the file's strips or tiles (each cut to readCap), and
	// maxRead the most one chunk reads: exact for a page of up to exactChunks chunks, bounds
	// (what the chunks could hold) for more.
	readBytes, maxRead int64
	chunkBytes         int64 // one decompressed chunk (one plane)
	jpegTables         []byte
	ojpeg              []byte // compression 6: the whole image's JPEG stream

	out     int
	palette color.Palette
	ycc     yccParams
}

// yccParams converts YCbCr samples as TIFF defines them (coefficients and reference black and
// white).
type yccParams struct {
	lr, lg, lb float64
	ref        [6]float64
}

// Plan checks page's directory and prices its decode, in memory and CPU time. It costs the same
// whatever the page's strip or tile count: up to 16 384 strips or tiles are each checked against
// the file and priced at what they hold; more (a page of one-pixel tiles has millions, and pages
// may share one array of them) are priced at what they could hold, and checked as they are
// decoded. Errors are a *PageError wrapping ErrUnsupported (a valid layout this package does not
// read) or ErrCorrupt.
func (p *Page) Plan() (Plan, error) { return p.PlanAt(1) }

// PlanAt is Plan for a decode shrink times smaller along each side (DecodePage): the smaller page
// and its upright copies, and the rows the decode folds into it. A page in separate planes is
// read at its own size only: PlanAt refuses another (ErrUnsupported), as DecodePage does.
func (p *Page) PlanAt(shrink int) (Plan, error) {
	l, err := p.layout()
	if err != nil {
		return Plan{}, &PageError{Page: p.Number, Err: err}
	}
	pl := l.plan()
	copies := l.maxRead + int64(len(l.jpegTables))
	if pl.Bytes()-copies > MaxBytesPerPixel*int64(l.w)*int64(l.h)+MaxStateBytes {
		return Plan{}, &PageError{Page: p.Number, Err: unsupported("strips or tiles of %d×%d px that need %d MiB to decode a %d×%d page",
			l.cw, l.ch, pl.Bytes()>>20, l.w, l.h)}
	}
	if err := l.shrinkable(shrink); err != nil {
		return Plan{}, &PageError{Page: p.Number, Err: err}
	}
	pl.Shrink = shrink
	out := l.out
	if shrink > 1 {
		out = l.shrunkOut()
		bpp := int64(1)
		if out != outGray {
			bpp = 4
		}
		w, h := pl.Size()
		pl.PixelBytes = bpp * int64(w) * int64(h)
		rows := int64(max(l.subV, 1))
		pl.WorkBytes += rows*bpp*int64(min(l.cw, l.w)) + int64(l.reducerSlots(shrink))*int64(w)*bpp*4
	}
	bpp := int64(4)
	if out == outGray {
		bpp = 1
	}
	sw, sh := pl.Size()
	if p.Orientation > 1 {
		pl.UprightBytes = bpp * int64(sw) * int64(sh)
	}
	upright := int64(0)
	if w, h := p.uprightSize(sw, sh); w*h != sw*sh {
		pl.UprightBytes += bpp * int64(w) * int64(h)
		upright = int64(w) * int64(h)
	}
	if p.Orientation > 1 {
		upright += int64(sw) * int64(sh)
	}
	pl.CPU = l.cpu(upright, shrink)
	return pl, nil
}

func (l *layout) plan() Plan {
	px := int64(l.w) * int64(l.h)
	pl := Plan{Width: l.w, Height: l.h, PixelBytes: px}
	if l.out == outRGBA || l.out == outNRGBA {
		pl.PixelBytes = 4 * px
	}
	work := l.stateBytes()
	switch l.compression {
	case compJPEG:
		comps := int64(l.spp)
		if l.planar == 2 {
			comps = 1
		}
		work += jpegWork(l.cw, l.ch, comps) + int64(len(l.jpegTables)) + l.maxRead
	case compOJPEG:
		work += jpegWork(l.w, l.h, int64(l.spp))
	default:
		work += l.chunkBytes
		samples := int64(l.spp)
		if l.planar == 2 {
			samples = 1
		}
		work += int64(l.cw) * samples // one row as 8-bit samples
		if l.reverse {
			work += l.maxRead
		}
		if l.compression == compT4 || l.compression == compT6 || l.compression == compCCITTRLE || l.compression == compRLEW {
			work += 2 * 4 * int64(maxChanges(l.cw)+2) // the reference and coding lines' changing elements
		}
	}
	if l.planar == 2 {
		work += 4 * int64(l.across) * int64(l.down) // what each position's planes decoded, where one was damaged
	}
	pl.WorkBytes = work
	return pl
}

// stateBytes is what a page's decompressor keeps besides its buffers: LZW's table (6 bytes an
// entry), a Deflate reader (its 32 KiB window, Huffman tables and buffered input), image/jpeg's
// decoder (Huffman and quantization tables, buffered input), and the colour map.
func (l *layout) stateBytes() int64 {
	n := int64(4 << 10) // the page's layout and a decode's small variables
	switch l.compression {
	case compLZW:
		n += 6 * 4096
	case compDeflate, compDeflateA:
		n += 64 << 10
	case compJPEG, compOJPEG:
		n += 64 << 10
	}
	return n + int64(len(l.palette))*16
}

// jpegWork bounds what image/jpeg allocates to decode a w×h frame of comps components: every
// component's samples in whole MCUs (at most 4×4 blocks of 8×8 a sampling unit, so padded to 32
// px), and an RGBA or CMYK copy that it converts 3- and 4-component frames into (or our
// upsampler's rows).
func jpegWork(w, h int, comps int64) int64 {
	pw, ph := int64(w+31)&^31, int64(h+31)&^31
	n := comps * pw * ph
	if comps >= 3 {
		n += 4*int64(w)*int64(h) + 6*int64(w) // and the upsampled chroma rows
	}
	return n
}

func (p *Page) layout() (*layout, error) {
	l := &layout{w: p.Width, h: p.Height}
	if l.w <= 0 || l.h <= 0 {
		return nil, corrupt("the page has no size (%d×%d)", l.w, l.h)
	}
	var err error
	get := func(e entry, def uint32) uint32 {
		if err != nil {
			return 0
		}
		var v uint32
		v, err = p.scalarOr(e, def)
		return v
	}
	l.compression = get(p.compression, compNone)
	spp := get(p.samplesPerPixel, 1)
	planar := get(p.planar, 1)
	predictor := get(p.predictor, 1)
	fill := get(p.fillOrder, 1)
	sampleFormat := get(p.sampleFormat, 1)
	l.t4 = get(p.t4, 0)
	l.t6 = get(p.t6, 0)
	if err != nil {
		return nil, err
	}
	switch {
	case spp == 0:
		return nil, corrupt("0 samples a pixel")
	case spp > 8:
		return nil, unsupported("%d samples a pixel", spp)
	}
	l.spp = int(spp)
	// Every sample has the same depth (libtiff reads one value for all of them too). No TIFF
	// has samples of 0 bits: such a page is corrupt, not a depth this reader lacks.
	bps := uint32(1)
	if p.bitsPerSample.present() {
		v, err := p.ints(p.bitsPerSample, l.spp)
		if err != nil {
			return nil, err
		}
		bps = v[0]
		for _, b := range v {
			if b == 0 {
				return nil, corrupt("0-bit samples")
			}
			if b != bps {
				return nil, unsupported("samples of different bit depths")
			}
		}
	}
	if p.photometric.present() {
		// Colour spaces this package does not read say so before their sample formats do.
		switch v, _ := p.scalar(p.photometric); v {
		case 8, 9, 10:
			return nil, unsupported("CIE L*a*b* colour")
		case 32844, 32845:
			return nil, unsupported("LogL/LogLuv colour")
		}
	}
	if sampleFormat != 1 {
		switch sampleFormat {
		case 2:
			return nil, unsupported("signed integer samples")
		case 3:
			return nil, unsupported("floating-point samples")
		default:
			return nil, unsupported("sample format %d", sampleFormat)
		}
	}
	switch bps {
	case 1, 2, 4, 8, 16:
	default:
		return nil, unsupported("%d-bit samples", bps)
	}
	l.bps = int(bps)
	switch planar {
	case 1, 2:
		l.planar = int(planar)
	default:
		return nil, corrupt("planar configuration %d", planar)
	}
	if l.spp == 1 {
		l.planar = 1
	}
	switch fill {
	case 1:
	case 2:
		l.reverse = true
	default:
		return nil, corrupt("fill order %d", fill)
	}
	if err := l.compressionOK(); err != nil {
		return nil, err
	}
	photo, err := p.photometricOr(l)
	if err != nil {
		return nil, err
	}
	l.photometric = photo
	if err := p.colorLayout(l); err != nil {
		return nil, err
	}
	if l.compression != compLZW && l.compression != compDeflate && l.compression != compDeflateA {
		// libtiff knows the Predictor tag only for the codecs that use it; with any other it is
		// an unknown tag, ignored (a JPEG-compressed scan in OCR-D's test corpus carries 38928).
		predictor = 1
	}
	switch predictor {
	case 1:
	case 2:
		if l.bps != 8 && l.bps != 16 {
			return nil, unsupported("horizontal differencing of %d-bit samples", l.bps)
		}
		l.predictor = 2
	case 3:
		return nil, unsupported("floating-point prediction")
	default:
		return nil, unsupported("predictor %d", predictor)
	}
	if l.compression == compJPEG || l.compression == compOJPEG {
		l.reverse = false
	}
	if err := p.chunks(l); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *layout) compressionOK() error {
	switch l.compression {
	case compNone, compLZW, compDeflate, compDeflateA, compPackBits, compJPEG, compOJPEG:
	case compCCITTRLE, compRLEW, compT4, compT6:
		if l.bps != 1 || l.spp != 1 {
			return corrupt("CCITT compression of %d samples of %d bits", l.spp, l.bps)
		}
	case 9, 10, 34661, 34676, 34677, 34712, 34887, 34888, 34892, 34925, 34933, 34934, 50000, 50001:
		return unsupported("compression %d (JBIG, JPEG 2000, LZMA, Zstandard, WebP and the like are not read)", l.compression)
	default:
		return unsupported("compression %d", l.compression)
	}
	return nil
}

func (p *Page) photometricOr(l *layout) (uint32, error) {
	if p.photometric.present() {
		return p.scalar(p.photometric)
	}
	// libtiff's guesses for a directory without one.
	switch {
	case l.compression == compOJPEG && l.spp == 3:
		return photoYCbCr, nil
	case l.spp >= 3:
		return photoRGB, nil
	case l.compression == compT4 || l.compression == compT6 || l.compression == compCCITTRLE || l.compression == compRLEW:
		return photoMinIsWhite, nil
	}
	return photoMinIsBlack, nil
}

// colorLayout checks the photometric interpretation against the samples and picks the output.
func (p *Page) colorLayout(l *layout) error {
	var extras []uint32
	if p.extraSamples.present() {
		var err error
		if extras, err = p.ints(p.extraSamples, 16); err != nil {
			return err
		}
	}
	need := func(colors int) error {
		if l.spp < colors {
			return corrupt("photometric %d with %d samples a pixel", l.photometric, l.spp)
		}
		l.colors = colors
		// The first extra sample after the colours is the alpha when ExtraSamples says so.
		if l.spp > colors && len(extras) > 0 && (extras[0] == 1 || extras[0] == 2) {
			l.alpha = int(extras[0])
		}
		return nil
	}
	switch l.photometric {
	case photoMinIsWhite, photoMinIsBlack:
		if err := need(1); err != nil {
			return err
		}
		l.out = outGray
		if l.alpha != 0 {
			l.out = outRGBA
			if l.alpha == 2 {
				l.out = outNRGBA
			}
		}
	case photoPalette:
		if err := need(1); err != nil {
			return err
		}
		if l.bps > 8 {
			return unsupported("a %d-bit palette", l.bps)
		}
		if err := p.readPalette(l); err != nil {
			return err
		}
		l.alpha = 0
		l.out = outPaletted
	case photoRGB:
		if err := need(3); err != nil {
			return err
		}
		if l.bps < 8 {
			return unsupported("%d-bit RGB", l.bps)
		}
	case photoSeparated:
		ink, err := p.scalarOr(p.inkSet, 1)
		if err != nil {
			return err
		}
		if ink != 1 {
			return unsupported("separated data that is not CMYK (ink set %d)", ink)
		}
		if err := need(4); err != nil {
			return err
		}
		if l.bps != 8 {
			return unsupported("%d-bit CMYK", l.bps)
		}
		// libtiff's RGBA reader shows CMYK opaque, whatever its extra samples say (tiff2rgba of
		// a CMYK page with unassociated alpha is opaque): so do we, in either planar layout.
		l.alpha = 0
	case photoYCbCr:
		if err := need(3); err != nil {
			return err
		}
		if err := p.readYCbCr(l); err != nil {
			return err
		}
	case 4:
		return unsupported("a transparency mask")
	case 8, 9, 10:
		return unsupported("CIE L*a*b* colour")
	case 32844, 32845:
		return unsupported("LogL/LogLuv colour")
	default:
		return unsupported("photometric interpretation %d", l.photometric)
	}
	if l.colors >= 3 {
		l.out = outRGBA
		if l.alpha == 2 {
			l.out = outNRGBA
		}
	}
	return nil
}

func (p *Page) readPalette(l *layout) error {
	n := 1 << l.bps
	if !p.colorMap.present() || int(p.colorMap.count) < 3*n {
		return corrupt("a palette page without a colour map of %d entries", n)
	}
	cm, err := p.ints(p.colorMap, 3*n)
	if err != nil {
		return err
	}
	// libtiff takes a map whose values all fit in 8 bits for an 8-bit map (writers that forgot to
	// scale), and the high byte of each 16-bit value otherwise.
	shift := 0
	for _, v := range cm {
		if v > 255 {
			shift = 8
			break
		}
	}
	l.palette = make(color.Palette, n)
	for i := range n {
		l.palette[i] = color.RGBA{uint8(cm[i] >> shift), uint8(cm[n+i] >> shift), uint8(cm[2*n+i] >> shift), 255}
	}
	return nil
}

func (p *Page) readYCbCr(l *layout) error {
	l.subH, l.subV = 2, 2 // the specification's default
	if p.ycbcrSub.present() {
		s, err := p.ints(p.ycbcrSub, 2)
		if err != nil {
			return err
		}
		if len(s) < 2 {
			return corrupt("YCbCrSubSampling has %d values", len(s))
		}
		l.subH, l.subV = int(s[0]), int(s[1])
	}
	for _, s := range []int{l.subH, l.subV} {
		if s != 1 && s != 2 && s != 4 {
			return corrupt("YCbCr subsampling %d×%d", l.subH, l.subV)
		}
	}
	l.ycc = yccParams{lr: 0.299, lg: 0.587, lb: 0.114, ref: [6]float64{0, 255, 128, 255, 128, 255}}
	if p.ycbcrCoeffs.present() {
		c, err := p.rationals(p.ycbcrCoeffs, 3)
		if err != nil {
			return err
		}
		if c[1] <= 0 {
			return corrupt("YCbCr coefficients with no green")
		}
		l.ycc.lr, l.ycc.lg, l.ycc.lb = c[0], c[1], c[2]
	}
	if p.refBW.present() {
		r, err := p.rationals(p.refBW, 6)
		if err != nil {
			return err
		}
		copy(l.ycc.ref[:], r)
	}
	if l.compression == compJPEG || l.compression == compOJPEG {
		// The JPEG stream carries its own sampling; the decoder upsamples.
		l.subH, l.subV = 1, 1
		return nil
	}
	if l.bps != 8 {
		return unsupported("%d-bit YCbCr", l.bps)
	}
	if (l.subH > 1 || l.subV > 1) && l.planar == 2 {
		return unsupported("subsampled YCbCr in separate planes")
	}
	return nil
}

// chunks reads the strip or tile geometry and checks every chunk against the file.
func (p *Page) chunks(l *layout) error {
	l.planes = 1
	if l.planar == 2 {
		l.planes = l.spp
	}
	l.fileLen = int64(len(p.f.data))
	if l.compression == compOJPEG {
		return p.ojpegStream(l)
	}
	var (
		err             error
		offsets, counts entry
	)
	if p.tileWidth.present() || p.tileLength.present() || p.tileOffsets.present() {
		l.tiled = true
		tw, err1 := p.scalarOr(p.tileWidth, 0)
		th, err2 := p.scalarOr(p.tileLength, 0)
		if err1 != nil || err2 != nil {
			return corrupt("bad tile size entries")
		}
		if tw == 0 || th == 0 || tw > 1<<20 || th > 1<<20 {
			return corrupt("tiles of %d×%d", tw, th)
		}
		l.cw, l.ch = int(tw), int(th)
		l.across = (l.w + l.cw - 1) / l.cw
		l.down = (l.h + l.ch - 1) / l.ch
		offsets, counts = p.tileOffsets, p.tileCounts
	} else {
		rps, err := p.scalarOr(p.rowsPerStrip, 1<<32-1)
		if err != nil {
			return err
		}
		if rps == 0 {
			return corrupt("RowsPerStrip is 0")
		}
		l.cw, l.ch = l.w, int(min(rps, uint32(l.h)))
		l.across, l.down = 1, (l.h+l.ch-1)/l.ch
		offsets, counts = p.stripOffsets, p.stripCounts
	}
	if l.subV > 1 && !l.tiled && l.ch%l.subV != 0 && l.down > 1 {
		return corrupt("strips of %d rows hold YCbCr subsampled %d rows high", l.ch, l.subV)
	}
	n := l.chunks()
	if !offsets.present() {
		return corrupt("the page has no strip or tile offsets")
	}
	if l.offsets, err = p.array(offsets, n); err != nil {
		return err
	}
	if counts.present() {
		if l.counts, err = p.array(counts, n); err != nil {
			return err
		}
	}
	// The decompressed size of a full chunk, one plane of it.
	samples := int64(l.spp)
	if l.planar == 2 {
		samples = 1
	}
	if l.subH > 1 || l.subV > 1 {
		units := int64(l.cw+l.subH-1) / int64(l.subH)
		l.rowBytes = int(units * int64(l.subH*l.subV+2))
		l.chunkBytes = int64(l.rowBytes) * int64((l.ch+l.subV-1)/l.subV)
	} else {
		rb := (int64(l.cw)*samples*int64(l.bps) + 7) / 8
		if rb > 1<<31 {
			return corrupt("rows of %d bytes", rb)
		}
		l.rowBytes = int(rb)
		l.chunkBytes = rb * int64(l.ch)
	}
	if l.predictor == 2 {
		// libtiff differences a row as stored, a pixel's samples apart; a row of subsampled
		// YCbCr units is its scanline size times subV (as libtiff, it refuses rows that are
		// not whole pixels).
		l.predRow = l.rowBytes
		if l.subV > 1 {
			if l.rowBytes%l.subV != 0 {
				return corrupt("horizontal differencing of %d-byte unit rows subsampled %d rows high", l.rowBytes, l.subV)
			}
			l.predRow = l.rowBytes / l.subV
		}
		if pixel := int(samples) * l.bps / 8; l.predRow%pixel != 0 {
			return corrupt("horizontal differencing over rows of %d bytes, not whole %d-byte pixels", l.predRow, pixel)
		}
	}
	if l.compression == compJPEG && p.jpegTables.present() {
		if l.jpegTables, err = p.bytes(p.jpegTables); err != nil {
			return err
		}
	}
	if n > exactChunks {
		// Too many chunks to look at one by one for a plan, which costs the same whatever a
		// page's chunk count (a page of one-pixel tiles has millions, and pages can share one
		// array of them): priced at the most each could be read for. Decode checks each.
		l.maxRead = min(l.readCap(l.ch), l.fileLen)
		l.readBytes = mulSat(n, l.maxRead)
		return nil
	}
	// What each chunk reads of the file (nothing, for one that is missing or outside it).
	for i := range int(n) {
		src, _ := l.chunk(p.f.data, i)
		l.readBytes += int64(len(src))
		l.maxRead = max(l.maxRead, int64(len(src)))
	}
	return nil
}

// exactChunks is the most strips or tiles a page's plan looks at one by one: more than a page of
// the largest side (10 000 px) in one-row strips has, and some 20 µs of work.
const exactChunks = 16384

func mulSat(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// chunkRows is how many rows chunk i holds: a tile's all, a strip's up to the page's last row.
func (l *layout) chunkRows(i int) int {
	if l.tiled {
		return l.ch
	}
	return min(l.ch, l.h-(i%l.down)*l.ch)
}

// readCap is the most bytes a chunk of rows rows is read for, whatever its byte count says: what
// the most wasteful encoder of the compression writes for it, with room to spare. A byte count
// larger than that (data the chunk cannot use, or strips whose counts all run to the end of the
// file) is cut to it, so that a decode reads no more of the file than its output warrants,
// however its chunks overlap.
//
//   - Uncompressed: the chunk's bytes, exactly (libtiff also reads them whatever the count).
//   - PackBits, LZW, Deflate: twice the decompressed bytes and 1 KiB (a literal byte a byte and
//     its headers; LZW's 12-bit codes, 1.5 bytes a byte; Deflate's stored blocks).
//   - CCITT: 8 bytes for each decompressed byte (8 pixels: 6 bits a pixel is T.4's and T.6's
//     worst), 32 a row (EOL, fill bits), 64 more (return to control).
//   - JPEG: 4 bytes a sample of the chunk in whole MCUs (a block's 64 coefficients at 16-bit
//     codes and 11-bit values are 3.4 bytes a sample) and 4 KiB of tables and markers.
func (l *layout) readCap(rows int) int64 {
	units := int64(rows)
	if l.subV > 1 {
		units = (units + int64(l.subV) - 1) / int64(l.subV)
	}
	need := int64(l.rowBytes) * units
	switch l.compression {
	case compNone:
		return need
	case compCCITTRLE, compRLEW, compT4, compT6:
		return 8*need + 32*int64(rows) + 64
	case compJPEG:
		comps := int64(l.spp)
		if l.planar == 2 {
			comps = 1
		}
		return 4*comps*int64((l.cw+31)&^31)*int64((rows+31)&^31) + 4096
	}
	return 2*need + 1024
}

// compressedSize is the number of bytes chunk i says it has at off: an uncompressed chunk's
// rows whatever its count says; a chunk without a count runs to the end of the file.
func (l *layout) compressedSize(i int, off int64) int64 {
	if l.compression == compNone {
		rows := l.chunkRows(i)
		if l.subV > 1 {
			return int64(l.rowBytes) * int64((rows+l.subV-1)/l.subV)
		}
		return int64(l.rowBytes) * int64(rows)
	}
	if i >= l.counts.n {
		return max(0, l.fileLen-off)
	}
	return int64(l.counts.at(i))
}

// chunk returns the compressed bytes of chunk i as the decoder reads them: cut to readCap, and
// to the end of the file when it runs past it (a file cut short: its decoder reads what there
// is). A chunk the offsets do not list (libtiff takes a short list as it is, the chunks it lacks
// at offset 0), or that lies in the file's header or outside the file, has no bytes: an error
// (the caller names the chunk).
func (l *layout) chunk(data []byte, i int) ([]byte, error) {
	if i >= l.offsets.n {
		return nil, corrupt("missing (the file lists %d offsets for %d strips or tiles)", l.offsets.n, l.chunks())
	}
	off := int64(l.offsets.at(i))
	switch {
	case off < 8:
		return nil, corrupt("missing (at offset %d, in the file's header)", off)
	case off >= int64(len(data)):
		return nil, corrupt("outside the file (at offset %d of %d bytes)", off, len(data))
	}
	size := min(l.compressedSize(i, off), l.readCap(l.chunkRows(i)))
	return data[off:min(off+size, int64(len(data)))], nil
}

// chunks is how many strips or tiles the page has, in all its planes.
func (l *layout) chunks() int64 { return int64(l.across) * int64(l.down) * int64(l.planes) }

// ojpegStream finds the JPEG stream of an old-style JPEG page: libtiff reads it from
// JPEGInterchangeFormat when the file has one; files that keep only the tables in the directory
// are not read here.
func (p *Page) ojpegStream(l *layout) error {
	if !p.jpegIF.present() {
		return unsupported("old-style JPEG without an interchange-format stream")
	}
	off, err := p.scalar(p.jpegIF)
	if err != nil {
		return err
	}
	if int64(off) >= int64(len(p.f.data)) {
		return corrupt("the old-style JPEG stream lies outside the file")
	}
	end := int64(len(p.f.data))
	if p.jpegIFLen.present() {
		n, err := p.scalar(p.jpegIFLen)
		if err != nil {
			return err
		}
		if int64(off)+int64(n) > end {
			return corrupt("the old-style JPEG stream runs past the end of the file")
		}
		end = int64(off) + int64(n)
	}
	l.ojpeg = p.f.data[off:end]
	// Its frame may be padded to whole MCUs (at most 32 px); the decode is cropped to the page.
	l.cw, l.ch, l.across, l.down = (l.w+31)&^31, (l.h+31)&^31, 1, 1
	return nil
}
