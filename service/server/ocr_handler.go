package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/export"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/work"
)

// ocrHandler reads the image or document sent (as base64 JSON, as the body itself, or as a form's
// file part), or each of several ("images", or several file parts).
func (s *Server) ocrHandler(c *fiber.Ctx) error {
	start := time.Now()
	ctx, cancel := s.requestContext(c)
	defer cancel()
	// The cheap refusal comes first: a saturated service answers 429 without receiving the body,
	// parsing JSON and decoding megabytes of base64 it would then have to drop. The request
	// takes its place in the gate once its body is here (see full).
	if err := s.full(); err != nil {
		return err
	}
	req, err := s.readRequest(ctx, c, ocrEndpoint)
	if err != nil {
		return err
	}
	format, err := answerFormat(req.read.Format, c.Get(fiber.HeaderAccept))
	if err != nil {
		return err
	}
	leave, err := s.enter()
	if err != nil {
		return err
	}
	defer leave()
	r, err := s.newReading(req.read)
	if err != nil {
		return err
	}
	// What the answer holds stays charged until it is written (c.JSON encodes it at once).
	defer r.budget.Release()
	if format == export.HOCR || format == export.ALTO || format == export.PDF {
		// They place every word; the answer is priced with them (see export.Write).
		r.opt.words = true
	}
	switch {
	case req.both:
		return badRequest("image_and_images", `send one image in "image" or several in "images", not both`)
	case req.batch && format != export.JSON:
		return badRequest("format_not_for_batch", `several images are answered in JSON only; send them one by one for "format" %s`, format)
	case req.batch:
		return s.readBatch(ctx, c, r, req.images, start)
	case len(req.images) == 0:
		return req.missing()
	}
	ans, err := r.read(ctx, req.images[0].data, start)
	if err != nil {
		return err
	}
	if format == export.PDF {
		if doc, ok := ans.(api.DocumentResult); ok {
			return r.writeDocumentPDF(ctx, c, req.images[0].data, doc)
		}
		return r.writePDF(ctx, c, req.images[0].data, ans)
	}
	return s.writeAnswer(c, format, ans)
}

// reading is one request's reading: its options, its pipeline and its admission.
type reading struct {
	s   *Server
	opt readOptions
	rec Recognizer
	// held is what the request holds in memory besides the image being read: for an "images"
	// array, every entry. (Its body is admitted on its own, as it is read: see body.go.)
	held int64
	adm  *requestAdmission
	// budget bounds what the request's documents read and answer, across an "images" array.
	budget *document.Budget
	// job: the reading is a job's page, its document mapped from a file (see jobReader).
	job bool
}

// newReading checks the request's read fields and picks the pipeline they ask for: the service's
// own, or one with the request's options.
func (s *Server) newReading(f readFields) (*reading, error) {
	opt, err := parseReadFields(f, s.ocr.Options())
	if err != nil {
		return nil, err
	}
	rec := s.ocr
	if opt.pipeline != nil {
		p, err := s.ocr.With(*opt.pipeline)
		if err != nil {
			return nil, badRequest("invalid_option", `"options" cannot be used: %v`, err)
		}
		rec = p
	}
	if opt.lang != "" {
		p, err := rec.Lang(opt.lang)
		if lerr := (*ocr.LanguageError)(nil); errors.As(err, &lerr) {
			// The code sent is not repeated back: error bodies never carry the request's words.
			return nil, badRequest("lang_not_loaded", `"lang" names a language this server has not loaded; it reads %s`, strings.Join(lerr.Loaded, ", "))
		} else if err != nil {
			return nil, err
		}
		rec = p
	}
	var lim document.BudgetLimits
	if s.opt.Documents != nil {
		lim = s.opt.Documents.Config().Budget
	}
	var charge func(int64) func()
	if s.opt.Gate != nil {
		charge = s.opt.Gate.Charge
	}
	return &reading{s: s, opt: opt, rec: rec, adm: &requestAdmission{s: s}, budget: document.NewBudget(lim, charge)}, nil
}

// read reads one image or document sent in the request, whose reading started at start, and
// returns its answer.
func (r *reading) read(ctx context.Context, data []byte, start time.Time) (any, error) {
	if r.isDocument(data) {
		res, err := r.document(ctx, data, start)
		if err != nil {
			return nil, err
		}
		return newDocumentResponse(res, r.opt.words, time.Since(start)), nil
	}
	res, err := r.image(ctx, data, start)
	if err != nil {
		return nil, err
	}
	return newOCRResponse(res, len(data), r.opt.words, time.Since(start)), nil
}

