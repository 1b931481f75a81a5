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
	"slices"
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
	Lexicon            string        //
	Langs              string        // language packs loaded besides the default recognizer: ja,ko,zh-Hant,en
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
	BodyMemory         int64         // memory the request bodies being read may take together (0: 4 × MaxBodyBytes)
	MaxConnections     int           // connections open at once; beyond, an idle one is closed or the new one gets 503
	ShutdownTimeout    time.Duration // longest a stopping server waits for the requests in flight
	CORSOrigins        string        // comma-separated allowed origins, "*" for any
	APIKeys            string        // comma-separated API keys required on /ocr and /ocr-json (empty: open)
	APIKeysFile        string        // file with one API key per line (# comments), added to APIKeys
	MaxInFlight        int           // OCR jobs running at once (0: one per CPU core)
	MaxQueue           int           // OCR jobs waiting for a slot; more are refused with 429 (-1: 2 × MaxInFlight)
	QueueTimeout       time.Duration // longest wait for a slot before 429
	MemoryBudget       int64         // bytes admitted requests may hold together (0: derived at start from the memory limit)
	MaxRequestMemory   int64         // largest memory cost of one request; more is refused with 413 (0: the budget)
	MaxRequestCPU      time.Duration // CPU time one /ocr or /ocr-json request may use (0: no limit; see DefaultMaxRequestCPU)
	ChatMaxInFlight    int           // /ocr-json chat calls at once
	ChatMaxQueue       int           // /ocr-json requests waiting for a chat slot; beyond, 429 at once
	LogLevel           string        // debug, info, warn, error
	LogFormat          string        // text or json
	UI                 bool          // serve the demo page at GET / (the API is the same either way)
	MaxPages           int           // document pages needing OCR one request may read (413 beyond)
	MaxTextPages       int           // document pages one request may read in all, text-layer pages included (413 beyond)
	MaxImages          int           // entries of an "images" array (413 beyond)
	MaxAnswerBytes     int64         // largest answer of one request's documents (413 beyond)
	PageTimeout        time.Duration // added to a document's deadline per OCR'd page after the first
	TextPageTimeout    time.Duration // added to a document's survey deadline per page after the first
	TextLayerCheck     int           // text-layer probes read by OCR before a page's layer is trusted; 0: by structure alone
	MaxDocumentTimeout time.Duration // cap of a document's (or an "images" array's) deadline
	RenderCPU          time.Duration // CPU time one PDF engine operation may use (the page fails with document_too_complex beyond)
	PDFInstances       int           // PDFs open at once in the engine (0: max in-flight)
	PDFMemory          int64         // memory cap of one PDF engine instance, charged to every job that holds one
	PDFCacheDir        string        // compiled PDF engine cache ("off": none)

	Jobs           bool          // run asynchronous jobs (POST /jobs) and their page workers
	NATSURL        string        // external NATS server for jobs; empty: embedded in the process
	JobsDir        string        // the embedded NATS server's JetStream directory
	JobsListen     string        // host:port the embedded NATS server listens on (empty: no port)
	JobTTL         time.Duration // how long a job and its answer are kept after their last change
	JobMaxPages    int           // pages one job may read (413 beyond)
	JobMaxBytes    int64         // largest document a job may store (413 beyond)
	JobMaxInFlight int           // unfinished jobs per API key (429 beyond)
	JobStoreBytes  int64         // documents stored at once, all jobs together (429 beyond)
	JobWorkers     int           // job pages this replica reads at once (0: none)
	JobAttempts    int           // tries of a job page before it fails alone
	JobReplicas    int           // replicas of the job streams on an external NATS cluster

	Chat extract.Options // /ocr-json: chat model (CHAT_BOT_*), timeout, re-asks, schema limits

	OCR ocr.Options // pipeline settings
}

// DefaultMaxRequestCPU is the CPU time one request may use unless configured otherwise: what the
// other limits let an honest request ask for, with room to spare, and no more. A request may OCR
// 50 pages (OCRGATE_MAX_PAGES), and a dense A4 page costs 8–9 CPU-s (ocr.Options.CPUCost
// estimates 9.2), so some 460 CPU-s; the survey of a document's 2 000 pages
// (OCRGATE_MAX_TEXT_PAGES) before them costs about 120 CPU-s. Ten CPU-minutes holds both, and is
// half of what a 2-core machine gives one request in the longest document deadline (10 minutes):
// a request built to use more is refused up front by its estimate, or stopped as it spends, while
// the service still has time for the others. docs/operating.md has the figures.
const DefaultMaxRequestCPU = 10 * time.Minute

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

