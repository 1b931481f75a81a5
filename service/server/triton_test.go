package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/ppocrtest"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/server"
	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

var (
	embeddedOnce sync.Once
	embedded     *engine.Engine
	embeddedErr  error
)

// embeddedEngine is the in-process ONNX Runtime engine the Triton test double runs its models on,
// and the reference the Triton path is compared with.
func embeddedEngine(t testing.TB) *engine.Engine {
	t.Helper()
	needModels(t)
	embeddedOnce.Do(func() {
		cfg, err := config.Load(nil, os.Getenv, io.Discard)
		if err != nil {
			embeddedErr = err
			return
		}
		embedded, embeddedErr = engine.Embedded(cfg)
	})
	if embeddedErr != nil {
		t.Fatalf("embedded runtime: %v", embeddedErr)
	}
	return embedded
}

// startTriton starts the KServe v2 test server over loopback, serving the real models with the
// configs of model_repository/cpu.
func startTriton(t *testing.T, edit func([]tritontest.Model)) *tritontest.Server {
	t.Helper()
	models, err := ppocrtest.ONNXModels(embeddedEngine(t).Runtime, "../../model_repository/cpu")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(models)
	}
	srv, err := tritontest.Start(models...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// tritonApp is the service with OCRGATE_RUNTIME=triton pointed at addr.
func tritonApp(t *testing.T, addr string, timeout time.Duration) *checkedApp {
	app, closeApp := openTritonApp(t, addr, timeout)
	t.Cleanup(closeApp)
	return app
}

// openTritonApp is tritonApp with the close left to the caller, for tests that count goroutines
// after everything is shut.
func openTritonApp(t *testing.T, addr string, timeout time.Duration) (*checkedApp, func()) {
	t.Helper()
	env := map[string]string{"OCRGATE_RUNTIME": "triton", "OCRGATE_TRITON_ADDR": addr, "OCRGATE_REQUEST_TIMEOUT": timeout.String()}
	cfg, err := config.Load(nil, func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := server.New(eng.Pipeline, eng, log, server.Options{RequestTimeout: timeout, MaxBodyBytes: 20 << 20, CORSOrigins: "*"})
	return checked(t, app), func() { eng.Close() }
}

func call(t testing.TB, app *checkedApp, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func ocrRequest(img []byte) *http.Request {
	body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(img)})
	return postJSON("/ocr", "application/json", body)
}

func get(path string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	return req
}

// TestTritonMatchesEmbedded: the Triton path returns the same regions and text as the embedded
// runtime on every receipt the repository carries (identical text, boxes within a pixel).
func TestTritonMatchesEmbedded(t *testing.T) {
	needModels(t)
	srv := startTriton(t, nil)
	app := tritonApp(t, srv.Addr(), 2*time.Minute)
	if code, body := call(t, app, get("/readyz")); code != 200 {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	samples, err := ocrscore.Images(testenv.Receipts(t))
	if err != nil {
		t.Fatal(err)
	}
	ref := embeddedEngine(t).Pipeline
	for _, s := range samples {
		img, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Run(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		code, raw := call(t, app, ocrRequest(img))
		if code != 200 {
			t.Fatalf("%s: status %d: %s", s.ID, code, raw)
		}
		var got ocrBody
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || len(got.Regions) != len(want.Regions) {
			t.Errorf("%s: triton text differs from embedded:\n%s\n---\n%s", s.ID, got.Text, want.Text)
			continue
		}
		for i, r := range got.Regions {
			for k, p := range r.BoundingShape.Points {
				w := want.Regions[i].Quad[k]
				if math.Abs(float64(p.X)-w.X) > 1 || math.Abs(float64(p.Y)-w.Y) > 1 {
					t.Errorf("%s region %d corner %d: %v vs %v", s.ID, i, k, p, w)
				}
			}
		}
	}
	if n := srv.Calls("ModelInfer"); n < 3*len(samples) {
		t.Errorf("only %d inferences reached the server", n)
	}
}

func TestTritonDownAtStart(t *testing.T) {
	needModels(t) // the Triton path still reads the dictionary from the model directory
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	app := tritonApp(t, addr, 5*time.Second)

	for _, path := range []string{"/ping", "/healthz"} {
		if code, body := call(t, app, get(path)); code != 200 {
			t.Errorf("%s = %d %s while Triton is down", path, code, body)
		}
	}
	code, body := call(t, app, get("/readyz"))
	checkJSONError(t, code, body, 503, "not_ready")
	// Only the stable reason: the gRPC error text and the address stay in the log.
	if want := `{"error":"not ready: triton_unreachable","code":"not_ready"}`; string(body) != want {
		t.Errorf("/readyz body %s, want %s", body, want)
	}
	code, body = call(t, app, ocrRequest(readImage(t, "thermal.jpg")))
	checkJSONError(t, code, body, 503, "runtime_unavailable")
}

func TestTritonReadiness(t *testing.T) {
	srv := startTriton(t, nil)
	app := tritonApp(t, srv.Addr(), 30*time.Second)
	if code, body := call(t, app, get("/readyz")); code != 200 {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	srv.SetModelReady("ppocr_rec", false)
	code, body := call(t, app, get("/readyz"))
	checkJSONError(t, code, body, 503, "not_ready")
	if !strings.Contains(string(body), "ppocr_rec") {
		t.Errorf("readiness error does not name the model: %s", body)
	}
	if want := `{"error":"not ready: triton_not_ready; model_not_ready: ppocr_rec","code":"not_ready"}`; string(body) != want {
		t.Errorf("/readyz body %s, want %s", body, want)
	}
	srv.SetModelReady("ppocr_rec", true)
	srv.SetServerReady(false)
	code, body = call(t, app, get("/readyz"))
	checkJSONError(t, code, body, 503, "not_ready")
	if !strings.Contains(string(body), "triton_not_ready") {
		t.Errorf("readiness error does not say the server is not ready: %s", body)
	}
	srv.SetServerReady(true)
	if code, body := call(t, app, get("/readyz")); code != 200 {
		t.Fatalf("/readyz after recovery = %d %s", code, body)
	}
}

// TestTritonMetadataMismatch: a model whose tensors do not fit the pipeline keeps the service not
// ready, with a message that says what is wrong.
func TestTritonMetadataMismatch(t *testing.T) {
	srv := startTriton(t, func(models []tritontest.Model) {
		for i, m := range models {
			if m.Config.GetName() == "ppocr_rec" {
				c := proto.Clone(m.Config).(*inferencepb.ModelConfig)
				c.Output[0].Dims = []int64{-1, 100}
				models[i].Config = c
			}
		}
	})
	app := tritonApp(t, srv.Addr(), 30*time.Second)
	code, body := call(t, app, get("/readyz"))
	checkJSONError(t, code, body, 503, "not_ready")
	if want := `{"error":"not ready: metadata_mismatch: ppocr_rec","code":"not_ready"}`; string(body) != want {
		t.Errorf("readiness error is not clear: %s, want %s", body, want)
	}
}

// TestTritonKilledDuringBurst: Triton goes away while requests are in flight. Every request ends
// with 200 or a 503 JSON error (never a 500, and never the 504 of a request left hanging until
// its deadline), and the service recovers by itself when Triton is back. The deadlines are
// generous, as a busy machine may take many seconds over a request; a request that hung would
// show as a 504 all the same.
func TestTritonKilledDuringBurst(t *testing.T) {
	checkGoroutines(t)
	srv := startTriton(t, nil)
	app, closeApp := openTritonApp(t, srv.Addr(), 3*time.Minute)
	img := readImage(t, "thermal.jpg")

	const clients, perClient = 4, 3
	type result struct {
		code int
		body []byte
	}
	results := make(chan result, clients*perClient)
	var wg sync.WaitGroup
	var first sync.Once
	firstDone := make(chan struct{})
	for range clients {
		wg.Go(func() {
			for range perClient {
				code, body := call(t, app, ocrRequest(img))
				results <- result{code, body}
				first.Do(func() { close(firstDone) })
			}
		})
	}
	<-firstDone // the burst is running: some requests done, others in flight
	srv.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		t.Fatal("requests hung after Triton went away")
	}
	close(results)
	counts := map[int]int{}
	for r := range results {
		counts[r.code]++
		if r.code != 200 {
			checkJSONError(t, r.code, r.body, 503, "")
		}
	}
	t.Logf("statuses during the outage: %v", counts)
	if counts[503] == 0 || counts[200] == 0 {
		t.Errorf("want requests served before the outage and refused during it: %v", counts)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		code, _ := call(t, app, get("/readyz"))
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("service did not become ready again after Triton came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := call(t, app, ocrRequest(img)); code != 200 {
		t.Fatalf("/ocr after recovery = %d %s", code, body)
	}
	closeApp()
}

// TestTritonSlowerThanDeadline: a Triton slower than the request deadline gives a 504 JSON error
// at the deadline and leaves no goroutine behind.
func TestTritonSlowerThanDeadline(t *testing.T) {
	checkGoroutines(t)
	srv := startTriton(t, nil)
	app, closeApp := openTritonApp(t, srv.Addr(), 700*time.Millisecond)
	img := readImage(t, "thermal.jpg")
	srv.SetDelay(5 * time.Second)
	start := time.Now()
	code, body := call(t, app, ocrRequest(img))
	checkJSONError(t, code, body, 504, "timeout")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("504 came after %v; the deadline is 700ms", took)
	}
	srv.SetDelay(0)
	closeApp()
}

// checkGoroutines fails the test when goroutines started during it outlive it. Call it first, so
// its cleanup runs after every other (the app closed, the test server stopped); goleak retries
// while gRPC closes its connections asynchronously.
func checkGoroutines(t *testing.T) {
	t.Helper()
	running := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, running, fasthttpClock) })
}

// fasthttpClock is the goroutine fasthttp starts once per process, with its first server, to keep
// the Date header current; it is never stopped, so it is no leak of a test.
var fasthttpClock = goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1")

// checkJSONError checks a JSON error answer; an empty code accepts any.
func checkJSONError(t *testing.T, code int, body []byte, status int, want string) {
	t.Helper()
	if code != status {
		t.Errorf("status %d, want %d: %s", code, status, body)
	}
	var e struct{ Error, Code string }
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || (want != "" && e.Code != want) {
		t.Errorf("error body %s, want code %q", body, want)
	}
}
