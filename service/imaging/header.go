package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"time"

	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/jpegdec"
	"github.com/ocrgate/ocrgate/service/tiffdec"
)

// Header is what an image's header says about it, read and checked against Limits before any
// pixel is decoded: its size, and what decoding it will hold in memory. Inspect fills it; the
// decoders are then held to it (a file whose pixels turn out another size is refused).
type Header struct {
	Format        string // "jpeg", "png", "gif", "bmp", "tiff", "webp"
	Width, Height int    // as stored in the file, before any orientation
	Orientation   int    // 1 (upright as stored) to 8: a JPEG's EXIF orientation, a TIFF's tag
	// ShownW × ShownH, when not 0, is the size a TIFF page is shown at, its pixels stretched
	// square (a standard-resolution fax) and its orientation applied (tiffdec.Page.UprightSize).
	ShownW, ShownH int
	// PixelBytes is the memory of the decoded image: its pixel type (8 or 16 bits, alpha, chroma
	// subsampling) times its size, padding to whole JPEG MCUs and the free preview included.
	PixelBytes int64
	// WorkBytes is what the decoder holds beside the decoded image while it runs: the
	// coefficients of a progressive JPEG (4 bytes a sample until the last scan), the planes an
	// RGB or CMYK JPEG is converted from, the passes of an interlaced PNG, a TIFF's strip buffer,
	// a lossless WebP's ARGB pixels, a GIF frame's copy onto its screen.
	WorkBytes int64
	// RotatedBytes is the upright copy an orientation makes (RGBA, or gray for gray), with a
	// TIFF's square-pixel copy; 0 when there is none.
	RotatedBytes int64
	Progressive  bool // a progressive JPEG
	Scans        int  // a JPEG's scans
	// Half: a baseline JPEG of at least Limits.HalfPixels, to be decoded at half size. The memory
	// figures above stay those of the full size: a file the fast decoder declines after all is
	// decoded whole by image/jpeg.
	Half bool
	// CPU is what decoding costs in CPU time at most, where the decoder prices it (a TIFF page:
	// tiffdec.Plan.CPU, its upright copies included); 0 where it does not. The decode charges it
	// to the request's CPU budget before it starts (see cpubudget).
	CPU time.Duration
	// Shrink, when more than 1, is how many times smaller along each side a TIFF page is read
	// (see Smaller): the memory and CPU figures above are then the smaller page's, and ReadSize
	// is its size. Boxes stay in the image's own pixels (UprightSize).
	Shrink int
	// readW × readH is the upright size of a TIFF page read shrunk.
	readW, readH int
	// tiff is the page chain InspectContext walked, its first page the image: the decode reads
	// it instead of walking the file's directories again.
	tiff *tiffdec.File
}

// ReadSize returns the upright size of the pixels the pipeline reads: UprightSize, or for a
// TIFF page read shrunk, the smaller page's. What the models hold is priced at this size.
func (h Header) ReadSize() (w, ht int) {
	if h.Shrink > 1 {
		return h.readW, h.readH
	}
	return h.UprightSize()
}

// MaxShrink is the most times smaller along each side Smaller reads a page: a 600-dpi scan read
// at 150 dpi still holds print of 8 pt and more at the height the recognizer reads.
const MaxShrink = 4

// Smaller returns the header of the image read shrink times smaller along each side (2 to
// MaxShrink), where its decoder can read it so, folding its pixels shrink by shrink as it decodes
// (a TIFF page in one plane: see tiffdec.Page.PlanAt), and ok false otherwise. A page too large
// to read whole within what one request may hold is read so, as a PDF page too large is drawn
// smaller: a 600-dpi scan read at half its size is a 300-dpi one, a quarter of its memory, and
// the full-size page never exists.
func (h Header) Smaller(shrink int) (Header, bool) {
	if h.tiff == nil || h.Shrink > 1 || shrink < 2 || shrink > MaxShrink {
		return Header{}, false
	}
	p := &h.tiff.Pages[0]
	plan, err := p.PlanAt(shrink)
	if err != nil {
		return Header{}, false
	}
	s := h
	s.PixelBytes, s.WorkBytes, s.RotatedBytes, s.CPU = plan.PixelBytes, plan.WorkBytes, plan.UprightBytes, plan.CPU
	s.Shrink = shrink
	s.readW, s.readH = p.ShrunkSize(shrink)
	return s, true
}

