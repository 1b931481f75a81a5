package tritonclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestTranslate(t *testing.T) {
	sentinels := []error{ErrUnavailable, ErrTimeout, ErrModelNotFound, ErrInvalidTensor, ErrTooLarge, ErrCanceled, ErrServer}
	tests := []struct {
		name   string
		err    error
		want   error
		alsoIs error // a standard error the result must match too
	}{
		{"unavailable", status.Error(codes.Unavailable, "connection refused"), ErrUnavailable, nil},
		{"server not ready", status.Error(codes.Unavailable, "Server not ready"), ErrUnavailable, nil},
		{"deadline", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), ErrTimeout, context.DeadlineExceeded},
		{"canceled", status.Error(codes.Canceled, "context canceled"), ErrCanceled, context.Canceled},
		{"not found", status.Error(codes.NotFound, "Request for unknown model: 'm' is not found"), ErrModelNotFound, nil},
		{"unknown model as invalid argument", status.Error(codes.InvalidArgument, "Request for unknown model: 'm' is not found"), ErrModelNotFound, nil},
		{"version not ready", status.Error(codes.Unavailable, "Request for unknown model: 'm' version 1 is not at ready state"), ErrModelNotFound, nil},
		{"bad shape", status.Error(codes.InvalidArgument, "unexpected shape for input 'x'"), ErrInvalidTensor, nil},
		{"too large", status.Error(codes.ResourceExhausted, "grpc: received message larger than max"), ErrTooLarge, nil},
		{"internal", status.Error(codes.Internal, "onnx runtime error"), ErrServer, nil},
		{"unimplemented", status.Error(codes.Unimplemented, "unknown method"), ErrServer, nil},
		{"unknown code", status.Error(codes.Unknown, "boom"), ErrServer, nil},
		{"plain deadline", fmt.Errorf("wait: %w", context.DeadlineExceeded), ErrTimeout, context.DeadlineExceeded},
		{"plain cancel", context.Canceled, ErrCanceled, context.Canceled},
		{"plain other", errors.New("bad bytes"), ErrServer, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := translate("ModelInfer", "m", tt.err)
			for _, s := range sentinels {
				if is := errors.Is(got, s); is != errors.Is(s, tt.want) {
					t.Errorf("errors.Is(%v, %v) = %v", got, s, is)
				}
			}
			if tt.alsoIs != nil && !errors.Is(got, tt.alsoIs) {
				t.Errorf("errors.Is(%v, %v) = false", got, tt.alsoIs)
			}
			if st, ok := status.FromError(tt.err); ok && !strings.Contains(got.Error(), st.Message()) {
				t.Errorf("%q lacks the server's message %q", got, st.Message())
			}
			if !strings.Contains(got.Error(), "ModelInfer m") {
				t.Errorf("%q does not name the call", got)
			}
			if _, ok := status.FromError(got); ok {
				t.Errorf("%v still carries a gRPC status", got)
			}
		})
	}
}
