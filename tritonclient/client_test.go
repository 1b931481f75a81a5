package tritonclient_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

func TestInferRoundTrip(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel(), identityModel())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})

	a := tritonclient.Tensor{Name: "A", Shape: []int64{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}}
	b := tritonclient.Tensor{Name: "B", Datatype: tritonclient.FP32, Shape: []int64{2, 3}, Data: []float32{0.5, -2, 0, 1e-7, 5, 1e30}}
	sum := []float32{1.5, 0, 3, 4 + 1e-7, 10, 1e30}
	diff := []float32{0.5, 4, 3, 4 - 1e-7, 0, -1e30}
	tests := []struct {
		name    string
		model   string
		inputs  []tritonclient.Tensor
		outputs []string
		want    []tritonclient.Tensor
	}{
		{
			name:   "all outputs",
			model:  "add",
			inputs: []tritonclient.Tensor{a, b},
			want: []tritonclient.Tensor{
				{Name: "SUM", Datatype: "FP32", Shape: []int64{2, 3}, Data: sum},
				{Name: "DIFF", Datatype: "FP32", Shape: []int64{2, 3}, Data: diff},
			},
		},
		{
			name:    "requested output only",
			model:   "add",
			inputs:  []tritonclient.Tensor{b, a}, // the order of inputs does not matter
			outputs: []string{"DIFF"},
			want:    []tritonclient.Tensor{{Name: "DIFF", Datatype: "FP32", Shape: []int64{2, 3}, Data: diff}},
		},
		{
			name:    "requested order",
			model:   "add",
			inputs:  []tritonclient.Tensor{a, b},
			outputs: []string{"DIFF", "SUM"},
			want: []tritonclient.Tensor{
				{Name: "DIFF", Datatype: "FP32", Shape: []int64{2, 3}, Data: diff},
				{Name: "SUM", Datatype: "FP32", Shape: []int64{2, 3}, Data: sum},
			},
		},
		{
			name:    "empty variable dimension",
			model:   "add",
			inputs:  []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 0}}, {Name: "B", Shape: []int64{1, 0}}},
			outputs: []string{"SUM"},
			want:    []tritonclient.Tensor{{Name: "SUM", Datatype: "FP32", Shape: []int64{1, 0}, Data: []float32{}}},
		},
		{
			name:   "no batch dimension",
			model:  "identity",
			inputs: []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 2}, Data: []float32{1, 2, 3, 4}}},
			want:   []tritonclient.Tensor{{Name: "OUT", Datatype: "FP32", Shape: []int64{2, 2}, Data: []float32{1, 2, 3, 4}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Infer(t.Context(), tt.model, tt.inputs, tt.outputs...)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d outputs, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Name != w.Name || g.Datatype != w.Datatype || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
					t.Errorf("output %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestInferErrors(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel(), int32Model())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	zeros := func(name string, shape ...int64) tritonclient.Tensor {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		return tritonclient.Tensor{Name: name, Shape: shape, Data: make([]float32, n)}
	}
	ab := []tritonclient.Tensor{zeros("A", 1, 3), zeros("B", 1, 3)}
	tests := []struct {
		name    string
		model   string
		inputs  []tritonclient.Tensor
		outputs []string
		setup   func() (undo func())
		want    error
		msg     string
		local   bool // refused by the client, no call made
	}{
		{name: "unknown model", model: "nope", inputs: ab,
			want: tritonclient.ErrModelNotFound, msg: "Request for unknown model: 'nope' is not found"},
		{name: "wrong rank", model: "add", inputs: []tritonclient.Tensor{zeros("A", 1, 3, 1), zeros("B", 1, 3)},
			want: tritonclient.ErrInvalidTensor, msg: "unexpected shape for input 'A' for model 'add'. Expected [-1,-1], got [1,3,1]"},
		{name: "batch above max_batch_size", model: "add", inputs: []tritonclient.Tensor{zeros("A", 9, 1), zeros("B", 9, 1)},
			want: tritonclient.ErrInvalidTensor, msg: "batch-size must be <= 8"},
		{name: "unknown input", model: "add", inputs: []tritonclient.Tensor{zeros("A", 1, 3), zeros("C", 1, 3)},
			want: tritonclient.ErrInvalidTensor, msg: "unexpected inference input 'C' for model 'add'"},
		{name: "missing input", model: "add", inputs: ab[:1],
			want: tritonclient.ErrInvalidTensor, msg: "expected 2 inputs but got 1 inputs"},
		{name: "unknown output", model: "add", inputs: ab, outputs: []string{"PROD"},
			want: tritonclient.ErrInvalidTensor, msg: "unexpected inference output 'PROD'"},
		{name: "datatype", model: "ints", inputs: []tritonclient.Tensor{zeros("X", 4)},
			want: tritonclient.ErrInvalidTensor, msg: "data-type is 'FP32', but model 'ints' expects 'INT32'"},
		{name: "model rejects inputs", model: "add", inputs: []tritonclient.Tensor{zeros("A", 1, 2), zeros("B", 1, 3)},
			want: tritonclient.ErrInvalidTensor, msg: "A and B differ in shape"},
		{name: "data does not fill shape", model: "add", inputs: []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 3}, Data: []float32{1}}, ab[1]},
			want: tritonclient.ErrInvalidTensor, msg: "holds 3 values, got 1", local: true},
		{name: "non-FP32 input", model: "add", inputs: []tritonclient.Tensor{{Name: "A", Datatype: "INT32", Shape: []int64{1}, Data: []float32{1}}},
			want: tritonclient.ErrInvalidTensor, msg: "only FP32", local: true},
		{name: "model not ready", model: "add", inputs: ab,
			setup: func() func() { srv.SetModelReady("add", false); return func() { srv.SetModelReady("add", true) } },
			want:  tritonclient.ErrModelNotFound, msg: "'add' has no available versions"},
		{name: "server not ready", model: "add", inputs: ab,
			setup: func() func() { srv.SetServerReady(false); return func() { srv.SetServerReady(true) } },
			want:  tritonclient.ErrUnavailable, msg: "Server not ready"},
		{name: "backend failure", model: "add", inputs: ab,
			setup: func() func() {
				srv.FailInfer(codes.Internal, "onnx runtime exploded")
				return func() { srv.FailInfer(codes.OK, "") }
			},
			want: tritonclient.ErrServer, msg: "onnx runtime exploded"},
		{name: "server size limit", model: "add", inputs: ab,
			setup: func() func() {
				srv.FailInfer(codes.ResourceExhausted, "message larger than max")
				return func() { srv.FailInfer(codes.OK, "") }
			},
			want: tritonclient.ErrTooLarge, msg: "message larger than max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				t.Cleanup(tt.setup())
			}
			before := srv.Calls("ModelInfer")
			_, err := c.Infer(t.Context(), tt.model, tt.inputs, tt.outputs...)
			tritontest.CheckErr(t, err, tt.want, tt.msg)
			wantCalls := 1
			if tt.local {
				wantCalls = 0
			}
			if got := srv.Calls("ModelInfer") - before; got != wantCalls {
				t.Errorf("%d ModelInfer calls reached the server, want %d", got, wantCalls)
			}
		})
	}
}

