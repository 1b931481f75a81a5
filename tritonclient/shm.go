package tritonclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// SharedMemoryMode says whether a Client passes inference inputs and outputs through system
// shared memory.
type SharedMemoryMode string

const (
	// SharedMemoryOff sends every output over gRPC. The zero Mode ("") means the same.
	SharedMemoryOff SharedMemoryMode = "off"
	// SharedMemoryAuto has the server write outputs into shared memory when it can. When it
	// refuses to register the client's regions (it runs on another host or in another IPC
	// namespace, Triton was started without --allow-client-shm=true, or the server lacks the
	// system_shared_memory extension), the Client turns shared memory off for good and sends
	// outputs over gRPC; SharedMemoryActive and SharedMemoryError say what happened.
	SharedMemoryAuto SharedMemoryMode = "auto"
	// SharedMemoryOn requires shared memory: a region that cannot be created, or that the server
	// refuses to register, fails the call with ErrSharedMemory instead of falling back. Calls
	// that find every region busy, that name no outputs, or whose outputs do not fit a region
	// still go over gRPC.
	SharedMemoryOn SharedMemoryMode = "on"
)

// Defaults for the zero SharedMemoryOptions.
const (
	DefaultSharedMemoryRegionBytes = 128 << 20
	DefaultSharedMemoryRegions     = 4
	DefaultSharedMemoryDir         = "/dev/shm"
)

// SharedMemoryOptions configure the regions through which a Client passes inference inputs and
// outputs, so that large tensors (a detector input or a recognizer batch is megabytes) do not
// travel over the socket. The server must
// see the same /dev/shm: a sidecar container in the same pod sharing an emptyDir (medium: Memory)
// at /dev/shm, or a container started with --ipc=host or --ipc=container:<ocrgate>. Triton also
// needs --allow-client-shm=true (its default is false since 26.05), and must run as the same user
// as ocrgate, or as root, since region files are created with mode 0600.
//
// Each region is a file Dir/ocrgate-<pid>-<random>-<n> of RegionBytes, created, mapped and
// registered with the server when an Infer first needs it; tmpfs commits its pages only when
// the server first writes them. A call uses one region for its inputs, which it copies there,
// and all of its outputs, which split the rest evenly. Close unregisters the regions and removes the files; a process that dies without
// Close leaves them behind (and Triton keeps them mapped until it restarts).
type SharedMemoryOptions struct {
	// Mode is off (or empty), auto or on.
	Mode SharedMemoryMode
	// RegionBytes is the size of each region (default 128 MiB): the most a call's inputs and
	// outputs can take together. A call's inputs go first and its outputs share the rest; inputs
	// that would leave the outputs no room stay in the request, and the outputs then share the
	// whole region. A call whose outputs do not fit is sent again without shared memory, so its
	// model runs twice.
	RegionBytes int
	// Regions is how many calls can use shared memory at once (default 4). Further concurrent
	// calls send their outputs over gRPC; they never wait for a region.
	Regions int
	// Dir is where the region files are created (default /dev/shm). The key sent to the server
	// is "/" + the file's name, which the server's shm_open looks up in /dev/shm, so any other
	// Dir only works with a server that looks there too, such as tritontest.
	Dir string
	// OnFallback, when set, is told each failure that sends calls over gRPC in auto mode (a
	// region that cannot be created, the server refusing to register one), so that the operator
	// learns why shared memory is not in use; it must not block.
	OnFallback func(err error)
}

func (o SharedMemoryOptions) withDefaults() SharedMemoryOptions {
	if o.Mode == "" {
		o.Mode = SharedMemoryOff
	}
	if o.RegionBytes <= 0 {
		o.RegionBytes = DefaultSharedMemoryRegionBytes
	}
	if o.Regions <= 0 {
		o.Regions = DefaultSharedMemoryRegions
	}
	if o.Dir == "" {
		o.Dir = DefaultSharedMemoryDir
	}
	return o
}

func (o SharedMemoryOptions) check() error {
	switch o.Mode {
	case SharedMemoryOff, SharedMemoryAuto, SharedMemoryOn:
		return nil
	}
	return fmt.Errorf("unknown shared-memory mode %q (want %s, %s or %s)", o.Mode, SharedMemoryOff, SharedMemoryAuto, SharedMemoryOn)
}

// shmAlign aligns the slices a region is split into, so each tensor starts on a cache line.
const shmAlign = 64

