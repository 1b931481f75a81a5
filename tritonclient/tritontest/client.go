package tritontest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// What the tests of a Triton client need beside the server: one each for the tests of the client
// itself and for those of the pipeline's models served by it (internal/ppocrtest).

// StartServer starts a test server that stops when the test ends.
func StartServer(t testing.TB, models ...Model) *Server {
	t.Helper()
	srv, err := Start(models...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// NewClient connects to addr and closes the client when the test ends, failing the test if Close
// does.
func NewClient(t testing.TB, addr string, opt tritonclient.Options) *tritonclient.Client {
	t.Helper()
	c, err := tritonclient.New(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// sentinels are every error the client wraps; each failure must match exactly one.
var sentinels = []error{
	tritonclient.ErrUnavailable, tritonclient.ErrTimeout, tritonclient.ErrModelNotFound,
	tritonclient.ErrInvalidTensor, tritonclient.ErrTooLarge, tritonclient.ErrCanceled, tritonclient.ErrSharedMemory,
	tritonclient.ErrServer,
}

// CheckErr fails the test unless err matches want and no other of the client's sentinel errors,
// and its text contains msg.
func CheckErr(t testing.TB, err, want error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	for _, s := range sentinels {
		if errors.Is(err, s) != errors.Is(s, want) {
			t.Errorf("errors.Is(%q, %v) = %v", err, s, errors.Is(err, s))
		}
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not contain %q", err, msg)
	}
}

// WireLog records what each ModelInfer call of a client put on the wire; install Intercept as the
// client's unary interceptor.
type WireLog struct {
	mu    sync.Mutex
	calls []WireCall
}

// WireCall is what one ModelInfer call put on the wire.
type WireCall struct {
	Shared   bool       // the request asked for an output in shared memory
	RawIn    bool       // it did, but sent its inputs in raw_input_contents
	Mixed    bool       // it sent inputs both ways, which Triton misreads; never wanted
	RawBytes int        // raw output bytes in the response
	Code     codes.Code // the call's status
}

// ViaSHM is a call whose inputs were read from and outputs written to shared memory.
var ViaSHM = WireCall{Shared: true}

// Intercept is a grpc.UnaryClientInterceptor that logs ModelInfer calls.
func (l *WireLog) Intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	r, ok := req.(*inferencepb.ModelInferRequest)
	if !ok {
		return err
	}
	call := WireCall{Code: status.Code(err)}
	for _, o := range r.GetOutputs() {
		if _, ok := o.GetParameters()["shared_memory_region"]; ok {
			call.Shared = true
		}
	}
	inShared := 0
	for _, in := range r.GetInputs() {
		if _, ok := in.GetParameters()["shared_memory_region"]; ok {
			inShared++
		}
	}
	call.RawIn = call.Shared && inShared == 0
	call.Mixed = inShared > 0 && (len(r.GetRawInputContents()) > 0 || inShared < len(r.GetInputs()) || !call.Shared)
	if err == nil {
		for _, b := range reply.(*inferencepb.ModelInferResponse).GetRawOutputContents() {
			call.RawBytes += len(b)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
	return err
}

// Take returns the calls logged since the last Take.
func (l *WireLog) Take() []WireCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	calls := l.calls
	l.calls = nil
	return calls
}

// Check fails the test unless the calls logged since the last Take are want.
func (l *WireLog) Check(t testing.TB, want ...WireCall) {
	t.Helper()
	if got := l.Take(); !slices.Equal(got, want) {
		t.Errorf("ModelInfer calls = %+v, want %+v", got, want)
	}
}
