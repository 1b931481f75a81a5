package tritonclient

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

func TestFP32Codec(t *testing.T) {
	values := []float32{0, 1, -1.5, float32(math.Inf(1)), math.SmallestNonzeroFloat32, math.MaxFloat32, float32(math.NaN())}
	b := encodeFP32(values)
	if len(b) != 4*len(values) {
		t.Fatalf("len = %d, want %d", len(b), 4*len(values))
	}
	// Little-endian IEEE 754: 1.0 is 0x3f800000.
	if got := binary.LittleEndian.Uint32(b[4:]); got != 0x3f800000 {
		t.Errorf("1.0 encoded as %#x", got)
	}
	if b[4] != 0x00 || b[7] != 0x3f {
		t.Errorf("1.0 bytes % x are not little-endian", b[4:8])
	}
	back := decodeFP32(b)
	for i := range values {
		if math.Float32bits(back[i]) != math.Float32bits(values[i]) {
			t.Errorf("value %d: %v came back as %v", i, values[i], back[i])
		}
	}
}

func TestNewInferRequest(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		inputs  []Tensor
		wantErr string // "" for success
	}{
		{"ok", "m", []Tensor{{Name: "x", Shape: []int64{2, 2}, Data: []float32{1, 2, 3, 4}}}, ""},
		{"explicit FP32", "m", []Tensor{{Name: "x", Datatype: "FP32", Shape: []int64{1}, Data: []float32{1}}}, ""},
		{"empty tensor", "m", []Tensor{{Name: "x", Shape: []int64{0, 3}}}, ""},
		{"no model", "", []Tensor{{Name: "x", Shape: []int64{1}, Data: []float32{1}}}, "empty model name"},
		{"no inputs", "m", nil, "no inputs"},
		{"no name", "m", []Tensor{{Shape: []int64{1}, Data: []float32{1}}}, "no name"},
		{"other datatype", "m", []Tensor{{Name: "x", Datatype: "INT32", Shape: []int64{1}, Data: []float32{1}}}, "only FP32"},
		{"short data", "m", []Tensor{{Name: "x", Shape: []int64{2, 2}, Data: []float32{1, 2, 3}}}, "holds 4 values, got 3"},
		{"negative dim", "m", []Tensor{{Name: "x", Shape: []int64{-1, 2}, Data: []float32{1, 2}}}, "negative"},
		{"overflow", "m", []Tensor{{Name: "x", Shape: []int64{1 << 40, 1 << 40}}}, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := newInferRequest(tt.model, tt.inputs, []string{"y"})
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidTensor) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrInvalidTensor with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(req.GetInputs()) != len(tt.inputs) || len(req.GetRawInputContents()) != len(tt.inputs) {
				t.Fatalf("%d inputs and %d raw contents for %d tensors", len(req.GetInputs()), len(req.GetRawInputContents()), len(tt.inputs))
			}
			for i, in := range req.GetInputs() {
				if in.GetDatatype() != FP32 || in.GetContents() != nil || !slices.Equal(in.GetShape(), tt.inputs[i].Shape) {
					t.Errorf("input %d = %v", i, in)
				}
				if got := decodeFP32(req.GetRawInputContents()[i]); !slices.Equal(got, tt.inputs[i].Data) {
					t.Errorf("input %d raw = %v, want %v", i, got, tt.inputs[i].Data)
				}
			}
			if len(req.GetOutputs()) != 1 || req.GetOutputs()[0].GetName() != "y" {
				t.Errorf("requested outputs = %v", req.GetOutputs())
			}
		})
	}
}

