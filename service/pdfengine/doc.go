package pdfengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/structs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/ocrgate/ocrgate/service/cpubudget"
)

// maxReopens is how many times a document is opened again on a fresh instance after a page made
// PDFium trap or was stopped at its time limit. It lets the other pages of a document with a few
// broken or costly pages be read, without letting a document that traps on every page cost
// unbounded work.
const maxReopens = 8

// maxHandles bounds the page-object handles one instance holds. go-pdfium gives every page object
// it returns (each of a page's objects and of its forms', a character's text object) a handle
// that it keeps, in Go memory (about 130 bytes), until the instance is closed, with no way to give
// one back: a survey reading 2 000 pages of 20 000 small objects on one instance grew the heap by
// a gigabyte of them. So an instance that has handed out more than this many is closed, and the
// document opened again on a fresh one, before the next operation: what a document holds is
// bounded whatever its page count (this many handles, about 4 MiB, plus what one operation takes:
// at most InspectLimits' objects and characters).
const maxHandles = 1 << 15

// Doc is one open PDF on its own PDFium instance. Its methods may be called from several
// goroutines but run one at a time (PDFium is single-threaded). Close it to return the instance.
type Doc struct {
	eng  *Engine
	data []byte
	// src, when set, is what the document is read through instead of data (see OpenReader),
	// size bytes long.
	src  io.ReaderAt
	size int64
	cpu  time.Duration // CPU limit of one call; 0: none

	mu      sync.Mutex
	inst    pdfium.Pdfium // nil after a kill or a trap; reopened on demand
	ref     references.FPDF_DOCUMENT
	pages   int
	reopens int
	closed  bool
	// handles counts the page-object handles the instance has handed out (see maxHandles).
	handles int
	// renewals counts the times the document was opened on a fresh instance to give its
	// handles back.
	renewals int
}

// Open loads a PDF from memory on a fresh instance, waiting for one until ctx ends. data must not
// change while the Doc is open. Every operation on the document (opening it included) may use
// cpuLimit of CPU time (0: no bound of its own; ctx still bounds it): one that needs more is
// stopped and fails with a *CPUError, its instance thrown away. CPU time, not elapsed time: a
// page that takes 2 CPU-s to draw draws on a busy machine too. Errors wrap ErrEncrypted,
// ErrCorrupt, ErrEngine or ErrTooComplex, or are ctx's.
func (e *Engine) Open(ctx context.Context, data []byte, cpuLimit time.Duration) (*Doc, error) {
	d := &Doc{eng: e, data: data, cpu: cpuLimit}
	if err := d.open(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// OpenReader opens a PDF that PDFium reads through src, size bytes long, as it needs them, instead
// of a copy of the whole file in the instance's memory: for a document too big to copy (a job's
// document of hundreds of megabytes, mapped from a file), the instance holds what it has parsed
// and the page it works on, not the file. src must not change while the Doc is open, and must be
// safe for concurrent ReadAt (each open of the document reads through a reader of its own). The
// rest is Open's.
func (e *Engine) OpenReader(ctx context.Context, src io.ReaderAt, size int64, cpuLimit time.Duration) (*Doc, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrCorrupt)
	}
	d := &Doc{eng: e, src: src, size: size, cpu: cpuLimit}
	if err := d.open(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// open borrows an instance and loads the document into it. d.mu must be held (or d unshared).
func (d *Doc) open(ctx context.Context) error {
	inst, err := d.eng.instance(ctx)
	if err != nil {
		return err
	}
	d.inst, d.handles = inst, 0
	err = d.call(ctx, func(inst pdfium.Pdfium) error {
		req := &requests.OpenDocument{File: &d.data}
		if d.src != nil {
			// A reader of its own for every open: PDFium seeks it as it reads.
			req = &requests.OpenDocument{FileReader: io.NewSectionReader(d.src, 0, d.size), FileReaderSize: d.size}
		}
		doc, err := inst.OpenDocument(req)
		if err != nil {
			return openError(err)
		}
		d.ref = doc.Document
		pc, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: d.ref})
		if err != nil {
			return fmt.Errorf("%w: page count: %v", ErrCorrupt, err)
		}
		d.pages = pc.PageCount
		return nil
	})
	if err != nil {
		d.discard()
		return err
	}
	return nil
}

func openError(err error) error {
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword):
		return fmt.Errorf("%w: it needs a password", ErrEncrypted)
	case errors.Is(err, pdfiumerrors.ErrSecurity):
		return fmt.Errorf("%w: its security handler is not supported", ErrEncrypted)
	case isTrap(err):
		return fmt.Errorf("%w: %v", ErrEngine, err)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// bytes is the file's length.
func (d *Doc) bytes() int64 {
	if d.src != nil {
		return d.size
	}
	return int64(len(d.data))
}

