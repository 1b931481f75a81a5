// Package document reads documents (PDFs and multi-page TIFFs) for the OCR service, page by page:
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
// engine's cap, the only bound a hostile page respects) is gone by the time the models run. A
// TIFF holds no engine instance: it is opened (its IFD chain walked) once, by the survey, and
// stays open until its last page is read.
//
// Every engine operation (opening, reading a page, rendering it) is bounded by the CPU time it
// may use (the engine's CPU limit, see service/pdfengine): a page that needs more is too
// complex to read (docfile.ErrTooComplex), which is the caller's document's fault, not the
// service's, and that page fails alone (see [Page].Err). CPU time, not elapsed time: a page that
// takes 2 CPU-s draws on a busy machine too. The request's own deadline, which grows with the
// pages a document reads and OCRs ([Reader.Deadline]), stays the bound on the whole.
//
// A request's CPU time is bounded too, by the budget its context carries (see package
// cpubudget): every engine operation and the survey's own work are charged as they run, and a
// survey is priced before it starts and again after its first pages, so that a document the
// budget cannot afford is refused at once rather than after minutes. The survey takes turns: it
// gives back its admission every second or so of CPU time and queues again, so that other
// requests' jobs wait a turn, not a whole survey.
//
// Limits count work. A request may read Budget.Pages pages in all (text-layer pages are cheap),
// of which Budget.OCRPages may need OCR; each job is admitted by what it will hold. A request
// that sends several documents surveys them all ([Reader.Survey]) before it OCRs a page of any
// ([Plan.Read]).
package document

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/work"
)

// Pipeline is what the reader needs from the OCR pipeline: its options (for the cost of a page), OCR
// of a rendered page, and the recognizer alone on a few crops, to check a text layer against
// (see Config.LayerCheck).
type Pipeline interface {
	Options() ocr.Options
	RunImage(ctx context.Context, dec imaging.Decoded) (*ocr.Result, error)
	ReadCrops(ctx context.Context, img image.Image, quads []geom.Quad) ([]ocr.Reading, error)
	Reads(r rune) bool
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
	// Failed is a page that could not be read (Page.Err says why).
	Failed Source = "none"
)

// Config sets up a Reader.
type Config struct {
	// Scale picks each page's render resolution (docfile.DefaultScalePolicy suits the pipeline).
	Scale docfile.ScalePolicy
	// EngineMemory is charged for every job that has a PDF open: the PDF engine's per-instance
	// memory cap (the file, its parsed objects, decoded images and the render bitmap live there).
	EngineMemory int64
	// OpTimeout bounds one engine operation in elapsed time: opening the document, reading a
	// page's facts, rendering a page. Longer is a TooComplexError. Zero (what the service uses:
	// the engine's CPU limit bounds operations whatever the load) means no bound of its own.
	OpTimeout time.Duration
	// PageTimeout is added to a document's deadline for every page it OCRs after the first, and
	// SurveyPageTimeout for every page it reads after the first (its survey: facts and text
	// layer), up to MaxTimeout from the request's start.
	PageTimeout, SurveyPageTimeout, MaxTimeout time.Duration
	// Parallel is how many pages of one document may be rendered and OCR'd at once, each
	// admitted on its own (at least 1).
	Parallel int
	// Budget bounds what one request reads across its documents (see Budget); a Request
	// without a Budget of its own gets one with these limits.
	Budget BudgetLimits
	// LayerCheck is how many probes (a few words of a line each) of a page's text layer are read
	// by OCR and compared with the layer before the layer is trusted (see docfile.Judge); 0
	// trusts a layer by its structure alone.
	LayerCheck int
	// Turn is the CPU time a survey spends between turns, when it gives its admission back and
	// queues again behind the jobs that came meanwhile (0: turnCPU, a second).
	Turn time.Duration
}

// Documents opens documents: a *docfile.Reader, with one PDF engine for the whole service.
type Documents interface {
	Open(ctx context.Context, data []byte) (*docfile.Document, error)
	Ready(ctx context.Context) error
	Limits() docfile.Limits
	Close() error
}

// Reader reads documents with one PDF engine (the docfile.Reader's) for the whole service. It is
// safe for concurrent use.
type Reader struct {
	docs Documents
	cfg  Config
}

