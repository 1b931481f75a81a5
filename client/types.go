package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// OCRResult is the answer of POST /ocr: every text region with its box, and the whole text in
// reading order.
type OCRResult struct {
	Version   string    `json:"version"`
	ImageInfo ImageInfo `json:"image_info"`
	// Regions are the detected text boxes of an image, in reading order.
	Regions []Region `json:"regions"`
	// Pages is set instead of Regions when the service read a document (a PDF or a multi-page
	// TIFF): one entry per selected page, in document order.
	Pages []Page `json:"pages,omitempty"`
	// Text is every region's text in reading order: one line per row. For a document, the
	// pages' texts in order, separated by a form feed ("\f").
	Text string `json:"text"`
	// ProcessingTime is the seconds the request took in the service.
	ProcessingTime float64 `json:"processing_time"`

	// RequestID is the X-Request-ID the service answered with (the one you sent, or its own).
	RequestID string `json:"-"`
	// Raw is the answer as the service sent it, fields this version of the client does not know
	// included.
	Raw json.RawMessage `json:"-"`
}

// ImageInfo describes the image (or document) that was read.
type ImageInfo struct {
	Width  int    `json:"width,omitempty"`  // pixels, after EXIF orientation (images)
	Height int    `json:"height,omitempty"` //
	Bytes  int    `json:"bytes"`            // size of the file
	Format string `json:"format"`           // jpeg, png, gif, bmp, tiff, webp; pdf or tiff for documents
	Pages  int    `json:"pages,omitempty"`  // documents: pages in the document, selected or not
}

// Region is one detected text box.
type Region struct {
	RegionID      int     `json:"region_id"`
	Text          string  `json:"text"`
	Confidence    float64 `json:"confidence"` // recognition score in [0, 1]
	BoundingShape Shape   `json:"bounding_shape"`
	Direction     string  `json:"direction"` // horizontal, or vertical for boxes read turned 90°
	Language      string  `json:"language"`
	ReadingOrder  int     `json:"reading_order"` // 1-based
	Row           int     `json:"row"`           // 0-based
	// Words are the region's words, when the call asked for them (Words()).
	Words []Word `json:"words,omitempty"`
}

// Word is one word of a region: located from the recognizer's timesteps (OCR) or the glyph boxes
// of a PDF's text layer (confidence 1).
type Word struct {
	Text          string  `json:"text"`
	Confidence    float64 `json:"confidence"`
	BoundingShape Shape   `json:"bounding_shape"`
}

// Shape is a region's box: four points in original-image pixels, clockwise from the top-left
// corner of the text, and the angle of the text's top edge in degrees.
type Shape struct {
	Type     string  `json:"type"`
	Rotation float64 `json:"rotation"`
	Points   []Point `json:"points"`
}

// Point is a pixel position.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Page is one page of a document.
type Page struct {
	Page int `json:"page"` // 1-based, in the document
	// Width and Height are the pixels of the space the page's boxes are in (the page drawn at
	// the resolution OCR wants).
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Source string `json:"source"` // "text-layer" (born-digital), "ocr" (scanned, or "ocr": "always"), or "none" (Error)
	// SourceReason says why: "text_layer_agrees" (OCR of a few of the layer's lines reads what
	// it says), "text_layer_disagrees" (it does not: the page was OCR'd), "no_text_layer"… (see
	// the OpenAPI document). Empty for a page that could not be read.
	SourceReason string `json:"source_reason,omitempty"`
	// Confidence is how far the page's text can be trusted, in [0, 1]; nil for a page that
	// could not be read.
	Confidence *float64 `json:"confidence,omitempty"`
	// TextLayerCheck is what OCR of a few of the layer's lines said of it, when they were read.
	TextLayerCheck *TextLayerCheck `json:"text_layer_check,omitempty"`
	Regions        []Region        `json:"regions"`
	Text           string          `json:"text"`
	// HiddenText is set when the page's text layer held text no one sees (invisible, off the
	// page, too small, or leaving no mark), which was dropped from Regions and Text.
	HiddenText *HiddenText `json:"hidden_text,omitempty"`
	// Error is set when the page could not be read (Source is then "none"); the document's other
	// pages were. See OCRResult.FailedPages.
	Error *PageError `json:"error,omitempty"`
}

// TextLayerCheck is what OCR of a few probes (the first words of a line) of a page's text layer
// said of the layer.
type TextLayerCheck struct {
	Probes     int     `json:"probes"`
	Agreed     int     `json:"agreed"`
	Disagreed  int     `json:"disagreed"`
	Unreadable int     `json:"unreadable"` // in a script the recognizer does not read
	Similarity float64 `json:"similarity"` // of the compared probes' readings to the layer, in [0, 1]
}

// PageError is why one page of a document could not be read: the code and message the same
// failure of a whole document answers with (Error.Code), such as "document_too_complex".
type PageError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

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

// HiddenText says how much of a page's text layer was dropped as unseen, and why.
type HiddenText struct {
	Characters int `json:"characters"`
	// Reasons: "invisible_render_mode", "outside_page", "too_small", "no_visible_mark".
	Reasons []string `json:"reasons"`
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
