package onnxrt

import "testing"

// TestMemoryFigures: the runtime offers Memory to the cost model, reserved up front only when every
// model shares one arena.
func TestMemoryFigures(t *testing.T) {
	for _, tt := range []struct {
		arena    Arena
		reserved bool
	}{
		{ArenaSession, false},
		{ArenaOff, false},
		{ArenaShared, true},
	} {
		want := Memory
		want.Reserved = tt.reserved
		if got := (&Runtime{arena: tt.arena}).MemoryFigures(); got != want {
			t.Errorf("arena %s: %+v, want %+v", tt.arena, got, want)
		}
	}
}
