package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/export"
	"github.com/ocrgate/ocrgate/service/jobs"
)

// jobSpec is how a job's pages are read: the request's read fields, kept as they were sent and
// checked at submission, then applied to each page with "pages" set to that page.
type jobSpec struct {
	Pages   json.RawMessage `json:"pages,omitempty"`
	OCR     json.RawMessage `json:"ocr,omitempty"`
	Words   json.RawMessage `json:"words,omitempty"`
	Options json.RawMessage `json:"options,omitempty"`
	Lang    json.RawMessage `json:"lang,omitempty"`
	Flat    bool            `json:"flat,omitempty"`
}

func (sp jobSpec) fields() readFields {
	return readFields{Pages: sp.Pages, OCR: sp.OCR, Words: sp.Words, Options: sp.Options, Lang: sp.Lang, flat: sp.Flat}
}

// errJobsOff answers the job routes of a service that runs no jobs.
var errJobsOff = &apiError{status: fiber.StatusNotFound, code: "jobs_disabled", msg: "this service does not run jobs (OCRGATE_JOBS=false)"}

// submitJob is POST /jobs: what POST /ocr takes, stored durably and read page by page by the
// workers; 202 with Location once the document and its page tasks are stored.
func (s *Server) submitJob(c *fiber.Ctx) error {
	if s.opt.Jobs == nil {
		return errJobsOff
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.submitTimeout())
	defer cancel()
	doc, f, err := s.jobBody(ctx, c)
	if err != nil {
		return err
	}
	// A client that stops sending, or a shutdown, ends a body being streamed into the store at
	// once (see interruptReads).
	defer interruptReads(ctx, c)()
	if present(f.Format) {
		// A job's result is the JSON of GET /jobs/{id}; a format it would not be answered in is
		// refused rather than dropped.
		if fm, err := answerFormat(f.Format, ""); err != nil {
			return err
		} else if fm != export.JSON {
			return badRequest("format_not_for_jobs", `a job takes no "format": ask GET /jobs/{id} for the result as text, hocr or alto`)
		}
	}
	// newReading checks what each page's reading will: the options and a language that is loaded,
	// so that a job that cannot be read is refused now, not page by page.
	rd, err := s.newReading(f)
	if err != nil {
		return err
	}
	ro := rd.opt
	spec, _ := json.Marshal(jobSpec{Pages: f.Pages, OCR: f.OCR, Words: f.Words, Options: f.Options, Lang: f.Lang, Flat: f.flat})
	max := s.opt.Jobs.Config().MaxPages
	j, created, err := s.opt.Jobs.Submit(ctx, jobs.Submission{
		Owner: s.owner(c), IdempotencyKey: c.Get("Idempotency-Key"), Spec: spec, Document: doc,
		Plan: func(ctx context.Context, data []byte) (jobs.Plan, error) {
			if s.jobDocs == nil || docfile.Detect(data) == "" {
				return s.planImage(ctx, data, ro.pages)
			}
			d, err := s.jobDocs.Open(ctx, data)
			if err != nil {
				return jobs.Plan{}, err
			}
			defer func() { _ = d.Close() }()
			n := d.NumPages()
			pages, err := docfile.ParsePages(ro.pages, n, max)
			if err != nil && ro.pages == "" && n > max {
				return jobs.Plan{}, fmt.Errorf("%w: %d pages; the limit is %d", jobs.ErrTooMany, n, max)
			}
			if err != nil {
				return jobs.Plan{}, selectionError(err, aDocument)
			}
			return jobs.Plan{Format: string(d.Format()), Total: n, Pages: pages}, nil
		},
	})
	if err != nil {
		return err
	}
	c.Location("/jobs/" + j.ID)
	if created {
		c.Status(fiber.StatusAccepted)
	}
	return c.JSON(newJob(j, nil))
}

// submitTimeout bounds a submission: the request's timeout and a minute to store and plan the
// document, and as long as its body may take to arrive at minUploadRate.
func (s *Server) submitTimeout() time.Duration {
	d := s.opt.RequestTimeout + time.Minute
	if s.opt.Jobs != nil {
		d += time.Duration(s.opt.Jobs.Config().MaxBytes/minUploadRate) * time.Second
	}
	return d
}

// minUploadRate is the slowest upload, in bytes a second, that a job's largest document may
// arrive at before its submission's deadline (256 MiB: four minutes and a quarter).
const minUploadRate = 1 << 20

// jobBodyLimit is the framing guard's body limit for POST /jobs (see Options.JobMaxBytes).
func jobBodyLimit(n int64) func(method, path []byte) int64 {
	if n <= 0 {
		return nil
	}
	return func(method, path []byte) int64 {
		if string(method) == fiber.MethodPost && string(path) == "/jobs" {
			return n
		}
		return 0
	}
}