func TestInferTimeoutAndCancel(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	srv.SetDelay(time.Minute) // every inference outlasts the deadlines below
	ab := []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 1}, Data: []float32{1}}, {Name: "B", Shape: []int64{1, 1}, Data: []float32{2}}}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name   string
		opt    tritonclient.Options
		ctx    func(t *testing.T) context.Context
		want   error
		stdErr error
	}{
		{
			name: "caller's deadline",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			want: tritonclient.ErrTimeout, stdErr: context.DeadlineExceeded,
		},
		{
			name: "default timeout when ctx has none",
			opt:  tritonclient.Options{Timeout: 100 * time.Millisecond},
			ctx:  func(*testing.T) context.Context { return context.Background() },
			want: tritonclient.ErrTimeout, stdErr: context.DeadlineExceeded,
		},
		{
			name: "canceled",
			ctx:  func(*testing.T) context.Context { return canceled },
			want: tritonclient.ErrCanceled, stdErr: context.Canceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tritontest.NewClient(t, srv.Addr(), tt.opt)
			start := time.Now()
			_, err := c.Infer(tt.ctx(t), "add", ab)
			tritontest.CheckErr(t, err, tt.want, "")
			if !errors.Is(err, tt.stdErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.stdErr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("call took %v despite its deadline", d)
			}
		})
	}
}

func TestInferAfterClose(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	c, err := tritonclient.New(srv.Addr(), tritonclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = c.Infer(t.Context(), "add", []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 1}, Data: []float32{1}}})
	tritontest.CheckErr(t, err, tritonclient.ErrCanceled, "closing")
}

