//go:build linux || darwin || freebsd

package pdfengine

import "testing"

// TestReservedMemory: the memory grows in place up to its cap, refuses to grow past it, and
// stays readable (as zeros) after Free, until it is unmapped later.
func TestReservedMemory(t *testing.T) {
	m := newMemoryAllocator(1<<20).Allocate(64<<10, 4<<30)
	a := m.Reallocate(64 << 10)
	if len(a) != 64<<10 {
		t.Fatalf("initial length %d", len(a))
	}
	a[100] = 7
	b := m.Reallocate(1 << 20)
	if len(b) != 1<<20 || &a[0] != &b[0] || b[100] != 7 {
		t.Fatalf("growth moved or lost the memory")
	}
	if c := m.Reallocate(1<<20 + 1); c != nil {
		t.Fatalf("grew past the cap to %d bytes", len(c))
	}
	m.Free()
	if b[100] != 0 {
		t.Errorf("freed memory still holds its data")
	}
	b[200] = 1 // a late write from a call being stopped must not fault
	if c := m.Reallocate(64 << 10); c != nil {
		t.Errorf("freed memory grew")
	}
	m.Free() // twice is harmless
}

func TestHeapMemory(t *testing.T) {
	m := &heapMemory{limit: 1 << 20}
	a := m.Reallocate(1000)
	a[10] = 3
	if b := m.Reallocate(500_000); len(b) != 500_000 || b[10] != 3 {
		t.Fatalf("growth lost the data")
	}
	if c := m.Reallocate(1<<20 + 1); c != nil {
		t.Fatal("grew past the cap")
	}
	m.Free()
}
