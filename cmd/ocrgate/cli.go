package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/ocrgate/ocrgate/client"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Exit codes of `ocrgate ocr` and `ocrgate extract`, so scripts can tell whose fault a failure is.
// With several files the code is the worst of them (service failure over bad input).
const (
	exitOK      = 0
	exitUsage   = 2 // bad flags or arguments, an unreadable schema file, or an API key the service refuses
	exitInput   = 3 // a file could not be read, the service refused it as bad input (400, 413, 415, 422), or a page of a document could not be read
	exitService = 4 // the service failed or could not be reached: 5xx, 429 after retries, no engine
)

// cliOptions are the flags of ocr and extract.
type cliOptions struct {
	json     bool
	server   string
	apiKey   string
	jobs     int
	quiet    bool
	template string
	schema   string
	pages    string
	// format is the answer's form for ocr (json, text, hocr, alto; empty: the text, as always);
	// output a file to write the results to instead of standard output.
	format string
	output string
	lang   string
}

// runCLI runs `ocrgate ocr` or `ocrgate extract` (cmd) and returns the exit code. Without a
// server it assembles the service in-process, exactly as `ocrgate serve` does, and calls it
// through an in-memory connection: what it prints is what /ocr and /ocr-json answer.
func runCLI(cmd string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	opt, files, err := parseCLI(cmd, args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocrgate %s: %v\n", cmd, err)
		return exitUsage
	}
	var schema json.RawMessage
	if opt.schema != "" {
		data, err := os.ReadFile(opt.schema)
		if err != nil || !json.Valid(data) {
			fmt.Fprintf(stderr, "ocrgate extract: --schema %s: not a readable JSON file\n", opt.schema)
			return exitUsage
		}
		schema = data
	}
	if opt.output != "" {
		f, err := os.Create(opt.output)
		if err != nil {
			fmt.Fprintf(stderr, "ocrgate %s: -o: %v\n", cmd, err)
			return exitUsage
		}
		defer func() {
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "ocrgate %s: -o: %v\n", cmd, err)
			}
		}()
		stdout = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var c *client.Client
	if opt.server != "" {
		c, err = client.New(opt.server, client.WithAPIKey(opt.apiKey))
		if err != nil {
			fmt.Fprintf(stderr, "ocrgate %s: %v\n", cmd, err)
			return exitUsage
		}
	} else {
		var closeLocal func()
		c, closeLocal, err = localClient(ctx, withLang(getenv, opt.lang), stderr)
		if err != nil {
			fmt.Fprintf(stderr, "ocrgate %s: %v\n", cmd, err)
			return exitService
		}
		defer closeLocal()
	}

	var read []client.CallOption
	if opt.pages != "" {
		read = append(read, client.Pages(opt.pages))
	}
	if opt.lang != "" {
		read = append(read, client.Lang(opt.lang))
	}
	// A named file is sent as itself (streamed from disk, with its media type), standard input
	// as base64 JSON once read.
	job := func(ctx context.Context, name string) (json.RawMessage, string, []failedPage, error) {
		var img []byte
		if name == "-" {
			var err error
			if img, err = readInput(stdin); err != nil {
				return nil, "", nil, err
			}
		} else if err := checkFile(name); err != nil {
			return nil, "", nil, err
		}
		if cmd == "extract" {
			opts := read
			if opt.template != "" {
				opts = append(opts, client.Template(opt.template))
			}
			if schema != nil {
				opts = append(opts, client.Schema(schema))
			}
			var ex *client.Extraction
			var err error
			if img != nil {
				ex, err = c.Extract(ctx, img, opts...)
			} else {
				ex, err = c.ExtractFile(ctx, name, opts...)
			}
			if err != nil {
				return nil, "", nil, err
			}
			var failed []failedPage
			for _, n := range ex.FailedPages {
				failed = append(failed, failedPage{page: n})
			}
			return ex.Object, "", failed, nil
		}
		if opt.format != "" && opt.format != client.FormatJSON {
			// The service's answer in that form, as it was sent (a document's failed pages are
			// in the JSON answer only).
			var raw []byte
			var err error
			if img != nil {
				raw, err = c.OCRAs(ctx, img, opt.format, read...)
			} else {
				raw, err = c.OCRFileAs(ctx, name, opt.format, read...)
			}
			return raw, "", nil, err
		}
		var res *client.OCRResult
		var err error
		if img != nil {
			res, err = c.OCR(ctx, img, read...)
		} else {
			res, err = c.OCRFile(ctx, name, read...)
		}
		if overPageLimit(err) && opt.server != "" {
			// Over the synchronous page limit: the service reads it as a job, on every replica.
			res, err = viaJob(ctx, c, name, img, read, progressBar(stderr, name, opt.quiet))
		}
		if err != nil {
			return nil, "", nil, err
		}
		var failed []failedPage
		for _, p := range res.FailedPages() {
			failed = append(failed, failedPage{page: p.Page, code: p.Error.Code, message: p.Error.Message})
		}
		return res.Raw, res.Text, failed, nil
	}
	b := batch{cmd: cmd, opt: opt, files: files, job: job, stdout: stdout, stderr: stderr}
	return b.run(ctx)
}

