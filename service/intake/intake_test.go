package intake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// ledger is a Budget that counts what it holds and refuses beyond a limit.
type ledger struct {
	held, peak, limit int64
}

var errFull = errors.New("full")

func (l *ledger) Acquire(_ context.Context, n int64) (func(), error) {
	if l.limit > 0 && l.held+n > l.limit {
		return nil, errFull
	}
	l.held += n
	l.peak = max(l.peak, l.held)
	return func() { l.held -= n }, nil
}

func TestRead(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	tests := []struct {
		name            string
		r               io.Reader
		declared, limit int64
		budget          int64
		want            int
		err             error
	}{
		{"small", strings.NewReader("hello"), 5, 100, 0, 5, nil},
		{"empty", strings.NewReader(""), 0, 100, 0, 0, nil},
		{"grows to the declared length", bytes.NewReader(big), int64(len(big)), 4 << 20, 0, len(big), nil},
		{"chunked within the limit", iotest.HalfReader(bytes.NewReader(big)), -1, 4 << 20, 0, len(big), nil},
		{"declared over the limit", bytes.NewReader(big), int64(len(big)), 1 << 20, 0, 0, ErrTooLarge},
		{"chunked over the limit", bytes.NewReader(big), -1, 1 << 20, 0, 0, ErrTooLarge},
		{"cut short", bytes.NewReader(big[:1000]), 5000, 1 << 20, 0, 0, ErrIncomplete},
		{"broken reader", iotest.ErrReader(errors.New("reset")), 5000, 1 << 20, 0, 0, ErrIncomplete},
		{"budget refuses the growth", bytes.NewReader(big), int64(len(big)), 4 << 20, 1 << 20, 0, errFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{limit: tt.budget}
			b, err := Read(context.Background(), tt.r, tt.declared, tt.limit, l)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err != nil {
				if l.held != 0 {
					t.Errorf("a failed read still holds %d bytes", l.held)
				}
				return
			}
			if len(b.Data) != tt.want {
				t.Fatalf("read %d bytes, want %d", len(b.Data), tt.want)
			}
			if l.held != int64(cap(b.Data)) {
				t.Errorf("holds %d bytes for a buffer of %d", l.held, cap(b.Data))
			}
			b.Release()
			b.Release()
			if l.held != 0 {
				t.Errorf("released body still holds %d bytes", l.held)
			}
		})
	}
}

// TestHeldFollowsWhatArrived: a body announced at 20 MiB of which 300 KiB came holds about
// twice that, not 20 MiB.
func TestHeldFollowsWhatArrived(t *testing.T) {
	l := &ledger{}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := Read(context.Background(), pr, 20<<20, 20<<20, l)
		done <- err
	}()
	pw.Write(make([]byte, 300<<10))
	pw.CloseWithError(errors.New("client gone"))
	if err := <-done; !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v", err)
	}
	if l.peak > 1<<20 {
		t.Errorf("300 KiB of a 20 MiB body held %d bytes at the peak", l.peak)
	}
}

// TestSlowBodyHoldsLittle: a body announced at 20 MiB of which 9 KiB came (past what an HTTP
// server reads before its handler runs) holds the first step, not a receipt's worth.
func TestSlowBodyHoldsLittle(t *testing.T) {
	l := &ledger{}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := Read(context.Background(), pr, 20<<20, 20<<20, l)
		done <- err
	}()
	pw.Write(make([]byte, 9<<10))
	pw.CloseWithError(errors.New("client gone"))
	if err := <-done; !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v", err)
	}
	if l.peak > 32<<10 {
		t.Errorf("9 KiB of a 20 MiB body held %d KiB at the peak", l.peak>>10)
	}
}

// TestReadStoppedForItsContext: a read blocked when ctx ends, which the caller makes return then
// (a server moves its connection's deadline; here the pipe breaks), is ctx's error, not a body
// cut short or a timeout; a form's too.
func TestReadStoppedForItsContext(t *testing.T) {
	for _, form := range []bool{false, true} {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		context.AfterFunc(ctx, func() { pr.CloseWithError(errors.New("i/o timeout")) })
		done := make(chan error, 1)
		go func() {
			var err error
			if form {
				_, err = ReadForm(ctx, pr, 1<<20, "b", FormLimits{Body: 1 << 20, FileField: "file", Files: 1 << 20, MaxFiles: 1}, &ledger{})
			} else {
				_, err = Read(ctx, pr, 1<<20, 1<<20, &ledger{})
			}
			done <- err
		}()
		pw.Write([]byte("--b\r\n"))
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("form %v: err %v, want context.Canceled", form, err)
		}
	}
}
