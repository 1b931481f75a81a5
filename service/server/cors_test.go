package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/server"
)

// TestCORSExposesHeaders: a script on another origin can read the request ID and Retry-After of
// an answer (a 429 without them would leave a browser client guessing).
func TestCORSExposesHeaders(t *testing.T) {
	app := newApp(t, server.Options{CORSOrigins: "*", APIKeys: []string{"k"}}, nil)
	req := httptest.NewRequest(http.MethodGet, "/templates", nil)
	req.Header.Set("Origin", "https://app.example.test")
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Fatalf("status %d, allow-origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	exposed := strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers"))
	for _, h := range []string{"x-request-id", "retry-after", "x-ocr-time"} {
		if !strings.Contains(exposed, h) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
		}
	}
}
