package tritonclient_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
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

// addModel sums and subtracts two vectors: SUM = A + B, DIFF = A - B, with a batch dimension of
// at most 8.
func addModel() tritontest.Model {
	vec := func(name string) *inferencepb.ModelInput {
		return &inferencepb.ModelInput{Name: name, DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{-1}}
	}
	out := func(name string) *inferencepb.ModelOutput {
		return &inferencepb.ModelOutput{Name: name, DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{-1}}
	}
	return tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:         "add",
			Backend:      "go",
			MaxBatchSize: 8,
			Input:        []*inferencepb.ModelInput{vec("A"), vec("B")},
			Output:       []*inferencepb.ModelOutput{out("SUM"), out("DIFF")},
		},
		Run: func(_ context.Context, in []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			a, b := in[0], in[1]
			if len(a.Data) != len(b.Data) {
				return nil, status.Error(codes.InvalidArgument, "A and B differ in shape")
			}
			sum := make([]float32, len(a.Data))
			diff := make([]float32, len(a.Data))
			for i := range a.Data {
				sum[i], diff[i] = a.Data[i]+b.Data[i], a.Data[i]-b.Data[i]
			}
			return []tritonclient.Tensor{
				{Name: "SUM", Shape: a.Shape, Data: sum},
				{Name: "DIFF", Shape: a.Shape, Data: diff},
			}, nil
		},
	}
}

// identityModel returns its input, without a batch dimension: IN and OUT are [2,-1].
func identityModel() tritontest.Model {
	return tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:     "identity",
			Platform: "go",
			Input:    []*inferencepb.ModelInput{{Name: "IN", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{2, -1}}},
			Output:   []*inferencepb.ModelOutput{{Name: "OUT", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{2, -1}}},
		},
		Run: func(_ context.Context, in []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			return []tritonclient.Tensor{{Name: "OUT", Shape: in[0].Shape, Data: in[0].Data}}, nil
		},
	}
}

// int32Model declares an INT32 input, which this client never sends.
func int32Model() tritontest.Model {
	return tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:   "ints",
			Input:  []*inferencepb.ModelInput{{Name: "X", DataType: inferencepb.DataType_TYPE_INT32, Dims: []int64{4}}},
			Output: []*inferencepb.ModelOutput{{Name: "Y", DataType: inferencepb.DataType_TYPE_INT32, Dims: []int64{4}}},
		},
		Run: func(context.Context, []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			return nil, status.Error(codes.Internal, "not reached")
		},
	}
}
