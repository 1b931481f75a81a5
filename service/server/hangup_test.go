package server_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond every 20 ms until it holds or within passes; it reports how long it took.
func waitFor(within time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < within {
		if cond() {
			return time.Since(start), true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start), cond()
}

// TestHangUpStopsTheWork: a client that sends a long scanned PDF and hangs up while its pages
// are read gets its work stopped: the request's context is canceled as the connection closes,
// the pages still to come are never read, every admission goes back within a couple of
// seconds, and the request is logged and counted as 503 canceled by a client that left.
func TestHangUpStopsTheWork(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 2 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	var logs syncBuffer
	m := metrics.New()
	opt := server.Options{
		RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20, Gate: gate, Metrics: m,
		Documents: document.New(documentReader(t), documentConfig()),
	}
	eng := fixtures(t).engine
	app := checked(t, server.New(eng.Pipeline, eng, slog.New(slog.NewTextHandler(&logs, nil)), opt))
	addr := serveGuarded(t, app, opt)

	pages := make([][]byte, 50) // the page limit of documentReader
	for i := range pages {
		pages[i] = fixtures(t).jpeg
	}
	doc := scanned(t, pages, nil, true)
	body := fmt.Sprintf(`{"image":"%s"}`, base64.StdEncoding.EncodeToString(doc))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)

	// Wait until pages are being read, then hang up.
	if _, ok := waitFor(2*time.Minute, func() bool { return gate.Stats().Running > 0 }); !ok {
		t.Fatal("the document's pages never started")
	}
	time.Sleep(200 * time.Millisecond)
	conn.Close()
	took, ok := waitFor(30*time.Second, func() bool {
		st := gate.Stats()
		return st.Used == 0 && st.Running == 0 && st.Waiting == 0 && st.Inside == 0
	})
	t.Logf("admission back %v after the client hung up", took.Round(time.Millisecond))
	// Measured at 25 ms; the bound leaves room for a busy machine and the race detector.
	if !ok || took > 3*time.Second {
		t.Fatalf("the request still held the gate %v after its client hung up: %+v", took, gate.Stats())
	}
	if _, ok := waitFor(5*time.Second, func() bool { return metricValue(t, m, "ocrgate_requests_canceled_total", "client_gone") == 1 }); !ok {
		t.Errorf("ocrgate_requests_canceled_total{reason=\"client_gone\"} = %v, want 1", metricValue(t, m, "ocrgate_requests_canceled_total", "client_gone"))
	}
	if log := logs.String(); !strings.Contains(log, "code=canceled") || !strings.Contains(log, "canceled=client_gone") {
		t.Errorf("the log does not say the request was canceled by its client:\n%s", log)
	}
	if n := metricValue(t, m, "ocrgate_stage_duration_seconds", "decode"); n >= float64(len(pages)) {
		t.Errorf("%v pages were read for a client that had left", n)
	}
}

// metricValue is a counter's value, or a histogram's count, of the series of name whose one
// label has the value label.
func metricValue(t testing.TB, m *metrics.Metrics, name, label string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if len(s.GetLabel()) == 1 && s.GetLabel()[0].GetValue() == label {
				if s.GetCounter() != nil {
					return s.GetCounter().GetValue()
				}
				return float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}
