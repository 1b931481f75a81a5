// Package onnxrt runs the pipeline's models in-process with ONNX Runtime: the zero-setup runtime.
//
// Sessions are created at start and shared by all requests (ONNX Runtime sessions are safe for
// concurrent Run calls). Input and output names and ranks are read from the model files, not
// assumed, so a re-exported model with other tensor names still loads.
//
// The models are expected to be prepared (cmd/ocrgate-prepare, run by scripts/fetch_models.sh):
// rewritten once into an equivalent faster graph and stamped in their metadata. An unprepared
// model still loads, with a warning, and runs slower.
package onnxrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ocrgate/ocrgate/service/ocr"
)

// Metadata keys the prepare step (internal/modelprep) stamps into a prepared model.
const (
	// PreparedMetadataKey holds the prepare format version; its presence marks a prepared model.
	PreparedMetadataKey = "ocrgate.prepared"
	// OutputShapeMetadataKey holds the output shape as a function of the input shape (see
	// parseShapeRule), which lets Infer hand ONNX Runtime an output buffer it writes into directly.
	OutputShapeMetadataKey = "ocrgate.output_shape"
)

// Options configure the embedded runtime.
type Options struct {
	// LibraryPath is the ONNX Runtime shared library (libonnxruntime.so.1).
	LibraryPath string
	// Models maps each pipeline model to its .onnx file.
	Models map[ocr.Model]string
	// IntraOpThreads is the thread count one inference may use (0: one per core); Threads overrides
	// it per model. A model run on one thread has no thread pool: it runs on the calling goroutine's
	// thread, so many such runs at once (batches of one request, or of concurrent requests) share
	// the cores without a pool's barriers to wait at. InterOpThreads bounds parallelism between
	// graph nodes (0: default).
	IntraOpThreads int
	Threads        map[ocr.Model]int
	InterOpThreads int
	// Arena selects where intermediate tensors come from (see Arena).
	Arena Arena
	// ArenaMaxInput bounds what an arena remembers: an input of more values than this runs on a
	// session created for that run and closed after it, so the memory a rare huge input needed
	// (a second detection pass over a whole large page can take 0.6 GB) goes back when it ends
	// instead of staying in the model's arena for good. 0: no bound.
	ArenaMaxInput int
	// SessionConfig holds extra ONNX Runtime session configuration entries (key=value, as in
	// onnxruntime_session_options_config_keys.h), applied after ocrgate's own.
	SessionConfig map[string]string
	// Spin lets ONNX Runtime's worker threads busy-wait for work after a run. It shaves latency
	// off back-to-back runs but takes the cores from the Go stages between model calls (crops,
	// CTC), so it is off by default.
	Spin bool
	// Logger receives warnings about the models (nil: slog.Default()).
	Logger *slog.Logger
}

// Arena is where ONNX Runtime's CPU memory for intermediate tensors comes from.
type Arena string

const (
	// ArenaSession gives each session its own arena (ONNX Runtime's default). An arena serves
	// repeated shapes without calling the C allocator, and keeps the most memory its session was
	// ever asked for until the session is closed.
	ArenaSession Arena = "session"
	// ArenaOff takes every tensor from the C allocator and gives it back after the run. Measured
	// on sroie-dev it is no smaller with glibc, whose heaps keep freed memory (618 against
	// 392 MiB outside the Go heap), and the detector runs 1.6–2.4× slower on fresh pages.
	ArenaOff Arena = "off"
	// ArenaShared gives the persistent sessions of every model one arena, registered with the
	// process-wide environment: what it keeps is the most the models were asked for together,
	// not the sum of each session's own high-water mark (the detector's after two pages at once,
	// plus the recognizer's after two requests' batches, plus the classifier's). Sessions
	// created for one large input keep their own arena and free it with the session.
	ArenaShared Arena = "shared"
)

// ParseArena reads an Arena setting.
func ParseArena(s string) (Arena, error) {
	switch a := Arena(s); a {
	case ArenaSession, ArenaOff, ArenaShared:
		return a, nil
	}
	return "", fmt.Errorf("arena must be session, shared or off, got %q", s)
}

// Runtime is the embedded ONNX Runtime. It implements ocr.Runtime.
type Runtime struct {
	models map[ocr.Model]*model
	log    *slog.Logger
	arena  Arena
}

