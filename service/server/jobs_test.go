package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/server"
)

// The job tests run the real embedded NATS server (JetStream in a temporary directory) and the
// tier's OCR engine: a job's pages are read by the service's own workers.

type jobBody struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Pages struct {
		Total, Done, Failed int
	} `json:"pages"`
	Redeliveries int      `json:"redeliveries"`
	Result       *docBody `json:"result"`
	Error        *struct{ Error, Code string }
}

// jobApp is the document service with jobs on a fresh embedded store.
func jobApp(t testing.TB, opt server.Options, cfg jobs.Config) (*checkedApp, *jobs.Store) {
	t.Helper()
	cfg.Dir = t.TempDir()
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	st, err := jobs.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); time.Sleep(100 * time.Millisecond) })
	opt.Jobs, opt.Context = st, ctx
	return docApp(t, opt, nil, nil), st
}

func submitJob(t testing.TB, app *checkedApp, doc []byte, query, key string) (int, jobBody, http.Header) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/jobs"+query, bytes.NewReader(doc))
	req.Header.Set("Content-Type", "application/pdf")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var j jobBody
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
	} else {
		j.Error = &struct{ Error, Code string }{}
		_ = json.Unmarshal(body, j.Error)
	}
	return resp.StatusCode, j, resp.Header
}

func jobCall(t testing.TB, app *checkedApp, method, path, key string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return call(t, app, req)
}

// waitJob waits on the job until it is final, and fails the test if that takes more than limit.
func waitJob(t testing.TB, app *checkedApp, id, key string, limit time.Duration) jobBody {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		code, body := jobCall(t, app, http.MethodGet, "/jobs/"+id+"?wait=20s", key)
		if code != 200 {
			t.Fatalf("GET /jobs/%s: %d %s", id, code, body)
		}
		var j jobBody
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatal(err)
		}
		if j.State == "succeeded" || j.State == "failed" || j.State == "canceled" {
			return j
		}
	}
	t.Fatalf("job %s not finished within %s", id, limit)
	return jobBody{}
}

// scannedPages is a scanned PDF of n pages, the tier's receipts in turn.
func scannedPages(t testing.TB, n int) []byte {
	f := fixtures(t)
	jpegs := make([][]byte, n)
	for i := range jpegs {
		jpegs[i] = f.jpeg
		if i%2 == 1 {
			jpegs[i] = jpegOf(t, f.fields)
		}
	}
	return scanned(t, jpegs, nil, false)
}

// TestJobMatchesSyncPages: a scanned multi-page PDF read as one job answers every page once, and
// each page as POST /ocr answers it.
func TestJobMatchesSyncPages(t *testing.T) {
	n := 6
	if testing.Short() {
		n = 4
	}
	jobMatchesSync(t, n)
}

// jobMatchesSync reads a scanned PDF of n pages as one job and checks every page against /ocr's
// answer (read 50 pages a request, the synchronous limit).
func jobMatchesSync(t *testing.T, n int) {
	app, st := jobApp(t, server.Options{}, jobs.Config{})
	doc := scannedPages(t, n)
	code, j, h := submitJob(t, app, doc, "", "")
	if code != 202 || h.Get("Location") != "/jobs/"+j.ID || j.Pages.Total != n {
		t.Fatalf("submit: %d %+v %v", code, j, h)
	}
	j = waitJob(t, app, j.ID, "", time.Duration(n)*time.Minute)
	if j.State != "succeeded" || j.Pages.Done != n || j.Pages.Failed != 0 || j.Result == nil || len(j.Result.Pages) != n {
		t.Fatalf("job: %+v", j)
	}
	if j.Result.ImageInfo.Format != "pdf" || j.Result.ImageInfo.Pages != n {
		t.Errorf("image_info %+v", j.Result.ImageInfo)
	}
	var texts []string
	for first := 1; first <= n; first += 50 {
		last := min(first+49, n)
		sync := readDocument(t, app, doc, map[string]any{"pages": fmt.Sprintf("%d-%d", first, last)})
		for k, s := range sync.Pages {
			p := j.Result.Pages[first-1+k]
			if p.Page != first+k || p.Text != s.Text || !sameRegions(p.Regions, s.Regions) || p.Source != s.Source {
				t.Errorf("page %d: the job read %q (%s), /ocr %q (%s)", first+k, p.Text, p.Source, s.Text, s.Source)
			}
			texts = append(texts, s.Text)
		}
	}
	if j.Result.Text != strings.Join(texts, "\f") {
		t.Errorf("the job's text is not /ocr's pages joined")
	}
	if n, b, err := st.Documents(context.Background()); err != nil || n != 0 {
		t.Errorf("a finished job left %d documents (%d bytes) in the store: %v", n, b, err)
	}
	if n <= 50 {
		jobResultAs(t, app, j.ID, doc, n)
	}
}

