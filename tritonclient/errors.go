package tritonclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The errors a Client's calls wrap. Each error returned by a call matches exactly one of them
// with errors.Is and carries the server's message in its text.
var (
	// ErrUnavailable means the server could not be reached or is not serving (not started,
	// restarting, shutting down, not ready). The call may succeed later.
	ErrUnavailable = errors.New("triton unavailable")
	// ErrTimeout means the call's deadline passed. Errors wrapping it also match
	// context.DeadlineExceeded.
	ErrTimeout = errors.New("triton call timed out")
	// ErrModelNotFound means the server does not serve the model (or that version of it), or
	// the model is not ready.
	ErrModelNotFound = errors.New("triton model not found or not ready")
	// ErrInvalidTensor means the request does not fit the model: an unknown tensor name, a wrong
	// datatype or shape, a batch above max_batch_size, or data that does not match the shape.
	ErrInvalidTensor = errors.New("invalid tensor for triton model")
	// ErrTooLarge means a message exceeded a size limit, usually a response larger than
	// Options.MaxRecvBytes.
	ErrTooLarge = errors.New("triton message too large")
	// ErrCanceled means the caller's ctx was canceled, or the Client was closed, before the call
	// finished. Errors wrapping it also match context.Canceled.
	ErrCanceled = errors.New("triton call canceled")
	// ErrSharedMemory means a shared-memory region could not be set up: it could not be
	// created, or the server refused to register it (it cannot open the key from another host
	// or IPC namespace, Triton runs without --allow-client-shm=true, the name is taken, or the
	// server lacks the system_shared_memory extension). Infer returns it only in SharedMemoryOn
	// mode; in auto mode the same failure is the reason for falling back to gRPC
	// (Client.SharedMemoryError).
	ErrSharedMemory = errors.New("triton shared memory unusable")
	// ErrServer is any other failure: the model failed to run, the server hit an internal
	// error, or it answered with something this package cannot read.
	ErrServer = errors.New("triton server error")
)

// unknownModelPrefix starts the messages of Triton's model lookup, whatever status code comes
// with them: NOT_FOUND for an unknown model or one with no ready version, INVALID_ARG when model
// namespacing is on, and UNAVAILABLE for a named version that is not ready (and for every
// lookup failure in older releases).
const unknownModelPrefix = "Request for unknown model"

// translate turns a gRPC error into one wrapping this package's sentinels. op names the call
// and model the model, when there is one.
func translate(op, model string, err error) error {
	where := op
	if model != "" {
		where = op + " " + model
	}
	st, ok := status.FromError(err)
	if !ok {
		// Not from gRPC: a context error of our own, or a decoding problem.
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("triton %s: %w: %w", where, ErrTimeout, err)
		case errors.Is(err, context.Canceled):
			return fmt.Errorf("triton %s: %w: %w", where, ErrCanceled, err)
		}
		return fmt.Errorf("triton %s: %w: %w", where, ErrServer, err)
	}
	msg := st.Message()
	switch st.Code() {
	case codes.DeadlineExceeded:
		return fmt.Errorf("triton %s: %w (%w): %s", where, ErrTimeout, context.DeadlineExceeded, msg)
	case codes.Canceled:
		return fmt.Errorf("triton %s: %w (%w): %s", where, ErrCanceled, context.Canceled, msg)
	case codes.NotFound:
		return fmt.Errorf("triton %s: %w: %s", where, ErrModelNotFound, msg)
	case codes.Unavailable:
		if strings.Contains(msg, unknownModelPrefix) {
			return fmt.Errorf("triton %s: %w: %s", where, ErrModelNotFound, msg)
		}
		return fmt.Errorf("triton %s: %w: %s", where, ErrUnavailable, msg)
	case codes.InvalidArgument:
		if strings.Contains(msg, unknownModelPrefix) {
			return fmt.Errorf("triton %s: %w: %s", where, ErrModelNotFound, msg)
		}
		return fmt.Errorf("triton %s: %w: %s", where, ErrInvalidTensor, msg)
	case codes.ResourceExhausted:
		return fmt.Errorf("triton %s: %w: %s", where, ErrTooLarge, msg)
	default:
		return fmt.Errorf("triton %s: %w: %s: %s", where, ErrServer, st.Code(), msg)
	}
}
