// Package dococr reads documents (PDFs and multi-page TIFFs) for the OCR service, page by page:
// a page whose text layer is real text (a born-digital page) is answered from that layer, any
// other page is rendered at the resolution the detector wants and runs through the OCR pipeline.
//
// A document is not one unit of work. Reading it is a sequence of jobs, each admitted on its own
// by its memory cost before it starts (see [Admitter]): first a survey, which opens the document,
// checks the page selection and reads every selected page's facts (its size, images and text
// layer; text-layer pages are finished there, for little), then one job per page that needs OCR,
// which renders the page and runs the pipeline on it. Between jobs a document holds no
// admission, so a long document takes its turns between other requests instead of starving them,
// and no job of it costs more than its largest page. A PDF's jobs each open the document on a
// fresh engine instance and close it before OCR starts: the instance's memory (charged at the
// engine's cap, the only bound a hostile page respects) is gone by the time the models run.
//
// Every engine operation (opening, reading a page, rendering it) has its own time limit: a page
// that takes longer is a document too complex to read ([TooComplexError]), which is the caller's
// document's fault, not the service's; the request's own deadline stays the bound on the whole.
package dococr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Pipeline is what dococr needs from the OCR pipeline: its options (for the cost of a page) and
// OCR of a rendered page.
type Pipeline interface {
	Options() ocr.Options
	RunImage(ctx context.Context, dec imaging.Decoded) (*ocr.Result, error)
}

// Admitter admits one job of a known memory cost: it waits until the job may run (or ctx ends,
// or the service refuses it) and returns the function that ends the job's admission.
type Admitter interface {
	Admit(ctx context.Context, cost int64) (release func(), err error)
}

// Mode says when a page's text layer stands in for OCR.
type Mode int

const (
	// Auto reads a page from its text layer when the layer is real text, and OCRs it otherwise.
	Auto Mode = iota
	// Always OCRs every page, whatever its text layer holds.
	Always
)

// Source says where a page's text came from.
type Source string

// The sources of a page's text.
const (
	TextLayer Source = "text-layer"
	OCR       Source = "ocr"
)

// Config sets up a Reader.
type Config struct {
	// Scale picks each page's render resolution (document.DefaultScalePolicy suits the pipeline).
	Scale document.ScalePolicy
	// EngineMemory is charged for every job that has a PDF open: the PDF engine's per-instance
	// memory cap (the file, its parsed objects, decoded images and the render bitmap live there).
	EngineMemory int64
	// OpTimeout bounds one engine operation: opening the document, reading a page's facts,
	// rendering a page. Longer is a TooComplexError. Zero means no bound of its own.
	OpTimeout time.Duration
	// PageTimeout is added to a document's deadline for every page it OCRs after the first, up to
	// MaxTimeout from the request's start.
	PageTimeout, MaxTimeout time.Duration
	// Parallel is how many pages of one document may be rendered and OCR'd at once, each
	// admitted on its own (at least 1).
	Parallel int
}

// Reader reads documents with one PDF engine (the document.Reader's) for the whole service. It is
// safe for concurrent use.
type Reader struct {
	docs *document.Reader
	cfg  Config
}

// New returns a Reader over docs.
func New(docs *document.Reader, cfg Config) *Reader {
	cfg.Parallel = max(1, cfg.Parallel)
	return &Reader{docs: docs, cfg: cfg}
}

// Config returns the Reader's settings.
func (r *Reader) Config() Config { return r.cfg }

// Ready waits until the PDF engine is compiled (see document.Reader.Ready).
func (r *Reader) Ready(ctx context.Context) error { return r.docs.Ready(ctx) }

// Close releases the PDF engine.
func (r *Reader) Close() error { return r.docs.Close() }

