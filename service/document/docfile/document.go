// Package docfile reads multi-page documents for OCR: PDFs (scanned or born-digital) and
// multi-page TIFFs, recognized by content.
//
// A [Reader] opens a document from bytes within [Limits] and reports its page count; a page
// selection such as "1-3,5" is checked against that count ([ParsePages]). For each page,
// [Document.Page] reads what the page holds without rendering it: its size, the resolution of its
// images, the size of its text, the text layer itself, and the decision whether that text layer
// can stand in for OCR ([Page.TextUsable]). From those, [Page.Scale] picks the resolution the OCR
// pipeline wants (text about 24 px tall, scans at their own resolution, within a pixel cap) and
// [Page.RenderCost] prices the render before it happens; [Document.Render] draws the page and
// [Page.Lines] gives the text layer's lines and words in the same pixel space.
//
// PDFs run in PDFium compiled to WebAssembly (see service/pdfengine): memory-capped, killed at
// the caller's deadline, compiled once per Reader. TIFF pages are decoded by service/tiffdec one
// page at a time, each priced exactly before it is decoded; a page that cannot be read is an error
// naming it (a *tiffdec.PageError in the chain), so that the other pages can still be read.
//
// Errors wrap the sentinels below so that the HTTP layer's single classify maps them; context
// errors pass through unchanged.
package docfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/pdfengine"
	"github.com/ocrgate/ocrgate/service/tiffdec"
	"github.com/ocrgate/ocrgate/service/work"
)

// The errors this package wraps. Each has one meaning for the caller; the wrapping error carries a
// message for people.
var (
	// ErrNotDocument means the bytes are neither a PDF nor a TIFF.
	ErrNotDocument = errors.New("not a PDF or TIFF document")
	// ErrEncrypted means the PDF needs a password (or an encryption scheme PDFium lacks).
	ErrEncrypted = errors.New("the document is encrypted")
	// ErrCorrupt means the document or one of its pages cannot be read, including documents that
	// exhaust the engine's memory cap or make it fail.
	ErrCorrupt = errors.New("the document cannot be read")
	// ErrDegenerate means a page's geometry cannot be drawn: a side under a pixel at any scale the
	// render limits allow (a page box a hundredth of a point thin).
	ErrDegenerate = errors.New("the page cannot be drawn")
	// ErrUnsupported means a valid document, or one of its pages, uses something this package
	// does not read (a TIFF page of 12-bit samples, an unsupported compression).
	ErrUnsupported = errors.New("the document uses a feature that is not supported")
	// ErrTooLarge means the document's bytes, a page's size or a render exceed Limits.
	ErrTooLarge = errors.New("the document is too large")
	// ErrTooManyPages means the document or the selection has more pages than Limits allows; the
	// wrapping *PageCountError says how many.
	ErrTooManyPages = errors.New("too many pages")
	// ErrBadSelection means a page selection is malformed or names pages the document lacks; the
	// wrapping *SelectionError carries the page count.
	ErrBadSelection = errors.New("invalid page selection")
	// ErrUnavailable means the PDF engine could not be started.
	ErrUnavailable = errors.New("the document engine is unavailable")
	// ErrTooComplex means one operation on the document (opening it, reading a page, drawing
	// it) used more than the engine's CPU limit: content built to draw forever, or far too
	// complex a page.
	ErrTooComplex = errors.New("the page is too complex to draw")
)

// PageError is the failure of one page of a document: it could not be read, drawn or decoded,
// or costs more than allowed. The document's other pages are not affected, and are read. Err
// wraps the sentinels above (or is the caller's typed error), which say what kind of failure it
// is; any source of pages (the PDF engine, the TIFF decoder) reports a page's failure as a
// PageError with the page's number.
type PageError struct {
	Page int // 1-based
	Err  error
}

