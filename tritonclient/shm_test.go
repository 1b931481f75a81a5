package tritonclient_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

// shmClient returns a client with shared memory configured by shm, logging its inferences. An
// empty shm.Dir becomes a new directory, which must be empty again once the client is closed;
// the server is not told about it.
func shmClient(t *testing.T, addr string, shm tritonclient.SharedMemoryOptions) (*tritonclient.Client, *tritontest.WireLog, string) {
	t.Helper()
	return shmClientOptions(t, addr, tritonclient.Options{SharedMemory: shm})
}

// shmClientOptions is shmClient with more options.
func shmClientOptions(t *testing.T, addr string, opt tritonclient.Options) (*tritonclient.Client, *tritontest.WireLog, string) {
	t.Helper()
	shm := &opt.SharedMemory
	if shm.Dir == "" {
		shm.Dir = t.TempDir()
		dir := shm.Dir
		t.Cleanup(func() { // after the client's Close
			if files := listDir(t, dir); len(files) > 0 {
				t.Errorf("files left in %s after Close: %v", dir, files)
			}
		})
	}
	log := &tritontest.WireLog{}
	opt.DialOptions = append(opt.DialOptions, grpc.WithChainUnaryInterceptor(log.Intercept))
	return tritontest.NewClient(t, addr, opt), log, shm.Dir
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// viaSHMRawIn is a call whose outputs were written to shared memory, its inputs sent raw.
var viaSHMRawIn = tritontest.WireCall{Shared: true, RawIn: true}

// viaGRPC is a call that got n output bytes over gRPC.
func viaGRPC(n int) tritontest.WireCall { return tritontest.WireCall{RawBytes: n} }

// sameTensors fails unless got and want are equal, bit for bit.
func sameTensors(t *testing.T, got, want []tritonclient.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d outputs, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || g.Datatype != w.Datatype || !slices.Equal(g.Shape, w.Shape) || len(g.Data) != len(w.Data) {
			t.Fatalf("output %d = %s %s %v (%d values), want %s %s %v (%d values)", i, g.Name, g.Datatype, g.Shape, len(g.Data), w.Name, w.Datatype, w.Shape, len(w.Data))
		}
		for j := range w.Data {
			if math.Float32bits(g.Data[j]) != math.Float32bits(w.Data[j]) {
				t.Fatalf("output %q value %d = %v, want %v", w.Name, j, g.Data[j], w.Data[j])
			}
		}
	}
}

