// Package server is ocrgate's HTTP layer: routes, request parsing, responses and the one mapping
// from errors to statuses. Handlers stay thin: they bind and check the request, call the domain
// (the OCR pipeline) and shape its answer.
package server

import (
	"context"
	"errors"
	"image"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/framing"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Recognizer is what the HTTP layer needs from the OCR pipeline: the header check and the memory
// and CPU costs of an image before any work, then the work, on an image or on a rendered document
// page; and, for a request that sends its own options, a pipeline that runs with them.
type Recognizer interface {
	// Inspect reads an image's header (a TIFF's directories, walked once a request); Cost prices
	// it, and RunAdmitted decodes the image from it, under the admission the cost bought.
	Inspect(ctx context.Context, image []byte) (imaging.Header, error)
	Cost(h imaging.Header) int64
	CPUCost(h imaging.Header) time.Duration
	RunAdmitted(ctx context.Context, image []byte, h imaging.Header, lease imaging.Lease) (*ocr.Result, error)
	RunImage(ctx context.Context, dec imaging.Decoded) (*ocr.Result, error)
	Options() ocr.Options
	With(opt ocr.Options) (*ocr.Pipeline, error)
	// Lang is the pipeline that reads with a language's recognizer (a *ocr.LanguageError when
	// it is not loaded).
	Lang(lang string) (*ocr.Pipeline, error)
	// ReadCrops and Reads check a document's text layer against OCR of a few of its lines.
	ReadCrops(ctx context.Context, img image.Image, quads []geom.Quad) ([]ocr.Reading, error)
	Reads(r rune) bool
}

// Readiness reports whether the model runtime can serve (nil) or why not.
type Readiness interface {
	Ready(ctx context.Context) error
}

// Options configure the HTTP layer.
type Options struct {
	RequestTimeout time.Duration // deadline of every request
	MaxBodyBytes   int           // larger bodies are refused with 413
	CORSOrigins    string        // comma-separated; "*" for any origin
	// APIKeys, when not empty, are the bearer tokens /ocr and /ocr-json require.
	APIKeys []string
	// Gate admits OCR jobs by memory cost, bounds those waiting, and refuses the rest; nil
	// admits everything.
	Gate *admission.Gate
	// MaxRequestCost is the largest memory cost, in bytes, of one request; a larger one is
	// refused with 413 before any work (0: no limit).
	MaxRequestCost int64
	// MaxRequestCPU is the CPU time one /ocr or /ocr-json request may use (0: no limit): its
	// context carries a cpubudget.Budget of that much, which its work is planned against before
	// it starts and charged as it runs (413 cpu_budget_exceeded beyond).
	MaxRequestCPU time.Duration
	// ChatGate bounds the /ocr-json chat calls in flight and waiting; nil admits everything.
	ChatGate *admission.Gate
	// Metrics receives request and stage metrics and is served on /metrics; nil for none.
	Metrics *metrics.Metrics
	// Extractor fills schemas for /ocr-json; nil when no chat model is configured (503).
	Extractor Extractor
	// SchemaLimits bound the schemas callers send to /ocr-json.
	SchemaLimits extract.Limits
	// UI serves the demo page at GET / (and its files under /ui/); off, GET / is a 404.
	UI bool
	// Documents reads PDFs and multi-page TIFFs sent as "image"; nil refuses them as an
	// unsupported format (415), as before documents were read.
	Documents *document.Reader
	// MaxImages bounds the entries of an "images" array (413 beyond; 0: no bound).
	MaxImages int
	// BodyMemory is the memory the request bodies being read and held may take together; a
	// body that would take more waits a moment, then is refused with 429 (0: four times
	// MaxBodyBytes).
	BodyMemory int64
	// MaxConnections bounds the connections open at once (GuardListener; 0: no bound).
	MaxConnections int
	// JobMaxBytes is the largest body POST /jobs takes at the listener (GuardListener): a raw
	// document is streamed into the job store, never held whole, so it may be far larger than
	// MaxBodyBytes (0: MaxBodyBytes, like every route). A form or JSON body is still read whole,
	// within MaxBodyBytes.
	JobMaxBytes int64
	// Jobs stores and queues asynchronous jobs (POST /jobs); nil answers the job routes with 404
	// jobs_disabled. With Jobs set, New starts its page workers (Jobs.Config().Workers), which
	// stop when Context ends.
	Jobs *jobs.Store
	// Context is what every request's context derives from (nil: context.Background()).
	// Canceling it, with ErrShuttingDown as the cause, cancels the requests in flight: see
	// Shutdown.
	Context context.Context
}

func (s *Server) baseContext() context.Context {
	if s.opt.Context != nil {
		return s.opt.Context
	}
	return context.Background()
}

// ErrShuttingDown is the cause of a request's cancellation when the server stops.
var ErrShuttingDown = errors.New("the server is shutting down")

// DefaultMaxConnections is the connection bound main uses unless configured otherwise: each
// open connection holds some 20 KiB (buffers and a goroutine), so this many take about 10 MiB.
const DefaultMaxConnections = 512

// bodyMemory is Options.BodyMemory with its default.
func (o Options) bodyMemory() int64 {
	if o.BodyMemory > 0 {
		return o.BodyMemory
	}
	return 4 * int64(o.MaxBodyBytes)
}

// Server holds the handlers' dependencies.
type Server struct {
	ocr     Recognizer
	ready   Readiness
	log     *slog.Logger
	opt     Options
	keys    keyring
	metrics *metrics.Metrics
	errors  fiber.ErrorHandler
	extract Extractor
	// bodies admits the memory of request bodies as they are read (see body).
	bodies *admission.Gate
	// lastSync is when a synchronous request last entered or left (Unix nanoseconds): job pages
	// wait for a quiet moment after it (see spare).
	lastSync atomic.Int64
	// jobDocs reads the jobs' documents (see jobReader); nil without jobs or documents.
	jobDocs *document.Reader
}

// New returns the Fiber app with every route registered. Tests drive it with app.Test; main
// listens with it.
func New(rec Recognizer, ready Readiness, log *slog.Logger, opt Options) *fiber.App {
	s := &Server{ocr: rec, ready: ready, log: log, opt: opt, keys: newKeyring(opt.APIKeys), metrics: opt.Metrics, extract: opt.Extractor}
	s.errors = errorHandler(s)
	if opt.MaxBodyBytes > 0 {
		// Bodies wait a little for memory (another body is about to end), never long: a
		// client mid-upload must not hold the ones behind it for good.
		s.bodies = admission.New(admission.Options{Budget: opt.bodyMemory(), MaxQueue: 256, MaxWait: 2 * time.Second})
	}
	if opt.Gate != nil {
		g := opt.Gate
		s.metrics.Admission(g.Options().Budget, func() (int64, int) { st := g.Stats(); return st.Used, st.Waiting })
	}
	app := fiber.New(fiber.Config{
		AppName:               "ocrgate " + Version,
		BodyLimit:             opt.MaxBodyBytes + formOverhead, // bodies are read and bounded by the handlers (see body.go)
		ErrorHandler:          s.errors,
		DisableStartupMessage: true,
		// These bound reading a request (from its first byte) and writing its answer (from the
		// handler's end), not the handler: a document runs past them until its own deadline
		// answers (with a proper 504 when it must).
		ReadTimeout:  opt.RequestTimeout + 10*time.Second,
		WriteTimeout: opt.RequestTimeout + 10*time.Second,
		IdleTimeout:  2 * time.Minute,
		// Bodies are read by the handlers that want them, within a budget (see body.go);
		// fasthttp would otherwise allocate each announced body whole before routing, and parse
		// multipart forms (to memory and temporary files) before anything is checked.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	// fasthttp quotes the raw request (Authorization and Cookie included) in the errors it
	// raises for malformed requests; those reach the log. Keep the bytes out of them.
	app.Server().SecureErrorLogMessage = true
	app.Use(s.observe)
	app.Use(cors.New(cors.Config{
		AllowOrigins: normalizeOrigins(opt.CORSOrigins),
		AllowMethods: "GET,POST,DELETE,OPTIONS",
		AllowHeaders: "Content-Type,Authorization,X-Request-ID,Idempotency-Key",
		// Scripts on other origins may read the request ID, when to retry and what a call cost.
		ExposeHeaders: "X-Request-ID,Location,Retry-After,X-OCR-Time,X-Chat-Time,X-Chat-Attempts,X-Chat-Text-Cut,X-Failed-Pages",
	}))
	app.Get("/ping", s.ping)
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	if s.metrics != nil { // the one check left: without metrics there is no /metrics route
		app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(s.metrics.Registry, promhttp.HandlerOpts{})))
	}
	app.Post("/ocr", s.requireKey, s.ocrHandler)
	app.Post("/ocr-json", s.requireKey, s.ocrJSON)
	app.Get("/templates", s.requireKey, s.templates)
	app.Post("/jobs", s.requireKey, s.submitJob)
	app.Get("/jobs/:id", s.requireKey, s.getJob)
	app.Delete("/jobs/:id", s.requireKey, s.deleteJob)
	if opt.Jobs != nil {
		s.jobDocs = jobReader(opt.Documents, opt.Jobs.Config().MaxBytes)
		go opt.Jobs.Run(s.baseContext(), jobPages{s}, s.spare)
	}
	app.Get("/openapi.json", s.openAPI)
	if opt.UI {
		app.Get("/", s.page)
		app.Get("/ui/:file", s.page)
	}
	app.Use(func(c *fiber.Ctx) error {
		c.Locals(ctxUnmatched{}, true) // counted under a route label of its own (see observe)
		return fiber.ErrNotFound
	})
	return app
}

// ctxUnmatched is the Locals key set by the catch-all handler: the request matched no route.
type ctxUnmatched struct{}

// drainTimeout bounds how long a connection closed mid-body reads what its client still sends.
const drainTimeout = 10 * time.Second

// GuardListener wraps the listener the service serves on in the HTTP framing guard (package
// framing): request heads whose framing two parsers could read differently (conflicting
// Content-Length, Content-Length with chunked, bare LF, folded headers) are refused with a JSON
// 400 before fasthttp reads them, and a body the server refuses unread (413) is drained, up to
// twice the body limit, so that clients which send a whole body before reading hear the 413
// instead of a connection reset. Serve with app.Listener(GuardListener(ln, opt)).
//
// The guard also bounds the connections open at once (Options.MaxConnections): at the bound a
// new connection replaces one that waits idle, or is answered 503 too_many_connections.
func GuardListener(ln net.Listener, opt Options) net.Listener {
	return framing.Listen(ln, framing.Options{
		MaxHeadBytes: fiber.DefaultReadBufferSize, // fasthttp's own bound on a head
		DrainBytes:   2 * (int64(opt.MaxBodyBytes) + formOverhead),
		DrainTimeout: drainTimeout,
		MaxBodyBytes: int64(opt.MaxBodyBytes),
		FormOverhead: formOverhead,
		BodyLimit:    jobBodyLimit(opt.JobMaxBytes),
		MaxConns:     opt.MaxConnections,
		Refusal:      refusal(errTooManyConnections),
	})
}

func normalizeOrigins(s string) string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, ",")
}

