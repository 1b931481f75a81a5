package tritonclient

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// ServerLive reports whether the server answers. It is true as soon as the process serves gRPC,
// models loaded or not.
func (c *Client) ServerLive(ctx context.Context) (bool, error) {
	return idempotent(ctx, c, "ServerLive", "", func(ctx context.Context) (bool, error) {
		resp, err := c.rpc.ServerLive(ctx, &inferencepb.ServerLiveRequest{})
		return resp.GetLive(), err
	})
}

// ServerReady reports whether the server accepts inferences. Triton's default strict readiness
// also requires every model it loads to be ready.
func (c *Client) ServerReady(ctx context.Context) (bool, error) {
	return idempotent(ctx, c, "ServerReady", "", func(ctx context.Context) (bool, error) {
		resp, err := c.rpc.ServerReady(ctx, &inferencepb.ServerReadyRequest{})
		return resp.GetReady(), err
	})
}

// ModelReady reports whether the model accepts inferences; version "" means the latest. An
// unknown model is not ready (false, nil) rather than an error, as Triton answers it.
func (c *Client) ModelReady(ctx context.Context, model, version string) (bool, error) {
	return idempotent(ctx, c, "ModelReady", model, func(ctx context.Context) (bool, error) {
		resp, err := c.rpc.ModelReady(ctx, &inferencepb.ModelReadyRequest{Name: model, Version: version})
		return resp.GetReady(), err
	})
}

// ServerMetadata describes the server.
type ServerMetadata struct {
	Name       string
	Version    string
	Extensions []string // protocol extensions, e.g. "system_shared_memory"
}

// ServerMetadata returns the server's name, version and protocol extensions.
func (c *Client) ServerMetadata(ctx context.Context) (ServerMetadata, error) {
	return idempotent(ctx, c, "ServerMetadata", "", func(ctx context.Context) (ServerMetadata, error) {
		resp, err := c.rpc.ServerMetadata(ctx, &inferencepb.ServerMetadataRequest{})
		if err != nil {
			return ServerMetadata{}, err
		}
		return ServerMetadata{Name: resp.GetName(), Version: resp.GetVersion(), Extensions: resp.GetExtensions()}, nil
	})
}

// TensorMetadata describes one input or output of a model as the wire sees it.
type TensorMetadata struct {
	Name     string
	Datatype string  // wire datatype, e.g. "FP32"
	Shape    []int64 // full shape, batch dimension included; -1 is a variable dimension
}

// ModelMetadata describes a model.
type ModelMetadata struct {
	Name     string
	Versions []string
	Platform string // e.g. "onnxruntime_onnx"
	Inputs   []TensorMetadata
	Outputs  []TensorMetadata
}

// Input returns the input called name.
func (m ModelMetadata) Input(name string) (TensorMetadata, bool) { return find(m.Inputs, name) }

// Output returns the output called name.
func (m ModelMetadata) Output(name string) (TensorMetadata, bool) { return find(m.Outputs, name) }

func find(ts []TensorMetadata, name string) (TensorMetadata, bool) {
	i := slices.IndexFunc(ts, func(t TensorMetadata) bool { return t.Name == name })
	if i < 0 {
		return TensorMetadata{}, false
	}
	return ts[i], true
}

// ModelMetadata returns the model's tensors; version "" means the latest.
func (c *Client) ModelMetadata(ctx context.Context, model, version string) (ModelMetadata, error) {
	return idempotent(ctx, c, "ModelMetadata", model, func(ctx context.Context) (ModelMetadata, error) {
		resp, err := c.rpc.ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: model, Version: version})
		if err != nil {
			return ModelMetadata{}, err
		}
		return ModelMetadata{
			Name:     resp.GetName(),
			Versions: resp.GetVersions(),
			Platform: resp.GetPlatform(),
			Inputs:   tensorMetadata(resp.GetInputs()),
			Outputs:  tensorMetadata(resp.GetOutputs()),
		}, nil
	})
}

func tensorMetadata(ts []*inferencepb.ModelMetadataResponse_TensorMetadata) []TensorMetadata {
	out := make([]TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = TensorMetadata{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: t.GetShape()}
	}
	return out
}

