package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/framing"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/intake"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/tiffdec"
	"github.com/ocrgate/ocrgate/service/work"
)

// apiError is an error a handler has already classified: it carries its status, a stable code for
// machines and a message for people.
type apiError struct {
	status     int
	code       string
	msg        string
	retryAfter int // seconds; set for 429/503
	// runtimeKind labels ocrgate_runtime_errors_total for a failure of the model runtime or the
	// chat model (unavailable, timeout, failed, chat); empty for everything else.
	runtimeKind string
}

// notReadyError is a failed readiness check (/readyz). Its answer names only the stable reasons of
// the ocr.NotReadyErrors inside, never their details: a probe is open to anyone, and runtime
// errors carry server messages and addresses.
type notReadyError struct{ err error }

func (e *notReadyError) Error() string { return "not ready: " + e.err.Error() }
func (e *notReadyError) Unwrap() error { return e.err }

func (e *apiError) Error() string { return e.msg }

func badRequest(code, format string, args ...any) *apiError {
	return &apiError{status: fiber.StatusBadRequest, code: code, msg: fmt.Sprintf(format, args...)}
}

// errChatOverloaded: every chat slot is busy and the chat queue is full (or the wait ran out).
var errChatOverloaded = &apiError{status: fiber.StatusTooManyRequests, code: "chat_overloaded",
	msg: "the chat model is at capacity; retry shortly", retryAfter: 5}

// tooCostly is the 413 for a request whose memory cost is over the per-request limit.
func tooCostly(h imaging.Header, cost, limit int64) *apiError {
	w, ht := h.UprightSize()
	kind := h.Format
	if h.Progressive {
		kind = "progressive " + kind
	}
	return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "image_too_large",
		msg: fmt.Sprintf("processing this %d×%d %s image needs about %d MiB of memory; the limit is %d MiB per request",
			w, ht, kind, (cost+(1<<20)-1)>>20, limit>>20)}
}

// errTooManyConnections is the answer of a connection over Options.MaxConnections.
var errTooManyConnections = &apiError{status: fiber.StatusServiceUnavailable, code: "too_many_connections",
	msg: "the service has as many connections open as it serves; retry shortly", retryAfter: 1}

// refusal is the whole HTTP/1.1 response of e, written by the framing guard to a connection it
// does not hand to the server (so it has no request ID, and closes the connection).
func refusal(e *apiError) []byte {
	body, _ := json.Marshal(api.Error{Error: e.msg, Code: e.code})
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n",
		e.status, utils.StatusMessage(e.status), len(body))
	if e.retryAfter > 0 {
		head += fmt.Sprintf("Retry-After: %d\r\n", e.retryAfter)
	}
	return append([]byte(head+"\r\n"), body...)
}

