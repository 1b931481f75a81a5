package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/server"
)

// receipt and second are receipts the repository renders (testdata/receipts, see internal/testenv).
const (
	receipt = "../../testdata/receipts/img/photo.jpg"
	second  = "../../testdata/receipts/img/thermal.jpg"
)

// env is the process environment with some settings replaced. Unless the environment or over
// sets one, it gives the memory budget a figure: the service measures what it holds at rest from
// its own RSS, and a test process's RSS (the race detector's shadow memory, the harness, earlier
// tests' models and garbage) is no measure of a service at rest; derived from it, the budget of a
// 1 GiB default would shrink to its 64 MiB floor and refuse a two-page PDF.
func env(over map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := over[k]; ok {
			return v
		}
		if v := os.Getenv(k); v != "" || k != "OCRGATE_MEMORY_BUDGET" {
			return v
		}
		return "768MiB"
	}
}

// testEnv is the process environment with the test budget (see env).
var testEnv = env(nil)

// startService runs the real service, assembled as `ocrgate serve` does, on a loopback port.
func startService(t *testing.T, getenv func(string) string) string {
	t.Helper()
	testenv.Models(t)
	cfg, err := config.Load(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Jobs = false // an in-process run reads its files itself; the jobs directory is serve's
	app, eng, err := assemble(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("%v (run `make test`, which fetches the models first)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(server.GuardListener(ln, server.Options{MaxBodyBytes: cfg.MaxBodyBytes, MaxConnections: cfg.MaxConnections}))
	t.Cleanup(func() { app.Shutdown(); eng.Close() })
	return "http://" + ln.Addr().String()
}

// postOCR is what a curl user sees: POST /ocr with the file's base64.
func postOCR(t *testing.T, url string, img []byte) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(img)})
	resp, err := http.Post(url+"/ocr", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /ocr: %d %v", resp.StatusCode, err)
	}
	return ans
}

type cliRun struct {
	code           int
	stdout, stderr string
}

func runOCRGate(getenv func(string) string, stdin []byte, args ...string) cliRun {
	var out, errOut bytes.Buffer
	code := runCLI(args[0], args[1:], getenv, bytes.NewReader(stdin), &out, &errOut)
	return cliRun{code, out.String(), errOut.String()}
}

// TestOCRCommandPrintsWhatTheAPIAnswers: `ocrgate ocr receipt.jpg` prints the text /ocr answers,
// with the models in-process and through --server; --json prints the whole answer.
func TestOCRCommandPrintsWhatTheAPIAnswers(t *testing.T) {
	url := startService(t, testEnv)
	img, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	api := postOCR(t, url, img)
	want := api["text"].(string) + "\n"
	if !strings.Contains(want, "JOHOR BAHRU") {
		t.Fatalf("the API read no receipt: %q", want)
	}

	local := runOCRGate(testEnv, nil, "ocr", receipt)
	if local.code != exitOK || local.stdout != want {
		t.Errorf("in-process: exit %d, stdout differs from /ocr's text:\n%s\nstderr: %s", local.code, diff(local.stdout, want), local.stderr)
	}
	remote := runOCRGate(testEnv, nil, "ocr", "--server", url, receipt)
	if remote.code != exitOK || remote.stdout != want {
		t.Errorf("--server: exit %d, stdout differs from /ocr's text:\n%s\nstderr: %s", remote.code, diff(remote.stdout, want), remote.stderr)
	}
	viaEnv := runOCRGate(env(map[string]string{"OCRGATE_SERVER": url}), img, "ocr", "-")
	if viaEnv.code != exitOK || viaEnv.stdout != want {
		t.Errorf("OCRGATE_SERVER and stdin: exit %d, stdout differs:\n%s", viaEnv.code, diff(viaEnv.stdout, want))
	}

	asJSON := runOCRGate(testEnv, nil, "ocr", "--json", receipt)
	var got map[string]any
	if err := json.Unmarshal([]byte(asJSON.stdout), &got); err != nil || asJSON.code != exitOK {
		t.Fatalf("--json: exit %d, %v: %.300s", asJSON.code, err, asJSON.stdout)
	}
	delete(got, "processing_time")
	delete(api, "processing_time")
	g, _ := json.Marshal(got)
	a, _ := json.Marshal(api)
	if !bytes.Equal(g, a) {
		t.Errorf("--json answer differs from /ocr's (processing_time aside):\n%s", diff(string(g), string(a)))
	}
}

func diff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return "line " + strconv.Itoa(i+1) + ": got " + strconv.Quote(g) + ", want " + strconv.Quote(w)
		}
	}
	return "(equal)"
}

