package server

import (
	"context"
	"fmt"
	"testing"
)

// TestClassifyCanceled: a request whose work stopped because its client left is answered as
// canceled (503), whether the work returned context.Canceled or the context's cause itself, as
// work.All does when the context ends before any unit fails.
func TestClassifyCanceled(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"context canceled", fmt.Errorf("reading page 3: %w", context.Canceled), 503, "canceled"},
		{"the client's leaving, as the cause", ErrClientGone, 503, "canceled"},
		{"the client's leaving, wrapped", fmt.Errorf("recognizer batch: %w", ErrClientGone), 503, "canceled"},
		{"the deadline", context.DeadlineExceeded, 504, "timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ae := classify(tt.err)
			if ae.status != tt.status || ae.code != tt.code {
				t.Fatalf("%d %s, want %d %s", ae.status, ae.code, tt.status, tt.code)
			}
		})
	}
}