// Request is one document to read.
type Request struct {
	Data  []byte
	Pages string // page selection ("1-3,5"); empty for every page within the page limit
	Mode  Mode
	// Held is the memory the request holds for as long as it runs (its body, the decoded
	// document): part of the cost of every job it runs.
	Held int64
	// MaxCost refuses, before any work, a job costing more than this (0: no bound): the
	// service's per-request memory limit.
	MaxCost int64
	// Start and Timeout are when the request started and its deadline for an image: the
	// survey must finish within it; the pages then get more (see Deadline).
	Start   time.Time
	Timeout time.Duration
}

// Page is one page read.
type Page struct {
	Number        int // 1-based, in the document
	Width, Height int // pixels of the space its boxes are in: its render for OCR
	Source        Source
	// Result holds the page's regions and text. For text-layer pages every region and word has
	// confidence 1 and Timings are zero.
	Result *ocr.Result
}

// Result is a document read.
type Result struct {
	Format document.Format
	Pages  int // pages in the document
	Bytes  int
	Read   []Page // the selected pages, in document order
	// Text is the text of every page read, in order, pages separated by a form feed ("\f").
	Text string
}

// PageSeparator separates the pages' texts in Result.Text: a form feed, as pdftotext writes.
const PageSeparator = "\f"

// TooComplexError is a page (or a document, Page 0) that one engine operation could not read or
// render within the time limit: content built to draw forever, or a far too complex page.
type TooComplexError struct {
	Page  int // 0: opening the document
	Limit time.Duration
}

func (e *TooComplexError) Error() string {
	if e.Page == 0 {
		return fmt.Sprintf("the document could not be opened within %s", e.Limit)
	}
	return fmt.Sprintf("page %d could not be read and drawn within %s", e.Page, e.Limit)
}

// CostError is a page whose OCR needs more memory than one request may use. It matches
// document.ErrTooLarge.
type CostError struct {
	Page          int
	Width, Height int // of its render
	Cost, Limit   int64
}

func (e *CostError) Error() string {
	if e.Page == 0 {
		return fmt.Sprintf("reading this document needs about %d MiB of memory; the limit is %d MiB per request",
			(e.Cost+(1<<20)-1)>>20, e.Limit>>20)
	}
	return fmt.Sprintf("page %d, drawn at %d×%d px for OCR, needs about %d MiB of memory; the limit is %d MiB per request",
		e.Page, e.Width, e.Height, (e.Cost+(1<<20)-1)>>20, e.Limit>>20)
}

// Is makes errors.Is(err, document.ErrTooLarge) hold.
func (e *CostError) Is(target error) bool { return target == document.ErrTooLarge }

// ErrEngineStarting means the PDF engine was still being compiled when the request's deadline
// came. It matches document.ErrUnavailable; retrying shortly helps.
var ErrEngineStarting = fmt.Errorf("%w: the PDF engine is still starting", document.ErrUnavailable)

// surveyBytes bounds the Go memory of the survey beyond the engine: a page's facts (at most
// 100 000 characters of text layer, under 100 bytes each), and the text-layer pages read so far.
const surveyBytes = 32 << 20

// Deadline is the deadline of a document that OCRs ocrPages pages: the request's Timeout, plus
// PageTimeout for every OCR'd page after the first, at most MaxTimeout from its start.
func (r *Reader) Deadline(req Request, ocrPages int) time.Time {
	d := req.Timeout + time.Duration(max(0, ocrPages-1))*r.cfg.PageTimeout
	if r.cfg.MaxTimeout > 0 {
		d = min(d, max(req.Timeout, r.cfg.MaxTimeout))
	}
	return req.Start.Add(d)
}

// pending is a page the survey left for OCR.
type pending struct {
	slot   int // index in Result.Read
	number int
	scale  float64
	cost   int64
	render document.Cost
}