// TestOCRCommandExitCodes: usage errors, bad input and service failures have their own codes,
// and the message says what happened.
func TestOCRCommandExitCodes(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("plain text, not a picture"), 0o644)
	// keyed stands for the URL of a service with an API key: the full tier starts one, and the
	// fast tier, which has no models, skips the cases that need it.
	const keyed = "{keyed}"
	keyedURL := ""
	if !testing.Short() {
		keyedURL = startService(t, env(map[string]string{"OCRGATE_API_KEYS": "right-key"}))
	}
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no files", []string{"ocr"}, exitUsage, "no files given"},
		{"unknown flag", []string{"ocr", "--nope", receipt}, exitUsage, "flag provided but not defined"},
		{"template and schema", []string{"extract", "--template", "receipt", "--schema", text, receipt}, exitUsage, "not both"},
		{"schema file not JSON", []string{"extract", "--schema", text, "--server", keyed, receipt}, exitUsage, "not a readable JSON file"},
		{"stdin twice", []string{"ocr", "-", "-"}, exitUsage, "only once"},
		{"wrong API key", []string{"ocr", "--server", keyed, "--api-key", "wrong", receipt}, exitUsage, "401 unauthorized"},
		{"not an image", []string{"ocr", "--server", keyed, "--api-key", "right-key", text}, exitInput, "415 unsupported_image_format"},
		{"missing file", []string{"ocr", "--server", keyed, "--api-key", "right-key", filepath.Join(dir, "none.jpg")}, exitInput, "no such file"},
		{"service unreachable", []string{"ocr", "--server", deadURL, receipt}, exitService, "connection refused"},
		{"no chat model", []string{"extract", "--server", keyed, "--api-key", "right-key", receipt}, exitService, "503 chat_not_configured"},
		{"bad input and a failure: the failure wins", []string{"ocr", "-q", "--server", deadURL, text, receipt}, exitService, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := slices.Clone(tt.args)
			if i := slices.Index(args, keyed); i >= 0 {
				testenv.Models(t)
				args[i] = keyedURL
			}
			r := runOCRGate(testEnv, nil, args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, want %d; stderr %q lacks %q", r.code, tt.code, r.stderr, tt.stderr)
			}
			if strings.Contains(r.stderr, "right-key") {
				t.Error("the API key appears in the output")
			}
		})
	}
}

// TestOCRCommandHasACPUBudget: the models run in-process under the same CPU budget as the
// service's requests: a limit below what a receipt is estimated to need refuses it, as bad input.
func TestOCRCommandHasACPUBudget(t *testing.T) {
	testenv.Models(t)
	r := runOCRGate(env(map[string]string{"OCRGATE_MAX_REQUEST_CPU": "100ms"}), nil, "ocr", receipt)
	if r.code != exitInput || !strings.Contains(r.stderr, "413 cpu_budget_exceeded") {
		t.Errorf("exit %d, stderr %q; want %d and 413 cpu_budget_exceeded", r.code, r.stderr, exitInput)
	}
}

// TestOCRCommandManyFiles: with several files, results stream with a header per file, progress
// goes to stderr, and one bad file fails only itself.
func TestOCRCommandManyFiles(t *testing.T) {
	url := startService(t, testEnv)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("plain text"), 0o644)
	img, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}

	r := runOCRGate(testEnv, img, "ocr", "--server", url, "-j", "2", receipt, text, "-")
	if r.code != exitInput {
		t.Errorf("exit %d, want %d (one file is no image)", r.code, exitInput)
	}
	for _, want := range []string{"==> " + receipt + " <==\n", "==> - <==\n", "JOHOR BAHRU"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%.500s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "notes.txt") {
		t.Error("the failed file has output on stdout")
	}
	for _, want := range []string{"/3] " + receipt + ": done in", "/3] " + text + ": 415 unsupported_image_format", "[3/3]"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}

	// --json with several files: one line per file, the answer or the error.
	r = runOCRGate(testEnv, nil, "ocr", "--json", "-q", "--server", url, receipt, text)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || r.stderr != "" {
		t.Fatalf("%d lines, stderr %q:\n%.300s", len(lines), r.stderr, r.stdout)
	}
	byFile := map[string]fileLine{}
	for _, l := range lines {
		var fl fileLine
		if err := json.Unmarshal([]byte(l), &fl); err != nil {
			t.Fatalf("%v: %.200s", err, l)
		}
		byFile[fl.File] = fl
	}
	if fl := byFile[receipt]; !strings.Contains(string(fl.Result), "JOHOR BAHRU") || fl.Error != nil {
		t.Errorf("receipt line: %.200s", fl.Result)
	}
	if fl := byFile[text]; fl.Error == nil || fl.Error.Status != 415 || fl.Error.Code != "unsupported_image_format" {
		t.Errorf("text file line: %+v", fl.Error)
	}
}