// jobResultAs checks a finished job's result asked for as text (by "format") and as hOCR (by
// Accept): the text is what /ocr writes for the same document, byte for byte, and the hOCR has
// one ocr_page per page.
func jobResultAs(t *testing.T, app *checkedApp, id string, doc []byte, n int) {
	t.Helper()
	code, text := jobCall(t, app, http.MethodGet, "/jobs/"+id+"?format=text", "")
	req := httptest.NewRequest(http.MethodPost, "/ocr?format=text", bytes.NewReader(doc))
	req.Header.Set("Content-Type", "application/pdf")
	syncCode, syncText := call(t, app, req)
	if code != 200 || syncCode != 200 || string(text) != string(syncText) || strings.Count(string(text), "\f") != n-1 {
		t.Errorf("the job's text (%d, %d bytes) is not /ocr's (%d, %d bytes)", code, len(text), syncCode, len(syncText))
	}
	req = httptest.NewRequest(http.MethodGet, "/jobs/"+id, nil)
	req.Header.Set("Accept", "text/vnd.hocr+html")
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	hocr, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/vnd.hocr+html") ||
		strings.Count(string(hocr), "class='ocr_page'")+strings.Count(string(hocr), `class="ocr_page"`) != n {
		t.Errorf("the job's hOCR: %d %s, %d ocr_page of %d", resp.StatusCode, resp.Header.Get("Content-Type"),
			strings.Count(string(hocr), "ocr_page"), n)
	}
}