// PageCount is the number of pages the document declares (its page tree's count, which PDFium
// checks against the tree when it can).
func (d *Doc) PageCount() int { return d.pages }

// Close returns the instance. It is safe to call more than once.
func (d *Doc) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.inst == nil {
		return nil
	}
	inst := d.inst
	d.inst = nil
	return safely(func() error {
		// Closing the instance closes its documents and pages; the worker is destroyed because
		// workers are not reused.
		_ = inst.Close()
		return nil
	})
}

// renew closes the instance, and the handles it holds with it; the next operation opens the
// document again on a fresh one.
func (d *Doc) renew() {
	inst := d.inst
	d.inst = nil
	d.renewals++
	_ = safely(func() error { return inst.Close() })
}

// Renewals reports how many times the document was opened again on a fresh instance to give back
// the page-object handles the last one held (see maxHandles).
func (d *Doc) Renewals() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.renewals
}

// discard throws the instance away without asking it to clean up: after a trap or a kill its
// state is not to be trusted.
func (d *Doc) discard() {
	if d.inst == nil {
		return
	}
	inst := d.inst
	d.inst = nil
	_ = safely(func() error { return inst.Kill() })
}

// do runs fn on the document's instance under the lock, reopening the document first when a
// previous call trapped.
func (d *Doc) do(ctx context.Context, fn func(inst pdfium.Pdfium) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("%w: the document is closed", ErrEngine)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.inst != nil && d.handles > maxHandles {
		d.renew()
		if err := d.open(ctx); err != nil {
			return err
		}
	}
	if d.inst == nil {
		if d.reopens >= maxReopens {
			return fmt.Errorf("%w: the document keeps crashing the engine", ErrEngine)
		}
		d.reopens++
		if err := d.open(ctx); err != nil {
			return err
		}
	}
	err := d.call(ctx, fn)
	if err != nil && d.inst != nil && (isTrap(err) || errors.Is(err, ErrEngine)) {
		d.discard()
	}
	return err
}

// call runs fn with the instance, killing the instance if ctx ends while fn runs, or when fn
// has used more than the document's CPU limit or the CPU budget ctx carries (wazero then stops
// the running call), and turning panics into ErrEngine. The CPU time fn uses is charged to that
// budget; a budget already spent refuses the call before it starts. d.mu must be held.
func (d *Doc) call(ctx context.Context, fn func(inst pdfium.Pdfium) error) (err error) {
	budget := cpubudget.From(ctx)
	if budget != nil && budget.Left() <= 0 {
		return &cpubudget.Error{Need: budget.Spent(), Limit: budget.Limit(), Spent: true}
	}
	inst := d.inst
	var once sync.Once
	kill := func() { once.Do(func() { _ = safely(func() error { return inst.Kill() }) }) }
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(killed)
		kill()
	})
	cpu := watchCPU(d.cpu, budget, kill)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic: %v", ErrEngine, r)
		}
		over, used, spent, stopped := cpu.end()
		if !stop() {
			// The context ended during the call: the instance is gone, whatever fn returned.
			<-killed
			d.inst = nil
			err = ctx.Err()
			return
		}
		switch {
		case spent != nil:
			// Out of the request's CPU time: what the call did is not wanted any more.
			if stopped {
				d.inst = nil
			}
			err = spent
		case over:
			d.inst = nil
			err = &CPUError{Used: used, Limit: d.cpu}
		}
	}()
	return fn(inst)
}

// PDFium gives a hyphen that ends a line (a word broken over two lines) as a control character
// of its own, U+0002 (U+FFFE in older builds), in place of the hyphen the page draws there. The
// text layer gives that hyphen, as pdftotext does.
const (
	lineEndHyphen    = '\u0002'
	lineEndHyphenOld = '\uFFFE'
)

// isTrap reports whether err is WebAssembly stopping (a trap, an exit, a closed module) rather
// than an API call failing normally.
func isTrap(err error) bool {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "wasm error") || strings.Contains(msg, "module closed")
}

// PageSize returns the size of page index (0-based) in points, as displayed (after the page's
// rotation). It reads the page dictionary only, not the content.
func (d *Doc) PageSize(ctx context.Context, index int) (w, h float64, err error) {
	err = d.do(ctx, func(inst pdfium.Pdfium) error {
		res, err := inst.FPDF_GetPageSizeByIndexF(&requests.FPDF_GetPageSizeByIndexF{Document: d.ref, Index: index})
		if err != nil {
			return fmt.Errorf("%w: page %d size: %v", ErrCorrupt, index+1, err)
		}
		w, h = float64(res.Size.Width), float64(res.Size.Height)
		return nil
	})
	return w, h, err
}