func vector(n int, f func(i int) float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

// TestInferSharedMemory checks that outputs read from shared memory are exactly those sent over
// gRPC, and that they really came through shared memory.
func TestInferSharedMemory(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel(), identityModel())
	plain := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	big := 3 << 18 // 3 MiB per tensor
	a := tritonclient.Tensor{Name: "A", Shape: []int64{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}}
	b := tritonclient.Tensor{Name: "B", Shape: []int64{2, 3}, Data: []float32{0.5, -2, 0, 1e-7, float32(math.Inf(1)), 1e30}}
	tests := []struct {
		name    string
		model   string
		inputs  []tritonclient.Tensor
		outputs []string
		want    tritontest.WireCall
	}{
		{"one output", "add", []tritonclient.Tensor{a, b}, []string{"DIFF"}, tritontest.ViaSHM},
		{"two outputs share the region", "add", []tritonclient.Tensor{a, b}, []string{"DIFF", "SUM"}, tritontest.ViaSHM},
		{"same output twice", "add", []tritonclient.Tensor{a, b}, []string{"SUM", "SUM"}, tritontest.ViaSHM},
		{"empty variable dimension", "add", []tritonclient.Tensor{{Name: "A", Shape: []int64{1, 0}}, {Name: "B", Shape: []int64{1, 0}}}, []string{"SUM"}, tritontest.ViaSHM},
		{"no batch dimension", "identity", []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 2}, Data: []float32{1, 2, 3, 4}}}, []string{"OUT"}, tritontest.ViaSHM},
		{"large outputs", "add", []tritonclient.Tensor{
			{Name: "A", Shape: []int64{1, int64(big)}, Data: vector(big, func(i int) float32 { return float32(i) })},
			{Name: "B", Shape: []int64{1, int64(big)}, Data: vector(big, func(i int) float32 { return 1 / float32(i+1) })},
		}, []string{"SUM", "DIFF"}, tritontest.ViaSHM},
		{"outputs not named: over gRPC", "add", []tritonclient.Tensor{a, b}, nil, viaGRPC(48)},
	}
	for _, mode := range []tritonclient.SharedMemoryMode{tritonclient.SharedMemoryAuto, tritonclient.SharedMemoryOn} {
		t.Run(string(mode), func(t *testing.T) {
			// Messages over 4 KiB fail over gRPC: only shared memory gets the large ones through.
			c, log, dir := shmClientOptions(t, srv.Addr(), tritonclient.Options{
				MaxRecvBytes: 4 << 10,
				SharedMemory: tritonclient.SharedMemoryOptions{Mode: mode, RegionBytes: 32 << 20, Regions: 1},
				DialOptions:  []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(4 << 10))},
			})
			srv.SetSharedMemoryDir(dir)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					want, err := plain.Infer(t.Context(), tt.model, tt.inputs, tt.outputs...)
					if err != nil {
						t.Fatal(err)
					}
					got, err := c.Infer(t.Context(), tt.model, tt.inputs, tt.outputs...)
					if err != nil {
						t.Fatal(err)
					}
					sameTensors(t, got, want)
					log.Check(t, tt.want)
				})
			}
			if !c.SharedMemoryActive() || c.SharedMemoryError() != nil {
				t.Errorf("SharedMemoryActive() = %v, SharedMemoryError() = %v", c.SharedMemoryActive(), c.SharedMemoryError())
			}
		})
	}

	t.Run("returned tensors outlive the region's reuse", func(t *testing.T) {
		c, _, dir := shmClient(t, srv.Addr(), tritonclient.SharedMemoryOptions{Mode: tritonclient.SharedMemoryOn, RegionBytes: 1 << 20, Regions: 1})
		srv.SetSharedMemoryDir(dir)
		first, err := c.Infer(t.Context(), "identity", []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 1}, Data: []float32{1, 2}}}, "OUT")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Infer(t.Context(), "identity", []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 1}, Data: []float32{3, 4}}}, "OUT"); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first[0].Data, []float32{1, 2}) {
			t.Errorf("first output became %v", first[0].Data)
		}
	})
}

// gateModel returns its input once n calls are running it at the same time.
func gateModel(n int32) tritontest.Model {
	var arrived atomic.Int32
	all := make(chan struct{})
	return tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:   "gate",
			Input:  []*inferencepb.ModelInput{{Name: "IN", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{-1}}},
			Output: []*inferencepb.ModelOutput{{Name: "OUT", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{-1}}},
		},
		Run: func(ctx context.Context, in []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			if arrived.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
			case <-ctx.Done():
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			return []tritonclient.Tensor{{Name: "OUT", Shape: in[0].Shape, Data: in[0].Data}}, nil
		},
	}
}

// TestSharedMemoryPoolExhausted runs more calls at once than there are regions: the others go
// over gRPC without waiting.
func TestSharedMemoryPoolExhausted(t *testing.T) {
	checkGoroutines(t)
	const calls, regions = 5, 2
	srv := tritontest.StartServer(t, gateModel(calls))
	c, log, dir := shmClient(t, srv.Addr(), tritonclient.SharedMemoryOptions{Mode: tritonclient.SharedMemoryOn, RegionBytes: 1 << 16, Regions: regions})
	srv.SetSharedMemoryDir(dir)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Go(func() {
			out, err := c.Infer(ctx, "gate", []tritonclient.Tensor{{Name: "IN", Shape: []int64{1}, Data: []float32{float32(i)}}}, "OUT")
			if err == nil && out[0].Data[0] != float32(i) {
				err = fmt.Errorf("call %d got %v", i, out[0].Data)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	shared := 0
	for _, call := range log.Take() {
		if call.Shared {
			shared++
		}
	}
	if shared != regions {
		t.Errorf("%d calls used shared memory, want %d", shared, regions)
	}
	if files := listDir(t, dir); len(files) != regions {
		t.Errorf("files in %s: %v, want %d", dir, files, regions)
	}
}

// TestSharedMemoryServerRestart restarts the server, which forgets the registrations: the next
// call registers its region again and succeeds.
func TestSharedMemoryServerRestart(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, identityModel())
	in := []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 1}, Data: []float32{1, 2}}}
	for _, mode := range []tritonclient.SharedMemoryMode{tritonclient.SharedMemoryAuto, tritonclient.SharedMemoryOn} {
		t.Run(string(mode), func(t *testing.T) {
			c, log, dir := shmClient(t, srv.Addr(), tritonclient.SharedMemoryOptions{Mode: mode, RegionBytes: 1 << 16, Regions: 1})
			srv.SetSharedMemoryDir(dir)
			registrations := srv.Calls("SystemSharedMemoryRegister")
			if _, err := c.Infer(t.Context(), "identity", in, "OUT"); err != nil {
				t.Fatal(err)
			}
			srv.Stop()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			waitReady(t, c)
			out, err := c.Infer(t.Context(), "identity", in, "OUT")
			if err != nil {
				t.Fatalf("Infer after restart: %v", err)
			}
			if !slices.Equal(out[0].Data, []float32{1, 2}) {
				t.Errorf("OUT = %v", out[0].Data)
			}
			log.Check(t, tritontest.ViaSHM, tritontest.WireCall{Shared: true, Code: codes.NotFound}, tritontest.ViaSHM)
			if n := srv.Calls("SystemSharedMemoryRegister") - registrations; n != 2 {
				t.Errorf("%d registrations, want 2", n)
			}
			regions, err := c.SystemSharedMemoryStatus(t.Context(), "")
			if err != nil || len(regions) != 1 || regions[0].ByteSize != 1<<16 {
				t.Errorf("regions after restart = %+v, %v", regions, err)
			}
			if !c.SharedMemoryActive() {
				t.Error("SharedMemoryActive() = false")
			}
		})
	}
}

