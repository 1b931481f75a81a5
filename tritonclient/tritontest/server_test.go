package tritontest_test

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

// checkGoroutines fails the test when goroutines started during it outlive it; call it first so
// its cleanup runs last.
func checkGoroutines(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// scaleModel doubles X ([-1,2], batch up to 4) into Y.
func scaleModel() tritontest.Model {
	return tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:         "scale",
			MaxBatchSize: 4,
			Input:        []*inferencepb.ModelInput{{Name: "X", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{2}}},
			Output:       []*inferencepb.ModelOutput{{Name: "Y", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{2}}},
		},
		Run: func(_ context.Context, in []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			y := make([]float32, len(in[0].Data))
			for i, v := range in[0].Data {
				y[i] = 2 * v
			}
			return []tritonclient.Tensor{{Name: "Y", Shape: in[0].Shape, Data: y}}, nil
		},
	}
}

// stub returns a raw generated client, so tests can send what tritonclient never would.
func stub(t *testing.T, addr string) inferencepb.GRPCInferenceServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return inferencepb.NewGRPCInferenceServiceClient(conn)
}

func raw(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func TestModelInferValidation(t *testing.T) {
	checkGoroutines(t)
	srv, err := tritontest.Start(scaleModel())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	rpc := stub(t, srv.Addr())
	x := func(shape ...int64) *inferencepb.ModelInferRequest_InferInputTensor {
		return &inferencepb.ModelInferRequest_InferInputTensor{Name: "X", Datatype: "FP32", Shape: shape}
	}
	typed := func(in *inferencepb.ModelInferRequest_InferInputTensor, v ...float32) *inferencepb.ModelInferRequest_InferInputTensor {
		in.Contents = &inferencepb.InferTensorContents{Fp32Contents: v}
		return in
	}
	tests := []struct {
		name string
		req  *inferencepb.ModelInferRequest
		code codes.Code
		msg  string
		want []float32 // Y, when the call succeeds
	}{
		{
			name: "raw contents",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 2)}, RawInputContents: [][]byte{raw(1, 2)}},
			want: []float32{2, 4},
		},
		{
			name: "typed contents",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{typed(x(2, 2), 1, 2, 3, 4)}},
			want: []float32{2, 4, 6, 8},
		},
		{
			name: "mixed raw and typed contents",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{typed(x(1, 2), 1, 2)}, RawInputContents: [][]byte{raw(1, 2)}},
			code: codes.InvalidArgument, msg: "contents field must not be specified when using raw_input_contents",
		},
		{
			name: "raw byte size",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 2)}, RawInputContents: [][]byte{raw(1, 2, 3)}},
			code: codes.InvalidArgument, msg: "unexpected total byte size 12 for input 'X', expecting 8",
		},
		{
			name: "raw count",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 2)}, RawInputContents: [][]byte{raw(1, 2), raw(1, 2)}},
			code: codes.InvalidArgument, msg: "raw_input_contents",
		},
		{
			name: "typed count",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{typed(x(1, 2), 1)}},
			code: codes.InvalidArgument, msg: "expecting 2",
		},
		{
			name: "no data",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 2)}},
			code: codes.InvalidArgument, msg: "unable to find data for input tensor 'X' for model 'scale' in request.",
		},
		{
			name: "fixed dimension",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 3)}, RawInputContents: [][]byte{raw(1, 2, 3)}},
			code: codes.InvalidArgument, msg: "unexpected shape for input 'X' for model 'scale'. Expected [-1,2], got [1,3]",
		},
		{
			name: "zero batch",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(0, 2)}, RawInputContents: [][]byte{{}}},
			code: codes.InvalidArgument, msg: "batch-size must be <= 4",
		},
		{
			name: "duplicate input",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 2), x(1, 2)}, RawInputContents: [][]byte{raw(1, 2), raw(1, 2)}},
			code: codes.InvalidArgument, msg: "more than once",
		},
		{
			name: "datatype",
			req: &inferencepb.ModelInferRequest{ModelName: "scale", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
				{Name: "X", Datatype: "FP64", Shape: []int64{1, 2}},
			}, RawInputContents: [][]byte{make([]byte, 16)}},
			code: codes.InvalidArgument, msg: "data-type is 'FP64', but model 'scale' expects 'FP32'",
		},
		{
			name: "unknown version",
			req:  &inferencepb.ModelInferRequest{ModelName: "scale", ModelVersion: "3", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{x(1, 2)}, RawInputContents: [][]byte{raw(1, 2)}},
			code: codes.NotFound, msg: "Request for unknown model: 'scale' version 3 is not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := rpc.ModelInfer(t.Context(), tt.req)
			if tt.code != codes.OK {
				st := status.Convert(err)
				if st.Code() != tt.code || !strings.Contains(st.Message(), tt.msg) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.code, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Like Triton, the answer always uses raw contents, one entry per output.
			if len(resp.GetOutputs()) != 1 || len(resp.GetRawOutputContents()) != 1 || resp.GetOutputs()[0].GetContents() != nil {
				t.Fatalf("response = %v", resp)
			}
			if got := resp.GetRawOutputContents()[0]; !slices.Equal(got, raw(tt.want...)) {
				t.Errorf("Y = % x, want % x", got, raw(tt.want...))
			}
			if resp.GetModelName() != "scale" || resp.GetModelVersion() != "1" {
				t.Errorf("model %q version %q", resp.GetModelName(), resp.GetModelVersion())
			}
		})
	}
}

