package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/work"
)

// requestIDHeader carries a request's ID in and out: accepted from the caller (so one ID follows a
// request across services) or generated, and always echoed back.
const requestIDHeader = "X-Request-ID"

// ctxLogger is the Locals key of the request's logger (the server's, with request_id added).
type ctxLogger struct{}

// logger returns the request's logger.
func (s *Server) logger(c *fiber.Ctx) *slog.Logger {
	if l, ok := c.Locals(ctxLogger{}).(*slog.Logger); ok {
		return l
	}
	return s.log
}

// observe is the outermost middleware: request ID, the request's logger, panics turned into 500
// JSON errors, errors rendered here (so the status is known), the access log line and the
// request metrics.
func (s *Server) observe(c *fiber.Ctx) (err error) {
	start := time.Now()
	id := c.Get(requestIDHeader)
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Set(requestIDHeader, id)
	log := s.log.With("request_id", id)
	c.Locals(ctxLogger{}, log)
	// The request's context ends when its client goes away (see watch) or the server stops
	// working on requests (Options.Context, at shutdown).
	ctx, cancel := context.WithCancelCause(s.baseContext())
	defer cancel(nil)
	// Every unit of the request's work that panics (an image, a page, a batch, a decode) fails
	// alone and is reported here: logged with its stack and the request ID, and counted.
	ctx = work.WithReporter(ctx, func(p *work.Panic) {
		log.Error("panic recovered", "panic", p, "stack", string(p.Stack))
		s.metrics.Panic(p.Unit)
	})
	c.SetUserContext(ctx)
	c.Locals(ctxCancel{}, cancel)

	// The handler is a unit of its own: a panic outside the units it runs is answered as a
	// plain 500 internal_error; the details are in the log only.
	err = work.Do(ctx, "request handler", func() error { return c.Next() })
	unwatch(c) // before the answer is written and the server reads the connection again
	cause := context.Cause(ctx)
	if err != nil {
		if herr := s.errors(c, err); herr != nil {
			return herr
		}
	}
	bytesIn := s.bodyDone(c)
	// Requests that matched no route share one label: the catch-all's route is "/", which is
	// also the demo page's, and the paths themselves are the caller's words (and unbounded).
	route := "unmatched"
	if r := c.Route(); r != nil && c.Locals(ctxUnmatched{}) == nil {
		route = r.Path
	}
	status, took := c.Response().StatusCode(), time.Since(start)
	canceled := ""
	switch {
	case errors.Is(cause, ErrClientGone):
		canceled = "client_gone"
	case errors.Is(cause, ErrShuttingDown):
		canceled = "shutdown"
	}
	s.metrics.Request(route, status, took)
	if canceled != "" {
		s.metrics.Canceled(canceled)
	}
	level := slog.LevelInfo
	switch route {
	case "/ping", "/healthz", "/readyz", "/metrics":
		level = slog.LevelDebug // probes and scrapes would drown the log
	}
	attrs := []any{"method", c.Method(), "path", c.Path(), "status", status, "took_ms", took.Milliseconds(), "bytes_in", bytesIn}
	if canceled != "" {
		attrs = append(attrs, "canceled", canceled)
	}
	log.Log(context.Background(), level, "request", attrs...)
	return nil
}

// validRequestID accepts caller IDs that are short and printable, so they are safe in logs.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keyring holds the SHA-256 of every accepted API key. Comparing digests in constant time means
// neither a key's content nor its length leaks through response timing.
type keyring [][sha256.Size]byte

func newKeyring(keys []string) keyring {
	var k keyring
	for _, key := range keys {
		if key = strings.TrimSpace(key); key != "" {
			k = append(k, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

// allows reports whether token is one of the keys. Every key is compared, match or not.
func (k keyring) allows(token string) bool {
	sum := sha256.Sum256([]byte(token))
	ok := 0
	for i := range k {
		ok |= subtle.ConstantTimeCompare(sum[:], k[i][:])
	}
	return ok == 1
}

// requireKey guards the API routes when keys are configured: a missing or unknown bearer token is
// a 401 JSON error.
func (s *Server) requireKey(c *fiber.Ctx) error {
	if len(s.keys) == 0 {
		return c.Next()
	}
	auth := c.Get(fiber.HeaderAuthorization)
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		token, ok = strings.CutPrefix(auth, "bearer ")
	}
	if !ok || !s.keys.allows(strings.TrimSpace(token)) {
		s.metrics.Rejected("unauthorized")
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="ocrgate"`)
		return &apiError{status: fiber.StatusUnauthorized, code: "unauthorized",
			msg: "missing or invalid API key; send Authorization: Bearer <key>"}
	}
	return c.Next()
}