func TestResponseTooLarge(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{MaxRecvBytes: 4 << 10})
	n := 2048 // two outputs of 8 KiB each
	in := []tritonclient.Tensor{
		{Name: "A", Shape: []int64{1, int64(n)}, Data: make([]float32, n)},
		{Name: "B", Shape: []int64{1, int64(n)}, Data: make([]float32, n)},
	}
	_, err := c.Infer(t.Context(), "add", in)
	tritontest.CheckErr(t, err, tritonclient.ErrTooLarge, "larger than max")

	// The limit applies to what comes back, not to what is sent: a small answer still works.
	if _, err := c.Infer(t.Context(), "add", []tritonclient.Tensor{
		{Name: "A", Shape: []int64{1, 1}, Data: []float32{1}},
		{Name: "B", Shape: []int64{1, 1}, Data: []float32{1}},
	}); err != nil {
		t.Fatal(err)
	}
}

// TestLargeTensors sends and receives messages well above grpc-go's 4 MiB default, as a
// recognizer batch does.
func TestLargeTensors(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	n := 3 << 19 // 6 MiB per tensor
	a := make([]float32, n)
	for i := range a {
		a[i] = float32(i)
	}
	out, err := c.Infer(t.Context(), "add", []tritonclient.Tensor{
		{Name: "A", Shape: []int64{1, int64(n)}, Data: a},
		{Name: "B", Shape: []int64{1, int64(n)}, Data: a},
	}, "SUM")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, n/2 + 7, n - 1} {
		if out[0].Data[i] != 2*a[i] {
			t.Fatalf("SUM[%d] = %v, want %v", i, out[0].Data[i], 2*a[i])
		}
	}
}

func TestUnavailable(t *testing.T) {
	checkGoroutines(t)
	// A port nobody listens on: New succeeds (it does not connect eagerly), calls fail.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	c := tritontest.NewClient(t, addr, tritonclient.Options{Retries: 1, RetryBackoff: time.Millisecond})
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"Infer", func(ctx context.Context) error {
			_, err := c.Infer(ctx, "add", []tritonclient.Tensor{{Name: "A", Shape: []int64{1}, Data: []float32{1}}})
			return err
		}},
		{"ServerLive", func(ctx context.Context) error { _, err := c.ServerLive(ctx); return err }},
		{"ServerReady", func(ctx context.Context) error { _, err := c.ServerReady(ctx); return err }},
		{"ModelReady", func(ctx context.Context) error { _, err := c.ModelReady(ctx, "add", ""); return err }},
		{"ModelMetadata", func(ctx context.Context) error { _, err := c.ModelMetadata(ctx, "add", ""); return err }},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			tritontest.CheckErr(t, tt.call(ctx), tritonclient.ErrUnavailable, "")
		})
	}
}

func TestRestartRecovery(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	ab := []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 1}, Data: []float32{1}}, {Name: "B", Shape: []int64{1, 1}, Data: []float32{2}}}
	infer := func() error {
		out, err := c.Infer(t.Context(), "add", ab, "SUM")
		if err == nil && out[0].Data[0] != 3 {
			t.Fatalf("SUM = %v, want 3", out[0].Data)
		}
		return err
	}
	if err := infer(); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	tritontest.CheckErr(t, infer(), tritonclient.ErrUnavailable, "")

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The same client reconnects by itself; wait for it through the API callers use.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		ready, err := c.ServerReady(ctx)
		if ready {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("client did not see the restarted server: ready=%v err=%v", ready, err)
		}
	}
	if err := infer(); err != nil {
		t.Fatalf("Infer after restart: %v", err)
	}
}

