package tritontest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

func stringParam(s string) *inferencepb.InferParameter {
	return &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: s}}
}

func int64Param(n int64) *inferencepb.InferParameter {
	return &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_Int64Param{Int64Param: n}}
}

// shmParams are an output's parameters naming a slice of region.
func shmParams(region string, offset, size int64) map[string]*inferencepb.InferParameter {
	return map[string]*inferencepb.InferParameter{
		"shared_memory_region":    stringParam(region),
		"shared_memory_offset":    int64Param(offset),
		"shared_memory_byte_size": int64Param(size),
	}
}

// scaleRequest asks scaleModel to double [[1,2],[3,4]] into Y, with Y's parameters.
func scaleRequest(params map[string]*inferencepb.InferParameter) *inferencepb.ModelInferRequest {
	return &inferencepb.ModelInferRequest{
		ModelName:        "scale",
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "X", Datatype: "FP32", Shape: []int64{2, 2}}},
		Outputs:          []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "Y", Parameters: params}},
		RawInputContents: [][]byte{raw(1, 2, 3, 4)},
	}
}

// shmServer serves scaleModel with the file "region" (two pages) registered as region "r".
func shmServer(t *testing.T, models ...tritontest.Model) (*tritontest.Server, inferencepb.GRPCInferenceServiceClient, string) {
	t.Helper()
	srv, err := tritontest.Start(append(models, scaleModel())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	dir := t.TempDir()
	srv.SetSharedMemoryDir(dir)
	file := filepath.Join(dir, "region")
	if err := os.WriteFile(file, make([]byte, 2*os.Getpagesize()), 0o600); err != nil {
		t.Fatal(err)
	}
	rpc := stub(t, srv.Addr())
	if _, err := rpc.SystemSharedMemoryRegister(t.Context(), &inferencepb.SystemSharedMemoryRegisterRequest{
		Name: "r", Key: "/region", ByteSize: uint64(2 * os.Getpagesize()),
	}); err != nil {
		t.Fatal(err)
	}
	return srv, rpc, file
}

func TestSharedMemoryOutputs(t *testing.T) {
	checkGoroutines(t)
	srv, rpc, file := shmServer(t)
	size := int64(2 * os.Getpagesize())

	t.Run("written at the offset", func(t *testing.T) {
		resp, err := rpc.ModelInfer(t.Context(), scaleRequest(shmParams("r", 100, 16)))
		if err != nil {
			t.Fatal(err)
		}
		o := resp.GetOutputs()
		if len(o) != 1 || o[0].GetName() != "Y" || o[0].GetDatatype() != "FP32" || len(o[0].GetShape()) != 2 {
			t.Errorf("outputs = %v", o)
		}
		if r := resp.GetRawOutputContents(); len(r) != 1 || len(r[0]) != 0 {
			t.Errorf("raw contents = %v, want one empty entry as Triton sends", r)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if want := raw(2, 4, 6, 8); !bytes.Equal(b[100:116], want) || !bytes.Equal(b[:100], make([]byte, 100)) || !bytes.Equal(b[116:200], make([]byte, 84)) {
			t.Errorf("region bytes 96..120 = %v, want %v at 100", b[96:120], want)
		}
		if n, r := srv.SharedMemoryOutputs(), srv.SharedMemoryRegions(); n != 1 || r != 1 {
			t.Errorf("SharedMemoryOutputs, SharedMemoryRegions = %d, %d; want 1, 1", n, r)
		}
		if _, err := rpc.ModelInfer(t.Context(), scaleRequest(nil)); err != nil {
			t.Fatal(err)
		}
		if n := srv.SharedMemoryOutputs(); n != 1 {
			t.Errorf("SharedMemoryOutputs = %d after an inference over gRPC, want still 1", n)
		}
	})

	refused := []struct {
		name   string
		params map[string]*inferencepb.InferParameter
		code   codes.Code
		msg    string
	}{
		{"unknown region", shmParams("nope", 0, 16), codes.NotFound, "Unable to find shared memory region: 'nope'"},
		{"no byte size", map[string]*inferencepb.InferParameter{"shared_memory_region": stringParam("r")}, codes.InvalidArgument,
			"'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'Y'"},
		{"offset without region", map[string]*inferencepb.InferParameter{"shared_memory_offset": int64Param(0)}, codes.InvalidArgument,
			"'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor 'Y'"},
		{"region not a string", map[string]*inferencepb.InferParameter{"shared_memory_region": int64Param(1), "shared_memory_byte_size": int64Param(16)}, codes.InvalidArgument,
			"invalid value type for 'shared_memory_region' parameter for tensor 'Y', expected string_param."},
		{"byte size not an int64", map[string]*inferencepb.InferParameter{"shared_memory_region": stringParam("r"), "shared_memory_byte_size": stringParam("16")}, codes.InvalidArgument,
			"invalid value type for 'shared_memory_byte_size' parameter for tensor 'Y', expected int64_param."},
		{"offset beyond the region", shmParams("r", size, 16), codes.InvalidArgument, "Invalid offset for shared memory region: 'r'"},
		{"range beyond the region", shmParams("r", size-8, 16), codes.InvalidArgument, "Invalid offset + byte size for shared memory region: 'r'"},
		{"output larger than the byte size", shmParams("r", 0, 8), codes.Internal,
			"shared memory size specified with the request for output 'Y' (8 bytes) should be at least 16 bytes to hold the results"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rpc.ModelInfer(t.Context(), scaleRequest(tt.params))
			if st := status.Convert(err); st.Code() != tt.code || st.Message() != tt.msg {
				t.Errorf("err = %v, want %s %q", err, tt.code, tt.msg)
			}
		})
	}

	t.Run("inputs in shared memory", func(t *testing.T) {
		// X = [[1,2],[3,4]] at offset 256 of the region; Y is written at 512.
		f, err := os.OpenFile(file, os.O_WRONLY, 0) // the file the server maps
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt(raw(1, 2, 3, 4), 256)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		fromSHM := func(params map[string]*inferencepb.InferParameter) *inferencepb.ModelInferRequest {
			req := scaleRequest(shmParams("r", 512, 16))
			req.Inputs[0].Parameters = params
			req.RawInputContents = nil
			return req
		}
		tests := []struct {
			name string
			req  *inferencepb.ModelInferRequest
			code codes.Code
			msg  string
		}{
			{"read at the offset", fromSHM(shmParams("r", 256, 16)), codes.OK, ""},
			{"output over gRPC", func() *inferencepb.ModelInferRequest {
				req := fromSHM(shmParams("r", 256, 16))
				req.Outputs[0].Parameters = nil
				return req
			}(), codes.OK, ""},
			{"unknown region", fromSHM(shmParams("nope", 256, 16)), codes.NotFound, "Unable to find shared memory region: 'nope'"},
			{"negative offset", fromSHM(shmParams("r", -4, 16)), codes.InvalidArgument, "Invalid offset for shared memory region: 'r'"},
			{"offset beyond the region", fromSHM(shmParams("r", size, 16)), codes.InvalidArgument, "Invalid offset for shared memory region: 'r'"},
			{"range beyond the region", fromSHM(shmParams("r", size-8, 16)), codes.InvalidArgument, "Invalid offset + byte size for shared memory region: 'r'"},
			{"byte size too small", fromSHM(shmParams("r", 256, 12)), codes.InvalidArgument,
				"input byte size mismatch for input 'X' for model 'scale'. Expected 16, got 12"},
			{"byte size too large", fromSHM(shmParams("r", 256, 20)), codes.InvalidArgument,
				"input byte size mismatch for input 'X' for model 'scale'. Expected 16, got 20"},
			{"no byte size", fromSHM(map[string]*inferencepb.InferParameter{"shared_memory_region": stringParam("r")}), codes.InvalidArgument,
				"'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'X'"},
			{"raw contents as well", func() *inferencepb.ModelInferRequest {
				req := fromSHM(shmParams("r", 256, 16))
				req.RawInputContents = [][]byte{raw(1, 2, 3, 4)}
				return req
			}(), codes.InvalidArgument, "expected 0 raw_input_contents, one per input not in shared memory, but got 1 for model 'scale'"},
			{"typed contents as well", func() *inferencepb.ModelInferRequest {
				req := fromSHM(shmParams("r", 256, 16))
				req.Inputs[0].Contents = &inferencepb.InferTensorContents{Fp32Contents: []float32{1, 2, 3, 4}}
				return req
			}(), codes.InvalidArgument, "unexpected 'content' provided when using shared memory for input tensor 'X' for model 'scale'"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, err := rpc.ModelInfer(t.Context(), tt.req)
				if st := status.Convert(err); st.Code() != tt.code || st.Message() != tt.msg {
					t.Fatalf("err = %v, want %s %q", err, tt.code, tt.msg)
				}
				if err != nil {
					return
				}
				got := resp.GetRawOutputContents()[0]
				if len(got) == 0 {
					b, err := os.ReadFile(file)
					if err != nil {
						t.Fatal(err)
					}
					got = b[512:528]
				}
				if want := raw(2, 4, 6, 8); !bytes.Equal(got, want) {
					t.Errorf("Y = %v, want %v", got, want)
				}
			})
		}
	})

	t.Run("a stopped server forgets its regions", func(t *testing.T) {
		srv.Stop()
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		// The stub may first try the connection the server closed.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		resp, err := rpc.SystemSharedMemoryStatus(ctx, &inferencepb.SystemSharedMemoryStatusRequest{})
		for status.Code(err) == codes.Unavailable && ctx.Err() == nil {
			resp, err = rpc.SystemSharedMemoryStatus(ctx, &inferencepb.SystemSharedMemoryStatusRequest{}, grpc.WaitForReady(true))
		}
		if err != nil || len(resp.GetRegions()) != 0 {
			t.Errorf("status after restart = %v, %v", resp, err)
		}
		_, err = rpc.ModelInfer(t.Context(), scaleRequest(shmParams("r", 0, 16)))
		if st := status.Convert(err); st.Code() != codes.NotFound || st.Message() != "Unable to find shared memory region: 'r'" {
			t.Errorf("err = %v", err)
		}
	})
}

