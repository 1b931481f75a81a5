// Package tritonrt runs the pipeline's models on an NVIDIA Triton Inference Server (or any KServe v2
// gRPC server) through tritonclient. It implements ocr.Runtime.
//
// The runtime never blocks at start: the service comes up while Triton is still loading, reports
// not ready (Ready) until the server and all three models are ready and their tensors fit what the
// pipeline sends, and recovers by itself when Triton goes away and comes back, because the gRPC
// connection reconnects underneath and every readiness check looks again.
package tritonrt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/ocrgate/ocrgate/service/ctc"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/tritonclient"
)

// Options configure the runtime.
type Options struct {
	// Models maps each pipeline model to its Triton model name.
	Models map[ocr.Model]string
	// RecClasses is the number of classes the recognizer must output (the dictionary's size plus
	// blank and space); 0 skips that check.
	RecClasses int
	// LangClasses is the same for each language pack's recognizer in Models (ocr.RecognizerFor).
	LangClasses map[ocr.Model]int
	// Client configures the gRPC client (timeouts, message size, retries).
	Client tritonclient.Options
}

// DefaultModelNames are the model names of the repository in model_repository/.
func DefaultModelNames() map[ocr.Model]string {
	return map[ocr.Model]string{ocr.Detector: "ppocr_det", ocr.Recognizer: "ppocr_rec", ocr.Classifier: "ppocr_cls"}
}

// Runtime sends inference to Triton. It is safe for concurrent use.
type Runtime struct {
	client *tritonclient.Client
	opt    Options

	mu sync.RWMutex
	io map[ocr.Model]tensorNames // filled by a successful check of the model's metadata
}

// tensorNames are a model's input and output tensor names, read from its metadata.
type tensorNames struct{ in, out string }

// Open creates the runtime for the server at addr (host:port of Triton's gRPC endpoint). It does
// not wait for the server.
func Open(addr string, opt Options) (*Runtime, error) {
	for _, m := range ocr.Models {
		if opt.Models[m] == "" {
			return nil, fmt.Errorf("triton: no model name for %s", m)
		}
	}
	c, err := tritonclient.New(addr, opt.Client)
	if err != nil {
		return nil, fmt.Errorf("triton client for %s: %w", addr, err)
	}
	return &Runtime{client: c, opt: opt, io: map[ocr.Model]tensorNames{}}, nil
}

// Close closes the connection.
func (r *Runtime) Close() error { return r.client.Close() }