// New returns a Reader over docs.
func New(docs Documents, cfg Config) *Reader {
	cfg.Parallel = max(1, cfg.Parallel)
	if cfg.Turn <= 0 {
		cfg.Turn = turnCPU
	}
	return &Reader{docs: docs, cfg: cfg}
}

// WithFileLimits returns a Reader with r's settings and engine whose documents open with r's
// file limits as edit changes them (a job's reader: documents up to the job's byte limit, big PDFs
// read through a reader, see docfile.Limits.ReadThrough). It is r itself when its documents cannot
// take other limits. Close only r.
func (r *Reader) WithFileLimits(edit func(*docfile.Limits)) *Reader {
	d, ok := r.docs.(interface {
		WithLimits(docfile.Limits) *docfile.Reader
	})
	if !ok {
		return r
	}
	lim := r.docs.Limits()
	edit(&lim)
	return &Reader{docs: d.WithLimits(lim), cfg: r.cfg}
}

// Config returns the Reader's settings.
func (r *Reader) Config() Config { return r.cfg }

// Ready waits until the PDF engine is compiled (see docfile.Reader.Ready).
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
	// Words says whether the answer carries every region's words, which its size depends on.
	Words bool
	// Budget is the request's, shared by every document it sends; nil gives the document a
	// budget of its own (Config.Budget) that charges nothing.
	Budget *Budget
}

// Page is one page read.
type Page struct {
	Number        int // 1-based, in the document
	Width, Height int // pixels of the space its boxes are in: its render for OCR
	Source        Source
	// Reason says why the page was read from its text layer or by OCR.
	Reason docfile.Reason
	// Confidence is how far the page's text can be trusted, in [0, 1]. A text-layer page: the
	// similarity of OCR's reading of its probes to the layer (1 where none could be compared:
	// a script the recognizer does not read, or no check); every region and word has it. An
	// OCR'd page: the mean confidence of its regions, weighted by their characters.
	Confidence float64
	// Check is what OCR of the layer's probes said, when they were read.
	Check *docfile.Check
	// Result holds the page's regions and text. For text-layer pages Timings are zero.
	Result *ocr.Result
	// Hidden counts the characters of the page's text layer that were dropped because no one
	// sees them (see docfile.Hidden): none of them is in Result.
	Hidden docfile.Hidden
	// Err is why the page could not be read, nil when it was: a *docfile.PageError whose Err
	// wraps the document package's sentinels, or is a *TooComplexError or a *CostError. Its
	// Result is then empty, and its Source Failed.
	Err error
}