// UprightSize returns the image's size as it is shown: after its orientation, and for a TIFF with
// unequal resolutions, in square pixels. Boxes and the size an answer reports refer to it.
func (h Header) UprightSize() (w, ht int) {
	if h.ShownW > 0 {
		return h.ShownW, h.ShownH
	}
	if h.Orientation >= 5 {
		return h.Height, h.Width
	}
	return h.Width, h.Height
}

// DecodeBytes is the most memory decoding the image holds at once: the decoded pixels with the
// decoder's working memory, or with the upright copy while it is made.
func (h Header) DecodeBytes() int64 {
	return h.PixelBytes + max(h.WorkBytes, h.RotatedBytes)
}

// scratchBytes is what decoding leaves as garbage once the upright image is made: the decoder's
// working memory, and the decoded original when an EXIF orientation made an upright copy.
func (h Header) scratchBytes() int64 {
	if h.RotatedBytes > 0 {
		return h.WorkBytes + h.PixelBytes
	}
	return h.WorkBytes
}

// ResidentBytes is the memory of the upright image the rest of the pipeline reads, for as long
// as it runs: the rotated copy when there is one (the decoded original is garbage by then),
// otherwise the decoded image.
func (h Header) ResidentBytes() int64 {
	if h.RotatedBytes > 0 {
		return h.RotatedBytes
	}
	return h.PixelBytes
}

// ErrTooManyScans means a progressive JPEG has more scans than Limits.MaxScans. It wraps
// ErrUndecodable: no encoder writes such a file, and decoding it costs a pass over every
// coefficient per scan (a few kilobytes of tiny scans can ask for minutes of CPU).
var ErrTooManyScans = fmt.Errorf("%w: too many scans", ErrUndecodable)

// Inspect is InspectContext for a caller without a request: tools and tests.
func Inspect(data []byte, lim Limits) (Header, error) {
	return InspectContext(context.Background(), data, lim)
}

// InspectContext reads an image's header, checks it against lim and returns what decoding it will
// cost, without allocating pixel memory. What it learns travels in the Header to the decode (see
// DecodeHeader), which does not read the header again: a TIFF's directories are walked here, once,
// within ctx. Its errors are those of Decode: ErrUnsupportedFormat, ErrUndecodable
// (ErrTooManyScans among them) or ErrTooLarge, or ctx's.
func InspectContext(ctx context.Context, data []byte, lim Limits) (Header, error) {
	if len(data) == 0 {
		return Header{}, fmt.Errorf("%w: the body is empty", ErrUnsupportedFormat)
	}
	if tiffdec.IsTIFF(data) {
		return inspectTIFF(ctx, data, lim)
	}
	var (
		cfg    image.Config
		format string
	)
	err := safely(context.TODO(), func() (err error) {
		cfg, format, err = image.DecodeConfig(bytes.NewReader(data))
		return err
	})
	switch {
	case errors.Is(err, ErrUndecodable):
		return Header{}, err
	case errors.Is(err, image.ErrFormat):
		return Header{}, fmt.Errorf("%w: expected JPEG, PNG, GIF, BMP, TIFF or WebP data", ErrUnsupportedFormat)
	case err != nil:
		return Header{}, fmt.Errorf("%w: bad %s header: %v", ErrUndecodable, formatName(format), err)
	case !supportedFormats[format]:
		return Header{}, fmt.Errorf("%w: %s images are not accepted", ErrUnsupportedFormat, format)
	}
	if err := checkSize(cfg.Width, cfg.Height, lim); err != nil {
		return Header{}, err
	}
	h := Header{Format: format, Width: cfg.Width, Height: cfg.Height, Orientation: 1}
	px := int64(cfg.Width) * int64(cfg.Height)
	switch format {
	case "jpeg":
		if err := h.jpeg(data, lim); err != nil {
			return Header{}, err
		}
	case "png":
		h.PixelBytes = px * bytesPerPixel(cfg.ColorModel)
		if len(data) > 28 && data[28] == 1 {
			h.WorkBytes = h.PixelBytes // Adam7: seven pass images, then the whole one
		}
	case "gif":
		// The first frame (one byte a pixel), then that frame on its logical screen when it does
		// not cover it (NRGBA, see toOrigin).
		h.PixelBytes, h.WorkBytes = px, 4*px
	case "webp":
		switch cfg.ColorModel {
		case color.YCbCrModel: // lossy: 4:2:0
			h.PixelBytes = px * 3 / 2
		case color.NYCbCrAModel: // lossy with an alpha plane
			h.PixelBytes = px * 5 / 2
		default: // lossless: decoded as ARGB words, then converted to NRGBA
			h.PixelBytes, h.WorkBytes = 4*px, 4*px
		}
	default: // bmp
		h.PixelBytes = px * bytesPerPixel(cfg.ColorModel)
	}
	return h, nil
}

