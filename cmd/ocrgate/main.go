// Command ocrgate is an OCR inference service: POST an image as base64 JSON, get its text and boxes.
//
//	ocrgate [serve] [flags]   run the HTTP service (default :5000)
//	ocrgate ocr FILE...       print the text of images (--json: the whole answer); the models run
//	                          in-process, or on the service at --server / OCRGATE_SERVER
//	ocrgate extract FILE...   print the object a chat model filled (--template, --schema)
//	ocrgate version           print the version
//	ocrgate bench [flags]     measure the pipeline on a dataset (runs ocrgate-bench, built beside
//	                          this binary, so that the service links no benchmark code)
//	ocrgate healthcheck [URL] exit 0 when URL (default http://127.0.0.1:$PORT/healthz) answers 200;
//	                          for container HEALTHCHECKs, where no curl is installed
//	ocrgate pdf-cache         compile the PDF engine into OCRGATE_PDF_CACHE_DIR and exit (the
//	                          container image runs it when it is built)
//	ocrgate config-doc [-o F] write docs/configuration.md, every setting, from the settings table
//
// main only wires things together; see the service packages for the work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "version", "--version", "-version":
			fmt.Println(server.Version)
			return 0
		case "bench":
			return runTool("ocrgate-bench", args[1:])
		case "healthcheck":
			return healthcheck(args[1:])
		case "pdf-cache":
			return pdfCache(args[1:])
		case "config-doc":
			return configDoc(args[1:])
		case "ocr", "extract":
			return runCLI(args[0], args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		case "serve":
			args = args[1:]
		}
	}
	cfg, err := config.Load(args, os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ocrgate: %v\n", err)
		return 2
	}
	log := newLogger(cfg)
	slog.SetDefault(log) // what the packages below log without a logger of their own goes the same way
	if err := serve(cfg, log); err != nil {
		log.Error("ocrgate stopped", "err", err)
		return 1
	}
	return 0
}

// runTool runs a companion command (such as ocrgate-bench) found beside this binary, or else on
// PATH, with the same arguments and standard streams, and returns its exit code. The tools are
// separate binaries so that the serving binary carries none of their code.
func runTool(name string, args []string) int {
	path := ""
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), name); fileExists(p) {
			path = p
		}
	}
	if path == "" {
		p, err := exec.LookPath(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ocrgate: %s not found beside this binary or on PATH (make build builds it into bin/)\n", name)
			return 2
		}
		path = p
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "ocrgate: %s: %v\n", name, err)
		return 1
	}
	return 0
}

// configDoc writes the configuration reference (docs/configuration.md) from the settings table,
// to standard output or to the file -o names; go generate ./service/config runs it.
func configDoc(args []string) int {
	fs := flag.NewFlagSet("ocrgate config-doc", flag.ContinueOnError)
	outPath := fs.String("o", "", "write to this file instead of standard output")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var buf strings.Builder
	if err := config.Markdown(&buf); err != nil {
		fmt.Fprintf(os.Stderr, "ocrgate config-doc: %v\n", err)
		return 1
	}
	if *outPath == "" {
		fmt.Print(buf.String())
		return 0
	}
	if err := os.WriteFile(*outPath, []byte(buf.String()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "ocrgate config-doc: %v\n", err)
		return 1
	}
	return 0
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// pdfCache compiles the PDF engine into its cache directory and exits: a container image built
// with it starts in milliseconds instead of seconds, without writing anything at run time.
func pdfCache(args []string) int {
	cfg, err := config.Load(args, os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ocrgate pdf-cache: %v\n", err)
		return 2
	}
	start := time.Now()
	docs, cache := engine.Documents(cfg)
	defer func() { _ = docs.Close() }() // the cache is written or not by now; closing frees memory
	if cache == "" {
		fmt.Fprintf(os.Stderr, "ocrgate pdf-cache: no usable cache directory (OCRGATE_PDF_CACHE_DIR=%q)\n", cfg.PDFCacheDir)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := docs.Ready(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ocrgate pdf-cache: %v\n", err)
		return 1
	}
	fmt.Printf("PDF engine ready in %s (compile cache: %s)\n", time.Since(start).Round(time.Millisecond), cache)
	return 0
}

// engineWait bounds how long start-up waits for the PDF engine's compilation before it measures
// the memory at rest anyway: a cold compile takes seconds (under a minute on a slow machine).
const engineWait = 2 * time.Minute

// memoryPlan divides the memory the process may use (its container's limit, or 1 GiB) between
// what it holds at rest (measured now, with the models loaded), a reserve, and the budget of the
// requests it admits, and sets the Go runtime's memory limit from it unless GOMEMLIMIT is set.
func memoryPlan(cfg config.Config, eng *engine.Engine, docs *document.Reader, runs int) memlimit.Plan {
	runtime.GC()
	memlimit.Release()
	limit, _ := memlimit.ContainerLimit(os.DirFS("/"))
	plan := memlimit.Derive(memlimit.Inputs{
		Limit:       limit,
		AtRest:      memlimit.RSS(),
		AtRestGo:    memlimit.GoRuntimeBytes(),
		Budget:      cfg.MemoryBudget,
		MaxRequest:  cfg.MaxRequestMemory,
		Bodies:      cfg.Bodies(),
		RuntimeWork: eng.Pipeline.Options().RuntimeWork(),
		Runs:        runs,
		Reserved:    eng.Pipeline.Options().RuntimeMemory.Reserved,
		GOMEMLIMIT:  os.Getenv("GOMEMLIMIT"),
		// A request holds its body and the document decoded from it.
		MinRequest: docs.SurveyCost(2 * int64(cfg.MaxBodyBytes)),
	})
	plan.Apply()
	return plan
}

// healthcheck probes the running service's /healthz, for a container HEALTHCHECK.
func healthcheck(args []string) int {
	url := "http://127.0.0.1" + portOf(os.Getenv("OCRGATE_ADDR")) + "/healthz"
	if len(args) > 0 {
		url = args[0]
	}
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "healthcheck: %v\n", err)
		return 1
	}
	_ = resp.Body.Close() // only the status is read
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "healthcheck: %s answered %d\n", url, resp.StatusCode)
		return 1
	}
	return 0
}