// Rect is an axis-aligned rectangle in display points: origin at the page's top-left corner as
// displayed, x to the right, y down.
type Rect struct{ X0, Y0, X1, Y1 float64 }

// Empty reports whether r has no area.
func (r Rect) Empty() bool { return !(r.X1 > r.X0 && r.Y1 > r.Y0) }

// Char is one character of the text layer.
type Char struct {
	Rune      rune
	Box       Rect    // tight box around the glyph's ink
	Loose     Rect    // the font's box (ascent to descent, advance width)
	Angle     float64 // of the baseline as displayed (page rotation included), radians counter-clockwise as seen
	Generated bool    // inserted by PDFium (a space or line break it inferred)
	Unmapped  bool    // the font gives no Unicode for it
	// Recovered is set for a character whose font gives no Unicode for it (no ToUnicode map)
	// and whose Rune was read from the embedded font's own tables instead (see fontMaps).
	Recovered bool
	// Undrawn is set for a character PDFium drew nothing for because its font is not embedded
	// and PDFium has no outlines for it (a Japanese Ryumin-Light): its Box is a sliver (see
	// undrawnInk). A viewer that has the font shows it. A blank glyph of an embedded font is
	// not undrawn: it is drawn, as nothing.
	Undrawn bool
	// Invisible is set for a character drawn in an invisible render mode (3, or 7: clipping
	// only): text laid over a page that no one sees, such as a scanner's OCR layer.
	Invisible bool
	// Font names the font it is drawn with (its PostScript name, subset tag included: two
	// subsets of one font are two fonts, each with its own encoding). It is read where PDFium
	// starts a line and where the font's box changes height, and is empty elsewhere: the font is
	// the last one named before it.
	Font string
}

// Image is one image placed on the page.
type Image struct {
	Bounds        Rect
	Width, Height int // pixels of the image itself
	// The rest is read for images drawn directly by the page (not inside a form), which is
	// where scanners put the page image.
	Index       int      // the object's index among the page's objects; -1 inside a form
	Filters     []string // the stream's filters, e.g. ["DCTDecode"] for a JPEG
	Matrix      [6]float64
	ColorSpace  enums.FPDF_COLORSPACE
	Transparent bool // a soft mask or a blend mode
}

// PageFacts is what a page holds, read without rendering it.
type PageFacts struct {
	Width, Height float64 // display points
	Chars         []Char
	// CharsTruncated is set when the page had more characters than asked for.
	CharsTruncated bool
	Images         []Image
	// TextObjects counts text objects, InvisibleText those drawn in an invisible render mode
	// (3, or 7: clipping only; the text layer a scanner's OCR lays over its page image).
	TextObjects, InvisibleText int
	// ObjectsTruncated is set when the page had more objects than were looked at.
	ObjectsTruncated bool
	// Paths counts path and shading objects; Annotations the page's annotations.
	Paths, Annotations int
	// Upright is set when page space maps to display space without rotation or mirroring.
	Upright bool
}

// InspectLimits bounds the work of Inspect on hostile pages.
type InspectLimits struct {
	MaxChars   int // characters read from the text layer; 0 means 100 000
	MaxObjects int // page objects looked at (form contents included); 0 means 20 000
}

// maxFormDepth is how deep Inspect descends into nested form XObjects.
const maxFormDepth = 4

// Inspect loads page index (0-based) and reads its text layer and the images and text objects
// on it. Coordinates are display points.
func (d *Doc) Inspect(ctx context.Context, index int, lim InspectLimits) (*PageFacts, error) {
	if lim.MaxChars <= 0 {
		lim.MaxChars = 100_000
	}
	if lim.MaxObjects <= 0 {
		lim.MaxObjects = 20_000
	}
	var facts PageFacts
	err := d.do(ctx, func(inst pdfium.Pdfium) error {
		facts = PageFacts{}
		page := requests.Page{ByIndex: &requests.PageByIndex{Document: d.ref, Index: index}}
		wr, err := inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: page})
		if err != nil {
			return fmt.Errorf("%w: page %d: %v", ErrCorrupt, index+1, err)
		}
		hr, err := inst.FPDF_GetPageHeightF(&requests.FPDF_GetPageHeightF{Page: page})
		if err != nil {
			return fmt.Errorf("%w: page %d: %v", ErrCorrupt, index+1, err)
		}
		facts.Width, facts.Height = float64(wr.PageWidth), float64(hr.PageHeight)
		if !(facts.Width > 0 && facts.Height > 0) {
			return fmt.Errorf("%w: page %d has no area", ErrCorrupt, index+1)
		}
		tr, err := deviceTransform(inst, page, facts.Width, facts.Height)
		if err != nil {
			return err
		}
		const eps = 1e-3
		facts.Upright = math.Abs(tr.b) < eps && math.Abs(tr.c) < eps && tr.a > 0 && tr.d < 0
		if n, err := inst.FPDFPage_GetAnnotCount(&requests.FPDFPage_GetAnnotCount{Page: page}); err == nil {
			facts.Annotations = n.Count
		}
		if err := readObjects(ctx, inst, page, tr, lim.MaxObjects, &facts, &d.handles); err != nil {
			return err
		}
		return readChars(ctx, inst, page, tr, lim.MaxChars, &facts, &d.handles)
	})
	if err != nil {
		return nil, err
	}
	return &facts, nil
}

