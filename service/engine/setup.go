// Package engine builds what a Config describes — the model runtime and the OCR pipeline over it —
// so that main, the benchmark command and the tests assemble the service the same way.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/ctc"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/onnxrt"
	"github.com/ocrgate/ocrgate/service/pdfengine"
	"github.com/ocrgate/ocrgate/service/tritonrt"
	"github.com/ocrgate/ocrgate/tritonclient"
)

// Engine is a ready pipeline and the runtime under it.
type Engine struct {
	Pipeline *ocr.Pipeline
	Runtime  ocr.Runtime
	closers  []io.Closer
}

// Ready reports whether the runtime can serve: always for the embedded runtime (its sessions
// exist once Embedded returns), and Triton's own readiness check otherwise.
func (e *Engine) Ready(ctx context.Context) error {
	if r, ok := e.Runtime.(interface{ Ready(context.Context) error }); ok {
		return r.Ready(ctx)
	}
	return nil
}

// Open builds the engine for the configured runtime.
func Open(cfg config.Config) (*Engine, error) {
	if cfg.Runtime == "triton" {
		return Triton(cfg)
	}
	return Embedded(cfg)
}

// Triton builds the pipeline on a Triton server. It does not wait for the server: the engine
// reports not ready until Triton and its models are.
func Triton(cfg config.Config) (*Engine, error) {
	memlimit.TuneGC()
	cs, err := Charset(cfg)
	if err != nil {
		return nil, err
	}
	packs, langs, err := Languages(cfg)
	if err != nil {
		return nil, err
	}
	models := map[ocr.Model]string{
		ocr.Detector:   cfg.TritonDetModel,
		ocr.Recognizer: cfg.TritonRecModel,
		ocr.Classifier: cfg.TritonClsModel,
	}
	langClasses := map[ocr.Model]int{}
	for i, p := range packs {
		models[ocr.RecognizerFor(p.Lang)] = p.TritonModel
		langClasses[ocr.RecognizerFor(p.Lang)] = langs[i].Charset.NumClasses()
	}
	rt, err := tritonrt.Open(cfg.TritonAddr, tritonrt.Options{
		Models:      models,
		RecClasses:  cs.NumClasses(),
		LangClasses: langClasses,
		Client: tritonclient.Options{
			Timeout:      cfg.RequestTimeout,
			MaxRecvBytes: cfg.TritonMaxRecvBytes,
			SharedMemory: tritonclient.SharedMemoryOptions{
				Mode: tritonclient.SharedMemoryMode(cfg.TritonSHM),
				// Auto mode falling back to gRPC is no error, but the operator who set up a
				// shared /dev/shm wants to know why it is not used.
				OnFallback: func(err error) {
					slog.Warn("triton shared memory not used: tensors go over gRPC", "err", err)
				},
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return assemble(rt, rt, cs, cfg, langs...)
}

// assemble builds the pipeline over an opened runtime, closing the runtime if that fails.
func assemble(rt ocr.Runtime, closer io.Closer, cs *ctc.Charset, cfg config.Config, langs ...ocr.Language) (*Engine, error) {
	opt := cfg.OCR
	lex, err := Lexicon(cfg)
	if err != nil {
		_ = closer.Close() // err is what the caller acts on
		return nil, err
	}
	opt.Lexicon = lex
	p, err := ocr.New(rt, cs, opt, langs...)
	if err != nil {
		_ = closer.Close() // err is what the caller acts on
		return nil, err
	}
	return &Engine{Pipeline: p, Runtime: rt, closers: []io.Closer{closer}}, nil
}

// AddCloser has Close release c too (after the runtime), such as the document reader.
func (e *Engine) AddCloser(c io.Closer) { e.closers = append(e.closers, c) }

// Close releases the runtime.
func (e *Engine) Close() error {
	var errs []error
	for _, c := range e.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// Charset loads the recognizer's dictionary from the model directory.
func Charset(cfg config.Config) (*ctc.Charset, error) { return loadCharset(cfg, cfg.Dictionary) }

// Languages loads the dictionaries of the language packs cfg.Langs names.
func Languages(cfg config.Config) ([]config.LangPack, []ocr.Language, error) {
	packs, err := cfg.LoadedPacks()
	if err != nil {
		return nil, nil, err
	}
	langs := make([]ocr.Language, 0, len(packs))
	for _, p := range packs {
		cs, err := loadCharset(cfg, p.Dictionary)
		if err != nil {
			return nil, nil, fmt.Errorf("language %s: %w", p.Lang, err)
		}
		langs = append(langs, ocr.Language{Code: p.Lang, Charset: cs})
	}
	return packs, langs, nil
}

// Lexicon loads the word list cfg.Lexicon names: a name in the model directory, or an absolute
// path; nil for "none".
func Lexicon(cfg config.Config) (*ocr.Lexicon, error) {
	if cfg.Lexicon == "" || cfg.Lexicon == "none" {
		return nil, nil
	}
	path := cfg.Lexicon
	if !filepath.IsAbs(path) {
		path = cfg.ModelPath(path)
	}
	return loadFile(path, "lexicon", "run scripts/fetch_models.sh, set OCRGATE_MODEL_DIR, or OCRGATE_LEXICON=none for no corrections", ocr.LoadLexicon)
}

func loadCharset(cfg config.Config, name string) (*ctc.Charset, error) {
	return loadFile(cfg.ModelPath(name), "dictionary", "run scripts/fetch_models.sh, with OCRGATE_LANGS for a language pack, or set OCRGATE_MODEL_DIR", ctc.LoadCharset)
}

// loadFile opens path and reads it with load; what names the file in errors, and hint says how
// to get it when it is missing.
func loadFile[T any](path, what, hint string, load func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("open %s: %w (%s)", what, err, hint)
	}
	defer func() { _ = f.Close() }() // opened to read
	v, err := load(f)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return v, nil
}

// Embedded opens the in-process ONNX Runtime on the configured models and builds the pipeline.
func Embedded(cfg config.Config) (*Engine, error) {
	memlimit.TuneGC()
	cs, err := Charset(cfg)
	if err != nil {
		return nil, err
	}
	models := map[ocr.Model]string{
		ocr.Detector:   cfg.ModelPath(cfg.DetModel),
		ocr.Recognizer: cfg.ModelPath(cfg.RecModel),
		ocr.Classifier: cfg.ModelPath(cfg.ClsModel),
	}
	packs, langs, err := Languages(cfg)
	if err != nil {
		return nil, err
	}
	// Every recognizer runs single-threaded, as the default one does (see Threads below).
	threads := map[ocr.Model]int{ocr.Recognizer: 1, ocr.Classifier: 1}
	for _, p := range packs {
		models[ocr.RecognizerFor(p.Lang)] = cfg.ModelPath(p.Model)
		threads[ocr.RecognizerFor(p.Lang)] = 1
	}
	for m, p := range models {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("model %s: %w (run scripts/fetch_models.sh, or set OCRGATE_MODEL_DIR)", m, err)
		}
	}
	sessionConfig, err := cfg.SessionConfig()
	if err != nil {
		return nil, err
	}
	rt, err := onnxrt.Open(onnxrt.Options{
		SessionConfig: sessionConfig,
		LibraryPath:   cfg.ORTLibrary,
		Models:        models,
		// The detector runs once or twice per image on one big input: intra-op threads are its only
		// parallelism. Recognizer and classifier batches run single-threaded, BatchParallel at a
		// time, so concurrent requests share the cores without thread pools fighting over them.
		IntraOpThreads: cfg.Cores(),
		Threads:        threads,
		InterOpThreads: cfg.InterOpThreads,
		Spin:           cfg.ORTSpin,
		Arena:          onnxrt.Arena(cfg.ORTArena),
		ArenaMaxInput:  cfg.ORTArenaMaxInput,
	})
	if err != nil {
		return nil, err
	}
	return assemble(rt, closerFunc(rt.Close), cs, cfg, langs...)
}

// Documents starts the document reader a Config describes and returns it with the compile cache
// it uses ("" for none). The PDF engine compiles in the background from now on (see
// service/pdfengine): start it before loading the models and the two overlap.
//
// The cache directory is used when it exists, even read-only (a cache warmed when the container
// image was built; an entry it lacks is then compiled, not written), or when it can be created;
// otherwise the engine compiles at every start.
func Documents(cfg config.Config) (*document.Reader, string) {
	cache := cfg.PDFCache()
	if cache != "" {
		if err := os.MkdirAll(cache, 0o700); err != nil {
			if st, serr := os.Stat(cache); serr != nil || !st.IsDir() {
				cache = ""
			}
		}
	}
	docs := docfile.NewReader(docfile.Config{
		Limits: docfile.Limits{
			// A document's selection may hold every page a request may read; how many of them
			// may need OCR is known once they are surveyed (the request's budget).
			MaxPages: cfg.MaxTextPages,
			// TIFF pages and scans read from a PDF are held to the limits of images.
			Raster: cfg.OCR.Limits,
			OpCPU:  cfg.RenderCPU,
		},
		Engine: pdfengine.Config{Instances: cfg.Instances(), MemoryLimit: cfg.PDFMemory, CacheDir: cache},
	})
	inflight, _ := cfg.Admission()
	return document.New(docs, document.Config{
		Scale:        docfile.DefaultScalePolicy(),
		EngineMemory: cfg.PDFMemory,
		// Engine operations are bounded by their CPU time (Limits.OpCPU), not by a wall-clock
		// time of their own: the request's deadline bounds them on a busy machine.
		PageTimeout:       cfg.PageTimeout,
		SurveyPageTimeout: cfg.TextPageTimeout,
		MaxTimeout:        cfg.MaxDocumentTimeout,
		Parallel:          inflight,
		Budget:            document.BudgetLimits{OCRPages: cfg.MaxPages, Pages: cfg.MaxTextPages, AnswerBytes: cfg.MaxAnswerBytes},
		LayerCheck:        cfg.TextLayerCheck,
	}), cache
}
