package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sys/unix"
)

// Document is a stored document spilled from the object store to a file of the spool directory
// and mapped read-only: its bytes are the file's pages, which the kernel reads in as they are
// touched and may drop again at any time (they are file-backed, not the process's heap). A
// 256 MiB document is never held in memory whole: the PDF engine reads a big one through a
// reader over the mapping, as it needs it (docfile.Limits.ReadThrough), and a TIFF's page
// decoder touches its page's strips. The file is unlinked as soon as it is created, so nothing of
// it outlives the process, whatever way it ends.
type Document struct {
	data []byte
	f    *os.File
}

// Bytes is the document; valid until Close.
func (d *Document) Bytes() []byte { return d.data }

// Size is the document's length in bytes.
func (d *Document) Size() int64 { return int64(len(d.data)) }

// Release gives back the pages of the mapping that reading touched (they stay in the kernel's
// file cache, not in the process): between two pages a mapped document holds no memory.
func (d *Document) Release() {
	if len(d.data) > 0 {
		_ = unix.Madvise(d.data, unix.MADV_DONTNEED)
	}
}

// Close unmaps the document and closes its file (which is gone from the directory already).
func (d *Document) Close() error {
	var err error
	if len(d.data) > 0 {
		err = unix.Munmap(d.data)
		d.data = nil
	}
	if d.f != nil {
		_ = d.f.Close()
		d.f = nil
	}
	return err
}

// spoolDir is where documents are spilled: in the jobs directory, or the system's temporary
// directory where that cannot be written (an external NATS on a read-only root file system).
func (s *Store) spoolDir() string {
	dir := filepath.Join(s.cfg.Dir, "spool")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return os.TempDir()
	}
	return dir
}

// document spills job id's stored document to the spool and maps it. Close it when done.
func (s *Store) document(ctx context.Context, id string) (*Document, error) {
	obj, err := s.docs.Get(ctx, id)
	// Replicated buckets answer reads from any replica (direct gets), and a follower that has
	// not applied the document just stored answers that there is none (seen on three servers,
	// deploy/image TestJobsPodKill): it catches up within moments.
	for try := 0; s.cfg.Replicas > 1 && errors.Is(err, jetstream.ErrObjectNotFound) && try < 20; try++ {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		obj, err = s.docs.Get(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the job's document: %v", ErrUnavailable, err)
	}
	defer func() { _ = obj.Close() }()
	return spill(s.spoolDir(), obj)
}

// spill copies r into an unlinked file of dir and maps it read-only.
func spill(dir string, r io.Reader) (*Document, error) {
	f, err := os.CreateTemp(dir, "doc-*")
	if err != nil {
		return nil, fmt.Errorf("%w: spool: %v", ErrUnavailable, err)
	}
	// Unlinked at once: the open file is all that is left of it, and it goes with the process.
	_ = os.Remove(f.Name())
	d := &Document{f: f}
	n, err := io.Copy(f, r)
	if err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("%w: spool: %v", ErrUnavailable, err)
	}
	if n == 0 {
		return d, nil
	}
	if n != int64(int(n)) {
		_ = d.Close()
		return nil, errors.New("spool: the document does not fit the address space")
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("%w: spool: map: %v", ErrUnavailable, err)
	}
	// Pages are read where the reader goes: no read-ahead of pages no one asked for.
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	d.data = data
	return d, nil
}