// parseCLI reads flags and file names; flags may come before, between or after the files.
func parseCLI(cmd string, args []string, getenv func(string) string, stderr io.Writer) (cliOptions, []string, error) {
	opt := cliOptions{server: getenv("OCRGATE_SERVER"), apiKey: getenv("OCRGATE_API_KEY"), jobs: runtime.NumCPU()}
	fs := flag.NewFlagSet("ocrgate "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if cmd == "ocr" {
		fs.BoolVar(&opt.json, "json", false, "print the whole /ocr answer as JSON instead of the text (one JSON line per file with several files)")
		fs.StringVar(&opt.format, "format", "", "the answer's form: json (as --json), text, hocr, alto or pdf (a searchable PDF), printed as the service sends it (one file at a time for hocr, alto and pdf)")
	} else {
		fs.StringVar(&opt.template, "template", "", "built-in template to fill: invoice (the service's default) or receipt")
		fs.StringVar(&opt.schema, "schema", "", "file with your own JSON Schema to fill instead of a template")
	}
	fs.StringVar(&opt.pages, "pages", "", `pages of PDFs and multi-page TIFFs to read, e.g. "1-3,5" (default: every page)`)
	fs.StringVar(&opt.lang, "lang", "", "recognizer to read with: ch (the default), ja, ko, zh-Hant or en; without --server its language pack is loaded (fetched by OCRGATE_LANGS=... make models)")
	fs.StringVar(&opt.server, "server", opt.server, "URL of a running ocrgate; without it the models run in this process (env OCRGATE_SERVER)")
	fs.StringVar(&opt.apiKey, "api-key", opt.apiKey, "API key for --server (env OCRGATE_API_KEY)")
	fs.StringVar(&opt.output, "o", "", "write the results to this file instead of standard output")
	fs.IntVar(&opt.jobs, "j", opt.jobs, "files read at once")
	fs.BoolVar(&opt.quiet, "q", false, "no progress on stderr")
	fs.Usage = func() {
		if cmd == "ocr" {
			fmt.Fprintf(stderr, "Usage: ocrgate ocr [flags] FILE...   (- reads standard input)\n\nPrints the text of each image or document (PDF, multi-page TIFF; pages separated by a form feed).\n\n")
		} else {
			fmt.Fprintf(stderr, "Usage: ocrgate extract [--template NAME | --schema FILE] [flags] FILE...   (- reads standard input)\n\nPrints the object the chat model filled from each image or document (needs CHAT_BOT_* here, or on --server).\n\n")
		}
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nExit codes: 0 done, 2 usage, 3 bad input (unreadable file, or refused as 400/413/415/422), 4 service failure.\nWithout --server, the service's OCRGATE_* and CHAT_BOT_* environment variables configure the models.\n")
	}
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return opt, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(files) == 0:
		fs.Usage()
		return opt, nil, errors.New("no files given")
	case opt.template != "" && opt.schema != "":
		return opt, nil, errors.New("give --template or --schema, not both")
	case opt.jobs < 1:
		return opt, nil, errors.New("-j must be at least 1")
	case opt.format != "" && !slices.Contains([]string{client.FormatJSON, client.FormatText, client.FormatHOCR, client.FormatALTO, client.FormatPDF}, opt.format):
		return opt, nil, errors.New("--format must be json, text, hocr, alto or pdf")
	case (opt.format == client.FormatHOCR || opt.format == client.FormatALTO || opt.format == client.FormatPDF) && len(files) > 1:
		return opt, nil, fmt.Errorf("--format %s reads one file at a time", opt.format)
	}
	if opt.format == client.FormatJSON {
		opt.json, opt.format = true, ""
	}
	stdinSeen := false
	for _, f := range files {
		if f == "-" {
			if stdinSeen {
				return opt, nil, errors.New("standard input (-) can be read only once")
			}
			stdinSeen = true
		}
	}
	return opt, files, nil
}

