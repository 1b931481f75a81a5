package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/server"
)

// serveGuarded serves app on a loopback port through the framing guard, as main does, and
// returns the address.
func serveGuarded(t *testing.T, app *checkedApp, opt server.Options) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(server.GuardListener(lis, opt))
	t.Cleanup(func() { app.Shutdown() })
	return lis.Addr().String()
}

// rawExchange writes request on a fresh connection and reads one response.
func rawExchange(t *testing.T, addr, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body
}

// TestFramingOverSocket sends each malformed or ambiguous framing to the real server over a real
// socket: each gets a JSON error with its status and code, nothing of the request comes back in
// it, and the connection is not used for anything after it.
func TestFramingOverSocket(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 1 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	const secret = "Bearer sk-proxy-injected-0123456789"
	tests := []struct {
		name, request string
		status        int
		code          string
	}{
		{"conflicting Content-Length",
			"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 14\r\n\r\n{\"image\":\"\"}xx", 400, "conflicting_content_length"},
		{"Content-Length with chunked",
			"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"image\":\"\"}\r\n0\r\n\r\n", 400, "content_length_with_chunked"},
		{"bare LF",
			"POST /ocr HTTP/1.1\nHost: x\nContent-Type: application/json\nContent-Length: 12\n\n{\"image\":\"\"}", 400, "bare_lf"},
		{"malformed header quoting credentials",
			"POST /ocr HTTP/1.1\r\nHost: x\r\nAuthorization: " + secret + "\r\nCookie: session=" + secret + "\r\nBad Header\r\n\r\n", 400, "bad_header"},
		{"bad Content-Length with credentials",
			"POST /ocr HTTP/1.1\r\nHost: x\r\nAuthorization: " + secret + "\r\nContent-Length: abc\r\n\r\n", 400, "bad_content_length"},
		{"garbage request line", "\x16\x03\x01garbage\r\n\r\n", 400, "bad_request_line"},
		{"unknown method", "BREW /ocr HTTP/1.1\r\nHost: x\r\n\r\n", 405, "method_not_allowed"},
		{"head too large", "GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8000) + "\r\n\r\n", 431, "header_too_large"},
		{"malformed chunk", "POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "bad_chunk"},
		{"body over the limit, announced",
			"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{\"image\":\"", 413, "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := rawExchange(t, addr, tt.request)
			checkJSONError(t, resp.StatusCode, body, tt.status, tt.code)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if strings.Contains(string(body), "sk-proxy") || strings.Contains(string(body), "session=") ||
				strings.Contains(string(body), "garbage") || strings.Contains(string(body), "POST") {
				t.Errorf("the error body quotes the request: %s", body)
			}
		})
	}
	// A well-formed chunked request is served, and the server is still up.
	resp, body := rawExchange(t, addr, "POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"image\":\"\"}\r\n0\r\n\r\n")
	checkJSONError(t, resp.StatusCode, body, 400, "empty_image")
	if resp, _ := rawExchange(t, addr, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("/ping after the hostile requests: %d", resp.StatusCode)
	}
}

// TestSmugglingNotServed: a request hidden behind an ambiguous framing is never executed. The
// first request is refused whole; the connection closes before the second is read.
func TestSmugglingNotServed(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 1 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	// CL.TE: a front end that trusts Content-Length sends one request; one that trusts chunked
	// would see a second, GET /metrics, inside the body.
	fmt.Fprint(conn, "POST /ping HTTP/1.1\r\nHost: x\r\nContent-Length: 35\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nX: y\r\n\r\n")
	all, _ := io.ReadAll(conn) // the server answers once and closes
	if n := bytes.Count(all, []byte("HTTP/1.1 ")); n != 1 || !bytes.Contains(all, []byte("content_length_with_chunked")) {
		t.Fatalf("%d answers on the connection:\n%s", n, all)
	}
}

// TestBigBodyWithoutExpect sends a 30 MiB body the way Python's http.client does — the whole
// request, no "Expect: 100-continue", then the answer — over a real socket. The client must be
// able to write it all and then read the 413 JSON, not a connection reset.
func TestBigBodyWithoutExpect(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 20 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	body := bytes.Repeat([]byte("A"), 30<<20)
	copy(body, `{"image":"`)
	head := fmt.Sprintf("POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		t.Fatalf("sending the body (the server must read it to its end): %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer after the body: %v", err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	checkJSONError(t, resp.StatusCode, got, 413, "body_too_large")
	var e struct{ Error, Code string }
	if json.Unmarshal(got, &e) != nil || e.Error == "" {
		t.Fatalf("413 body %s", got)
	}
	if resp, _ := rawExchange(t, addr, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("/ping after the big body: %d", resp.StatusCode)
	}
}
