package tiffdec

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
)

// Limits bound the page chain walk. Zero fields take the defaults below.
type Limits struct {
	// MaxPages is the most pages (full-resolution images) Open accepts: more is ErrTooManyPages.
	MaxPages int
	// MaxIFDs is the most IFDs Open reads, thumbnails and the IFDs SubIFDs tags name included:
	// more is ErrTooManyPages. Default 2×MaxPages+16: a thumbnail a page, and some more.
	MaxIFDs int
	// FirstPage stops the walk at the first page: Open then reads the file as one image.
	FirstPage bool
}

// DefaultMaxPages is MaxPages when Limits leaves it zero.
const DefaultMaxPages = 10_000

// maxEntries is the most entries one IFD may hold; libtiff refuses more as a sanity check ("this is
// probably not a valid IFD offset"), and so a chain of IFDs that overlap cannot make every IFD a
// 65 535-entry read.
const maxEntries = 4096

// ctxEvery is how many IFDs the walk reads between looks at its context.
const ctxEvery = 256

func (l Limits) withDefaults() Limits {
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxIFDs <= 0 {
		l.MaxIFDs = 2*l.MaxPages + 16
	}
	return l
}

// walks counts Open's page-chain walks in this process (see Walks).
var walks atomic.Int64

// Walks is how many page-chain walks Open has begun in this process. What a walk learns (a
// *File, its pages) is meant to be passed from stage to stage of a request, never found again:
// tests hold a request to its walks by this count.
func Walks() int64 { return walks.Load() }

// File is a TIFF whose page chain has been walked. Its data must not change while it is used.
type File struct {
	data  []byte
	bo    binary.ByteOrder
	Pages []Page
	// IFDs is how many IFDs the walk read (pages, thumbnails, and SubIFDs counted).
	IFDs int
}

// Data returns the file's bytes.
func (f *File) Data() []byte { return f.data }

// IsTIFF reports whether data starts with a classic TIFF header ("II*\0" or "MM\0*"), or a
// BigTIFF one (which Open refuses as ErrUnsupported).
func IsTIFF(data []byte) bool {
	if len(data) < 8 {
		return false
	}
	switch string(data[:4]) {
	case "II*\x00", "MM\x00*", "II+\x00", "MM\x00+":
		return true
	}
	return false
}

