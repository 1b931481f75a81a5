// Package client is the Go client of ocrgate's HTTP API: [Client.OCR] reads the text of an image
// or a document (PDF, multi-page TIFF), [Client.OCRBatch] several at once, [Client.Extract] has
// the service's chat model fill a template or JSON Schema from one. [Client.OCRFile] and
// [Client.ExtractFile] send a file on disk as itself (streamed, with its media type), not as
// base64 JSON: the service's body limit is then the file's size.
//
// Answers come back typed ([OCRResult], [Extraction]); failures the service answers come back as
// an [Error] (a *Error) carrying its HTTP status and stable code. Overload (429) and temporary unavailability
// (503 with Retry-After) are retried a bounded number of times, after the wait the service asks
// for plus jitter, and never past the context's deadline.
//
// The package imports nothing of the service, so programs that call ocrgate do not link its
// models or runtimes.
package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ocrgate/ocrgate/api"
)

// Client calls one ocrgate service. It is safe for concurrent use; create it once and reuse it.
type Client struct {
	base     *url.URL
	http     *http.Client
	apiKey   string
	retries  int
	maxWait  time.Duration
	minDelay time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as the bearer token ocrgate requires when it is configured with API keys.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = strings.TrimSpace(key) } }

// WithHTTPClient replaces the HTTP client (for a proxy, TLS settings or a custom transport). Do
// not set its Timeout below the service's request timeout; bound calls with their context.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithRetries sets how many times a call is retried after a 429, or a 503 that carries
// Retry-After (default 3; 0 never retries).
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(n, 0) } }

// WithMaxRetryWait bounds the wait before one retry (default 30 s): a service asking for longer
// gets its error returned instead.
func WithMaxRetryWait(d time.Duration) Option { return func(c *Client) { c.maxWait = d } }

// DefaultRetries is how many times a call is retried unless WithRetries says otherwise.
const DefaultRetries = 3

// New returns a client for the service at baseURL (such as "http://localhost:5000").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ocrgate client: base URL %q is not an http(s) URL", baseURL)
	}
	c := &Client{base: u, http: &http.Client{}, retries: DefaultRetries, maxWait: 30 * time.Second, minDelay: 500 * time.Millisecond}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// CallOption adjusts one call.
type CallOption func(*call)

type call struct {
	requestID string
	// idempotencyKey is sent as Idempotency-Key (SubmitJob): a retried submit answers the job
	// of the first.
	idempotencyKey string
	template       string
	schema         json.RawMessage
	read           api.ReadFields
}

// RequestID sends id as the call's X-Request-ID, so the service's log lines of the call carry it.
func RequestID(id string) CallOption { return func(c *call) { c.requestID = id } }

// Template picks a built-in template for Extract ("invoice", the default, or "receipt").
func Template(name string) CallOption { return func(c *call) { c.template = name } }

// Schema has Extract fill the caller's own JSON Schema instead of a template.
func Schema(schema json.RawMessage) CallOption { return func(c *call) { c.schema = schema } }

// Pages selects the pages of a document to read, 1-based: "1-3,5", "4-" (the default is every
// page, up to the service's page limit).
func Pages(spec string) CallOption { return func(c *call) { c.read.Pages = spec } }

// AlwaysOCR has every page of a document OCR'd, even a page whose text layer holds real text
// (which the service otherwise returns as it is, with Source "text-layer").
func AlwaysOCR() CallOption { return func(c *call) { c.read.OCR = "always" } }

// Words asks for each region's words (Region.Words).
func Words() CallOption { return func(c *call) { c.read.Words = true } }

// Lang picks the recognizer that reads the text: "ch" (the default), or a language pack the
// service loaded ("ja", "ko", "zh-Hant", "en"); one it has not loaded is refused with a 400 that
// lists the loaded ones.
func Lang(lang string) CallOption { return func(c *call) { c.read.Lang = lang } }