// model is one network: its session and what is known about its tensors.
type model struct {
	name     ocr.Model
	s        *ort.DynamicAdvancedSession
	data     []byte  // the model file, kept to create sessions for inputs above maxInput
	opt      Options // what its sessions are created with
	maxInput int     // inputs with more values run on a session of their own
	threads  int
	in, out  ort.InputOutputInfo
	outShape shapeRule // nil: ONNX Runtime allocates the output and it is copied
	prepared bool
	// bindFailed turns output binding off after the model's own metadata was wrong about an
	// output shape once.
	bindFailed atomic.Bool
}

// The ONNX Runtime environment is process-wide; it is initialised once and kept for the process.
var (
	envOnce sync.Once
	envErr  error
	envLib  string

	sharedArenaOnce sync.Once
	sharedArenaErr  error
)

// registerSharedArena registers the environment's CPU arena the sessions of ArenaShared use,
// once per process.
func registerSharedArena() error {
	sharedArenaOnce.Do(func() {
		mi, err := ort.GetMemoryInfo()
		if err != nil {
			sharedArenaErr = err
			return
		}
		// ONNX Runtime's defaults (no limit, extend by powers of two, 1 MiB first chunk).
		cfg, err := ort.NewArenaCfg(0, -1, -1, -1)
		if err != nil {
			sharedArenaErr = err
			return
		}
		defer cfg.Destroy()
		if err := ort.CreateAndRegisterAllocator(mi, cfg); err != nil {
			sharedArenaErr = fmt.Errorf("register the shared arena: %w", err)
		}
	})
	return sharedArenaErr
}

func initEnvironment(lib string) error {
	envOnce.Do(func() {
		envLib = lib
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(); err != nil {
			envErr = fmt.Errorf("load ONNX Runtime from %s: %w (run scripts/fetch_models.sh, or set OCRGATE_ORT_LIB)", lib, err)
		}
	})
	if envErr == nil && lib != envLib {
		return fmt.Errorf("ONNX Runtime already loaded from %s, cannot load %s too", envLib, lib)
	}
	return envErr
}

// Open loads the library and creates the sessions of every model.
func Open(opt Options) (*Runtime, error) {
	if err := initEnvironment(opt.LibraryPath); err != nil {
		return nil, err
	}
	if opt.Arena == "" {
		opt.Arena = ArenaSession
	}
	if _, err := ParseArena(string(opt.Arena)); err != nil {
		return nil, err
	}
	if opt.Arena == ArenaShared {
		if err := registerSharedArena(); err != nil {
			return nil, err
		}
	}
	rt := &Runtime{models: make(map[ocr.Model]*model, len(opt.Models)), log: opt.Logger, arena: opt.Arena}
	if rt.log == nil {
		rt.log = slog.Default()
	}
	// The pipeline's three models first, then the language packs' recognizers in name order.
	order := slices.Clone(ocr.Models)
	for _, m := range slices.Sorted(maps.Keys(opt.Models)) {
		if !slices.Contains(order, m) {
			order = append(order, m)
		}
	}
	for _, m := range order {
		path, ok := opt.Models[m]
		if !ok {
			continue
		}
		mod, err := openModel(m, path, opt)
		if err != nil {
			_ = rt.Close() // err is what the caller acts on
			return nil, fmt.Errorf("model %s: %w", m, err)
		}
		rt.models[m] = mod
		if !mod.prepared {
			rt.log.Warn("model is not prepared: it loads as it is and runs slower; scripts/fetch_models.sh prepares the fetched models (cmd/ocrgate-prepare) and the default settings load those",
				"model", string(m), "file", path)
		}
	}
	return rt, nil
}

