// Package config is ocrgate's one configuration struct: every setting, its default, its
// environment variable and its command-line flag, filled once at start and validated.
//
// Precedence: flag, then environment, then default. Secrets are redacted when the config is logged.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Config holds every setting of the service.
type Config struct {
	Addr               string        // listen address
	Runtime            string        // "embedded" (ONNX Runtime in-process) or "triton"
	Home               string        // ~/.ocrgate: models/ and lib/ live here
	ModelDir           string        // directory with the .onnx files and the dictionary
	DetModel           string        // file names inside ModelDir
	RecModel           string        //
	ClsModel           string        //
	Dictionary         string        //
	ORTLibrary         string        // path of libonnxruntime.so.1
	IntraOpThreads     int           // cores the models use: detector threads, batches in flight (0: one per core)
	InterOpThreads     int           // ONNX Runtime threads across graph nodes (0: default)
	ORTSpin            bool          // let ONNX Runtime threads busy-wait between runs
	ORTArena           string        // ONNX Runtime memory arenas: session, shared or off
	ORTArenaMaxInput   int           // inputs with more values run on a session of their own (0: no bound)
	ORTConfig          string        // extra ONNX Runtime session config entries: key=value,key=value
	TritonAddr         string        // host:port of Triton's gRPC endpoint
	TritonDetModel     string        // Triton model names
	TritonRecModel     string        //
	TritonClsModel     string        //
	TritonSHM          string        // Triton outputs through shared memory: off, auto, on
	TritonMaxRecvBytes int           // largest gRPC response accepted from Triton
	RequestTimeout     time.Duration // deadline of every request, carried into every model call
	MaxBodyBytes       int           // largest request body accepted
	CORSOrigins        string        // comma-separated allowed origins, "*" for any
	APIKeys            string        // comma-separated API keys required on /ocr and /ocr-json (empty: open)
	APIKeysFile        string        // file with one API key per line (# comments), added to APIKeys
	MaxInFlight        int           // OCR jobs running at once (0: one per CPU core)
	MaxQueue           int           // OCR jobs waiting for a slot; more are refused with 429 (-1: 2 × MaxInFlight)
	QueueTimeout       time.Duration // longest wait for a slot before 429
	MemoryBudget       int64         // bytes admitted requests may hold together (0: derived at start from the memory limit)
	MaxRequestMemory   int64         // largest memory cost of one request; more is refused with 413 (0: the budget)
	ChatMaxInFlight    int           // /ocr-json chat calls at once
	ChatMaxQueue       int           // /ocr-json requests waiting for a chat slot; beyond, 429 at once
	LogLevel           string        // debug, info, warn, error
	LogFormat          string        // text or json
	UI                 bool          // serve the demo page at GET / (the API is the same either way)
	MaxPages           int           // document pages one request may read (413 beyond)
	MaxImages          int           // entries of an "images" array (413 beyond)
	MaxAnswerBytes     int64         // largest answer of one request's documents (413 beyond)
	PageTimeout        time.Duration // added to a document's deadline per OCR'd page after the first
	MaxDocumentTimeout time.Duration // cap of a document's (or an "images" array's) deadline
	RenderTimeout      time.Duration // longest one PDF page may take to be read and drawn (422 beyond)
	PDFInstances       int           // PDFs open at once in the engine (0: max in-flight)
	PDFMemory          int64         // memory cap of one PDF engine instance, charged to every job that holds one
	PDFCacheDir        string        // compiled PDF engine cache ("off": none)

	Chat extract.Options // /ocr-json: chat model (CHAT_BOT_*), timeout, re-asks, schema limits

	OCR ocr.Options // pipeline settings
}

// Home is where scripts/fetch_models.sh installs the models and ONNX Runtime, and where the
// service looks for them: $OCRGATE_HOME, by default ~/.ocrgate (.ocrgate in the working directory
// when there is no home directory). Tests and tools that find the models call it too.
func Home(getenv func(string) string) string {
	if home := getenv("OCRGATE_HOME"); home != "" {
		return home
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".ocrgate")
	}
	return ".ocrgate"
}

// setting binds one field to its environment variable and flag.
type setting struct {
	env, flag, usage string
	value            flag.Value
}