// Read reads the selected pages of the document in req.Data, each job admitted by adm (nil
// admits everything at once). ctx bounds everything (the service
// gives it the longest deadline a document may have); the survey runs within req.Timeout of
// req.Start, the pages within Deadline. Errors wrap the document package's sentinels, or are a
// *TooComplexError, a *CostError, ErrEngineStarting, the pipeline's errors, the admitter's, or
// ctx's.
func (r *Reader) Read(ctx context.Context, p Pipeline, adm Admitter, req Request) (*Result, error) {
	format := document.Detect(req.Data)
	if format == "" {
		return nil, fmt.Errorf("%w: expected a PDF or a multi-page TIFF", document.ErrNotDocument)
	}
	survey, cancel := context.WithDeadline(ctx, req.Start.Add(req.Timeout))
	defer cancel()
	if format == document.FormatPDF {
		if err := r.docs.Ready(survey); err != nil {
			if survey.Err() != nil {
				return nil, ErrEngineStarting
			}
			return nil, err
		}
	}
	if adm == nil {
		adm = unbounded{}
	}
	res, todo, err := r.survey(survey, adm, format, req)
	if err != nil {
		return nil, err
	}
	if len(todo) > 0 {
		pages, cancel := context.WithDeadline(ctx, r.Deadline(req, len(todo)))
		defer cancel()
		if err := r.ocrPages(pages, p, adm, req, res, todo); err != nil {
			return nil, err
		}
	}
	texts := make([]string, len(res.Read))
	for i, pg := range res.Read {
		texts[i] = pg.Result.Text
	}
	res.Text = strings.Join(texts, PageSeparator)
	return res, nil
}

// engineCost is what a job that opens the document holds in the engine.
func (r *Reader) engineCost(format document.Format) int64 {
	if format == document.FormatPDF {
		return r.cfg.EngineMemory
	}
	return 0
}

// survey is the first job: open the document, check the selection, read every selected page's
// facts, answer the text-layer pages and price the others.
func (r *Reader) survey(ctx context.Context, adm Admitter, format document.Format, req Request) (*Result, []pending, error) {
	release, err := r.admit(ctx, adm, req, req.Held+r.engineCost(format)+surveyBytes, 0, document.Cost{})
	if err != nil {
		return nil, nil, err
	}
	defer release()
	doc, err := r.open(ctx, req.Data)
	if err != nil {
		return nil, nil, err
	}
	defer doc.Close()
	sel, err := doc.Select(req.Pages)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Format: doc.Format(), Pages: doc.NumPages(), Bytes: doc.Bytes(), Read: make([]Page, len(sel))}
	var todo []pending
	for i, n := range sel {
		var page *document.Page
		err := r.op(ctx, n, func(ctx context.Context) (err error) {
			page, err = doc.Page(ctx, n)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		scale := page.Scale(r.cfg.Scale, r.docs.Limits())
		c := page.RenderCost(scale)
		if req.Mode == Auto && page.TextUsable().Usable {
			res.Read[i] = textLayerPage(page, c.Width, c.Height)
			continue
		}
		todo = append(todo, pending{slot: i, number: n, scale: scale, render: c})
		res.Read[i] = Page{Number: n, Width: c.Width, Height: c.Height, Source: OCR}
	}
	return res, todo, nil
}

// ocrPages renders and OCRs the pages the survey left, up to Parallel at once, each admitted on
// its own. The first error stops the rest.
func (r *Reader) ocrPages(ctx context.Context, p Pipeline, adm Admitter, req Request, res *Result, todo []pending) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opt := p.Options()
	sem := make(chan struct{}, r.cfg.Parallel)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; cancel(err) })
	}
	for i := range todo {
		// What the page holds at its peak: its pixels throughout; with them the engine while it
		// is drawn, then the models' tensors (the engine instance is closed before OCR starts).
		t := &todo[i]
		t.cost = req.Held + t.render.Bytes + max(r.engineCost(res.Format), opt.ModelBytes(t.render.Width, t.render.Height))
		// A page the request may not afford fails the document before any page is read.
		if req.MaxCost > 0 && t.cost > req.MaxCost {
			return &CostError{Page: t.number, Width: t.render.Width, Height: t.render.Height, Cost: t.cost, Limit: req.MaxCost}
		}
	}
	for _, t := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			pg, err := r.ocrPage(ctx, p, adm, req, res.Format, t)
			if err != nil {
				fail(err)
				return
			}
			res.Read[t.slot] = pg
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	// The deadline (or the caller) may have ended the loop before any page failed.
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// ocrPage is one page's job: admitted, it opens the document, reads the page again, renders it,
// closes the document and runs the pipeline on the render.
func (r *Reader) ocrPage(ctx context.Context, p Pipeline, adm Admitter, req Request, format document.Format, t pending) (Page, error) {
	release, err := r.admit(ctx, adm, req, t.cost, t.number, t.render)
	if err != nil {
		return Page{}, err
	}
	defer release()
	dec, err := r.render(ctx, req.Data, t)
	if err != nil {
		return Page{}, err
	}
	res, err := p.RunImage(ctx, dec)
	if err != nil {
		return Page{}, err
	}
	return Page{Number: t.number, Width: res.Width, Height: res.Height, Source: OCR, Result: res}, nil
}

