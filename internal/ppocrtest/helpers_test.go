package ppocrtest_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/ocrgate/ocrgate/tritonclient"
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

// shmClient returns a client with shared memory configured by shm in a new directory, logging its
// inferences; the directory must be empty again once the client is closed.
func shmClient(t *testing.T, addr string, shm tritonclient.SharedMemoryOptions) (*tritonclient.Client, *tritontest.WireLog, string) {
	t.Helper()
	shm.Dir = t.TempDir()
	dir := shm.Dir
	t.Cleanup(func() { // after the client's Close
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			t.Errorf("%d files left in %s after Close", len(entries), dir)
		}
	})
	log := &tritontest.WireLog{}
	opt := tritonclient.Options{SharedMemory: shm, DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(log.Intercept)}}
	return tritontest.NewClient(t, addr, opt), log, dir
}