// classify maps any error a handler returns to its answer. It is the single place where errors
// become statuses: handlers return errors, they never pick a status for a domain failure themselves.
func classify(err error) *apiError {
	var (
		ae *apiError
		nr *notReadyError
		fe *fiber.Error
		fr *framing.Error
		tc *document.TooComplexError
		pc *docfile.PageCountError
		wp *work.Panic
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &wp):
		return errInternal
	case errors.Is(err, cpubudget.ErrExceeded):
		// Built from the estimate or the CPU time used, and the limit: numbers only.
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "cpu_budget_exceeded", msg: err.Error()}
	case errors.As(err, &fr):
		return &apiError{status: fr.Status, code: fr.Code, msg: fr.Msg}
	case errors.As(err, &nr):
		reasons := ocr.NotReadyReasons(nr.err)
		if len(reasons) == 0 {
			reasons = []string{"runtime_not_ready"}
		}
		return &apiError{status: fiber.StatusServiceUnavailable, code: "not_ready", msg: "not ready: " + strings.Join(reasons, "; "), retryAfter: 5}
	case errors.Is(err, intake.ErrTooLarge):
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "body_too_large", msg: "request body is larger than the server accepts"}
	case errors.Is(err, intake.ErrIncomplete):
		return &apiError{status: fiber.StatusBadRequest, code: "incomplete_body", msg: "the request body ended before its announced length, or its chunks are malformed"}
	case errors.Is(err, intake.ErrMalformed):
		// The reason is intake's own words; nothing of the body is quoted.
		return &apiError{status: fiber.StatusBadRequest, code: "invalid_multipart", msg: "the request's " + err.Error()}
	case errors.Is(err, intake.ErrTimeout):
		return &apiError{status: fiber.StatusRequestTimeout, code: "timeout", msg: "the request was not received within the server's read timeout"}
	case errors.Is(err, jobs.ErrNotFound):
		return &apiError{status: fiber.StatusNotFound, code: "job_not_found", msg: "no such job"}
	case errors.Is(err, jobs.ErrTooManyJobs):
		return &apiError{status: fiber.StatusTooManyRequests, code: "too_many_jobs", msg: "this key has as many unfinished jobs as it may; wait for one to finish", retryAfter: 30}
	case errors.Is(err, jobs.ErrStoreFull):
		return &apiError{status: fiber.StatusTooManyRequests, code: "job_store_full", msg: "the job store is full; retry when running jobs have finished", retryAfter: 60}
	case errors.Is(err, jobs.ErrTooLarge):
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "document_too_large", msg: err.Error()}
	case errors.Is(err, jobs.ErrTooMany):
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "too_many_pages", msg: err.Error()}
	case errors.Is(err, jobs.ErrUnavailable):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "jobs_unavailable", msg: "the job store is unavailable; retry shortly", retryAfter: 5}
	case errors.Is(err, admission.ErrOverloaded):
		return &apiError{status: fiber.StatusTooManyRequests, code: "overloaded", msg: "the service is at capacity; retry shortly", retryAfter: 1}
	case errors.As(err, &tc):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "document_too_complex", msg: tc.Error()}
	case errors.Is(err, docfile.ErrTooComplex):
		// Built from the CPU time used and the limit, numbers only.
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "document_too_complex", msg: err.Error()}
	case errors.Is(err, document.ErrAnswerTooLarge):
		// Built from the limit, a number.
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "answer_too_large", msg: err.Error()}
	case errors.Is(err, tiffdec.ErrUnsupported), errors.Is(err, tiffdec.ErrCorrupt):
		return tiffAnswer(err)
	case errors.As(err, &pc) && pc.Requested:
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "too_many_pages",
			msg: pc.Error() + `; select fewer with "pages", such as "1-10", or send ocr=auto, under which pages read from their text layer do not count`}
	case errors.As(err, &pc):
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "too_many_pages",
			msg: pc.Error() + `; select fewer with "pages", such as "1-10"`}
	case errors.Is(err, docfile.ErrTooLarge):
		// The messages of document's size errors are built from numbers: sizes and limits.
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "document_too_large", msg: err.Error()}
	case errors.Is(err, docfile.ErrDegenerate):
		// Built from the page's size and the render limits, numbers only.
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "degenerate_page", msg: err.Error()}
	case errors.Is(err, docfile.ErrEncrypted):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "encrypted_document",
			msg: "the document is encrypted (it needs a password to be opened); send it without the password protection"}
	case errors.Is(err, docfile.ErrCorrupt):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "corrupt_document",
			msg: "the document is corrupt or cut short, or it cannot be read within the PDF engine's limits"}
	case errors.Is(err, docfile.ErrUnsupported):
		return &apiError{status: fiber.StatusUnsupportedMediaType, code: "unsupported_image_format",
			msg: "a page is stored in a format ocrgate does not read"}
	case errors.Is(err, docfile.ErrNotDocument):
		return &apiError{status: fiber.StatusUnsupportedMediaType, code: "unsupported_image_format",
			msg: "image format not recognized; send JPEG, PNG, GIF, BMP, TIFF, WebP or PDF"}
	case errors.Is(err, docfile.ErrUnavailable):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "document_engine_unavailable",
			msg: "the PDF engine is not ready; images are read meanwhile, try the document again shortly", retryAfter: 5}
	case errors.Is(err, imaging.ErrTooLarge):
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "image_too_large", msg: err.Error()}
	case errors.Is(err, imaging.ErrUnsupportedFormat):
		return &apiError{status: fiber.StatusUnsupportedMediaType, code: "unsupported_image_format",
			msg: "image format not recognized; send JPEG, PNG, GIF, BMP, TIFF, WebP or PDF"}
	case errors.Is(err, imaging.ErrUndecodable):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "undecodable_image", msg: err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{status: fiber.StatusGatewayTimeout, code: "timeout", msg: "the request did not finish within its deadline", runtimeKind: "timeout"}
	// A unit of work that stopped when the request's context ended returns the context's cause
	// (work.All), which is the client's leaving itself, not context.Canceled.
	case errors.Is(err, context.Canceled), errors.Is(err, ErrClientGone):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "canceled", msg: "the request was canceled", retryAfter: 1}
	case errors.Is(err, ocr.ErrRuntimeUnavailable):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "runtime_unavailable", msg: "the model runtime is not ready; try again shortly", retryAfter: 5, runtimeKind: "unavailable"}
	case errors.Is(err, ocr.ErrModelMissing):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "model_missing", msg: "a model the pipeline needs is not loaded in the runtime", retryAfter: 30, runtimeKind: "unavailable"}
	case errors.Is(err, extract.ErrNotConfigured):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "chat_not_configured", msg: err.Error()}
	case errors.Is(err, extract.ErrInvalidSchema):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "invalid_schema", msg: err.Error()}
	case errors.Is(err, extract.ErrUnknownTemplate):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "unknown_template", msg: err.Error()}
	case errors.Is(err, extract.ErrUnreachable):
		return &apiError{status: fiber.StatusServiceUnavailable, code: "chat_unreachable", msg: err.Error(), retryAfter: 10, runtimeKind: "chat"}
	case errors.Is(err, extract.ErrAuth):
		return &apiError{status: fiber.StatusBadGateway, code: "chat_auth", msg: err.Error(), runtimeKind: "chat"}
	case errors.Is(err, extract.ErrAnswerTooLarge):
		return &apiError{status: fiber.StatusBadGateway, code: "chat_answer_too_large", msg: err.Error(), runtimeKind: "chat"}
	case errors.Is(err, extract.ErrBadAnswer):
		return &apiError{status: fiber.StatusBadGateway, code: "chat_bad_answer", msg: err.Error(), runtimeKind: "chat"}
	case errors.Is(err, extract.ErrUpstream):
		return &apiError{status: fiber.StatusBadGateway, code: "chat_upstream_error", msg: err.Error(), runtimeKind: "chat"}
	case errors.Is(err, ocr.ErrRuntimeFailed):
		return &apiError{status: fiber.StatusBadGateway, code: "runtime_error", msg: "the model runtime failed to process the request", runtimeKind: "failed"}
	case errors.As(err, &fe):
		return fiberError(fe)
	}
	return errInternal
}

