package imaging

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/memlimit"
)

// TestDecodeReleasesLargeScratch checks that a decode whose scratch is large (a progressive JPEG's
// coefficients) hands the freed memory back before returning, and that an ordinary decode does not
// pay for a forced collection.
func TestDecodeReleasesLargeScratch(t *testing.T) {
	var calls atomic.Int32
	old := releaseToOS
	releaseToOS = func() { calls.Add(1) }
	t.Cleanup(func() { releaseToOS = old })
	for _, tt := range []struct {
		name    string
		data    []byte
		release bool
	}{
		{"progressive 4500², coefficients over the threshold", hostile.ScanBomb(4500, 4500, 2), true},
		{"progressive 500², a few megabytes", hostile.ScanBomb(500, 500, 2), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Inspect(tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if big := h.scratchBytes() >= memlimit.ReleaseScratch; big != tt.release {
				t.Fatalf("scratch %d MiB: the case no longer tests what it says", h.scratchBytes()>>20)
			}
			calls.Store(0)
			if _, err := DecodeContext(context.Background(), tt.data, Limits{}, nil); err != nil {
				t.Fatal(err)
			}
			if got := calls.Load() > 0; got != tt.release {
				t.Errorf("memory released: %v, want %v", got, tt.release)
			}
		})
	}
}