// planImage plans the job of a single image: one page, read as /ocr reads the image. Its header
// is checked now, as /ocr checks it before any work (an unknown format is 415, a header that
// does not parse 422, an image past the pixel limits 413), so that a job that cannot be read is
// refused at submission.
func (s *Server) planImage(ctx context.Context, data []byte, pages string) (jobs.Plan, error) {
	if pages != "" {
		if _, err := docfile.ParsePages(pages, 1, 0); err != nil {
			return jobs.Plan{}, selectionError(err, anImage)
		}
	}
	h, err := s.ocr.Inspect(ctx, data)
	if err != nil {
		return jobs.Plan{}, err
	}
	return jobs.Plan{Format: h.Format, Total: 1, Pages: []int{1}, Image: true}, nil
}

// jobBody is the document a job is submitted with and its read fields. A raw body (the file
// itself) is streamed into the store as it arrives; a JSON or form body is read as /ocr reads it.
func (s *Server) jobBody(ctx context.Context, c *fiber.Ctx) (io.Reader, readFields, error) {
	kind, _, err := mediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return nil, readFields{}, err
	}
	if kind == rawBody {
		flat := flatParams{}
		if err := flat.fromQuery(c, ocrEndpoint); err != nil {
			return nil, readFields{}, err
		}
		f, _ := flat.fields()
		r, _ := bodyStream(c)
		if conn := c.Context().Conn(); conn != nil {
			// A document of hundreds of megabytes takes longer to arrive than a request's
			// read timeout allows: its body has until the submission's deadline.
			if dl, ok := ctx.Deadline(); ok {
				_ = conn.SetReadDeadline(dl)
			}
		}
		return r, f, nil
	}
	req, err := s.readRequest(ctx, c, ocrEndpoint)
	if err != nil {
		return nil, readFields{}, err
	}
	switch {
	case req.both || req.batch:
		return nil, readFields{}, badRequest("images_not_supported", "a job reads one document: send it in \"image\" or as one file")
	case len(req.images) == 0:
		return nil, readFields{}, req.missing()
	case req.images[0].err != nil:
		return nil, readFields{}, req.images[0].err
	}
	return bytes.NewReader(req.images[0].data), req.read, nil
}

// getJob is GET /jobs/{id}, and with ?wait=30s waits for the job to change first.
func (s *Server) getJob(c *fiber.Ctx) error {
	if s.opt.Jobs == nil {
		return errJobsOff
	}
	id, owner := c.Params("id"), s.owner(c)
	f, err := jobResultFormat(c)
	if err != nil {
		return err
	}
	j, err := s.opt.Jobs.Get(c.UserContext(), id, owner)
	if err != nil {
		return err
	}
	if w := c.Query("wait"); w != "" && !j.State.Final() {
		d, err := time.ParseDuration(w)
		if err != nil || d < 0 {
			return badRequest("invalid_wait", `"wait" must be a duration such as "30s"`)
		}
		ctx, cancel := context.WithTimeout(c.UserContext(), min(d, maxJobWait, s.opt.RequestTimeout))
		defer cancel()
		if j, err = s.opt.Jobs.Wait(ctx, id, owner, j); err != nil {
			return err
		}
	}
	if f != export.JSON && !j.State.Final() {
		c.Set(fiber.HeaderRetryAfter, "2")
		return &apiError{status: fiber.StatusConflict, code: "job_not_finished",
			msg: fmt.Sprintf("the job is %s: its result in %s is there once it has finished (wait with ?wait=30s)", j.State, f)}
	}
	if f != export.JSON && j.State == jobs.Canceled {
		return &apiError{status: fiber.StatusConflict, code: "job_not_finished", msg: "the job was canceled: it has no result"}
	}
	out := newJob(j, nil)
	// A job whose every page failed has its pages' answers too: each says why (pages[i].error).
	switch {
	case j.Image && (j.State == jobs.Succeeded || j.State == jobs.Failed):
		if err := s.imageResult(c.UserContext(), j, &out); err != nil {
			return err
		}
	case j.State == jobs.Succeeded || j.State == jobs.Failed:
		if out.Result, err = s.jobResult(c.UserContext(), j); err != nil {
			return err
		}
	case !j.State.Final():
		c.Set(fiber.HeaderRetryAfter, "2")
	}
	switch {
	case f == export.JSON:
		return c.JSON(out)
	case out.ImageResult != nil:
		return s.writeAnswer(c, f, *out.ImageResult)
	case out.Result != nil:
		return s.writeAnswer(c, f, *out.Result)
	}
	// A failed image job has no answer to write, only its error.
	return &apiError{status: fiber.StatusConflict, code: "job_not_finished", msg: "the job failed: it has no result to write; its JSON says why"}
}