// Result is a document read.
type Result struct {
	Format docfile.Format
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
// docfile.ErrTooLarge.
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

// Is makes errors.Is(err, docfile.ErrTooLarge) hold.
func (e *CostError) Is(target error) bool { return target == docfile.ErrTooLarge }

// ErrEngineStarting means the PDF engine was still being compiled when the request's deadline
// came. It matches docfile.ErrUnavailable; retrying shortly helps.
var ErrEngineStarting = fmt.Errorf("%w: the PDF engine is still starting", docfile.ErrUnavailable)

// surveyBytes bounds the Go memory of the survey beyond the engine, whatever its page count: a
// page's facts (at most 100 000 characters of text layer, under 100 bytes each) and the engine's
// page-object handles (pdfengine keeps at most 32 768 of them, about 4 MiB, before it moves the
// document to a fresh instance, plus what one page's facts take: 20 000 objects and 100 000
// characters at most). The text-layer pages read are the answer's, charged as it grows (Budget).
const surveyBytes = 32 << 20

// Deadline is the deadline of a document that reads pages pages and OCRs ocrPages of them: the
// request's Timeout, plus SurveyPageTimeout for every page read after the first and PageTimeout
// for every OCR'd page after the first, at most MaxTimeout from its start. Its survey has the
// deadline of a document that OCRs no page.
func (r *Reader) Deadline(req Request, pages, ocrPages int) time.Time {
	d := req.Timeout + time.Duration(max(0, ocrPages-1))*r.cfg.PageTimeout +
		time.Duration(max(0, pages-1))*r.cfg.SurveyPageTimeout
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
	render docfile.Cost
	hidden docfile.Hidden
	reason docfile.Reason
	check  *docfile.Check // what OCR of the layer's probes said, when they were read
	// points is the page's size in points where the engine draws it (not a TIFF page), so that
	// it can be drawn smaller when its OCR would not fit the request (see fit); zero otherwise.
	points [2]float64
	// raster is a TIFF page as the survey read it (its plan), for its job to decode.
	raster *docfile.Page
	// layer, when set, is the page answered from its text layer, and pictures the boxes of its
	// images that may be pictures of text the layer lacks (see docfile.Page.Pictures): the job
	// OCRs those boxes alone and adds what they read beside the layer's lines (see readPictures).
	layer    *Page
	pictures []image.Rectangle
}

// Read reads the selected pages of the document in req.Data, each job admitted by adm (nil
// admits everything at once): its survey (see Survey), then its pages that need OCR (see
// Plan.Read). ctx bounds everything: the service gives it the longest deadline a document may
// have and the request's CPU budget (see package cpubudget). Errors wrap the document package's
// sentinels, or are a *TooComplexError, a *CostError, a *cpubudget.Error, ErrEngineStarting,
// the pipeline's errors, the admitter's, or ctx's.
func (r *Reader) Read(ctx context.Context, p Pipeline, adm Admitter, req Request) (*Result, error) {
	pl, err := r.Survey(ctx, p, adm, req)
	if err != nil {
		return nil, err
	}
	return pl.Read(ctx)
}

// Plan is a document surveyed: every selected page's facts read, its text-layer pages answered,
// the pages that need OCR priced and counted against the request's budget. Read OCRs those
// pages; a plan that is not read must be closed (it may hold a TIFF open).
//
// A request that sends several documents surveys them all before it OCRs any page, so that a
// request whose documents hold more pages that need OCR than it may read is refused whole
// before a page is drawn.
type Plan struct {
	r    *Reader
	p    Pipeline
	adm  Admitter
	req  Request
	res  *Result
	todo []pending
	tiff *docfile.Document // a TIFF stays open from its survey until its last page is read
	done time.Time         // when the survey ended
}

// Survey runs a document's first job, its survey: it opens the document in req.Data, checks the
// selection, reads every selected page's facts and text layer, answers the text-layer pages,
// prices the others, and takes those from the request's budget (a *docfile.PageCountError when
// the request's documents hold more pages that need OCR than it allows). It runs within the
// request's Timeout until the selection is known, then within the Deadline of its pages, none
// OCR'd; it is priced in CPU time before it starts and as it goes (see price), and takes turns
// with other requests' jobs (see turnCPU). Errors are Read's.
func (r *Reader) Survey(ctx context.Context, p Pipeline, adm Admitter, req Request) (*Plan, error) {
	format := docfile.Detect(req.Data)
	if format == "" {
		return nil, fmt.Errorf("%w: expected a PDF or a multi-page TIFF", docfile.ErrNotDocument)
	}
	if format == docfile.FormatPDF {
		ready, cancel := context.WithDeadline(ctx, req.Start.Add(req.Timeout))
		err := r.docs.Ready(ready)
		late := ready.Err() != nil
		cancel()
		if err != nil {
			if late {
				return nil, ErrEngineStarting
			}
			return nil, err
		}
	}
	if adm == nil {
		adm = unbounded{}
	}
	if req.Budget == nil {
		req.Budget = NewBudget(r.cfg.Budget, nil)
	}
	res, todo, tiff, err := r.survey(ctx, p, adm, format, req)
	if err != nil {
		return nil, err
	}
	// Only pages that need OCR count against the request's OCR page limit; text-layer pages are
	// priced by their answer and their survey's CPU time. A text-layer page's pictures are read
	// while the limit allows, after the pages that need OCR: past it, the page is its layer alone.
	var whole, pictures []pending
	for _, t := range todo {
		if t.layer != nil {
			pictures = append(pictures, t)
		} else {
			whole = append(whole, t)
		}
	}
	pl := &Plan{r: r, p: p, adm: adm, req: req, res: res, todo: whole, tiff: tiff, done: time.Now()}
	if len(whole) > 0 {
		if err := req.Budget.takeOCRPages(len(whole), req.Mode == Always); err != nil {
			_ = pl.Close()
			return nil, err
		}
	}
	pl.todo = append(pl.todo, pictures[:req.Budget.spareOCRPages(len(pictures))]...)
	return pl, nil
}

// OCRPages is how many pages Read will OCR.
func (pl *Plan) OCRPages() int { return len(pl.todo) }

// Read renders and OCRs the pages the survey left for OCR (see Reader.ocrPages) within the
// Deadline of the document's pages, counted as if they had started when the survey ended: the
// time the plan waited to be read (while the request's other documents were surveyed) is not
// taken from them. It returns the document read, and closes the plan.
func (pl *Plan) Read(ctx context.Context) (*Result, error) {
	defer func() { _ = pl.Close() }()
	res, req := pl.res, pl.req
	if len(pl.todo) > 0 {
		deadline := pl.r.Deadline(req, len(res.Read), len(pl.todo)).Add(time.Since(pl.done))
		pages, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if err := pl.r.ocrPages(pages, pl.p, pl.adm, req, res, pl.todo, pl.tiff); err != nil {
			return nil, err
		}
	}
	// A document of which no page could be read fails as its first page did.
	if err := allFailed(res.Read); err != nil {
		return nil, err
	}
	texts := make([]string, len(res.Read))
	for i, pg := range res.Read {
		texts[i] = pg.Result.Text
	}
	res.Text = strings.Join(texts, PageSeparator)
	return res, nil
}

// Close releases what the plan holds. It is safe to call more than once.
func (pl *Plan) Close() error {
	if pl.tiff == nil {
		return nil
	}
	t := pl.tiff
	pl.tiff = nil
	return t.Close() // read only: closing frees memory, nothing to save
}

// allFailed returns the first page's error when no page was read, nil otherwise.
func allFailed(pages []Page) error {
	for _, pg := range pages {
		if pg.Err == nil {
			return nil
		}
	}
	if len(pages) == 0 {
		return nil
	}
	return pages[0].Err
}

// failPage records that page slot could not be read, when err is the page's own failure (see
// pageFailure), and reports whether it was; any other error ends the whole read.
func failPage(res *Result, slot, number int, err error, hidden docfile.Hidden) bool {
	pe := pageFailure(number, err)
	if pe == nil {
		return false
	}
	res.Read[slot] = Page{Number: number, Source: Failed, Result: &ocr.Result{}, Hidden: hidden, Err: pe}
	return true
}

// pageFailure returns err as the failure of page number alone (the other pages of the document
// are read), or nil when err is not the page's: the request's deadline or cancellation, its
// admission, its answer, page or CPU budget, the model runtime. A page fails alone when it
// cannot be read, drawn or decoded, is too complex to draw within the engine's limits, costs
// more memory than a request may, or panicked in reading (a *work.Panic: an internal error of
// that page's, the service's fault, which costs the page and nothing more).
func pageFailure(number int, err error) *docfile.PageError {
	var (
		pe *docfile.PageError
		tc *TooComplexError
		ce *CostError
		wp *work.Panic
	)
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrAnswerTooLarge), errors.Is(err, docfile.ErrTooManyPages), errors.Is(err, docfile.ErrUnavailable),
		errors.Is(err, cpubudget.ErrExceeded):
		return nil
	case errors.As(err, &wp):
		return &docfile.PageError{Page: number, Err: wp}
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &tc):
		if tc.Page == 0 {
			tc = &TooComplexError{Page: number, Limit: tc.Limit}
		}
		return &docfile.PageError{Page: number, Err: tc}
	case errors.As(err, &ce):
		return &docfile.PageError{Page: number, Err: err}
	case errors.Is(err, docfile.ErrCorrupt), errors.Is(err, docfile.ErrTooLarge), errors.Is(err, docfile.ErrDegenerate),
		errors.Is(err, docfile.ErrUnsupported), errors.Is(err, docfile.ErrTooComplex):
		return &docfile.PageError{Page: number, Err: err}
	}
	return nil
}

