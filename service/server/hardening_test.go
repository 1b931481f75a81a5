package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/server"
)

// newApp builds the service on the tier's engine (see fixtures) with the given options (rec
// replaces the pipeline when not nil).
func newApp(t testing.TB, opt server.Options, rec server.Recognizer) *checkedApp {
	t.Helper()
	eng := fixtures(t).engine
	if rec == nil {
		rec = eng.Pipeline
	}
	if opt.RequestTimeout == 0 {
		opt.RequestTimeout = time.Minute
	}
	if opt.MaxBodyBytes == 0 {
		opt.MaxBodyBytes = 20 << 20
	}
	return checked(t, server.New(rec, eng, slog.New(slog.NewTextHandler(io.Discard, nil)), opt))
}

func withAuth(req *http.Request, token string) *http.Request {
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	return req
}

func TestAPIKeys(t *testing.T) {
	app := newApp(t, server.Options{APIKeys: []string{"k-one", "k-two-longer"}}, nil)
	img := fixtures(t).receipt
	tests := []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"no token", ocrRequest(img), 401},
		{"wrong token", withAuth(ocrRequest(img), "Bearer nope"), 401},
		{"prefix of a key", withAuth(ocrRequest(img), "Bearer k-one-"), 401},
		{"basic auth", withAuth(ocrRequest(img), "Basic ay1vbmU6"), 401},
		{"first key", withAuth(ocrRequest(img), "Bearer k-one"), 200},
		{"second key", withAuth(ocrRequest(img), "Bearer k-two-longer"), 200},
		{"ping stays open", get("/ping"), 200},
		{"healthz stays open", get("/healthz"), 200},
		{"readyz stays open", get("/readyz"), 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, tt.req)
			if code != tt.status {
				t.Fatalf("status %d, want %d: %s", code, tt.status, body)
			}
			if code == 401 {
				checkJSONError(t, code, body, 401, "unauthorized")
			}
		})
	}
}

// TestOverloadIsRefusedAtOnce: with its one slot busy and no queue, the service refuses a
// request with 429 instead of holding it. The slot stays busy until the answer is back, and a
// request that waited would wait for as long as the gate lets it (10 minutes): a 429 at all
// shows it did not wait, with no clock in the test.
func TestOverloadIsRefusedAtOnce(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 1, MaxQueue: 0, MaxWait: 10 * time.Minute})
	app := newApp(t, server.Options{Gate: gate, RequestTimeout: 20 * time.Minute}, nil)
	release, err := gate.Acquire(context.Background(), 0) // the one slot is busy
	if err != nil {
		t.Fatal(err)
	}
	resp, err := app.Test(ocrRequest(fixtures(t).receipt), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	checkJSONError(t, resp.StatusCode, body, 429, "overloaded")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if s := gate.Stats(); s.Running != 1 {
		t.Errorf("the gate holds %+v; the busy slot was to be held until the answer", s)
	}
	release()
	if code, body := call(t, app, ocrRequest(fixtures(t).receipt)); code != 200 {
		t.Fatalf("after the slot freed: %d %s", code, body)
	}
}

