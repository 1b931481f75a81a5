// Package tritontest is an in-process KServe v2 gRPC server for tests: a test double for Triton
// Inference Server. ocrgate never uses it at run time.
//
// A Server listens on a loopback TCP port and serves the RPCs of inferencepb's
// GRPCInferenceService over real gRPC, so tests exercise the same transport, limits and error
// paths as production. It runs models given as Go functions, including ocrgate's own models on
// the embedded ONNX Runtime (see ONNXModels), and it behaves like Triton where a client can tell
// the difference: requests are validated against each model's configuration (names, datatypes,
// shapes without the batch dimension, -1 for any size, max_batch_size, raw byte sizes, no mixing
// of raw and typed contents), unknown models and models that are not ready are answered with
// Triton's codes and messages, only the requested outputs come back, always as
// raw_output_contents, readiness is strict (the server is ready only when every model is), and
// metadata reports the batch dimension as -1.
//
// System shared memory works as in Triton for outputs: SystemSharedMemoryRegister opens and maps
// the client's file (looked up in SetSharedMemoryDir's directory, /dev/shm by default), with
// Triton's errors for a key it cannot open, a name already registered and a range beyond the
// file; ModelInfer writes each output that names a region into it, answering for it with shape
// and datatype but an empty raw entry, and fails with Triton's codes and messages for an unknown
// region, a range outside it, or an output larger than its byte size. Inputs in shared memory
// are not supported (UNIMPLEMENTED). Like an exiting Triton, a stopped server forgets and
// unmaps every region.
//
// Tests control it with Stop and Restart (an outage and recovery on the same address),
// SetServerReady and SetModelReady, SetDelay (slow inferences), FailInfer and Fail (injected
// errors), and read what happened with Calls. All methods are safe for concurrent use. Models
// must be FP32 in and out: the double carries tensors as tritonclient.Tensor.
package tritontest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// Model is one model the server serves, as version "1".
type Model struct {
	// Config is the model's configuration, as in its config.pbtxt. Name is required.
	Config *inferencepb.ModelConfig
	// Run computes the outputs for validated inputs, given in the config's input order with the
	// batch dimension first when the model batches. The inputs' data may be the request's own
	// bytes or a client's shared memory, as in Triton: Run must not change it, nor keep it (an
	// output may be an input's slice) past its return. It must honour ctx and return every output
	// of the config (the server drops the ones not requested). An error that is a gRPC status
	// is passed to the client as is; any other error becomes INTERNAL.
	Run func(ctx context.Context, inputs []tritonclient.Tensor) ([]tritonclient.Tensor, error)
}

// Server is a running test server.
type Server struct {
	addr string

	mu         sync.Mutex
	gs         *grpc.Server  // nil while stopped
	served     chan struct{} // closed when the current Serve returns
	models     map[string]*model
	order      []string // model names, in the order given to Start
	notReady   bool     // SetServerReady(false)
	delay      time.Duration
	failures   map[string]failure // by RPC name
	calls      map[string]int
	shmDir     string
	shmRegions map[string]*shmRegion // by name
	shmOutputs int                   // outputs written into shared-memory regions
}

type model struct {
	Model
	ready bool
	stats inferencepb.ModelStatistics
}

type failure struct {
	st    *status.Status
	count int // calls left to fail; negative: until cleared
}

// Start serves models on a new loopback port.
func Start(models ...Model) (*Server, error) {
	return Listen("127.0.0.1:0", models...)
}

// Listen serves models on addr ("host:port"; port 0 picks a free one), e.g. ":8001" to stand in
// for a Triton that other containers reach over the network.
func Listen(addr string, models ...Model) (*Server, error) {
	s := &Server{
		models:     make(map[string]*model, len(models)),
		failures:   make(map[string]failure),
		calls:      make(map[string]int),
		shmDir:     DefaultSharedMemoryDir,
		shmRegions: make(map[string]*shmRegion),
	}
	for _, m := range models {
		if err := checkModel(m); err != nil {
			return nil, err
		}
		name := m.Config.GetName()
		if _, dup := s.models[name]; dup {
			return nil, fmt.Errorf("tritontest: model %q given twice", name)
		}
		m.Config = proto.CloneOf(m.Config)
		s.models[name] = &model{Model: m, ready: true}
		s.order = append(s.order, name)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tritontest: listen: %w", err)
	}
	s.addr = lis.Addr().String()
	s.serve(lis)
	return s, nil
}

func checkModel(m Model) error {
	c := m.Config
	switch {
	case c == nil || c.GetName() == "":
		return errors.New("tritontest: a model needs a Config with a name")
	case m.Run == nil:
		return fmt.Errorf("tritontest: model %q has no Run", c.GetName())
	case c.GetMaxBatchSize() < 0:
		return fmt.Errorf("tritontest: model %q: negative max_batch_size", c.GetName())
	case len(c.GetInput()) == 0 || len(c.GetOutput()) == 0:
		return fmt.Errorf("tritontest: model %q needs inputs and outputs", c.GetName())
	}
	for _, in := range c.GetInput() {
		if in.GetName() == "" || wireType(in.GetDataType()) == "" {
			return fmt.Errorf("tritontest: model %q: input %q needs a name and a valid data_type", c.GetName(), in.GetName())
		}
	}
	for _, out := range c.GetOutput() {
		if out.GetName() == "" || wireType(out.GetDataType()) == "" {
			return fmt.Errorf("tritontest: model %q: output %q needs a name and a valid data_type", c.GetName(), out.GetName())
		}
	}
	return nil
}