func (e *PageError) Error() string {
	msg := e.Err.Error()
	// Most failures name their page already.
	if names(msg, fmt.Sprintf("page %d", e.Page)) {
		return msg
	}
	return fmt.Sprintf("page %d: %s", e.Page, msg)
}

// names reports whether msg holds word not followed by a digit ("page 1" is not in "page 12").
func names(msg, word string) bool {
	for i := 0; ; {
		k := strings.Index(msg[i:], word)
		if k < 0 {
			return false
		}
		end := i + k + len(word)
		if end == len(msg) || msg[end] < '0' || msg[end] > '9' {
			return true
		}
		i = end
	}
}

// Unwrap gives the failure itself.
func (e *PageError) Unwrap() error { return e.Err }

// Format names a document format.
type Format string

// The formats Detect recognizes.
const (
	FormatPDF  Format = "pdf"
	FormatTIFF Format = "tiff"
)

// pdfHeaderWindow is how far into the file the "%PDF-" header may start (PDFium, like Acrobat,
// tolerates leading junk up to 1 KiB).
const pdfHeaderWindow = 1024

// Detect tells whether data is a document this package reads: a PDF, or a TIFF with more than one
// page. It returns "" for anything else, single-page TIFFs included: those are images, read as
// today by the imaging package. It looks at the bytes only, never decodes, and its cost is small
// and fixed: it runs before the request is admitted, so it reads at most detectIFDs of a TIFF's
// directories (a chain longer than that, thumbnails included, is a document, whose walk is then
// admitted and bounded like any other).
func Detect(data []byte) Format {
	if bytes.Contains(data[:min(len(data), pdfHeaderWindow)], []byte("%PDF-")) {
		return FormatPDF
	}
	if tiffdec.IsTIFF(data) {
		f, err := tiffdec.Open(context.Background(), data, tiffdec.Limits{MaxPages: 1, MaxIFDs: detectIFDs})
		if errors.Is(err, tiffdec.ErrTooManyPages) || (err == nil && len(f.Pages) > 1) {
			return FormatTIFF
		}
	}
	return ""
}

// detectIFDs is the most TIFF directories Detect reads: a page and its thumbnail, and more.
const detectIFDs = 8

// Limits bound what a Reader accepts. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	// MaxBytes refuses larger documents (ErrTooLarge).
	MaxBytes int
	// ReadThrough, when positive, has the PDF engine read a PDF larger than this through a
	// reader over its bytes, as it needs them, instead of copying the whole file into its
	// memory first (0: always copied, as /ocr's bodies are). A job's document, mapped from a
	// file, is read so: an engine instance then holds what it parsed and the page at work, not
	// hundreds of megabytes of file (see pdfengine.Engine.OpenReader).
	ReadThrough int
	// MaxDocumentPages refuses documents with more pages at Open (ErrTooManyPages). It is a
	// bound on what a document may claim, far above what one request may select.
	MaxDocumentPages int
	// MaxPages is the most pages one selection may hold (ErrTooManyPages), the default
	// selection (every page) included.
	MaxPages int
	// MaxPageSide refuses PDF pages with a side longer than this many points (ErrTooLarge);
	// 14 400 pt (200 in) is PDF's own limit.
	MaxPageSide float64
	// MaxRenderPixels and MaxRenderSide cap a PDF page's render. Page.Scale stays within them;
	// Render refuses a scale beyond them (ErrTooLarge).
	MaxRenderPixels int
	MaxRenderSide   int
	// MaxImagePixels refuses PDF pages that place an image with more pixels than this
	// (ErrTooLarge), read from the image's dictionary before anything is decoded: PDFium would
	// otherwise spend the deadline inflating it. 150 Mpx holds an A4 page scanned at 1200 dpi.
	MaxImagePixels int
	// Raster bounds TIFF pages, checked from each page's IFD before decoding (ErrTooLarge):
	// the same limits as single images.
	Raster imaging.Limits
	// OpCPU bounds the CPU time of one engine operation on a PDF: opening it, reading a page,
	// drawing it (ErrTooComplex beyond). CPU time, not elapsed time, so that a page draws or not
	// whatever the machine's load. 0 means no bound of its own (the caller's context's).
	OpCPU time.Duration
}