// TestJobLifecycle: ownership, deletion (twice, and waiting on a deleted job), cancelling while
// pages are at work, and the refusals.
func TestJobLifecycle(t *testing.T) {
	app, st := jobApp(t, server.Options{APIKeys: []string{"key-a", "key-b"}}, jobs.Config{MaxPages: 20, Workers: 1})
	doc := scannedPages(t, 12)
	code, j, _ := submitJob(t, app, doc, "", "key-a")
	if code != 202 {
		t.Fatalf("submit: %d %+v", code, j.Error)
	}
	for _, tt := range []struct {
		name, method, path, key string
		status                  int
		code                    string
	}{
		{"no key", http.MethodGet, "/jobs/" + j.ID, "", 401, "unauthorized"},
		{"other key", http.MethodGet, "/jobs/" + j.ID, "key-b", 404, "job_not_found"},
		{"other key deletes", http.MethodDelete, "/jobs/" + j.ID, "key-b", 404, "job_not_found"},
		{"unknown id", http.MethodGet, "/jobs/0123456789abcdef01234567", "key-a", 404, "job_not_found"},
		{"not an id", http.MethodGet, "/jobs/..%2F..", "key-a", 404, "job_not_found"},
		{"bad wait", http.MethodGet, "/jobs/" + j.ID + "?wait=soon", "key-a", 400, "invalid_wait"},
		{"text before it finishes", http.MethodGet, "/jobs/" + j.ID + "?format=text", "key-a", 409, "job_not_finished"},
		{"as a PDF", http.MethodGet, "/jobs/" + j.ID + "?format=pdf", "key-a", 400, "format_not_for_jobs"},
		{"an unknown format", http.MethodGet, "/jobs/" + j.ID + "?format=braille", "key-a", 400, "invalid_format"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := jobCall(t, app, tt.method, tt.path, tt.key)
			checkJSONError(t, code, body, tt.status, tt.code)
		})
	}
	// Cancel while its pages are at work: the job and its document are gone.
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := jobCall(t, app, http.MethodGet, "/jobs/"+j.ID+"?wait=10s", "key-a")
		var now jobBody
		_ = json.Unmarshal(body, &now)
		if code != 200 || now.State == "running" || time.Now().After(deadline) {
			break
		}
	}
	if code, body := jobCall(t, app, http.MethodDelete, "/jobs/"+j.ID, "key-a"); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	code, body := jobCall(t, app, http.MethodDelete, "/jobs/"+j.ID, "key-a")
	checkJSONError(t, code, body, 404, "job_not_found")
	code, body = jobCall(t, app, http.MethodGet, "/jobs/"+j.ID+"?wait=2s", "key-a")
	checkJSONError(t, code, body, 404, "job_not_found")
	time.Sleep(300 * time.Millisecond)
	if n, b, err := st.Documents(context.Background()); err != nil || n != 0 {
		t.Errorf("a deleted job left %d documents (%d bytes): %v", n, b, err)
	}
	// An idempotent retry answers the same job.
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/jobs", bytes.NewReader(scannedPages(t, 1)))
		r.Header.Set("Content-Type", "application/pdf")
		r.Header.Set("Authorization", "Bearer key-b")
		r.Header.Set("Idempotency-Key", "batch-7")
		return r
	}
	c1, b1 := call(t, app, req())
	c2, b2 := call(t, app, req())
	var j1, j2 jobBody
	_ = json.Unmarshal(b1, &j1)
	_ = json.Unmarshal(b2, &j2)
	if c1 != 202 || c2 != 200 || j1.ID == "" || j1.ID != j2.ID {
		t.Errorf("idempotent retry: %d %s, then %d %s", c1, b1, c2, b2)
	}
	// Too many pages for a job.
	code, j, _ = submitJob(t, app, scannedPages(t, 21), "", "key-a")
	if code != 413 || j.Error.Code != "too_many_pages" {
		t.Errorf("21 pages: %d %+v", code, j.Error)
	}
	// What a job could not honour is refused at submission, not dropped or failed page by page: a
	// format other than JSON, a language this service has not loaded.
	for _, tt := range []struct{ query, code string }{
		{"?format=hocr", "format_not_for_jobs"},
		{"?format=braille", "invalid_format"},
		{"?lang=ja", "lang_not_loaded"},
	} {
		if code, j, _ := submitJob(t, app, scannedPages(t, 1), tt.query, "key-a"); code != 400 || j.Error.Code != tt.code {
			t.Errorf("%s: %d %+v, want 400 %s", tt.query, code, j.Error, tt.code)
		}
	}
}

// TestHostileJobs: hostile documents sent as jobs are refused as /ocr refuses them, or fail as a
// job; none is stuck and none leaves its document in the store. Three of them go again followed
// by 17 MiB of random bytes, so that the PDF engine reads them through a reader over their
// mapping (past the jobs' read-through size), their cross-reference table lost behind the noise.
func TestHostileJobs(t *testing.T) {
	app, st := jobApp(t, server.Options{}, jobs.Config{})
	noise := make([]byte, 17<<20)
	_, _ = rand.Read(noise)
	padded := map[string]bool{"page count in the millions": true, "page tree that contains itself": true,
		"image of 20000×20000 px from 64 KiB": true}
	for _, h := range hostile.PDFs() {
		hostileJob(t, app, h.Name, h.Data)
		if padded[h.Name] {
			hostileJob(t, app, h.Name+", padded", append(bytes.Clone(h.Data), noise...))
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n, b, err := st.Documents(context.Background()); err != nil || n != 0 {
		t.Errorf("hostile jobs left %d documents (%d bytes): %v", n, b, err)
	}
}

func hostileJob(t *testing.T, app *checkedApp, name string, data []byte) {
	t.Run(name, func(t *testing.T) {
		code, j, _ := submitJob(t, app, data, "", "")
		switch {
		case code == 202:
			j = waitJob(t, app, j.ID, "", 3*time.Minute)
			if j.State == "failed" && j.Error == nil {
				t.Errorf("failed without an error: %+v", j)
			}
		case code >= 400 && code < 500:
			if j.Error == nil || j.Error.Code == "" {
				t.Errorf("%d without a code", code)
			}
		default:
			t.Errorf("status %d: %+v", code, j.Error)
		}
	})
}