// Load fills a Config from defaults, the environment (getenv) and command-line args, then
// validates it. It returns flag.ErrHelp when args ask for help (usage has then been written to out).
func Load(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	home := Home(getenv)
	c := Config{
		Addr:               ":5000",
		Runtime:            "embedded",
		Home:               home,
		ModelDir:           filepath.Join(home, "models"),
		DetModel:           "ch_PP-OCRv4_det_infer.prepared.onnx", // written by cmd/ocrgate-prepare
		RecModel:           "ch_PP-OCRv4_rec_infer.int8.onnx",     // six 1×1 convolutions in int8
		ClsModel:           "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx",
		Dictionary:         "ppocr_keys_v1.txt",
		ORTLibrary:         filepath.Join(home, "lib", "libonnxruntime.so.1"),
		ORTArena:           "shared",
		ORTArenaMaxInput:   3 * 960 * 960, // the largest first detection pass
		TritonAddr:         "localhost:8001",
		TritonDetModel:     "ppocr_det",
		TritonRecModel:     "ppocr_rec",
		TritonClsModel:     "ppocr_cls",
		TritonMaxRecvBytes: 256 << 20,
		TritonSHM:          "auto",
		RequestTimeout:     30 * time.Second,
		MaxBodyBytes:       20 << 20,
		CORSOrigins:        "*",
		MaxQueue:           -1,
		QueueTimeout:       10 * time.Second,
		ChatMaxInFlight:    4,
		ChatMaxQueue:       8,
		LogLevel:           "info",
		LogFormat:          "text",
		UI:                 true,
		MaxPages:           50,
		MaxImages:          16,
		MaxAnswerBytes:     64 << 20,
		PageTimeout:        15 * time.Second,
		MaxDocumentTimeout: 10 * time.Minute,
		RenderTimeout:      10 * time.Second,
		PDFMemory:          256 << 20,
		PDFCacheDir:        filepath.Join(home, "cache", "pdfium"),
		OCR:                ocr.DefaultOptions(),
		Chat: extract.Options{
			Timeout:        extract.DefaultTimeout,
			Reasks:         extract.DefaultReasks,
			MaxAnswerBytes: extract.DefaultMaxAnswerBytes,
			MaxText:        extract.DefaultMaxText,
			Schema: extract.Limits{
				MaxBytes:      extract.DefaultMaxSchemaBytes,
				MaxDepth:      extract.DefaultMaxSchemaDepth,
				MaxProperties: extract.DefaultMaxProperties,
			},
		},
	}
	o := &c.OCR
	settings := []setting{
		{"OCRGATE_ADDR", "addr", "listen address (host:port)", (*stringValue)(&c.Addr)},
		{"OCRGATE_RUNTIME", "runtime", "model runtime: embedded (ONNX Runtime in-process) or triton", (*stringValue)(&c.Runtime)},
		{"OCRGATE_MODEL_DIR", "model-dir", "directory holding the models and dictionary", (*stringValue)(&c.ModelDir)},
		{"OCRGATE_DET_MODEL", "det-model", "detection model file in the model directory", (*stringValue)(&c.DetModel)},
		{"OCRGATE_REC_MODEL", "rec-model", "recognition model file in the model directory", (*stringValue)(&c.RecModel)},
		{"OCRGATE_CLS_MODEL", "cls-model", "direction classifier model file in the model directory", (*stringValue)(&c.ClsModel)},
		{"OCRGATE_DICT", "dict", "character dictionary file in the model directory", (*stringValue)(&c.Dictionary)},
		{"OCRGATE_ORT_LIB", "ort-lib", "path of the ONNX Runtime shared library", (*stringValue)(&c.ORTLibrary)},
		{"OCRGATE_ORT_INTRA_THREADS", "ort-intra-threads", "cores the models use: ONNX Runtime threads of a detector run; the recognizer and classifier run single-threaded, this many batches at once unless rec-parallel says otherwise (0: one per core)", (*intValue)(&c.IntraOpThreads)},
		{"OCRGATE_ORT_INTER_THREADS", "ort-inter-threads", "ONNX Runtime threads across graph nodes (0: default)", (*intValue)(&c.InterOpThreads)},
		{"OCRGATE_ORT_SPIN", "ort-spin", "let ONNX Runtime threads busy-wait between runs (faster back-to-back runs, less CPU for the Go stages)", (*boolValue)(&c.ORTSpin)},
		{"OCRGATE_ORT_ARENA_MAX_INPUT", "ort-arena-max-input", "model inputs of more values than this (default: a 960×960 detector input) run on a session created for the run, so their memory is returned after it (0: no bound)", (*intValue)(&c.ORTArenaMaxInput)},
		{"OCRGATE_ORT_ARENA", "ort-arena", "ONNX Runtime memory for intermediate tensors: session (an arena per session), shared (one arena for every model) or off (the C allocator)", (*stringValue)(&c.ORTArena)},
		{"OCRGATE_ORT_SESSION_CONFIG", "ort-session-config", "extra ONNX Runtime session config entries, key=value,key=value", (*stringValue)(&c.ORTConfig)},
		{"OCRGATE_TRITON_ADDR", "triton-addr", "Triton gRPC endpoint (host:port) for -runtime triton", (*stringValue)(&c.TritonAddr)},
		{"OCRGATE_TRITON_DET_MODEL", "triton-det-model", "Triton model name of the detector", (*stringValue)(&c.TritonDetModel)},
		{"OCRGATE_TRITON_REC_MODEL", "triton-rec-model", "Triton model name of the recognizer", (*stringValue)(&c.TritonRecModel)},
		{"OCRGATE_TRITON_CLS_MODEL", "triton-cls-model", "Triton model name of the direction classifier", (*stringValue)(&c.TritonClsModel)},
		{"OCRGATE_TRITON_SHM", "triton-shm", "Triton outputs through system shared memory: off, auto (use it when Triton can open /dev/shm regions, else gRPC) or on", (*stringValue)(&c.TritonSHM)},
		{"OCRGATE_TRITON_MAX_RECV_BYTES", "triton-max-recv-bytes", "largest gRPC response accepted from Triton, in bytes", (*intValue)(&c.TritonMaxRecvBytes)},
		{"OCRGATE_REQUEST_TIMEOUT", "request-timeout", "deadline of every request", (*durationValue)(&c.RequestTimeout)},
		{"OCRGATE_MAX_BODY_BYTES", "max-body-bytes", "largest request body accepted, in bytes", (*intValue)(&c.MaxBodyBytes)},
		{"OCRGATE_CORS_ORIGINS", "cors-origins", "comma-separated origins allowed to call the API from a browser (* for any)", (*stringValue)(&c.CORSOrigins)},
		{"OCRGATE_API_KEYS", "api-keys", "comma-separated API keys required as Bearer tokens on /ocr and /ocr-json (empty: no auth)", (*stringValue)(&c.APIKeys)},
		{"OCRGATE_API_KEYS_FILE", "api-keys-file", "file with one API key per line (# comments), in addition to OCRGATE_API_KEYS", (*stringValue)(&c.APIKeysFile)},
		{"OCRGATE_MAX_INFLIGHT", "max-inflight", "OCR jobs running at once (0: one per CPU core)", (*intValue)(&c.MaxInFlight)},
		{"OCRGATE_MAX_QUEUE", "max-queue", "OCR jobs waiting for a slot; beyond, 429 at once (-1: twice max-inflight)", (*intValue)(&c.MaxQueue)},
		{"OCRGATE_QUEUE_TIMEOUT", "queue-timeout", "longest wait for a slot before 429", (*durationValue)(&c.QueueTimeout)},
		{"OCRGATE_MEMORY_BUDGET", "memory-budget", "memory admitted requests may hold together, e.g. 800MiB (0 or auto: the container's memory limit, or 1 GiB, less what the process holds at rest)", (*bytesValue)(&c.MemoryBudget)},
		{"OCRGATE_MAX_REQUEST_MEMORY", "max-request-memory", "largest memory cost of one request, e.g. 600MiB; more is refused with 413 (0: the memory budget)", (*bytesValue)(&c.MaxRequestMemory)},
		{"OCRGATE_MAX_JPEG_SCANS", "max-jpeg-scans", "refuse progressive JPEGs with more scans than this (0: no limit); encoders write about 10", (*intValue)(&o.Limits.MaxScans)},
		{"OCRGATE_JPEG_HALF_PIXELS", "jpeg-half-pixels", "decode baseline JPEGs of at least this many pixels at half size, e.g. 600-dpi scans (0: never); boxes stay in the file's pixels", (*intValue)(&o.Limits.HalfPixels)},
		{"OCRGATE_JPEG_HALF_MIN_TEXT", "jpeg-half-min-text", "decode a half-size page again whole when its median line is shorter than this, in the file's pixels (0: never)", (*floatValue)(&o.HalfMinTextHeight)},
		{"OCRGATE_LOG_LEVEL", "log-level", "debug, info, warn or error", (*stringValue)(&c.LogLevel)},
		{"OCRGATE_LOG_FORMAT", "log-format", "text or json", (*stringValue)(&c.LogFormat)},
		{"OCRGATE_UI", "ui", "serve the demo page at GET / (false: GET / answers 404; the API and /openapi.json stay)", (*boolValue)(&c.UI)},
		{"OCRGATE_MAX_PAGES", "max-pages", "document pages one request may read, its default selection (every page) included; more is refused with 413", (*intValue)(&c.MaxPages)},
		{"OCRGATE_MAX_IMAGES", "max-images", "entries of an \"images\" array; more is refused with 413", (*intValue)(&c.MaxImages)},
		{"OCRGATE_MAX_ANSWER_BYTES", "max-answer-bytes", "largest answer (regions, words and text as JSON) the documents of one request may have, e.g. 64MiB; more is refused with 413 answer_too_large, and what an answer holds is charged to the memory budget while it is built", (*bytesValue)(&c.MaxAnswerBytes)},
		{"OCRGATE_PAGE_TIMEOUT", "page-timeout", "added to a document's deadline for every page it OCRs after the first", (*durationValue)(&c.PageTimeout)},
		{"OCRGATE_MAX_DOCUMENT_TIMEOUT", "max-document-timeout", "longest deadline of a document or an \"images\" array", (*durationValue)(&c.MaxDocumentTimeout)},
		{"OCRGATE_RENDER_TIMEOUT", "render-timeout", "longest one PDF page may take to be read and drawn; longer is refused with 422 document_too_complex", (*durationValue)(&c.RenderTimeout)},
		{"OCRGATE_PDF_INSTANCES", "pdf-instances", "PDFs open at once in the PDF engine (0: max-inflight)", (*intValue)(&c.PDFInstances)},
		{"OCRGATE_PDF_MEMORY", "pdf-memory", "memory cap of one PDF engine instance, e.g. 256MiB; a job that opens a PDF is charged this much", (*bytesValue)(&c.PDFMemory)},
		{"OCRGATE_PDF_CACHE_DIR", "pdf-cache-dir", "where the compiled PDF engine is kept between starts (off: nowhere; used read-only when it exists and cannot be written)", (*stringValue)(&c.PDFCacheDir)},
		{"OCRGATE_CHAT_MAX_TEXT", "chat-max-text", "characters of OCR text sent to the chat model at most; a longer document's text is cut (X-Chat-Text-Cut)", (*intValue)(&c.Chat.MaxText)},
		{"CHAT_BOT_MODEL", "chat-model", "chat model for /ocr-json (e.g. gpt-4o-mini, qwen2.5:7b); empty: /ocr-json answers 503", (*stringValue)(&c.Chat.Model)},
		{"CHAT_BOT_BASEURL", "chat-baseurl", "OpenAI-compatible API root with its version segment, e.g. http://localhost:11434/v1", (*stringValue)(&c.Chat.BaseURL)},
		{"CHAT_BOT_APIKEY", "chat-apikey", "API key for the chat model, sent as a bearer token (never logged)", (*stringValue)(&c.Chat.APIKey)},
		{"OCRGATE_CHAT_TIMEOUT", "chat-timeout", "bound on one chat call", (*durationValue)(&c.Chat.Timeout)},
		{"OCRGATE_CHAT_REASKS", "chat-reasks", "times an invalid answer is sent back with what is wrong (0: never)", (*intValue)(&c.Chat.Reasks)},
		{"OCRGATE_CHAT_MAX_ANSWER_BYTES", "chat-max-answer-bytes", "largest chat server response accepted, e.g. 1MiB; larger answers fail with 502", (*bytesValue)(&c.Chat.MaxAnswerBytes)},
		{"OCRGATE_CHAT_MAX_INFLIGHT", "chat-max-inflight", "/ocr-json chat calls at once (the OCR before them is admitted like /ocr)", (*intValue)(&c.ChatMaxInFlight)},
		{"OCRGATE_CHAT_MAX_QUEUE", "chat-max-queue", "/ocr-json requests waiting for a chat slot; beyond, 429 at once", (*intValue)(&c.ChatMaxQueue)},
		{"OCRGATE_SCHEMA_MAX_BYTES", "schema-max-bytes", "largest caller schema for /ocr-json, in bytes", (*intValue)(&c.Chat.Schema.MaxBytes)},
		{"OCRGATE_SCHEMA_MAX_DEPTH", "schema-max-depth", "deepest nesting of a caller schema", (*intValue)(&c.Chat.Schema.MaxDepth)},
		{"OCRGATE_SCHEMA_MAX_PROPERTIES", "schema-max-properties", "most properties in a caller schema", (*intValue)(&c.Chat.Schema.MaxProperties)},
		{"OCRGATE_MAX_IMAGE_PIXELS", "max-image-pixels", "largest image accepted, in pixels (checked before decoding)", (*intValue)(&o.Limits.MaxPixels)},
		{"OCRGATE_MAX_IMAGE_SIDE", "max-image-side", "longest image side accepted, in pixels", (*intValue)(&o.Limits.MaxSide)},
		{"OCRGATE_DET_LIMIT_SIDE", "det-limit-side", "first detection pass: long side of the detector input at most this", (*intValue)(&o.DetLimitSide)},
		{"OCRGATE_DET_PREVIEW", "det-preview", "first detection pass on huge JPEGs: read the 1/8 preview the decoder gets for free instead of every pixel", (*boolValue)(&o.DetPreview)},
		{"OCRGATE_DET_MIN_TEXT_HEIGHT", "det-min-text-height", "run a second detection pass when the median text height of the first is below this (detector px)", (*floatValue)(&o.DetMinTextHeight)},
		{"OCRGATE_DET_TARGET_TEXT_HEIGHT", "det-target-text-height", "second detection pass: scale so text is this tall (detector px)", (*floatValue)(&o.DetTargetTextHeight)},
		{"OCRGATE_DET_MAX_PIXELS", "det-max-pixels", "second detection pass: at most this many detector input pixels", (*intValue)(&o.DetMaxPixels)},
		{"OCRGATE_DET_TILE_PIXELS", "det-tile-pixels", "detector inputs above this many pixels run as overlapping tiles of at most this size, stitched into one map (0: one run whatever the size)", (*intValue)(&o.DetTilePixels)},
		{"OCRGATE_DET_TILE_OVERLAP", "det-tile-overlap", "detector pixels a tile reads past its core toward each neighbour (a multiple of 32)", (*intValue)(&o.DetTileOverlap)},
		{"OCRGATE_DET_THRESH", "det-thresh", "DB binarization threshold", (*float32Value)(&o.DB.Threshold)},
		{"OCRGATE_DET_BOX_THRESH", "det-box-thresh", "DB minimum mean probability inside a box", (*float32Value)(&o.DB.BoxThreshold)},
		{"OCRGATE_DET_UNCLIP_RATIO", "det-unclip-ratio", "DB box expansion ratio", (*floatValue)(&o.DB.UnclipRatio)},
		{"OCRGATE_DET_MIN_SIZE", "det-min-size", "DB minimum box side (detector px)", (*floatValue)(&o.DB.MinSize)},
		{"OCRGATE_DET_MAX_CANDIDATES", "det-max-candidates", "DB regions considered at most", (*intValue)(&o.DB.MaxCandidates)},
		{"OCRGATE_CROP_ROTATE_RATIO", "crop-rotate-ratio", "boxes this many times taller than wide are read as vertical text", (*floatValue)(&o.CropRotateRatio)},
		{"OCRGATE_USE_CLS", "use-cls", "run the 180° direction classifier", (*boolValue)(&o.UseClassifier)},
		{"OCRGATE_CLS_THRESH", "cls-thresh", "flip a crop when the classifier's 180° probability is at least this", (*float32Value)(&o.ClsThreshold)},
		{"OCRGATE_CLS_PAGE_SAMPLE", "cls-page-sample", "classify this many of a page's widest crops first; if at most one in six reads upside down, take the page as upright and classify no other horizontal crop (0: classify every crop)", (*intValue)(&o.ClsPageSample)},
		{"OCRGATE_CLS_BATCH", "cls-batch", "crops per classifier batch", (*intValue)(&o.ClsBatchSize)},
		{"OCRGATE_REC_BATCH", "rec-batch", "crops per recognizer batch", (*intValue)(&o.RecBatchSize)},
		{"OCRGATE_REC_BATCH_PIXELS", "rec-batch-pixels", "most input pixels (crops × 48 × bucket width) of one recognizer batch; wide buckets hold fewer crops (0: no cap)", (*intValue)(&o.RecBatchPixels)},
		{"OCRGATE_BATCH_PIXELS_IN_FLIGHT", "batch-pixels-in-flight", "most input pixels of one image's recognizer or classifier batches in flight together, which bounds their memory whatever the core count (0: no cap)", (*intValue)(&o.BatchPixelsInFlight)},
		{"OCRGATE_REC_PARALLEL", "rec-parallel", "recognizer and classifier batches of one image in flight at once (0: as many as ort-intra-threads)", (*intValue)(&o.BatchParallel)},
		{"OCRGATE_REC_WIDTH_STEP", "rec-width-step", "pad a recognizer batch to its widest crop rounded up to a multiple of this (0: to the width buckets, equal shapes a Triton dynamic batcher can merge)", (*intValue)(&o.RecWidthStep)},
		{"OCRGATE_REC_SQUEEZE", "rec-squeeze", "narrow recognizer crops wider than rec-squeeze-from to this share of their width (1: keep every crop's aspect)", (*floatValue)(&o.RecSqueeze)},
		{"OCRGATE_REC_SQUEEZE_FROM", "rec-squeeze-from", "recognizer crops wider than this (px at the recognizer's height) are narrowed by rec-squeeze", (*intValue)(&o.RecSqueezeFrom)},
		{"OCRGATE_REC_WIDTH_BUCKETS", "rec-width-buckets", "comma-separated widths recognizer batches are padded to with rec-width-step 0, ascending; wider crops are squeezed to the last whatever the step", (*intListValue)(&o.RecWidthBuckets)},
		{"OCRGATE_SPACE_THRESH", "space-thresh", "restore a space where the recognizer gives it this probability between two characters (0: off)", (*float32Value)(&o.CTC.SpaceThreshold)},
		{"OCRGATE_ASCII_PUNCTUATION", "ascii-punctuation", "read fullwidth punctuation as ASCII in lines without CJK characters", (*boolValue)(&o.ASCIIPunctuation)},
		{"OCRGATE_MIN_SCORE", "min-score", "drop regions recognized with a lower confidence", (*float32Value)(&o.MinScore)},
		{"OCRGATE_ROW_OVERLAP", "row-overlap", "share of a box's height that must overlap a row for it to join the row", (*floatValue)(&o.RowOverlap)},
	}

	fs := flag.NewFlagSet("ocrgate", flag.ContinueOnError)
	fs.SetOutput(out)
	var errs []error
	for _, s := range settings {
		if v := getenv(s.env); v != "" {
			if err := s.value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", s.env, v, err))
			}
		}
		fs.Var(s.value, s.flag, s.usage+" (env "+s.env+")")
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: ocrgate [serve] [flags]\n       ocrgate ocr [flags] FILE...\n       ocrgate extract [flags] FILE...\n       ocrgate version\n       ocrgate bench [flags]\n\nFlags (each also an environment variable):\n")
		fs.PrintDefaults()
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.OCR.BatchParallel == 0 {
		c.OCR.BatchParallel = c.Cores()
	}
	return c, c.Validate()
}