// DefaultLimits are the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:         64 << 20,
		MaxDocumentPages: 10_000,
		MaxPages:         50,
		MaxPageSide:      14_400,
		MaxRenderPixels:  16_000_000,
		MaxRenderSide:    10_000,
		MaxImagePixels:   150_000_000,
		Raster:           imaging.Limits{MaxPixels: 50_000_000, MaxSide: 10_000},
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxDocumentPages <= 0 {
		l.MaxDocumentPages = d.MaxDocumentPages
	}
	if l.MaxPages <= 0 {
		l.MaxPages = d.MaxPages
	}
	if l.MaxPageSide <= 0 {
		l.MaxPageSide = d.MaxPageSide
	}
	if l.MaxRenderPixels <= 0 {
		l.MaxRenderPixels = d.MaxRenderPixels
	}
	if l.MaxRenderSide <= 0 {
		l.MaxRenderSide = d.MaxRenderSide
	}
	if l.MaxImagePixels <= 0 {
		l.MaxImagePixels = d.MaxImagePixels
	}
	if l.Raster.MaxPixels <= 0 {
		l.Raster.MaxPixels = d.Raster.MaxPixels
	}
	if l.Raster.MaxSide <= 0 {
		l.Raster.MaxSide = d.Raster.MaxSide
	}
	return l
}

// Config sets up a Reader.
type Config struct {
	Limits Limits
	// Engine configures the PDF engine: how many PDFs may be open at once (each holds one PDFium
	// instance from Open to Close), each instance's memory cap, and an optional on-disk cache of
	// the compiled module.
	Engine pdfengine.Config
}

// Reader opens documents. It owns the PDF engine, compiled once, in the background, from
// NewReader on; PDF operations wait for it. A Reader is safe for concurrent use.
type Reader struct {
	lim Limits
	pdf *pdfengine.Engine
}

// NewReader returns a Reader and starts compiling the PDF engine (about two seconds of CPU; see
// service/pdfengine).
func NewReader(cfg Config) *Reader {
	return &Reader{lim: cfg.Limits.withDefaults(), pdf: pdfengine.New(cfg.Engine)}
}

// WithLimits returns a Reader that shares r's PDF engine (nothing is compiled again) and applies
// other limits, e.g. a request's own page limit. Close only the Reader NewReader returned.
func (r *Reader) WithLimits(l Limits) *Reader {
	return &Reader{lim: l.withDefaults(), pdf: r.pdf}
}

// Limits returns the limits the Reader applies.
func (r *Reader) Limits() Limits { return r.lim }

