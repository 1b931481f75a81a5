package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"

	// Decoders are registered for their side effect on image.Decode; the set is deliberately the
	// formats people actually upload for OCR (photos, scans, screenshots). TIFF is read by
	// service/tiffdec, which prices its decode exactly and reads what scanners and fax servers
	// write.
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/webp"

	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/jpegdec"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/tiffdec"
	"github.com/ocrgate/ocrgate/service/work"
)

// Limits bounds the images Decode accepts. The check uses the size in the file's header, before any
// pixel memory is allocated, so a tiny file that claims to be 60000×60000 costs nothing. Zero fields
// mean no limit.
type Limits struct {
	MaxPixels int // refuse images with more pixels than this (0 = no limit); e.g. 50_000_000
	MaxSide   int // refuse images with a side longer than this (0 = no limit); e.g. 10_000
	// MaxScans refuses progressive JPEGs with more scans than this (0 = no limit), counted
	// before decoding: each scan is a pass over all of the image's coefficients that image/jpeg
	// cannot interrupt, and encoders write about 10.
	MaxScans int
	// HalfPixels decodes a baseline JPEG of at least this many pixels at half its size, each
	// pixel the mean of 2×2 of the file's (0 = never; see jpegdec.DecodeHalf). A 600-dpi page's
	// text is 60–100 px tall, twice what detection and recognition read, so the page is shrunk
	// anyway. Decoded at half size, its transform costs a third, and its memory and the pixels
	// the detector's resize and the crops read a quarter.
	HalfPixels int
}

// The errors Decode wraps. They are distinct because the HTTP layer answers them differently: the
// client sent something that is not an image we read (415), a broken image (422), or one too large
// to process (413). Match them with errors.Is; the wrapping error carries a message for people.
var (
	// ErrUnsupportedFormat means the bytes are not one of the formats Decode reads.
	ErrUnsupportedFormat = errors.New("unsupported image format")
	// ErrUndecodable means the bytes look like a supported format but are corrupt or truncated.
	ErrUndecodable = errors.New("image cannot be decoded")
	// ErrTooLarge means the image header declares more pixels, or a longer side, than Limits allows.
	ErrTooLarge = errors.New("image too large")
)

// Decoded is an image ready for the pipeline together with what the caller reports about it.
type Decoded struct {
	Image         image.Image // upright (EXIF orientation applied); bounds start at (0, 0)
	Format        string      // "jpeg", "png", "gif", "bmp", "tiff", "webp"
	Width, Height int         // of Image (after orientation)
	// shrink is how many of the file's pixels one pixel of Image spans along each side: 2 for a
	// JPEG decoded at half size (Limits.HalfPixels), else 1 (0, in a Decoded built elsewhere,
	// means 1 too); fullW×fullH is then the upright size in the file's pixels. Boxes found on
	// Image are in the file's pixels once multiplied by Factor; FullSize gives the size they
	// refer to.
	shrink       int
	fullW, fullH int
	// src and hdr are the file and its checked header when it was decoded shrunk, for Whole;
	// lease is the admission it was decoded under, which Whole's decode holds too.
	src   []byte
	hdr   Header
	lease Lease
	// preview, when not nil, is the image at one eighth of its full size (FullSize; a quarter of
	// Image when it was decoded at half size),
	// upright too: baseline JPEGs have it for free (the decoder's block means). Offered through
	// Downscaled, so callers ask for a size, not for a codec's by-product.
	preview image.Image
	// Damaged, when not empty, says what of the image could not be decoded (a damaged TIFF
	// strip, one cut short, tiles its file does not list: see tiffdec.DecodePage), for people.
	// Those pixels are white; the answer carries it as a warning.
	Damaged string
}

// Shrunk is img, an image read shrink times smaller along each side than the width × height
// image it stands for (a TIFF page too large to read whole, see Header.Smaller), as the pipeline
// takes it: boxes found on it are scaled back to width × height, which the answer reports.
func Shrunk(img image.Image, format string, shrink, width, height int) Decoded {
	b := img.Bounds()
	d := Decoded{Image: img, Format: format, Width: b.Dx(), Height: b.Dy()}
	if shrink > 1 {
		d.shrink, d.fullW, d.fullH = shrink, width, height
	}
	return d
}