// render draws one page with the document open only for that long.
func (r *Reader) render(ctx context.Context, data []byte, t pending) (imaging.Decoded, error) {
	doc, err := r.open(ctx, data)
	if err != nil {
		return imaging.Decoded{}, err
	}
	defer doc.Close()
	var dec imaging.Decoded
	err = r.op(ctx, t.number, func(ctx context.Context) error {
		page, err := doc.Page(ctx, t.number)
		if err != nil {
			return err
		}
		dec, err = doc.Render(ctx, page, t.scale)
		return err
	})
	return dec, err
}

// admit checks a job's cost against the per-request limit and has it admitted.
func (r *Reader) admit(ctx context.Context, adm Admitter, req Request, cost int64, page int, c document.Cost) (func(), error) {
	if req.MaxCost > 0 && cost > req.MaxCost {
		return nil, &CostError{Page: page, Width: c.Width, Height: c.Height, Cost: cost, Limit: req.MaxCost}
	}
	return adm.Admit(ctx, cost)
}

// unbounded admits every job at once: Read with a nil Admitter.
type unbounded struct{}

func (unbounded) Admit(context.Context, int64) (func(), error) { return func() {}, nil }

func (r *Reader) open(ctx context.Context, data []byte) (*document.Document, error) {
	var doc *document.Document
	err := r.op(ctx, 0, func(ctx context.Context) (err error) {
		doc, err = r.docs.Open(ctx, data)
		return err
	})
	return doc, err
}

// op runs one engine operation within OpTimeout; running out of that time (not of ctx's) is a
// TooComplexError.
func (r *Reader) op(ctx context.Context, page int, fn func(context.Context) error) error {
	if r.cfg.OpTimeout <= 0 {
		return fn(ctx)
	}
	octx, cancel := context.WithTimeout(ctx, r.cfg.OpTimeout)
	defer cancel()
	err := fn(octx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return &TooComplexError{Page: page, Limit: r.cfg.OpTimeout}
	}
	return err
}

// textLayerPage turns a page's text-layer lines, in a w×h pixel space over the page, into a page
// result shaped like the pipeline's, laid out in blocks and reading order as OCR regions are
// (ocr.Arrange).
func textLayerPage(page *document.Page, w, h int) Page {
	lines := page.Lines(w, h)
	res := &ocr.Result{Format: "pdf", Width: w, Height: h, Regions: make([]ocr.Region, len(lines))}
	for i, l := range lines {
		words := make([]ocr.Word, len(l.Words))
		for k, wd := range l.Words {
			words[k] = ocr.Word{Text: wd.Text, Score: 1, Quad: wd.Quad}
		}
		res.Regions[i] = ocr.Region{Quad: l.Quad, Text: l.Text, Score: 1, Vertical: vertical(l.Quad), Words: words}
	}
	ocr.Arrange(res, ocr.DefaultOptions().RowOverlap)
	return Page{Number: page.Number, Width: w, Height: h, Source: TextLayer, Result: res}
}

// vertical reports whether a line's text runs up or down the page.
func vertical(q geom.Quad) bool {
	a := math.Abs(math.Mod(q.Angle(), 180))
	return a > 45 && a < 135
}
