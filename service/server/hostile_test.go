package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"net/http"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

func imageRequest(data []byte) *http.Request {
	body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(data)})
	return postJSON("/ocr", "application/json", body)
}

// allocated runs fn and returns the bytes the Go heap allocated meanwhile (whoever allocated
// them: a bound, not an exact figure) and how long it took.
func allocated(fn func()) (int64, time.Duration) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	fn()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc), took
}

// TestHostileFiles sends the uploads that took the service past its memory or its deadline, each
// built in Go and sent as base64 JSON, as the body itself and in a multipart form: every one is
// refused with a 4xx well within the deadline, having allocated a small fraction of what it asked
// for.
func TestHostileFiles(t *testing.T) {
	// About the budget of the default plan: 1 GiB less 150 MiB at rest, the 64 MiB reserve and
	// the runtime reserve of two runs (412 MiB).
	const budget = 390 << 20
	gate := admission.New(admission.Options{Budget: budget, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	const deadline = 20 * time.Second
	app := newApp(t, server.Options{Gate: gate, MaxRequestCost: budget, RequestTimeout: deadline}, nil)
	tests := []struct {
		name     string
		data     []byte
		status   int
		code     string
		maxAlloc int64 // bytes; the body and its decoded copy are a few MB at most
	}{
		// 16×16 for image.DecodeConfig, 8192×8192 (67 MB of pixels) behind "FF 00".
		{"smuggled frame", hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(8192, 8192), false), 422, "undecodable_image", 16 << 20},
		// 1 500 scans over 50 MP: 48–51 s of image/jpeg before.
		{"progressive scan bomb", hostile.ScanBomb(7071, 7071, 1500), 422, "undecodable_image", 16 << 20},
		// 364 bytes asking for 750 MB of pixels and coefficients.
		{"tiny 7071² progressive", hostile.HugeProgressive(7071, 7071), 413, "image_too_large", 16 << 20},
		// 388 KB decoding to 400 MB of 16-bit RGBA.
		{"16-bit RGBA PNG bomb", hostile.PNG16Bomb(7071, 7071, 7071), 413, "image_too_large", 16 << 20},
	}
	// Each is sent in every shape of body the API takes: the answer is the same.
	shapes := []struct {
		name string
		req  func([]byte) *http.Request
	}{
		{"base64 JSON", imageRequest},
		{"raw body", func(data []byte) *http.Request { return rawRequest("/ocr", "image/jpeg", data, nil) }},
		{"form", func(data []byte) *http.Request {
			return formRequest("/ocr", []file{{"x.jpg", "image/jpeg", data}}, nil, nil)
		}},
	}
	for _, tt := range tests {
		for _, shape := range shapes {
			t.Run(tt.name+"/"+shape.name, func(t *testing.T) {
				var code int
				var body []byte
				alloc, took := allocated(func() { code, body = call(t, app, shape.req(tt.data)) })
				checkJSONError(t, code, body, tt.status, tt.code)
				if took > deadline/2 {
					t.Errorf("answered after %v", took)
				}
				if alloc > tt.maxAlloc {
					t.Errorf("allocated %d MB before refusing a %d KB upload", alloc>>20, len(tt.data)>>10)
				}
				t.Logf("%d KB → %d %s in %v, %d MB allocated: %s", len(tt.data)>>10, code, tt.code, took.Round(time.Millisecond), alloc>>20, body)
			})
		}
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Fatalf("the gate holds %+v after the hostile requests", s)
	}
}

// TestAdmittedHugeImageStaysWithinItsCost: a progressive image that is legal but costly is
// admitted, fails (its data is cut short) with 422, and the memory it allocated stays within the
// cost it was admitted for.
func TestAdmittedHugeImageStaysWithinItsCost(t *testing.T) {
	eng := embeddedEngine(t)
	gate := admission.New(admission.Options{Budget: 2 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	app := newApp(t, server.Options{Gate: gate, MaxRequestCost: 2 << 30}, nil)
	data := hostile.HugeProgressive(4000, 4000) // 16 MP at 4:4:4: 48 MB of planes, 192 MB of coefficients
	h, err := eng.Pipeline.Inspect(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	cost := eng.Pipeline.Cost(h)
	var code int
	var body []byte
	alloc, _ := allocated(func() { code, body = call(t, app, imageRequest(data)) })
	checkJSONError(t, code, body, 422, "undecodable_image")
	if alloc > cost {
		t.Fatalf("allocated %d MB, admitted for %d MB", alloc>>20, cost>>20)
	}
	if alloc < 200<<20 {
		t.Fatalf("allocated only %d MB: the file no longer exercises the decoder's allocation", alloc>>20)
	}
	t.Logf("admitted for %d MB, allocated %d MB", cost>>20, alloc>>20)
}

// TestAbandonedDecodeKeepsItsAdmission: a decode that outlives its request's deadline (a
// progressive JPEG within the scan limit, seconds of image/jpeg) answers 504 at the deadline, and
// its memory stays admitted until the decoder really ends, then comes back.
func TestAbandonedDecodeKeepsItsAdmission(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 2 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	app := newApp(t, server.Options{Gate: gate, RequestTimeout: 300 * time.Millisecond}, nil)
	data := hostile.ScanBomb(6000, 6000, 60) // 60 scans (the limit is 64) over 36 MP
	running := goleak.IgnoreCurrent()
	start := time.Now()
	code, body := call(t, app, imageRequest(data))
	took := time.Since(start)
	checkJSONError(t, code, body, 504, "timeout")
	if took > 3*time.Second {
		t.Errorf("answered after %v", took)
	}
	if gate.Stats().Used == 0 {
		t.Fatal("the admission went back while the decoder still runs")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for gate.Stats().Used != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the admission never came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("504 after %v; the decoder ended %v after the request", took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	goleak.VerifyNone(t, running, fasthttpClock)
}

// TestAbandonedDecodeCountsInFlight: a decode abandoned at its request's deadline is a job in
// flight (ocrgate_jobs_in_flight) for as long as it runs and holds its admission, and is counted
// no longer once it ends.
func TestAbandonedDecodeCountsInFlight(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 2 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	m := metrics.New()
	app := newApp(t, server.Options{Gate: gate, Metrics: m, RequestTimeout: 300 * time.Millisecond}, nil)
	inFlight := func() float64 { return metricValue2(t, m, "ocrgate_jobs_in_flight", nil) }
	code, body := call(t, app, imageRequest(hostile.ScanBomb(6000, 6000, 60)))
	checkJSONError(t, code, body, 504, "timeout")
	if gate.Stats().Used == 0 {
		t.Fatal("the decode ended before the deadline: nothing to see")
	}
	if n := inFlight(); n != 1 {
		t.Errorf("ocrgate_jobs_in_flight = %v while the abandoned decode runs, want 1", n)
	}
	for deadline := time.Now().Add(2 * time.Minute); gate.Stats().Used != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the admission never came back")
		}
	}
	if n := inFlight(); n != 0 {
		t.Errorf("ocrgate_jobs_in_flight = %v once the decode has ended, want 0", n)
	}
}

// TestRefusedBeforeParsing: when as many requests are inside as the gate can run and queue, a
// new one is refused before its body is parsed: a body that is not JSON gets 429, not 400.
func TestRefusedBeforeParsing(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 1, MaxQueue: 1, MaxWait: time.Second})
	app := newApp(t, server.Options{Gate: gate}, nil)
	for range 2 {
		leave, err := gate.Enter()
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
	}
	code, body := call(t, app, postJSON("/ocr", "application/json", []byte("this is not JSON")))
	checkJSONError(t, code, body, 429, "overloaded")
}