// transform maps page space (PDF user space, y up) to display points (y down, rotation applied).
type transform struct{ a, b, c, d, e, f float64 }

func (t transform) apply(x, y float64) (float64, float64) {
	return t.a*x + t.c*y + t.e, t.b*x + t.d*y + t.f
}

// angle maps a direction given as an angle in page space (counter-clockwise, y up) to the angle
// it is displayed at (counter-clockwise as seen, display y pointing down).
func (t transform) angle(a float64) float64 {
	sin, cos := math.Sincos(a)
	dx, dy := t.a*cos+t.c*sin, t.b*cos+t.d*sin
	return math.Atan2(-dy, dx)
}

func (t transform) rect(l, b, r, top float64) Rect {
	x0, y0 := t.apply(l, b)
	x1, y1 := t.apply(r, top)
	return Rect{math.Min(x0, x1), math.Min(y0, y1), math.Max(x0, x1), math.Max(y0, y1)}
}

// deviceScale is the resolution at which deviceTransform samples PDFium's page-to-device mapping,
// whose results are integers: 64 device units per point keeps the error under 0.02 pt.
const deviceScale = 64

// deviceTransform asks PDFium where three page points land on the displayed page and solves the
// affine map from them, so crop boxes and /Rotate are handled by PDFium's own rules.
func deviceTransform(inst pdfium.Pdfium, page requests.Page, w, h float64) (transform, error) {
	sx, sy := int(math.Round(w*deviceScale)), int(math.Round(h*deviceScale))
	at := func(x, y float64) (float64, float64, error) {
		r, err := inst.FPDF_PageToDevice(&requests.FPDF_PageToDevice{Page: page, SizeX: sx, SizeY: sy, PageX: x, PageY: y})
		if err != nil {
			return 0, 0, fmt.Errorf("%w: page transform: %v", ErrCorrupt, err)
		}
		return float64(r.DeviceX) / deviceScale, float64(r.DeviceY) / deviceScale, nil
	}
	const span = 1000
	x0, y0, err := at(0, 0)
	if err != nil {
		return transform{}, err
	}
	x1, y1, err := at(span, 0)
	if err != nil {
		return transform{}, err
	}
	x2, y2, err := at(0, span)
	if err != nil {
		return transform{}, err
	}
	return transform{a: (x1 - x0) / span, b: (y1 - y0) / span, c: (x2 - x0) / span, d: (y2 - y0) / span, e: x0, f: y0}, nil
}