// jpeg fills in what decoding a JPEG costs, from its marker segments (jpegdec.Inspect reads them
// exactly as image/jpeg does, so they describe the frame DecodeConfig reported).
func (h *Header) jpeg(data []byte, lim Limits) error {
	info, err := jpegdec.Inspect(data)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUndecodable, err)
	}
	if info.Width != h.Width || info.Height != h.Height {
		return fmt.Errorf("%w: the frame is %d×%d, the header said %d×%d", ErrUndecodable, info.Width, info.Height, h.Width, h.Height)
	}
	h.Progressive, h.Scans = info.Progressive, info.Scans
	switch {
	case info.Progressive && lim.MaxScans > 0 && info.Scans > lim.MaxScans:
		return fmt.Errorf("%w: the progressive JPEG has %d scans; at most %d are accepted (encoders write about 10)",
			ErrTooManyScans, info.Scans, lim.MaxScans)
	case info.Sequential && info.Scans > info.Components:
		// ITU T.81 codes each component of a sequential image in exactly one scan; more scans
		// would each be a full decoding pass.
		return fmt.Errorf("%w: the sequential JPEG has %d scans for %d components", ErrTooManyScans, info.Scans, info.Components)
	}
	// One byte a sample for every block of every component (whole MCUs, as both decoders
	// allocate them), plus jpegdec's preview: one byte a block.
	blocks := info.Blocks()
	h.PixelBytes = 64*blocks + blocks
	px := int64(info.Width) * int64(info.Height)
	if info.Components == 4 || info.RGB() {
		// image/jpeg decodes the planes, then converts them to RGBA or CMYK.
		h.PixelBytes, h.WorkBytes = 4*px, 64*blocks
	}
	if info.Progressive {
		h.WorkBytes += 256 * blocks // a 64-entry int32 block of coefficients per block
	}
	h.Half = info.Sequential && !info.Progressive && lim.HalfPixels > 0 && px >= int64(lim.HalfPixels)
	h.Orientation = jpegOrientation(data)
	if h.Orientation > 1 {
		h.RotatedBytes = 4 * px // orient writes RGBA
		if info.Components == 1 {
			h.RotatedBytes = px // or stays gray
		}
	}
	return nil
}

// bytesPerPixel is the size of one pixel of the image type a decoder returns for model m.
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 4 // RGBA, NRGBA, CMYK and anything else that fits in 32 bits
}