// withLang is getenv with lang added to OCRGATE_LANGS, so that the service this command runs
// in-process loads the pack --lang asks for.
func withLang(getenv func(string) string, lang string) func(string) string {
	if lang == "" || lang == ocr.DefaultLang {
		return getenv
	}
	return func(k string) string {
		if k != "OCRGATE_LANGS" {
			return getenv(k)
		}
		if v := getenv(k); v != "" {
			return v + "," + lang
		}
		return lang
	}
}

// localClient assembles the service in this process and returns a client connected to it over
// an in-memory listener (no port is opened), and the function that stops it all. The service's
// requests work under ctx, the command's: an interrupt stops the work in flight (a body being
// read, a decode, a document's pages) at once, not when it is done.
func localClient(ctx context.Context, getenv func(string) string, stderr io.Writer) (*client.Client, func(), error) {
	cfg, err := config.Load(nil, getenv, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	level := slog.LevelWarn // a command prints results, not the service's start-up chatter
	if getenv("OCRGATE_LOG_LEVEL") != "" {
		level, _ = cfg.SlogLevel()
	}
	cfg.Jobs = false // an in-process run reads its files itself; the jobs directory is serve's
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	app, eng, err := assemble(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	ln := fasthttputil.NewInmemoryListener()
	go func() { _ = app.Listener(ln) }() // ends when ln closes; a failure shows as the client's dial error
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.Dial() },
	}}
	opts := []client.Option{client.WithHTTPClient(hc)}
	if keys, _ := cfg.Keys(); len(keys) > 0 {
		opts = append(opts, client.WithAPIKey(keys[0])) // the service is ours: use its own key
	}
	c, err := client.New("http://ocrgate.in-process", opts...)
	if err != nil {
		_ = eng.Close() // err is what the caller acts on
		return nil, nil, err
	}
	return c, func() {
		_ = app.ShutdownWithTimeout(5 * time.Second)
		_ = eng.Close()
	}, nil
}

// outcome is one file's result.
type outcome struct {
	name string
	raw  json.RawMessage // the answer as the service sent it
	text string          // ocr: the text
	// failed are a document's pages that could not be read (the rest were).
	failed []failedPage
	err    error
	took   time.Duration
}

// batch is one run of ocr or extract over its files.
type batch struct {
	cmd   string
	opt   cliOptions
	files []string
	// job sends one file (by name; "-": standard input) to the service: the answer as sent,
	// for ocr its text, and a document's pages that could not be read.
	job    func(context.Context, string) (json.RawMessage, string, []failedPage, error)
	stdout io.Writer
	stderr io.Writer
}

