//go:build unix

package tritonclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// createRegion creates the file path (which must not exist) with size bytes and maps it shared,
// for reading and writing: the client writes inputs there, the server outputs. The file system
// must have size bytes free, since a process writing past a full tmpfs dies of SIGBUS (the
// server, or this one copying inputs); that is checked now, not reserved.
func createRegion(path string, size int) ([]byte, error) {
	dir := filepath.Dir(path)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	if free := uint64(st.Bavail) * uint64(st.Bsize); free < uint64(size) {
		return nil, fmt.Errorf("%s has %d bytes free, a region takes %d", dir, free, size)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	defer func() { _ = unix.Close(fd) }() // the mapping outlives the descriptor
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return nil, errors.Join(&os.PathError{Op: "truncate", Path: path, Err: err}, os.Remove(path))
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, errors.Join(&os.PathError{Op: "mmap", Path: path, Err: err}, os.Remove(path))
	}
	return data, nil
}

// removeRegion unmaps a region made by createRegion and removes its file.
func removeRegion(path string, data []byte) error {
	var errs []error
	if err := unix.Munmap(data); err != nil {
		errs = append(errs, &os.PathError{Op: "munmap", Path: path, Err: err})
	}
	if err := os.Remove(path); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
