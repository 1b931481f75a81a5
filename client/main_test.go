package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/server"
)

// The examples and tests call a real ocrgate: the embedded runtime with the real models, served
// on a loopback port. Only the chat model behind /ocr-json is a stand-in (chatServer), as a hosted
// model is not something a test machine runs.
var (
	serverURL string // the ocrgate the examples call
	apiKey    = "demo-key"
)

// receipt is the photographed receipt the repository renders (testdata/receipts, see
// internal/testenv).
const receipt = "../testdata/receipts/img/photo.jpg"

// TestMain serves the examples and tests from one real ocrgate (the examples cannot start one of
// their own). The fast tier (-short) has no models: it starts none, every test that needs one
// skips (live), and the examples, which cannot skip, are left out.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		if err := skipExamples(); err != nil {
			fmt.Fprintln(os.Stderr, "client tests:", err)
			os.Exit(2)
		}
		os.Exit(m.Run())
	}
	code, err := runWithServer(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// skipExamples adds the examples to -test.skip.
func skipExamples() error {
	skip := "^Example"
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		skip = f.Value.String() + "|" + skip
	}
	return flag.Set("test.skip", skip)
}

// live is the URL of the package's ocrgate; in the fast tier it skips the test.
func live(t testing.TB) string {
	t.Helper()
	testenv.Models(t)
	return serverURL
}

func runWithServer(m *testing.M) (int, error) {
	if err := testenv.ModelsPresent(); err != nil {
		return 0, err
	}
	eng, err := sharedEngine()
	if err != nil {
		return 0, err
	}
	defer eng.Close()
	chat := httptest.NewServer(http.HandlerFunc(chatCompletions))
	defer chat.Close()
	ex, err := extract.New(extract.Options{Model: "stand-in", BaseURL: chat.URL + "/v1", Timeout: 30 * time.Second})
	if err != nil {
		return 0, err
	}
	// Documents as the service reads them (its default settings, its compile cache).
	cfg, err := config.Load(nil, os.Getenv, io.Discard)
	if err != nil {
		return 0, err
	}
	docs, _ := engine.Documents(cfg)
	defer docs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold compile under -race
	defer cancel()
	if err := docs.Ready(ctx); err != nil {
		return 0, err
	}
	// Jobs on an embedded NATS server in a directory of the run's own.
	dir, err := os.MkdirTemp("", "ocrgate-client-jobs")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	store, err := jobs.Open(ctx, jobs.Config{Dir: dir, Workers: 1}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return 0, err
	}
	defer func() { _ = store.Close() }()
	work, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	url, stop, err := serve(eng.Pipeline, server.Options{APIKeys: []string{apiKey}, Extractor: ex, Documents: docs, MaxImages: 16, Jobs: store, Context: work})
	if err != nil {
		return 0, err
	}
	defer stop()
	serverURL = url
	return m.Run(), nil
}

var (
	engineOnce sync.Once
	theEngine  *engine.Engine
	engineErr  error
)

// sharedEngine is the package's one embedded engine (ONNX Runtime sessions are big; share them).
func sharedEngine() (*engine.Engine, error) {
	engineOnce.Do(func() {
		cfg, err := config.Load(nil, os.Getenv, io.Discard)
		if err != nil {
			engineErr = err
			return
		}
		theEngine, engineErr = engine.Embedded(cfg)
	})
	return theEngine, engineErr
}

// serve runs the service over rec on a loopback port and returns its URL and a stop function.
func serve(rec server.Recognizer, opt server.Options) (string, func(), error) {
	eng, err := sharedEngine()
	if err != nil {
		return "", nil, err
	}
	if opt.RequestTimeout == 0 {
		opt.RequestTimeout = time.Minute
	}
	if opt.MaxBodyBytes == 0 {
		opt.MaxBodyBytes = 20 << 20
	}
	app := server.New(rec, eng, slog.New(slog.NewTextHandler(io.Discard, nil)), opt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	// Served as cmd/ocrgate serves it: behind the framing guard, which drains a body the service
	// refused unread (a 429 before the JSON is read) so that the client hears the answer.
	go app.Listener(server.GuardListener(ln, opt))
	return "http://" + ln.Addr().String(), func() { app.Shutdown() }, nil
}

// testServer is serve for one test, stopped when it ends.
func testServer(t *testing.T, rec server.Recognizer, opt server.Options) string {
	t.Helper()
	testenv.Models(t)
	if rec == nil {
		eng, err := sharedEngine()
		if err != nil {
			t.Fatal(err)
		}
		rec = eng.Pipeline
	}
	url, stop, err := serve(rec, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// busyServer is a service with one OCR slot and no queue whose slot is taken by a request that
// holds it until release is called: every other OCR request meets a full service (429).
func busyServer(t *testing.T) (url string, release func()) {
	t.Helper()
	testenv.Models(t)
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	h := &holding{Recognizer: eng.Pipeline, rec: eng.Pipeline, entered: make(chan struct{}), release: make(chan struct{})}
	url = testServer(t, h, server.Options{Gate: admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 1})})
	// The holding request reads a small blank page: once released it is done in milliseconds.
	var tiny bytes.Buffer
	if err := png.Encode(&tiny, image.NewGray(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body := fmt.Sprintf(`{"image": %q}`, b64(tiny.Bytes()))
		resp, err := http.Post(url+"/ocr", "application/json", strings.NewReader(body))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-h.entered
	var once sync.Once
	release = func() {
		once.Do(func() { close(h.release) })
		<-done
	}
	t.Cleanup(release)
	return url, release
}

// holding runs the real pipeline, but only once released: the request in it holds its admission
// slot until then.
type holding struct {
	server.Recognizer // Inspect and Cost come from the real pipeline
	rec               server.Recognizer
	entered           chan struct{}
	release           chan struct{}
	once              sync.Once
}

func (h *holding) RunAdmitted(ctx context.Context, image []byte, hd imaging.Header, lease imaging.Lease) (*ocr.Result, error) {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.rec.RunAdmitted(ctx, image, hd, lease)
}

// chatCompletions is an OpenAI-compatible chat-completions endpoint standing in for a model: it
// reads the receipt's date and total from the OCR text it is given, as a model would, and answers
// the receipt template's four fields.
func chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	text := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			text = m.Content
		}
	}
	out := map[string]any{"company": nil, "date": nil, "address": nil, "total": nil}
	if d := regexp.MustCompile(`\b\d{2}/\d{2}/\d{4}\b`).FindString(text); d != "" {
		out["date"] = d
	}
	for _, line := range strings.Split(text, "\n") {
		if u := strings.ToUpper(line); strings.Contains(u, "TOTAL") && strings.Contains(u, "CLUSIV") && out["total"] == nil {
			if n := regexp.MustCompile(`\d+\.\d{2}`).FindAllString(line, -1); len(n) > 0 {
				out["total"] = n[len(n)-1]
			}
		}
	}
	content, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}},
	})
}