// Factor is how many of the file's pixels one pixel of Image spans along each side: 2 for a JPEG
// decoded at half size (Limits.HalfPixels), the shrink of a TIFF page read smaller (see
// Header.Smaller, Shrunk), otherwise 1.
func (d Decoded) Factor() int { return max(1, d.shrink) }

// FullSize is the upright image's size in the file's pixels: Width × Height unless the image was
// decoded shrunk. Box coordinates and the size a response reports refer to it.
func (d Decoded) FullSize() (w, h int) {
	if d.shrink > 1 {
		return d.fullW, d.fullH
	}
	return d.Width, d.Height
}

// Whole returns the image decoded again at the file's full size when d was decoded shrunk
// (Factor > 1), and d itself otherwise. A caller that finds the print of a shrunk page too small
// to read from a quarter of its pixels asks for it. Format stays d's; like DecodeContext it gives
// up when ctx ends, and it holds the lease d was decoded under. The memory admitted for the file
// already covers the whole decode (see decodeChecked), but not both at once: the caller drops d
// before it uses the result.
func (d Decoded) Whole(ctx context.Context) (Decoded, error) {
	if d.shrink <= 1 || d.src == nil {
		return d, nil
	}
	h := d.hdr
	h.Half = false
	w, err := decodeAsync(ctx, d.src, h, d.lease)
	if err != nil {
		return Decoded{}, err
	}
	w.Format = d.Format
	return w, nil
}

// Downscaled returns a reduced view of the image, upright like Image, whose long side is at least
// minSide pixels — when one came free with decoding (today: a baseline JPEG's 1/8 preview, made of
// its 8×8 block means, which is what area-averaging the image down would compute). ok is false
// when there is none, or none that large; the caller then reads Image. A caller that needs a
// small version of a huge image uses the view instead of reading every pixel.
func (d Decoded) Downscaled(minSide int) (view image.Image, ok bool) {
	if d.preview == nil {
		return nil, false
	}
	b := d.preview.Bounds()
	if max(b.Dx(), b.Dy()) < minSide || (b.Dx() >= d.Width && b.Dy() >= d.Height) {
		return nil, false
	}
	return d.preview, true
}

// supportedFormats are the names the registered decoders report. Another package in the binary
// could register more decoders; they are refused so the accepted set stays what we test.
var supportedFormats = map[string]bool{
	"jpeg": true, "png": true, "gif": true, "bmp": true, "tiff": true, "webp": true,
}

// Decode reads an image from its bytes, recognizing the format by content (never by a file name,
// which uploads often get wrong). It checks the header against lim before decoding (see Inspect),
// holds the decoders to that header, recovers from panics in third-party decoders, takes the
// first frame of a GIF and rotates JPEGs upright according to their EXIF orientation. Errors wrap
// ErrUnsupportedFormat, ErrUndecodable or ErrTooLarge.
func Decode(data []byte, lim Limits) (Decoded, error) {
	h, err := Inspect(data, lim)
	if err != nil {
		return Decoded{}, err
	}
	return decodeChecked(context.Background(), data, h)
}

// Lease is the admission a decode's memory is counted under (the service's is
// admission.Lease). Hold keeps it until done is called, so that memory still in use by a decode
// the caller has abandoned stays counted until the decode really ends.
type Lease interface {
	Hold() (done func())
}

// DecodeContext is Decode that gives up when ctx ends. Decoding itself cannot be interrupted (a
// 50-megapixel progressive JPEG takes seconds inside image/jpeg), so it runs on its own goroutine
// and DecodeContext returns ctx.Err() at once when ctx ends first; the goroutine finishes on its
// own and its result is dropped. Its memory is still in use until then, so it holds lease, the
// admission the decode runs under, until it really ends; a nil lease holds nothing. The result
// keeps lease for Whole.
func DecodeContext(ctx context.Context, data []byte, lim Limits, lease Lease) (Decoded, error) {
	h, err := InspectContext(ctx, data, lim)
	if err != nil {
		return Decoded{}, err
	}
	return decodeAsync(ctx, data, h, lease)
}

// DecodeHeader is DecodeContext for data whose header InspectContext has read: the header is not
// read again (a TIFF's directories are walked once a request), and the decode is held to it.
func DecodeHeader(ctx context.Context, data []byte, h Header, lease Lease) (Decoded, error) {
	return decodeAsync(ctx, data, h, lease)
}