// ping answers while the process runs, whatever the state of the models.
func (s *Server) ping(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.SendString("pong")
}

// healthz answers 200 while the process is healthy enough to serve HTTP: a liveness probe must not
// depend on the model runtime, or an orchestrator restarts ocrgate for Triton's outage.
func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(api.Status{Status: "ok"})
}

// readyz answers 200 when the model runtime can serve requests and 503 with the stable reasons
// otherwise (see notReadyError), so a load balancer sends traffic only to instances whose models
// are loaded.
func (s *Server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), readinessTimeout)
	defer cancel()
	if err := s.ready.Ready(ctx); err != nil {
		return &notReadyError{err: err} // classify answers the stable reasons; the log gets err
	}
	if s.opt.Jobs != nil {
		if err := s.opt.Jobs.Ready(ctx); err != nil {
			s.log.Warn("not ready: the job store", "err", err)
			return &apiError{status: fiber.StatusServiceUnavailable, code: "not_ready", msg: "not ready: jobs_unavailable", retryAfter: 5}
		}
	}
	return c.JSON(api.Status{Status: "ready"})
}

// readinessTimeout bounds one readiness check: probes are frequent and must answer quickly.
const readinessTimeout = 2 * time.Second

// full is the cheap refusal of a saturated service, made before a request's body is read (nil
// without a gate): a service that has as many requests inside as it can run and queue answers
// 429 before it receives a body it would refuse anyway. It takes no place in the gate: a request
// takes one (enter) only once its body has arrived, so a client that sends its body slowly holds
// a connection and what it has sent (OCRGATE_MAX_CONNECTIONS, OCRGATE_BODY_MEMORY), never a place
// a request ready to run could have.
func (s *Server) full() error {
	if s.opt.Gate == nil || !s.opt.Gate.Full() {
		return nil
	}
	s.rejected("overloaded")
	return admission.ErrOverloaded
}

