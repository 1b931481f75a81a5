package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/server"
)

// readiness is a runtime's readiness check that answers err.
type readiness struct{ err error }

func (r readiness) Ready(context.Context) error { return r.err }

// TestReadyzAnswersOnlyReasons: /readyz names the stable reasons a runtime gives, never the
// details of its errors (server messages, addresses), which go to the log instead.
func TestReadyzAnswersOnlyReasons(t *testing.T) {
	leak := errors.New(`rpc error: code = Unavailable desc = connection error: dial tcp 10.9.8.7:8001: connect: connection refused`)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unreachable", &ocr.NotReadyError{Reason: "triton_unreachable", Err: leak}, "not ready: triton_unreachable"},
		{"several", errors.Join(
			&ocr.NotReadyError{Reason: "model_not_ready: ppocr_rec", Err: leak},
			fmt.Errorf("wrapped: %w", &ocr.NotReadyError{Reason: "metadata_mismatch: ppocr_det", Err: leak}),
			&ocr.NotReadyError{Reason: "model_not_ready: ppocr_rec", Err: leak}),
			"not ready: model_not_ready: ppocr_rec; metadata_mismatch: ppocr_det"},
		{"an error without a reason", leak, "not ready: runtime_not_ready"},
		{"the check's own deadline", context.DeadlineExceeded, "not ready: runtime_not_ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			m := metrics.New()
			eng := fakeEngine(&ocrtest.Runtime{})
			app := checked(t, server.New(eng.Pipeline, readiness{tt.err}, slog.New(slog.NewTextHandler(&log, nil)), server.Options{
				RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20, Metrics: m,
			}))
			resp, err := app.Test(get("/readyz"), -1)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := `{"error":"` + tt.want + `","code":"not_ready"}`
			if resp.StatusCode != 503 || string(body) != want || resp.Header.Get("Retry-After") != "5" {
				t.Errorf("/readyz = %d %s (Retry-After %q), want 503 %s", resp.StatusCode, body, resp.Header.Get("Retry-After"), want)
			}
			if detail := strings.SplitN(tt.err.Error(), "\n", 2)[0]; !strings.Contains(log.String(), detail) {
				t.Errorf("the log lacks the details %q:\n%s", detail, log.String())
			}
			if code, b := call(t, app, get("/metrics")); code != 200 || strings.Contains(string(b), "ocrgate_runtime_errors_total{") {
				t.Errorf("a failed readiness check counted as a runtime error")
			}
		})
	}
}

// TestRuntimeErrorMetrics: the failure kinds of the runtime reach ocrgate_runtime_errors_total
// through the same classification that picks the status.
func TestRuntimeErrorMetrics(t *testing.T) {
	page, _, _ := ocrtest.Receipt()
	img := ocrtest.PNG(page)
	// A runtime that fails answers at once: its request has a deadline it never meets, however
	// slow a busy machine decodes the image. The runtime that never answers has a short one:
	// wherever its request is when the deadline passes, the answer is the timeout.
	tests := []struct {
		name     string
		rt       *ocrtest.Runtime
		deadline time.Duration
		status   int
		code     string
		kind     string
	}{
		{"unavailable", &ocrtest.Runtime{Fail: failWith(ocr.ErrRuntimeUnavailable)}, 10 * time.Minute, 503, "runtime_unavailable", "unavailable"},
		{"model missing", &ocrtest.Runtime{Fail: failWith(ocr.ErrModelMissing)}, 10 * time.Minute, 503, "model_missing", "unavailable"},
		{"failed", &ocrtest.Runtime{Fail: failWith(ocr.ErrRuntimeFailed)}, 10 * time.Minute, 502, "runtime_error", "failed"},
		{"timeout", &ocrtest.Runtime{Delay: time.Hour}, 200 * time.Millisecond, 504, "timeout", "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := fakeEngine(tt.rt)
			app := checked(t, server.New(eng.Pipeline, eng, slog.New(slog.NewTextHandler(io.Discard, nil)), server.Options{
				RequestTimeout: tt.deadline, MaxBodyBytes: 20 << 20, Metrics: metrics.New(),
			}))
			code, body := call(t, app, ocrRequest(img))
			checkJSONError(t, code, body, tt.status, tt.code)
			_, m := call(t, app, get("/metrics"))
			if want := `ocrgate_runtime_errors_total{kind="` + tt.kind + `"} 1`; !strings.Contains(string(m), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		})
	}
}

func failWith(err error) func(ocr.Model) error {
	return func(ocr.Model) error { return err }
}