// Open walks the page chain of data within lim and ctx, reading every page's directory (not its
// pixels): reduced-resolution images (NewSubfileType bit 0, or the old SubfileType 2) are
// skipped, and a chain that loops back to a directory already read ends there (libtiff reads the
// pages before the loop too). Errors: ErrFormat, ErrUnsupported (BigTIFF), ErrCorrupt (a broken chain, or no page),
// ErrTooManyPages, or ctx's. A page whose directory is unusable is not an error here: its Plan
// says why.
func Open(ctx context.Context, data []byte, lim Limits) (*File, error) {
	lim = lim.withDefaults()
	if len(data) < 8 {
		return nil, ErrFormat
	}
	var bo binary.ByteOrder
	switch string(data[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	case "II+\x00", "MM\x00+":
		return nil, unsupported("BigTIFF (64-bit offsets) is not read")
	default:
		return nil, ErrFormat
	}
	f := &File{data: data, bo: bo}
	walks.Add(1)
	seen := map[uint32]bool{}
	// entryBytes bounds the directory bytes read over the whole walk by the file's length (plus
	// slack): IFDs of a valid file do not overlap, and a chain built to overlap gains nothing.
	entryBudget := int64(len(data)) + 64<<10
	off := bo.Uint32(data[4:8])
	for off != 0 {
		if f.IFDs%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if seen[off] {
			break // as libtiff: a chain that loops back ends there, its pages read
		}
		seen[off] = true
		f.IFDs++
		if f.IFDs > lim.MaxIFDs {
			return nil, fmt.Errorf("%w: more than %d image directories", ErrTooManyPages, lim.MaxIFDs)
		}
		if off < 8 || uint64(off)+2 > uint64(len(data)) {
			return nil, corrupt("IFD offset %d is outside the %d-byte file", off, len(data))
		}
		n := int64(bo.Uint16(data[off:]))
		if n > maxEntries {
			return nil, corrupt("the IFD at %d claims %d entries", off, n)
		}
		end := int64(off) + 2 + 12*n
		if end+4 > int64(len(data)) {
			return nil, corrupt("the IFD at %d runs past the end of the file", off)
		}
		if entryBudget -= 12 * n; entryBudget < 0 {
			return nil, corrupt("the IFDs overlap")
		}
		p := Page{IFD: off, f: f, Orientation: 1}
		p.readEntries(data[off+2 : end])
		p.aspect()
		// SubIFDs (reduced or alternative images) are not read, but count against the bound.
		if p.subIFDs > 0 {
			f.IFDs += int(min(p.subIFDs, uint32(lim.MaxIFDs)))
			if f.IFDs > lim.MaxIFDs {
				return nil, fmt.Errorf("%w: more than %d image directories", ErrTooManyPages, lim.MaxIFDs)
			}
		}
		if !p.reduced {
			if len(f.Pages) == lim.MaxPages {
				return nil, fmt.Errorf("%w: more than %d", ErrTooManyPages, lim.MaxPages)
			}
			p.Number = len(f.Pages) + 1
			f.Pages = append(f.Pages, p)
			if lim.FirstPage {
				break
			}
		}
		off = bo.Uint32(data[end:])
	}
	if len(f.Pages) == 0 {
		return nil, corrupt("no pages")
	}
	return f, nil
}

// Tags read from each IFD (TIFF 6.0, appendix A).
const (
	tagNewSubfileType     = 254
	tagSubfileType        = 255
	tagImageWidth         = 256
	tagImageLength        = 257
	tagBitsPerSample      = 258
	tagCompression        = 259
	tagPhotometric        = 262
	tagFillOrder          = 266
	tagStripOffsets       = 273
	tagOrientation        = 274
	tagSamplesPerPixel    = 277
	tagRowsPerStrip       = 278
	tagStripByteCounts    = 279
	tagXResolution        = 282
	tagYResolution        = 283
	tagPlanarConfig       = 284
	tagResolutionUnit     = 296
	tagT4Options          = 292
	tagT6Options          = 293
	tagPredictor          = 317
	tagColorMap           = 320
	tagTileWidth          = 322
	tagTileLength         = 323
	tagTileOffsets        = 324
	tagTileByteCounts     = 325
	tagSubIFDs            = 330
	tagInkSet             = 332
	tagExtraSamples       = 338
	tagSampleFormat       = 339
	tagJPEGTables         = 347
	tagJPEGProc           = 512
	tagJPEGIFOffset       = 513
	tagJPEGIFByteCount    = 514
	tagYCbCrCoefficients  = 529
	tagYCbCrSubSampling   = 530
	tagReferenceBlackWhit = 532
)

// Field types (TIFF 6.0, section 2) and their sizes.
var typeSize = [...]int64{0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4}

const (
	typeByte     = 1
	typeShort    = 3
	typeLong     = 4
	typeRational = 5
	typeIFD      = 13
)

// entry is one directory entry, kept to be read when the page is planned.
type entry struct {
	typ   uint16
	count uint32
	pos   uint32 // where the entry's 4-byte value field is in the file
}

func (e entry) present() bool { return e.typ != 0 }

// Page is one page of a TIFF: where its directory is, its size, and its directory's entries.
type Page struct {
	Number        int    // 1-based, counting pages only (not thumbnails)
	IFD           uint32 // offset of its IFD in the file
	Width, Height int
	// Orientation is the page's Orientation tag (274), 1 to 8 as in EXIF: how the stored rows
	// and columns map to the page as it is meant to be seen. 1 (rows top to bottom, columns left
	// to right) when the tag is absent or out of range, as libtiff reads it. Decode returns the
	// page as stored; the caller turns it (imaging.Orient).
	Orientation int
	// StretchX and StretchY are how far the page's stored axes are stretched to make its pixels
	// square: a fax at standard resolution (204 × 98 dpi) is shown twice as tall as it is stored,
	// StretchY 204/98. 1 and 1 when the resolutions agree within 10 %, are missing or invalid, or
	// differ more than fourfold (no fax mode does; such a page is read as stored).
	StretchX, StretchY float64

	f       *File
	reduced bool
	subIFDs uint32
	resUnit uint32 // ResolutionUnit: 1 none, 2 inch (the default), 3 centimetre
	// Entries that hold arrays or need checking, read by Plan.
	bitsPerSample, compression, photometric, fillOrder, samplesPerPixel, rowsPerStrip,
	planar, t4, t6, predictor, inkSet, sampleFormat, tileWidth, tileLength, jpegProc,
	jpegIF, jpegIFLen, xres, yres entry
	stripOffsets, stripCounts, tileOffsets, tileCounts, colorMap, extraSamples, jpegTables,
	ycbcrCoeffs, ycbcrSub, refBW entry
}

// UprightSize is the page's size as it is shown: its axes stretched to square pixels
// (StretchX, StretchY), then its Orientation applied (sides swapped for 5 to 8).
func (p *Page) UprightSize() (w, h int) { return p.uprightSize(p.Width, p.Height) }

// ShrunkSize is UprightSize for the page read shrink times smaller (DecodePage): its stored
// size shrunk (rounded up), then stretched and turned.
func (p *Page) ShrunkSize(shrink int) (w, h int) {
	k := max(shrink, 1)
	return p.uprightSize((p.Width+k-1)/k, (p.Height+k-1)/k)
}

// uprightSize is how a w×h image of the page as stored is shown: stretched, then turned.
func (p *Page) uprightSize(w, h int) (int, int) {
	w, h = stretched(w, p.StretchX), stretched(h, p.StretchY)
	if p.Orientation >= 5 {
		return h, w
	}
	return w, h
}

func stretched(n int, f float64) int {
	if f <= 1 {
		return n
	}
	return int(math.Round(float64(n) * f))
}

// DPI is the page's resolution in dots per inch as it is shown (its pixels made square at the
// finer of its two resolutions, see UprightSize); 0 when the page states none in inches or
// centimetres, or states one out of [10, 10 000].
func (p *Page) DPI() float64 {
	if p.xres.count == 0 || p.yres.count == 0 || p.resUnit == 1 {
		return 0
	}
	x, errX := p.rationals(p.xres, 1)
	y, errY := p.rationals(p.yres, 1)
	if errX != nil || errY != nil {
		return 0
	}
	d := max(x[0], y[0])
	if p.StretchX == 1 && p.StretchY == 1 {
		d = x[0] // read as stored: a pixel is 1/x wide
	}
	if p.resUnit == 3 {
		d *= 2.54
	}
	if !(d >= 10 && d <= 10000) {
		return 0
	}
	return d
}

// aspect sets StretchX and StretchY from the page's resolutions (their unit cancels out).
func (p *Page) aspect() {
	p.StretchX, p.StretchY = 1, 1
	if p.xres.count == 0 || p.yres.count == 0 {
		return
	}
	x, errX := p.rationals(p.xres, 1)
	y, errY := p.rationals(p.yres, 1)
	if errX != nil || errY != nil || !(x[0] > 0) || !(y[0] > 0) {
		return
	}
	switch r := x[0] / y[0]; {
	case r >= 1.1 && r <= 4:
		p.StretchY = r
	case r <= 1/1.1 && r >= 0.25:
		p.StretchX = 1 / r
	}
}

func (p *Page) readEntries(dir []byte) {
	bo := p.f.bo
	for i := 0; i+12 <= len(dir); i += 12 {
		e := dir[i:]
		tag, typ, count := bo.Uint16(e), bo.Uint16(e[2:]), bo.Uint32(e[4:])
		if typ == 0 || int(typ) >= len(typeSize) || count == 0 {
			continue // unknown type: TIFF readers skip the entry
		}
		if tag < tagNewSubfileType || tag > tagReferenceBlackWhit {
			continue
		}
		en := entry{typ: typ, count: count, pos: p.IFD + 2 + uint32(i) + 8}
		switch tag {
		case tagNewSubfileType:
			p.reduced = inline(bo, e, typ)&1 != 0
		case tagSubfileType:
			p.reduced = inline(bo, e, typ) == 2
		case tagImageWidth:
			p.Width = int(min(inline(bo, e, typ), 1<<30))
		case tagImageLength:
			p.Height = int(min(inline(bo, e, typ), 1<<30))
		case tagOrientation:
			if o := inline(bo, e, typ); o >= 1 && o <= 8 {
				p.Orientation = int(o)
			}
		case tagResolutionUnit:
			p.resUnit = inline(bo, e, typ)
		case tagXResolution:
			p.xres = en
		case tagYResolution:
			p.yres = en
		case tagSubIFDs:
			p.subIFDs = count
		case tagBitsPerSample:
			p.bitsPerSample = en
		case tagCompression:
			p.compression = en
		case tagPhotometric:
			p.photometric = en
		case tagFillOrder:
			p.fillOrder = en
		case tagSamplesPerPixel:
			p.samplesPerPixel = en
		case tagRowsPerStrip:
			p.rowsPerStrip = en
		case tagPlanarConfig:
			p.planar = en
		case tagT4Options:
			p.t4 = en
		case tagT6Options:
			p.t6 = en
		case tagPredictor:
			p.predictor = en
		case tagInkSet:
			p.inkSet = en
		case tagSampleFormat:
			p.sampleFormat = en
		case tagTileWidth:
			p.tileWidth = en
		case tagTileLength:
			p.tileLength = en
		case tagJPEGProc:
			p.jpegProc = en
		case tagJPEGIFOffset:
			p.jpegIF = en
		case tagJPEGIFByteCount:
			p.jpegIFLen = en
		case tagStripOffsets:
			p.stripOffsets = en
		case tagStripByteCounts:
			p.stripCounts = en
		case tagTileOffsets:
			p.tileOffsets = en
		case tagTileByteCounts:
			p.tileCounts = en
		case tagColorMap:
			p.colorMap = en
		case tagExtraSamples:
			p.extraSamples = en
		case tagJPEGTables:
			p.jpegTables = en
		case tagYCbCrCoefficients:
			p.ycbcrCoeffs = en
		case tagYCbCrSubSampling:
			p.ycbcrSub = en
		case tagReferenceBlackWhit:
			p.refBW = en
		}
	}
}

// inline is the first value of an entry whose value fits in its value field: the sizes and
// subfile types the walk reads (SHORT or LONG, as the specification allows; 0 otherwise).
func inline(bo binary.ByteOrder, e []byte, typ uint16) uint32 {
	switch typ {
	case typeShort:
		return uint32(bo.Uint16(e[8:]))
	case typeLong:
		return bo.Uint32(e[8:])
	}
	return 0
}

// bytes returns where an entry's values are in the file, checked against its length.
func (p *Page) bytes(e entry) ([]byte, error) {
	size := typeSize[e.typ] * int64(e.count)
	start := int64(e.pos)
	if size > 4 {
		start = int64(p.f.bo.Uint32(p.f.data[e.pos:]))
	}
	if start+size > int64(len(p.f.data)) {
		return nil, corrupt("a directory entry's values lie outside the file")
	}
	return p.f.data[start : start+size], nil
}

// value returns an entry's i-th value as an unsigned integer (BYTE, SHORT, LONG or IFD; libtiff
// accepts any of them where the specification names one).
func (p *Page) value(e entry, i int) (uint32, error) {
	b, err := p.bytes(e)
	if err != nil {
		return 0, err
	}
	switch e.typ {
	case typeByte, 7:
		return uint32(b[i]), nil
	case typeShort:
		return uint32(p.f.bo.Uint16(b[2*i:])), nil
	case typeLong, typeIFD:
		return p.f.bo.Uint32(b[4*i:]), nil
	}
	return 0, corrupt("a directory entry has type %d where an integer belongs", e.typ)
}

// scalar is an entry's first value (see value).
func (p *Page) scalar(e entry) (uint32, error) {
	return p.value(e, 0)
}

// scalarOr is an entry's first value, or def when the entry is absent.
func (p *Page) scalarOr(e entry, def uint32) (uint32, error) {
	if !e.present() {
		return def, nil
	}
	return p.scalar(e)
}

// ints reads an entry's values as unsigned integers, at most n of them (n ≥ e.count is the usual
// case; a caller that needs exactly n checks the count).
func (p *Page) ints(e entry, n int) ([]uint32, error) {
	b, err := p.bytes(e)
	if err != nil {
		return nil, err
	}
	n = min(n, int(e.count))
	out := make([]uint32, n)
	for i := range out {
		switch e.typ {
		case typeByte, 7:
			out[i] = uint32(b[i])
		case typeShort:
			out[i] = uint32(p.f.bo.Uint16(b[2*i:]))
		case typeLong, typeIFD:
			out[i] = p.f.bo.Uint32(b[4*i:])
		default:
			return nil, corrupt("a directory entry has type %d where integers belong", e.typ)
		}
	}
	return out, nil
}

// rationals reads an entry of RATIONAL values as floats (integer types too: some writers store
// ReferenceBlackWhite as LONGs, and libtiff converts them).
func (p *Page) rationals(e entry, n int) ([]float64, error) {
	if int(e.count) < n {
		return nil, corrupt("a directory entry has %d values where %d rationals belong", e.count, n)
	}
	if e.typ != typeRational {
		v, err := p.ints(e, n)
		if err != nil {
			return nil, err
		}
		out := make([]float64, n)
		for i, x := range v {
			out[i] = float64(x)
		}
		return out, nil
	}
	b, err := p.bytes(e)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		num, den := p.f.bo.Uint32(b[8*i:]), p.f.bo.Uint32(b[8*i+4:])
		if den == 0 {
			return nil, corrupt("a rational with denominator 0")
		}
		out[i] = float64(num) / float64(den)
	}
	return out, nil
}