func TestDecodeOutputs(t *testing.T) {
	out := func(name, datatype string, shape ...int64) *inferencepb.ModelInferResponse_InferOutputTensor {
		return &inferencepb.ModelInferResponse_InferOutputTensor{Name: name, Datatype: datatype, Shape: shape}
	}
	typed := func(o *inferencepb.ModelInferResponse_InferOutputTensor, v ...float32) *inferencepb.ModelInferResponse_InferOutputTensor {
		o.Contents = &inferencepb.InferTensorContents{Fp32Contents: v}
		return o
	}
	raw := func(v ...float32) []byte { return encodeFP32(v) }
	region := raw(7, 8, 9, 10)
	tests := []struct {
		name    string
		resp    *inferencepb.ModelInferResponse
		want    []string          // requested
		shared  map[string][]byte // outputs in shared memory
		got     []Tensor
		wantErr string
	}{
		{
			name: "shared memory, as Triton answers",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 1, 2), out("b", "FP32", 1), out("c", "FP32", 0)},
				RawOutputContents: [][]byte{{}, raw(3), {}},
			},
			want:   []string{"a", "b", "c"},
			shared: map[string][]byte{"a": region[8:], "c": region},
			got:    []Tensor{{"a", FP32, []int64{1, 2}, []float32{9, 10}}, {"b", FP32, []int64{1}, []float32{3}}, {"c", FP32, []int64{0}, []float32{}}},
		},
		{
			name:   "shared memory, no raw contents at all",
			resp:   &inferencepb.ModelInferResponse{Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 3)}},
			want:   []string{"a"},
			shared: map[string][]byte{"a": region},
			got:    []Tensor{{"a", FP32, []int64{3}, []float32{7, 8, 9}}},
		},
		{
			name: "shared memory ignored by the server: raw contents win",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 1)},
				RawOutputContents: [][]byte{raw(5)},
			},
			want:   []string{"a"},
			shared: map[string][]byte{"a": region},
			got:    []Tensor{{"a", FP32, []int64{1}, []float32{5}}},
		},
		{
			name:   "shared memory ignored by the server: typed contents win",
			resp:   &inferencepb.ModelInferResponse{Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{typed(out("a", "FP32", 1), 6)}},
			want:   []string{"a"},
			shared: map[string][]byte{"a": region},
			got:    []Tensor{{"a", FP32, []int64{1}, []float32{6}}},
		},
		{
			name:    "shared memory slice too small for the shape",
			resp:    &inferencepb.ModelInferResponse{Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 5)}},
			want:    []string{"a"},
			shared:  map[string][]byte{"a": region},
			wantErr: `output "a": shape [5] needs 20 bytes, its shared-memory slice holds 16`,
		},
		{
			name: "raw, all outputs",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 1, 2), out("b", "FP32", 1)},
				RawOutputContents: [][]byte{raw(1, 2), raw(3)},
			},
			got: []Tensor{{"a", FP32, []int64{1, 2}, []float32{1, 2}}, {"b", FP32, []int64{1}, []float32{3}}},
		},
		{
			name: "raw, requested order",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 1), out("b", "FP32", 1)},
				RawOutputContents: [][]byte{raw(1), raw(2)},
			},
			want: []string{"b", "a"},
			got:  []Tensor{{"b", FP32, []int64{1}, []float32{2}}, {"a", FP32, []int64{1}, []float32{1}}},
		},
		{
			name: "typed contents",
			resp: &inferencepb.ModelInferResponse{
				Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{typed(out("a", "FP32", 3), 1, 2, 3)},
			},
			got: []Tensor{{"a", FP32, []int64{3}, []float32{1, 2, 3}}},
		},
		{
			name: "empty output",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 0, 5)},
				RawOutputContents: [][]byte{{}},
			},
			got: []Tensor{{"a", FP32, []int64{0, 5}, []float32{}}},
		},
		{
			name: "raw count mismatch",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 1), out("b", "FP32", 1)},
				RawOutputContents: [][]byte{raw(1)},
			},
			wantErr: "2 outputs but 1 raw contents",
		},
		{
			name: "raw byte length",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 2)},
				RawOutputContents: [][]byte{raw(1, 2)[:7]},
			},
			wantErr: "needs 8 bytes, got 7",
		},
		{
			name: "typed length",
			resp: &inferencepb.ModelInferResponse{
				Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{typed(out("a", "FP32", 2), 1)},
			},
			wantErr: "needs 2 values, got 1",
		},
		{
			name: "other datatype",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "INT64", 1)},
				RawOutputContents: [][]byte{make([]byte, 8)},
			},
			wantErr: `output "a" is INT64; only FP32`,
		},
		{
			name: "negative dimension",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", -1)},
				RawOutputContents: [][]byte{raw(1)},
			},
			wantErr: "negative",
		},
		{
			name: "missing requested output",
			resp: &inferencepb.ModelInferResponse{
				Outputs:           []*inferencepb.ModelInferResponse_InferOutputTensor{out("a", "FP32", 1)},
				RawOutputContents: [][]byte{raw(1)},
			},
			want:    []string{"b"},
			wantErr: `lacks requested output "b"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeOutputs(tt.resp, tt.want, tt.shared)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.got) {
				t.Fatalf("got %d tensors, want %d", len(got), len(tt.got))
			}
			for i := range got {
				g, w := got[i], tt.got[i]
				if g.Name != w.Name || g.Datatype != w.Datatype || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
					t.Errorf("tensor %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	shmDefaults := SharedMemoryOptions{Mode: SharedMemoryOff, RegionBytes: DefaultSharedMemoryRegionBytes, Regions: DefaultSharedMemoryRegions, Dir: DefaultSharedMemoryDir}
	tests := []struct {
		name string
		in   Options
		want Options
	}{
		{"zero", Options{}, Options{Timeout: DefaultTimeout, MaxRecvBytes: DefaultMaxRecvBytes, Retries: DefaultRetries, RetryBackoff: DefaultRetryBackoff, SharedMemory: shmDefaults}},
		{"no retries", Options{Retries: -1}, Options{Timeout: DefaultTimeout, MaxRecvBytes: DefaultMaxRecvBytes, Retries: 0, RetryBackoff: DefaultRetryBackoff, SharedMemory: shmDefaults}},
		{
			"kept",
			Options{Timeout: 1, MaxRecvBytes: 2, Retries: 3, RetryBackoff: 4, SharedMemory: SharedMemoryOptions{Mode: SharedMemoryAuto, RegionBytes: 5, Regions: 6, Dir: "/tmp"}},
			Options{Timeout: 1, MaxRecvBytes: 2, Retries: 3, RetryBackoff: 4, SharedMemory: SharedMemoryOptions{Mode: SharedMemoryAuto, RegionBytes: 5, Regions: 6, Dir: "/tmp"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.withDefaults()
			if got.Timeout != tt.want.Timeout || got.MaxRecvBytes != tt.want.MaxRecvBytes || got.Retries != tt.want.Retries || got.RetryBackoff != tt.want.RetryBackoff || !sameSHM(got.SharedMemory, tt.want.SharedMemory) {
				t.Errorf("withDefaults() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// sameSHM compares shared-memory options but for OnFallback, a function.
func sameSHM(a, b SharedMemoryOptions) bool {
	return a.Mode == b.Mode && a.RegionBytes == b.RegionBytes && a.Regions == b.Regions && a.Dir == b.Dir
}
