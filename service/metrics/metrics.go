// Package metrics holds ocrgate's Prometheus collectors: what an operator needs to see load,
// latency per pipeline stage, refusals and runtime failures, on one registry per server (so
// tests can build several servers without colliding on a global registry).
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ocrgate/ocrgate/service/ocr"
)

// Metrics are the service's collectors. A nil *Metrics records nothing: every method is a no-op
// on it, so code that may run without metrics calls them without checking.
type Metrics struct {
	Registry *prometheus.Registry

	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	stages        *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	rejected      *prometheus.CounterVec
	runtimeErrors *prometheus.CounterVec
	pages         *prometheus.CounterVec
	canceled      *prometheus.CounterVec
	panics        *prometheus.CounterVec
}

// New registers the collectors, plus Go runtime and process collectors, on a new registry.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	latencyBuckets := []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocrgate_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ocrgate_http_request_duration_seconds", Help: "HTTP request latency by route.", Buckets: latencyBuckets,
		}, []string{"route"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ocrgate_stage_duration_seconds", Help: "Time per request spent in each stage: decode, detection, classification, recognition, chat.", Buckets: latencyBuckets,
		}, []string{"stage"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ocrgate_jobs_in_flight", Help: "OCR jobs admitted now: running, or holding their admission for work their request gave up on but that has not stopped yet (a decode past its deadline).",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocrgate_rejected_total", Help: "Requests refused, by reason (overloaded, too_costly, body_memory, cpu_budget, chat_overloaded, unauthorized); cpu_budget counts requests, and entries of an images array, refused or stopped for their CPU budget.",
		}, []string{"reason"}),
		runtimeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocrgate_runtime_errors_total", Help: "Failed model-runtime or chat-model calls, by kind (unavailable, timeout, failed, chat).",
		}, []string{"kind"}),
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocrgate_document_pages_total", Help: "Document pages read, by where their text came from (text-layer, ocr).",
		}, []string{"source"}),
		canceled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocrgate_requests_canceled_total", Help: "Requests whose work was canceled, by reason (client_gone: the client closed the connection; shutdown).",
		}, []string{"reason"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocrgate_panics_total", Help: "Panics recovered, by the unit of work that failed alone (request handler, image, document page, recognizer batch, decode, text-layer check); each is logged with its stack and request ID.",
		}, []string{"unit"}),
	}
	reg.MustRegister(m.requests, m.latency, m.stages, m.inFlight, m.rejected, m.runtimeErrors, m.pages, m.canceled, m.panics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Request records one finished HTTP request.
func (m *Metrics) Request(route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// Stages records one image's pipeline timings, grouped the way an operator reads them.
func (m *Metrics) Stages(t *ocr.Timings) {
	if m == nil {
		return
	}
	m.stages.WithLabelValues("decode").Observe(t[ocr.StageDecode].Seconds())
	m.stages.WithLabelValues("detection").Observe((t[ocr.StageDetPre] + t[ocr.StageDetInfer] + t[ocr.StageDetPost]).Seconds())
	m.stages.WithLabelValues("classification").Observe((t[ocr.StageCrop] + t[ocr.StageClsPre] + t[ocr.StageClsInfer]).Seconds())
	m.stages.WithLabelValues("recognition").Observe((t[ocr.StageRecPre] + t[ocr.StageRecInfer] + t[ocr.StageCTC] + t[ocr.StageOrder]).Seconds())
}

// Chat records the time one structured extraction spent with the chat model.
func (m *Metrics) Chat(d time.Duration) {
	if m == nil {
		return
	}
	m.stages.WithLabelValues("chat").Observe(d.Seconds())
}

// Page records one document page read; source is text-layer or ocr.
func (m *Metrics) Page(source string) {
	if m == nil {
		return
	}
	m.pages.WithLabelValues(source).Inc()
}

// JobStarted and JobDone track OCR jobs in flight: from a job's admission to its release, which
// work the request abandoned but cannot stop delays until that work ends.
func (m *Metrics) JobStarted() {
	if m == nil {
		return
	}
	m.inFlight.Inc()
}

// JobDone marks the end of a job counted by JobStarted.
func (m *Metrics) JobDone() {
	if m == nil {
		return
	}
	m.inFlight.Dec()
}

// Rejected counts a request refused for reason.
func (m *Metrics) Rejected(reason string) {
	if m == nil {
		return
	}
	m.rejected.WithLabelValues(reason).Inc()
}

// Canceled counts a request whose work was canceled for reason (client_gone, shutdown).
func (m *Metrics) Canceled(reason string) {
	if m == nil {
		return
	}
	m.canceled.WithLabelValues(reason).Inc()
}

// Panic counts a panic recovered in a unit of work of the kind unit.
func (m *Metrics) Panic(unit string) {
	if m == nil {
		return
	}
	m.panics.WithLabelValues(unit).Inc()
}

// RuntimeError counts a failed runtime or chat call of a kind.
func (m *Metrics) RuntimeError(kind string) {
	if m == nil {
		return
	}
	m.runtimeErrors.WithLabelValues(kind).Inc()
}

// Admission exports the memory admission gate: the bytes admitted now, the budget, and the
// requests waiting, read from stats when scraped.
func (m *Metrics) Admission(budget int64, stats func() (admitted int64, waiting int)) {
	if m == nil {
		return
	}
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ocrgate_admitted_bytes", Help: "Memory cost of the OCR requests admitted now.",
		}, func() float64 { a, _ := stats(); return float64(a) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ocrgate_memory_budget_bytes", Help: "Memory the OCR requests admitted together may cost.",
		}, func() float64 { return float64(budget) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ocrgate_admission_waiting", Help: "OCR requests waiting for admission.",
		}, func() float64 { _, w := stats(); return float64(w) }),
	)
}
