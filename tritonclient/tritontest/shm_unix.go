//go:build unix

package tritontest

import (
	"math"
	"path/filepath"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// mapRegion opens and maps a region for SystemSharedMemoryRegister as Triton does (server
// src/shared_memory_manager.cc RegisterSystemSharedMemory): shm_open(key, O_RDWR), a bounds check
// against the file's size, then mmap of byte_size bytes at offset, which must therefore be a
// multiple of the page size.
func mapRegion(dir string, req *inferencepb.SystemSharedMemoryRegisterRequest) ([]byte, error) {
	name, key := req.GetName(), req.GetKey()
	file, ok := shmFile(key)
	if !ok {
		return nil, errOpenRegion(key)
	}
	fd, err := unix.Open(filepath.Join(dir, file), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errOpenRegion(key)
	}
	defer func() { _ = unix.Close(fd) }() // the mapping outlives the descriptor
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size < 0 {
		return nil, status.Errorf(codes.Internal, "Invalid shared memory region: '%s'", key)
	}
	offset, size := req.GetOffset(), req.GetByteSize()
	if offset > uint64(st.Size) || size > uint64(st.Size)-offset || size > math.MaxInt {
		return nil, status.Errorf(codes.InvalidArgument, "failed to register shared memory region '%s': invalid args", name)
	}
	data, err := unix.Mmap(fd, int64(offset), int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "failed to register shared memory region '%s': unable to process address space%v", name, err)
	}
	return data, nil
}

func unmapRegion(data []byte) {
	if data != nil {
		_ = unix.Munmap(data) // cannot fail for a mapping made by mapRegion
	}
}