// waitReady waits until c sees its server ready again.
func waitReady(t *testing.T, c *tritonclient.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		if ready, _ := c.ServerReady(ctx); ready {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("the client did not see the restarted server")
		}
	}
}

// TestSharedMemorySetupFailures: auto mode falls back to gRPC when a region cannot be used, on
// mode fails the call.
func TestSharedMemorySetupFailures(t *testing.T) {
	checkGoroutines(t)
	in := []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 1}, Data: []float32{1, 2}}}
	tests := []struct {
		name  string
		setup func(t *testing.T, srv *tritontest.Server, dir string) // dir: the client's
		dir   func(t *testing.T) string                              // the client's Dir; nil: a new directory
		// How each mode goes: the error of the first Infer (nil: it succeeds over gRPC), whether
		// a second one uses shared memory, and how many registrations the two make.
		onErr         error
		msg           string
		thenShared    bool
		registrations map[tritonclient.SharedMemoryMode]int
	}{
		{
			name:          "server cannot open the key (another IPC namespace)",
			setup:         func(t *testing.T, srv *tritontest.Server, _ string) { srv.SetSharedMemoryDir(t.TempDir()) },
			onErr:         tritonclient.ErrSharedMemory,
			msg:           "the server refused to register key /ocrgate-",
			registrations: map[tritonclient.SharedMemoryMode]int{tritonclient.SharedMemoryAuto: 1, tritonclient.SharedMemoryOn: 2},
		},
		{
			name: "server without the extension",
			setup: func(_ *testing.T, srv *tritontest.Server, dir string) {
				srv.SetSharedMemoryDir(dir)
				srv.Fail("SystemSharedMemoryRegister", codes.Unimplemented, "unknown method SystemSharedMemoryRegister", -1)
			},
			onErr:         tritonclient.ErrSharedMemory,
			msg:           "unknown method SystemSharedMemoryRegister",
			registrations: map[tritonclient.SharedMemoryMode]int{tritonclient.SharedMemoryAuto: 1, tritonclient.SharedMemoryOn: 2},
		},
		{
			name: "server unavailable while registering",
			setup: func(_ *testing.T, srv *tritontest.Server, dir string) {
				srv.SetSharedMemoryDir(dir)
				srv.Fail("SystemSharedMemoryRegister", codes.Unavailable, "connection reset", 1)
			},
			onErr:         tritonclient.ErrUnavailable,
			msg:           "connection reset",
			thenShared:    true, // it tries again
			registrations: map[tritonclient.SharedMemoryMode]int{tritonclient.SharedMemoryAuto: 2, tritonclient.SharedMemoryOn: 2},
		},
		{
			name:          "no directory for the regions",
			setup:         func(*testing.T, *tritontest.Server, string) {},
			dir:           func(t *testing.T) string { return filepath.Join(t.TempDir(), "missing") },
			onErr:         tritonclient.ErrSharedMemory,
			msg:           "cannot create it",
			registrations: map[tritonclient.SharedMemoryMode]int{},
		},
	}
	for _, tt := range tests {
		for _, mode := range []tritonclient.SharedMemoryMode{tritonclient.SharedMemoryAuto, tritonclient.SharedMemoryOn} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				srv := tritontest.StartServer(t, identityModel())
				var fallbacks []error
				var mu sync.Mutex
				opt := tritonclient.SharedMemoryOptions{Mode: mode, RegionBytes: 1 << 16, Regions: 1, OnFallback: func(err error) {
					mu.Lock()
					defer mu.Unlock()
					fallbacks = append(fallbacks, err)
				}}
				if tt.dir != nil {
					opt.Dir = tt.dir(t)
				}
				c, log, dir := shmClient(t, srv.Addr(), opt)
				tt.setup(t, srv, dir)

				_, err := c.Infer(t.Context(), "identity", in, "OUT")
				switch mode {
				case tritonclient.SharedMemoryAuto:
					if err != nil {
						t.Fatalf("auto mode: %v", err)
					}
					log.Check(t, viaGRPC(8))
				case tritonclient.SharedMemoryOn:
					tritontest.CheckErr(t, err, tt.onErr, tt.msg)
					log.Check(t)
				}
				if errors.Is(tt.onErr, tritonclient.ErrSharedMemory) {
					if err := c.SharedMemoryError(); !errors.Is(err, tritonclient.ErrSharedMemory) || !strings.Contains(err.Error(), tt.msg) {
						t.Errorf("SharedMemoryError() = %v, want %q", err, tt.msg)
					}
				}
				// Auto mode tells OnFallback why it sends the call over gRPC; on mode fails the
				// call instead, and a transient failure is no fallback.
				mu.Lock()
				told := len(fallbacks)
				mu.Unlock()
				switch {
				case mode == tritonclient.SharedMemoryAuto && errors.Is(tt.onErr, tritonclient.ErrSharedMemory):
					if told != 1 || !strings.Contains(fallbacks[0].Error(), tt.msg) {
						t.Errorf("OnFallback told %v, want one error saying %q", fallbacks, tt.msg)
					}
				case told != 0:
					t.Errorf("OnFallback told %v, want nothing", fallbacks)
				}

				out, err := c.Infer(t.Context(), "identity", in, "OUT")
				switch {
				case tt.thenShared:
					if err != nil {
						t.Fatal(err)
					}
					log.Check(t, tritontest.ViaSHM)
				case mode == tritonclient.SharedMemoryAuto:
					if err != nil || !slices.Equal(out[0].Data, []float32{1, 2}) {
						t.Fatalf("second call: %v, %v", out, err)
					}
					log.Check(t, viaGRPC(8))
				default:
					tritontest.CheckErr(t, err, tt.onErr, tt.msg)
				}
				if got := c.SharedMemoryActive(); got != tt.thenShared {
					t.Errorf("SharedMemoryActive() = %v, want %v", got, tt.thenShared)
				}
				if got := srv.Calls("SystemSharedMemoryRegister"); got != tt.registrations[mode] {
					t.Errorf("%d registrations, want %d", got, tt.registrations[mode])
				}
			})
		}
	}
}