// inspectTIFF reads the first page of a TIFF (a multi-page TIFF sent as an image is read as its
// first page; the document reader reads all of them) and prices its decode exactly (see
// tiffdec.Page.Plan): the decoded page, one strip or tile at its real bit depth, the
// decompressor's state, and the CPU time. The walk stops at the first page: a few IFDs at most.
// The walked chain travels in the Header, for the decode.
func inspectTIFF(ctx context.Context, data []byte, lim Limits) (Header, error) {
	f, err := tiffdec.Open(ctx, data, tiffdec.Limits{MaxPages: 1, FirstPage: true})
	if err != nil {
		if ctx.Err() != nil {
			return Header{}, ctx.Err()
		}
		return Header{}, tiffError(err)
	}
	p := &f.Pages[0]
	if err := checkSize(p.Width, p.Height, lim); err != nil {
		return Header{}, err
	}
	plan, err := p.Plan()
	if err != nil {
		return Header{}, tiffError(err)
	}
	h := Header{Format: "tiff", Width: p.Width, Height: p.Height, Orientation: p.Orientation,
		PixelBytes: plan.PixelBytes, WorkBytes: plan.WorkBytes, RotatedBytes: plan.UprightBytes,
		CPU: plan.CPU, tiff: f}
	if p.StretchX > 1 || p.StretchY > 1 {
		h.ShownW, h.ShownH = p.UprightSize()
		if err := checkSize(h.ShownW, h.ShownH, lim); err != nil {
			return Header{}, err
		}
	}
	return h, nil
}

// tiffError maps the TIFF reader's errors to Decode's, keeping the reader's error (a
// *tiffdec.PageError says which page and why) in the chain.
func tiffError(err error) error {
	switch {
	case errors.Is(err, tiffdec.ErrUnsupported):
		return fmt.Errorf("%w: %w", ErrUnsupportedFormat, err)
	case errors.Is(err, tiffdec.ErrFormat):
		return fmt.Errorf("%w: %w", ErrUnsupportedFormat, err)
	}
	return fmt.Errorf("%w: %w", ErrUndecodable, err)
}

// decodeTIFF decodes the first page of a TIFF that inspectTIFF checked, from the page chain it
// walked (h carries it; a Header made elsewhere has the file walked again), h.Shrink times
// smaller when Smaller made h, reading what it can of a damaged page (its Damage says what it
// lost). The decode is charged to ctx's CPU budget: its estimate before it starts, the CPU it uses
// as it runs, and it stops when the budget is spent or ctx ends (a *cpubudget.Error, or ctx's
// error, passes through).
func decodeTIFF(ctx context.Context, data []byte, h Header) (tiffdec.Decoded, error) {
	f := h.tiff
	if f == nil || !sameBytes(f.Data(), data) {
		var err error
		if f, err = tiffdec.Open(ctx, data, tiffdec.Limits{MaxPages: 1, FirstPage: true}); err != nil {
			if ctx.Err() != nil {
				return tiffdec.Decoded{}, ctx.Err()
			}
			return tiffdec.Decoded{}, tiffError(err)
		}
	}
	if err := cpubudget.From(ctx).Plan(h.CPU); err != nil {
		return tiffdec.Decoded{}, fmt.Errorf("decoding the TIFF: %w", err)
	}
	var dec tiffdec.Decoded
	_, err := cpubudget.Run(ctx, func(ctx context.Context) (err error) {
		dec, err = f.DecodePage(ctx, &f.Pages[0], max(h.Shrink, 1))
		return err
	})
	switch {
	case errors.Is(err, cpubudget.ErrExceeded):
		return tiffdec.Decoded{}, fmt.Errorf("decoding the TIFF: %w", err)
	case ctx.Err() != nil:
		return tiffdec.Decoded{}, ctx.Err()
	case err != nil:
		return tiffdec.Decoded{}, tiffError(err)
	}
	return dec, nil
}

// DamageWarning is what an answer says of a TIFF page decoded in part (see
// tiffdec.DecodePage): what was lost, and why.
func DamageWarning(d *tiffdec.Damage) string {
	if d == nil {
		return ""
	}
	return "the image is damaged: " + d.String()
}

// sameBytes reports whether a and b are the same bytes in memory (not merely equal ones).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