// shmUnregisterTimeout bounds the unregistration Close attempts; the server may be gone.
const shmUnregisterTimeout = 2 * time.Second

// Triton's messages for the failures a call recovers from (server src/shared_memory_manager.cc
// GetMemoryInfo and src/grpc/infer_handler.cc ResponseAllocatorHelper).
const (
	// NOT_FOUND, before the model runs: the server forgot the registration (it restarted).
	msgRegionUnknown = "Unable to find shared memory region"
	// INTERNAL, after the model ran: an output is larger than its slice of the region.
	msgRegionSmall = "bytes to hold the results"
)

// regionError is a failure to set up region name, wrapping ErrSharedMemory.
func regionError(name, what string, cause any) error {
	return fmt.Errorf("triton shared memory region %s: %w: %s: %v", name, ErrSharedMemory, what, cause)
}

// shmPool hands out a Client's shared-memory regions, one per call, without ever blocking.
type shmPool struct {
	mode        SharedMemoryMode
	dir         string
	regionBytes int
	free        chan *shmRegion // regions not in use; a region that could not be created is dropped
	held        sync.WaitGroup  // regions in use

	mu         sync.Mutex
	closed     bool
	disabled   bool            // auto mode: the server refused a region, so none is used again
	active     bool            // a region has been registered
	lastErr    error           // the latest failure to set up a region
	registered map[string]bool // names that may be registered at the server, for Close
	onFallback func(error)     // SharedMemoryOptions.OnFallback
}

// shmRegion is one region. Only the call holding it touches its fields.
type shmRegion struct {
	name       string // its name at the server and its file's name in the pool's dir
	data       []byte // the mapping; nil until created
	registered bool   // as far as this client knows
}

func (r *shmRegion) key() string { return "/" + r.name }

func newSHMPool(opt SharedMemoryOptions) (*shmPool, error) {
	if opt.Mode == SharedMemoryOff {
		return nil, nil
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	p := &shmPool{
		mode:        opt.Mode,
		dir:         opt.Dir,
		regionBytes: opt.RegionBytes,
		free:        make(chan *shmRegion, opt.Regions),
		registered:  make(map[string]bool),
		onFallback:  opt.OnFallback,
	}
	for n := range opt.Regions {
		p.free <- &shmRegion{name: fmt.Sprintf("ocrgate-%d-%s-%d", os.Getpid(), hex.EncodeToString(id[:]), n)}
	}
	return p, nil
}

// acquire takes a free region, creating and registering it when needed. It returns no region
// when the call is to go over gRPC: shared memory is off, every region is busy, or a region
// could not be set up in auto mode. It returns an error only when the call must fail: in on
// mode, a region that cannot be set up.
func (p *shmPool) acquire(ctx context.Context, c *Client) (*shmRegion, error) {
	p.mu.Lock()
	if p.closed || p.disabled {
		p.mu.Unlock()
		return nil, nil
	}
	p.held.Add(1)
	p.mu.Unlock()
	var r *shmRegion
	select {
	case r = <-p.free:
	default:
		p.held.Done()
		return nil, nil
	}
	if r.data == nil {
		data, err := createRegion(filepath.Join(p.dir, r.name), p.regionBytes)
		if err != nil {
			err = regionError(r.name, "cannot create it", err)
			p.mu.Lock()
			p.lastErr = err
			p.mu.Unlock()
			if p.mode == SharedMemoryOn {
				p.release(r)
				return nil, err
			}
			p.fellBack(err)
			p.held.Done() // drop the region: the call and later ones go over gRPC
			return nil, nil
		}
		r.data = data
	}
	if !r.registered {
		if err := p.register(ctx, c, r); err != nil || !r.registered {
			p.release(r)
			return nil, err
		}
	}
	return r, nil
}

// release returns a region acquired with acquire.
func (p *shmPool) release(r *shmRegion) {
	p.free <- r
	p.held.Done()
}

// register registers r with the server. A failure is returned as acquire returns it: nil when
// the call is to go over gRPC instead (auto mode; a refusal then turns shared memory off), or the
// error to fail the call with (on mode).
func (p *shmPool) register(ctx context.Context, c *Client, r *shmRegion) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.failed(r, status.Error(codes.Canceled, "grpc: the client connection is closing"))
	}
	// Recorded before the call, so that Close unregisters it even when the answer is lost.
	p.registered[r.name] = true
	p.mu.Unlock()
	_, err := c.rpc.SystemSharedMemoryRegister(ctx, &inferencepb.SystemSharedMemoryRegisterRequest{
		Name:     r.name,
		Key:      r.key(),
		ByteSize: uint64(len(r.data)),
	})
	if status.Code(err) == codes.AlreadyExists {
		// An earlier attempt whose answer was lost: the name is this region's alone.
		err = nil
	}
	if err != nil {
		return p.failed(r, err)
	}
	r.registered = true
	p.mu.Lock()
	p.active = true
	p.mu.Unlock()
	return nil
}