// ModelConfig returns the model's configuration as the server completed it; version "" means the
// latest. Fields the inferencepb schema leaves out are kept as unknown fields.
func (c *Client) ModelConfig(ctx context.Context, model, version string) (*inferencepb.ModelConfig, error) {
	return idempotent(ctx, c, "ModelConfig", model, func(ctx context.Context) (*inferencepb.ModelConfig, error) {
		resp, err := c.rpc.ModelConfig(ctx, &inferencepb.ModelConfigRequest{Name: model, Version: version})
		if err != nil {
			return nil, err
		}
		if resp.GetConfig() == nil {
			return &inferencepb.ModelConfig{}, nil
		}
		return resp.GetConfig(), nil
	})
}

// ModelStatistics returns the server's cumulative counters for the model ("" for every model);
// version "" means every version.
func (c *Client) ModelStatistics(ctx context.Context, model, version string) ([]*inferencepb.ModelStatistics, error) {
	return idempotent(ctx, c, "ModelStatistics", model, func(ctx context.Context) ([]*inferencepb.ModelStatistics, error) {
		resp, err := c.rpc.ModelStatistics(ctx, &inferencepb.ModelStatisticsRequest{Name: model, Version: version})
		return resp.GetModelStats(), err
	})
}

// SharedMemoryRegion is a system (POSIX) shared-memory region registered with the server.
type SharedMemoryRegion struct {
	Name     string
	Key      string // the shm_open key, e.g. "/ocrgate_input"
	Offset   uint64
	ByteSize uint64
}

// RegisterSystemSharedMemory registers region with the server, which maps it so that inference
// tensors can refer to it instead of carrying their data. Triton refuses it unless started with
// --allow-client-shm=true (the default is false since 26.05) and unless both processes see the
// same /dev/shm. A refusal wraps ErrSharedMemory. It is not retried: the server may have
// registered the region already.
func (c *Client) RegisterSystemSharedMemory(ctx context.Context, region SharedMemoryRegion) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	_, err := c.rpc.SystemSharedMemoryRegister(ctx, &inferencepb.SystemSharedMemoryRegisterRequest{
		Name:     region.Name,
		Key:      region.Key,
		Offset:   region.Offset,
		ByteSize: region.ByteSize,
	})
	switch {
	case err == nil:
		return nil
	case transient(err):
		return translate("SystemSharedMemoryRegister", "", err)
	}
	st := status.Convert(err)
	return fmt.Errorf("triton SystemSharedMemoryRegister %s: %w: %s: %s", region.Name, ErrSharedMemory, st.Code(), st.Message())
}

// UnregisterSystemSharedMemory drops the region called name, or every region when name is "".
func (c *Client) UnregisterSystemSharedMemory(ctx context.Context, name string) error {
	_, err := once(ctx, c, "SystemSharedMemoryUnregister", "", func(ctx context.Context) (*inferencepb.SystemSharedMemoryUnregisterResponse, error) {
		return c.rpc.SystemSharedMemoryUnregister(ctx, &inferencepb.SystemSharedMemoryUnregisterRequest{Name: name})
	})
	return err
}

// SystemSharedMemoryStatus lists the registered regions, sorted by name: the one called name
// (none when it is not registered), or every region when name is "".
func (c *Client) SystemSharedMemoryStatus(ctx context.Context, name string) ([]SharedMemoryRegion, error) {
	return idempotent(ctx, c, "SystemSharedMemoryStatus", "", func(ctx context.Context) ([]SharedMemoryRegion, error) {
		resp, err := c.rpc.SystemSharedMemoryStatus(ctx, &inferencepb.SystemSharedMemoryStatusRequest{Name: name})
		if status.Code(err) == codes.NotFound {
			// Triton's answer for a name it does not know; not a missing model.
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		regions := make([]SharedMemoryRegion, 0, len(resp.GetRegions()))
		for key, r := range resp.GetRegions() {
			n := r.GetName()
			if n == "" {
				n = key
			}
			regions = append(regions, SharedMemoryRegion{Name: n, Key: r.GetKey(), Offset: r.GetOffset(), ByteSize: r.GetByteSize()})
		}
		slices.SortFunc(regions, func(a, b SharedMemoryRegion) int { return strings.Compare(a.Name, b.Name) })
		return regions, nil
	})
}