func TestRequestID(t *testing.T) {
	app := newApp(t, server.Options{}, nil)
	req := get("/ping")
	req.Header.Set("X-Request-ID", "abc-123")
	resp, _ := app.Test(req, -1)
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-ID"); got != "abc-123" {
		t.Errorf("echoed %q", got)
	}
	for _, bad := range []string{"", strings.Repeat("x", 200), "has space"} {
		req := get("/ping")
		if bad != "" {
			req.Header.Set("X-Request-ID", bad)
		}
		resp, _ := app.Test(req, -1)
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-ID"); got == "" || got == bad || len(got) > 128 {
			t.Errorf("for %q the service answered request ID %q, want a fresh one", bad, got)
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Second})
	app := newApp(t, server.Options{Metrics: metrics.New(), APIKeys: []string{"key"}, Gate: gate}, nil)
	if code, body := call(t, app, withAuth(ocrRequest(fixtures(t).receipt), "Bearer key")); code != 200 {
		t.Fatalf("ocr: %d %s", code, body)
	}
	call(t, app, ocrRequest([]byte("no key"))) // a 401
	code, body := call(t, app, get("/metrics"))
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`ocrgate_http_requests_total{code="200",route="/ocr"} 1`,
		`ocrgate_http_requests_total{code="401",route="/ocr"} 1`,
		`ocrgate_http_request_duration_seconds_count{route="/ocr"} 2`,
		`ocrgate_stage_duration_seconds_count{stage="recognition"} 1`,
		`ocrgate_stage_duration_seconds_count{stage="decode"} 1`,
		`ocrgate_rejected_total{reason="unauthorized"} 1`,
		`ocrgate_jobs_in_flight 0`,
		`ocrgate_admitted_bytes 0`,
		`ocrgate_memory_budget_bytes 1.073741824e+09`,
		`ocrgate_admission_waiting 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// panicking is fault injection: the real pipeline, except that running it panics, as a bug in a
// handler would.
type panicking struct{ *ocr.Pipeline }

func (panicking) RunAdmitted(context.Context, []byte, imaging.Header, imaging.Lease) (*ocr.Result, error) {
	panic("boom")
}

func TestPanicBecomes500(t *testing.T) {
	app := newApp(t, server.Options{}, panicking{fixtures(t).engine.Pipeline})
	code, body := call(t, app, ocrRequest(fixtures(t).receipt))
	checkJSONError(t, code, body, 500, "internal_error")
	if strings.Contains(string(body), "boom") || strings.Contains(string(body), "goroutine") {
		t.Errorf("panic details leaked: %s", body)
	}
	if code, _ := call(t, app, get("/ping")); code != 200 {
		t.Errorf("service dead after a panic: /ping = %d", code)
	}
}

// TestFaultsLeaveNothingBehind: a slow model runtime (a deadline shorter than the work), a slow chat
// model and a chat model that is down each end with their status, promptly, and leave no goroutine
// behind.
func TestFaultsLeaveNothingBehind(t *testing.T) {
	// A receipt whose model work takes seconds on this machine while its Go stages stay short even
	// under the race detector, so the test measures how fast inference stops at the deadline; in
	// -short mode, the stand-in runtime made slower than any deadline.
	small := fixtures(t).receipt
	big, slowRuntime := small, fakeEngine(&ocrtest.Runtime{Delay: time.Hour})
	if !testing.Short() {
		big, slowRuntime = readImage(t, "dense.jpg"), embeddedEngine(t)
	}
	slowChat := newChatServer(t, receiptReader)
	slowChat.delay = 20 * time.Second
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := "http://" + lis.Addr().String()
	lis.Close()
	downChat := &chatServer{Server: &httptest.Server{URL: downURL}}

	tests := []struct {
		name    string
		app     *serviceApp
		req     func() *http.Request
		status  int
		code    string
		promptw time.Duration
	}{
		{"runtime slower than the deadline", &serviceApp{server.New(slowRuntime.Pipeline, slowRuntime, slog.New(slog.NewTextHandler(io.Discard, nil)),
			server.Options{RequestTimeout: 300 * time.Millisecond, MaxBodyBytes: 20 << 20})},
			func() *http.Request { return ocrRequest(big) }, 504, "timeout", 3 * time.Second},
		{"chat model slower than the deadline", chatApp(t, slowChat, "", 4*time.Second),
			func() *http.Request { return ocrJSONRequest(t, small, nil) }, 504, "timeout", 8 * time.Second},
		{"chat model down", chatApp(t, downChat, "", time.Minute),
			// Prompt here means well inside its minute: the refused connection is not retried
			// until the deadline. The OCR before it takes seconds under -race on a busy machine.
			func() *http.Request { return ocrJSONRequest(t, small, nil) }, 503, "chat_unreachable", 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.app.do(t, get("/ping")) // warm the app
			running := goleak.IgnoreCurrent()
			start := time.Now()
			resp, body := tt.app.do(t, tt.req())
			checkJSONError(t, resp.StatusCode, body, tt.status, tt.code)
			if took := time.Since(start); took > tt.promptw {
				t.Errorf("answered after %v", took)
			}
			goleak.VerifyNone(t, running, fasthttpClock)
		})
	}
}