// isDocument reports whether data is read as a document (page by page) rather than an image.
func (r *reading) isDocument(data []byte) bool {
	return r.s.opt.Documents != nil && docfile.Detect(data) != ""
}

// image runs OCR on one image within RequestTimeout of start.
func (r *reading) image(ctx context.Context, data []byte, start time.Time) (*ocr.Result, error) {
	if r.opt.pages != "" {
		if _, err := docfile.ParsePages(r.opt.pages, 1, 0); err != nil {
			return nil, selectionError(err, anImage)
		}
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(r.s.opt.RequestTimeout))
	defer cancel()
	h, lease, release, err := r.admitImage(ctx, data)
	if err != nil {
		return nil, err
	}
	defer release()
	return r.s.runOCR(ctx, r.rec, data, h, lease)
}

// document reads a PDF or multi-page TIFF page by page (see package document), each page admitted
// on its own: its survey, then its pages that need OCR.
func (r *reading) document(ctx context.Context, data []byte, start time.Time) (*document.Result, error) {
	pl, err := r.survey(ctx, data, start)
	if err != nil {
		return nil, err
	}
	return r.finish(ctx, pl)
}

// survey surveys a document sent in the request, whose reading started at start (see
// document.Reader.Survey): its text-layer pages are read, its pages that need OCR counted against
// the request's budget.
func (r *reading) survey(ctx context.Context, data []byte, start time.Time) (*document.Plan, error) {
	docs, held := r.s.opt.Documents, int64(len(data))
	if r.job {
		docs, held = r.s.jobDocs, mappedHeld(len(data))
	}
	pl, err := docs.Survey(ctx, meteredPipeline{r.rec, r.s}, r.adm, document.Request{
		Data:    data,
		Pages:   r.opt.pages,
		Mode:    r.opt.mode,
		Held:    r.held + held,
		MaxCost: r.s.opt.MaxRequestCost,
		Start:   start,
		Timeout: r.s.opt.RequestTimeout,
		Words:   r.opt.words,
		Budget:  r.budget,
	})
	if err != nil {
		var se *docfile.SelectionError
		if errors.As(err, &se) {
			return nil, selectionError(err, aDocument)
		}
		return nil, err
	}
	return pl, nil
}

