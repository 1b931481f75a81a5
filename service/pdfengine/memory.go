package pdfengine

import "sync"

// heapMemory is a linear memory on the Go heap, capped at limit bytes: the fallback where no
// reservation can be made.
type heapMemory struct {
	mu    sync.Mutex // Free may run from a kill while a call grows the memory (see reservedMemory)
	buf   []byte
	limit uint64
}

// Reallocate implements experimental.LinearMemory.
func (m *heapMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size > m.limit {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	grown := make([]byte, size, min(m.limit, size+size/4))
	copy(grown, m.buf)
	m.buf = grown
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *heapMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf = nil
}
