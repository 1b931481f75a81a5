package metrics

import (
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/ocr"
)

// record calls every recording method once.
func record(m *Metrics) {
	m.Request("/ocr", 200, time.Second)
	m.Stages(&ocr.Timings{})
	m.Chat(time.Second)
	m.Page("ocr")
	m.JobStarted()
	m.Rejected("overloaded")
	m.Canceled("shutdown")
	m.RuntimeError("timeout")
	m.Admission(1<<30, func() (int64, int) { return 0, 0 })
}

// TestNilRecordsNothing: a nil *Metrics takes every call as a no-op, so the server need not check
// for it; a real one records them.
func TestNilRecordsNothing(t *testing.T) {
	var none *Metrics
	record(none) // must not panic
	none.JobDone()
	m := New()
	record(m)
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			switch {
			case s.GetCounter() != nil:
				got[f.GetName()] += s.GetCounter().GetValue()
			case s.GetGauge() != nil:
				got[f.GetName()] += s.GetGauge().GetValue()
			case s.GetHistogram() != nil:
				got[f.GetName()] += float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	for name, want := range map[string]float64{
		"ocrgate_http_requests_total":     1,
		"ocrgate_stage_duration_seconds":  5, // four stages and the chat
		"ocrgate_document_pages_total":    1,
		"ocrgate_jobs_in_flight":          1,
		"ocrgate_rejected_total":          1,
		"ocrgate_requests_canceled_total": 1,
		"ocrgate_runtime_errors_total":    1,
		"ocrgate_memory_budget_bytes":     1 << 30,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
}