// portOf returns ":port" of a listen address, ":5000" (the default) when there is none.
func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && i < len(addr)-1 {
		return addr[i:]
	}
	return ":5000"
}

func newLogger(cfg config.Config) *slog.Logger {
	level, _ := cfg.SlogLevel()
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func serve(cfg config.Config, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveUntil(ctx, cfg, log, nil)
}

// faultContext is what the service's requests' contexts derive from before the shutdown's cancel:
// the background, unchanged. A binary built with the faults tag (faults.go) injects panics through
// it, for the soak that checks a panic costs one unit of one request and nothing more.
var faultContext = func(ctx context.Context) context.Context { return ctx }

// serveUntil serves until ctx ends (SIGTERM, for serve), then shuts down within
// cfg.ShutdownTimeout: the requests in flight finish, or are canceled (503 shutting_down) in time
// to answer before it ends. listening, when not nil, is told the address once the service
// listens.
func serveUntil(ctx context.Context, cfg config.Config, log *slog.Logger, listening func(net.Addr)) error {
	log.Info("starting ocrgate", "version", server.Version, "config", cfg)
	// Every request's context derives from work; the shutdown cancels it.
	work, cancelWork := context.WithCancelCause(faultContext(context.Background()))
	defer cancelWork(nil)
	app, eng, err := assemble(work, cfg, log)
	if err != nil {
		return err
	}
	// The framing guard sits on the TCP listener only: it refuses requests whose framing
	// fasthttp would otherwise read leniently, bounds the connections, and watches for clients
	// that hang up (see service/framing).
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = eng.Close() // err is what the caller acts on
		return err
	}
	errc := make(chan error, 1)
	go func() {
		log.Info("listening", "addr", ln.Addr().String())
		errc <- app.Listener(server.GuardListener(ln, server.Options{MaxBodyBytes: cfg.MaxBodyBytes, MaxConnections: cfg.MaxConnections,
			JobMaxBytes: jobMaxBytes(cfg)}))
	}()
	if listening != nil {
		listening(ln.Addr())
	}
	select {
	case err := <-errc:
		_ = eng.Close() // err is what the caller acts on
		return err
	case <-ctx.Done():
	}
	start := time.Now()
	log.Info("shutting down: finishing requests in flight", "grace", cfg.ShutdownTimeout)
	if err := server.Shutdown(app, cancelWork, cfg.ShutdownTimeout); err != nil {
		// Requests still hold the engine: exiting is safe, closing it under them is not.
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := eng.Close(); err != nil {
		log.Warn("closing the runtime", "err", err)
	}
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// assemble builds the service a Config describes: the engine, the chat extractor, admission,
// metrics and the HTTP app, whose requests' contexts derive from work. serve listens with it; `ocrgate ocr` and `ocrgate extract` run the
// very same app in-process, so what they print is what the API answers.
func assemble(work context.Context, cfg config.Config, log *slog.Logger) (*fiber.App, *engine.Engine, error) {
	start := time.Now()
	// The PDF engine compiles in the background while the models load.
	docs, cache := engine.Documents(cfg)
	eng, err := engine.Open(cfg)
	if err != nil {
		_ = docs.Close() // err is what the caller acts on
		return nil, nil, err
	}
	eng.AddCloser(docs)
	log.Info("runtime opened", "runtime", cfg.Runtime, "took", time.Since(start).Round(time.Millisecond))
	if cfg.Runtime == "triton" {
		// Say once at start whether Triton is there; /readyz keeps answering the question.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if err := eng.Ready(ctx); err != nil {
			log.Warn("triton not ready yet; serving, /readyz answers 503 until it is", "addr", cfg.TritonAddr, "err", err)
		} else {
			log.Info("triton ready", "addr", cfg.TritonAddr)
		}
		cancel()
	}

	keys, err := cfg.Keys()
	if err != nil {
		_ = eng.Close() // err is what the caller acts on
		return nil, nil, err
	}
	var extractor server.Extractor
	switch ex, err := extract.New(cfg.Chat); {
	case err == nil:
		extractor = ex
		log.Info("chat model configured for /ocr-json", "model", cfg.Chat.Model)
	case errors.Is(err, extract.ErrNotConfigured):
		log.Info("no chat model configured: /ocr-json answers 503 until CHAT_BOT_MODEL and CHAT_BOT_BASEURL are set")
	default:
		_ = eng.Close() // err is what the caller acts on
		return nil, nil, fmt.Errorf("chat model: %w", err)
	}
	// The compilation's few hundred MB of garbage must be gone before the memory at rest is
	// measured, and its compiled code (some 20 MB) must be in it: wait for it first. A
	// compilation slower than engineWait is measured without; documents wait for it within
	// their deadline (503 document_engine_unavailable when it does not come).
	ctx, cancel := context.WithTimeout(context.Background(), engineWait)
	if err := docs.Ready(ctx); err != nil {
		log.Warn("PDF engine not ready: documents wait for it, images are served", "err", err)
	} else {
		log.Info("PDF engine ready", "took", time.Since(start).Round(time.Millisecond), "cache", cache)
	}
	cancel()
	inflight, queue := cfg.Admission()
	plan := memoryPlan(cfg, eng, docs, inflight)
	log.Info("memory", "plan", plan)
	if need := docs.SurveyCost(0); plan.MaxRequest < need {
		log.Warn("the memory limit cannot hold a PDF's first job, so PDFs are refused (413 document_too_large): raise the limit or lower OCRGATE_PDF_MEMORY",
			"needs_mib", need>>20, "max_request_mib", plan.MaxRequest>>20)
	}
	if plan.RuntimeReserve > 0 && plan.Runs < inflight {
		log.Warn("the memory limit holds the model runtime's memory for fewer OCR jobs at once than configured",
			"max_inflight", inflight, "runs", plan.Runs)
		inflight = plan.Runs
	}
	if plan.MaxRequest > plan.Budget {
		log.Info("requests costing more than the memory budget wait until nothing else runs, then run alone",
			"budget_mib", plan.Budget>>20, "max_request_mib", plan.MaxRequest>>20)
	}
	met := metrics.New()
	var jobStore *jobs.Store
	if cfg.Jobs {
		if jobStore, err = openJobs(cfg, log, met); err != nil {
			_ = eng.Close() // err is what the caller acts on
			return nil, nil, err
		}
		eng.AddCloser(jobStore)
	}
	app := server.New(eng.Pipeline, eng, log, server.Options{
		Jobs:           jobStore,
		RequestTimeout: cfg.RequestTimeout,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		BodyMemory:     cfg.Bodies(),
		MaxConnections: cfg.MaxConnections,
		Context:        work,
		CORSOrigins:    cfg.CORSOrigins,
		APIKeys:        keys,
		Gate: admission.New(admission.Options{Budget: plan.Budget, MaxRunning: inflight, MaxQueue: queue,
			MaxWait: cfg.QueueTimeout}),
		MaxRequestCost: plan.MaxRequest,
		MaxRequestCPU:  cfg.MaxRequestCPU,
		ChatGate: admission.New(admission.Options{Budget: 1, MaxRunning: cfg.ChatMaxInFlight, MaxQueue: cfg.ChatMaxQueue,
			MaxWait: cfg.QueueTimeout}),
		Metrics:      met,
		Extractor:    extractor,
		SchemaLimits: cfg.Chat.Schema,
		UI:           cfg.UI,
		Documents:    docs,
		MaxImages:    cfg.MaxImages,
	})
	log.Info("admission", "max_inflight", inflight, "max_queue", queue, "queue_timeout", cfg.QueueTimeout,
		"chat_max_inflight", cfg.ChatMaxInFlight, "chat_max_queue", cfg.ChatMaxQueue, "auth", len(keys) > 0)
	return app, eng, nil
}

// jobMaxBytes is the listener's body limit for POST /jobs: the job byte limit with jobs on.
func jobMaxBytes(cfg config.Config) int64 {
	if !cfg.Jobs {
		return 0
	}
	return cfg.JobMaxBytes
}

// openJobs opens the job store: the embedded NATS server on cfg.JobsDir, or cfg.NATSURL.
func openJobs(cfg config.Config, log *slog.Logger, met *metrics.Metrics) (*jobs.Store, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := jobs.Open(ctx, jobs.Config{URL: cfg.NATSURL, Dir: cfg.JobsDir, Listen: cfg.JobsListen, Replicas: cfg.JobReplicas,
		TTL: cfg.JobTTL, MaxPages: cfg.JobMaxPages, MaxBytes: cfg.JobMaxBytes, MaxInFlight: cfg.JobMaxInFlight,
		StoreBytes: cfg.JobStoreBytes, Workers: cfg.JobWorkers, Attempts: cfg.JobAttempts}, log)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if err := st.Register(met.Registry); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("jobs metrics: %w", err)
	}
	log.Info("jobs ready", "embedded", cfg.NATSURL == "", "took", time.Since(start).Round(time.Millisecond))
	return st, nil
}