// jobResultFormat is the form GET /jobs/{id} answers a finished job's result in: "format" as a
// query parameter, else the Accept header, as /ocr chooses; JSON (the job and its result) by
// default. A searchable PDF is written over the document, and a job keeps no document once its
// pages are read: pdf is refused here with what to do instead.
func jobResultFormat(c *fiber.Ctx) (export.Format, error) {
	var member json.RawMessage
	if q := c.Query("format"); q != "" {
		member, _ = json.Marshal(q)
	}
	f, err := answerFormat(member, c.Get(fiber.HeaderAccept))
	if err != nil {
		return "", err
	}
	if f == export.PDF {
		return "", badRequest("format_not_for_jobs", `a job's result is not kept as a PDF: ask for json, text, hocr or alto, or send the document to /ocr with "format" "pdf"`)
	}
	return f, nil
}

// imageResult puts the answer of a single image's job in out: /ocr's answer for the image, or,
// for a failed one, the error /ocr would have answered in the job's error.
func (s *Server) imageResult(ctx context.Context, j *jobs.Job, out *api.Job) error {
	raw, err := s.opt.Jobs.Result(ctx, j)
	if err != nil {
		return err
	}
	if len(raw) != 1 || raw[0] == nil {
		return fmt.Errorf("%w: the image's answer is missing", jobs.ErrUnavailable)
	}
	if j.State == jobs.Failed {
		var p api.Page
		if err := json.Unmarshal(raw[0], &p); err == nil && p.Error != nil {
			out.Error = &api.Error{Error: p.Error.Message, Code: p.Error.Code}
		}
		return nil
	}
	out.ImageResult = new(api.OCRResult)
	if err := json.Unmarshal(raw[0], out.ImageResult); err != nil {
		return fmt.Errorf("%w: the image's answer does not parse", jobs.ErrUnavailable)
	}
	return nil
}

// maxJobWait bounds ?wait: a call held longer is one a proxy may cut.
const maxJobWait = time.Minute

// deleteJob is DELETE /jobs/{id}: the job is canceled (its pages stop on every replica) and
// deleted with its document and answers.
func (s *Server) deleteJob(c *fiber.Ctx) error {
	if s.opt.Jobs == nil {
		return errJobsOff
	}
	if err := s.opt.Jobs.Delete(c.UserContext(), c.Params("id"), s.owner(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// owner is the API key of the request, as jobs record it (empty without keys).
func (s *Server) owner(c *fiber.Ctx) string {
	if len(s.keys) == 0 {
		return ""
	}
	auth := c.Get(fiber.HeaderAuthorization)
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		token, _ = strings.CutPrefix(auth, "bearer ")
	}
	return jobs.Owner(strings.TrimSpace(token))
}

func newJob(j *jobs.Job, res *api.DocumentResult) api.Job {
	done, failed := j.Counts()
	out := api.Job{ID: j.ID, State: string(j.State), Pages: api.JobPages{Total: len(j.Pages), Done: done, Failed: failed},
		Redeliveries: j.Redelivers, Created: j.Created, Result: res}
	if !j.Started.IsZero() {
		out.Started = &j.Started
	}
	if !j.Finished.IsZero() {
		out.Finished = &j.Finished
	}
	if j.Error != nil {
		out.Error = &api.Error{Error: j.Error.Message, Code: j.Error.Code}
	}
	return out
}

// jobResult puts a finished job's pages together in /ocr's shape.
func (s *Server) jobResult(ctx context.Context, j *jobs.Job) (*api.DocumentResult, error) {
	raw, err := s.opt.Jobs.Result(ctx, j)
	if err != nil {
		return nil, err
	}
	res := &api.DocumentResult{Version: Version, ImageInfo: api.ImageInfo{Format: j.Format, Pages: j.Total, Bytes: int(j.Bytes)},
		Pages: make([]api.Page, len(raw))}
	texts := make([]string, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &res.Pages[i]); err != nil {
			return nil, fmt.Errorf("%w: page %d's answer does not parse", jobs.ErrUnavailable, j.Pages[i])
		}
		texts[i] = res.Pages[i].Text
	}
	res.Text = strings.Join(texts, document.PageSeparator)
	if !j.Started.IsZero() {
		res.ProcessingTime = round(j.Finished.Sub(j.Started).Seconds(), 4)
	}
	return res, nil
}

// jobPages reads a job's pages for the workers (jobs.PageReader): each page as /ocr reads that
// page alone, admitted by the replica's gate as a request is.
type jobPages struct{ s *Server }

// ReadPage reads one page. A page the document cannot give is the page's error (it fails
// alone); a busy service, an unavailable runtime or a deadline are worth another attempt.
func (p jobPages) ReadPage(ctx context.Context, doc []byte, raw json.RawMessage, page int) (json.RawMessage, bool, error) {
	s := p.s
	var sp jobSpec
	if err := json.Unmarshal(raw, &sp); err != nil {
		return nil, false, err
	}
	f := sp.fields()
	f.Pages, _ = json.Marshal(fmt.Sprint(page))
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.longestRequest())
	defer cancel()
	ctx = cpubudget.With(ctx, cpubudget.New(s.opt.MaxRequestCPU))
	if s.opt.Gate != nil {
		// The gate's own check, not enter's: a job page is not the synchronous traffic it
		// makes way for.
		leave, err := s.opt.Gate.Enter()
		if err != nil {
			return nil, false, err
		}
		defer leave()
	}
	r, err := s.newReading(f)
	if err != nil {
		return nil, false, err
	}
	defer r.budget.Release()
	r.job = true
	if docfile.Detect(doc) == "" {
		// A single image (planImage): its answer is /ocr's for the image.
		res, err := r.image(ctx, doc, start)
		if err != nil {
			if retry(err) {
				return nil, false, err
			}
			return p.FailedPage(page, err), true, nil
		}
		out, err := json.Marshal(newOCRResponse(res, len(doc), r.opt.words, time.Since(start)))
		return out, false, err
	}
	res, err := r.document(ctx, doc, start)
	if err != nil {
		if retry(err) {
			return nil, false, err
		}
		return p.FailedPage(page, err), true, nil
	}
	ans := newDocumentResponse(res, r.opt.words, time.Since(start))
	if len(ans.Pages) != 1 {
		return nil, false, fmt.Errorf("page %d read as %d pages", page, len(ans.Pages))
	}
	out, err := json.Marshal(ans.Pages[0])
	return out, ans.Pages[0].Error != nil, err
}