// finish OCRs the pages a document's survey left (see document.Plan.Read) and returns the
// document read.
func (r *reading) finish(ctx context.Context, pl *document.Plan) (*document.Result, error) {
	res, err := pl.Read(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range res.Read {
		r.s.metrics.Page(string(p.Source))
	}
	return res, nil
}

// admitImage checks the image's header, works out what the request will hold in memory, refuses
// it (413) when that is more than one request may cost, or when the CPU time the image is
// estimated to take (Recognizer.CPUCost) does not fit what is left of the request's CPU budget
// (413 cpu_budget_exceeded), and otherwise waits for the gate to admit that much memory. The
// admission is returned as a lease, which the pipeline hands to work the request abandons at its
// deadline but cannot stop (a decoder), so that it keeps the admission until that work really
// ends; release is the request's own end of it.
//
// The cost is the image's bytes (decoded from base64, or the body itself), what else the request
// holds (held) and what the pipeline holds for this image at its peak (ocr.Options.Cost). The
// body is admitted apart, by its own budget, while it is read and until the request ends. The
// header is returned for the decode, which reads the image from it.
func (r *reading) admitImage(ctx context.Context, img []byte) (imaging.Header, *admission.Lease, func(), error) {
	h, err := r.rec.Inspect(ctx, img)
	if err != nil {
		return imaging.Header{}, nil, nil, err
	}
	cost := r.held + int64(len(img)) + r.rec.Cost(h)
	if max := r.s.opt.MaxRequestCost; max > 0 && cost > max {
		// A TIFF page too large to read whole is read smaller, as a PDF page is drawn smaller:
		// at the largest size that fits (see imaging.Header.Smaller).
		for k := 2; k <= imaging.MaxShrink; k++ {
			s, ok := h.Smaller(k)
			if !ok {
				break
			}
			if c := r.held + int64(len(img)) + r.rec.Cost(s); c <= max {
				h, cost = s, c
				break
			}
		}
	}
	if max := r.s.opt.MaxRequestCost; max > 0 && cost > max {
		r.s.rejected("too_costly")
		return imaging.Header{}, nil, nil, tooCostly(h, cost, max)
	}
	if err := cpubudget.From(ctx).Plan(r.rec.CPUCost(h)); err != nil {
		return imaging.Header{}, nil, nil, err
	}
	release, err := r.adm.Admit(ctx, cost)
	if err != nil {
		return imaging.Header{}, nil, nil, err
	}
	lease, release := admission.Share(release)
	return h, lease, release, nil
}

// requestAdmission admits the jobs of one request: an image, a document's survey and pages, the
// entries of an "images" array. The first goes through Acquire, which may refuse it when the
// service is full (429: nothing has been done yet); the rest, once the request is in, through
// Continue, which waits its turn among other requests' jobs without refusing it half-way.
type requestAdmission struct {
	s        *Server
	admitted atomic.Bool
}

// Admit admits one job of the request (see requestAdmission). A job counts in
// ocrgate_jobs_in_flight from its admission until its release: work the request
// has abandoned but cannot stop (a decode holding the job's lease, see admitImage) keeps the job
// admitted, and counted, until it really ends.
func (a *requestAdmission) Admit(ctx context.Context, cost int64) (func(), error) {
	release, err := a.admit(ctx, cost)
	if err != nil {
		return nil, err
	}
	m := a.s.metrics
	m.JobStarted()
	return sync.OnceFunc(func() {
		m.JobDone()
		release()
	}), nil
}

func (a *requestAdmission) admit(ctx context.Context, cost int64) (func(), error) {
	g := a.s.opt.Gate
	if g == nil {
		return func() {}, nil
	}
	if a.admitted.Load() {
		return g.Continue(ctx, cost)
	}
	release, err := g.Acquire(ctx, cost)
	if err != nil {
		if errors.Is(err, admission.ErrOverloaded) {
			a.s.rejected("overloaded")
		}
		return nil, err
	}
	a.admitted.Store(true)
	return release, nil
}

// runOCR runs one OCR job on the image whose header admission read, admitted under lease, and
// records its stage metrics. The job's CPU time is charged to the request's budget as it runs
// (see charged).
func (s *Server) runOCR(ctx context.Context, rec Recognizer, img []byte, h imaging.Header, lease *admission.Lease) (*ocr.Result, error) {
	res, err := charged(ctx, func(ctx context.Context) (*ocr.Result, error) { return rec.RunAdmitted(ctx, img, h, lease) })
	if err != nil {
		return nil, err
	}
	s.metrics.Stages(&res.Timings)
	return res, nil
}

// charged runs an OCR job on the calling goroutine under the request's CPU budget
// (cpubudget.Run): what this goroutine's thread spends is charged as it is spent, and the job is
// stopped once the budget is used up. The goroutines the job starts charge the same budget: the
// decode under a Run of its own (imaging), the recognizer's batches, whose single-threaded model
// runs are the bulk of an image's CPU, and every loop spread over the cores through package work
// or the JPEG decoder's workers (cpubudget.Inherit); the detector's ONNX Runtime threads are
// charged from the calling thread's share (ocr.ThreadReporter).
func charged(ctx context.Context, job func(ctx context.Context) (*ocr.Result, error)) (*ocr.Result, error) {
	var res *ocr.Result
	_, err := cpubudget.Run(ctx, func(ctx context.Context) (err error) {
		res, err = job(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// meteredPipeline is the request's pipeline as the document reader runs it on document pages, with the same
// stage metrics as an image's run (its jobs are counted by their admission: see Admit).
type meteredPipeline struct {
	Recognizer
	s *Server
}

func (m meteredPipeline) RunImage(ctx context.Context, dec imaging.Decoded) (*ocr.Result, error) {
	res, err := charged(ctx, func(ctx context.Context) (*ocr.Result, error) { return m.Recognizer.RunImage(ctx, dec) })
	if err != nil {
		return nil, err
	}
	m.s.metrics.Stages(&res.Timings)
	return res, nil
}

// readBatch reads every entry of an "images" array and answers them in order, each a single
// /ocr answer or an error of its own (a unit of work: its panic is its own 500 internal_error).
//
// Every document among them is surveyed first (its text-layer pages read, its pages that need
// OCR counted against the request's budget), then the images and the documents' other pages are
// read: a request whose documents hold more pages that need OCR than it may read is refused
// whole (413) before any page is drawn or any image read.
func (s *Server) readBatch(ctx context.Context, c *fiber.Ctx, r *reading, items []imageItem, start time.Time) error {
	if len(items) == 0 {
		return badRequest("empty_images", `"images" is empty; send at least one image`)
	}
	if s.opt.MaxImages > 0 && len(items) > s.opt.MaxImages {
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "too_many_images",
			msg: batchLimitMessage(len(items), s.opt.MaxImages)}
	}
	for _, it := range items {
		r.held += int64(len(it.data))
	}
	log := s.logger(c)
	results := make([]any, len(items))
	plans := make([]*document.Plan, len(items))
	starts := make([]time.Time, len(items))
	defer func() {
		for _, pl := range plans {
			if pl != nil {
				_ = pl.Close() // a plan not read holds what its survey left open
			}
		}
	}()
	survey := func(ctx context.Context, i int) error {
		if items[i].err != nil || !r.isDocument(items[i].data) {
			return nil
		}
		starts[i] = time.Now()
		pl, err := r.survey(ctx, items[i].data, starts[i])
		plans[i] = pl
		return err
	}
	if err := s.readEntries(ctx, r, results, log, survey); err != nil {
		return err
	}
	// Over the request's page budget: refused whole, before any page is drawn.
	if err := r.budget.Exceeded(); err != nil {
		return err
	}
	read := func(ctx context.Context, i int) error {
		switch {
		case items[i].err != nil:
			return items[i].err
		case results[i] != nil: // its survey failed
			return nil
		case plans[i] != nil:
			res, err := r.finish(ctx, plans[i])
			if err == nil {
				results[i] = newDocumentResponse(res, r.opt.words, time.Since(starts[i]))
			}
			return err
		}
		ans, err := r.read(ctx, items[i].data, time.Now())
		if err == nil {
			results[i] = ans
		}
		return err
	}
	if err := s.readEntries(ctx, r, results, log, read); err != nil {
		return err
	}
	// A request whose answer is too large to send is refused whole: which entries crossed the
	// bound depends on the order they ran in.
	if err := r.budget.Exceeded(); err != nil {
		return err
	}
	return c.JSON(api.BatchResult[any]{Version: Version, Results: results, ProcessingTime: round(time.Since(start).Seconds(), 4)})
}

// readEntries runs fn for every entry of an "images" array, each a unit of work whose error is
// its own answer (in results), up to the gate's in-flight bound at once, each admitted on its
// own; until the request has been admitted once they run one at a time, so that a full service
// refuses the request (429, returned) instead of answering it with refusals.
func (s *Server) readEntries(ctx context.Context, r *reading, results []any, log *slog.Logger, fn func(ctx context.Context, i int) error) error {
	parallel := 1
	first := 0
	if s.opt.Gate != nil {
		parallel = max(1, s.opt.Gate.Options().MaxRunning)
		for ; first < len(results) && !r.adm.admitted.Load(); first++ {
			err := work.Do(ctx, "image", func() error { return fn(ctx, first) })
			if errors.Is(err, admission.ErrOverloaded) && !r.adm.admitted.Load() {
				return err // nothing read yet
			}
			if err != nil {
				results[first] = s.itemError(log, err)
			}
		}
	}
	errs := work.Each(ctx, len(results)-first, parallel, "image", func(ctx context.Context, i int) error { return fn(ctx, first+i) })
	for i, err := range errs {
		if err != nil {
			results[first+i] = s.itemError(log, err)
		}
	}
	return nil
}

// itemError is the answer of one entry of an "images" array that failed: the error it would
// have been alone, with its status.
func (s *Server) itemError(log *slog.Logger, err error) api.ItemError {
	ae := classify(err)
	s.countRefusal(ae)
	if ae.runtimeKind != "" {
		s.metrics.RuntimeError(ae.runtimeKind)
	}
	level := slog.LevelDebug
	if ae.status >= 500 {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "image of a batch failed", "status", ae.status, "code", ae.code, "err", err)
	return api.ItemError{Error: ae.msg, Code: ae.code, Status: ae.status}
}

// batchLimitMessage says how many entries an "images" array may have.
func batchLimitMessage(n, limit int) string {
	return fmt.Sprintf(`"images" holds %d entries; the limit is %d per request`, n, limit)
}