// Ready waits until the PDF engine is compiled, or ctx ends. An engine that failed to start gives
// ErrUnavailable.
func (r *Reader) Ready(ctx context.Context) error {
	if err := r.pdf.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Close releases the PDF engine.
func (r *Reader) Close() error { return r.pdf.Close() }

// Document is one open document. Close it when done: an open PDF holds one of the engine's
// instances. Its methods may be called from several goroutines; PDF work runs one call at a time.
type Document struct {
	format Format
	data   []byte
	lim    Limits
	pages  int
	pdf    *pdfengine.Doc // FormatPDF
	tiff   *tiffdec.File  // FormatTIFF
}

// Open reads a document's structure (for a PDF: parses it on a fresh PDFium instance, waiting for
// one until ctx ends; for a TIFF: walks its page chain). data must not change until Close.
// A single-page TIFF opens as a one-page document.
func (r *Reader) Open(ctx context.Context, data []byte) (*Document, error) {
	if len(data) > r.lim.MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes; the limit is %d", ErrTooLarge, len(data), r.lim.MaxBytes)
	}
	d := &Document{data: data, lim: r.lim}
	switch {
	case bytes.Contains(data[:min(len(data), pdfHeaderWindow)], []byte("%PDF-")):
		d.format = FormatPDF
		if err := r.Ready(ctx); err != nil {
			return nil, err
		}
		var doc *pdfengine.Doc
		var err error
		if r.lim.ReadThrough > 0 && len(data) > r.lim.ReadThrough {
			doc, err = r.pdf.OpenReader(ctx, bytes.NewReader(data), int64(len(data)), r.lim.OpCPU)
		} else {
			doc, err = r.pdf.Open(ctx, data, r.lim.OpCPU)
		}
		if err != nil {
			return nil, pdfError(err)
		}
		d.pdf, d.pages = doc, doc.PageCount()
		if d.pages <= 0 {
			_ = doc.Close() // refused: the error returned is the answer
			return nil, fmt.Errorf("%w: the PDF has no pages", ErrCorrupt)
		}
	case tiffdec.IsTIFF(data):
		d.format = FormatTIFF
		f, err := tiffdec.Open(ctx, data, tiffdec.Limits{MaxPages: r.lim.MaxDocumentPages})
		if err != nil {
			return nil, tiffError(err, r.lim.MaxDocumentPages)
		}
		d.tiff, d.pages = f, len(f.Pages)
	default:
		return nil, fmt.Errorf("%w: expected a PDF or a TIFF", ErrNotDocument)
	}
	if d.pages > r.lim.MaxDocumentPages {
		_ = d.Close() // refused: the error returned is the answer
		return nil, &PageCountError{Pages: d.pages, Limit: r.lim.MaxDocumentPages}
	}
	return d, nil
}

// pdfError maps the engine's errors to this package's.
func pdfError(err error) error {
	var cpu *pdfengine.CPUError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &cpu):
		// The limit, not the time used: how far past it the engine got before it was stopped
		// depends on the machine, and the same document must get the same answer.
		return fmt.Errorf("%w: it needs more than %s of CPU time, the limit of one step", ErrTooComplex, cpu.Limit)
	case errors.Is(err, pdfengine.ErrEncrypted):
		return fmt.Errorf("%w: %v", ErrEncrypted, err)
	case errors.Is(err, pdfengine.ErrCorrupt):
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	case errors.Is(err, pdfengine.ErrEngine):
		return fmt.Errorf("%w: the PDF could not be processed within the engine's limits: %v", ErrCorrupt, err)
	}
	return err
}

// tiffError maps the TIFF reader's errors to this package's, keeping a *tiffdec.PageError in the
// chain: it names the page and says why.
func tiffError(err error, limit int) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, tiffdec.ErrTooManyPages):
		return &PageCountError{Pages: limit + 1, Limit: limit, AtLeast: true}
	case errors.Is(err, tiffdec.ErrFormat):
		return fmt.Errorf("%w: %w", ErrNotDocument, err)
	case errors.Is(err, tiffdec.ErrUnsupported):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// Format is the document's format.
func (d *Document) Format() Format { return d.format }

// NumPages is the number of pages.
func (d *Document) NumPages() int { return d.pages }

// Bytes is the document's size.
func (d *Document) Bytes() int { return len(d.data) }

// Select parses a page selection against this document (see ParsePages).
func (d *Document) Select(spec string) ([]int, error) {
	return ParsePages(spec, d.pages, d.lim.MaxPages)
}

// Close releases the document. It is safe to call more than once.
func (d *Document) Close() error {
	if d.pdf != nil {
		return d.pdf.Close()
	}
	return nil
}