// TestExtractCommand: `ocrgate extract --template receipt` prints the object the chat model
// filled, in-process with the service's CHAT_BOT_* settings. The chat model is a stand-in
// speaking the chat-completions protocol (a hosted model is not something a test runs).
func TestExtractCommand(t *testing.T) {
	testenv.Models(t)
	var sawOCR atomic.Bool
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sawOCR.Store(strings.Contains(string(body), "JOHOR BAHRU"))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c1", "object": "chat.completion", "created": time.Now().Unix(), "model": "stand-in",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{
				"role": "assistant", "content": `{"company": "KEDAI KOPI SERI MURNI", "date": "25/12/2018", "address": null, "total": "77.55"}`}}},
		})
	}))
	defer chat.Close()
	getenv := env(map[string]string{"CHAT_BOT_MODEL": "stand-in", "CHAT_BOT_BASEURL": chat.URL + "/v1"})
	r := runOCRGate(getenv, nil, "extract", "--template", "receipt", receipt)
	var got map[string]any
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &got) != nil {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if got["total"] != "77.55" || !sawOCR.Load() {
		t.Errorf("object %v; the OCR text reached the model: %v", got, sawOCR.Load())
	}
}

// TestOCRCommandReadsPDFs: `ocrgate ocr invoice.pdf` prints a born-digital PDF's text, page by
// page, in-process and through --server; --pages picks pages.
func TestOCRCommandReadsPDFs(t *testing.T) {
	testenv.Models(t)
	pdf, _, err := testdoc.BornDigital(
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117"}},
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TOTAL 1299.00 NET"}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "TAX INVOICE 2024-0117\fTOTAL 1299.00 NET\n"
	if r := runOCRGate(testEnv, nil, "ocr", file); r.code != exitOK || r.stdout != want {
		t.Errorf("in-process: exit %d, stdout %q, want %q; stderr %s", r.code, r.stdout, want, r.stderr)
	}
	url := startService(t, testEnv)
	if r := runOCRGate(testEnv, nil, "ocr", "--server", url, "--pages", "2", file); r.code != exitOK || r.stdout != "TOTAL 1299.00 NET\n" {
		t.Errorf("--server --pages 2: exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
	}
	if r := runOCRGate(testEnv, nil, "ocr", "--server", url, "--pages", "3", file); r.code != exitInput || !strings.Contains(r.stderr, "400 invalid_pages") {
		t.Errorf("--pages 3 of 2: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestOCRCommandFailedPages: a document with a page that cannot be read prints the pages that
// were, says on stderr which page failed and why, and exits with exitInput.
func TestOCRCommandFailedPages(t *testing.T) {
	testenv.Models(t)
	good := hostile.TextPage("FIRST PAGE OF THE LETTER")
	pdf := hostile.PDFPages(good, hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}, hostile.TextPage("THE LAST PAGE"))
	file := filepath.Join(t.TempDir(), "letter.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runOCRGate(testEnv, nil, "ocr", file)
	if r.code != exitInput || r.stdout != "FIRST PAGE OF THE LETTER\f\fTHE LAST PAGE\n" ||
		!strings.Contains(r.stderr, "letter.pdf: page 2: degenerate_page:") || strings.Contains(r.stderr, "page 1") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestServerSendsFilesAsFiles: with --server, a named file travels as itself (its media type,
// its length, the options in the query), so a service whose body limit is a little over the
// receipt's size reads it, where the receipt as base64 JSON (standard input's way) is over the
// limit; the answer is the same text as in-process.
func TestServerSendsFilesAsFiles(t *testing.T) {
	img, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	limit := len(img) + 1000 // the base64 is 4/3 of the file
	url := startService(t, env(map[string]string{"OCRGATE_MAX_BODY_BYTES": strconv.Itoa(limit)}))
	type seen struct {
		query, ctype string
		length       int64
	}
	var mu sync.Mutex
	var sent []seen
	target, _ := neturl.Parse(url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, seen{r.URL.RawQuery, r.Header.Get("Content-Type"), r.ContentLength})
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	last := func() seen {
		mu.Lock()
		defer mu.Unlock()
		return sent[len(sent)-1]
	}

	want := runOCRGate(testEnv, nil, "ocr", receipt)
	if want.code != exitOK || !strings.Contains(want.stdout, "JOHOR BAHRU") {
		t.Fatalf("in-process: exit %d: %s", want.code, want.stderr)
	}
	r := runOCRGate(testEnv, nil, "ocr", "--server", front.URL, "--pages", "1", receipt)
	if r.code != exitOK || r.stdout != want.stdout {
		t.Errorf("--server: exit %d, %s; stderr %s", r.code, diff(r.stdout, want.stdout), r.stderr)
	}
	if s := last(); s.ctype != "image/jpeg" || s.length != int64(len(img)) || s.query != "pages=1" {
		t.Errorf("sent %+v, want image/jpeg of %d bytes with pages=1", s, len(img))
	}
	// Standard input is read whole and sent as base64 JSON: over this service's limit.
	r = runOCRGate(testEnv, img, "ocr", "--server", front.URL, "-")
	if r.code != exitInput || !strings.Contains(r.stderr, "413 body_too_large") {
		t.Errorf("stdin: exit %d, stderr %q; want 413 body_too_large", r.code, r.stderr)
	}
	if s := last(); s.ctype != "application/json" {
		t.Errorf("stdin sent as %+v", s)
	}
}
