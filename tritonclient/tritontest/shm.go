package tritontest

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// DefaultSharedMemoryDir is where the server opens system shared-memory keys unless told
// otherwise: where glibc's shm_open, which Triton calls, looks.
const DefaultSharedMemoryDir = "/dev/shm"

// shmRegion is a registered system shared-memory region, mapped into the server.
type shmRegion struct {
	status *inferencepb.SystemSharedMemoryStatusResponse_RegionStatus
	data   []byte // the mapping: byte_size bytes from offset
	refs   int    // inferences reading or writing it
	gone   bool   // unregistered; unmapped once refs is 0
}

// SetSharedMemoryDir sets the directory in which SystemSharedMemoryRegister opens keys (default
// DefaultSharedMemoryDir): a key "/name" is the file dir/name. Tests point it at the client's
// SharedMemoryOptions.Dir, or at another directory to make registration fail the way it does
// when Triton cannot see the client's /dev/shm.
func (s *Server) SetSharedMemoryDir(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shmDir = dir
}

// shmFile is the file name glibc's shm_open uses for key: the key without its leading slashes,
// which must leave a name without slashes.
func shmFile(key string) (string, bool) {
	name := strings.TrimLeft(key, "/")
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return "", false
	}
	return name, true
}

// errOpenRegion is Triton's answer when shm_open fails (server src/shared_memory_manager.cc).
func errOpenRegion(key string) error {
	return status.Errorf(codes.Internal, "Unable to open shared memory region: '%s'", key)
}

// release drops one reference to r, unmapping it when it is unregistered and unused. The caller
// holds s.mu.
func (r *shmRegion) release() {
	if r.refs--; r.refs == 0 && r.gone {
		unmapRegion(r.data)
		r.data = nil
	}
}

// unregister forgets the region called name. The caller holds s.mu.
func (s *Server) unregister(name string) {
	r, ok := s.shmRegions[name]
	if !ok {
		return
	}
	delete(s.shmRegions, name)
	r.gone = true
	if r.refs == 0 {
		unmapRegion(r.data)
		r.data = nil
	}
}

// shmParams are a tensor's shared-memory parameters.
type shmParams struct {
	region           string
	offset, byteSize int64
}

// sharedMemoryParams reads a tensor's shared-memory parameters (nil when it has none) with
// Triton's checks and messages (server src/grpc/grpc_utils.h ParseSharedMemoryParams).
func sharedMemoryParams(tensor string, params map[string]*inferencepb.InferParameter) (*shmParams, error) {
	var p *shmParams
	if v, ok := params["shared_memory_region"]; ok {
		s, ok := v.GetParameterChoice().(*inferencepb.InferParameter_StringParam)
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument,
				"invalid value type for 'shared_memory_region' parameter for tensor '%s', expected string_param.", tensor)
		}
		p = &shmParams{region: s.StringParam}
	}
	read := func(key string) (int64, bool, error) {
		v, ok := params[key]
		if !ok {
			return 0, false, nil
		}
		if p == nil {
			return 0, true, status.Errorf(codes.InvalidArgument,
				"'%s' can not be specified without 'shared_memory_region' parameter for tensor '%s'", key, tensor)
		}
		n, ok := v.GetParameterChoice().(*inferencepb.InferParameter_Int64Param)
		if !ok {
			return 0, true, status.Errorf(codes.InvalidArgument,
				"invalid value type for '%s' parameter for tensor '%s', expected int64_param.", key, tensor)
		}
		return n.Int64Param, true, nil
	}
	offset, _, err := read("shared_memory_offset")
	if err != nil {
		return nil, err
	}
	size, hasSize, err := read("shared_memory_byte_size")
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, nil
	}
	if !hasSize {
		return nil, status.Errorf(codes.InvalidArgument,
			"'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '%s'", tensor)
	}
	p.offset, p.byteSize = offset, size
	return p, nil
}

// outputRegions resolves the shared-memory parameters of the requested outputs, as Triton does
// before it runs the model, and returns each such output's slice of its region by name. The
// regions stay mapped until release is called.
func (s *Server) outputRegions(req *inferencepb.ModelInferRequest) (targets map[string][]byte, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var held []*shmRegion
	release = func() { s.releaseRegions(held) }
	for _, o := range req.GetOutputs() {
		p, err := sharedMemoryParams(o.GetName(), o.GetParameters())
		if err == nil && p != nil {
			err = s.checkRegion(p)
		}
		if err != nil {
			for _, r := range held {
				r.release()
			}
			return nil, nil, err
		}
		if p == nil {
			continue
		}
		r := s.shmRegions[p.region]
		r.refs++
		held = append(held, r)
		if targets == nil {
			targets = make(map[string][]byte)
		}
		if _, dup := targets[o.GetName()]; !dup { // Triton keeps the first
			targets[o.GetName()] = r.data[p.offset : p.offset+p.byteSize : p.offset+p.byteSize]
		}
	}
	return targets, release, nil
}

// checkRegion validates p against the registered regions with Triton's messages (server
// src/shared_memory_manager.cc GetMemoryInfo). The caller holds s.mu.
func (s *Server) checkRegion(p *shmParams) error {
	r, ok := s.shmRegions[p.region]
	if !ok {
		return status.Errorf(codes.NotFound, "Unable to find shared memory region: '%s'", p.region)
	}
	size := int64(len(r.data))
	if p.offset < 0 || p.offset >= size {
		return status.Errorf(codes.InvalidArgument, "Invalid offset for shared memory region: '%s'", p.region)
	}
	if p.byteSize < 0 || p.byteSize > size-p.offset {
		return status.Errorf(codes.InvalidArgument, "Invalid offset + byte size for shared memory region: '%s'", p.region)
	}
	return nil
}

// readInput returns an input of want bytes read in place from the slice of a region that p
// names, checking p as Triton does: the region and range first (GetMemoryInfo), then the byte
// size against the tensor's shape (server core src/infer_request.cc, INVALID_ARG). Like Triton,
// whose CPU backends read a shared-memory input where it lies, the values are not copied when
// they can be viewed as float32s (see viewFP32). The region is returned with a reference held,
// so it stays mapped until the caller releases it after the model has run, even if it is
// unregistered meanwhile.
func (s *Server) readInput(model, input string, p *shmParams, want int) ([]float32, *shmRegion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkRegion(p); err != nil {
		return nil, nil, err
	}
	if p.byteSize != int64(want) {
		return nil, nil, status.Errorf(codes.InvalidArgument,
			"input byte size mismatch for input '%s' for model '%s'. Expected %d, got %d", input, model, want, p.byteSize)
	}
	r := s.shmRegions[p.region]
	r.refs++
	return viewFP32(r.data[p.offset : p.offset+p.byteSize]), r, nil
}

// releaseRegions drops the references an inference held on regions.
func (s *Server) releaseRegions(held []*shmRegion) {
	if len(held) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range held {
		r.release()
	}
}