// PageSize returns page n's size without reading its content: points as displayed for a PDF
// (from the page dictionary), pixels for a TIFF page as it is shown, its Orientation applied and
// its pixels square (from its IFD). It is the cheap first look a cost estimate needs; Page reads
// the rest.
func (d *Document) PageSize(ctx context.Context, n int) (w, h float64, err error) {
	if n < 1 || n > d.pages {
		return 0, 0, &SelectionError{Spec: fmt.Sprint(n), Pages: d.pages, Reason: "no such page"}
	}
	if d.format == FormatTIFF {
		w, h := d.tiff.Pages[n-1].UprightSize()
		return float64(w), float64(h), nil
	}
	w, h, err = d.pdf.PageSize(ctx, n-1)
	if err != nil {
		return 0, 0, pdfError(err)
	}
	return w, h, d.checkPageSize(n, w, h)
}

// MaxPageCost bounds what any one page may cost under these limits, before anything about the
// page is known: a render at the render caps, or a scan or TIFF page decoded at its own size
// within Raster. A document's cost is at most its selected pages times this.
func (l Limits) MaxPageCost() Cost {
	l = l.withDefaults()
	render := Cost{Pixels: int64(l.MaxRenderPixels), Bytes: 8 * int64(l.MaxRenderPixels)}
	raster := Cost{Pixels: int64(l.Raster.MaxPixels), Bytes: tiffdec.MaxBytesPerPixel*int64(l.Raster.MaxPixels) + tiffdec.MaxStateBytes}
	if raster.Bytes > render.Bytes {
		return raster
	}
	return render
}

// Page reads page n (1-based): its size and, for a PDF, its images and text layer (PDFium parses
// the page's content, which the deadline bounds; nothing is rendered). Errors: ErrBadSelection for
// n out of range, ErrTooLarge for a page beyond MaxPageSide or a TIFF page beyond Raster,
// ErrCorrupt, ErrUnsupported (a TIFF page whose layout is not read; with ErrCorrupt, a
// *tiffdec.PageError in the chain names the page), or ctx's.
func (d *Document) Page(ctx context.Context, n int) (*Page, error) {
	if n < 1 || n > d.pages {
		return nil, &SelectionError{Spec: fmt.Sprint(n), Pages: d.pages, Reason: "no such page"}
	}
	if d.format == FormatTIFF {
		// A TIFF page's facts are read in Go, by the caller's goroutine, and cost little (see
		// tiffdec.Page.Plan); a survey of thousands of them ends with its context all the same.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tp := &d.tiff.Pages[n-1]
		w, h := tp.UprightSize() // a page is laid out, and answered, the way its reader shows it
		if err := checkRaster(tp.Width, tp.Height, d.lim.Raster); err != nil {
			return nil, fmt.Errorf("page %d: %w", n, err)
		}
		if err := checkRaster(w, h, d.lim.Raster); err != nil {
			return nil, fmt.Errorf("page %d shown in square pixels: %w", n, err)
		}
		plan, err := tp.Plan()
		if err != nil {
			return nil, tiffError(err, d.lim.MaxDocumentPages)
		}
		return &Page{Number: n, Width: float64(w), Height: float64(h), Raster: true, DPI: tp.DPI(),
			ImageScale: 1, ImageCoverage: 1, rasterBytes: plan.Bytes(), raster: plan,
			decision: TextDecision{Reason: "a raster page has no text layer", Code: ReasonRaster}}, nil
	}
	// The size first, from the page dictionary alone: a 200-inch page is refused before PDFium
	// parses its content.
	w, h, err := d.pdf.PageSize(ctx, n-1)
	if err != nil {
		return nil, pdfError(err)
	}
	if err := d.checkPageSize(n, w, h); err != nil {
		return nil, err
	}
	facts, err := d.pdf.Inspect(ctx, n-1, pdfengine.InspectLimits{})
	if err != nil {
		return nil, pdfError(err)
	}
	if err := d.checkPageSize(n, facts.Width, facts.Height); err != nil {
		return nil, err
	}
	for _, im := range facts.Images {
		if px := int64(im.Width) * int64(im.Height); px > int64(d.lim.MaxImagePixels) {
			return nil, fmt.Errorf("%w: page %d places a %d×%d px image (%.0f Mpx); the limit is %.0f Mpx",
				ErrTooLarge, n, im.Width, im.Height, float64(px)/1e6, float64(d.lim.MaxImagePixels)/1e6)
		}
	}
	p := newPDFPage(n, facts)
	if p.scan != nil {
		d.priceScan(ctx, p)
	}
	return p, nil
}

