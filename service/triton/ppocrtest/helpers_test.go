package ppocrtest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

// checkGoroutines fails the test when goroutines started during it outlive it. Call it first, so
// its cleanup runs after every other (servers stopped, clients closed); goleak retries while gRPC
// closes its connections asynchronously.
func checkGoroutines(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// startServer starts a test server that stops when the test ends.
func startServer(t *testing.T, models ...tritontest.Model) *tritontest.Server {
	t.Helper()
	srv, err := tritontest.Start(models...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// newClient connects to addr and closes the client when the test ends.
func newClient(t *testing.T, addr string, opt tritonclient.Options) *tritonclient.Client {
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

// checkErr fails unless err matches want and no other sentinel, and its text contains msg.
func checkErr(t *testing.T, err, want error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	for _, s := range sentinels {
		if errors.Is(err, s) != (s == want) {
			t.Errorf("errors.Is(%q, %v) = %v", err, s, errors.Is(err, s))
		}
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not contain %q", err, msg)
	}
}

// wireLog records what each ModelInfer call of a client put on the wire.
type wireLog struct {
	mu    sync.Mutex
	calls []wireCall
}

type wireCall struct {
	shared   bool       // the request asked for an output in shared memory
	rawIn    bool       // it did, but sent its inputs in raw_input_contents
	mixed    bool       // it sent inputs both ways, which Triton misreads; never wanted
	rawBytes int        // raw output bytes in the response
	code     codes.Code // the call's status
}

func (l *wireLog) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	r, ok := req.(*inferencepb.ModelInferRequest)
	if !ok {
		return err
	}
	call := wireCall{code: status.Code(err)}
	for _, o := range r.GetOutputs() {
		if _, ok := o.GetParameters()["shared_memory_region"]; ok {
			call.shared = true
		}
	}
	inShared := 0
	for _, in := range r.GetInputs() {
		if _, ok := in.GetParameters()["shared_memory_region"]; ok {
			inShared++
		}
	}
	call.rawIn = call.shared && inShared == 0
	call.mixed = inShared > 0 && (len(r.GetRawInputContents()) > 0 || inShared < len(r.GetInputs()) || !call.shared)
	if err == nil {
		for _, b := range reply.(*inferencepb.ModelInferResponse).GetRawOutputContents() {
			call.rawBytes += len(b)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
	return err
}

// take returns the calls logged since the last take.
func (l *wireLog) take() []wireCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	calls := l.calls
	l.calls = nil
	return calls
}

// viaSHM is a call whose inputs were read from and outputs written to shared memory.
var viaSHM = wireCall{shared: true}

// checkCalls compares a client's logged inferences with want.
func checkCalls(t *testing.T, log *wireLog, want ...wireCall) {
	t.Helper()
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("ModelInfer calls = %+v, want %+v", got, want)
	}
}

// shmClient returns a client with shared memory configured by shm in a new directory, logging its
// inferences; the directory must be empty again once the client is closed.
func shmClient(t *testing.T, addr string, shm tritonclient.SharedMemoryOptions) (*tritonclient.Client, *wireLog, string) {
	t.Helper()
	shm.Dir = t.TempDir()
	dir := shm.Dir
	t.Cleanup(func() { // after the client's Close
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			t.Errorf("%d files left in %s after Close", len(entries), dir)
		}
	})
	log := &wireLog{}
	opt := tritonclient.Options{SharedMemory: shm, DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(log.intercept)}}
	return newClient(t, addr, opt), log, dir
}

// ocrgateHome is where scripts/fetch_models.sh installs the models and ONNX Runtime.
func ocrgateHome(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("OCRGATE_HOME"); h != "" {
		return h
	}
	h, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(h, ".ocrgate")
}