// SurveyCost is what the first job of a PDF asks admission for when its request holds held
// bytes: the engine's cap and the survey's own memory. A memory plan whose largest request is
// less refuses every PDF (413 document_too_large), so the plan is derived with it in mind.
func (r *Reader) SurveyCost(held int64) int64 {
	return addCost(held, r.cfg.EngineMemory, surveyBytes)
}

// engineCost is what a job that opens the document holds in the engine.
func (r *Reader) engineCost(format docfile.Format) int64 {
	if format == docfile.FormatPDF {
		return r.cfg.EngineMemory
	}
	return 0
}

// ocrPages renders and OCRs the pages the survey left, up to Parallel at once, each admitted on
// its own and each a unit of work ("document page"). A page that fails alone (see pageFailure;
// a page that panics among them) is answered with its error; the first other error stops the
// rest.
func (r *Reader) ocrPages(ctx context.Context, p Pipeline, adm Admitter, req Request, res *Result, todo []pending, tiff *docfile.Document) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opt := p.Options()
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; cancel(err) })
	}
	// What a page holds at its peak: its pixels throughout; with them the engine while it is
	// drawn, then the models' tensors (the engine instance is closed before OCR starts).
	cost := func(c docfile.Cost) int64 {
		return addCost(req.Held, c.Bytes, max(r.engineCost(res.Format), opt.ModelBytes(c.Width, c.Height)))
	}
	affordable := todo[:0]
	for _, t := range todo {
		t.cost = cost(t.render)
		if t.layer != nil && req.MaxCost > 0 && t.cost > req.MaxCost {
			// Its pictures are not read: the page is answered from its layer alone, as before.
			continue
		}
		if req.MaxCost > 0 && t.cost > req.MaxCost && t.raster != nil && tiff != nil {
			// A TIFF page too large to read whole is read smaller, at the largest size that
			// fits (see docfile.Document.Smaller); its boxes stay in the page's own pixels.
			for k := 2; k <= imaging.MaxShrink; k++ {
				s, ok := tiff.Smaller(t.raster, k)
				if !ok {
					break
				}
				if c := cost(s.RenderCost(0)); c <= req.MaxCost {
					t.raster, t.render, t.cost = s, s.RenderCost(0), c
					break
				}
			}
		}
		if req.MaxCost > 0 && t.cost > req.MaxCost {
			// A page drawn finer than the request affords (a 2 400 dpi scan, a poster) is drawn
			// smaller, down to half its resolution; only a page that does not fit even so fails,
			// alone, before any page is drawn.
			s, c, ok := r.fit(t, req.MaxCost, cost)
			if !ok {
				failPage(res, t.slot, t.number, &CostError{Page: t.number, Width: t.render.Width, Height: t.render.Height, Cost: t.cost, Limit: req.MaxCost}, t.hidden)
				continue
			}
			t.scale, t.render, t.cost = s, c, cost(c)
			res.Read[t.slot].Width, res.Read[t.slot].Height = c.Width, c.Height
		}
		affordable = append(affordable, t)
	}
	errs := work.Each(ctx, len(affordable), r.cfg.Parallel, "document page", func(ctx context.Context, i int) error {
		t := affordable[i]
		pg, err := r.ocrPage(ctx, p, adm, req, t, tiff)
		if err != nil {
			// The page's own failure is its answer; anything else ends the read.
			if ctx.Err() != nil || pageFailure(t.number, err) == nil {
				fail(err)
			}
			return err
		}
		res.Read[t.slot] = pg
		return nil
	})
	if first != nil {
		return first
	}
	for i, err := range errs {
		t := affordable[i]
		if err != nil && !failPage(res, t.slot, t.number, err, t.hidden) {
			// The deadline (or the caller) ended the read before the page started.
			return err
		}
	}
	return nil
}

