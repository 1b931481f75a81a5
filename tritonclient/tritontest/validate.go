package tritontest

import (
	"encoding/binary"
	"math"
	"unsafe"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// maxElements bounds a tensor's element count so byte sizes cannot overflow.
const maxElements = math.MaxInt32 / 4

// decodeRequest validates a request against the model's configuration the way Triton does and
// returns the inputs in the configuration's order, with the batch size (0 when the model does not
// batch). Inputs with shared-memory parameters are read from their region in place (see
// readInput); as in Triton (server src/grpc/infer_handler.cc InferGRPCToInput), raw_input_contents
// then hold, in order, the inputs without them. The inputs may alias the request and the regions,
// so they are read-only, and release, to be called once the model has run, lets the regions go.
// Failures are INVALID_ARGUMENT with Triton's wording where we know it.
func (s *Server) decodeRequest(c *inferencepb.ModelConfig, req *inferencepb.ModelInferRequest) (_ []tritonclient.Tensor, _ int64, release func(), err error) {
	var held []*shmRegion
	defer func() {
		if err != nil {
			s.releaseRegions(held)
		}
	}()
	name := c.GetName()
	ins, raw := req.GetInputs(), req.GetRawInputContents()
	shared := make([]*shmParams, len(ins))
	rawIndex := make([]int, len(ins)) // each input's raw entry, -1 for none
	nraw := 0
	for i, in := range ins {
		p, err := sharedMemoryParams(in.GetName(), in.GetParameters())
		if err != nil {
			return nil, 0, nil, err
		}
		rawIndex[i] = -1
		switch {
		case p != nil && in.Contents != nil:
			return nil, 0, nil, status.Errorf(codes.InvalidArgument,
				"unexpected 'content' provided when using shared memory for input tensor '%s' for model '%s'", in.GetName(), name)
		case p != nil:
			shared[i] = p
		case in.Contents != nil && len(raw) > 0:
			return nil, 0, nil, status.Error(codes.InvalidArgument, "contents field must not be specified when using raw_input_contents")
		case in.Contents == nil && len(raw) > 0:
			rawIndex[i] = nraw
			nraw++
		}
	}
	if len(raw) > 0 && len(raw) != nraw {
		return nil, 0, nil, status.Errorf(codes.InvalidArgument,
			"expected %d raw_input_contents, one per input not in shared memory, but got %d for model '%s'", nraw, len(raw), name)
	}

	byName := make(map[string]int, len(ins))
	batch := int64(-1)
	for i, in := range ins {
		cfg := configInput(c, in.GetName())
		if cfg == nil {
			return nil, 0, nil, status.Errorf(codes.InvalidArgument, "unexpected inference input '%s' for model '%s'", in.GetName(), name)
		}
		if _, dup := byName[in.GetName()]; dup {
			return nil, 0, nil, status.Errorf(codes.InvalidArgument, "input '%s' appears more than once in the request for model '%s'", in.GetName(), name)
		}
		byName[in.GetName()] = i
		if want := wireType(cfg.GetDataType()); in.GetDatatype() != want {
			return nil, 0, nil, status.Errorf(codes.InvalidArgument,
				"inference input '%s' data-type is '%s', but model '%s' expects '%s'", in.GetName(), in.GetDatatype(), name, want)
		}
		b, err := checkShape(c, in.GetName(), cfg.GetDims(), in.GetShape())
		if err != nil {
			return nil, 0, nil, err
		}
		if batch >= 0 && b != batch {
			return nil, 0, nil, status.Errorf(codes.InvalidArgument,
				"input '%s' has batch size %d, other inputs %d, for model '%s'", in.GetName(), b, batch, name)
		}
		batch = b
	}
	for _, cfg := range c.GetInput() {
		if _, ok := byName[cfg.GetName()]; !ok && !cfg.GetOptional() {
			return nil, 0, nil, status.Errorf(codes.InvalidArgument,
				"expected %d inputs but got %d inputs for model '%s'", countRequired(c), len(byName), name)
		}
	}
	for _, out := range req.GetOutputs() {
		if configOutput(c, out.GetName()) == nil {
			return nil, 0, nil, status.Errorf(codes.InvalidArgument, "unexpected inference output '%s' for model '%s'", out.GetName(), name)
		}
	}

	tensors := make([]tritonclient.Tensor, 0, len(ins))
	for _, cfg := range c.GetInput() {
		i, ok := byName[cfg.GetName()]
		if !ok {
			continue
		}
		in := ins[i]
		if in.GetDatatype() != tritonclient.FP32 {
			return nil, 0, nil, status.Errorf(codes.Unimplemented, "tritontest serves FP32 tensors only, input '%s' is %s", in.GetName(), in.GetDatatype())
		}
		n := elements(in.GetShape())
		var data []float32
		switch {
		case shared[i] != nil:
			var r *shmRegion
			if data, r, err = s.readInput(name, in.GetName(), shared[i], 4*n); err != nil {
				return nil, 0, nil, err
			}
			held = append(held, r)
		case rawIndex[i] >= 0:
			b := raw[rawIndex[i]]
			if len(b) != 4*n {
				return nil, 0, nil, status.Errorf(codes.InvalidArgument,
					"unexpected total byte size %d for input '%s', expecting %d", len(b), in.GetName(), 4*n)
			}
			data = viewFP32(b)
		case in.GetContents() != nil:
			data = in.GetContents().GetFp32Contents()
			if len(data) != n {
				return nil, 0, nil, status.Errorf(codes.InvalidArgument,
					"unexpected number of FP32 values %d for input '%s', expecting %d", len(data), in.GetName(), n)
			}
		default:
			return nil, 0, nil, status.Errorf(codes.InvalidArgument,
				"unable to find data for input tensor '%s' for model '%s' in request.", in.GetName(), name)
		}
		tensors = append(tensors, tritonclient.Tensor{
			Name: in.GetName(), Datatype: tritonclient.FP32, Shape: append([]int64(nil), in.GetShape()...), Data: data,
		})
	}
	return tensors, max(batch, 0), func() { s.releaseRegions(held) }, nil
}

// checkShape compares a request shape with config dims (batch dimension excluded there, -1 for
// any size) and returns the batch size (0 for a model without batching).
func checkShape(c *inferencepb.ModelConfig, input string, dims, shape []int64) (int64, error) {
	mismatch := status.Errorf(codes.InvalidArgument, "unexpected shape for input '%s' for model '%s'. Expected %s, got %s",
		input, c.GetName(), shapeString(fullShape(c, dims)), shapeString(shape))
	var batch int64
	if c.GetMaxBatchSize() > 0 {
		if len(shape) == 0 {
			return 0, mismatch
		}
		batch, shape = shape[0], shape[1:]
		if batch < 1 || batch > int64(c.GetMaxBatchSize()) {
			return 0, status.Errorf(codes.InvalidArgument,
				"inference request batch-size must be <= %d for '%s'", c.GetMaxBatchSize(), c.GetName())
		}
	}
	if len(shape) != len(dims) {
		return 0, mismatch
	}
	n := max(batch, 1)
	for i, d := range shape {
		if d < 0 || (dims[i] != -1 && dims[i] != d) {
			return 0, mismatch
		}
		if d > 0 && n > maxElements/d {
			return 0, status.Errorf(codes.InvalidArgument, "input '%s' shape %s is too large", input, shapeString(shape))
		}
		n *= d
	}
	return batch, nil
}

// encodeResponse checks the model's outputs against its configuration (a mismatch is the model's
// or the config's fault: INTERNAL) and returns the requested ones as raw contents, as Triton does,
// except those with a target (their slice of a shared-memory region, by name): they are written
// there and get an empty raw entry.
func encodeResponse(c *inferencepb.ModelConfig, req *inferencepb.ModelInferRequest, outputs []tritonclient.Tensor, batch int64, targets map[string][]byte) (*inferencepb.ModelInferResponse, error) {
	byName := make(map[string]tritonclient.Tensor, len(outputs))
	for _, o := range outputs {
		byName[o.Name] = o
	}
	for _, cfg := range c.GetOutput() {
		o, ok := byName[cfg.GetName()]
		if !ok {
			return nil, status.Errorf(codes.Internal, "model '%s' did not produce output '%s'", c.GetName(), cfg.GetName())
		}
		if (o.Datatype != "" && o.Datatype != tritonclient.FP32) || cfg.GetDataType() != inferencepb.DataType_TYPE_FP32 {
			return nil, status.Errorf(codes.Internal, "model '%s' output '%s': tritontest serves FP32 tensors only", c.GetName(), cfg.GetName())
		}
		want := fullShape(c, cfg.GetDims())
		if c.GetMaxBatchSize() > 0 {
			want[0] = batch
		}
		if !matches(want, o.Shape) || elements(o.Shape) != len(o.Data) {
			return nil, status.Errorf(codes.Internal, "model '%s' output '%s' has shape %s and %d values; the config says %s",
				c.GetName(), cfg.GetName(), shapeString(o.Shape), len(o.Data), shapeString(want))
		}
	}
	names := make([]string, 0, len(c.GetOutput()))
	if len(req.GetOutputs()) > 0 {
		for _, o := range req.GetOutputs() {
			names = append(names, o.GetName())
		}
	} else {
		for _, o := range c.GetOutput() {
			names = append(names, o.GetName())
		}
	}
	resp := &inferencepb.ModelInferResponse{
		ModelName:         c.GetName(),
		ModelVersion:      version,
		Id:                req.GetId(),
		Outputs:           make([]*inferencepb.ModelInferResponse_InferOutputTensor, len(names)),
		RawOutputContents: make([][]byte, len(names)),
	}
	for i, name := range names {
		o := byName[name]
		resp.Outputs[i] = &inferencepb.ModelInferResponse_InferOutputTensor{Name: name, Datatype: tritonclient.FP32, Shape: o.Shape}
		target, shared := targets[name]
		if !shared || len(o.Data) == 0 {
			resp.RawOutputContents[i] = encodeFP32(o.Data)
			continue
		}
		// Triton's allocator answers this way when the output does not fit (server
		// src/grpc/infer_handler.cc ResponseAllocatorHelper), after the model has run.
		if need := 4 * len(o.Data); need > len(target) {
			return nil, status.Errorf(codes.Internal,
				"shared memory size specified with the request for output '%s' (%d bytes) should be at least %d bytes to hold the results",
				name, len(target), need)
		}
		putFP32(target, o.Data)
		resp.RawOutputContents[i] = []byte{}
	}
	return resp, nil
}

// matches reports whether shape fits want, where -1 in want matches any size.
func matches(want, shape []int64) bool {
	if len(want) != len(shape) {
		return false
	}
	for i, d := range shape {
		if d < 0 || (want[i] != -1 && want[i] != d) {
			return false
		}
	}
	return true
}

func configInput(c *inferencepb.ModelConfig, name string) *inferencepb.ModelInput {
	for _, in := range c.GetInput() {
		if in.GetName() == name {
			return in
		}
	}
	return nil
}

func configOutput(c *inferencepb.ModelConfig, name string) *inferencepb.ModelOutput {
	for _, out := range c.GetOutput() {
		if out.GetName() == name {
			return out
		}
	}
	return nil
}

func countRequired(c *inferencepb.ModelConfig) int {
	n := 0
	for _, in := range c.GetInput() {
		if !in.GetOptional() {
			n++
		}
	}
	return n
}

// elements is the value count of a shape already checked by checkShape or matches.
func elements(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// The double has its own codec rather than sharing tritonclient's, so a bug in one is not hidden
// by the same bug in the other. Triton moves tensors with memcpy; a per-element loop here would
// make the double, not the protocol, dominate loopback measurements. On a little-endian machine
// the wire layout is the memory layout, so the codec copies bytes; elsewhere it converts values
// one by one.

// littleEndian reports whether this machine stores numbers little-endian.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func encodeFP32(values []float32) []byte {
	b := make([]byte, 4*len(values))
	putFP32(b, values)
	return b
}

// putFP32 writes values into b, which must hold them.
func putFP32(b []byte, values []float32) {
	if littleEndian {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(values))), 4*len(values)))
		return
	}
	for i, v := range values {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
}

// viewFP32 returns the little-endian float32s in b: b itself when this machine is little-endian
// and b is aligned for float32, a copy otherwise.
func viewFP32(b []byte) []float32 {
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Alignof(float32(0)) == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
	}
	return decodeFP32(b)
}

func decodeFP32(b []byte) []float32 {
	values := make([]float32, len(b)/4)
	if littleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(values))), 4*len(values)), b)
		return values
	}
	for i := range values {
		values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return values
}