// PipelineOption sets one of the service's per-request pipeline options for this call:
// "det_limit_side", "det_thresh", "det_box_thresh", "det_unclip_ratio", "min_score" or
// "use_cls" (docs/api.md and GET /openapi.json give their ranges). The service refuses an unknown
// option or a value out of range with a 400.
func PipelineOption(name string, value any) CallOption {
	return func(c *call) {
		if c.read.Options == nil {
			c.read.Options = map[string]any{}
		}
		c.read.Options[name] = value
	}
}

// OCR reads the text of image: the bytes of a JPEG, PNG, GIF, BMP, TIFF or WebP image, or of a
// PDF or multi-page TIFF document (then OCRResult.Pages holds its pages).
func (c *Client) OCR(ctx context.Context, image []byte, opts ...CallOption) (*OCRResult, error) {
	cl := newCall(opts)
	body, err := json.Marshal(api.OCRRequest{Image: base64.StdEncoding.EncodeToString(image), ReadFields: cl.read})
	if err != nil {
		return nil, err
	}
	raw, hdr, err := c.do(ctx, http.MethodPost, "/ocr", jsonPayload(body), cl)
	if err != nil {
		return nil, err
	}
	return ocrResult(raw, hdr)
}

// ocrResult is the typed result of an /ocr answer.
func ocrResult(raw []byte, hdr http.Header) (*OCRResult, error) {
	var res OCRResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("ocrgate: /ocr answer is not an OCR result: %w", err)
	}
	res.RequestID = hdr.Get("X-Request-ID")
	res.Raw = raw
	return &res, nil
}

// OCRBatch reads several images or documents in one call ("images"), each with the same call
// options, and returns one item per image, in order: its result, or the error the service
// answered for it alone (a bad image does not fail the others). The error returned is the
// call's own: the service refused the whole request, or could not be reached.
func (c *Client) OCRBatch(ctx context.Context, images [][]byte, opts ...CallOption) ([]BatchItem, error) {
	cl := newCall(opts)
	enc := make([]string, len(images))
	for i, im := range images {
		enc[i] = base64.StdEncoding.EncodeToString(im)
	}
	body, err := json.Marshal(api.OCRRequest{Images: enc, ReadFields: cl.read})
	if err != nil {
		return nil, err
	}
	raw, hdr, err := c.do(ctx, http.MethodPost, "/ocr", jsonPayload(body), cl)
	if err != nil {
		return nil, err
	}
	var ans api.BatchResult[json.RawMessage]
	if err := json.Unmarshal(raw, &ans); err != nil || len(ans.Results) != len(images) {
		return nil, fmt.Errorf("ocrgate: /ocr answer is not a result per image (%d for %d)", len(ans.Results), len(images))
	}
	items := make([]BatchItem, len(images))
	for i, r := range ans.Results {
		var e api.ItemError
		if json.Unmarshal(r, &e) == nil && e.Status != 0 && e.Code != "" {
			items[i].Err = &Error{Status: e.Status, Code: e.Code, Message: e.Error, RequestID: hdr.Get("X-Request-ID")}
			continue
		}
		var res OCRResult
		if err := json.Unmarshal(r, &res); err != nil {
			return nil, fmt.Errorf("ocrgate: result %d is not an OCR result: %w", i, err)
		}
		res.RequestID, res.Raw = hdr.Get("X-Request-ID"), r
		items[i].Result = &res
	}
	return items, nil
}

// OCRReader is OCR on the image r yields. The image is read whole first: it travels as one base64
// JSON field, and a retry sends it again.
func (c *Client) OCRReader(ctx context.Context, r io.Reader, opts ...CallOption) (*OCRResult, error) {
	image, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("ocrgate: read image: %w", err)
	}
	return c.OCR(ctx, image, opts...)
}

// Extract runs OCR on image and has the service's chat model fill a template (Template; the
// service's default, invoice, when neither is given) or a JSON Schema (Schema) from the text.
func (c *Client) Extract(ctx context.Context, image []byte, opts ...CallOption) (*Extraction, error) {
	cl := newCall(opts)
	if cl.template != "" && len(cl.schema) > 0 {
		return nil, errTemplateAndSchema
	}
	body, err := json.Marshal(api.ExtractRequest{Image: base64.StdEncoding.EncodeToString(image), Template: cl.template, Schema: cl.schema, ReadFields: cl.read})
	if err != nil {
		return nil, fmt.Errorf("ocrgate: schema is not JSON: %w", err)
	}
	raw, hdr, err := c.do(ctx, http.MethodPost, "/ocr-json", jsonPayload(body), cl)
	if err != nil {
		return nil, err
	}
	return extraction(raw, hdr), nil
}

