package tritonclient

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// FP32 is the wire datatype of float32 tensors, the only kind this package sends and reads.
const FP32 = "FP32"

// Tensor is a named dense tensor in row-major order. Shape includes the batch dimension when the
// model batches.
type Tensor struct {
	Name string
	// Datatype is the wire datatype. Only FP32 is supported; an empty Datatype on an input means
	// FP32.
	Datatype string
	Shape    []int64
	Data     []float32
}

// Infer runs model (its latest version) on inputs and returns the outputs named in outputs, in
// that order, or every output the model has, in the server's order, when none are named.
//
// Inputs travel as raw little-endian bytes (raw_input_contents), which the protocol recommends
// for speed. With Options.SharedMemory on or auto, a call that names its outputs and finds a
// free region copies its inputs into that region (unless they would leave the outputs no room),
// has the server read them and write the outputs there, and copies the outputs out; the
// returned tensors never refer to the region. Otherwise outputs are read from raw_output_contents, which
// Triton always uses, or from typed fp32_contents, which other KServe servers may send. Infer is
// never retried, except when the server has forgotten a shared-memory region (it restarted),
// which it reports before running the model, and when the outputs do not fit their region,
// which sends the call again over gRPC. On ErrUnavailable or ErrTimeout the server may or may
// not have run the model.
func (c *Client) Infer(ctx context.Context, model string, inputs []Tensor, outputs ...string) ([]Tensor, error) {
	req, err := newInferRequest(model, inputs, outputs)
	if err != nil {
		return nil, fmt.Errorf("triton ModelInfer %s: %w", model, err)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if c.shm != nil && len(outputs) > 0 {
		raw := req.RawInputContents
		out, done, err := c.inferShared(ctx, req, outputs)
		if done {
			return out, err
		}
		unshare(req, raw)
	}
	resp, err := c.rpc.ModelInfer(ctx, req)
	if err != nil {
		return nil, translate("ModelInfer", model, err)
	}
	out, err := decodeOutputs(resp, outputs, nil)
	if err != nil {
		return nil, fmt.Errorf("triton ModelInfer %s: %w: %w", model, ErrServer, err)
	}
	return out, nil
}

// newInferRequest checks the inputs and encodes them. A mistake found here is the caller's, so
// it wraps ErrInvalidTensor without a round trip.
func newInferRequest(model string, inputs []Tensor, outputs []string) (*inferencepb.ModelInferRequest, error) {
	if model == "" {
		return nil, fmt.Errorf("%w: empty model name", ErrInvalidTensor)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no inputs", ErrInvalidTensor)
	}
	req := &inferencepb.ModelInferRequest{
		ModelName:        model,
		Inputs:           make([]*inferencepb.ModelInferRequest_InferInputTensor, len(inputs)),
		RawInputContents: make([][]byte, len(inputs)),
	}
	for i, in := range inputs {
		if in.Name == "" {
			return nil, fmt.Errorf("%w: input %d has no name", ErrInvalidTensor, i)
		}
		if in.Datatype != "" && in.Datatype != FP32 {
			return nil, fmt.Errorf("%w: input %q is %s; only %s is supported", ErrInvalidTensor, in.Name, in.Datatype, FP32)
		}
		n, err := elements(in.Shape)
		if err != nil {
			return nil, fmt.Errorf("%w: input %q: %w", ErrInvalidTensor, in.Name, err)
		}
		if n != len(in.Data) {
			return nil, fmt.Errorf("%w: input %q: shape %v holds %d values, got %d", ErrInvalidTensor, in.Name, in.Shape, n, len(in.Data))
		}
		req.Inputs[i] = &inferencepb.ModelInferRequest_InferInputTensor{
			Name:     in.Name,
			Datatype: FP32,
			Shape:    in.Shape,
		}
		req.RawInputContents[i] = encodeFP32(in.Data)
	}
	for _, name := range outputs {
		req.Outputs = append(req.Outputs, &inferencepb.ModelInferRequest_InferRequestedOutputTensor{Name: name})
	}
	return req, nil
}

// decodeOutputs reads a response, checking everything it relies on: one raw entry per output
// (when raw contents are used), FP32 datatypes, byte lengths that match the shapes, and the
// presence of every requested output. shared holds the slice of a shared-memory region each
// output was asked to be written to, by name; Triton then sends an empty raw entry for it. The
// values are copied out of the region. An output that comes with data anyway (from a server that
// ignored the request) is read from the response.
func decodeOutputs(resp *inferencepb.ModelInferResponse, want []string, shared map[string][]byte) ([]Tensor, error) {
	outs := resp.GetOutputs()
	raw := resp.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(outs) {
		return nil, fmt.Errorf("response has %d outputs but %d raw contents", len(outs), len(raw))
	}
	decoded := make([]Tensor, len(outs))
	for i, o := range outs {
		if o.GetDatatype() != FP32 {
			return nil, fmt.Errorf("output %q is %s; only %s is supported", o.GetName(), o.GetDatatype(), FP32)
		}
		n, err := elements(o.GetShape())
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", o.GetName(), err)
		}
		region, inRegion := shared[o.GetName()]
		var data []float32
		switch {
		case len(raw) > 0 && (len(raw[i]) > 0 || !inRegion):
			if len(raw[i]) != 4*n {
				return nil, fmt.Errorf("output %q: shape %v needs %d bytes, got %d", o.GetName(), o.GetShape(), 4*n, len(raw[i]))
			}
			data = decodeFP32(raw[i])
		case inRegion && len(o.GetContents().GetFp32Contents()) == 0:
			if 4*n > len(region) {
				return nil, fmt.Errorf("output %q: shape %v needs %d bytes, its shared-memory slice holds %d", o.GetName(), o.GetShape(), 4*n, len(region))
			}
			data = copyFP32(region[:4*n])
		default:
			data = o.GetContents().GetFp32Contents()
			if len(data) != n {
				return nil, fmt.Errorf("output %q: shape %v needs %d values, got %d", o.GetName(), o.GetShape(), n, len(data))
			}
		}
		decoded[i] = Tensor{Name: o.GetName(), Datatype: FP32, Shape: o.GetShape(), Data: data}
	}
	if len(want) == 0 {
		return decoded, nil
	}
	picked := make([]Tensor, len(want))
	for i, name := range want {
		found := false
		for _, t := range decoded {
			if t.Name == name {
				picked[i], found = t, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("response lacks requested output %q", name)
		}
	}
	return picked, nil
}

// maxElements keeps byte sizes (4 per element) within an int on every platform and far above
// any message gRPC can carry (2 GiB).
const maxElements = math.MaxInt32 / 4

// elements is the number of values a shape holds.
func elements(shape []int64) (int, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d > 0 && n > maxElements/d {
			return 0, fmt.Errorf("shape %v is too large", shape)
		}
		n *= d
	}
	return int(n), nil
}