// defaults is the configuration before the environment and flags apply, with home as
// OCRGATE_HOME. Every setting's documented default is its value here.
func defaults(home string) Config {
	return Config{
		Addr:               ":5000",
		Runtime:            "embedded",
		Home:               home,
		ModelDir:           filepath.Join(home, "models"),
		DetModel:           "ch_PP-OCRv4_det_infer.prepared.onnx", // written by cmd/ocrgate-prepare
		RecModel:           "ch_PP-OCRv4_rec_infer.int8.onnx",     // ten 1×1 convolutions in int8
		ClsModel:           "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx",
		Dictionary:         "ppocr_keys_v1.txt",
		Lexicon:            "words.txt",
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
		MaxConnections:     512,
		ShutdownTimeout:    25 * time.Second,
		CORSOrigins:        "*",
		MaxQueue:           -1,
		QueueTimeout:       10 * time.Second,
		ChatMaxInFlight:    4,
		ChatMaxQueue:       8,
		LogLevel:           "info",
		LogFormat:          "text",
		UI:                 true,
		MaxPages:           50,
		MaxTextPages:       2000,
		MaxImages:          16,
		MaxAnswerBytes:     64 << 20,
		PageTimeout:        15 * time.Second,
		TextPageTimeout:    time.Second,
		TextLayerCheck:     4,
		MaxDocumentTimeout: 10 * time.Minute,
		RenderCPU:          10 * time.Second,
		MaxRequestCPU:      DefaultMaxRequestCPU,
		PDFMemory:          256 << 20,
		PDFCacheDir:        filepath.Join(home, "cache", "pdfium"),
		Jobs:               true,
		JobsDir:            filepath.Join(home, "jobs"),
		JobTTL:             24 * time.Hour,
		JobMaxPages:        2000,
		JobMaxBytes:        256 << 20,
		JobMaxInFlight:     10,
		JobStoreBytes:      4 << 30,
		JobWorkers:         1,
		JobAttempts:        3,
		JobReplicas:        1,
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
}

// Load fills a Config from defaults, the environment (getenv) and command-line args, then
// validates it. It returns flag.ErrHelp when args ask for help (usage has then been written to out).
func Load(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	c := defaults(Home(getenv))
	settings := c.settings()
	fs := flag.NewFlagSet("ocrgate", flag.ContinueOnError)
	fs.SetOutput(out)
	var errs []error
	for _, s := range settings {
		if s.isSection() {
			continue
		}
		if v := getenv(s.env); v != "" {
			if err := s.value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", s.env, v, err))
			}
		}
		if s.flag != "" {
			fs.Var(s.value, s.flag, s.usage+" (env "+s.env+ruleText(s.value)+")")
		}
	}
	fs.Usage = func() { usage(out, fs, settings) }
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

// usage writes the -h text: the commands, every flag with its variable, then the settings that
// are environment variables only.
func usage(out io.Writer, fs *flag.FlagSet, settings []setting) {
	fmt.Fprintf(out, "Usage: ocrgate [serve] [flags]\n       ocrgate ocr [flags] FILE...\n       ocrgate extract [flags] FILE...\n       ocrgate version\n       ocrgate bench [flags]\n       ocrgate config-doc [-o FILE]\n\nFlags (each also an environment variable; docs/configuration.md lists them all):\n")
	fs.PrintDefaults()
	fmt.Fprintf(out, "\nEnvironment only:\n")
	for _, s := range settings {
		if !s.isSection() && s.flag == "" {
			fmt.Fprintf(out, "  %s\n    \t%s\n", s.env, s.usage)
		}
	}
}

// ruleText is a setting's rule for the -h text, without the docs' backquotes (which the flag
// package would read as the name of the value).
func ruleText(v flag.Value) string {
	if r, ok := v.(rule); ok {
		return "; " + strings.ReplaceAll(r.rule(), "`", "")
	}
	return ""
}

// Validate reports settings that cannot work, all at once: each setting's rule from the table,
// then what no single setting can say.
func (c Config) Validate() error {
	var errs []error
	for _, s := range c.settings() {
		if r, ok := s.value.(rule); ok {
			if err := r.check(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.name(), err))
			}
		}
	}
	if c.Runtime == "triton" && (c.TritonAddr == "" || c.TritonDetModel == "" || c.TritonRecModel == "" || c.TritonClsModel == "") {
		errs = append(errs, errors.New("triton runtime needs an address and three model names"))
	}
	// The pipeline checks its own options too, for every caller: its checks of the settings say
	// what the rules above say (a test holds them together) and add what no setting can see,
	// such as the crop heights. Run once the rules pass, so a problem is reported once.
	if len(errs) == 0 {
		if err := c.OCR.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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

// Bodies is the memory request bodies may take together: BodyMemory, or four bodies of the
// largest size.
func (c Config) Bodies() int64 {
	if c.BodyMemory > 0 {
		return c.BodyMemory
	}
	return 4 * int64(c.MaxBodyBytes)
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

// LangPack is a language pack's files in the model directory and its Triton model name.
type LangPack struct {
	Lang, Model, Dictionary, TritonModel string
}

// LangPacks are the language packs scripts/fetch_models.sh fetches and cmd/ocrgate-prepare
// prepares when OCRGATE_LANGS names them (internal/modelprep pins their files).
var LangPacks = []LangPack{
	{Lang: "ja", Model: "rec_japan_PP-OCRv3_infer.prepared.onnx", Dictionary: "dict_japan.txt", TritonModel: "ppocr_rec_ja"},
	{Lang: "ko", Model: "rec_korean_PP-OCRv3_infer.prepared.onnx", Dictionary: "dict_korean.txt", TritonModel: "ppocr_rec_ko"},
	{Lang: "zh-Hant", Model: "rec_chinese_cht_PP-OCRv3_infer.prepared.onnx", Dictionary: "dict_chinese_cht.txt", TritonModel: "ppocr_rec_zh-Hant"},
	{Lang: "en", Model: "en_PP-OCRv4_rec.prepared.onnx", Dictionary: "dict_en.txt", TritonModel: "ppocr_rec_en"},
}

// LoadedPacks are the language packs Langs names, in its order, each once ("ch", the default
// recognizer, is always loaded and not a pack). An unknown name is an error.
func (c Config) LoadedPacks() ([]LangPack, error) {
	var out []LangPack
	for _, name := range strings.Split(c.Langs, ",") {
		name = strings.TrimSpace(name)
		if name == "" || name == ocr.DefaultLang {
			continue
		}
		i := slices.IndexFunc(LangPacks, func(p LangPack) bool { return p.Lang == name })
		if i < 0 {
			return nil, fmt.Errorf("no language pack %q: the packs are ja, ko, zh-Hant and en", name)
		}
		if !slices.Contains(out, LangPacks[i]) {
			out = append(out, LangPacks[i])
		}
	}
	return out, nil
}

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
		slog.Int64("body_memory", c.Bodies()),
		slog.Int("max_connections", c.MaxConnections),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.String("cors_origins", c.CORSOrigins),
		slog.Bool("api_keys", c.APIKeys != "" || c.APIKeysFile != ""), // whether auth is on, never the keys
		slog.Int("max_inflight", c.MaxInFlight),
		slog.Int("max_queue", c.MaxQueue),
		slog.Bool("ui", c.UI),
		slog.Int("max_pages", c.MaxPages),
		slog.Int("max_text_pages", c.MaxTextPages),
		slog.Int("max_images", c.MaxImages),
		slog.Int64("max_answer_bytes", c.MaxAnswerBytes),
		slog.Duration("page_timeout", c.PageTimeout),
		slog.Duration("text_page_timeout", c.TextPageTimeout),
		slog.Int("text_layer_check", c.TextLayerCheck),
		slog.Duration("max_document_timeout", c.MaxDocumentTimeout),
		slog.Duration("render_cpu", c.RenderCPU),
		slog.Int("pdf_instances", c.PDFInstances),
		slog.Int64("pdf_memory", c.PDFMemory),
		slog.String("pdf_cache_dir", c.PDFCacheDir),
		slog.Bool("jobs", c.Jobs),
		slog.Bool("nats_url", c.NATSURL != ""), // whether NATS is external, never its URL (it may hold credentials)
		slog.String("jobs_dir", c.JobsDir),
		slog.String("jobs_listen", c.JobsListen),
		slog.Duration("job_ttl", c.JobTTL),
		slog.Int("job_max_pages", c.JobMaxPages),
		slog.Int64("job_max_bytes", c.JobMaxBytes),
		slog.Int("job_max_inflight", c.JobMaxInFlight),
		slog.Int64("job_store_bytes", c.JobStoreBytes),
		slog.Int("job_workers", c.JobWorkers),
		slog.Int64("memory_budget", c.MemoryBudget),
		slog.Int64("max_request_memory", c.MaxRequestMemory),
		slog.Duration("max_request_cpu", c.MaxRequestCPU),
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
