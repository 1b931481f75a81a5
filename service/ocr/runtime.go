package ocr

import (
	"context"
	"errors"
	"slices"
)

// Model names one of the three networks the pipeline runs. The runtime maps it to a session
// (embedded) or a Triton model name.
type Model string

// The models of the pipeline.
const (
	Detector   Model = "det" // text detection (DB): [N,3,H,W] → [N,1,H,W] probability map
	Recognizer Model = "rec" // text recognition (CTC): [N,3,48,W] → [N,T,classes] softmax, or [N,T,3] (ctc.DecodeTop)
	Classifier Model = "cls" // 0°/180° direction: [N,3,48,192] → [N,2] softmax
)

// Models lists every model the pipeline needs, for readiness checks.
var Models = []Model{Detector, Recognizer, Classifier}

// Tensor is a dense float32 tensor in row-major order.
type Tensor struct {
	Shape []int64
	Data  []float32
}

// Runtime runs one model on one input tensor and returns its (single) output. It is the only thing
// the pipeline needs from a model server, so the embedded ONNX Runtime and a Triton client can stand
// in for each other. Implementations must be safe for concurrent use, must honour ctx (deadline and
// cancellation), and should wrap their failures in the errors below so callers can tell a caller's
// problem from an outage.
type Runtime interface {
	Infer(ctx context.Context, m Model, in Tensor) (Tensor, error)
}

// ThreadReporter is a Runtime that runs a model in this process on a pool of threads: Threads is
// how many threads a run of m keeps busy, the calling one included (1: the caller's alone, as for
// a single-threaded session, or a model that runs in another process). The pipeline charges a
// request's CPU budget for them (see clockedRuntime): the calling thread is measured, the pool's
// others are charged the same share each, as the runtime splits a run's work evenly over them.
type ThreadReporter interface {
	Threads(m Model) int
}

var (
	// ErrRuntimeUnavailable means the model runtime cannot serve right now (not started, not ready,
	// unreachable). The request may succeed later.
	ErrRuntimeUnavailable = errors.New("model runtime unavailable")
	// ErrModelMissing means the runtime does not know the model.
	ErrModelMissing = errors.New("model not found in runtime")
	// ErrRuntimeFailed means the runtime accepted the request but failed to run it, or answered with
	// something the pipeline cannot use.
	ErrRuntimeFailed = errors.New("model runtime failed")
)

// NotReadyError says why a runtime cannot serve yet. Reason is stable and safe to show to anyone
// (a readiness probe answers it): a fixed word, and for one model its name in the runtime, e.g.
// "triton_unreachable" or "model_not_ready: ppocr_rec". Err holds what happened in detail — server
// messages, addresses — for the log only.
type NotReadyError struct {
	Reason string
	Err    error
}

func (e *NotReadyError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *NotReadyError) Unwrap() error { return e.Err }

// NotReadyReasons returns the Reason of every NotReadyError in err's tree (errors.Join included),
// in order, each once.
func NotReadyReasons(err error) []string {
	var reasons []string
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) { //nolint:errorlint // the walk itself: errors.As stops at the first NotReadyError, this collects every one
		case nil:
		case *NotReadyError:
			if !slices.Contains(reasons, e.Reason) {
				reasons = append(reasons, e.Reason)
			}
		case interface{ Unwrap() []error }:
			for _, u := range e.Unwrap() {
				walk(u)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return reasons
}
