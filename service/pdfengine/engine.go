// Package pdfengine runs PDFium, Chromium's PDF engine, compiled to WebAssembly, inside the
// process: go-pdfium's WebAssembly mode on the wazero runtime, pure Go, no cgo and no system
// library. It exposes the few operations the document layer needs (open, page count, page size,
// page facts with the text layer's characters, render) as plain Go values.
//
// Three properties matter more here than anywhere else in ocrgate, because a PDF is a program
// the caller wrote:
//
//   - Compile once. Compiling the 5.8 MB module to native code takes about two seconds of CPU
//     and a few hundred MB of short-lived heap; it happens once per process, in the background
//     from [New] on, and every document gets a fresh, cheap (about a millisecond) instance of the
//     compiled module.
//   - Bounded. Each instance's linear memory is capped (Config.MemoryLimit): a decompression
//     bomb, a huge embedded image or a 200-inch page makes PDFium's allocator fail inside the
//     sandbox instead of growing the process.
//   - Abandonable. Every call honours its context: when it ends, the instance is killed (wazero
//     closes a module whose context is done), so a page that renders forever costs the caller
//     its deadline and nothing more. A killed or trapped instance is thrown away, never reused.
//
// Panics raised inside go-pdfium are recovered and reported as [ErrEngine].
package pdfengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ocrgate/ocrgate/service/memlimit"
)

// The errors this package wraps. Context errors (deadline, cancellation) are returned as they
// are.
var (
	// ErrEncrypted means the document needs a password to be read.
	ErrEncrypted = errors.New("the PDF is encrypted")
	// ErrCorrupt means PDFium could not parse the document or one of its pages.
	ErrCorrupt = errors.New("the PDF is corrupt or truncated")
	// ErrEngine means the engine itself failed: it did not start, ran out of its memory cap, or
	// panicked. For a document that is merely odd, this is what its oddness cost.
	ErrEngine = errors.New("the PDF engine failed")
	// ErrTooComplex means one operation on the document used more than the engine's CPU limit;
	// the wrapping *CPUError says how much.
	ErrTooComplex = errors.New("the PDF is too complex")
)

// CPUError is an operation stopped at its document's CPU limit (see Engine.Open). It matches
// ErrTooComplex.
type CPUError struct {
	Used, Limit time.Duration
}

func (e *CPUError) Error() string {
	return fmt.Sprintf("%v: stopped after %.1f s of CPU time; the limit is %s", ErrTooComplex, e.Used.Seconds(), e.Limit)
}

// Is makes errors.Is(err, ErrTooComplex) hold.
func (e *CPUError) Is(target error) bool { return target == ErrTooComplex }

// Config sets up an Engine. Zero fields take the defaults below.
type Config struct {
	// Instances is how many documents may be open at once (one PDFium instance each); Open
	// waits for a free one. Default 2.
	Instances int
	// MemoryLimit caps the linear memory of one instance, in bytes (rounded down to 64 KiB
	// pages). It bounds what a document can make PDFium allocate: the file itself, decoded
	// images, the render bitmap. Default 512 MiB.
	MemoryLimit int64
	// CacheDir, when set, keeps the compiled module on disk between runs (wazero's compilation
	// cache), which turns the two-second compile into a ~60 ms load. It must be a directory only
	// this service writes to: its files are native code the process will run.
	CacheDir string
}

// Default settings.
const (
	DefaultInstances   = 2
	DefaultMemoryLimit = 512 << 20
)

// Engine is a compiled PDFium module and the pool of instances that run it. It is safe for
// concurrent use; the zero value is not usable (use New).
type Engine struct {
	ready chan struct{} // closed when compilation finished, well or not
	pool  pdfium.Pool
	err   error
	cfg   Config
	// Startup is how long compiling (or loading from the cache) took.
	startup time.Duration

	closeOnce sync.Once
}