// Ready reports nil when Triton is ready to serve the pipeline: the server is ready, and every
// model is ready with tensors the pipeline can use. Otherwise every problem found is an
// *ocr.NotReadyError whose stable Reason a readiness probe may show (see reason) and whose detail,
// with Triton's own words, is for the log.
func (r *Runtime) Ready(ctx context.Context) error {
	ok, err := r.client.ServerReady(ctx)
	if err != nil {
		return &ocr.NotReadyError{Reason: reason(err, "triton_unreachable", ""), Err: fmt.Errorf("triton server not reachable: %w", translate(err))}
	}
	var errs []error
	if !ok {
		// Triton's server readiness is strict by default (every model must be ready), so look
		// at the models too and name the ones holding it back.
		errs = append(errs, &ocr.NotReadyError{Reason: "triton_not_ready", Err: fmt.Errorf("triton server is not ready: %w", ocr.ErrRuntimeUnavailable)})
	}
	// The pipeline's models, then the language packs' recognizers it was given.
	for _, m := range r.models() {
		if _, err := r.names(ctx, m, true); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reason is the stable readiness reason for err, a failed call about model (empty for the
// server): the connection or a deadline first, whatever call failed, then fallback (suffixed with
// the model's name). The reasons are documented in docs/triton.md.
func reason(err error, fallback, model string) string {
	switch {
	case errors.Is(err, tritonclient.ErrUnavailable):
		return "triton_unreachable"
	case errors.Is(err, tritonclient.ErrTimeout), errors.Is(err, tritonclient.ErrCanceled):
		return "triton_timeout"
	case model != "" && errors.Is(err, tritonclient.ErrModelNotFound):
		return "model_not_found: " + model
	case model != "":
		return fallback + ": " + model
	}
	return fallback
}

// names returns model m's tensor names, checking its readiness and metadata when they are not
// known yet (or when recheck is set).
func (r *Runtime) names(ctx context.Context, m ocr.Model, recheck bool) (tensorNames, error) {
	if !recheck {
		r.mu.RLock()
		tn, ok := r.io[m]
		r.mu.RUnlock()
		if ok {
			return tn, nil
		}
	}
	name := r.opt.Models[m]
	ready, err := r.client.ModelReady(ctx, name, "")
	if err != nil {
		return tensorNames{}, &ocr.NotReadyError{Reason: reason(err, "model_not_ready", name), Err: fmt.Errorf("model %s: %w", name, translate(err))}
	}
	if !ready {
		return tensorNames{}, &ocr.NotReadyError{Reason: "model_not_ready: " + name, Err: fmt.Errorf("model %s is not ready: %w", name, ocr.ErrModelMissing)}
	}
	md, err := r.client.ModelMetadata(ctx, name, "")
	if err != nil {
		return tensorNames{}, &ocr.NotReadyError{Reason: reason(err, "metadata_unavailable", name), Err: fmt.Errorf("model %s metadata: %w", name, translate(err))}
	}
	classes := r.opt.RecClasses
	if c, ok := r.opt.LangClasses[m]; ok {
		classes = c
	}
	tn, err := fit(m, md, classes)
	if err != nil {
		r.mu.Lock()
		delete(r.io, m)
		r.mu.Unlock()
		return tensorNames{}, &ocr.NotReadyError{Reason: "metadata_mismatch: " + name, Err: fmt.Errorf("model %s does not fit the pipeline: %w: %w", name, err, ocr.ErrModelMissing)}
	}
	r.mu.Lock()
	r.io[m] = tn
	r.mu.Unlock()
	return tn, nil
}

// want is the tensor contract the pipeline relies on: ranks, and the sizes that are fixed
// (-1 in a model's shape always fits).
var want = map[ocr.Model]struct {
	in, out []int64 // -2: any size
}{
	ocr.Detector:   {in: []int64{-2, 3, -2, -2}, out: []int64{-2, 1, -2, -2}},
	ocr.Recognizer: {in: []int64{-2, 3, 48, -2}, out: []int64{-2, -2, -2}},
	ocr.Classifier: {in: []int64{-2, 3, 48, 192}, out: []int64{-2, 2}},
}

// fit checks a model's metadata against the pipeline's contract and returns its tensor names.
func fit(m ocr.Model, md tritonclient.ModelMetadata, recClasses int) (tensorNames, error) {
	if len(md.Inputs) != 1 || len(md.Outputs) != 1 {
		return tensorNames{}, fmt.Errorf("has %d inputs and %d outputs, the pipeline needs one of each", len(md.Inputs), len(md.Outputs))
	}
	w, ok := want[m]
	rec := m == ocr.Recognizer
	if !ok { // a language pack's recognizer: the recognizer's contract
		w, rec = want[ocr.Recognizer], true
	}
	out := slices.Clone(w.out)
	if rec && recClasses > 0 {
		// Every class's probability (the exported graph), or the seven values per step of the
		// prepared one (ctc.DecodeTop).
		out[2] = int64(recClasses)
		if d := md.Outputs[0].Shape; len(d) == 3 && d[2] == ctc.TopWidth {
			out[2] = ctc.TopWidth
		}
	}
	for _, c := range []struct {
		what string
		t    tritonclient.TensorMetadata
		want []int64
	}{{"input", md.Inputs[0], w.in}, {"output", md.Outputs[0], out}} {
		if c.t.Datatype != "FP32" {
			return tensorNames{}, fmt.Errorf("%s %q is %s, want FP32", c.what, c.t.Name, c.t.Datatype)
		}
		if len(c.t.Shape) != len(c.want) {
			return tensorNames{}, fmt.Errorf("%s %q has shape %v, want rank %d", c.what, c.t.Name, c.t.Shape, len(c.want))
		}
		for i, d := range c.t.Shape {
			if c.want[i] != -2 && d != -1 && d != c.want[i] {
				return tensorNames{}, fmt.Errorf("%s %q has shape %v, dimension %d must be %d", c.what, c.t.Name, c.t.Shape, i, c.want[i])
			}
		}
	}
	return tensorNames{in: md.Inputs[0].Name, out: md.Outputs[0].Name}, nil
}

// models are the pipeline's three models and the language packs' recognizers, in name order.
func (r *Runtime) models() []ocr.Model {
	return append(slices.Clone(ocr.Models), slices.Sorted(maps.Keys(r.opt.LangClasses))...)
}

// Infer runs model m on Triton.
func (r *Runtime) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	if r.opt.Models[m] == "" {
		return ocr.Tensor{}, fmt.Errorf("triton: no model name for %s: %w", m, ocr.ErrModelMissing)
	}
	tn, err := r.names(ctx, m, false)
	if err != nil {
		return ocr.Tensor{}, err
	}
	outs, err := r.client.Infer(ctx, r.opt.Models[m], []tritonclient.Tensor{{Name: tn.in, Datatype: "FP32", Shape: in.Shape, Data: in.Data}}, tn.out)
	if err != nil {
		if errors.Is(err, tritonclient.ErrModelNotFound) || errors.Is(err, tritonclient.ErrInvalidTensor) {
			// The server changed under us (model unloaded or replaced): check it again next time.
			r.mu.Lock()
			delete(r.io, m)
			r.mu.Unlock()
		}
		return ocr.Tensor{}, translate(err)
	}
	if len(outs) != 1 {
		return ocr.Tensor{}, fmt.Errorf("%s: %d outputs: %w", m, len(outs), ocr.ErrRuntimeFailed)
	}
	return ocr.Tensor{Shape: outs[0].Shape, Data: outs[0].Data}, nil
}

// translate maps the client's errors onto the pipeline's. Timeouts and cancellations keep matching
// context.DeadlineExceeded / context.Canceled through the client's own wrapping.
func translate(err error) error {
	switch {
	case errors.Is(err, tritonclient.ErrUnavailable):
		return fmt.Errorf("%w: %w", ocr.ErrRuntimeUnavailable, err)
	case errors.Is(err, tritonclient.ErrModelNotFound):
		return fmt.Errorf("%w: %w", ocr.ErrModelMissing, err)
	case errors.Is(err, tritonclient.ErrTimeout), errors.Is(err, tritonclient.ErrCanceled):
		return err
	default:
		return fmt.Errorf("%w: %w", ocr.ErrRuntimeFailed, err)
	}
}