// ocrPage is one page's job: admitted, it opens the document (a PDF; a TIFF is the survey's, still
// open), reads the page again, renders it, closes the document and runs the pipeline on the render.
func (r *Reader) ocrPage(ctx context.Context, p Pipeline, adm Admitter, req Request, t pending, tiff *docfile.Document) (Page, error) {
	release, err := r.admit(ctx, adm, req, t.cost, t.number, t.render)
	if err != nil {
		return r.layerAlone(t, err)
	}
	// A scan's decode cannot be stopped: abandoned at the deadline, it keeps the page's
	// admission (the lease it holds) until it really ends.
	lease, release := admission.Share(release)
	defer release()
	dec, err := r.render(ctx, req.Data, t, tiff, lease)
	if err != nil {
		return r.layerAlone(t, err)
	}
	if t.layer != nil {
		pg, err := r.readPictures(ctx, p, req, t, dec)
		if err != nil {
			return r.layerAlone(t, err)
		}
		return pg, nil
	}
	res, err := p.RunImage(ctx, dec)
	if err != nil {
		return Page{}, err
	}
	if err := req.Budget.addAnswer(answerBytes(res, req.Words)); err != nil {
		return Page{}, err
	}
	return Page{Number: t.number, Width: res.Width, Height: res.Height, Source: OCR, Reason: t.reason, Check: t.check,
		Confidence: confidence(res), Result: res, Hidden: t.hidden}, nil
}