// New starts compiling the PDFium module in the background and returns at once. Operations wait
// for the compilation (or their context); [Engine.Wait] waits explicitly.
func New(cfg Config) *Engine {
	if cfg.Instances <= 0 {
		cfg.Instances = DefaultInstances
	}
	if cfg.MemoryLimit <= 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	e := &Engine{ready: make(chan struct{}), cfg: cfg}
	go e.start()
	return e
}

func (e *Engine) start() {
	defer close(e.ready)
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			e.err = fmt.Errorf("%w: starting: %v", ErrEngine, r)
		}
	}()
	pages := uint32(min(e.cfg.MemoryLimit>>16, 65536))
	rc := wazero.NewRuntimeConfig().
		// The bundled module lowers setjmp/longjmp to WebAssembly exception handling.
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		// Lets a cancelled context stop a call that is running (see Doc.do).
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages)
	init := func(rc wazero.RuntimeConfig) (pdfium.Pool, error) {
		return webassembly.Init(webassembly.Config{
			// Instances take their linear memory from a reservation of the capped size.
			Context:  experimental.WithMemoryAllocator(context.Background(), newMemoryAllocator(e.cfg.MemoryLimit)),
			MinIdle:  0,
			MaxIdle:  0,
			MaxTotal: e.cfg.Instances,
			// No file system at all: a document must not read the host's files (PDFium would
			// look for system fonts there; its built-in fonts cover the standard 14 and
			// substitutes).
			FSConfig:      wazero.NewFSConfig(),
			RuntimeConfig: rc,
			Stdout:        io.Discard,
			Stderr:        io.Discard,
			// A fresh instance per document: memory a document grew is returned with it, and
			// no state of one caller's document can reach the next.
			ReuseWorkers: false,
		})
	}
	var pool pdfium.Pool
	err := errors.New("no compilation cache")
	if e.cfg.CacheDir != "" {
		if cache, cerr := wazero.NewCompilationCacheWithDir(e.cfg.CacheDir); cerr == nil {
			// wazero fails the compilation when it cannot write a missing entry into the cache
			// (a read-only directory, warmed for another CPU): compiled without it below.
			pool, err = init(rc.WithCompilationCache(cache))
		}
	}
	if err != nil {
		// Without a (usable) cache directory the engine costs its compile time, nothing more.
		pool, err = init(rc)
	}
	if err != nil {
		e.err = fmt.Errorf("%w: %v", ErrEngine, err)
		return
	}
	e.pool = pool
	e.startup = time.Since(start)
	// Compilation leaves a few hundred MB of garbage behind; give it back now rather than
	// letting it sit in the heap until the next cycles.
	memlimit.Release()
}

// Wait blocks until the engine is compiled or ctx ends. It returns the start-up error, if any.
func (e *Engine) Wait(ctx context.Context) error {
	select {
	case <-e.ready:
		return e.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Startup reports how long compiling the module took; zero before it finished.
func (e *Engine) Startup() time.Duration {
	select {
	case <-e.ready:
		return e.startup
	default:
		return 0
	}
}

// Close releases the compiled module and every instance. Documents still open fail afterwards.
func (e *Engine) Close() error {
	var err error
	e.closeOnce.Do(func() {
		<-e.ready
		if e.pool != nil {
			err = e.pool.Close()
		}
	})
	return err
}

// instance borrows a fresh PDFium instance, waiting for a free one until ctx ends.
func (e *Engine) instance(ctx context.Context) (pdfium.Pdfium, error) {
	if err := e.Wait(ctx); err != nil {
		return nil, err
	}
	var inst pdfium.Pdfium
	err := safely(func() error {
		var err error
		inst, err = e.pool.GetInstanceWithContext(ctx)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: no instance: %v", ErrEngine, err)
	}
	return inst, nil
}

// safely runs fn and turns a panic into ErrEngine.
func safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic: %v", ErrEngine, r)
		}
	}()
	return fn()
}
