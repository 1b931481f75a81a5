package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/sashabaranov/go-openai"
)

// Errors for the HTTP layer to map to statuses. Every error this package returns either wraps
// one of these, or wraps context.DeadlineExceeded / context.Canceled, or is a programming error
// (nil arguments). Their messages are written for the caller of /ocr-json: they never contain
// the API key, the server's address or the model's answer.
var (
	// ErrNotConfigured: no chat model is configured (503).
	ErrNotConfigured = errors.New("the chat model is not configured: set CHAT_BOT_MODEL and CHAT_BOT_BASEURL (and CHAT_BOT_APIKEY if the server needs a key)")
	// ErrInvalidSchema: the caller's schema cannot be used (422); the message says why.
	ErrInvalidSchema = errors.New("invalid schema")
	// ErrUnknownTemplate: the request names no built-in template (422).
	ErrUnknownTemplate = errors.New("unknown template")
	// ErrBadAnswer: the chat model answered, but not with a usable object (502): not JSON, not
	// valid against the schema after the re-asks, cut off at the output limit, refused, filtered,
	// or no choices at all.
	ErrBadAnswer = errors.New("the chat model gave no usable answer")
	// ErrAuth: the chat model server rejected the API key (HTTP 401 or 403) (502).
	ErrAuth = errors.New("the chat model server rejected the API key; check CHAT_BOT_APIKEY")
	// ErrUnreachable: no connection to the chat model server: refused, host not found, TLS
	// failure (503, like any dependency that is not ready).
	ErrUnreachable = errors.New("cannot reach the chat model server; check CHAT_BOT_BASEURL")
	// ErrAnswerTooLarge: the chat model server's response was larger than
	// Options.MaxAnswerBytes (502); it was not read to its end nor sent back.
	ErrAnswerTooLarge = errors.New("the chat model's answer is larger than the service accepts")
	// ErrUpstream: the chat model server answered with an error status other than 401/403, or
	// with something that is not a chat completion (502). The message carries the status and the
	// server's own message, shortened.
	ErrUpstream = errors.New("the chat model server answered with an error")
)

// chatError is an error with a message chosen for the caller, a sentinel to classify it by and
// the underlying cause for the log. Error() is only the message; the cause, which may quote the
// server's response, appears in LogValue with the API key removed.
type chatError struct {
	msg   string
	kind  error // a sentinel above, or context.DeadlineExceeded / context.Canceled
	cause error
	key   string // redacted from the cause when logged
}

func (e *chatError) Error() string { return e.msg }

func (e *chatError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// LogValue logs the message and, with the API key cut out, the cause.
func (e *chatError) LogValue() slog.Value {
	if e.cause == nil {
		return slog.StringValue(e.msg)
	}
	cause := e.cause.Error()
	if e.key != "" {
		cause = strings.ReplaceAll(cause, e.key, "[redacted]")
	}
	return slog.GroupValue(slog.String("msg", e.msg), slog.String("cause", truncate(cause, 2000)))
}

// classify turns an error from the client into one of ours. ctx is the request's context: when
// it has ended, that is the reason, whatever error the transport made of it.
func (e *Extractor) classify(ctx context.Context, err error, attempt int) error {
	ce := &chatError{cause: err, key: e.opt.APIKey}
	of := e.attemptOf(attempt)
	var (
		reqErr *openai.RequestError
		apiErr *openai.APIError
		netErr net.Error
		dnsErr *net.DNSError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, errAnswerTooLarge):
		ce.kind = ErrAnswerTooLarge
		ce.msg = fmt.Sprintf("the chat model's answer is larger than %d bytes (OCRGATE_CHAT_MAX_ANSWER_BYTES)%s", e.opt.MaxAnswerBytes, of)
	case ctx.Err() != nil:
		ce.kind = ctx.Err()
		if errors.Is(ce.kind, context.DeadlineExceeded) {
			ce.msg = "the chat model did not answer before the request deadline" + of
		} else {
			ce.msg = "the request was cancelled while waiting for the chat model" + of
		}
	case errors.As(err, &reqErr):
		// A failure status whose body is not an OpenAI error object.
		ce.msg, ce.kind = e.statusError(reqErr.HTTPStatusCode, "")
	case errors.As(err, &apiErr):
		ce.msg, ce.kind = e.statusError(apiErr.HTTPStatusCode, apiErr.Message)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		ce.kind = context.DeadlineExceeded
		ce.msg = fmt.Sprintf("the chat model did not answer within %s (the chat timeout)%s", e.opt.Timeout, of)
	case errors.As(err, &dnsErr):
		ce.kind, ce.msg = ErrUnreachable, ErrUnreachable.Error()+" (host not found)"
	case errors.Is(err, syscall.ECONNREFUSED):
		ce.kind, ce.msg = ErrUnreachable, ErrUnreachable.Error()+" (connection refused)"
	case errors.As(err, &synErr) || errors.As(err, &typErr):
		ce.kind = ErrUpstream
		ce.msg = "the chat model server answered with something that is not a chat completion; check CHAT_BOT_BASEURL (it must end in the API version, such as /v1)"
	case errors.As(err, &netErr):
		ce.kind, ce.msg = ErrUnreachable, ErrUnreachable.Error()+" (network error)"
	default:
		ce.kind, ce.msg = ErrUpstream, "the chat model request failed"+of
	}
	return ce
}

// statusError names an HTTP error from the chat model server: a message for the caller and the
// kind of failure (ErrAuth or ErrUpstream).
func (e *Extractor) statusError(status int, serverMsg string) (msg string, kind error) {
	detail := ""
	if serverMsg != "" {
		msg := serverMsg
		if e.opt.APIKey != "" {
			msg = strings.ReplaceAll(msg, e.opt.APIKey, "[redacted]")
		}
		detail = ": " + truncate(msg, 200)
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		// The server's message is left out: some quote the key they were sent.
		return fmt.Sprintf("the chat model server rejected the API key (HTTP %d); check CHAT_BOT_APIKEY", status), ErrAuth
	case http.StatusNotFound:
		return fmt.Sprintf("the chat model server answered HTTP 404; check CHAT_BOT_MODEL (%q) and CHAT_BOT_BASEURL (it must end in the API version, such as /v1)%s", e.opt.Model, detail), ErrUpstream
	}
	return fmt.Sprintf("the chat model server answered HTTP %d%s", status, detail), ErrUpstream
}

func (e *Extractor) attemptOf(attempt int) string {
	if e.opt.Reasks == 0 {
		return ""
	}
	return fmt.Sprintf(" (attempt %d of %d)", attempt, e.opt.Reasks+1)
}

// badAnswerf makes an ErrBadAnswer with a message.
func badAnswerf(format string, args ...any) error {
	return &chatError{kind: ErrBadAnswer, msg: fmt.Sprintf(format, args...)}
}
