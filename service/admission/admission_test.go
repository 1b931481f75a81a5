package admission

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	tests := []struct {
		name         string
		limit, queue int
		held         int // slots taken before the call
		waiters      int // callers already waiting
		wantErr      error
	}{
		{"free slot", 2, 0, 1, 0, nil},
		{"full, no queue: refused at once", 1, 0, 1, 0, ErrOverloaded},
		{"full, queue full: refused at once", 1, 1, 1, 1, ErrOverloaded},
		{"full, room in queue: waits then times out", 1, 2, 1, 0, ErrOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New(tt.limit, tt.queue, 50*time.Millisecond)
			var releases []func()
			for range tt.held {
				r, err := g.Acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				releases = append(releases, r)
			}
			var wg sync.WaitGroup
			for range tt.waiters {
				wg.Go(func() { g.Acquire(context.Background()) })
			}
			for g.Waiting() < tt.waiters {
				time.Sleep(time.Millisecond)
			}
			start := time.Now()
			r, err := g.Acquire(context.Background())
			took := time.Since(start)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				r()
			}
			if tt.waiters > 0 && took > 20*time.Millisecond {
				t.Errorf("refusal with a full queue took %v; it must be immediate", took)
			}
			wg.Wait()
			for _, r := range releases {
				r()
			}
			if g.InFlight() != 0 || g.Waiting() != 0 {
				t.Errorf("after release: %d in flight, %d waiting", g.InFlight(), g.Waiting())
			}
		})
	}
}

func TestGateHandsSlotToWaiter(t *testing.T) {
	g := New(1, 1, time.Second)
	release, err := g.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		r, err := g.Acquire(context.Background())
		if err == nil {
			r()
		}
		done <- err
	}()
	for g.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

func TestGateContextEnds(t *testing.T) {
	g := New(1, 1, time.Minute)
	release, _ := g.Acquire(context.Background())
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
}