// failed handles a registration error by mode: see register.
func (p *shmPool) failed(r *shmRegion, err error) error {
	if transient(err) {
		// The server is unreachable or the call's time is up; the region stays unregistered
		// and the next call tries again.
		if p.mode == SharedMemoryOn {
			return translate("SystemSharedMemoryRegister", "", err)
		}
		return nil
	}
	refusal := regionError(r.name, "the server refused to register key "+r.key(), status.Convert(err).Message())
	p.mu.Lock()
	p.lastErr = refusal
	if p.mode == SharedMemoryOn {
		p.mu.Unlock()
		return refusal
	}
	p.disabled = true
	p.mu.Unlock()
	p.fellBack(refusal)
	return nil
}

// fellBack tells OnFallback why auto mode sends calls over gRPC.
func (p *shmPool) fellBack(err error) {
	if p.onFallback != nil {
		p.onFallback(err)
	}
}

// transient reports whether err says nothing about the server's ability to use shared memory.
func transient(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// isActive and setupError back Client.SharedMemoryActive and Client.SharedMemoryError.
func (p *shmPool) isActive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active && !p.disabled && !p.closed
}

func (p *shmPool) setupError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// unregisterAll stops handing out regions and unregisters every region from the server, best
// effort and within shmUnregisterTimeout. Calls in flight keep their regions: Triton unmaps a
// region only once the requests using it are done.
func (p *shmPool) unregisterAll(c *Client) {
	p.mu.Lock()
	p.closed = true
	names := make([]string, 0, len(p.registered))
	for name := range p.registered {
		names = append(names, name)
	}
	clear(p.registered)
	p.mu.Unlock()
	slices.Sort(names)
	ctx, cancel := context.WithTimeout(context.Background(), shmUnregisterTimeout)
	defer cancel()
	for _, name := range names {
		_, err := c.rpc.SystemSharedMemoryUnregister(ctx, &inferencepb.SystemSharedMemoryUnregisterRequest{Name: name})
		if transient(err) {
			return // the server is gone, and with it the registrations
		}
	}
}

// destroy waits for the calls holding regions (the connection is closed, so they end soon),
// then unmaps every region and removes its file.
func (p *shmPool) destroy() error {
	p.held.Wait()
	var errs []error
	for {
		select {
		case r := <-p.free:
			if r.data != nil {
				if err := removeRegion(filepath.Join(p.dir, r.name), r.data); err != nil {
					errs = append(errs, fmt.Errorf("triton shared memory region %s: %w", r.name, err))
				}
				r.data = nil
			}
		default:
			return errors.Join(errs...)
		}
	}
}

// plan lays out a call's use of a region: its inputs first, each on a cache line of its own,
// then its outputs, which share the rest evenly. inputs is false when the inputs would leave the
// outputs no room: they then stay in the request and the outputs share the whole region. start
// is where the outputs' slices begin and per the size of each; per is 0 when even the whole
// region would give each output less than a cache line.
func (p *shmPool) plan(req *inferencepb.ModelInferRequest) (inputs bool, start, per int) {
	n := len(req.GetOutputs())
	in := 0
	for _, b := range req.GetRawInputContents() {
		in += alignUp(len(b))
		if in > p.regionBytes {
			break
		}
	}
	if in <= p.regionBytes {
		if per := (p.regionBytes - in) / n &^ (shmAlign - 1); per > 0 {
			return true, in, per
		}
	}
	return false, 0, p.regionBytes / n &^ (shmAlign - 1)
}

// alignUp rounds n up to a multiple of shmAlign.
func alignUp(n int) int {
	return (n + shmAlign - 1) &^ (shmAlign - 1)
}

// regionParams are the parameters that point a tensor at size bytes of r from off.
func regionParams(r *shmRegion, off, size int) map[string]*inferencepb.InferParameter {
	return map[string]*inferencepb.InferParameter{
		"shared_memory_region":    {ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: r.name}},
		"shared_memory_offset":    {ParameterChoice: &inferencepb.InferParameter_Int64Param{Int64Param: int64(off)}},
		"shared_memory_byte_size": {ParameterChoice: &inferencepb.InferParameter_Int64Param{Int64Param: int64(size)}},
	}
}

