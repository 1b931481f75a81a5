package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// setting is one row of the settings table: the environment variable, the command-line flag ("":
// environment only), what it does, and the field it fills. The value's String before Load
// applies the environment is the default; a value wrapped in a rule (rules.go) is checked by
// Validate. Load, Validate, the -h text and docs/configuration.md all read this one table, so
// none of them can say something the others do not.
//
// A row with neither variable nor flag starts a section (section).
type setting struct {
	env, flag, usage string
	value            flag.Value
}

// section starts a group of rows under a title in the docs.
func section(title string) setting { return setting{usage: title} }

func (s setting) isSection() bool { return s.env == "" && s.flag == "" }

// name is how an error names the setting: its variable and its flag.
func (s setting) name() string {
	if s.flag == "" {
		return s.env
	}
	return s.env + " (-" + s.flag + ")"
}

// settings binds every setting to its field in c. Add a setting here, with its default in
// defaults and its rule, then run `go generate ./service/config` to update the docs.
func (c *Config) settings() []setting {
	o := &c.OCR
	return []setting{
		section("Server"),
		{"OCRGATE_ADDR", "addr", "listen address (host:port)", (*stringValue)(&c.Addr)},
		{"OCRGATE_HOME", "", "where `models/`, `lib/` and `cache/` live (scripts/fetch_models.sh installs there); the paths below default inside it", shownAs("~/.ocrgate", (*stringValue)(&c.Home))},
		{"OCRGATE_LOG_LEVEL", "log-level", "least severe log lines written", checkedBy((*stringValue)(&c.LogLevel), "`debug`, `info`, `warn` or `error`", func() error {
			_, err := c.SlogLevel()
			return err
		})},
		{"OCRGATE_LOG_FORMAT", "log-format", "log lines as text or as one JSON object each (the container images set json)", oneOf(&c.LogFormat, "text", "json")},
		{"OCRGATE_UI", "ui", "serve the demo page at GET / (false: GET / answers 404; the API and /openapi.json stay)", (*boolValue)(&c.UI)},
		{"OCRGATE_CORS_ORIGINS", "cors-origins", "comma-separated origins allowed to call the API from a browser (* for any)", (*stringValue)(&c.CORSOrigins)},
		{"OCRGATE_API_KEYS", "api-keys", "comma-separated API keys required as Bearer tokens on /ocr, /ocr-json and /templates (empty: no auth; a value holding no key, such as \" , \", is refused rather than leaving the API open)", checkedBy((*stringValue)(&c.APIKeys), "comma-separated keys", func() error {
			if _, err := splitKeys(c.APIKeys); err != nil {
				return errors.New("is set but holds no key")
			}
			return nil
		})},
		{"OCRGATE_API_KEYS_FILE", "api-keys-file", "file with one API key per line (# comments), in addition to OCRGATE_API_KEYS", checkedBy((*stringValue)(&c.APIKeysFile), "a readable file holding a key", func() error {
			if _, err := splitKeys(c.APIKeys); err != nil || c.APIKeysFile == "" {
				return nil // OCRGATE_API_KEYS's own check reports it
			}
			_, err := c.Keys()
			return err
		})},

		section("Requests and limits"),
		{"OCRGATE_REQUEST_TIMEOUT", "request-timeout", "deadline of every request, carried into every model and chat call", above(0, (*durationValue)(&c.RequestTimeout))},
		{"OCRGATE_MAX_BODY_BYTES", "max-body-bytes", "largest file a request may send, in bytes: a raw body, or the files of a form together (the form may be 1 MiB longer); a JSON body, base64 included", atLeast(1024, (*intValue)(&c.MaxBodyBytes))},
		{"OCRGATE_BODY_MEMORY", "body-memory", "memory the request bodies being received may take together, e.g. 80MiB; a body's buffer grows as its bytes arrive, each growth admitted first, and one that does not fit within 2 s is refused with 429 (0 or auto: 4 × max-body-bytes)", checkedBy((*bytesValue)(&c.BodyMemory), "0, or at least max-body-bytes", func() error {
			if c.BodyMemory != 0 && c.BodyMemory < int64(c.MaxBodyBytes) {
				return fmt.Errorf("must be 0 or at least max-body-bytes (%d)", c.MaxBodyBytes)
			}
			return nil
		})},
		{"OCRGATE_MAX_CONNECTIONS", "max-connections", "connections open at once; at the bound a new connection replaces an idle keep-alive one, or is answered 503 too_many_connections", atLeast(1, (*intValue)(&c.MaxConnections))},
		{"OCRGATE_SHUTDOWN_TIMEOUT", "shutdown-timeout", "longest a stopping server (SIGTERM) gives the requests in flight: they finish, or are canceled in time to answer 503 shutting_down before it ends", atLeast(1, (*durationValue)(&c.ShutdownTimeout))},
		{"OCRGATE_MAX_IMAGE_PIXELS", "max-image-pixels", "largest image accepted, in pixels (checked from its header, before decoding; 0: no limit)", atLeast(0, (*intValue)(&o.Limits.MaxPixels))},
		{"OCRGATE_MAX_IMAGE_SIDE", "max-image-side", "longest image side accepted, in pixels (0: no limit)", atLeast(0, (*intValue)(&o.Limits.MaxSide))},
		{"OCRGATE_MAX_JPEG_SCANS", "max-jpeg-scans", "refuse progressive JPEGs with more scans than this (0: no limit); encoders write about 10", atLeast(0, (*intValue)(&o.Limits.MaxScans))},
		{"OCRGATE_MAX_PAGES", "max-pages", "document pages that need OCR one request may read, across its documents; more is refused with 413 too_many_pages (pages read from their text layer count against max-text-pages)", within(1, 10_000, (*intValue)(&c.MaxPages))},
		{"OCRGATE_MAX_TEXT_PAGES", "max-text-pages", "document pages one request may read in all, across its documents, its default selection (every page) included; more is refused with 413 too_many_pages", within(1, 10_000, (*intValue)(&c.MaxTextPages))},
		{"OCRGATE_MAX_IMAGES", "max-images", "entries of an \"images\" array, or \"file\" parts of a form; more is refused with 413", within(1, 1000, (*intValue)(&c.MaxImages))},
		{"OCRGATE_MAX_ANSWER_BYTES", "max-answer-bytes", "largest answer (regions, words and text as JSON) the documents of one request may have together, e.g. 64MiB; more is refused with 413 answer_too_large, and what an answer holds is charged to the memory budget until it is written", atLeast(1<<20, (*bytesValue)(&c.MaxAnswerBytes))},

		section("Admission and memory"),
		{"OCRGATE_MAX_INFLIGHT", "max-inflight", "OCR jobs running at once, within the memory budget (0: one per CPU core)", atLeast(0, (*intValue)(&c.MaxInFlight))},
		{"OCRGATE_MAX_QUEUE", "max-queue", "OCR jobs waiting for a slot; beyond, 429 at once (-1: twice max-inflight)", atLeast(-1, (*intValue)(&c.MaxQueue))},
		{"OCRGATE_QUEUE_TIMEOUT", "queue-timeout", "longest wait for admission (OCR or chat) before 429", atLeast(0, (*durationValue)(&c.QueueTimeout))},
		{"OCRGATE_MEMORY_BUDGET", "memory-budget", "memory admitted requests may hold together, e.g. 800MiB (0 or auto: the container's memory limit, or 1 GiB, less what the process holds at rest, a reserve and the runtime's reserve)", atLeast(0, (*bytesValue)(&c.MemoryBudget))},
		{"OCRGATE_MAX_REQUEST_MEMORY", "max-request-memory", "largest memory cost of one request, e.g. 600MiB; more is refused with 413 (0: the memory budget; above the budget, such requests run alone)", atLeast(0, (*bytesValue)(&c.MaxRequestMemory))},
		{"OCRGATE_MAX_REQUEST_CPU", "max-request-cpu", "CPU time one /ocr or /ocr-json request may use, its images, documents and pages together, however busy the machine; work whose estimate does not fit what is left is refused before it starts, work that runs past it is stopped, both with 413 cpu_budget_exceeded (0: no limit; operating.md says why 10m)", atLeast(0, (*durationValue)(&c.MaxRequestCPU))},

		section("Model runtime"),
		{"OCRGATE_RUNTIME", "runtime", "model runtime: embedded (ONNX Runtime in-process) or triton", oneOf(&c.Runtime, "embedded", "triton")},
		{"OCRGATE_MODEL_DIR", "model-dir", "directory holding the models and dictionary (with Triton too: CTC decoding reads the dictionary)", (*stringValue)(&c.ModelDir)},
		{"OCRGATE_DET_MODEL", "det-model", "detection model file in the model directory", (*stringValue)(&c.DetModel)},
		{"OCRGATE_REC_MODEL", "rec-model", "recognition model file in the model directory (the int8 recognizer; ch_PP-OCRv4_rec_infer.prepared.onnx is the float one)", (*stringValue)(&c.RecModel)},
		{"OCRGATE_CLS_MODEL", "cls-model", "direction classifier model file in the model directory", (*stringValue)(&c.ClsModel)},
		{"OCRGATE_DICT", "dict", "character dictionary file in the model directory", (*stringValue)(&c.Dictionary)},
		{"OCRGATE_LEXICON", "lexicon", "word list in the model directory (or a path) that misread words are corrected towards, one word a line, from the recognizer's own second and third choices (docs/pipeline.md); none: no corrections", (*stringValue)(&c.Lexicon)},
		{"OCRGATE_LANGS", "langs", "language packs loaded besides the default Chinese/English recognizer (ch), comma-separated: ja, ko, zh-Hant, en; a request's lang picks one (scripts/fetch_models.sh fetches the packs this names; docs/languages.md)", checkedBy((*stringValue)(&c.Langs), "comma-separated: `ja`, `ko`, `zh-Hant`, `en`", func() error {
			_, err := c.LoadedPacks()
			return err
		})},
		{"OCRGATE_ORT_LIB", "ort-lib", "path of the ONNX Runtime shared library", (*stringValue)(&c.ORTLibrary)},
		{"OCRGATE_ORT_INTRA_THREADS", "ort-intra-threads", "cores the models use: ONNX Runtime threads of a detector run; the recognizer and classifier run single-threaded, this many batches at once unless rec-parallel says otherwise (0: one per core)", atLeast(0, (*intValue)(&c.IntraOpThreads))},
		{"OCRGATE_ORT_INTER_THREADS", "ort-inter-threads", "ONNX Runtime threads across graph nodes (0: default)", atLeast(0, (*intValue)(&c.InterOpThreads))},
		{"OCRGATE_ORT_SPIN", "ort-spin", "let ONNX Runtime threads busy-wait between runs (faster back-to-back runs, less CPU for the Go stages)", (*boolValue)(&c.ORTSpin)},
		{"OCRGATE_ORT_ARENA", "ort-arena", "ONNX Runtime memory for intermediate tensors: shared (one arena for every model, its size reserved in the memory plan), session (an arena per session, charged per request) or off (the C allocator; slower, and with glibc not smaller)", oneOf(&c.ORTArena, "shared", "session", "off")},
		{"OCRGATE_ORT_ARENA_MAX_INPUT", "ort-arena-max-input", "model inputs of more values than this (default: a 960×960 detector input) run on a session created for the run, so their memory is returned after it (0: no bound); with tiled detection no input is that large", atLeast(0, (*intValue)(&c.ORTArenaMaxInput))},
		{"OCRGATE_ORT_SESSION_CONFIG", "ort-session-config", "extra ONNX Runtime session config entries, key=value,key=value", checkedBy((*stringValue)(&c.ORTConfig), "`key=value` entries, comma-separated", func() error {
			_, err := c.SessionConfig()
			return err
		})},

		section("Triton"),
		{"OCRGATE_TRITON_ADDR", "triton-addr", "Triton gRPC endpoint (host:port) for -runtime triton", (*stringValue)(&c.TritonAddr)},
		{"OCRGATE_TRITON_DET_MODEL", "triton-det-model", "Triton model name of the detector", (*stringValue)(&c.TritonDetModel)},
		{"OCRGATE_TRITON_REC_MODEL", "triton-rec-model", "Triton model name of the recognizer", (*stringValue)(&c.TritonRecModel)},
		{"OCRGATE_TRITON_CLS_MODEL", "triton-cls-model", "Triton model name of the direction classifier", (*stringValue)(&c.TritonClsModel)},
		{"OCRGATE_TRITON_SHM", "triton-shm", "tensors through system shared memory: auto (when Triton can open /dev/shm regions, else gRPC), on or off", oneOf(&c.TritonSHM, "auto", "on", "off")},
		{"OCRGATE_TRITON_MAX_RECV_BYTES", "triton-max-recv-bytes", "largest gRPC response accepted from Triton, in bytes (grpc-go's own 4 MiB is less than one recognizer batch)", atLeast(4<<20, (*intValue)(&c.TritonMaxRecvBytes))},

		section("Documents"),
		{"OCRGATE_PAGE_TIMEOUT", "page-timeout", "added to a document's deadline for every page it OCRs after the first", atLeast(0, (*durationValue)(&c.PageTimeout))},
		{"OCRGATE_TEXT_LAYER_CHECK", "text-layer-check", "probes (a few words of one line each, one per font first) of a PDF page's text layer that OCR reads and compares with the layer before the layer is used as the page's text; a layer OCR disagrees with is OCR'd; 0 uses a layer by its structure alone", within(0, 16, (*intValue)(&c.TextLayerCheck))},
		{"OCRGATE_TEXT_PAGE_TIMEOUT", "text-page-timeout", "added to the deadline of a document's survey (reading every selected page's facts and text layer) for every page after the first", atLeast(0, (*durationValue)(&c.TextPageTimeout))},
		{"OCRGATE_MAX_DOCUMENT_TIMEOUT", "max-document-timeout", "longest deadline of a document or an \"images\" array (never less than the request timeout); also how long shutdown waits for requests in flight", above(0, (*durationValue)(&c.MaxDocumentTimeout))},
		{"OCRGATE_RENDER_CPU", "render-cpu", "CPU time one PDF engine operation (opening a document, reading a page, drawing it) may use, however busy the machine; a page past it fails alone with document_too_complex", above(0, (*durationValue)(&c.RenderCPU))},
		{"OCRGATE_PDF_INSTANCES", "pdf-instances", "PDFs open at once in the PDF engine, one engine instance each (0: max-inflight)", atLeast(0, (*intValue)(&c.PDFInstances))},
		{"OCRGATE_PDF_MEMORY", "pdf-memory", "memory cap of one PDF engine instance, e.g. 256MiB; a job that opens a PDF is charged this much (at most 4 GiB, a WebAssembly memory's limit)", within(64<<20, 4<<30, (*bytesValue)(&c.PDFMemory))},
		{"OCRGATE_PDF_CACHE_DIR", "pdf-cache-dir", "where the compiled PDF engine is kept between starts (off: nowhere; used read-only when it exists and cannot be written)", (*stringValue)(&c.PDFCacheDir)},

		section("Jobs (POST /jobs)"),
		{"OCRGATE_JOBS", "jobs", "run asynchronous jobs: POST /jobs, GET and DELETE /jobs/{id}, and this replica's page workers (false: the routes answer 404 jobs_disabled)", (*boolValue)(&c.Jobs)},
		{"OCRGATE_NATS_URL", "nats-url", "external NATS server (with JetStream) every replica shares, e.g. nats://nats:4222; empty: a NATS server embedded in the process", (*stringValue)(&c.NATSURL)},
		{"OCRGATE_JOBS_DIR", "jobs-dir", "the embedded NATS server's JetStream directory: stored documents, page tasks, job records and answers (a restarted process resumes its jobs from it)", shownAs("~/.ocrgate/jobs", (*stringValue)(&c.JobsDir))},
		{"OCRGATE_JOBS_LISTEN", "jobs-listen", "host:port the embedded NATS server listens on, so that other replicas can share it (empty: no port; the server is reached in-process only)", (*stringValue)(&c.JobsListen)},
		{"OCRGATE_JOB_TTL", "job-ttl", "how long a job, its document and its answer are kept after their last change", above(0, (*durationValue)(&c.JobTTL))},
		{"OCRGATE_JOB_MAX_PAGES", "job-max-pages", "pages one job may read; more is refused with 413 too_many_pages", within(1, 10_000, (*intValue)(&c.JobMaxPages))},
		{"OCRGATE_JOB_MAX_BYTES", "job-max-bytes", "largest document a job may store, e.g. 256MiB: POST /jobs takes a raw body this big at the listener and streams it into the store (a form or JSON body stays within max-body-bytes); more is refused with 413 (body_too_large when its length is announced, document_too_large when it is not)", atLeast(1024, (*bytesValue)(&c.JobMaxBytes))},
		{"OCRGATE_JOB_MAX_INFLIGHT", "job-max-inflight", "unfinished jobs one API key (or everyone, without keys) may have; more is refused with 429 too_many_jobs", atLeast(1, (*intValue)(&c.JobMaxInFlight))},
		{"OCRGATE_JOB_STORE_BYTES", "job-store-bytes", "documents stored at once, every job together, e.g. 4GiB; a full store refuses new jobs with 429 job_store_full and never drops an accepted one", atLeast(1<<20, (*bytesValue)(&c.JobStoreBytes))},
		{"OCRGATE_JOB_WORKERS", "job-workers", "job pages this replica reads at once, each only while no request waits for admission (0: this replica accepts jobs but reads none of their pages)", within(0, 64, (*intValue)(&c.JobWorkers))},
		{"OCRGATE_JOB_ATTEMPTS", "job-attempts", "tries of a job page (a worker dying counts) before the page fails alone with its error", within(1, 10, (*intValue)(&c.JobAttempts))},
		{"OCRGATE_JOB_REPLICAS", "job-replicas", "replicas of the job streams and buckets: 1 embedded, 3 on a three-node NATS cluster", within(1, 5, (*intValue)(&c.JobReplicas))},

		section("Chat model (/ocr-json)"),
		{"CHAT_BOT_MODEL", "chat-model", "chat model for /ocr-json (e.g. gpt-4o-mini, qwen2.5:7b); empty: /ocr-json answers 503", (*stringValue)(&c.Chat.Model)},
		{"CHAT_BOT_BASEURL", "chat-baseurl", "OpenAI-compatible API root with its version segment, e.g. http://localhost:11434/v1", (*stringValue)(&c.Chat.BaseURL)},
		{"CHAT_BOT_APIKEY", "chat-apikey", "API key for the chat model, sent as a bearer token (never logged)", (*stringValue)(&c.Chat.APIKey)},
		{"OCRGATE_CHAT_TIMEOUT", "chat-timeout", "bound on one chat call (the request's deadline still applies)", (*durationValue)(&c.Chat.Timeout)},
		{"OCRGATE_CHAT_REASKS", "chat-reasks", "times an invalid answer is sent back with what is wrong (0: never)", (*intValue)(&c.Chat.Reasks)},
		{"OCRGATE_CHAT_MAX_ANSWER_BYTES", "chat-max-answer-bytes", "largest chat server response accepted, e.g. 1MiB; larger answers fail with 502 chat_answer_too_large", atLeast(1024, (*bytesValue)(&c.Chat.MaxAnswerBytes))},
		{"OCRGATE_CHAT_MAX_TEXT", "chat-max-text", "characters of OCR text sent to the chat model at most; a longer document's text is cut (X-Chat-Text-Cut)", atLeast(1000, (*intValue)(&c.Chat.MaxText))},
		{"OCRGATE_CHAT_MAX_INFLIGHT", "chat-max-inflight", "/ocr-json chat calls at once (the OCR before them is admitted like /ocr)", atLeast(1, (*intValue)(&c.ChatMaxInFlight))},
		{"OCRGATE_CHAT_MAX_QUEUE", "chat-max-queue", "/ocr-json requests waiting for a chat slot; beyond, 429 at once", atLeast(0, (*intValue)(&c.ChatMaxQueue))},
		{"OCRGATE_SCHEMA_MAX_BYTES", "schema-max-bytes", "largest caller schema for /ocr-json, in bytes", (*intValue)(&c.Chat.Schema.MaxBytes)},
		{"OCRGATE_SCHEMA_MAX_DEPTH", "schema-max-depth", "deepest nesting of a caller schema", (*intValue)(&c.Chat.Schema.MaxDepth)},
		{"OCRGATE_SCHEMA_MAX_PROPERTIES", "schema-max-properties", "most properties in a caller schema", (*intValue)(&c.Chat.Schema.MaxProperties)},

		section("Pipeline: decoding and detection"),
		{"OCRGATE_JPEG_HALF_PIXELS", "jpeg-half-pixels", "decode baseline JPEGs of at least this many pixels at half size, e.g. 600-dpi scans (0: never); boxes stay in the file's pixels", atLeast(0, (*intValue)(&o.Limits.HalfPixels))},
		{"OCRGATE_JPEG_HALF_MIN_TEXT", "jpeg-half-min-text", "decode a half-size page again whole when its median line is shorter than this, in the file's pixels (0: never)", atLeast(0, (*floatValue)(&o.HalfMinTextHeight))},
		{"OCRGATE_DET_LIMIT_SIDE", "det-limit-side", "first detection pass: long side of the detector input at most this", atLeast(32, (*intValue)(&o.DetLimitSide))},
		{"OCRGATE_DET_PREVIEW", "det-preview", "first detection pass on huge JPEGs (6 000 px and more): read the 1/8 preview the decoder gets for free instead of every pixel", (*boolValue)(&o.DetPreview)},
		{"OCRGATE_DET_MIN_TEXT_HEIGHT", "det-min-text-height", "run a second detection pass when the median text height of the first is below this (detector px)", (*floatValue)(&o.DetMinTextHeight)},
		{"OCRGATE_DET_TARGET_TEXT_HEIGHT", "det-target-text-height", "second detection pass: scale so text is this tall (detector px)", above(0, (*floatValue)(&o.DetTargetTextHeight))},
		{"OCRGATE_DET_SMALL_TEXT_HEIGHT", "det-small-text-height", "second detection pass enlarged (up to det-max-upscale): when the first pass's median box is under this many pixels of the image itself, e.g. a 100-dpi form", atLeast(0, (*floatValue)(&o.DetSmallTextHeight))},
		{"OCRGATE_DET_MAX_UPSCALE", "det-max-upscale", "second detection pass over small print: enlarge the image at most this many times (1: never)", within(1, 4, (*floatValue)(&o.DetMaxUpscale))},
		{"OCRGATE_DET_MAX_PIXELS", "det-max-pixels", "second detection pass: at most this many detector input pixels", atLeast(32*32, (*intValue)(&o.DetMaxPixels))},
		{"OCRGATE_DET_TILE_PIXELS", "det-tile-pixels", "detector inputs above this many pixels run as overlapping tiles of at most this size, stitched into one map, so no detector run needs more memory than a first pass (0: one run whatever the size)", checkedBy((*intValue)(&o.DetTilePixels), "0, or at least four tiles of one 32-px core and its overlaps: 4 × (32 + 2 × overlap)²", func() error {
			side := 32 + 2*o.DetTileOverlap
			if o.DetTilePixels != 0 && o.DetTilePixels < 4*side*side {
				return fmt.Errorf("must be 0 or at least 4 × (32 + 2 × %d)² = %d, got %d", o.DetTileOverlap, 4*side*side, o.DetTilePixels)
			}
			return nil
		})},
		{"OCRGATE_DET_TILE_OVERLAP", "det-tile-overlap", "detector pixels a tile reads past its core toward each neighbour", checkedBy((*intValue)(&o.DetTileOverlap), "a multiple of 32, not negative", func() error {
			if o.DetTileOverlap < 0 || o.DetTileOverlap%32 != 0 {
				return fmt.Errorf("must be a non-negative multiple of 32, got %d", o.DetTileOverlap)
			}
			return nil
		})},
		{"OCRGATE_DET_THRESH", "det-thresh", "DB binarization threshold", fraction((*float32Value)(&o.DB.Threshold))},
		{"OCRGATE_DET_BOX_THRESH", "det-box-thresh", "DB minimum mean probability inside a box", within(0, 1, (*float32Value)(&o.DB.BoxThreshold))},
		{"OCRGATE_DET_UNCLIP_RATIO", "det-unclip-ratio", "DB box expansion ratio (offset = area × ratio / perimeter)", above(0, (*floatValue)(&o.DB.UnclipRatio))},
		{"OCRGATE_DET_MIN_SIZE", "det-min-size", "DB minimum box side (detector px)", (*floatValue)(&o.DB.MinSize)},
		{"OCRGATE_DET_MAX_CANDIDATES", "det-max-candidates", "DB regions considered at most", atLeast(1, (*intValue)(&o.DB.MaxCandidates))},

		section("Pipeline: direction"),
		{"OCRGATE_CROP_ROTATE_RATIO", "crop-rotate-ratio", "boxes this many times taller than wide are read as vertical text (turned 90°)", above(0, (*floatValue)(&o.CropRotateRatio))},
		{"OCRGATE_READ_COLUMNS", "read-columns", "read vertical CJK: a page whose tall boxes hold upright CJK characters is read as columns, right to left, each top to bottom (not turned as a page on its side), and a box at least 3 times taller than wide is also read as a column", (*boolValue)(&o.ReadColumns)},
		{"OCRGATE_CHECK_BOXES", "check-boxes", "find a form's check boxes (small square frames) from the page's pixels and answer each as a region of its own, ☐ or ☑ (marked), reading the label beside it without the box", (*boolValue)(&o.CheckBoxes)},
		{"OCRGATE_USE_CLS", "use-cls", "run the 180° direction classifier", (*boolValue)(&o.UseClassifier)},
		{"OCRGATE_CLS_THRESH", "cls-thresh", "flip a crop when the classifier's 180° probability is at least this", (*float32Value)(&o.ClsThreshold)},
		{"OCRGATE_CLS_PAGE_SAMPLE", "cls-page-sample", "classify this many of a page's widest crops first; if at most one in six reads upside down, take the page as upright and classify no other horizontal crop (0: classify every crop)", atLeast(0, (*intValue)(&o.ClsPageSample))},
		{"OCRGATE_CLS_BATCH", "cls-batch", "crops per classifier batch", atLeast(1, (*intValue)(&o.ClsBatchSize))},

		section("Pipeline: recognition"),
		{"OCRGATE_REC_BATCH", "rec-batch", "crops per recognizer batch", atLeast(1, (*intValue)(&o.RecBatchSize))},
		{"OCRGATE_REC_BATCH_PIXELS", "rec-batch-pixels", "most input pixels (crops × 48 × width) of one recognizer batch; batches of wide crops hold fewer (0: no cap)", atLeast(0, (*intValue)(&o.RecBatchPixels))},
		{"OCRGATE_BATCH_PIXELS_IN_FLIGHT", "batch-pixels-in-flight", "most input pixels of one image's recognizer or classifier batches in flight together, which bounds their memory whatever the core count (0: no cap)", atLeast(0, (*intValue)(&o.BatchPixelsInFlight))},
		{"OCRGATE_REC_PARALLEL", "rec-parallel", "recognizer and classifier batches of one image in flight at once (0: as many as ort-intra-threads)", atLeast(0, (*intValue)(&o.BatchParallel))},
		{"OCRGATE_REC_WIDTH_STEP", "rec-width-step", "pad a recognizer batch to its widest crop rounded up to a multiple of this (0: to the width buckets, equal shapes a Triton dynamic batcher can merge)", atLeast(0, (*intValue)(&o.RecWidthStep))},
		{"OCRGATE_REC_WIDTH_BUCKETS", "rec-width-buckets", "comma-separated widths recognizer batches are padded to with rec-width-step 0, ascending; wider crops are squeezed to the last whatever the step", checkedBy((*intListValue)(&o.RecWidthBuckets), "ascending, the first at least 8", func() error {
			if len(o.RecWidthBuckets) == 0 || !slices.IsSorted(o.RecWidthBuckets) || o.RecWidthBuckets[0] < 8 {
				return fmt.Errorf("must be ascending and at least 8 px, got %v", o.RecWidthBuckets)
			}
			return nil
		})},
		{"OCRGATE_REC_SQUEEZE", "rec-squeeze", "narrow recognizer crops wider than rec-squeeze-from to this share of their width (1: keep every crop's aspect)", share((*floatValue)(&o.RecSqueeze))},
		{"OCRGATE_REC_SQUEEZE_FROM", "rec-squeeze-from", "recognizer crops wider than this (px at the recognizer's 48 px height) are narrowed by rec-squeeze", atLeast(0, (*intValue)(&o.RecSqueezeFrom))},
		{"OCRGATE_SPACE_THRESH", "space-thresh", "restore a space where the recognizer gives it this probability between two characters (0: off)", (*float32Value)(&o.CTC.SpaceThreshold)},
		{"OCRGATE_ASCII_PUNCTUATION", "ascii-punctuation", "read fullwidth punctuation as ASCII in lines without CJK characters", (*boolValue)(&o.ASCIIPunctuation)},
		{"OCRGATE_MIN_SCORE", "min-score", "drop regions recognized with a lower confidence", within(0, 1, (*float32Value)(&o.MinScore))},
		{"OCRGATE_ROW_OVERLAP", "row-overlap", "share of a box's height that must overlap a row for it to join the row", share((*floatValue)(&o.RowOverlap))},
	}
}

// splitKeys reads OCRGATE_API_KEYS. Setting the variable says "require a key"; a value that holds
// none (" , ") must not quietly leave the API open.
func splitKeys(list string) ([]string, error) {
	var keys []string
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if list != "" && len(keys) == 0 {
		return nil, errors.New("OCRGATE_API_KEYS is set but holds no key")
	}
	return keys, nil
}

// Keys returns the configured API keys: OCRGATE_API_KEYS plus the lines of OCRGATE_API_KEYS_FILE.
func (c Config) Keys() ([]string, error) {
	keys, err := splitKeys(c.APIKeys)
	if err != nil {
		return nil, err
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