// serve starts a gRPC server on lis. The caller holds s.mu or has not shared s yet.
func (s *Server) serve(lis net.Listener) {
	gs := grpc.NewServer(
		grpc.ChainUnaryInterceptor(s.intercept),
		// Triton accepts messages up to 2 GiB (MAX_GRPC_MESSAGE_SIZE = INT32_MAX); grpc-go's server
		// default would refuse anything over 4 MiB.
		grpc.MaxRecvMsgSize(math.MaxInt32),
		grpc.MaxSendMsgSize(math.MaxInt32),
		// Large flow-control windows, as a production server tuned for tensors would have, so
		// loopback measurements show the protocol's cost rather than window-update stalls.
		grpc.InitialWindowSize(1<<30),
		grpc.InitialConnWindowSize(1<<30),
		grpc.ReadBufferSize(1<<20),
		grpc.WriteBufferSize(1<<20),
		// Triton's (gRPC core's) defaults: pings at most every 5 minutes, none without calls.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Minute}),
		// Stop waits for handlers, so no goroutine outlives it.
		grpc.WaitForHandlers(true),
	)
	inferencepb.RegisterGRPCInferenceServiceServer(gs, &service{s: s})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gs.Serve(lis) // returns when Stop closes the listener
	}()
	s.gs, s.served = gs, served
}

// Addr is the server's "host:port".
func (s *Server) Addr() string { return s.addr }

// Stop closes the listener and every connection, cancelling calls in flight, and returns once
// their handlers have returned. Clients see ErrUnavailable until Restart. Like a Triton process
// that exits, it forgets (and unmaps) every shared-memory region. Stopping a stopped server does
// nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	gs, served := s.gs, s.served
	s.gs, s.served = nil, nil
	s.mu.Unlock()
	if gs == nil {
		return
	}
	gs.Stop()
	<-served
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.shmRegions {
		s.unregister(name)
	}
}

// Restart serves again on the same address after Stop, keeping models, readiness, injected
// failures, counters and the shared-memory directory; shared-memory registrations are gone, as
// in a restarted Triton.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gs != nil {
		return errors.New("tritontest: Restart while running")
	}
	lis, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("tritontest: listen again on %s: %w", s.addr, err)
	}
	s.serve(lis)
	return nil
}

// SetServerReady makes ServerReady, ModelReady, ModelMetadata, ModelConfig and ModelInfer answer
// as Triton does while it is not ready (UNAVAILABLE "Server not ready", or ready=false).
func (s *Server) SetServerReady(ready bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notReady = !ready
}

// SetModelReady marks a model ready or not, as while Triton loads or unloads it.
func (s *Server) SetModelReady(name string, ready bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.models[name]; ok {
		m.ready = ready
	}
}

// SetDelay makes every ModelInfer wait d before running the model; a call whose context ends
// first fails with its context's code.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// FailInfer makes every ModelInfer fail with code and msg until FailInfer(codes.OK, "").
func (s *Server) FailInfer(code codes.Code, msg string) { s.Fail("ModelInfer", code, msg, -1) }

// Fail makes the next n calls of rpc (a method name such as "ServerReady") fail with code and
// msg; n < 0 means until cleared with codes.OK. Failed calls are counted by Calls.
func (s *Server) Fail(rpc string, code codes.Code, msg string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == codes.OK || n == 0 {
		delete(s.failures, rpc)
		return
	}
	s.failures[rpc] = failure{st: status.New(code, msg), count: n}
}

// Calls reports how many calls of rpc (a method name such as "ModelInfer") reached the server.
func (s *Server) Calls(rpc string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[rpc]
}

// SharedMemoryRegions reports how many system shared-memory regions are registered now.
func (s *Server) SharedMemoryRegions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shmRegions)
}

// SharedMemoryOutputs reports how many outputs successful inferences wrote into shared-memory
// regions rather than into their responses.
func (s *Server) SharedMemoryOutputs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shmOutputs
}

// intercept counts calls and applies injected failures.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	rpc := methodName(info.FullMethod)
	s.mu.Lock()
	s.calls[rpc]++
	f, failing := s.failures[rpc]
	if failing && f.count > 0 {
		if f.count--; f.count == 0 {
			delete(s.failures, rpc)
		} else {
			s.failures[rpc] = f
		}
	}
	s.mu.Unlock()
	if failing {
		return nil, f.st.Err()
	}
	return handler(ctx, req)
}

func methodName(full string) string {
	for i := len(full) - 1; i >= 0; i-- {
		if full[i] == '/' {
			return full[i+1:]
		}
	}
	return full
}