// Validate reports settings that cannot work, all at once.
func (c Config) Validate() error {
	var errs []error
	if c.Runtime != "embedded" && c.Runtime != "triton" {
		errs = append(errs, fmt.Errorf("runtime must be embedded or triton, got %q", c.Runtime))
	}
	if c.Runtime == "triton" && (c.TritonAddr == "" || c.TritonDetModel == "" || c.TritonRecModel == "" || c.TritonClsModel == "") {
		errs = append(errs, errors.New("triton runtime needs an address and three model names"))
	}
	if c.TritonSHM != "off" && c.TritonSHM != "auto" && c.TritonSHM != "on" {
		errs = append(errs, fmt.Errorf("triton shm must be off, auto or on, got %q", c.TritonSHM))
	}
	if c.TritonMaxRecvBytes < 4<<20 {
		errs = append(errs, fmt.Errorf("triton max receive bytes must be at least 4 MiB, got %d", c.TritonMaxRecvBytes))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("request timeout must be positive, got %s", c.RequestTimeout))
	}
	if c.MaxBodyBytes < 1024 {
		errs = append(errs, fmt.Errorf("max body bytes must be at least 1024, got %d", c.MaxBodyBytes))
	}
	if c.MaxInFlight < 0 || c.MaxQueue < -1 || c.QueueTimeout < 0 {
		errs = append(errs, errors.New("max inflight must be ≥ 0, max queue ≥ -1 and queue timeout ≥ 0"))
	}
	if c.MemoryBudget < 0 || c.MaxRequestMemory < 0 {
		errs = append(errs, errors.New("memory budget and max request memory must not be negative"))
	}
	if c.ChatMaxInFlight < 1 || c.ChatMaxQueue < 0 {
		errs = append(errs, errors.New("chat max inflight must be ≥ 1 and chat max queue ≥ 0"))
	}
	if c.MaxPages < 1 || c.MaxPages > 10_000 {
		errs = append(errs, fmt.Errorf("max pages must be from 1 to 10000, got %d", c.MaxPages))
	}
	if c.MaxImages < 1 {
		errs = append(errs, fmt.Errorf("max images must be at least 1, got %d", c.MaxImages))
	}
	// A max document timeout under the request timeout gives documents the request timeout.
	if c.PageTimeout < 0 || c.RenderTimeout <= 0 || c.MaxDocumentTimeout <= 0 {
		errs = append(errs, fmt.Errorf("page timeout must not be negative, render and max document timeouts must be positive, got %s, %s and %s",
			c.PageTimeout, c.RenderTimeout, c.MaxDocumentTimeout))
	}
	if c.MaxAnswerBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("max answer bytes must be at least 1 MiB, got %d", c.MaxAnswerBytes))
	}
	if c.PDFInstances < 0 {
		errs = append(errs, fmt.Errorf("pdf instances must not be negative, got %d", c.PDFInstances))
	}
	if c.PDFMemory < 64<<20 || c.PDFMemory > 4<<30 {
		errs = append(errs, fmt.Errorf("pdf memory must be from 64 MiB to 4 GiB (a WebAssembly memory's limit), got %d", c.PDFMemory))
	}
	if c.Chat.MaxText < 1000 {
		errs = append(errs, fmt.Errorf("chat max text must be at least 1000 characters, got %d", c.Chat.MaxText))
	}
	if c.Chat.MaxAnswerBytes < 1024 {
		errs = append(errs, fmt.Errorf("chat max answer bytes must be at least 1024, got %d", c.Chat.MaxAnswerBytes))
	}
	if _, err := c.Keys(); err != nil {
		errs = append(errs, err)
	}
	if c.ORTArenaMaxInput < 0 {
		errs = append(errs, fmt.Errorf("ort arena max input must not be negative, got %d", c.ORTArenaMaxInput))
	}
	if c.ORTArena != "session" && c.ORTArena != "shared" && c.ORTArena != "off" {
		errs = append(errs, fmt.Errorf("ort arena must be session, shared or off, got %q", c.ORTArena))
	}
	if c.IntraOpThreads < 0 || c.InterOpThreads < 0 {
		errs = append(errs, errors.New("thread counts must not be negative"))
	}
	if _, err := c.SessionConfig(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.SlogLevel(); err != nil {
		errs = append(errs, err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log format must be text or json, got %q", c.LogFormat))
	}
	if err := c.OCR.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Keys returns the configured API keys: OCRGATE_API_KEYS plus the lines of OCRGATE_API_KEYS_FILE.
func (c Config) Keys() ([]string, error) {
	var keys []string
	for _, k := range strings.Split(c.APIKeys, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	// Setting the variable says "require a key"; a value that holds none (" , ") must not
	// quietly leave the API open.
	if c.APIKeys != "" && len(keys) == 0 {
		return nil, errors.New("OCRGATE_API_KEYS is set but holds no key")
	}
	if c.APIKeysFile != "" {
		data, err := os.ReadFile(c.APIKeysFile)
		if err != nil {
			return nil, fmt.Errorf("API keys file: %w", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, line)
			}
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("API keys file %s holds no key", c.APIKeysFile)
		}
	}
	return keys, nil
}

// Admission returns the effective in-flight limit and queue length.
func (c Config) Admission() (inflight, queue int) {
	inflight = c.MaxInFlight
	if inflight == 0 {
		inflight = runtime.NumCPU()
	}
	queue = c.MaxQueue
	if queue < 0 {
		queue = 2 * inflight
	}
	return inflight, queue
}

// Cores is how many cores the models use: OCRGATE_ORT_INTRA_THREADS, or one per core.
func (c Config) Cores() int {
	if c.IntraOpThreads > 0 {
		return c.IntraOpThreads
	}
	return runtime.NumCPU()
}

// SessionConfig parses ORTConfig.
func (c Config) SessionConfig() (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(c.ORTConfig, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("ONNX Runtime session config %q is not key=value", kv)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// PDFCache returns the directory the compiled PDF engine is cached in, "" for none ("off").
func (c Config) PDFCache() string {
	if strings.EqualFold(strings.TrimSpace(c.PDFCacheDir), "off") {
		return ""
	}
	return c.PDFCacheDir
}

// Instances returns how many PDFs may be open at once: PDFInstances, or the in-flight limit.
func (c Config) Instances() int {
	if c.PDFInstances > 0 {
		return c.PDFInstances
	}
	inflight, _ := c.Admission()
	return inflight
}

// ModelPath returns the path of a file in the model directory.
func (c Config) ModelPath(name string) string { return filepath.Join(c.ModelDir, name) }

// SlogLevel parses LogLevel.
func (c Config) SlogLevel() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return 0, fmt.Errorf("log level must be debug, info, warn or error, got %q", c.LogLevel)
	}
	return l, nil
}

// LogValue logs the settings that matter to an operator, with secrets redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("runtime", c.Runtime),
		slog.String("model_dir", c.ModelDir),
		slog.String("ort_lib", c.ORTLibrary),
		slog.String("triton_addr", c.TritonAddr),
		slog.Int("ort_intra_threads", c.IntraOpThreads),
		slog.Duration("request_timeout", c.RequestTimeout),
		slog.Int("max_body_bytes", c.MaxBodyBytes),
		slog.String("cors_origins", c.CORSOrigins),
		slog.Bool("api_keys", c.APIKeys != "" || c.APIKeysFile != ""), // whether auth is on, never the keys
		slog.Int("max_inflight", c.MaxInFlight),
		slog.Int("max_queue", c.MaxQueue),
		slog.Bool("ui", c.UI),
		slog.Int("max_pages", c.MaxPages),
		slog.Int64("max_answer_bytes", c.MaxAnswerBytes),
		slog.Int("max_images", c.MaxImages),
		slog.Duration("page_timeout", c.PageTimeout),
		slog.Duration("max_document_timeout", c.MaxDocumentTimeout),
		slog.Duration("render_timeout", c.RenderTimeout),
		slog.Int("pdf_instances", c.PDFInstances),
		slog.Int64("pdf_memory", c.PDFMemory),
		slog.String("pdf_cache_dir", c.PDFCacheDir),
		slog.Int64("memory_budget", c.MemoryBudget),
		slog.Int64("max_request_memory", c.MaxRequestMemory),
		slog.Int("max_jpeg_scans", c.OCR.Limits.MaxScans),
		slog.Int("jpeg_half_pixels", c.OCR.Limits.HalfPixels),
		slog.Float64("jpeg_half_min_text", c.OCR.HalfMinTextHeight),
		slog.Int("chat_max_inflight", c.ChatMaxInFlight),
		slog.Int("chat_max_queue", c.ChatMaxQueue),
		slog.Any("chat", c.Chat), // Options.LogValue redacts the key
		slog.Int("det_limit_side", c.OCR.DetLimitSide),
		slog.Bool("use_cls", c.OCR.UseClassifier),
		slog.Float64("min_score", float64(c.OCR.MinScore)),
	)
}

