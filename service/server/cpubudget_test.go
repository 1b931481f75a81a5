package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestCPUBudgetRefusesBeforeWork: an image whose estimated CPU time is more than a request may
// use is refused with 413 cpu_budget_exceeded before anything of it is admitted or decoded, the
// figures in the message, and counted in ocrgate_rejected_total{reason="cpu_budget"}.
func TestCPUBudgetRefusesBeforeWork(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	m := metrics.New()
	app := newApp(t, server.Options{Gate: gate, Metrics: m, MaxRequestCPU: 100 * time.Millisecond}, nil)
	code, body := call(t, app, ocrRequest(fixtures(t).receipt))
	checkJSONError(t, code, body, 413, "cpu_budget_exceeded")
	if !strings.Contains(string(body), "needs about") || !strings.Contains(string(body), "the limit is 0.1 CPU-s per request") {
		t.Errorf("the message does not give the estimate and the limit: %s", body)
	}
	if n := metricValue(t, m, "ocrgate_rejected_total", "cpu_budget"); n != 1 {
		t.Errorf(`ocrgate_rejected_total{reason="cpu_budget"} = %v, want 1`, n)
	}
	if n := metricValue(t, m, "ocrgate_stage_duration_seconds", "decode"); n != 0 {
		t.Errorf("%v images were decoded for a request refused up front", n)
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 {
		t.Errorf("the gate holds %+v after the refusal", s)
	}
	// Without a limit the same request is read.
	app = newApp(t, server.Options{Gate: gate}, nil)
	if code, body := call(t, app, ocrRequest(fixtures(t).receipt)); code != 200 {
		t.Fatalf("no CPU limit: %d %.300s", code, body)
	}
}

// underestimated is the pipeline with a CPU estimate that lets anything in: what a file built to
// cost more than its header says looks like to the budget.
type underestimated struct{ server.Recognizer }

func (underestimated) CPUCost(imaging.Header) time.Duration { return time.Millisecond }

// TestCPUBudgetStopsWorkAsItRuns: work that spends past the request's CPU budget is stopped as it
// runs, whatever its estimate said: a progressive JPEG that takes image/jpeg some 2 CPU-s, in a
// request allowed 0.3, is answered 413 cpu_budget_exceeded long before its decoder ends.
func TestCPUBudgetStopsWorkAsItRuns(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 2 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	m := metrics.New()
	app := newApp(t, server.Options{Gate: gate, Metrics: m, MaxRequestCPU: 300 * time.Millisecond},
		underestimated{fixtures(t).engine.Pipeline})
	start := time.Now()
	code, body := call(t, app, imageRequest(hostile.ScanBomb(6000, 6000, 60)))
	took := time.Since(start)
	checkJSONError(t, code, body, 413, "cpu_budget_exceeded")
	if !strings.Contains(string(body), "used up its CPU time, 0.3 CPU-s per request") {
		t.Errorf("message: %s", body)
	}
	decoding := gate.Stats().Used != 0
	t.Logf("413 after %v; the decoder still running then: %v", took.Round(time.Millisecond), decoding)
	if !decoding {
		t.Errorf("answered after %v, once the decoder had ended: the work was not stopped as it ran", took)
	}
	if n := metricValue(t, m, "ocrgate_rejected_total", "cpu_budget"); n != 1 {
		t.Errorf(`ocrgate_rejected_total{reason="cpu_budget"} = %v, want 1`, n)
	}
	for deadline := time.Now().Add(2 * time.Minute); gate.Stats().Used != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the admission never came back")
		}
	}
}