func TestModelVersionNotReady(t *testing.T) {
	checkGoroutines(t)
	srv, err := tritontest.Start(scaleModel())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.SetModelReady("scale", false)
	_, err = stub(t, srv.Addr()).ModelMetadata(t.Context(), &inferencepb.ModelMetadataRequest{Name: "scale", Version: "1"})
	if st := status.Convert(err); st.Code() != codes.Unavailable || st.Message() != "Request for unknown model: 'scale' version 1 is not at ready state" {
		t.Errorf("err = %v", err)
	}
}

func TestDelayHonoursContext(t *testing.T) {
	checkGoroutines(t)
	srv, err := tritontest.Start(scaleModel())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.SetDelay(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = stub(t, srv.Addr()).ModelInfer(ctx, &inferencepb.ModelInferRequest{
		ModelName:        "scale",
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "X", Datatype: "FP32", Shape: []int64{1, 2}}},
		RawInputContents: [][]byte{raw(1, 2)},
	})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	// Stop returns only when the delayed handler has returned (checked by checkGoroutines).
}

func TestStartAndRestartErrors(t *testing.T) {
	checkGoroutines(t)
	run := scaleModel().Run
	tests := []struct {
		name   string
		models []tritontest.Model
		msg    string
	}{
		{"no config", []tritontest.Model{{Run: run}}, "needs a Config with a name"},
		{"no run", []tritontest.Model{{Config: scaleModel().Config}}, "has no Run"},
		{"twice", []tritontest.Model{scaleModel(), scaleModel()}, "given twice"},
		{"no outputs", []tritontest.Model{{Config: &inferencepb.ModelConfig{Name: "m", Input: scaleModel().Config.Input}, Run: run}}, "needs inputs and outputs"},
		{"invalid type", []tritontest.Model{{Config: &inferencepb.ModelConfig{
			Name:   "m",
			Input:  []*inferencepb.ModelInput{{Name: "X"}},
			Output: scaleModel().Config.Output,
		}, Run: run}}, "valid data_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := tritontest.Start(tt.models...)
			if err == nil {
				srv.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %q", err, tt.msg)
			}
		})
	}
	t.Run("restart while running", func(t *testing.T) {
		srv, err := tritontest.Start(scaleModel())
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		if err := srv.Restart(); err == nil {
			t.Error("Restart of a running server succeeded")
		}
		srv.Stop()
		srv.Stop() // a second Stop does nothing
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		if _, err := stub(t, srv.Addr()).ServerLive(t.Context(), &inferencepb.ServerLiveRequest{}); err != nil {
			t.Errorf("ServerLive after Restart: %v", err)
		}
	})
}