// requestContext is the context an /ocr or /ocr-json request works under: its client's (see
// observe) with the longest deadline a request may have (fasthttp does not cancel a request's
// context when the client goes away, so every request carries its own deadline into the model
// calls; an image's is RequestTimeout, a document's more, see document.Reader.Deadline), and its
// CPU budget (MaxRequestCPU), which every piece of its work, down to a decoder, finds there.
func (s *Server) requestContext(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(c.UserContext(), s.longestRequest())
	return cpubudget.With(ctx, cpubudget.New(s.opt.MaxRequestCPU)), cancel
}

// enter is the gate's cheap check once a request's body has arrived, before its cost is known (a
// no-op without a gate).
func (s *Server) enter() (leave func(), err error) {
	s.lastSync.Store(time.Now().UnixNano()) // job pages hold off (see spare)
	if s.opt.Gate == nil {
		return func() {}, nil
	}
	left, err := s.opt.Gate.Enter()
	if err != nil {
		s.rejected("overloaded")
		return nil, err
	}
	return func() { left(); s.lastSync.Store(time.Now().UnixNano()) }, nil
}

func (s *Server) rejected(reason string) { s.metrics.Rejected(reason) }

// LongestRequest is the longest a request may run: RequestTimeout, or the cap of a document's
// deadline when documents are read. A server shutting down waits this long (and a little more)
// for the requests in flight.
func (o Options) LongestRequest() time.Duration {
	d := o.RequestTimeout
	if o.Documents != nil {
		d = max(d, o.Documents.Config().MaxTimeout)
	}
	return d
}

func (s *Server) longestRequest() time.Duration { return s.opt.LongestRequest() }
