//go:build !(linux || darwin || freebsd)

package pdfengine

import "github.com/tetratelabs/wazero/experimental"

// newMemoryAllocator returns the allocator for instances capped at limit bytes: heap memory where
// anonymous mappings are not available.
func newMemoryAllocator(limit int64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		return &heapMemory{limit: min(max, uint64(limit))}
	})
}
