// Package intake reads request bodies within a memory budget. An HTTP head announces a body's
// size; nothing is allocated for it on that word alone. The body is read into a buffer that grows
// as bytes really arrive, each growth admitted by the budget before it is allocated, so that a
// client holds at most about twice what it has sent, and a head that announces 20 MiB and sends
// nothing holds nothing. A body over the limit is refused as soon as that is known: at once when
// its length is announced, at the first byte past the limit otherwise (chunked bodies).
package intake

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
)

// Budget admits memory before it is allocated: Acquire waits until cost bytes fit (or refuses),
// and the returned release gives them back.
type Budget interface {
	Acquire(ctx context.Context, cost int64) (release func(), err error)
}

// Errors of Read. A budget's own refusal (admission.ErrOverloaded) and ctx's errors are returned
// as they are.
var (
	// ErrTooLarge: the body is longer than the limit.
	ErrTooLarge = errors.New("intake: body over the limit")
	// ErrIncomplete: the client stopped sending before the end of the body (it closed the
	// connection, or the body's framing broke).
	ErrIncomplete = errors.New("intake: body cut short")
	// ErrTimeout: the body did not arrive within the server's read timeout.
	ErrTimeout = errors.New("intake: body not received in time")
)

// firstStep is the first buffer a body gets: a client that has sent little holds little, so the
// connections a server keeps open (512 by default) cannot take the bodies' budget by sending a
// few bytes each (512 × 32 KiB is 16 MiB). A receipt's body grows to its size in a few doublings,
// microseconds of copying beside its decode.
const firstStep = 32 << 10

// Body is a request body read whole, with the admission of its memory.
type Body struct {
	Data    []byte
	release func()
}

// Len is the body's length in bytes.
func (b *Body) Len() int64 { return int64(len(b.Data)) }

// Release gives the body's memory admission back; Data must not be used by anything the
// admission was meant to cover afterwards. Calling it again does nothing.
func (b *Body) Release() {
	if b != nil && b.release != nil {
		b.release()
		b.release = nil
	}
}

// Read reads a whole body from r: declared bytes, or, when declared is negative (a chunked
// body), up to EOF. It stops when ctx ends, between reads, or at once when the caller makes a
// blocked read return then (a server moves its connection's read deadline): the read's error
// is then reported as ctx's. A body longer than limit is refused with ErrTooLarge before anything is read
// when its length is declared, otherwise when the limit is passed. The buffer grows by doubling,
// from 32 KiB up to the declared length (or the limit), each growth admitted by budget (nil:
// none) before it is allocated. A budget must admit at least the limit (and a byte) for a
// body of that size to be read.
func Read(ctx context.Context, r io.Reader, declared, limit int64, budget Budget) (*Body, error) {
	if declared > limit {
		return nil, ErrTooLarge
	}
	want := declared
	if want < 0 {
		want = limit + 1 // one byte more than allowed tells a chunked body over the limit
	}
	if want == 0 {
		return &Body{Data: []byte{}}, nil
	}
	acquire := func(n int64) (func(), error) {
		if budget == nil {
			return func() {}, nil
		}
		return budget.Acquire(ctx, n)
	}
	// The admission grows with the buffer, by what each growth adds; the buffer it replaces is
	// garbage once copied.
	var releases []func()
	releaseAll := func() {
		for _, r := range releases {
			r()
		}
	}
	grow := func(buf []byte, size int64) ([]byte, error) {
		rel, err := acquire(size - int64(cap(buf)))
		if err != nil {
			return nil, err
		}
		releases = append(releases, rel)
		grown := make([]byte, len(buf), size)
		copy(grown, buf)
		return grown, nil
	}
	buf, err := grow(nil, min(want, firstStep))
	if err != nil {
		return nil, err
	}
	empty := 0 // reads in a row that returned nothing
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= want {
				break
			}
			if buf, err = grow(buf, min(want, 2*int64(cap(buf)))); err != nil {
				releaseAll()
				return nil, err
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n == 0 && err == nil {
			if empty++; empty > 100 {
				err = io.ErrNoProgress
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			releaseAll()
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr // the read was stopped for ctx (see Read)
			}
			return nil, readError(err)
		}
		if err := ctx.Err(); err != nil {
			releaseAll()
			return nil, err
		}
	}
	switch {
	case declared >= 0 && int64(len(buf)) < declared:
		releaseAll()
		return nil, ErrIncomplete
	case int64(len(buf)) > limit:
		releaseAll()
		return nil, ErrTooLarge
	}
	return &Body{Data: buf, release: sync.OnceFunc(releaseAll)}, nil
}

// readError classifies an error of the body's reader.
func readError(err error) error {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout
	}
	return ErrIncomplete
}
