package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/client"
	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/server"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// counting counts the HTTP attempts a client makes, each once its answer is back (a test that
// waits for "refused once" must not act while the refusal is still on its way).
type counting struct {
	n  atomic.Int32
	rt http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	c.n.Add(1)
	return resp, err
}

func newClient(t *testing.T, url string, opts ...client.Option) (*client.Client, *counting) {
	t.Helper()
	ct := &counting{rt: http.DefaultTransport}
	c, err := client.New(url, append([]client.Option{client.WithHTTPClient(&http.Client{Transport: ct})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, ct
}

// readReceipt reads the receipt the tests and examples send.
func readReceipt(t *testing.T) []byte {
	t.Helper()
	img, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestOCRIsTheAPIAnswer: the typed result is the /ocr answer, and Raw is that answer verbatim.
func TestOCRIsTheAPIAnswer(t *testing.T) {
	img := readReceipt(t)
	c, _ := newClient(t, live(t), client.WithAPIKey(apiKey))
	res, err := c.OCR(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, live(t)+"/ocr", bytes.NewReader([]byte(`{"image":"`+b64(img)+`"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var direct client.OCRResult
	if err := json.NewDecoder(resp.Body).Decode(&direct); err != nil {
		t.Fatal(err)
	}
	if res.Text != direct.Text || len(res.Regions) != len(direct.Regions) || len(res.Regions) < 40 {
		t.Fatalf("client: %d regions, direct: %d regions; texts equal: %v", len(res.Regions), len(direct.Regions), res.Text == direct.Text)
	}
	if res.Regions[0].BoundingShape.Points[2] != direct.Regions[0].BoundingShape.Points[2] || res.ImageInfo != direct.ImageInfo {
		t.Errorf("typed fields differ: %+v vs %+v", res.Regions[0], direct.Regions[0])
	}
	var raw map[string]any
	if err := json.Unmarshal(res.Raw, &raw); err != nil || raw["text"] != res.Text {
		t.Errorf("Raw is not the answer: %v", err)
	}
	if len(res.RequestID) == 0 {
		t.Error("no request ID")
	}
}

// TestErrors: what the service refuses comes back as *client.Error with its status and code,
// and none of it is retried.
func TestErrors(t *testing.T) {
	img := readReceipt(t)
	noChat := testServer(t, nil, server.Options{})
	tests := []struct {
		name   string
		url    string
		key    string
		call   func(*client.Client) error
		status int
		code   string
	}{
		{"not an image", live(t), apiKey, func(c *client.Client) error {
			_, err := c.OCR(context.Background(), []byte("hello"))
			return err
		}, 415, "unsupported_image_format"},
		{"truncated image", live(t), apiKey, func(c *client.Client) error {
			_, err := c.OCR(context.Background(), img[:len(img)/3])
			return err
		}, 422, "undecodable_image"},
		{"wrong key", live(t), "nope", func(c *client.Client) error {
			_, err := c.OCR(context.Background(), img)
			return err
		}, 401, "unauthorized"},
		{"unknown template", live(t), apiKey, func(c *client.Client) error {
			_, err := c.Extract(context.Background(), img, client.Template("passport"))
			return err
		}, 422, "unknown_template"},
		{"unusable schema", live(t), apiKey, func(c *client.Client) error {
			_, err := c.Extract(context.Background(), img, client.Schema(json.RawMessage(`{"type": "string"}`)))
			return err
		}, 422, "invalid_schema"},
		{"no chat model: 503 without Retry-After", noChat, "", func(c *client.Client) error {
			_, err := c.Extract(context.Background(), img)
			return err
		}, 503, "chat_not_configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, attempts := newClient(t, tt.url, client.WithAPIKey(tt.key))
			err := tt.call(c)
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is no *client.Error", err)
			}
			if e.Status != tt.status || e.Code != tt.code || e.Message == "" || e.RequestID == "" {
				t.Errorf("error = %+v, want %d %s with a message and a request ID", e, tt.status, tt.code)
			}
			if n := attempts.n.Load(); n != 1 {
				t.Errorf("%d attempts, want 1 (not retryable)", n)
			}
		})
	}
}

// TestRetryAfterOverload: a 429 is retried after the service's Retry-After, and the retry succeeds
// once the service has room.
func TestRetryAfterOverload(t *testing.T) {
	url, release := busyServer(t)
	img := readReceipt(t)
	c, attempts := newClient(t, url)
	go func() {
		// Free the slot once the client has been refused once.
		for attempts.n.Load() < 1 {
			time.Sleep(10 * time.Millisecond)
		}
		release()
	}()
	start := time.Now()
	res, err := c.OCR(context.Background(), img)
	if err != nil {
		t.Fatalf("after retries: %v (%d attempts)", err, attempts.n.Load())
	}
	if n := attempts.n.Load(); n < 2 {
		t.Errorf("%d attempts: the first should have met the busy service", n)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("answered in %s: the retry did not wait the service's Retry-After of 1 s", took)
	}
	if len(res.Regions) < 40 {
		t.Errorf("%d regions", len(res.Regions))
	}
}

// TestRetriesAreBounded: a service that stays full gets the first attempt and WithRetries more,
// then the 429 comes back.
func TestRetriesAreBounded(t *testing.T) {
	url, _ := busyServer(t)
	c, attempts := newClient(t, url, client.WithRetries(2))
	start := time.Now()
	_, err := c.OCR(context.Background(), readReceipt(t))
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 429 || e.Code != "overloaded" || e.RetryAfter != time.Second {
		t.Fatalf("error %v, want 429 overloaded with Retry-After 1 s", err)
	}
	if n := attempts.n.Load(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	// Two waits of 1 s plus up to 0.5 s of jitter each.
	if took := time.Since(start); took < 2*time.Second || took > 4*time.Second {
		t.Errorf("took %s, want 2–3 s of waiting", took)
	}
}

// TestRetryRespectsTheContext: a wait that would outlast the context's deadline is not started;
// the caller gets the service's answer at once.
func TestRetryRespectsTheContext(t *testing.T) {
	url, _ := busyServer(t)
	c, attempts := newClient(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.OCR(ctx, readReceipt(t))
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "overloaded" {
		t.Fatalf("error %v, want the 429", err)
	}
	if took := time.Since(start); took > 400*time.Millisecond || attempts.n.Load() != 1 {
		t.Errorf("took %s and %d attempts: it waited although the deadline was too close", took, attempts.n.Load())
	}

	// A context canceled during the wait ends it.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	if _, err := c.OCR(ctx, readReceipt(t)); err == nil {
		t.Fatal("no error from a canceled call")
	}
	if took := time.Since(start); took > 800*time.Millisecond {
		t.Errorf("cancel took %s to end the wait", took)
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:5000", "ftp://host", "http://"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	if _, err := client.New("http://localhost:5000/"); err != nil {
		t.Error(err)
	}
}

// TestReaderVariants: OCRReader and ExtractReader send what the reader yields.
func TestReaderVariants(t *testing.T) {
	img := readReceipt(t)
	c, _ := newClient(t, live(t), client.WithAPIKey(apiKey))
	res, err := c.OCRReader(context.Background(), bytes.NewReader(img))
	if err != nil || len(res.Regions) < 40 {
		t.Fatalf("OCRReader: %v", err)
	}
	ex, err := c.ExtractReader(context.Background(), io.MultiReader(bytes.NewReader(img[:100]), bytes.NewReader(img[100:])), client.Template("receipt"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := ex.Decode(&got); err != nil || got["total"] != "77.55" || ex.OCRTime <= 0 {
		t.Errorf("extraction %s (OCR %s): %v", ex.Object, ex.OCRTime, err)
	}
	if _, err := c.Extract(context.Background(), img, client.Template("receipt"), client.Schema(json.RawMessage(`{}`))); err == nil {
		t.Error("Extract accepted a template and a schema")
	}
}

// TestDocuments: a PDF comes back page by page (the pages asked for, with their source and
// words), several files go in one call with an answer or an error each, and a bad pipeline option
// is the service's 400.
func TestDocuments(t *testing.T) {
	pdf, _, err := testdoc.BornDigital(
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117"}},
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TOTAL 1299.00 NET"}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, live(t), client.WithAPIKey(apiKey))
	res, err := c.OCR(t.Context(), pdf, client.Pages("2"), client.Words())
	if err != nil {
		t.Fatal(err)
	}
	if res.ImageInfo.Format != "pdf" || res.ImageInfo.Pages != 2 || len(res.Pages) != 1 {
		t.Fatalf("image info %+v, %d pages", res.ImageInfo, len(res.Pages))
	}
	p := res.Pages[0]
	if p.Page != 2 || p.Source != "text-layer" || p.Text != "TOTAL 1299.00 NET" || len(p.Regions) != 1 || len(p.Regions[0].Words) != 3 {
		t.Errorf("page %+v", p)
	}
	items, err := c.OCRBatch(t.Context(), [][]byte{readReceipt(t), []byte("not an image")}, client.PipelineOption("use_cls", false))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Result == nil || len(items[0].Result.Regions) < 20 || items[1].Err == nil ||
		items[1].Err.Status != 415 || items[1].Err.Code != "unsupported_image_format" {
		t.Errorf("batch items %+v", items)
	}
	// A page that cannot be read: the others are, and that one says why.
	good := hostile.TextPage("FIRST PAGE")
	res, err = c.OCR(t.Context(), hostile.PDFPages(good, hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}))
	if err != nil {
		t.Fatal(err)
	}
	if failed := res.FailedPages(); len(res.Pages) != 2 || res.Pages[0].Text != "FIRST PAGE" || len(failed) != 1 ||
		failed[0].Page != 2 || failed[0].Source != "none" || failed[0].Error.Code != "degenerate_page" || failed[0].Error.Message == "" {
		t.Errorf("pages %+v, failed %+v", res.Pages, failed)
	}
	_, err = c.OCR(t.Context(), pdf, client.PipelineOption("min_score", 2))
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "invalid_option" {
		t.Errorf("a bad option: %v", err)
	}
}
