package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/framing"
	"github.com/ocrgate/ocrgate/service/intake"
)

// The server reads request bodies itself (fiber.Config.StreamRequestBody): fasthttp, left to
// read them, allocates the whole announced Content-Length as soon as a head arrives, before
// routing, auth or admission, so a few kilobytes of heads could make it allocate gigabytes. With
// streaming, fasthttp reads at most the first 8 KiB of a body before a handler runs; the API
// routes check the key, the content type and the gate first, then read the body through
// package intake, whose buffer grows only as bytes arrive and only as the body memory budget
// (Options.BodyMemory) admits.

// prefetched is what fasthttp reads of a body before the handler runs (readBodyWithStreaming):
// a body no longer than this is already whole when the handler starts.
const prefetched = 8 << 10

// ctxBody is the Locals key of the request's body once read (a heldBody: an *intake.Body or an
// *intake.Form).
type ctxBody struct{}

// heldBody is a body read whole, holding its memory admission until the request ends.
type heldBody interface {
	Len() int64
	Release()
}

// body reads the request's body, once, within MaxBodyBytes and the body memory budget, until
// ctx ends (see interruptReads). The memory's admission is given back when the request ends (see
// observe).
func (s *Server) body(ctx context.Context, c *fiber.Ctx) ([]byte, error) {
	if b, ok := c.Locals(ctxBody{}).(*intake.Body); ok {
		return b.Data, nil
	}
	r, declared := bodyStream(c)
	stop := interruptReads(ctx, c)
	b, err := intake.Read(ctx, r, declared, int64(s.opt.MaxBodyBytes), s.bodyBudget())
	stop()
	if err != nil {
		return nil, s.bodyError(err)
	}
	c.Locals(ctxBody{}, b)
	s.watch(c)
	return b.Data, nil
}

// form reads the request's multipart/form-data body, once, within lim and the body memory
// budget, until ctx ends, as body does a body of another kind.
func (s *Server) form(ctx context.Context, c *fiber.Ctx, boundary string, lim intake.FormLimits) (*intake.Form, error) {
	if f, ok := c.Locals(ctxBody{}).(*intake.Form); ok {
		return f, nil
	}
	r, declared := bodyStream(c)
	stop := interruptReads(ctx, c)
	f, err := intake.ReadForm(ctx, r, declared, boundary, lim, s.bodyBudget())
	stop()
	if err != nil {
		return nil, s.bodyError(err)
	}
	c.Locals(ctxBody{}, f)
	s.watch(c)
	return f, nil
}

// interruptReads makes a read of the request's connection that is blocked when ctx ends return
// then, with an error, by moving the connection's read deadline to the past: a client that has
// sent part of its body and waits must not keep its request (and a shutdown) waiting until the
// read timeout, past the shutdown's grace. The request then fails with ctx's error (intake
// reports it for the read error), and its connection, its body unread, is closed after the
// answer (bodyDone). stop ends the arrangement; once it returns, the deadline is not touched.
func interruptReads(ctx context.Context, c *fiber.Ctx) (stop func()) {
	conn := c.Context().Conn()
	if conn == nil {
		return func() {}
	}
	moved := make(chan struct{})
	cancel := context.AfterFunc(ctx, func() {
		defer close(moved)
		_ = conn.SetReadDeadline(time.Unix(1, 0)) // a read error is what ends the read
	})
	return func() {
		if !cancel() {
			<-moved // started: it is done before the caller touches the connection again
		}
	}
}

// bodyStream is what the request's body is read from, and its announced length (-1: chunked).
func bodyStream(c *fiber.Ctx) (io.Reader, int64) {
	declared := int64(c.Request().Header.ContentLength()) // -1: chunked; -2: no body
	if declared == -2 {
		declared = 0
	}
	if stream := c.Context().RequestBodyStream(); stream != nil {
		return stream, declared
	}
	// No stream: the request came with no body framing at all (or its body is in memory
	// already, outside a server's connection).
	data := c.Request().Body()
	return bytes.NewReader(data), int64(len(data))
}

func (s *Server) bodyBudget() intake.Budget {
	if s.bodies != nil {
		return s.bodies
	}
	return nil
}

// bodyError counts and words the budget's refusal of a body; other errors are classify's.
func (s *Server) bodyError(err error) error {
	if errors.Is(err, admission.ErrOverloaded) {
		s.rejected("body_memory")
		return errBodiesOverloaded
	}
	return err
}

// ctxWatch is the Locals key of the request's watch (see watch): its stop function.
type ctxWatch struct{}

// ctxCancel is the Locals key of the cancel function of the request's context (see observe).
type ctxCancel struct{}

// watch cancels the request's context, with ErrClientGone as its cause, when its client closes
// the connection while the request is worked on (framing.Watch; only on a guarded connection,
// once the request is read whole). The watch ends with the request (unwatch).
func (s *Server) watch(c *fiber.Ctx) {
	cancel, ok := c.Locals(ctxCancel{}).(context.CancelCauseFunc)
	if !ok {
		return
	}
	gone, stop := framing.Watch(c.Context().Conn())
	if gone == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-gone:
			cancel(ErrClientGone)
		case <-done:
		}
	}()
	c.Locals(ctxWatch{}, func() { stop(); close(done) })
}

// unwatch ends the request's watch, if it has one.
func unwatch(c *fiber.Ctx) {
	if stop, ok := c.Locals(ctxWatch{}).(func()); ok {
		stop()
		c.Locals(ctxWatch{}, nil)
	}
}

// ErrClientGone is the cause of a request's cancellation when its client closed the connection.
var ErrClientGone = errors.New("the client closed the connection")

// bodyDone ends the request's body: its memory admission goes back, and when the body was not
// read to its end the connection is closed after the answer, since what is left of the body
// would otherwise be read as the next request.
func (s *Server) bodyDone(c *fiber.Ctx) int64 {
	if b, ok := c.Locals(ctxBody{}).(heldBody); ok {
		b.Release()
		return b.Len()
	}
	if n := c.Request().Header.ContentLength(); n == -1 || n > prefetched {
		c.Response().Header.SetConnectionClose()
	}
	return 0
}

// errBodiesOverloaded: the bodies being received hold all the memory set aside for them.
var errBodiesOverloaded = &apiError{status: fiber.StatusTooManyRequests, code: "overloaded",
	msg: "the service is receiving as many request bodies as it has memory for; retry shortly", retryAfter: 1}
