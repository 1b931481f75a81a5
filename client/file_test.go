package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/client"
	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// sent records the media type, length and path of each request a client sends.
type sent struct {
	mu   sync.Mutex
	reqs []*http.Request
	rt   http.RoundTripper
}

func (s *sent) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	return s.rt.RoundTrip(r)
}

func (s *sent) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// TestFiles: OCRFile and ExtractFile send the file itself, with its sniffed media type and its
// length (the file's, or the form's around it), and the real service answers them as it answers
// the same bytes sent as base64 JSON by OCR and Extract.
func TestFiles(t *testing.T) {
	url := live(t)
	rec := &sent{rt: http.DefaultTransport}
	c, err := client.New(url, client.WithAPIKey(apiKey), client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pdf, _, err := testdoc.BornDigital(
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117"}},
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TOTAL 1299.00 NET"}})
	if err != nil {
		t.Fatal(err)
	}
	pdfPath := filepath.Join(dir, "invoice")
	if err := os.WriteFile(pdfPath, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	img := readReceipt(t)
	ctx := t.Context()
	for _, tt := range []struct {
		name, path, ctype string
		data              []byte
		opts              []client.CallOption
	}{
		{"JPEG", receipt, "image/jpeg", img, []client.CallOption{client.PipelineOption("min_score", 0.6), client.PipelineOption("use_cls", false)}},
		{"PDF without an extension", pdfPath, "application/pdf", pdf, []client.CallOption{client.Pages("2"), client.Words()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := c.OCR(ctx, tt.data, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.OCRFile(ctx, tt.path, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			req := rec.last()
			if ct := req.Header.Get("Content-Type"); ct != tt.ctype || req.ContentLength != int64(len(tt.data)) {
				t.Errorf("sent %s of %d bytes, want %s of %d", ct, req.ContentLength, tt.ctype, len(tt.data))
			}
			got.ProcessingTime, want.ProcessingTime = 0, 0
			got.Raw, want.Raw = nil, nil
			got.RequestID, want.RequestID = "", ""
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("OCRFile answered\n%s\nOCR answered\n%s", g, w)
			}
			if tt.name == "JPEG" && len(got.Regions) < 40 || tt.name != "JPEG" && (len(got.Pages) != 1 || got.Pages[0].Text != "TOTAL 1299.00 NET") {
				t.Errorf("answer %s", g)
			}
		})
	}
	schema := json.RawMessage(`{"type":"object","properties":{"total":{"type":["string","null"]},"date":{"type":["string","null"]}},"required":["total","date"]}`)
	for _, tt := range []struct {
		name  string
		opt   client.CallOption
		ctype string
	}{
		{"template, the file as the body", client.Template("receipt"), "image/jpeg"},
		{"schema, in a form", client.Schema(schema), "multipart/form-data"},
	} {
		t.Run("extract with a "+tt.name, func(t *testing.T) {
			want, err := c.Extract(ctx, img, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ExtractFile(ctx, receipt, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			req := rec.last()
			if mt := req.Header.Get("Content-Type"); len(mt) < len(tt.ctype) || mt[:len(tt.ctype)] != tt.ctype || req.ContentLength < int64(len(img)) {
				t.Errorf("sent %s of %d bytes, want %s", mt, req.ContentLength, tt.ctype)
			}
			var g map[string]any
			if err := got.Decode(&g); err != nil || g["total"] != "77.55" || string(got.Object) != string(want.Object) {
				t.Errorf("ExtractFile %s, Extract %s: %v", got.Object, want.Object, err)
			}
		})
	}
	if _, err := c.OCRFile(ctx, filepath.Join(dir, "missing.jpg")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := c.OCRFile(ctx, dir); err == nil {
		t.Error("a directory was sent")
	}
	var apiErr *client.Error
	if _, err := c.OCRFile(ctx, pdfPath, client.Pages("3")); !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "invalid_pages" {
		t.Errorf("a page the PDF lacks: %v", err)
	}
}

// TestFileIsStreamed: a file is sent from disk as it is read, not read into memory first: a
// 64 MiB file costs the client a small fraction of its size.
func TestFileIsStreamed(t *testing.T) {
	var received int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"","regions":[]}`)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "big.tif")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	f.WriteString("II*\x00")
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.OCRFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB file: %d KiB allocated (client and server)", size>>20, alloc>>10)
	if received != size {
		t.Errorf("the server received %d bytes of %d", received, size)
	}
	if alloc > 8<<20 {
		t.Errorf("sending a %d MiB file allocated %d MiB", size>>20, alloc>>20)
	}
}