// blockingIdentity is a model called name that returns its input IN (n values) as OUT. Each call
// closes started once it has its input and then waits until proceed is closed, so a test can act
// while the model holds its input; it serves one call.
func blockingIdentity(name string, n int64) (m tritontest.Model, started, proceed chan struct{}) {
	started, proceed = make(chan struct{}), make(chan struct{})
	m = tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:   name,
			Input:  []*inferencepb.ModelInput{{Name: "IN", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{n}}},
			Output: []*inferencepb.ModelOutput{{Name: "OUT", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{n}}},
		},
		Run: func(ctx context.Context, in []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			close(started)
			<-proceed
			return []tritonclient.Tensor{{Name: "OUT", Shape: in[0].Shape, Data: in[0].Data}}, nil
		},
	}
	return m, started, proceed
}

// TestSharedMemoryUnregisterInFlight unregisters a region while an inference writes into it:
// as in Triton, the region stays mapped until the inference is done.
func TestSharedMemoryUnregisterInFlight(t *testing.T) {
	checkGoroutines(t)
	block, started, proceed := blockingIdentity("block", 1)
	_, rpc, file := shmServer(t, block)
	done := make(chan error)
	go func() {
		_, err := rpc.ModelInfer(context.Background(), &inferencepb.ModelInferRequest{
			ModelName:        "block",
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "FP32", Shape: []int64{1}}},
			Outputs:          []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUT", Parameters: shmParams("r", 0, 4)}},
			RawInputContents: [][]byte{raw(42)},
		})
		done <- err
	}()
	<-started
	if _, err := rpc.SystemSharedMemoryUnregister(t.Context(), &inferencepb.SystemSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:4], raw(42)) {
		t.Errorf("region starts with %v, want %v", b[:4], raw(42))
	}
}

