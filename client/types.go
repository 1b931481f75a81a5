package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ocrgate/ocrgate/api"
)

// OCRResult is the answer of POST /ocr, for an image or a document: an image's answer
// (api.OCRResult: Regions, Rotation) or a document's (api.DocumentResult: Pages), read into one
// value so that a call need not know which it sent. The fields are api's; this type adds what the
// call itself learned.
type OCRResult struct {
	api.OCRResult
	// Pages is set instead of Regions when the service read a document (a PDF or a multi-page
	// TIFF): one entry per selected page, in document order.
	Pages []Page `json:"pages,omitempty"`

	// RequestID is the X-Request-ID the service answered with (the one you sent, or its own).
	RequestID string `json:"-"`
	// Raw is the answer as the service sent it, fields this version of the client does not know
	// included.
	Raw json.RawMessage `json:"-"`
}

// The wire types, as package api defines them (see there for each field).
type (
	ImageInfo      = api.ImageInfo
	Region         = api.Region
	Word           = api.Word
	Shape          = api.BoundingShape
	Point          = api.Point
	Page           = api.Page
	PageError      = api.PageError
	HiddenText     = api.HiddenText
	TextLayerCheck = api.TextLayerCheck
)

// FailedPages returns the pages of a document that could not be read, in order.
func (r *OCRResult) FailedPages() []Page {
	var out []Page
	for _, p := range r.Pages {
		if p.Error != nil {
			out = append(out, p)
		}
	}
	return out
}

// BatchItem is one result of OCRBatch: the image's answer, or the error the service gave it.
type BatchItem struct {
	Result *OCRResult
	Err    *Error
}

// Extraction is the answer of POST /ocr-json: the object the chat model filled, valid against the
// template or schema, and what the call cost.
type Extraction struct {
	Object       json.RawMessage // the filled object, as the service sent it
	OCRTime      time.Duration   // X-OCR-Time
	ChatTime     time.Duration   // X-Chat-Time
	ChatAttempts int             // X-Chat-Attempts: 1 + re-asks
	// FailedPages are the document's pages that could not be read (X-Failed-Pages): the chat
	// model filled the object from the others.
	FailedPages []int
	RequestID   string
}

// Decode unmarshals the filled object into v.
func (e *Extraction) Decode(v any) error { return json.Unmarshal(e.Object, v) }

// Error is an answer of the service other than 2xx. Switch on Code (stable) rather than on
// Message (for people); docs/api.md and GET /openapi.json list the codes of each status.
type Error struct {
	Status     int           // HTTP status
	Code       string        // the API's code, such as "overloaded" or "unsupported_image_format"
	Message    string        // the API's message
	RequestID  string        // X-Request-ID of the failed call, to find it in the service's log
	RetryAfter time.Duration // the service's Retry-After, when it sent one
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("ocrgate: %d %s", e.Status, e.Message)
	}
	return fmt.Sprintf("ocrgate: %d %s: %s", e.Status, e.Code, e.Message)
}

// retryable reports whether the same call may succeed later: overload always, unavailability
// when the service says when (a 503 without Retry-After, such as no chat model configured, will
// not heal by itself).
func (e *Error) retryable() bool {
	return e.Status == http.StatusTooManyRequests || (e.Status == http.StatusServiceUnavailable && e.RetryAfter > 0)
}

// newError reads an error answer. A body that is not ocrgate's {"error", "code"} (a proxy's page)
// is not quoted: the status text stands in for it.
func newError(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID")}
	var b struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	if json.Unmarshal(body, &b) == nil && b.Code != "" {
		e.Code, e.Message = b.Code, b.Error
	} else {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = max(time.Until(t), time.Second)
		}
	}
	return e
}
