// Package onnx runs the pipeline's models in-process with ONNX Runtime: the zero-setup runtime.
//
// One session per model is created at start and shared by all requests (ONNX Runtime sessions are
// safe for concurrent Run calls). Input and output names and ranks are read from the model files,
// not assumed, so a re-exported model with other tensor names still loads.
package onnx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ocrgate/ocrgate/internal/onnxgraph"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Options configure the embedded runtime.
type Options struct {
	// LibraryPath is the ONNX Runtime shared library (libonnxruntime.so.1).
	LibraryPath string
	// Models maps each pipeline model to its .onnx file.
	Models map[ocr.Model]string
	// IntraOpThreads is the thread count one inference may use (0: ONNX Runtime's default, one per
	// physical core). InterOpThreads bounds parallelism between graph nodes (0: default).
	IntraOpThreads int
	InterOpThreads int
	// KeepGraph loads the models as they are; by default their graphs are first rewritten into an
	// equivalent form ONNX Runtime runs faster (see onnxgraph.Optimize).
	KeepGraph bool
	// SessionConfig holds extra ONNX Runtime session configuration entries (key=value, as in
	// onnxruntime_session_options_config_keys.h), applied after ocrgate's own.
	SessionConfig map[string]string
	// Spin lets ONNX Runtime's worker threads busy-wait for work after a run. It shaves latency
	// off back-to-back runs but takes the cores from the Go stages between model calls (crops,
	// CTC), so it is off by default.
	Spin bool
}

// Runtime is the embedded ONNX Runtime. It implements ocr.Runtime.
type Runtime struct {
	sessions map[ocr.Model]*session
}

type session struct {
	s       *ort.DynamicAdvancedSession
	in, out ort.InputOutputInfo
}

// The ONNX Runtime environment is process-wide; it is initialised once and kept for the process.
var (
	envOnce sync.Once
	envErr  error
	envLib  string
)

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

// Open loads the library and creates one session per model.
func Open(opt Options) (*Runtime, error) {
	if err := initEnvironment(opt.LibraryPath); err != nil {
		return nil, err
	}
	rt := &Runtime{sessions: make(map[ocr.Model]*session, len(opt.Models))}
	for _, m := range ocr.Models {
		path, ok := opt.Models[m]
		if !ok {
			continue
		}
		s, err := newSession(path, opt)
		if err != nil {
			rt.Close()
			return nil, fmt.Errorf("model %s: %w", m, err)
		}
		rt.sessions[m] = s
	}
	return rt, nil
}

func newSession(path string, opt Options) (*session, error) {
	model, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !opt.KeepGraph {
		optimized, _, err := onnxgraph.Optimize(model)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		model = optimized
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
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
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if opt.IntraOpThreads > 0 {
		if err := so.SetIntraOpNumThreads(opt.IntraOpThreads); err != nil {
			return nil, err
		}
	}
	if opt.InterOpThreads > 0 {
		if err := so.SetInterOpNumThreads(opt.InterOpThreads); err != nil {
			return nil, err
		}
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
	for k, v := range opt.SessionConfig {
		if err := so.AddSessionConfigEntry(k, v); err != nil {
			return nil, fmt.Errorf("session config %s=%s: %w", k, v, err)
		}
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{ins[0].Name}, []string{outs[0].Name}, so)
	if err != nil {
		return nil, fmt.Errorf("create session for %s: %w", path, err)
	}
	return &session{s: s, in: ins[0], out: outs[0]}, nil
}

// Infer runs model m on one input tensor. A cancelled or expired ctx terminates the run.
func (rt *Runtime) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	s, ok := rt.sessions[m]
	if !ok {
		return ocr.Tensor{}, fmt.Errorf("%s: %w", m, ocr.ErrModelMissing)
	}
	if err := ctx.Err(); err != nil {
		return ocr.Tensor{}, err
	}
	if err := checkShape(s.in.Dimensions, in.Shape, len(in.Data)); err != nil {
		return ocr.Tensor{}, fmt.Errorf("%s input %q: %w: %w", m, s.in.Name, err, ocr.ErrRuntimeFailed)
	}
	t, err := ort.NewTensor(ort.Shape(in.Shape), in.Data)
	if err != nil {
		return ocr.Tensor{}, fmt.Errorf("%s: %w: %w", m, err, ocr.ErrRuntimeFailed)
	}
	defer t.Destroy()

	ro, err := ort.NewRunOptions()
	if err != nil {
		return ocr.Tensor{}, fmt.Errorf("%s: %w: %w", m, err, ocr.ErrRuntimeFailed)
	}
	defer ro.Destroy()
	// ONNX Runtime checks the terminate flag between graph nodes, so a request that runs out of
	// time stops using the cores instead of finishing work nobody will read.
	stop := context.AfterFunc(ctx, func() { _ = ro.Terminate() })
	defer stop()

	outputs := []ort.Value{nil}
	if err := s.s.RunWithOptions([]ort.Value{t}, outputs, ro); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ocr.Tensor{}, ctxErr
		}
		return ocr.Tensor{}, fmt.Errorf("%s: %w: %w", m, err, ocr.ErrRuntimeFailed)
	}
	defer outputs[0].Destroy()
	res, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return ocr.Tensor{}, fmt.Errorf("%s: output is %T, want a float32 tensor: %w", m, outputs[0], ocr.ErrRuntimeFailed)
	}
	// The binding copies ONNX Runtime's output into Go memory, so the slice outlives Destroy.
	return ocr.Tensor{Shape: slices.Clone([]int64(res.GetShape())), Data: res.GetData()}, nil
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
	out := make(map[ocr.Model][]int64, len(rt.sessions))
	for m, s := range rt.sessions {
		out[m] = slices.Clone([]int64(s.in.Dimensions))
	}
	return out
}

// Close destroys the sessions. The process-wide environment stays loaded.
func (rt *Runtime) Close() error {
	var errs []error
	for m, s := range rt.sessions {
		if err := s.s.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
		}
		delete(rt.sessions, m)
	}
	return errors.Join(errs...)
}
