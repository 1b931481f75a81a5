package tritontest

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// version is the only version each model has.
const version = "1"

// service implements the RPCs over the Server's state.
type service struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

var errServerNotReady = status.Error(codes.Unavailable, "Server not ready")

func (v *service) ServerLive(context.Context, *inferencepb.ServerLiveRequest) (*inferencepb.ServerLiveResponse, error) {
	return &inferencepb.ServerLiveResponse{Live: true}, nil
}

// ServerReady is strict, as Triton's default --strict-readiness: every model must be ready too.
func (v *service) ServerReady(context.Context, *inferencepb.ServerReadyRequest) (*inferencepb.ServerReadyResponse, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	ready := !s.notReady
	for _, m := range s.models {
		ready = ready && m.ready
	}
	return &inferencepb.ServerReadyResponse{Ready: ready}, nil
}

// ModelReady answers false, not an error, for an unknown model, as Triton does.
func (v *service) ModelReady(_ context.Context, req *inferencepb.ModelReadyRequest) (*inferencepb.ModelReadyResponse, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notReady {
		return nil, errServerNotReady
	}
	m, ok := s.models[req.GetName()]
	ready := ok && m.ready && (req.GetVersion() == "" || req.GetVersion() == version)
	return &inferencepb.ModelReadyResponse{Ready: ready}, nil
}

func (v *service) ServerMetadata(context.Context, *inferencepb.ServerMetadataRequest) (*inferencepb.ServerMetadataResponse, error) {
	return &inferencepb.ServerMetadataResponse{
		Name:       "tritontest",
		Version:    "0",
		Extensions: []string{"model_configuration", "statistics", "system_shared_memory"},
	}, nil
}

func (v *service) ModelMetadata(_ context.Context, req *inferencepb.ModelMetadataRequest) (*inferencepb.ModelMetadataResponse, error) {
	m, err := v.s.lookup(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	c := m.Config
	platform := c.GetPlatform()
	if platform == "" {
		platform = c.GetBackend()
	}
	resp := &inferencepb.ModelMetadataResponse{Name: c.GetName(), Versions: []string{version}, Platform: platform}
	for _, in := range c.GetInput() {
		resp.Inputs = append(resp.Inputs, &inferencepb.ModelMetadataResponse_TensorMetadata{
			Name: in.GetName(), Datatype: wireType(in.GetDataType()), Shape: fullShape(c, in.GetDims()),
		})
	}
	for _, out := range c.GetOutput() {
		resp.Outputs = append(resp.Outputs, &inferencepb.ModelMetadataResponse_TensorMetadata{
			Name: out.GetName(), Datatype: wireType(out.GetDataType()), Shape: fullShape(c, out.GetDims()),
		})
	}
	return resp, nil
}

func (v *service) ModelConfig(_ context.Context, req *inferencepb.ModelConfigRequest) (*inferencepb.ModelConfigResponse, error) {
	m, err := v.s.lookup(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	return &inferencepb.ModelConfigResponse{Config: proto.CloneOf(m.Config)}, nil
}

func (v *service) ModelStatistics(_ context.Context, req *inferencepb.ModelStatisticsRequest) (*inferencepb.ModelStatisticsResponse, error) {
	s := v.s
	var names []string
	if req.GetName() != "" {
		if _, err := s.lookup(req.GetName(), req.GetVersion()); err != nil {
			return nil, err
		}
		names = []string{req.GetName()}
	} else {
		names = s.order
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &inferencepb.ModelStatisticsResponse{}
	for _, name := range names {
		st := proto.CloneOf(&s.models[name].stats)
		st.Name, st.Version = name, version
		resp.ModelStats = append(resp.ModelStats, st)
	}
	return resp, nil
}

func (v *service) SystemSharedMemoryStatus(_ context.Context, req *inferencepb.SystemSharedMemoryStatusRequest) (*inferencepb.SystemSharedMemoryStatusResponse, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &inferencepb.SystemSharedMemoryStatusResponse{Regions: map[string]*inferencepb.SystemSharedMemoryStatusResponse_RegionStatus{}}
	for name, r := range s.shmRegions {
		if req.GetName() == "" || req.GetName() == name {
			resp.Regions[name] = proto.CloneOf(r.status)
		}
	}
	if req.GetName() != "" && len(resp.Regions) == 0 {
		return nil, status.Errorf(codes.NotFound, "Unable to find system shared memory region: '%s'", req.GetName())
	}
	return resp, nil
}

// SystemSharedMemoryRegister opens and maps the region as Triton does (see mapRegion).
func (v *service) SystemSharedMemoryRegister(_ context.Context, req *inferencepb.SystemSharedMemoryRegisterRequest) (*inferencepb.SystemSharedMemoryRegisterResponse, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.GetName() == "" || req.GetKey() == "" || req.GetByteSize() == 0 {
		return nil, status.Error(codes.InvalidArgument, "shared memory region needs a name, a key and a byte size")
	}
	if _, dup := s.shmRegions[req.GetName()]; dup {
		return nil, status.Errorf(codes.AlreadyExists, "shared memory region '%s' already in manager", req.GetName())
	}
	data, err := mapRegion(s.shmDir, req)
	if err != nil {
		return nil, err
	}
	s.shmRegions[req.GetName()] = &shmRegion{
		status: &inferencepb.SystemSharedMemoryStatusResponse_RegionStatus{
			Name: req.GetName(), Key: req.GetKey(), Offset: req.GetOffset(), ByteSize: req.GetByteSize(),
		},
		data: data,
	}
	return &inferencepb.SystemSharedMemoryRegisterResponse{}, nil
}

// SystemSharedMemoryUnregister forgets the region called name, or every region when name is "";
// an unknown name is not an error. A region is unmapped once the inferences using it are done.
func (v *service) SystemSharedMemoryUnregister(_ context.Context, req *inferencepb.SystemSharedMemoryUnregisterRequest) (*inferencepb.SystemSharedMemoryUnregisterResponse, error) {
	s := v.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.GetName() != "" {
		s.unregister(req.GetName())
		return &inferencepb.SystemSharedMemoryUnregisterResponse{}, nil
	}
	for name := range s.shmRegions {
		s.unregister(name)
	}
	return &inferencepb.SystemSharedMemoryUnregisterResponse{}, nil
}

func (v *service) ModelInfer(ctx context.Context, req *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	s := v.s
	m, err := s.lookup(req.GetModelName(), req.GetModelVersion())
	if err != nil {
		return nil, err
	}
	inputs, batch, releaseInputs, err := s.decodeRequest(m.Config, req)
	if err != nil {
		return nil, err
	}
	defer releaseInputs()
	targets, release, err := s.outputRegions(req)
	if err != nil {
		return nil, err
	}
	defer release()
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()

	start := time.Now()
	resp, err := v.run(ctx, m, req, inputs, batch, delay, targets)
	s.record(m, start, batch, err)
	if err == nil && len(targets) > 0 {
		s.mu.Lock()
		s.shmOutputs += len(targets)
		s.mu.Unlock()
	}
	return resp, err
}

func (v *service) run(ctx context.Context, m *model, req *inferencepb.ModelInferRequest, inputs []tritonclient.Tensor, batch int64, delay time.Duration, targets map[string][]byte) (*inferencepb.ModelInferResponse, error) {
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		}
	}
	outputs, err := m.Run(ctx, inputs)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Errorf(codes.Internal, "model '%s' failed: %v", m.Config.GetName(), err)
	}
	return encodeResponse(m.Config, req, outputs, batch, targets)
}

