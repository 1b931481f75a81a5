package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/openapi"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestPage: the demo page and its two files are served from the binary with their types, a CSP
// and ETags; an unknown file is a JSON 404; OCRGATE_UI=false turns the page off but not the API
// document.
func TestPage(t *testing.T) {
	on := newApp(t, server.Options{UI: true, APIKeys: []string{"secret"}}, nil)
	off := newApp(t, server.Options{UI: false}, nil)
	tests := []struct {
		name     string
		app      *checkedApp
		path     string
		status   int
		ctype    string
		contains string
	}{
		{"page", on, "/", 200, "text/html; charset=utf-8", `<input type="file" id="file"`},
		{"script", on, "/ui/app.js", 200, "text/javascript; charset=utf-8", "fetch(path"},
		{"stylesheet", on, "/ui/app.css", 200, "text/css; charset=utf-8", ".box"},
		{"unknown file", on, "/ui/secret.txt", 404, "application/json", `"code":"not_found"`},
		{"path escape", on, "/ui/..%2Fopenapi.json", 404, "application/json", `"code":"not_found"`},
		{"document", on, "/openapi.json", 200, "application/json", `"openapi": "3.1.0"`},
		{"page off", off, "/", 404, "application/json", `"code":"not_found"`},
		{"files off", off, "/ui/app.js", 404, "application/json", `"code":"not_found"`},
		{"document with the page off", off, "/openapi.json", 200, "application/json", `"openapi": "3.1.0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.app.Test(httptest.NewRequest(http.MethodGet, tt.path, nil), -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body bytes.Buffer
			body.ReadFrom(resp.Body)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != tt.ctype {
				t.Fatalf("GET %s = %d %q, want %d %q", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status, tt.ctype)
			}
			if !strings.Contains(body.String(), tt.contains) {
				t.Errorf("GET %s lacks %q", tt.path, tt.contains)
			}
		})
	}

	// The page is public even with API keys configured; its CSP allows nothing from elsewhere.
	resp, err := on.Test(httptest.NewRequest(http.MethodGet, "/", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	etag := resp.Header.Get("ETag")
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("If-None-Match", etag)
	if resp, err = on.Test(req, -1); err != nil {
		t.Fatalf("revalidation with ETag %s: %v", etag, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with ETag %s: status %d, want 304", etag, resp.StatusCode)
	}

	// The document served is the committed one, byte for byte.
	resp, err = off.Test(httptest.NewRequest(http.MethodGet, "/openapi.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var served bytes.Buffer
	served.ReadFrom(resp.Body)
	if !bytes.Equal(served.Bytes(), openapi.Document) {
		t.Error("GET /openapi.json differs from the embedded document")
	}
}

// TestPageIsSmall keeps the page a page: everything a browser loads for it stays under 40 KB.
func TestPageIsSmall(t *testing.T) {
	app := newApp(t, server.Options{UI: true}, nil)
	total := 0
	for _, path := range []string{"/", "/ui/app.js", "/ui/app.css"} {
		_, body := call(t, app, httptest.NewRequest(http.MethodGet, path, nil))
		total += len(body)
		text := strings.ReplaceAll(string(body), "http://www.w3.org/2000/svg", "") // a namespace name, not a fetch
		for _, remote := range []string{"http://", "https://", "//fonts.", "@import", "url("} {
			if strings.Contains(text, remote) {
				t.Errorf("%s refers to %q: the page must load nothing from elsewhere", path, remote)
			}
		}
	}
	if total > 40_000 {
		t.Errorf("page is %d bytes, over 40 KB", total)
	}
	t.Logf("page: %d bytes in three files", total)
}