// TestSharedMemoryOutputsTooLarge: outputs that do not fit their slice of the region are sent
// again over gRPC, in either mode.
func TestSharedMemoryOutputsTooLarge(t *testing.T) {
	checkGoroutines(t)
	srv := tritontest.StartServer(t, addModel())
	ab := func(n int) []tritonclient.Tensor {
		v := vector(n, func(i int) float32 { return float32(i) })
		return []tritonclient.Tensor{{Name: "A", Shape: []int64{1, int64(n)}, Data: v}, {Name: "B", Shape: []int64{1, int64(n)}, Data: v}}
	}
	tests := []struct {
		name        string
		regionBytes int
		values      int // per output
		outputs     []string
		want        []tritontest.WireCall
	}{
		// Inputs that leave the outputs no room stay in the request; the outputs get the region.
		{"output larger than the region", 4096, 1025, []string{"SUM"}, []tritontest.WireCall{{Shared: true, RawIn: true, Code: codes.Internal}, viaGRPC(4100)}},
		{"two outputs fill their halves exactly", 8192, 1024, []string{"SUM", "DIFF"}, []tritontest.WireCall{viaSHMRawIn}},
		{"two outputs, one half too small", 8192, 1025, []string{"SUM", "DIFF"}, []tritontest.WireCall{{Shared: true, RawIn: true, Code: codes.Internal}, viaGRPC(8200)}},
		{"halves smaller than a cache line", 64, 1, []string{"SUM", "DIFF"}, []tritontest.WireCall{viaGRPC(8)}},
		{"inputs leave less than a cache line", 8192 + 32, 1024, []string{"SUM"}, []tritontest.WireCall{viaSHMRawIn}},
		// Inputs first (4 KiB each), then the outputs.
		{"inputs and output fill the region exactly", 3 * 4096, 1024, []string{"SUM"}, []tritontest.WireCall{tritontest.ViaSHM}},
		{"inputs and two outputs fill the region exactly", 4 * 4096, 1024, []string{"SUM", "DIFF"}, []tritontest.WireCall{tritontest.ViaSHM}},
		{"inputs fit, the output not", 3*4096 - 64, 1024, []string{"SUM"}, []tritontest.WireCall{{Shared: true, Code: codes.Internal}, viaGRPC(4096)}},
		{"unaligned inputs fit, the output not after padding", 3 * 4092, 1023, []string{"SUM"}, []tritontest.WireCall{{Shared: true, Code: codes.Internal}, viaGRPC(4092)}},
		{"unaligned inputs and output fit", 3*4096 + 64, 1000, []string{"SUM"}, []tritontest.WireCall{tritontest.ViaSHM}},
	}
	for _, tt := range tests {
		for _, mode := range []tritonclient.SharedMemoryMode{tritonclient.SharedMemoryAuto, tritonclient.SharedMemoryOn} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				c, log, dir := shmClient(t, srv.Addr(), tritonclient.SharedMemoryOptions{Mode: mode, RegionBytes: tt.regionBytes, Regions: 1})
				srv.SetSharedMemoryDir(dir)
				out, err := c.Infer(t.Context(), "add", ab(tt.values), tt.outputs...)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(out[0].Data); n != tt.values || out[0].Data[n-1] != 2*float32(n-1) {
					t.Errorf("SUM has %d values ending in %v", n, out[0].Data[n-1])
				}
				log.Check(t, tt.want...)
			})
		}
	}
}