// jobReader is the document reader of the jobs' pages: documents up to the job's byte limit
// (maxBytes), a PDF past jobReadThrough read by the engine through a reader over its mapping
// rather than copied into the engine's memory whole. nil without documents.
func jobReader(docs *document.Reader, maxBytes int64) *document.Reader {
	if docs == nil {
		return nil
	}
	return docs.WithFileLimits(func(l *docfile.Limits) {
		l.MaxBytes = int(max(maxBytes, int64(l.MaxBytes)))
		l.ReadThrough = jobReadThrough
	})
}

// jobReadThrough is the size past which a job's PDF is read through a reader: below it, the
// engine copies the file into its memory (as for /ocr, within the instance's cap that every PDF
// page is charged); above it, the instance holds what it parsed and the page at work.
const jobReadThrough = 16 << 20

// mappedHeld is what a job page is charged for its document, n bytes mapped from a file (see
// jobs.Document): nothing. The mapping is clean file pages, which the kernel reclaims before the
// process's memory limit is reached, so they cannot take memory the plan gave to others; what is
// copied out of them is charged where it goes: a PDF up to jobReadThrough is copied into the
// engine instance whole, and what a bigger one's page needs is read into it, both within the
// instance's cap, which every PDF page is charged; a TIFF's page decoder decodes into the page's
// raster, charged as the page. (/ocr charges its body: anonymous memory, held until it answers.)
func mappedHeld(int) int64 { return 0 }

// retry reports whether a page's failure is the service's state rather than the page's.
func retry(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	ae := classify(err)
	return ae.status == fiber.StatusTooManyRequests || ae.status >= 500
}

// FailedPage is the answer of a page that could not be read.
func (jobPages) FailedPage(page int, err error) json.RawMessage {
	ae := classify(err)
	out, _ := json.Marshal(api.Page{Page: page, Source: string(document.Failed), Regions: []api.Region{}, Blocks: []api.Block{},
		Error: &api.PageError{Code: ae.code, Message: ae.msg}})
	return out
}

// spare is the room job pages are taken within: a replica takes a page only when no
// synchronous request has entered or left for syncQuiet, nothing waits for admission and a run
// slot is free. Job pages use spare capacity only: a page at work cannot be stopped for a receipt
// that comes, so a replica with sync traffic (requests coming back to back) leaves the job to
// the replicas, or the moments, without it; a request that comes meanwhile competes at most with
// the pages already at work (one a worker).
func (s *Server) spare() bool {
	if time.Since(time.Unix(0, s.lastSync.Load())) < syncQuiet {
		return false
	}
	g := s.opt.Gate
	if g == nil {
		return true
	}
	st := g.Stats()
	if st.Waiting > 0 || st.Inside > st.Running {
		return false
	}
	return g.Options().MaxRunning == 0 || st.Running < g.Options().MaxRunning
}

// syncQuiet is how long after a synchronous request a replica takes no job page: long enough to
// see that a client sending requests one after another is not done, short enough that a job
// goes on soon after the traffic stops.
const syncQuiet = time.Second