// TestSharedMemoryInputsInPlace: a shared-memory input is read where it lies while the model
// runs, as Triton's CPU backends read it, at an aligned offset; at an unaligned one it is copied.
// Either way the region stays mapped until the model is done, even when it is unregistered
// meanwhile.
func TestSharedMemoryInputsInPlace(t *testing.T) {
	checkGoroutines(t)
	for _, tc := range []struct {
		name    string
		offset  int64
		inPlace bool
	}{
		{"aligned", 8, true},
		{"unaligned", 6, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peek, started, proceed := blockingIdentity("peek", 2)
			_, rpc, file := shmServer(t, peek)
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(raw(1, 2), tc.offset); err != nil {
				t.Fatal(err)
			}
			type result struct {
				resp *inferencepb.ModelInferResponse
				err  error
			}
			done := make(chan result)
			go func() {
				resp, err := rpc.ModelInfer(context.Background(), &inferencepb.ModelInferRequest{
					ModelName: "peek",
					Inputs:    []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "FP32", Shape: []int64{2}, Parameters: shmParams("r", tc.offset, 8)}},
					Outputs:   []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUT"}},
				})
				done <- result{resp, err}
			}()
			<-started
			// The model has its input; change the region under it and take the region away.
			if _, err := f.WriteAt(raw(7, 8), tc.offset); err != nil {
				t.Fatal(err)
			}
			if _, err := rpc.SystemSharedMemoryUnregister(t.Context(), &inferencepb.SystemSharedMemoryUnregisterRequest{Name: "r"}); err != nil {
				t.Fatal(err)
			}
			close(proceed)
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := raw(1, 2)
			if tc.inPlace {
				want = raw(7, 8)
			}
			if got := r.resp.GetRawOutputContents(); len(got) != 1 || !bytes.Equal(got[0], want) {
				t.Errorf("output %v, want %v", got, want)
			}
		})
	}
}