// shareInputs copies every input of req into r from offset 0, as plan laid them out, points the
// input at its copy and drops the raw contents: Triton reads raw_input_contents in order for the
// inputs without shared-memory parameters only, so the request sends all of its inputs one way.
func shareInputs(req *inferencepb.ModelInferRequest, r *shmRegion) {
	off := 0
	for i, in := range req.GetInputs() {
		b := req.RawInputContents[i]
		copy(r.data[off:off+len(b)], b)
		in.Parameters = regionParams(r, off, len(b))
		off += alignUp(len(b))
	}
	req.RawInputContents = nil
}

// shareOutputs asks for every named output of req to be written into r, in slices of per bytes
// from start, and returns each output's slice of r by name.
func shareOutputs(req *inferencepb.ModelInferRequest, r *shmRegion, start, per int) map[string][]byte {
	outs := req.GetOutputs()
	shared := make(map[string][]byte, len(outs))
	for i, o := range outs {
		off := start + i*per
		o.Parameters = regionParams(r, off, per)
		if _, dup := shared[o.GetName()]; !dup {
			// Triton, too, keeps the first parameters given for a name.
			shared[o.GetName()] = r.data[off : off+per : off+per]
		}
	}
	return shared
}

// unshare undoes shareInputs and shareOutputs; raw are the request's raw input contents.
func unshare(req *inferencepb.ModelInferRequest, raw [][]byte) {
	for _, in := range req.GetInputs() {
		in.Parameters = nil
	}
	for _, o := range req.GetOutputs() {
		o.Parameters = nil
	}
	req.RawInputContents = raw
}

// inferShared runs req with its inputs read from and its outputs written into a shared-memory
// region (its inputs stay in the request when they would leave the outputs no room). done is
// false when the call is to go over gRPC instead: no region could be had, or the server could
// not write the outputs into it (they are larger than their slice, or it lost the region
// twice); the caller then undoes the sharing with unshare. The region is returned to the pool
// only after the outputs have been copied out of it.
func (c *Client) inferShared(ctx context.Context, req *inferencepb.ModelInferRequest, outputs []string) (out []Tensor, done bool, err error) {
	inputs, start, per := c.shm.plan(req)
	if per == 0 {
		return nil, false, nil
	}
	r, err := c.shm.acquire(ctx, c)
	if r == nil {
		return nil, err != nil, err
	}
	defer c.shm.release(r)
	if inputs {
		shareInputs(req, r)
	}
	shared := shareOutputs(req, r, start, per)
	for retried := false; ; retried = true {
		resp, err := c.rpc.ModelInfer(ctx, req)
		if err == nil {
			out, err := decodeOutputs(resp, outputs, shared)
			if err != nil {
				return nil, true, fmt.Errorf("triton ModelInfer %s: %w: %w", req.GetModelName(), ErrServer, err)
			}
			return out, true, nil
		}
		st := status.Convert(err)
		switch {
		case st.Code() == codes.NotFound && strings.Contains(st.Message(), msgRegionUnknown) && !retried:
			// The server forgot the registration: it restarted. Triton checks the regions
			// before it runs the model, so the model has not run; register again and retry.
			r.registered = false
			if err := c.shm.register(ctx, c, r); err != nil || !r.registered {
				return nil, err != nil, err
			}
			continue
		case st.Code() == codes.NotFound && strings.Contains(st.Message(), msgRegionUnknown),
			st.Code() == codes.Internal && strings.Contains(st.Message(), msgRegionSmall):
			return nil, false, nil
		}
		return nil, true, translate("ModelInfer", req.GetModelName(), err)
	}
}

// SharedMemoryActive reports whether the Client has registered a shared-memory region with the
// server and uses it: false with SharedMemoryOff, before the first Infer that names its outputs,
// after auto mode fell back to gRPC, and after Close.
func (c *Client) SharedMemoryActive() bool {
	return c.shm != nil && c.shm.isActive()
}

// SharedMemoryError returns the latest failure to create or register a shared-memory region,
// wrapping ErrSharedMemory, or nil. In auto mode, a registration failure is why the Client fell
// back to gRPC.
func (c *Client) SharedMemoryError() error {
	if c.shm == nil {
		return nil
	}
	return c.shm.setupError()
}