// priceScan reads a scanned page's JPEG header from the file, so that reading the JPEG is priced
// (and bounded by Limits.Raster) exactly as uploading it alone would be. A JPEG whose header the
// image limits refuse, or that disagrees with its dictionary, is not read from the file: the page
// is drawn by the engine instead, within the render limits and the engine's memory cap.
func (d *Document) priceScan(ctx context.Context, p *Page) {
	raw, err := d.pdf.ImageData(ctx, p.Number-1, p.scan.index)
	if err != nil {
		p.scan = nil
		return
	}
	h, err := imaging.Inspect(withoutEXIF(raw), d.lim.Raster)
	if err != nil || h.Format != "jpeg" || h.Width != p.scan.width || h.Height != p.scan.height {
		p.scan = nil
		return
	}
	p.scan.header = h
}

func (d *Document) checkPageSize(n int, w, h float64) error {
	if !(w > 0 && h > 0) || math.IsInf(w, 0) || math.IsInf(h, 0) {
		return fmt.Errorf("%w: page %d has no area (%g×%g pt)", ErrDegenerate, n, w, h)
	}
	if w > d.lim.MaxPageSide || h > d.lim.MaxPageSide {
		return fmt.Errorf("%w: page %d is %.0f×%.0f pt (%.0f×%.0f in); the limit is %.0f pt a side",
			ErrTooLarge, n, w, h, w/72, h/72, d.lim.MaxPageSide)
	}
	return nil
}

func checkRaster(w, h int, lim imaging.Limits) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w: a page of %d×%d px", ErrDegenerate, w, h)
	}
	if lim.MaxSide > 0 && (w > lim.MaxSide || h > lim.MaxSide) {
		return fmt.Errorf("%w: %d×%d px; the limit is %d px a side", ErrTooLarge, w, h, lim.MaxSide)
	}
	if lim.MaxPixels > 0 && w > lim.MaxPixels/h {
		return fmt.Errorf("%w: %d×%d px (%.1f Mpx); the limit is %.1f Mpx", ErrTooLarge, w, h,
			float64(w)*float64(h)/1e6, float64(lim.MaxPixels)/1e6)
	}
	return nil
}

// Render draws page p at scale pixels per point (PDF; see Page.Scale) and returns it as the OCR
// pipeline takes images: upright, bounds at (0, 0), with the size Page.RenderCost(scale)
// announced. A TIFF page is decoded at its own size whatever the scale. A scanned page (one JPEG
// filling it) asked for at its scan's resolution is not rendered: its JPEG is read from the file
// and decoded like an uploaded image (within Limits.Raster), so OCR sees exactly the scanned
// pixels, with the decoder's preview for huge scans. Errors: ErrTooLarge when a render exceeds
// MaxRenderPixels or MaxRenderSide, ErrCorrupt, or ctx's (a render is abandoned at the deadline).
// lease is the admission the page's job runs under: a scan's decode, which the deadline abandons
// but cannot stop, holds it until it really ends (nil: nothing to hold).
func (d *Document) Render(ctx context.Context, p *Page, scale float64, lease imaging.Lease) (imaging.Decoded, error) {
	if p == nil || p.Number < 1 || p.Number > d.pages {
		return imaging.Decoded{}, fmt.Errorf("%w: no such page", ErrBadSelection)
	}
	if err := ctx.Err(); err != nil {
		return imaging.Decoded{}, err
	}
	if d.format == FormatTIFF {
		return d.decodeTIFF(ctx, p)
	}
	c := p.RenderCost(scale)
	if p.scan != nil && scale == p.ImageScale {
		dec, err := d.scanPixels(ctx, p, lease)
		if err == nil {
			return dec, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrTooLarge) {
			return imaging.Decoded{}, err
		}
		// A JPEG that Go's decoders refuse may still be drawn by PDFium's: render it at the
		// announced size when the render limits allow.
	}
	if !(scale > 0) || c.Width > d.lim.MaxRenderSide || c.Height > d.lim.MaxRenderSide || c.Pixels > int64(d.lim.MaxRenderPixels) {
		return imaging.Decoded{}, fmt.Errorf("%w: page %d at %.3g px/pt is %d×%d px; the limits are %d px a side and %.1f Mpx",
			ErrTooLarge, p.Number, scale, c.Width, c.Height, d.lim.MaxRenderSide, float64(d.lim.MaxRenderPixels)/1e6)
	}
	img, err := d.pdf.Render(ctx, p.Number-1, c.Width, c.Height)
	if err != nil {
		return imaging.Decoded{}, pdfError(err)
	}
	return imaging.Decoded{Image: img, Format: string(FormatPDF), Width: c.Width, Height: c.Height}, nil
}