func TestRetry(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	ab := []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 1}, Data: []float32{1}}, {Name: "B", Shape: []int64{1, 1}, Data: []float32{2}}}
	tests := []struct {
		name      string
		rpc       string
		code      codes.Code
		failures  int
		retries   int
		call      func(context.Context, *tritonclient.Client) error
		want      error // nil: the call succeeds
		wantCalls int
	}{
		{name: "ServerReady recovers", rpc: "ServerReady", code: codes.Unavailable, failures: 2, retries: 3,
			call: func(ctx context.Context, c *tritonclient.Client) error {
				ready, err := c.ServerReady(ctx)
				if err == nil && !ready {
					return errors.New("not ready")
				}
				return err
			},
			wantCalls: 3},
		{name: "ModelMetadata recovers", rpc: "ModelMetadata", code: codes.Unavailable, failures: 1, retries: 3,
			call: func(ctx context.Context, c *tritonclient.Client) error {
				_, err := c.ModelMetadata(ctx, "add", "")
				return err
			},
			wantCalls: 2},
		{name: "retries run out", rpc: "ServerLive", code: codes.Unavailable, failures: 5, retries: 2,
			call: func(ctx context.Context, c *tritonclient.Client) error {
				_, err := c.ServerLive(ctx)
				return err
			},
			want: tritonclient.ErrUnavailable, wantCalls: 3},
		{name: "retries off", rpc: "ServerReady", code: codes.Unavailable, failures: 1, retries: -1,
			call: func(ctx context.Context, c *tritonclient.Client) error {
				_, err := c.ServerReady(ctx)
				return err
			},
			want: tritonclient.ErrUnavailable, wantCalls: 1},
		{name: "only Unavailable is retried", rpc: "ModelConfig", code: codes.Internal, failures: 1, retries: 3,
			call: func(ctx context.Context, c *tritonclient.Client) error {
				_, err := c.ModelConfig(ctx, "add", "")
				return err
			},
			want: tritonclient.ErrServer, wantCalls: 1},
		{name: "Infer is never retried", rpc: "ModelInfer", code: codes.Unavailable, failures: 1, retries: 3,
			call: func(ctx context.Context, c *tritonclient.Client) error {
				_, err := c.Infer(ctx, "add", ab)
				return err
			},
			want: tritonclient.ErrUnavailable, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{Retries: tt.retries, RetryBackoff: time.Millisecond})
			srv.Fail(tt.rpc, tt.code, "injected", tt.failures)
			t.Cleanup(func() { srv.Fail(tt.rpc, codes.OK, "", 0) })
			before := srv.Calls(tt.rpc)
			err := tt.call(t.Context(), c)
			if tt.want == nil && err != nil {
				t.Fatal(err)
			}
			if tt.want != nil {
				tritontest.CheckErr(t, err, tt.want, "injected")
			}
			if got := srv.Calls(tt.rpc) - before; got != tt.wantCalls {
				t.Errorf("%d %s calls, want %d", got, tt.rpc, tt.wantCalls)
			}
		})
	}
}