// decodeAsync is DecodeContext after Inspect. A context that has already ended starts nothing:
// the select below would otherwise pick at random between it and a decode fast enough to be done.
func decodeAsync(ctx context.Context, data []byte, h Header, lease Lease) (Decoded, error) {
	if err := ctx.Err(); err != nil {
		return Decoded{}, err
	}
	type result struct {
		dec Decoded
		err error
	}
	done := func() {}
	if lease != nil {
		done = lease.Hold()
	}
	out := make(chan result, 1) // buffered: an abandoned decoder must not block on its send
	go func() {
		// The decode is a unit of work of its own (it runs on its own goroutine, which no
		// caller's recovery reaches): a panic in it fails this image alone.
		// Its CPU time is charged to the request's budget (cpubudget.Run), until it really ends:
		// a decoder that looks at its context stops when the budget is spent.
		var dec Decoded
		err := work.Do(ctx, "image decode", func() (err error) {
			_, err = cpubudget.Run(ctx, func(ctx context.Context) (err error) {
				dec, err = decodeChecked(ctx, data, h)
				return err
			})
			return err
		})
		if err == nil && h.scratchBytes() >= memlimit.ReleaseScratch {
			releaseToOS()
		}
		dec.lease = lease
		// The decode has ended: its working memory is gone, and what it made is the caller's
		// (covered by the caller's own admission) or garbage. Released before the result is
		// handed over, so that a caller that has it finds the hold already given back.
		done()
		out <- result{dec, err}
	}()
	select {
	case r := <-out:
		return r.dec, r.err
	case <-ctx.Done():
		return Decoded{}, ctx.Err()
	}
}

// releaseToOS is memlimit.Release, a variable for tests. A decode whose scratch (see
// Header.scratchBytes) reaches memlimit.ReleaseScratch hands its freed memory back before the image
// is returned.
var releaseToOS = memlimit.Release

// decodeChecked decodes an image whose header Inspect has checked, refusing pixels of any other
// size than the header's before anything is built on them. ctx reaches the decoders that look at
// it (TIFF's, which also charges ctx's CPU budget).
//
// A panic in a third-party decoder (the standard library's and x/image's, which hostile files
// have made panic before) means the file could not be decoded: it is reported (see work) and
// answered as ErrUndecodable. A panic in ocrgate's own decoders and transforms is a bug, and fails
// the unit of work that called this.
func decodeChecked(ctx context.Context, data []byte, h Header) (Decoded, error) {
	cfg := image.Config{Width: h.Width, Height: h.Height}
	var img, preview image.Image
	// A file jpegdec declines is decoded by image/jpeg at full size, which its admitted cost
	// (Header.PixelBytes) already covers.
	shrink := 1
	var damaged string
	err := func() (err error) {
		if h.Format == "jpeg" {
			// Baseline JPEG (scans, camera photos) takes the parallel decoder; anything it
			// declines, corrupt data included, goes to image/jpeg for the result or the error. A
			// frame of another size than the header's is refused outright: handing it to
			// image/jpeg would decode what nobody checked.
			decode := jpegdec.DecodeSized
			if h.Half {
				decode = jpegdec.DecodeHalf
			}
			img, preview, err = decode(data, h.Width, h.Height)
			switch {
			case err == nil:
				if h.Half {
					shrink = 2
				}
				if h.Orientation > 1 {
					preview = Orient(preview, h.Orientation)
				}
				return nil
			case !errors.Is(err, jpegdec.ErrUnsupported):
				return fmt.Errorf("%w: %v", ErrUndecodable, err)
			}
		}
		if h.Format == "tiff" {
			var dec tiffdec.Decoded
			if dec, err = decodeTIFF(ctx, data, h); err != nil {
				return err
			}
			img, shrink, damaged = dec.Image, dec.Shrink, DamageWarning(dec.Damage)
			return nil
		}
		err = safely(ctx, func() (err error) {
			img, _, err = image.Decode(bytes.NewReader(data))
			return err
		})
		switch {
		case errors.Is(err, ErrUndecodable):
			return err
		case err != nil:
			return fmt.Errorf("%w: corrupt %s data: %v", ErrUndecodable, formatName(h.Format), err)
		}
		return nil
	}()
	if err != nil {
		return Decoded{}, err
	}
	err = func() error {
		img = toOrigin(img, cfg)
		if b := img.Bounds(); b.Dx() != (h.Width+shrink-1)/shrink || b.Dy() != (h.Height+shrink-1)/shrink {
			return fmt.Errorf("%w: the %s data is %d×%d px, its header said %d×%d", ErrUndecodable,
				formatName(h.Format), b.Dx()*shrink, b.Dy()*shrink, h.Width, h.Height)
		}
		if h.Orientation > 1 {
			img = Orient(img, h.Orientation) // its workers hand their panics back here
		}
		if h.ShownW > 0 {
			w, ht := h.ShownW, h.ShownH
			if h.Shrink > 1 {
				w, ht = h.ReadSize()
			}
			img = Stretch(img, w, ht) // square pixels (a standard-resolution fax)
		}
		return nil
	}()
	if err != nil {
		return Decoded{}, err
	}
	b := img.Bounds()
	dec := Decoded{Image: img, Format: h.Format, Width: b.Dx(), Height: b.Dy(), shrink: shrink, preview: preview, Damaged: damaged}
	if shrink > 1 {
		dec.fullW, dec.fullH = h.UprightSize()
		if h.Half {
			// Whole can decode it again at full size, within what was admitted for it.
			dec.src, dec.hdr = data, h
		}
	}
	return dec, nil
}