// extraction is the typed result of an /ocr-json answer.
func extraction(raw []byte, hdr http.Header) *Extraction {
	ex := &Extraction{Object: raw, RequestID: hdr.Get("X-Request-ID")}
	ex.OCRTime = headerSeconds(hdr.Get("X-OCR-Time"))
	ex.ChatTime = headerSeconds(hdr.Get("X-Chat-Time"))
	ex.ChatAttempts, _ = strconv.Atoi(hdr.Get("X-Chat-Attempts"))
	if f := hdr.Get("X-Failed-Pages"); f != "" {
		for _, s := range strings.Split(f, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				ex.FailedPages = append(ex.FailedPages, n)
			}
		}
	}
	return ex
}

// ExtractReader is Extract on the image r yields (read whole first, as for OCRReader).
func (c *Client) ExtractReader(ctx context.Context, r io.Reader, opts ...CallOption) (*Extraction, error) {
	image, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("ocrgate: read image: %w", err)
	}
	return c.Extract(ctx, image, opts...)
}

// payload is what a call sends: a body opened afresh for each attempt (a retry sends it again;
// nil: no body), its length (-1: unknown) and media type, and the query parameters.
type payload struct {
	open  func() (io.ReadCloser, error)
	size  int64
	ctype string
	query url.Values
}

// jsonPayload is a JSON body.
func jsonPayload(body []byte) payload {
	return payload{
		open:  func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		size:  int64(len(body)),
		ctype: "application/json",
	}
}

var errTemplateAndSchema = errors.New("ocrgate: Extract takes a Template or a Schema, not both")

func newCall(opts []CallOption) *call {
	c := &call{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// do sends one API call, retrying what the service says is worth retrying, and returns the body
// of a 2xx answer or the error.
func (c *Client) do(ctx context.Context, method, path string, body payload, cl *call) ([]byte, http.Header, error) {
	for attempt := 0; ; attempt++ {
		raw, hdr, err := c.once(ctx, method, path, body, cl)
		var apiErr *Error
		if err == nil || !errors.As(err, &apiErr) || !apiErr.retryable() || attempt >= c.retries {
			return raw, hdr, err
		}
		wait := c.backoff(apiErr, attempt)
		if wait > c.maxWait {
			return nil, nil, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, nil, err // the retry could not finish in time: say why now
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, err
		case <-t.C:
		}
	}
}

// backoff is the wait before retry number attempt+1: what the service asked for (Retry-After),
// or an exponential step from minDelay, plus up to half again of random jitter so that clients
// refused together do not come back together.
func (c *Client) backoff(e *Error, attempt int) time.Duration {
	base := e.RetryAfter
	if base <= 0 {
		base = c.minDelay << min(attempt, 6)
	}
	return base + rand.N(base/2+1)
}

func (c *Client) once(ctx context.Context, method, path string, body payload, cl *call) ([]byte, http.Header, error) {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	if len(body.query) > 0 {
		u.RawQuery = body.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	if body.open != nil {
		if req.Body, err = body.open(); err != nil {
			return nil, nil, fmt.Errorf("ocrgate: %s %s: %w", method, path, err)
		}
		req.GetBody, req.ContentLength = body.open, body.size
		req.Header.Set("Content-Type", body.ctype)
	}
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	if cl.requestID != "" {
		req.Header.Set("X-Request-ID", cl.requestID)
	}
	if cl.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", cl.idempotencyKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("ocrgate: %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }() // read to its end (or its error) below
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("ocrgate: %s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, resp.Header, newError(resp, raw)
	}
	return raw, resp.Header, nil
}

func headerSeconds(v string) time.Duration {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}