// TestRetryAcrossOutage stops the server, lets ServerReady fail once against the closed port,
// restarts the server and expects the same ServerReady call to succeed on a later attempt.
func TestRetryAcrossOutage(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	var (
		once     sync.Once
		failed   = make(chan struct{})
		mu       sync.Mutex
		attempts int
	)
	noticeFailure := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if strings.HasSuffix(method, "/ServerReady") {
			mu.Lock()
			attempts++
			mu.Unlock()
			if err != nil {
				once.Do(func() { close(failed) })
			}
		}
		return err
	}
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{
		Retries:      50,
		RetryBackoff: 10 * time.Millisecond,
		Timeout:      20 * time.Second,
		DialOptions:  []grpc.DialOption{grpc.WithChainUnaryInterceptor(noticeFailure)},
	})
	if ready, err := c.ServerReady(t.Context()); err != nil || !ready {
		t.Fatalf("ServerReady before the outage = %v, %v", ready, err)
	}
	srv.Stop()
	mu.Lock()
	attempts = 0
	mu.Unlock()

	restarted := make(chan error, 1)
	go func() {
		<-failed
		restarted <- srv.Restart()
	}()
	ready, err := c.ServerReady(t.Context())
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if err != nil || !ready {
		t.Fatalf("ServerReady across the outage = %v, %v", ready, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if attempts < 2 {
		t.Errorf("ServerReady succeeded after %d attempts; the outage was not exercised", attempts)
	}
}

func TestReadiness(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel(), identityModel())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{Retries: -1})
	type state struct{ live, serverReady, addReady, identityReady, unknownReady bool }
	tests := []struct {
		name    string
		setup   func()
		want    state
		wantErr error // for ModelReady, when the server is not ready
	}{
		{name: "all ready", setup: func() {}, want: state{true, true, true, true, false}},
		{name: "model loading", setup: func() { srv.SetModelReady("add", false) }, want: state{true, false, false, true, false}},
		{name: "model back", setup: func() { srv.SetModelReady("add", true) }, want: state{true, true, true, true, false}},
		{name: "server not ready", setup: func() { srv.SetServerReady(false) }, want: state{live: true}, wantErr: tritonclient.ErrUnavailable},
		{name: "server back", setup: func() { srv.SetServerReady(true) }, want: state{true, true, true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			ctx := t.Context()
			var got state
			var err error
			if got.live, err = c.ServerLive(ctx); err != nil {
				t.Fatal(err)
			}
			if got.serverReady, err = c.ServerReady(ctx); err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				name string
				dst  *bool
			}{{"add", &got.addReady}, {"identity", &got.identityReady}, {"unknown", &got.unknownReady}} {
				*m.dst, err = c.ModelReady(ctx, m.name, "")
				if tt.wantErr != nil {
					tritontest.CheckErr(t, err, tt.wantErr, "Server not ready")
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if got != tt.want {
				t.Errorf("state = %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("versions", func(t *testing.T) {
		for _, v := range []struct {
			version string
			ready   bool
		}{{"", true}, {"1", true}, {"2", false}} {
			if got, err := c.ModelReady(t.Context(), "add", v.version); err != nil || got != v.ready {
				t.Errorf("ModelReady(add, %q) = %v, %v; want %v", v.version, got, err, v.ready)
			}
		}
	})
}

func TestMetadataAndConfig(t *testing.T) {
	checkGoroutines(t)
	add, identity := addModel(), identityModel()
	srv := tritontest.StartServer(t, add, identity)
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	ctx := t.Context()

	sm, err := c.ServerMetadata(ctx)
	if err != nil || sm.Name == "" || !slices.Contains(sm.Extensions, "system_shared_memory") {
		t.Errorf("ServerMetadata = %+v, %v", sm, err)
	}

	tests := []struct {
		model  string
		want   tritonclient.ModelMetadata
		config *inferencepb.ModelConfig
	}{
		{
			model: "add",
			want: tritonclient.ModelMetadata{
				Name: "add", Versions: []string{"1"}, Platform: "go",
				Inputs:  []tritonclient.TensorMetadata{{Name: "A", Datatype: "FP32", Shape: []int64{-1, -1}}, {Name: "B", Datatype: "FP32", Shape: []int64{-1, -1}}},
				Outputs: []tritonclient.TensorMetadata{{Name: "SUM", Datatype: "FP32", Shape: []int64{-1, -1}}, {Name: "DIFF", Datatype: "FP32", Shape: []int64{-1, -1}}},
			},
			config: add.Config,
		},
		{
			model: "identity", // no batch dimension: shapes are the config's dims
			want: tritonclient.ModelMetadata{
				Name: "identity", Versions: []string{"1"}, Platform: "go",
				Inputs:  []tritonclient.TensorMetadata{{Name: "IN", Datatype: "FP32", Shape: []int64{2, -1}}},
				Outputs: []tritonclient.TensorMetadata{{Name: "OUT", Datatype: "FP32", Shape: []int64{2, -1}}},
			},
			config: identity.Config,
		},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			md, err := c.ModelMetadata(ctx, tt.model, "")
			if err != nil {
				t.Fatal(err)
			}
			equal := func(a, b []tritonclient.TensorMetadata) bool {
				return slices.EqualFunc(a, b, func(x, y tritonclient.TensorMetadata) bool {
					return x.Name == y.Name && x.Datatype == y.Datatype && slices.Equal(x.Shape, y.Shape)
				})
			}
			if md.Name != tt.want.Name || md.Platform != tt.want.Platform || !slices.Equal(md.Versions, tt.want.Versions) ||
				!equal(md.Inputs, tt.want.Inputs) || !equal(md.Outputs, tt.want.Outputs) {
				t.Errorf("ModelMetadata = %+v, want %+v", md, tt.want)
			}
			if in, ok := md.Input(tt.want.Inputs[0].Name); !ok || in.Name != tt.want.Inputs[0].Name {
				t.Errorf("Input(%q) = %+v, %v", tt.want.Inputs[0].Name, in, ok)
			}
			if _, ok := md.Output("missing"); ok {
				t.Error(`Output("missing") found something`)
			}
			cfg, err := c.ModelConfig(ctx, tt.model, "")
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(cfg, tt.config) {
				t.Errorf("ModelConfig = %v, want %v", cfg, tt.config)
			}
		})
	}

	t.Run("unknown model", func(t *testing.T) {
		_, err := c.ModelMetadata(ctx, "nope", "")
		tritontest.CheckErr(t, err, tritonclient.ErrModelNotFound, "'nope' is not found")
		_, err = c.ModelConfig(ctx, "add", "7")
		tritontest.CheckErr(t, err, tritonclient.ErrModelNotFound, "'add' version 7 is not found")
	})

	t.Run("statistics", func(t *testing.T) {
		for range 3 {
			if _, err := c.Infer(ctx, "add", []tritonclient.Tensor{
				{Name: "A", Shape: []int64{2, 1}, Data: []float32{1, 2}},
				{Name: "B", Shape: []int64{2, 1}, Data: []float32{1, 2}},
			}); err != nil {
				t.Fatal(err)
			}
		}
		stats, err := c.ModelStatistics(ctx, "add", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 1 || stats[0].GetName() != "add" || stats[0].GetExecutionCount() != 3 || stats[0].GetInferenceCount() != 6 ||
			stats[0].GetInferenceStats().GetSuccess().GetCount() != 3 {
			t.Errorf("ModelStatistics(add) = %v", stats)
		}
		all, err := c.ModelStatistics(ctx, "", "")
		if err != nil || len(all) != 2 {
			t.Errorf("ModelStatistics() = %v, %v; want both models", all, err)
		}
	})
}

func TestSystemSharedMemory(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	dir := t.TempDir()
	srv.SetSharedMemoryDir(dir)
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	ctx := t.Context()
	page := uint64(os.Getpagesize())
	for name, size := range map[string]int64{"ocrgate_input": 1 << 20, "ocrgate_output": int64(2 * page)} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	in := tritonclient.SharedMemoryRegion{Name: "input", Key: "/ocrgate_input", ByteSize: 1 << 20}
	out := tritonclient.SharedMemoryRegion{Name: "output", Key: "/ocrgate_output", Offset: page, ByteSize: page}
	for _, r := range []tritonclient.SharedMemoryRegion{out, in} {
		if err := c.RegisterSystemSharedMemory(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	refused := []struct {
		name   string
		region tritonclient.SharedMemoryRegion
		msg    string
	}{
		{"name taken", in, "shared memory region 'input' already in manager"},
		{"no such key", tritonclient.SharedMemoryRegion{Name: "x", Key: "/missing", ByteSize: 1}, "Unable to open shared memory region: '/missing'"},
		{"beyond the file", tritonclient.SharedMemoryRegion{Name: "x", Key: "/ocrgate_output", Offset: page, ByteSize: page + 1}, "failed to register shared memory region 'x': invalid args"},
		{"offset not page-aligned", tritonclient.SharedMemoryRegion{Name: "x", Key: "/ocrgate_output", Offset: 64, ByteSize: 64}, "failed to register shared memory region 'x': unable to process address space"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			tritontest.CheckErr(t, c.RegisterSystemSharedMemory(ctx, tt.region), tritonclient.ErrSharedMemory, tt.msg)
		})
	}

	regions, err := c.SystemSharedMemoryStatus(ctx, "")
	if err != nil || !slices.Equal(regions, []tritonclient.SharedMemoryRegion{in, out}) {
		t.Errorf("status = %+v, %v; want %+v", regions, err, []tritonclient.SharedMemoryRegion{in, out})
	}
	if err := c.UnregisterSystemSharedMemory(ctx, "input"); err != nil {
		t.Fatal(err)
	}
	regions, err = c.SystemSharedMemoryStatus(ctx, "output")
	if err != nil || !slices.Equal(regions, []tritonclient.SharedMemoryRegion{out}) {
		t.Errorf("status(output) = %+v, %v", regions, err)
	}
	if regions, err := c.SystemSharedMemoryStatus(ctx, "input"); err != nil || len(regions) != 0 {
		t.Errorf("status(input) after unregistering it = %+v, %v", regions, err)
	}
	if err := c.UnregisterSystemSharedMemory(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if regions, err := c.SystemSharedMemoryStatus(ctx, ""); err != nil || len(regions) != 0 {
		t.Errorf("status after unregistering all = %+v, %v", regions, err)
	}
}

// TestConcurrentInfer shares one client between goroutines, as the service does.
func TestConcurrentInfer(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			v := float32(i)
			out, err := c.Infer(t.Context(), "add", []tritonclient.Tensor{
				{Name: "A", Shape: []int64{1, 1}, Data: []float32{v}},
				{Name: "B", Shape: []int64{1, 1}, Data: []float32{v}},
			}, "SUM")
			if err == nil && out[0].Data[0] != 2*v {
				err = errors.New("wrong sum")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := srv.Calls("ModelInfer"); got != 16 {
		t.Errorf("%d ModelInfer calls, want 16", got)
	}
}
