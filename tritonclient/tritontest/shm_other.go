//go:build !unix

package tritontest

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// mapRegion fails as Triton does on Windows: system shared memory needs mmap.
func mapRegion(string, *inferencepb.SystemSharedMemoryRegisterRequest) ([]byte, error) {
	return nil, status.Error(codes.Unimplemented, "Shared memory feature is currently not supported on Windows")
}

func unmapRegion([]byte) {}