type (
	bytesValue    int64
	stringValue   string
	intValue      int
	floatValue    float64
	float32Value  float32
	boolValue     bool
	durationValue time.Duration
)

func (v *bytesValue) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*v = bytesValue(n)
	return nil
}
func (v *bytesValue) String() string { return strconv.FormatInt(int64(*v), 10) }

// ParseBytes reads a size in bytes: a plain number, or one with a unit: KiB, MiB, GiB, TiB (and
// Ki, Mi, Gi, Ti, as Kubernetes writes them) are powers of 1024; kB, MB, GB, TB (and k, K, M,
// G, T) powers of 1000. "auto" is 0.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "auto") {
		return 0, nil
	}
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
	units := map[string]float64{
		"": 1, "B": 1,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
		"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
	}
	mult, ok := units[unit]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f < 0 || f*mult > 1<<62 {
		return 0, errors.New("not a size in bytes (e.g. 1073741824, 800MiB or 1GiB)")
	}
	return int64(f * mult), nil
}

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not an integer")
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

type intListValue []int

func (v *intListValue) Set(s string) error {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return errors.New("not a comma-separated list of integers")
		}
		out = append(out, n)
	}
	*v = out
	return nil
}

func (v *intListValue) String() string {
	parts := make([]string, len(*v))
	for i, n := range *v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return errors.New("not a number")
	}
	*v = floatValue(f)
	return nil
}
func (v *floatValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }

func (v *float32Value) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
	if err != nil {
		return errors.New("not a number")
	}
	*v = float32Value(f)
	return nil
}
func (v *float32Value) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 32) }

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a boolean (true/false)")
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a duration (e.g. 30s)")
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string { return time.Duration(*v).String() }
