package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/server"
)

const apiKey = "page-test-key"

// syncPages is the service's synchronous OCR page limit in the page test (OCRGATE_MAX_PAGES).
const syncPages = 2

// TestPageInChromium opens the demo page in headless Chromium (Debian's package, driven by
// playwright-core; nothing downloads a browser) against the real service with the real models,
// uploads a receipt (testdata/receipts) through the file input and checks what a person sees: as many boxes as
// the API found regions, the receipt's text, the 401 and 415 answers explained, the extraction
// result, keyboard and narrow-window use, a two-page PDF shown page by page with its text, and a
// PDF with a page that cannot be read shown with that page's reason (browsertest/page.test.mjs
// has the checks), and a scanned PDF over the synchronous page limit sent as a job, its pages
// done of total shown while it is read, then its pages and text. `make test`
// installs Chromium and playwright-core first (scripts/browser_tools.sh).
func TestPageInChromium(t *testing.T) {
	testenv.Models(t)
	browser := chromium(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: it runs the page test (see docs/development.md)")
	}
	if _, err := os.Stat("browsertest/node_modules/playwright-core/package.json"); err != nil {
		t.Fatal("playwright-core is not installed: run `make browser-tools` (make test does)")
	}

	// Strings of the receipt's ground truth the page must show.
	receipt := testenv.ReceiptPath(t, "photo")
	known := []string{"SIMPLIFIED TAX INVOICE", "KEDAI KOPI SERI MURNI"}
	gt, err := os.ReadFile(filepath.Join(testenv.Receipts(t), "box", "photo.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range known {
		if !strings.Contains(string(gt), ","+k+"\n") {
			t.Fatalf("%q is not a line of the receipt's ground truth", k)
		}
	}
	var key struct{ Total string }
	if data, err := os.ReadFile(filepath.Join(testenv.Receipts(t), "key", "photo.json")); err != nil || json.Unmarshal(data, &key) != nil || key.Total == "" {
		t.Fatalf("the receipt's key file: %v", err)
	}

	// A born-digital PDF of two pages, written here: the page must show both pages (boxes on
	// blank sheets) and their text.
	pdf, _, err := testdoc.BornDigital(
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117"}, {X: 72, Y: 140, Size: 12, Text: "TOTAL DUE 1299.00"}},
		[]testdoc.Text{{X: 72, Y: 100, Size: 16, Text: "THANK YOU FOR THE PAYMENT"}})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if dir := os.Getenv("OCRGATE_SCREENSHOTS"); dir != "" { // docs/page.png is made from page.png
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		out = dir
	}
	pdfPath := filepath.Join(out, "invoice.pdf")
	if err := os.WriteFile(pdfPath, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	pdfText := []string{"TAX INVOICE 2024-0117", "TOTAL DUE 1299.00", "THANK YOU FOR THE PAYMENT"}
	// A PDF whose page 2 cannot be read: the page must show the others and say why.
	good := hostile.TextPage("FIRST PAGE OF THE LETTER")
	failingPath := filepath.Join(out, "failing.pdf")
	failing := hostile.PDFPages(good, hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}, hostile.TextPage("THE LAST PAGE"))
	if err := os.WriteFile(failingPath, failing, 0o644); err != nil {
		t.Fatal(err)
	}

	// A scanned PDF of three receipts: more OCR pages than one request reads here (syncPages),
	// so the page sends it as a job and shows its progress.
	scan, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	scanned, err := testdoc.Scanned([][]byte{scan, scan, scan}, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	scannedPath := filepath.Join(out, "scanned.pdf")
	if err := os.WriteFile(scannedPath, scanned, 0o644); err != nil {
		t.Fatal(err)
	}

	url, posts := recording(t, startService(t))
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "page.test.mjs")
	cmd.Dir = "browsertest"
	cmd.Env = append(os.Environ(),
		"OCRGATE_URL="+url, "OCRGATE_KEY="+apiKey, "RECEIPT="+abs(t, receipt), "TOTAL="+key.Total,
		"KNOWN="+strings.Join(known, "\n"), "OUT_DIR="+out, "CHROMIUM="+browser,
		"PDF="+pdfPath, "PDF_TEXT="+strings.Join(pdfText, "\n"), "PDF_FAILING="+failingPath, "SCANNED="+scannedPath)
	output, err := cmd.CombinedOutput()
	t.Logf("%s", output)
	if err != nil {
		t.Fatalf("page test failed: %v", err)
	}

	// Each file went as itself in a multipart form, with the options as fields: never as base64.
	sent, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	var ocrForms, templates, schemas, pdfs, jobPosts int
	for _, p := range posts() {
		if p.path == "/jobs" {
			// A job's document goes as the file itself, streamed: no form around it.
			if p.ctype != "application/pdf" || !bytes.Equal(p.body, scanned) {
				t.Errorf("POST /jobs sent as %q, %d bytes; want the scanned PDF as itself", p.ctype, len(p.body))
			}
			jobPosts++
			continue
		}
		if !strings.HasPrefix(p.ctype, "multipart/form-data; boundary=") {
			t.Errorf("POST %s sent as %q", p.path, p.ctype)
			continue
		}
		switch {
		case p.path == "/ocr" && bytes.Contains(p.body, pdf):
			pdfs++
		case !bytes.Contains(p.body, sent):
		case p.path == "/ocr" && len(p.body) < len(sent)+1024:
			ocrForms++
		case p.path == "/ocr-json" && bytes.Contains(p.body, []byte("name=\"template\"\r\n\r\nreceipt\r\n")):
			templates++
		case p.path == "/ocr-json" && bytes.Contains(p.body, []byte("name=\"schema\"\r\n\r\n{")):
			schemas++
		}
	}
	if jobPosts != 1 {
		t.Errorf("%d POST /jobs; want 1, the scanned PDF", jobPosts)
	}
	if ocrForms < 1 || templates != 1 || schemas != 1 || pdfs != 1 {
		t.Errorf("forms holding the file as it is: %d to /ocr (receipt), %d to /ocr (PDF), %d to /ocr-json with a template, %d with a schema; want at least 1, then 1 each", ocrForms, pdfs, templates, schemas)
	}

	// The screenshot is a real picture of the page.
	f, err := os.Open(filepath.Join(out, "page.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %v", b)
	}
	t.Logf("screenshots in %s", out)
}

// post is a POST the page sent.
type post struct {
	path, ctype string
	body        []byte
}

// recording serves the page and the API of the service at target through a proxy that keeps
// every POST the page sends, for the test to check what went over the wire.
func recording(t *testing.T, target string) (string, func() []post) {
	t.Helper()
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	var posts []post
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
			if err != nil {
				http.Error(w, "read", http.StatusBadGateway)
				return
			}
			mu.Lock()
			posts = append(posts, post{r.URL.Path, r.Header.Get("Content-Type"), body})
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL, func() []post {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(posts)
	}
}

// chromium finds the browser: OCRGATE_CHROMIUM, else Debian's chromium on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OCRGATE_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("Chromium is not installed: run `make browser-tools` (make test does; it installs Debian's chromium package)")
	}
	return p
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// startService runs the real service with the page on, an API key, and a stand-in chat model
// behind /ocr-json, on a loopback port.
func startService(t *testing.T) string {
	t.Helper()
	// One request reads at most two pages by OCR here, so that a scanned PDF of three goes as a
	// job, as a big document does.
	getenv := func(k string) string {
		if k == "OCRGATE_MAX_PAGES" {
			return strconv.Itoa(syncPages)
		}
		return os.Getenv(k)
	}
	cfg, err := config.Load(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Embedded(cfg)
	if err != nil {
		t.Fatalf("embedded runtime: %v (run `make test`, which fetches the models first)", err)
	}
	t.Cleanup(func() { eng.Close() })
	chat := httptest.NewServer(http.HandlerFunc(readsReceipt))
	t.Cleanup(chat.Close)
	ex, err := extract.New(extract.Options{Model: "stand-in", BaseURL: chat.URL + "/v1", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := engine.Documents(cfg)
	t.Cleanup(func() { docs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold compile under -race
	defer cancel()
	if err := docs.Ready(ctx); err != nil {
		t.Fatalf("PDF engine: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := jobs.Open(context.Background(), jobs.Config{Dir: t.TempDir(), Workers: 1}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	work, stop := context.WithCancel(context.Background())
	t.Cleanup(func() { stop(); time.Sleep(100 * time.Millisecond) })
	app := server.New(eng.Pipeline, eng, log, server.Options{
		RequestTimeout: 2 * time.Minute, MaxBodyBytes: 20 << 20, CORSOrigins: "*",
		APIKeys: []string{apiKey}, Extractor: ex, UI: true, Documents: docs, Jobs: st, Context: work,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Served as cmd/ocrgate serves it: behind the framing guard, which drains a body refused
	// unread (a 401 before an upload is read), so that the proxy still writing it hears the
	// answer instead of a reset.
	go app.Listener(server.GuardListener(ln, server.Options{MaxBodyBytes: 20 << 20}))
	t.Cleanup(func() { app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// readsReceipt stands in for a chat model (a hosted one is not something a test runs): it speaks
// the chat-completions protocol and reads the total from the OCR text it is sent.
func readsReceipt(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	fields := map[string]any{"company": nil, "date": nil, "address": nil, "total": nil}
	for _, m := range req.Messages {
		for _, line := range strings.Split(m.Content, "\n") {
			if u := strings.ToUpper(line); m.Role == "user" && strings.Contains(u, "TOTAL") && strings.Contains(u, "CLUSIV") {
				if n := regexp.MustCompile(`\d+\.\d{2}`).FindAllString(line, -1); len(n) > 0 {
					fields["total"] = n[len(n)-1]
				}
			}
		}
	}
	content, _ := json.Marshal(fields)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "c1", "object": "chat.completion", "created": time.Now().Unix(), "model": "stand-in",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}},
	})
}
