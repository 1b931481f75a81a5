//go:build linux || darwin || freebsd

package pdfengine

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// reservedMemory is a linear memory backed by one anonymous mapping of its maximum size, reserved
// up front and committed by the kernel page by page as PDFium touches it. Compared with wazero's
// default (a Go slice grown by append), growing never copies, so an instance near its cap holds
// the cap once instead of twice during a growth; and the memory lives outside the Go heap, where
// Free returns it to the system at once when the instance closes.
//
// Free runs when the instance closes, which a kill at a deadline does from another goroutine
// while a call may still be running (and growing the memory): mu orders the two.
type reservedMemory struct {
	mu      sync.Mutex
	mapping []byte
}

// newMemoryAllocator returns the allocator for instances capped at limit bytes.
func newMemoryAllocator(limit int64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		size := min(max, uint64(limit))
		size = max64(size, capacity)
		b, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
		if err != nil {
			// No address space for a reservation: fall back to heap memory of the same cap.
			return &heapMemory{limit: size}
		}
		return &reservedMemory{mapping: b}
	})
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// Reallocate implements experimental.LinearMemory: the memory grows inside its reservation.
func (m *reservedMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mapping == nil || size > uint64(len(m.mapping)) {
		return nil // over the cap: memory.grow fails and PDFium's allocator reports no memory
	}
	return m.mapping[:size]
}

// unmapDelay is how long a freed reservation stays mapped (empty) before it is unmapped.
//
// wazero frees a module's memory when the module closes, and an instance killed at a deadline
// is closed while its call may still be running: the call stops at its next function entry or
// loop edge, microseconds later. Unmapping at once would let that last access fault and take the
// process down, so Free gives the pages back to the kernel at once (MADV_DONTNEED: a late access
// reads zeros) and only unmaps the address range later.
const unmapDelay = 30 * time.Second

// Free implements experimental.LinearMemory.
func (m *reservedMemory) Free() {
	m.mu.Lock()
	b := m.mapping
	m.mapping = nil
	m.mu.Unlock()
	if b == nil {
		return
	}
	_ = unix.Madvise(b, unix.MADV_DONTNEED)
	time.AfterFunc(unmapDelay, func() { _ = unix.Munmap(b) })
}