func openModel(name ocr.Model, path string, opt Options) (*model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(ins) != 1 || len(outs) != 1 {
		return nil, fmt.Errorf("%s has %d inputs and %d outputs; the pipeline needs one of each", path, len(ins), len(outs))
	}
	for _, io := range []ort.InputOutputInfo{ins[0], outs[0]} {
		if io.OrtValueType != ort.ONNXTypeTensor || io.DataType != ort.TensorElementDataType(ort.GetTensorElementDataType[float32]()) {
			return nil, fmt.Errorf("%s: tensor %q is %s, want float32", path, io.Name, io.String())
		}
	}
	m := &model{name: name, in: ins[0], out: outs[0], threads: opt.IntraOpThreads, opt: opt, maxInput: opt.ArenaMaxInput}
	if m.maxInput > 0 {
		m.data = data
	}
	if n, ok := opt.Threads[name]; ok {
		m.threads = n
	}
	if m.threads <= 0 {
		m.threads = runtime.NumCPU()
	}
	if m.s, err = newSession(data, m, opt.Arena == ArenaShared); err != nil {
		return nil, fmt.Errorf("create session for %s: %w", path, err)
	}
	if err := m.readMetadata(); err != nil {
		_ = m.close() // err is what the caller acts on
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// newSession creates a session of m; shared: on the environment's arena (see ArenaShared).
func newSession(data []byte, m *model, shared bool) (*ort.DynamicAdvancedSession, error) {
	opt := m.opt
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(m.threads); err != nil {
		return nil, err
	}
	if opt.InterOpThreads > 0 {
		if err := so.SetInterOpNumThreads(opt.InterOpThreads); err != nil {
			return nil, err
		}
	}
	if err := so.SetCpuMemArena(opt.Arena != ArenaOff); err != nil {
		return nil, err
	}
	// No memory pattern: with it, each new input shape gets its own planned block in the arena,
	// and the detector (a new shape for nearly every image) left ~90 MiB more arena behind over
	// sroie-dev (peak RSS 584–597 → 483–500 MiB) at no measurable CPU cost.
	if err := so.SetMemPattern(false); err != nil {
		return nil, err
	}
	spin := "0"
	if opt.Spin {
		spin = "1"
	}
	for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
		if err := so.AddSessionConfigEntry(key, spin); err != nil {
			return nil, err
		}
	}
	if shared {
		if err := so.AddSessionConfigEntry("session.use_env_allocators", "1"); err != nil {
			return nil, err
		}
	}
	for k, v := range opt.SessionConfig {
		if err := so.AddSessionConfigEntry(k, v); err != nil {
			return nil, fmt.Errorf("session config %s=%s: %w", k, v, err)
		}
	}
	return ort.NewDynamicAdvancedSessionWithONNXData(data, []string{m.in.Name}, []string{m.out.Name}, so)
}

// readMetadata reads what the prepare step stamped into the model.
func (m *model) readMetadata() error {
	md, err := m.s.GetModelMetadata()
	if err != nil {
		return fmt.Errorf("read metadata: %w", err)
	}
	defer md.Destroy()
	_, m.prepared, err = md.LookupCustomMetadataMap(PreparedMetadataKey)
	if err != nil {
		return fmt.Errorf("read metadata: %w", err)
	}
	rule, ok, err := md.LookupCustomMetadataMap(OutputShapeMetadataKey)
	if err != nil {
		return fmt.Errorf("read metadata: %w", err)
	}
	if ok {
		if m.outShape, err = parseShapeRule(rule, len(m.in.Dimensions), len(m.out.Dimensions)); err != nil {
			return fmt.Errorf("metadata %s: %w", OutputShapeMetadataKey, err)
		}
	}
	return nil
}

func (m *model) close() error {
	if m.s == nil {
		return nil
	}
	err := m.s.Destroy()
	m.s = nil
	return err
}

// Infer runs model m on one input tensor. A cancelled or expired ctx terminates the run.
func (rt *Runtime) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	mod, ok := rt.models[m]
	if !ok {
		return ocr.Tensor{}, fmt.Errorf("%s: %w", m, ocr.ErrModelMissing)
	}
	if err := ctx.Err(); err != nil {
		return ocr.Tensor{}, err
	}
	if err := checkShape(mod.in.Dimensions, in.Shape, len(in.Data)); err != nil {
		return ocr.Tensor{}, fmt.Errorf("%s input %q: %w: %w", m, mod.in.Name, err, ocr.ErrRuntimeFailed)
	}
	sess := mod.s
	if mod.maxInput > 0 && len(in.Data) > mod.maxInput {
		// Creating a session costs tens of milliseconds; inputs this large take seconds.
		s, err := newSession(mod.data, mod, false)
		if err != nil {
			return ocr.Tensor{}, fmt.Errorf("%s: session for a large input: %w: %w", m, err, ocr.ErrRuntimeFailed)
		}
		defer s.Destroy()
		sess = s
	}
	x, err := ort.NewTensor(ort.Shape(in.Shape), in.Data)
	if err != nil {
		return ocr.Tensor{}, fmt.Errorf("%s: %w: %w", m, err, ocr.ErrRuntimeFailed)
	}
	defer x.Destroy()

	ro, err := ort.NewRunOptions()
	if err != nil {
		return ocr.Tensor{}, fmt.Errorf("%s: %w: %w", m, err, ocr.ErrRuntimeFailed)
	}
	// ONNX Runtime checks the terminate flag between graph nodes, so a request that runs out of
	// time stops using the cores instead of finishing work nobody will read.
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(terminated)
		_ = ro.Terminate()
	})
	defer func() {
		// A deadline that passes as the run ends may have started Terminate already (stop then
		// reports false): the options are freed only once it has returned, never under it.
		if !stop() {
			<-terminated
		}
		ro.Destroy()
	}()

	// With the output shape known, ONNX Runtime writes straight into Go memory: no output buffer
	// in its arena and no copy of it (onnxruntime_go copies every output it allocates).
	if shape, ok := mod.outShape.apply(in.Shape); ok && !mod.bindFailed.Load() {
		out, err := rt.runInto(ctx, sess, x, ro, shape)
		if err == nil || ctx.Err() != nil {
			return out, rt.runError(ctx, m, err)
		}
		// Wrong metadata must not fail requests: run again with ONNX Runtime's own output and stop
		// binding for this model.
		mod.bindFailed.Store(true)
		rt.log.Warn("model's output shape metadata did not fit; its outputs are copied from now on", "model", string(m), "input", in.Shape, "predicted", shape, "err", err)
	}
	outputs := []ort.Value{nil}
	if err := sess.RunWithOptions([]ort.Value{x}, outputs, ro); err != nil {
		return ocr.Tensor{}, rt.runError(ctx, m, err)
	}
	defer outputs[0].Destroy()
	res, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return ocr.Tensor{}, fmt.Errorf("%s: output is %T, want a float32 tensor: %w", m, outputs[0], ocr.ErrRuntimeFailed)
	}
	// The binding copied ONNX Runtime's output into Go memory, so the slice outlives Destroy.
	return ocr.Tensor{Shape: slices.Clone([]int64(res.GetShape())), Data: res.GetData()}, nil
}