// checkSize applies Limits to a width and height, refusing empty images as corrupt.
func checkSize(w, h int, lim Limits) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w: the image claims to be %d×%d px", ErrUndecodable, w, h)
	}
	if lim.MaxSide > 0 && (w > lim.MaxSide || h > lim.MaxSide) {
		return fmt.Errorf("%w: image is %d×%d px; the limit is %d px a side", ErrTooLarge, w, h, lim.MaxSide)
	}
	// w*h may overflow int on 32-bit platforms; compare by division instead.
	if lim.MaxPixels > 0 && w > lim.MaxPixels/h {
		return fmt.Errorf("%w: image is %d×%d px (%.1f Mpx); the limit is %.1f Mpx",
			ErrTooLarge, w, h, float64(w)*float64(h)/1e6, float64(lim.MaxPixels)/1e6)
	}
	return nil
}

// safely runs a third-party decoder and turns its panic into ErrUndecodable: the standard
// library's and x/image's decoders have panicked on fuzzed input, and a file they cannot decode is
// the caller's problem, answered 422. The panic itself is reported to ctx's reporter (logged with
// its stack, counted), and its words, which may quote the file, stay out of the error.
func safely(ctx context.Context, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			_ = work.Report(ctx, "image decoder", v) // reported; the caller answers ErrUndecodable
			err = fmt.Errorf("%w: the decoder failed on this file", ErrUndecodable)
		}
	}()
	return fn()
}

// toOrigin makes the image's bounds start at (0, 0), which the rest of the pipeline and the API's
// box coordinates assume. Only GIF produces anything else: its first frame may be a rectangle inside
// the logical screen, and it is placed at its position on a transparent (so: white) screen.
func toOrigin(img image.Image, cfg image.Config) image.Image {
	b := img.Bounds()
	if b.Min == (image.Point{}) {
		return img
	}
	canvas := image.Rect(0, 0, cfg.Width, cfg.Height)
	if !b.In(canvas) {
		canvas = image.Rect(0, 0, b.Dx(), b.Dy())
		b = canvas
	}
	out := image.NewNRGBA(canvas)
	draw.Draw(out, b, img, img.Bounds().Min, draw.Src)
	return out
}

func formatName(format string) string {
	if format == "" {
		return "image"
	}
	return format
}

// Turned returns d with its image turned clockwise by degrees (see Turn): a page found lying on
// its side or upside down, set upright to be read again. Sizes follow the turn; the free
// preview and the file (for Whole) are dropped, as they are not turned, so a turned page is read
// at the resolution it was decoded at.
func (d Decoded) Turned(degrees int) Decoded {
	img := Turn(d.Image, degrees)
	if img == d.Image {
		return d
	}
	t := d
	t.Image = img
	b := img.Bounds()
	t.Width, t.Height = b.Dx(), b.Dy()
	if degrees != 180 {
		t.fullW, t.fullH = d.fullH, d.fullW
	}
	t.preview, t.src = nil, nil
	return t
}