// readObjects walks the page's objects (and the contents of its forms) for images and text
// objects, counting in handles the handles the instance hands out for them.
func readObjects(ctx context.Context, inst pdfium.Pdfium, page requests.Page, tr transform, maxObjects int, facts *PageFacts, handles *int) error {
	cnt, err := inst.FPDFPage_CountObjects(&requests.FPDFPage_CountObjects{Page: page})
	if err != nil {
		return fmt.Errorf("%w: page objects: %v", ErrCorrupt, err)
	}
	seen := 0
	var visit func(obj references.FPDF_PAGEOBJECT, depth, index int) error
	visit = func(obj references.FPDF_PAGEOBJECT, depth, index int) error {
		seen++
		if seen > maxObjects {
			facts.ObjectsTruncated = true
			return nil
		}
		if seen%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		typ, err := inst.FPDFPageObj_GetType(&requests.FPDFPageObj_GetType{PageObject: obj})
		if err != nil {
			return nil // an object PDFium cannot describe is not worth failing the page for
		}
		switch typ.Type {
		case enums.FPDF_PAGEOBJ_IMAGE:
			b, err := inst.FPDFPageObj_GetBounds(&requests.FPDFPageObj_GetBounds{PageObject: obj})
			if err != nil {
				return nil
			}
			px, err := inst.FPDFImageObj_GetImagePixelSize(&requests.FPDFImageObj_GetImagePixelSize{ImageObject: obj})
			if err != nil {
				return nil
			}
			im := Image{
				Bounds: tr.rect(float64(b.Left), float64(b.Bottom), float64(b.Right), float64(b.Top)),
				Width:  int(min(px.Width, math.MaxInt32)), Height: int(min(px.Height, math.MaxInt32)),
				Index: -1,
			}
			if depth == 0 {
				describeImage(inst, page, obj, index, &im)
			}
			facts.Images = append(facts.Images, im)
		case enums.FPDF_PAGEOBJ_PATH, enums.FPDF_PAGEOBJ_SHADING:
			facts.Paths++
		case enums.FPDF_PAGEOBJ_TEXT:
			facts.TextObjects++
			if invisibleMode(inst, obj) {
				facts.InvisibleText++
			}
		case enums.FPDF_PAGEOBJ_FORM:
			if depth >= maxFormDepth {
				return nil
			}
			n, err := inst.FPDFFormObj_CountObjects(&requests.FPDFFormObj_CountObjects{PageObject: obj})
			if err != nil {
				return nil
			}
			for i := 0; i < n.Count && seen <= maxObjects; i++ {
				child, err := inst.FPDFFormObj_GetObject(&requests.FPDFFormObj_GetObject{PageObject: obj, Index: uint64(i)})
				if err != nil {
					continue
				}
				*handles++
				if err := visit(child.PageObject, depth+1, -1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := 0; i < cnt.Count && seen <= maxObjects; i++ {
		obj, err := inst.FPDFPage_GetObject(&requests.FPDFPage_GetObject{Page: page, Index: i})
		if err != nil {
			continue
		}
		*handles++
		if err := visit(obj.PageObject, 0, i); err != nil {
			return err
		}
	}
	if cnt.Count > maxObjects {
		facts.ObjectsTruncated = true
	}
	return nil
}

// invisibleMode reports whether a text object is drawn in a render mode that paints nothing:
// invisible (3) or clipping only (7).
func invisibleMode(inst pdfium.Pdfium, obj references.FPDF_PAGEOBJECT) bool {
	m, err := inst.FPDFTextObj_GetTextRenderMode(&requests.FPDFTextObj_GetTextRenderMode{PageObject: obj})
	return err == nil && (m.TextRenderMode == enums.FPDF_TEXTRENDERMODE_INVISIBLE || m.TextRenderMode == enums.FPDF_TEXTRENDERMODE_CLIP)
}

// describeImage reads what decides whether an image can be taken from the file as it is.
func describeImage(inst pdfium.Pdfium, page requests.Page, obj references.FPDF_PAGEOBJECT, index int, im *Image) {
	im.Index = index
	if n, err := inst.FPDFImageObj_GetImageFilterCount(&requests.FPDFImageObj_GetImageFilterCount{ImageObject: obj}); err == nil {
		for k := 0; k < n.Count && k < 8; k++ {
			if f, err := inst.FPDFImageObj_GetImageFilter(&requests.FPDFImageObj_GetImageFilter{ImageObject: obj, Index: k}); err == nil {
				im.Filters = append(im.Filters, f.ImageFilter)
			}
		}
	}
	if m, err := inst.FPDFPageObj_GetMatrix(&requests.FPDFPageObj_GetMatrix{PageObject: obj}); err == nil {
		x := m.Matrix
		im.Matrix = [6]float64{float64(x.A), float64(x.B), float64(x.C), float64(x.D), float64(x.E), float64(x.F)}
	}
	if md, err := inst.FPDFImageObj_GetImageMetadata(&requests.FPDFImageObj_GetImageMetadata{ImageObject: obj, Page: page}); err == nil {
		im.ColorSpace = md.ImageMetadata.Colorspace
	}
	if t, err := inst.FPDFPageObj_HasTransparency(&requests.FPDFPageObj_HasTransparency{PageObject: obj}); err == nil {
		im.Transparent = t.HasTransparency
	}
}

// ImageData returns the stream data of image object index on page (0-based), still encoded
// with its filters: for a DCTDecode image, the JPEG file. The data is at most as long as the
// document.
func (d *Doc) ImageData(ctx context.Context, page, index int) ([]byte, error) {
	var out []byte
	err := d.do(ctx, func(inst pdfium.Pdfium) error {
		p := requests.Page{ByIndex: &requests.PageByIndex{Document: d.ref, Index: page}}
		obj, err := inst.FPDFPage_GetObject(&requests.FPDFPage_GetObject{Page: p, Index: index})
		if err != nil {
			return fmt.Errorf("%w: page %d object %d: %v", ErrCorrupt, page+1, index, err)
		}
		d.handles++
		raw, err := inst.FPDFImageObj_GetImageDataRaw(&requests.FPDFImageObj_GetImageDataRaw{ImageObject: obj.PageObject})
		if err != nil {
			return fmt.Errorf("%w: page %d image data: %v", ErrCorrupt, page+1, err)
		}
		if int64(len(raw.Data)) > d.bytes() {
			return fmt.Errorf("%w: page %d image data is longer than the file", ErrCorrupt, page+1)
		}
		out = bytes.Clone(raw.Data)
		return nil
	})
	return out, err
}

// readChars reads the text layer's characters with their boxes. A page with more than maxChars
// characters is not read at all (CharsTruncated): such a layer is not used as the page's text,
// and reading it would cost seconds of the engine's time and tens of megabytes.
//
// Each call into the engine costs a few microseconds, and go-pdfium allocates and frees guest
// memory for every out-parameter, so the characters' unicode, tight box and angle come from one
// structured extraction (three engine calls a character, its buffers reused), and only the font
// box and the mapping flag are asked character by character. A character's text object, asked
// on pages with invisible text, costs a handle (counted in handles).
func readChars(ctx context.Context, inst pdfium.Pdfium, page requests.Page, tr transform, maxChars int, facts *PageFacts, handles *int) error {
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: page})
	if err != nil {
		return fmt.Errorf("%w: text layer: %v", ErrCorrupt, err)
	}
	// A page that fails to close is freed with the instance when the document closes.
	defer func() { _, _ = inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage}) }()
	cnt, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return fmt.Errorf("%w: text layer: %v", ErrCorrupt, err)
	}
	n := cnt.Count
	if n > maxChars {
		facts.CharsTruncated = true
		return nil
	}
	if n <= 0 {
		return nil
	}
	st, err := inst.GetPageTextStructured(&requests.GetPageTextStructured{Page: page, Mode: requests.GetPageTextStructuredModeChars})
	if err != nil {
		return fmt.Errorf("%w: text layer: %v", ErrCorrupt, err)
	}
	if len(st.Chars) != n {
		return fmt.Errorf("%w: text layer: %d characters, then %d", ErrCorrupt, n, len(st.Chars))
	}
	facts.Chars = make([]Char, 0, n)
	// Which characters are drawn invisibly is asked only of pages that have such text objects:
	// two more calls a character.
	askMode := facts.InvisibleText > 0
	// The font is asked where a line starts (after PDFium's line break) and where the font's box
	// changes height: six engine calls each, a few hundred a page rather than one per character.
	newLine, lastHeight := true, 0.0
	unmapped := unmappedChars{}
	notEmbedded := fontsNotEmbedded{}
	for i, sc := range st.Chars {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := Char{Angle: tr.angle(0)}
		for _, r := range sc.Text {
			c.Rune = r
			break
		}
		if c.Rune == lineEndHyphen || c.Rune == lineEndHyphenOld {
			c.Rune = '-'
		}
		// PDFium's own spaces and line breaks (generated or not) separate words; nothing more
		// is asked of them. A control character is one of them unless PDFium says it had no
		// Unicode for it: then it is a drawn glyph's code (a font without a ToUnicode map whose
		// comma is glyph 13), read as the others are.
		if c.Rune == 0 || unicode.IsSpace(c.Rune) && (c.Rune >= 0x20 || !unmappedAt(inst, tp.TextPage, i)) {
			c.Generated = c.Rune != ' '
			facts.Chars = append(facts.Chars, c)
			newLine = newLine || c.Rune == '\n' || c.Rune == '\r'
			continue
		}
		b := sc.PointPosition
		c.Box = tr.rect(b.Left, b.Bottom, b.Right, b.Top)
		if sc.Angle >= 0 {
			// PDFium's angle is atan2(c, a) of the character's matrix: clockwise in page space
			// (a baseline turned 90° counter-clockwise gives 3π/2). tr.angle takes it
			// counter-clockwise.
			c.Angle = tr.angle(-sc.Angle)
		}
		if me, err := inst.FPDFText_HasUnicodeMapError(&requests.FPDFText_HasUnicodeMapError{TextPage: tp.TextPage, Index: i}); err == nil {
			c.Unmapped = me.HasUnicodeMapError
		}
		if c.Unmapped {
			if fi, err := inst.FPDFText_GetFontInfo(&requests.FPDFText_GetFontInfo{TextPage: tp.TextPage, Index: i}); err == nil {
				c.Font = fi.FontName
				unmapped.add(fi.FontName, i, len(facts.Chars))
			}
		}
		if lb, err := inst.FPDFText_GetLooseCharBox(&requests.FPDFText_GetLooseCharBox{TextPage: tp.TextPage, Index: i}); err == nil {
			c.Loose = tr.rect(float64(lb.Rect.Left), float64(lb.Rect.Bottom), float64(lb.Rect.Right), float64(lb.Rect.Top))
		}
		if sliver(c.Box, c.Loose) {
			c.Undrawn = notEmbedded.ask(inst, tp.TextPage, i, handles)
		}
		h := c.Loose.Y1 - c.Loose.Y0 // across the baseline
		if math.Abs(math.Sin(c.Angle)) > math.Abs(math.Cos(c.Angle)) {
			h = c.Loose.X1 - c.Loose.X0
		}
		if newLine || math.Abs(h-lastHeight) > 0.02*lastHeight {
			if fi, err := inst.FPDFText_GetFontInfo(&requests.FPDFText_GetFontInfo{TextPage: tp.TextPage, Index: i}); err == nil {
				c.Font = fi.FontName
			}
			newLine, lastHeight = false, h
		}
		if askMode {
			// go-pdfium registers a new handle for every object it returns, so the mode
			// cannot be remembered by object: it is asked again.
			if o, err := inst.FPDFText_GetTextObject(&requests.FPDFText_GetTextObject{TextPage: tp.TextPage, Index: i}); err == nil {
				*handles++
				c.Invisible = invisibleMode(inst, o.TextObject)
			}
		}
		facts.Chars = append(facts.Chars, c)
	}
	unmapped.recover(inst, tp.TextPage, facts.Chars, handles)
	return nil
}