// countRefusal counts an answer that is a refusal only classify can tell: a request (or an entry
// of an "images" array) over its CPU budget, whichever piece of its work found it out, is counted
// in ocrgate_rejected_total{reason="cpu_budget"}.
func (s *Server) countRefusal(ae *apiError) {
	if ae.code == "cpu_budget_exceeded" {
		s.rejected("cpu_budget")
	}
}

// errInternal answers what has no other answer, a recovered panic (*work.Panic) among it: a
// fixed message, the details in the log only.
var errInternal = &apiError{status: fiber.StatusInternalServerError, code: "internal_error", msg: "internal error"}

// fiberError covers the errors Fiber and fasthttp raise themselves (unknown route, body over the
// limit, a request fasthttp cannot parse, a read timeout, …). Their own messages are not used:
// fasthttp's quote the raw request, and that must not reach the caller (a proxy may have added
// credentials the caller never saw). Each status gets a fixed message.
func fiberError(fe *fiber.Error) *apiError {
	known := map[int][2]string{
		fiber.StatusNotFound:                    {"not_found", "no such endpoint"},
		fiber.StatusMethodNotAllowed:            {"method_not_allowed", "method not allowed on this endpoint"},
		fiber.StatusRequestEntityTooLarge:       {"body_too_large", "request body is larger than the server accepts"},
		fiber.StatusBadRequest:                  {"bad_request", "malformed HTTP request"},
		fiber.StatusRequestTimeout:              {"timeout", "the request was not received within the server's read timeout"},
		fiber.StatusRequestHeaderFieldsTooLarge: {"header_too_large", "request headers are larger than the server accepts"},
	}
	if fe.Code == fiber.StatusBadGateway {
		// Fiber turns a network error while reading a request (the client reset the
		// connection) into 502; it is the client's connection, not an upstream.
		return &apiError{status: fiber.StatusBadRequest, code: "bad_request", msg: "the request could not be read"}
	}
	if k, ok := known[fe.Code]; ok {
		return &apiError{status: fe.Code, code: k[0], msg: k[1]}
	}
	if fe.Code >= 500 {
		return &apiError{status: fe.Code, code: "http_" + strconv.Itoa(fe.Code), msg: "internal error"}
	}
	return &apiError{status: fe.Code, code: "http_" + strconv.Itoa(fe.Code), msg: utils.StatusMessage(fe.Code)}
}

// errorHandler is Fiber's ErrorHandler: it writes the JSON error and logs what a person operating
// the service needs (the caller's mistakes at debug level, our failures at error level).
func errorHandler(s *Server) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		// A head the framing guard refused reaches here as fasthttp's read error; the guard
		// knows what was wrong with it.
		if fr := framing.Rejection(c.Context().Conn()); fr != nil {
			err = fr
		}
		if (errors.Is(err, context.Canceled) || errors.Is(err, ErrShuttingDown)) && errors.Is(context.Cause(c.UserContext()), ErrShuttingDown) {
			err = errShuttingDown
		}
		ae := classify(err)
		s.countRefusal(ae)
		log := s.logger(c)
		if ae.runtimeKind != "" {
			s.metrics.RuntimeError(ae.runtimeKind)
		}
		level := slog.LevelDebug
		if ae.status >= 500 {
			level = slog.LevelError
			if ae.status == fiber.StatusServiceUnavailable || ae.status == fiber.StatusGatewayTimeout {
				level = slog.LevelWarn
			}
		}
		log.Log(c.UserContext(), level, "request failed", "method", c.Method(), "path", c.Path(),
			"status", ae.status, "code", ae.code, "err", err)
		if ae.retryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(ae.retryAfter))
		}
		return c.Status(ae.status).JSON(api.Error{Error: ae.msg, Code: ae.code})
	}
}