// TestSharedMemoryClose checks that Close unregisters the regions and removes their files, also
// when the server is gone or a call is in flight.
func TestSharedMemoryClose(t *testing.T) {
	checkGoroutines(t)
	in := []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 1}, Data: []float32{1, 2}}}
	tests := []struct {
		name   string
		before func(t *testing.T, srv *tritontest.Server, c *tritonclient.Client) (wait func())
	}{
		{"idle", func(*testing.T, *tritontest.Server, *tritonclient.Client) func() { return func() {} }},
		{"server gone", func(_ *testing.T, srv *tritontest.Server, _ *tritonclient.Client) func() {
			srv.Stop()
			return func() {}
		}},
		{"call in flight", func(t *testing.T, srv *tritontest.Server, c *tritonclient.Client) func() {
			srv.SetDelay(time.Hour)
			done := make(chan error)
			go func() {
				_, err := c.Infer(context.Background(), "identity", in, "OUT")
				done <- err
			}()
			for srv.Calls("ModelInfer") < 2 {
				time.Sleep(time.Millisecond)
			}
			return func() { tritontest.CheckErr(t, <-done, tritonclient.ErrCanceled, "") }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tritontest.StartServer(t, identityModel())
			dir := t.TempDir()
			srv.SetSharedMemoryDir(dir)
			c, err := tritonclient.New(srv.Addr(), tritonclient.Options{SharedMemory: tritonclient.SharedMemoryOptions{
				Mode: tritonclient.SharedMemoryOn, RegionBytes: 1 << 16, Regions: 2, Dir: dir,
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Infer(t.Context(), "identity", in, "OUT"); err != nil {
				t.Fatal(err)
			}
			files := listDir(t, dir)
			regions, err := c.SystemSharedMemoryStatus(t.Context(), "")
			if err != nil || len(files) != 1 || len(regions) != 1 || regions[0].Name != files[0] || regions[0].Key != "/"+files[0] || regions[0].ByteSize != 1<<16 {
				t.Fatalf("files %v, regions %+v, %v", files, regions, err)
			}
			wait := tt.before(t, srv, c)

			start := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Close took %v", d)
			}
			wait()
			if files := listDir(t, dir); len(files) != 0 {
				t.Errorf("files left after Close: %v", files)
			}
			if c.SharedMemoryActive() {
				t.Error("SharedMemoryActive() after Close")
			}
			srv.SetDelay(0)
			if err := srv.Restart(); err == nil { // after "server gone"
				waitReady(t, tritontest.NewClient(t, srv.Addr(), tritonclient.Options{}))
			}
			other := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
			if regions, err := other.SystemSharedMemoryStatus(t.Context(), ""); err != nil || len(regions) != 0 {
				t.Errorf("regions registered after Close: %+v, %v", regions, err)
			}
		})
	}
}

// TestSharedMemoryDefaultDir uses the real /dev/shm, as in production.
func TestSharedMemoryDefaultDir(t *testing.T) {
	checkGoroutines(t)
	if _, err := os.Stat(tritonclient.DefaultSharedMemoryDir); err != nil {
		t.Skipf("no %s: %v", tritonclient.DefaultSharedMemoryDir, err)
	}
	srv := tritontest.StartServer(t, identityModel())
	ours := func() []string {
		var names []string
		for _, name := range listDir(t, tritonclient.DefaultSharedMemoryDir) {
			if strings.HasPrefix(name, fmt.Sprintf("ocrgate-%d-", os.Getpid())) {
				names = append(names, name)
			}
		}
		return names
	}
	before := ours()
	c, err := tritonclient.New(srv.Addr(), tritonclient.Options{SharedMemory: tritonclient.SharedMemoryOptions{Mode: tritonclient.SharedMemoryOn}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Infer(t.Context(), "identity", []tritonclient.Tensor{{Name: "IN", Shape: []int64{2, 1}, Data: []float32{1, 2}}}, "OUT")
	if err != nil || !slices.Equal(out[0].Data, []float32{1, 2}) {
		t.Fatalf("Infer = %v, %v", out, err)
	}
	if n := len(ours()) - len(before); n != 1 {
		t.Errorf("%d new region files in %s, want 1", n, tritonclient.DefaultSharedMemoryDir)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if after := ours(); !slices.Equal(after, before) {
		t.Errorf("region files before %v, after Close %v", before, after)
	}
}

func TestSharedMemoryOptionsRefused(t *testing.T) {
	_, err := tritonclient.New("127.0.0.1:1", tritonclient.Options{SharedMemory: tritonclient.SharedMemoryOptions{Mode: "always"}})
	if err == nil || !strings.Contains(err.Error(), `unknown shared-memory mode "always"`) {
		t.Errorf("New with mode always: %v", err)
	}
}

// BenchmarkInferRecognizerBatch times one recognizer-sized call on loopback, a batch of 6 crops
// at 320 px ([6,3,48,320] in, [6,40,6625] out: 1.1 MB and 6.4 MB), with the output over gRPC and
// through shared memory. The model returns a ready-made output, so the numbers are the
// protocol's cost alone.
//
//	go test -run x -bench InferRecognizerBatch ./tritonclient/
func BenchmarkInferRecognizerBatch(b *testing.B) {
	const batch, steps, classes = 6, 40, 6625
	output := tritonclient.Tensor{Name: "y", Shape: []int64{batch, steps, classes}, Data: vector(batch*steps*classes, func(i int) float32 { return float32(i%classes) / classes })}
	srv, err := tritontest.Start(tritontest.Model{
		Config: &inferencepb.ModelConfig{
			Name:         "rec",
			MaxBatchSize: 8,
			Input:        []*inferencepb.ModelInput{{Name: "x", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{3, 48, -1}}},
			Output:       []*inferencepb.ModelOutput{{Name: "y", DataType: inferencepb.DataType_TYPE_FP32, Dims: []int64{-1, classes}}},
		},
		Run: func(context.Context, []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
			return []tritonclient.Tensor{output}, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	dir := b.TempDir()
	srv.SetSharedMemoryDir(dir)
	in := []tritonclient.Tensor{{Name: "x", Shape: []int64{batch, 3, 48, 320}, Data: make([]float32, batch*3*48*320)}}
	for _, mode := range []tritonclient.SharedMemoryMode{tritonclient.SharedMemoryOff, tritonclient.SharedMemoryOn} {
		b.Run(string(mode), func(b *testing.B) {
			c, err := tritonclient.New(srv.Addr(), tritonclient.Options{SharedMemory: tritonclient.SharedMemoryOptions{Mode: mode, Dir: dir}})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(int64(4 * len(output.Data)))
			for b.Loop() {
				if _, err := c.Infer(b.Context(), "rec", in, "y"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