// runInto runs the session with a Go-allocated output of the given shape.
func (rt *Runtime) runInto(ctx context.Context, sess *ort.DynamicAdvancedSession, x *ort.Tensor[float32], ro *ort.RunOptions, shape []int64) (ocr.Tensor, error) {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	data := make([]float32, n)
	y, err := ort.NewTensor(ort.Shape(shape), data)
	if err != nil {
		return ocr.Tensor{}, err
	}
	defer y.Destroy()
	if err := sess.RunWithOptions([]ort.Value{x}, []ort.Value{y}, ro); err != nil {
		return ocr.Tensor{}, err
	}
	return ocr.Tensor{Shape: shape, Data: data}, nil
}

// runError maps a failed run: the request's own deadline or cancellation, else a runtime failure.
func (rt *Runtime) runError(ctx context.Context, m ocr.Model, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("%s: %w: %w", m, err, ocr.ErrRuntimeFailed)
}

// checkShape compares a concrete shape with the model's declared one (-1 or 0 = any size).
func checkShape(declared ort.Shape, got []int64, n int) error {
	if len(got) != len(declared) {
		return fmt.Errorf("rank %d, model wants %v", len(got), declared)
	}
	want := 1
	for i, d := range got {
		if d <= 0 {
			return fmt.Errorf("dimension %d is %d", i, d)
		}
		if declared[i] > 0 && declared[i] != d {
			return fmt.Errorf("shape %v, model wants %v", got, declared)
		}
		want *= int(d)
	}
	if n != want {
		return fmt.Errorf("shape %v needs %d values, got %d", got, want, n)
	}
	return nil
}

// Inputs reports, for each loaded model, its input's declared shape (for logs and checks).
func (rt *Runtime) Inputs() map[ocr.Model][]int64 {
	out := make(map[ocr.Model][]int64, len(rt.models))
	for m, mod := range rt.models {
		out[m] = slices.Clone([]int64(mod.in.Dimensions))
	}
	return out
}

// Prepared reports, for each loaded model, whether it is a prepared model.
func (rt *Runtime) Prepared() map[ocr.Model]bool {
	out := make(map[ocr.Model]bool, len(rt.models))
	for m, mod := range rt.models {
		out[m] = mod.prepared
	}
	return out
}

// Close destroys the sessions. The process-wide environment stays loaded.
func (rt *Runtime) Close() error {
	var errs []error
	for m, mod := range rt.models {
		if err := mod.close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
		}
		delete(rt.models, m)
	}
	return errors.Join(errs...)
}