// fitSteps is how many halvings of the interval fit's search takes: the scale it finds is within
// a millionth of the largest that fits.
const fitSteps = 20

// fit finds the largest scale, down to half the page's own, at which drawing page t and reading
// it costs no more than limit. Half still reads: the scale policy draws a page's known text 24 px
// tall (12 px at half), other pages at 200 dpi, and a scan at its own resolution, and pages too
// large for a request are mostly scans of 300 dpi or more, or posters of large print. A TIFF
// page is not drawn, and is never made smaller.
func (r *Reader) fit(t pending, limit int64, cost func(docfile.Cost) int64) (float64, docfile.Cost, bool) {
	w, h := t.points[0], t.points[1]
	lo := t.scale / 2
	if w <= 0 || h <= 0 || !(lo < t.scale) {
		return 0, docfile.Cost{}, false
	}
	c := docfile.DrawnCost(w, h, lo)
	if cost(c) > limit {
		return 0, docfile.Cost{}, false
	}
	hi := t.scale
	for range fitSteps {
		mid := (lo + hi) / 2
		if cost(docfile.DrawnCost(w, h, mid)) <= limit {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, docfile.DrawnCost(w, h, lo), true
}

// render draws one page, under the page's lease, with the document open only for that long; a TIFF (doc, open since the
// survey) is decoded from the chain already walked.
func (r *Reader) render(ctx context.Context, data []byte, t pending, doc *docfile.Document, lease imaging.Lease) (imaging.Decoded, error) {
	if doc == nil {
		var err error
		if doc, err = r.open(ctx, data); err != nil {
			return imaging.Decoded{}, err
		}
		defer func() { _ = doc.Close() }() // only read: closing frees the engine
	}
	var dec imaging.Decoded
	err := r.op(ctx, t.number, func(ctx context.Context) (err error) {
		page := t.raster
		if page == nil {
			if page, err = doc.Page(ctx, t.number); err != nil {
				return err
			}
		}
		dec, err = doc.Render(ctx, page, t.scale, lease)
		return err
	})
	return dec, err
}

// admit checks a job's cost against the per-request limit and has it admitted.
func (r *Reader) admit(ctx context.Context, adm Admitter, req Request, cost int64, page int, c docfile.Cost) (func(), error) {
	if req.MaxCost > 0 && cost > req.MaxCost {
		return nil, &CostError{Page: page, Width: c.Width, Height: c.Height, Cost: cost, Limit: req.MaxCost}
	}
	return adm.Admit(ctx, cost)
}

// addCost adds memory costs, saturating at math.MaxInt64: a page's announced cost may already be
// the largest value (a render that cannot be sized), and a sum that wrapped to a negative number
// would pass every limit.
func addCost(costs ...int64) int64 {
	var sum int64
	for _, c := range costs {
		if c < 0 || sum > math.MaxInt64-c {
			return math.MaxInt64
		}
		sum += c
	}
	return sum
}

// unbounded admits every job at once: Read with a nil Admitter.
type unbounded struct{}

func (unbounded) Admit(context.Context, int64) (func(), error) { return func() {}, nil }

func (r *Reader) open(ctx context.Context, data []byte) (*docfile.Document, error) {
	var doc *docfile.Document
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

// confidence is an OCR'd page's: the mean of its regions' confidences, weighted by their
// characters; 0 for a page without text.
func confidence(res *ocr.Result) float64 {
	var sum, n float64
	for _, r := range res.Regions {
		k := float64(len([]rune(r.Text)))
		sum += k * float64(r.Score)
		n += k
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// Open opens a document with the Reader's engine, for a caller that needs its structure alone
// (a job's plan: its page count and format). Close it when done.
func (r *Reader) Open(ctx context.Context, data []byte) (*docfile.Document, error) {
	return r.docs.Open(ctx, data)
}