// encodeFP32 lays out values as little-endian IEEE 754 bytes, the protocol's raw format. On a
// little-endian machine that is already their memory layout, so the bytes alias values (no copy:
// a recognizer batch is megabytes and this sits on every request's critical path); callers must
// not change values while the bytes are in use.
func encodeFP32(values []float32) []byte {
	if len(values) == 0 {
		return []byte{}
	}
	if nativeLittleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), 4*len(values))
	}
	b := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// decodeFP32 is the inverse of encodeFP32; len(b) must be a multiple of 4. On a little-endian
// machine, when b is 4-byte aligned (protobuf allocates each bytes field afresh, so it is), the
// floats alias b instead of being copied.
func decodeFP32(b []byte) []float32 {
	if len(b) == 0 {
		return []float32{}
	}
	if nativeLittleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	values := make([]float32, len(b)/4)
	for i := range values {
		values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return values
}

// copyFP32 decodes b (len(b) a multiple of 4) into new memory, as decodeFP32 does but never
// aliasing b: b is part of a shared-memory region that the next call overwrites.
func copyFP32(b []byte) []float32 {
	values := make([]float32, len(b)/4)
	if len(values) == 0 {
		return values
	}
	if nativeLittleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(b)), b)
		return values
	}
	for i := range values {
		values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return values
}

// nativeLittleEndian reports whether this machine stores numbers little-endian, as the protocol's
// raw tensor contents are.
var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