// Smaller returns TIFF page p read shrink times smaller along each side (2 to
// imaging.MaxShrink), where its decoder can read it so (a page in one plane: see
// tiffdec.Page.PlanAt), and ok false otherwise: a page too large to read whole within what one
// request may hold is read so, as a PDF page too large is drawn smaller. Its RenderCost is then
// the smaller page's; Render folds the page into the smaller one strip by strip, so the page at
// its own size never exists, and the boxes read on it are scaled back to the page's own pixels
// (imaging.Decoded.Factor), in which the page is still answered.
func (d *Document) Smaller(p *Page, shrink int) (*Page, bool) {
	if d.format != FormatTIFF || !p.Raster || p.shrink > 1 || shrink < 2 || shrink > imaging.MaxShrink {
		return nil, false
	}
	tp := &d.tiff.Pages[p.Number-1]
	plan, err := tp.PlanAt(shrink)
	if err != nil {
		return nil, false
	}
	s := *p
	s.raster, s.rasterBytes, s.shrink = plan, plan.Bytes(), shrink
	s.readW, s.readH = tp.ShrunkSize(shrink)
	return &s, true
}

// decodeTIFF decodes TIFF page p from the chain Open walked, by the plan Page made: upright, its
// pixels square. The decode and its upright copies are charged to ctx's CPU budget, their
// estimate (tiffdec.Plan.CPU) before they start and the CPU they use as they run; they stop when
// the budget is spent (a *cpubudget.Error, wrapped) or ctx ends (ctx's error).
func (d *Document) decodeTIFF(ctx context.Context, p *Page) (imaging.Decoded, error) {
	tp := &d.tiff.Pages[p.Number-1]
	if err := cpubudget.From(ctx).Plan(p.raster.CPU); err != nil {
		return imaging.Decoded{}, fmt.Errorf("page %d: %w", p.Number, err)
	}
	var img image.Image
	var damage *tiffdec.Damage
	// The decode is a unit of work of its own: a bug in it fails this page alone, as an internal
	// error, not as the file's fault. A page damaged in part is read up to its damage (see
	// tiffdec.DecodePage), and the answer says what was lost.
	err := work.Do(ctx, "tiff decode", func() error {
		_, err := cpubudget.Run(ctx, func(ctx context.Context) error {
			dec, err := d.tiff.DecodePage(ctx, tp, max(p.shrink, 1))
			if err != nil {
				return err
			}
			img, damage = toOrigin(dec.Image), dec.Damage
			if tp.Orientation > 1 {
				img = imaging.Orient(img, tp.Orientation)
			}
			w, h := int(p.Width), int(p.Height)
			if p.shrink > 1 {
				w, h = p.readW, p.readH
			}
			img = imaging.Stretch(img, w, h) // square pixels: a standard-resolution fax
			return nil
		})
		return err
	})
	var wp *work.Panic
	switch {
	case errors.As(err, &wp):
		return imaging.Decoded{}, wp
	case errors.Is(err, cpubudget.ErrExceeded):
		return imaging.Decoded{}, fmt.Errorf("page %d: %w", p.Number, err)
	case err != nil:
		return imaging.Decoded{}, tiffError(err, d.lim.MaxDocumentPages)
	}
	dec := imaging.Shrunk(img, string(FormatTIFF), p.shrink, int(p.Width), int(p.Height))
	dec.Damaged = imaging.DamageWarning(damage)
	return dec, nil
}