// unmappedAt reports whether PDFium had no Unicode for character index of text page tp.
func unmappedAt(inst pdfium.Pdfium, tp references.FPDF_TEXTPAGE, index int) bool {
	me, err := inst.FPDFText_HasUnicodeMapError(&requests.FPDFText_HasUnicodeMapError{TextPage: tp, Index: index})
	return err == nil && me.HasUnicodeMapError
}

// Render draws page index (0-based) into a w×h RGBA image on white, annotations included. The
// caller has checked that w×h is within its limits; the instance's memory cap stops the rest.
func (d *Doc) Render(ctx context.Context, index, w, h int) (*image.RGBA, error) {
	var out *image.RGBA
	err := d.render(ctx, index, w, h, enums.FPDF_BITMAP_FORMAT_BGRX, nil, func(buf []byte, stride int) {
		// The buffer is a view into the instance's memory: copied out.
		out = rgbaOf(buf, stride, w, h)
	})
	return out, err
}

// RenderArea draws the part of page index (0-based) inside area (display points) into a w×h RGBA
// image on white, annotations included: a few lines of a page at the resolution a recognizer
// reads them, for the cost of their pixels alone (PDFium skips what the area clips away).
func (d *Doc) RenderArea(ctx context.Context, index int, area Rect, w, h int) (*image.RGBA, error) {
	if area.Empty() || w <= 0 || h <= 0 {
		return nil, fmt.Errorf("%w: render area %v at %d×%d", ErrEngine, area, w, h)
	}
	sx, sy := float64(w)/(area.X1-area.X0), float64(h)/(area.Y1-area.Y0)
	m := structs.FPDF_FS_MATRIX{A: float32(sx), D: float32(sy), E: float32(-area.X0 * sx), F: float32(-area.Y0 * sy)}
	var out *image.RGBA
	err := d.render(ctx, index, w, h, enums.FPDF_BITMAP_FORMAT_BGRX, &m, func(buf []byte, stride int) {
		out = rgbaOf(buf, stride, w, h)
	})
	return out, err
}