// lookup finds a model that can serve, answering as Triton's model lookup does otherwise.
func (s *Server) lookup(name, ver string) (*model, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notReady {
		return nil, errServerNotReady
	}
	m, ok := s.models[name]
	switch {
	case !ok:
		return nil, status.Errorf(codes.NotFound, "Request for unknown model: '%s' is not found", name)
	case ver != "" && ver != version:
		return nil, status.Errorf(codes.NotFound, "Request for unknown model: '%s' version %s is not found", name, ver)
	case !m.ready && ver == "":
		return nil, status.Errorf(codes.NotFound, "Request for unknown model: '%s' has no available versions", name)
	case !m.ready:
		return nil, status.Errorf(codes.Unavailable, "Request for unknown model: '%s' version %s is not at ready state", name, ver)
	}
	return m, nil
}

// record updates the model's statistics after an inference that passed validation.
func (s *Server) record(m *model, start time.Time, batch int64, err error) {
	ns := uint64(time.Since(start).Nanoseconds())
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &m.stats
	if st.InferenceStats == nil {
		st.InferenceStats = &inferencepb.InferStatistics{
			Success: &inferencepb.StatisticDuration{},
			Fail:    &inferencepb.StatisticDuration{},
		}
	}
	if err != nil {
		st.InferenceStats.Fail.Count++
		st.InferenceStats.Fail.Ns += ns
		return
	}
	st.InferenceStats.Success.Count++
	st.InferenceStats.Success.Ns += ns
	st.InferenceCount += uint64(max(batch, 1))
	st.ExecutionCount++
	st.LastInference = uint64(time.Now().UnixMilli())
}

// fullShape is a config tensor's shape on the wire: the batch dimension (-1) first when the model
// batches.
func fullShape(c *inferencepb.ModelConfig, dims []int64) []int64 {
	if c.GetMaxBatchSize() > 0 {
		return append([]int64{-1}, dims...)
	}
	return append([]int64(nil), dims...)
}

// wireType maps a config data type to its protocol string ("" for TYPE_INVALID or unknown).
func wireType(t inferencepb.DataType) string {
	switch t {
	case inferencepb.DataType_TYPE_BOOL:
		return "BOOL"
	case inferencepb.DataType_TYPE_UINT8:
		return "UINT8"
	case inferencepb.DataType_TYPE_UINT16:
		return "UINT16"
	case inferencepb.DataType_TYPE_UINT32:
		return "UINT32"
	case inferencepb.DataType_TYPE_UINT64:
		return "UINT64"
	case inferencepb.DataType_TYPE_INT8:
		return "INT8"
	case inferencepb.DataType_TYPE_INT16:
		return "INT16"
	case inferencepb.DataType_TYPE_INT32:
		return "INT32"
	case inferencepb.DataType_TYPE_INT64:
		return "INT64"
	case inferencepb.DataType_TYPE_FP16:
		return "FP16"
	case inferencepb.DataType_TYPE_FP32:
		return "FP32"
	case inferencepb.DataType_TYPE_FP64:
		return "FP64"
	case inferencepb.DataType_TYPE_STRING:
		return "BYTES"
	case inferencepb.DataType_TYPE_BF16:
		return "BF16"
	}
	return ""
}

func shapeString(shape []int64) string {
	b := []byte{'['}
	for i, d := range shape {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Append(b, d)
	}
	return string(append(b, ']'))
}