// scanPixels decodes a scanned page's JPEG from the file.
func (d *Document) scanPixels(ctx context.Context, p *Page, lease imaging.Lease) (imaging.Decoded, error) {
	raw, err := d.pdf.ImageData(ctx, p.Number-1, p.scan.index)
	if err != nil {
		return imaging.Decoded{}, pdfError(err)
	}
	// A PDF shows a JPEG as stored: an EXIF orientation inside it is not applied by viewers,
	// so it must not be applied here either. The decode cannot be interrupted; it gives up
	// waiting at ctx's end and holds lease until it is really over.
	dec, err := imaging.DecodeContext(ctx, withoutEXIF(raw), d.lim.Raster, lease)
	switch {
	case ctx.Err() != nil && err != nil:
		return imaging.Decoded{}, ctx.Err()
	case errors.Is(err, imaging.ErrTooLarge):
		return imaging.Decoded{}, fmt.Errorf("page %d: %w: %v", p.Number, ErrTooLarge, err)
	case err != nil:
		return imaging.Decoded{}, fmt.Errorf("page %d: %w: %v", p.Number, ErrCorrupt, err)
	}
	if w, h := dec.FullSize(); dec.Format != "jpeg" || w != p.scan.width || h != p.scan.height {
		return imaging.Decoded{}, fmt.Errorf("page %d: %w: the scan decodes as a %d×%d %s, its dictionary says %d×%d",
			p.Number, ErrCorrupt, w, h, dec.Format, p.scan.width, p.scan.height)
	}
	dec.Format = string(FormatPDF)
	return dec, nil
}

// withoutEXIF returns a JPEG without its APP1 (EXIF, XMP) segments, copying only when there is
// one. Malformed marker structure is left for the decoder to judge.
func withoutEXIF(data []byte) []byte {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return data
	}
	var out []byte
	i := 2
	for i+4 <= len(data) && data[i] == 0xFF {
		marker := data[i+1]
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image: headers are over
			break
		}
		n := int(data[i+2])<<8 | int(data[i+3])
		if n < 2 || i+2+n > len(data) {
			break
		}
		if marker == 0xE1 {
			if out == nil {
				out = append(make([]byte, 0, len(data)), data[:i]...)
			}
		} else if out != nil {
			out = append(out, data[i:i+2+n]...)
		}
		i += 2 + n
	}
	if out == nil {
		return data
	}
	return append(out, data[i:]...)
}

// toOrigin moves an image's bounds to start at (0, 0) without copying when it can.
func toOrigin(img image.Image) image.Image {
	if img.Bounds().Min == (image.Point{}) {
		return img
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

// SavePDF writes a PDF as PDFium saves it rewritten whole (see pdfengine.Doc.Save), at most
// limit bytes: a file whose cross-reference PDFium had to repair comes out with one that a strict
// reader reads. A TIFF has nothing to save.
func (d *Document) SavePDF(ctx context.Context, w io.Writer, limit int64) error {
	if d.format != FormatPDF {
		return fmt.Errorf("%w: only a PDF is saved", ErrUnsupported)
	}
	if err := d.pdf.Save(ctx, w, false, limit); err != nil {
		return pdfError(err)
	}
	return nil
}