// rgbaOf copies a BGRX bitmap that PDFium wrote in reverse byte order (RGBX) out of the
// instance's memory, making every pixel opaque (the bitmap has no alpha channel; its fourth byte
// is padding).
func rgbaOf(buf []byte, stride, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		src := buf[y*stride : y*stride+4*w]
		dst := img.Pix[y*img.Stride : y*img.Stride+4*w]
		copy(dst, src)
		for x := 3; x < len(dst); x += 4 {
			dst[x] = 0xFF
		}
	}
	return img
}

// RenderGray draws page index (0-based) into a w×h gray image on white, annotations included: a
// byte a pixel, for looking at a page rather than reading it.
func (d *Doc) RenderGray(ctx context.Context, index, w, h int) (*image.Gray, error) {
	var out *image.Gray
	err := d.render(ctx, index, w, h, enums.FPDF_BITMAP_FORMAT_GRAY, nil, func(buf []byte, stride int) {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			copy(img.Pix[y*img.Stride:y*img.Stride+w], buf[y*stride:y*stride+w])
		}
		out = img
	})
	return out, err
}

// render draws a page into a bitmap of the given format inside the instance and hands its
// buffer (a view into the instance's memory, valid during the call) to out. With m, the page
// (its display space, in points) is drawn through m into the bitmap; without, it fills it.
func (d *Doc) render(ctx context.Context, index, w, h int, format enums.FPDF_BITMAP_FORMAT, m *structs.FPDF_FS_MATRIX, out func(buf []byte, stride int)) error {
	if w <= 0 || h <= 0 || w > 1<<16 || h > 1<<16 {
		return fmt.Errorf("%w: render size %d×%d", ErrEngine, w, h)
	}
	bpp := 4
	flags := enums.FPDF_RENDER_FLAG_ANNOT | enums.FPDF_RENDER_FLAG_REVERSE_BYTE_ORDER
	if format == enums.FPDF_BITMAP_FORMAT_GRAY {
		bpp = 1
		flags = enums.FPDF_RENDER_FLAG_ANNOT | enums.FPDF_RENDER_FLAG_GRAYSCALE
	}
	return d.do(ctx, func(inst pdfium.Pdfium) error {
		page := requests.Page{ByIndex: &requests.PageByIndex{Document: d.ref, Index: index}}
		// Load the page first so that a page PDFium cannot parse is reported as corrupt, not as
		// a failed render.
		if _, err := inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: page}); err != nil {
			return fmt.Errorf("%w: page %d: %v", ErrCorrupt, index+1, err)
		}
		bm, err := inst.FPDFBitmap_CreateEx(&requests.FPDFBitmap_CreateEx{Width: w, Height: h, Format: format, Pointer: uint64(0)})
		if err != nil || bm.Bitmap == "" {
			return fmt.Errorf("%w: no memory for a %d×%d bitmap", ErrEngine, w, h)
		}
		// A bitmap that fails to be freed goes with the instance when the document closes.
		defer func() { _, _ = inst.FPDFBitmap_Destroy(&requests.FPDFBitmap_Destroy{Bitmap: bm.Bitmap}) }()
		if _, err := inst.FPDFBitmap_FillRect(&requests.FPDFBitmap_FillRect{Bitmap: bm.Bitmap, Width: w, Height: h, Color: 0xFFFFFFFF}); err != nil {
			return fmt.Errorf("%w: fill: %v", ErrEngine, err)
		}
		if m != nil {
			_, err = inst.FPDF_RenderPageBitmapWithMatrix(&requests.FPDF_RenderPageBitmapWithMatrix{
				Bitmap: bm.Bitmap, Page: page, Matrix: *m, Flags: flags,
				Clipping: structs.FPDF_FS_RECTF{Right: float32(w), Bottom: float32(h)},
			})
		} else {
			_, err = inst.FPDF_RenderPageBitmap(&requests.FPDF_RenderPageBitmap{
				Bitmap: bm.Bitmap, Page: page, SizeX: w, SizeY: h, Flags: flags,
			})
		}
		if err != nil {
			return fmt.Errorf("%w: render page %d: %v", ErrEngine, index+1, err)
		}
		st, err := inst.FPDFBitmap_GetStride(&requests.FPDFBitmap_GetStride{Bitmap: bm.Bitmap})
		if err != nil || st.Stride < bpp*w {
			return fmt.Errorf("%w: bitmap stride", ErrEngine)
		}
		buf, err := inst.FPDFBitmap_GetBuffer(&requests.FPDFBitmap_GetBuffer{Bitmap: bm.Bitmap})
		if err != nil || len(buf.Buffer) < st.Stride*(h-1)+bpp*w {
			return fmt.Errorf("%w: bitmap buffer", ErrEngine)
		}
		out(buf.Buffer, st.Stride)
		return nil
	})
}