// intArray is the first values of a directory entry of integers (BYTE, SHORT, LONG or IFD), read
// in place: the strip or tile offsets and byte counts a decode goes through one by one.
type intArray struct {
	b   []byte
	typ uint16
	bo  binary.ByteOrder
	n   int
}

// array returns the first n values of e (all of them when it has fewer), checked against the
// file's length.
func (p *Page) array(e entry, n int64) (intArray, error) {
	switch e.typ {
	case typeByte, 7, typeShort, typeLong, typeIFD:
	default:
		return intArray{}, corrupt("a directory entry has type %d where integers belong", e.typ)
	}
	size := typeSize[e.typ]
	start := int64(e.pos)
	if size*int64(e.count) > 4 {
		start = int64(p.f.bo.Uint32(p.f.data[e.pos:]))
	}
	k := min(int64(e.count), n)
	if start+size*k > int64(len(p.f.data)) {
		return intArray{}, corrupt("a directory entry's values lie outside the file")
	}
	return intArray{b: p.f.data[start : start+size*k], typ: e.typ, bo: p.f.bo, n: int(k)}, nil
}

// at is value i (i < n).
func (a intArray) at(i int) uint32 {
	switch a.typ {
	case typeByte, 7:
		return uint32(a.b[i])
	case typeShort:
		return uint32(a.bo.Uint16(a.b[2*i:]))
	}
	return a.bo.Uint32(a.b[4*i:])
}