// run reads the files on opt.jobs workers and prints each result as soon as it is there:
// progress to stderr (with several files), results to stdout. It returns the exit code.
func (b *batch) run(ctx context.Context) int {
	cmd, opt, files, job, stdout, stderr := b.cmd, b.opt, b.files, b.job, b.stdout, b.stderr
	next := make(chan string)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range min(opt.jobs, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				start := time.Now()
				o := outcome{name: name}
				var err error
				o.raw, o.text, o.failed, err = job(ctx, name)
				o.err, o.took = err, time.Since(start)
				results <- o
			}
		}()
	}
	go func() {
		defer close(next)
		for _, f := range files {
			select {
			case next <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	many := len(files) > 1
	code, done := exitOK, 0
	for o := range results {
		done++
		if o.err != nil {
			code = max(code, exitCode(o.err))
		}
		// A document read in part is printed, and its failed pages said on stderr.
		if len(o.failed) > 0 {
			code = max(code, exitInput)
		}
		if many && !opt.quiet {
			status := fmt.Sprintf("done in %.2f s", o.took.Seconds())
			if o.err != nil {
				status = describeError(o.err)
			}
			fmt.Fprintf(stderr, "[%d/%d] %s: %s\n", done, len(files), o.name, status)
		}
		printOutcome(cmd, opt, many, o, stdout, stderr)
		for _, f := range o.failed {
			if f.code == "" {
				fmt.Fprintf(stderr, "ocrgate %s: %s: page %d could not be read\n", cmd, o.name, f.page)
				continue
			}
			fmt.Fprintf(stderr, "ocrgate %s: %s: page %d: %s: %s\n", cmd, o.name, f.page, f.code, f.message)
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "ocrgate %s: interrupted after %d of %d files\n", cmd, done, len(files))
		code = max(code, exitService)
	}
	return code
}

func printOutcome(cmd string, opt cliOptions, many bool, o outcome, stdout, stderr io.Writer) {
	asJSON := cmd == "extract" || opt.json
	switch {
	case o.err == nil && opt.format != "" && !many:
		_, _ = stdout.Write(o.raw) // as the service sent it
	case o.err == nil && opt.format != "":
		fmt.Fprintf(stdout, "==> %s <==\n%s\n", o.name, o.raw)
	case o.err != nil && many && asJSON:
		line, _ := json.Marshal(fileLine{File: o.name, Error: errorLine(o.err)})
		fmt.Fprintf(stdout, "%s\n", line)
	case o.err != nil:
		if !many || opt.quiet {
			fmt.Fprintf(stderr, "ocrgate %s: %s: %s\n", cmd, o.name, describeError(o.err))
		}
	case many && asJSON:
		line, _ := json.Marshal(fileLine{File: o.name, Result: compact(o.raw)})
		fmt.Fprintf(stdout, "%s\n", line)
	case asJSON:
		fmt.Fprintf(stdout, "%s\n", strings.TrimRight(string(o.raw), "\n"))
	case many:
		fmt.Fprintf(stdout, "==> %s <==\n%s\n\n", o.name, o.text)
	default:
		fmt.Fprintf(stdout, "%s\n", o.text)
	}
}

// failedPage is a page of a document that could not be read.
type failedPage struct {
	page          int
	code, message string
}

// fileLine is one line of output with several files and --json (or extract): the file and the
// service's answer, or what went wrong.
type fileLine struct {
	File   string          `json:"file"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *errorInfo      `json:"error,omitempty"`
}

type errorInfo struct {
	Status  int    `json:"status,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"error"`
}

func errorLine(err error) *errorInfo {
	var e *client.Error
	if errors.As(err, &e) {
		return &errorInfo{Status: e.Status, Code: e.Code, Message: e.Message}
	}
	return &errorInfo{Message: err.Error()}
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// inputError is a file that could not be read: bad input, not a service failure.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// readInput reads standard input whole.
func readInput(stdin io.Reader) ([]byte, error) {
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, &inputError{err}
	}
	if len(data) == 0 {
		return nil, &inputError{errors.New("empty file")}
	}
	return data, nil
}

// checkFile says what is wrong with a file before it is sent: missing, unreadable, not a
// regular file, or empty.
func checkFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return &inputError{err}
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	st, err := f.Stat()
	switch {
	case err != nil:
		return &inputError{err}
	case !st.Mode().IsRegular():
		return &inputError{errors.New("not a regular file")}
	case st.Size() == 0:
		return &inputError{errors.New("empty file")}
	}
	return nil
}

// exitCode says whose fault err is.
func exitCode(err error) int {
	var e *client.Error
	var ie *inputError
	switch {
	case errors.As(err, &ie):
		return exitInput
	case errors.As(err, &e):
		switch e.Status {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
			return exitInput
		case http.StatusUnauthorized, http.StatusForbidden:
			return exitUsage
		}
	}
	return exitService
}

func describeError(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		if e.Code == "" {
			return fmt.Sprintf("%d %s", e.Status, e.Message)
		}
		return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	}
	return err.Error()
}