// ErrSaveTooLarge is a save that would write more than its limit.
var ErrSaveTooLarge = errors.New("pdfengine: the saved document exceeds its limit")

// Save writes the document as PDFium saves it: incremental, its own bytes followed by what
// changed (nothing, unless the document was edited); otherwise rewritten whole, every object
// renumbered into one new cross-reference table, which is how a file PDFium read by repairing
// its cross-reference comes out readable by a strict reader. At most limit bytes are written;
// a save that needs more stops with ErrSaveTooLarge.
func (d *Doc) Save(ctx context.Context, w io.Writer, incremental bool, limit int64) error {
	flags := requests.SaveFlagNoIncremental
	if incremental {
		flags = requests.SaveFlagIncremental
	}
	lw := &limitedWriter{w: w, left: limit}
	err := d.do(ctx, func(inst pdfium.Pdfium) error {
		_, err := inst.FPDF_SaveAsCopy(&requests.FPDF_SaveAsCopy{Document: d.ref, Flags: flags, FileWriter: lw})
		return err
	})
	if lw.over {
		return ErrSaveTooLarge
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrEngine) {
		var ce *CPUError
		if !errors.As(err, &ce) {
			return fmt.Errorf("%w: save: %v", ErrCorrupt, err)
		}
	}
	return err
}

// limitedWriter writes at most left bytes to w, then fails.
type limitedWriter struct {
	w    io.Writer
	left int64
	over bool
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		l.over = true
		return 0, ErrSaveTooLarge
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}
