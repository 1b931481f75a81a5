package framing

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// through sends input over a guarded connection and returns what the server side reads before
// the first error, and that error (nil at the clean end of the input).
func through(t *testing.T, input string) (string, error) {
	t.Helper()
	client, server := net.Pipe()
	l := &listener{opt: Options{MaxHeadBytes: 4096}}
	g := &conn{Conn: server, opt: l.opt}
	go func() {
		client.Write([]byte(input))
		client.Close()
	}()
	var got bytes.Buffer
	buf := make([]byte, 7) // small reads: the server's reader asks for arbitrary amounts
	for {
		n, err := g.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			g.Close()
			if errors.Is(err, io.EOF) {
				return got.String(), nil
			}
			return got.String(), err
		}
	}
}

// TestTransparent: framing the guard accepts reaches the server byte for byte, pipelined
// requests and chunked bodies included.
func TestTransparent(t *testing.T) {
	tests := map[string]string{
		"GET":              "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST with length": "POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
		"equal lengths":    "POST /ocr HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
		"length list":      "POST /ocr HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello",
		"chunked": "POST /ocr HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
		"pipelined": "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc" +
			"GET /b HTTP/1.1\r\n\r\n" +
			"POST /c HTTP/1.0\r\nContent-Length: 0\r\n\r\n",
		"body that looks like a bad head": "POST /a HTTP/1.1\r\nContent-Length: 12\r\n\r\nGET\n/x\n\n\x00\r",
		"CRLF before the request line":    "POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nx\r\nGET /b HTTP/1.1\r\n\r\n",
		"HTTP/1.0":                        "GET / HTTP/1.0\r\n\r\n",
	}
	for name, input := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := through(t, input)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			want := input
			if name == "CRLF before the request line" {
				want = strings.Replace(input, "x\r\nGET", "xGET", 1) // the empty line is dropped
			}
			if got != want {
				t.Fatalf("the server read %q, want %q", got, want)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	long := "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n"
	tests := []struct {
		name, input string
		status      int
		code        string
	}{
		{"conflicting Content-Length", "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 12\r\n\r\nhello", 400, "conflicting_content_length"},
		{"conflicting list", "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\nhello", 400, "conflicting_content_length"},
		{"Content-Length with chunked", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "content_length_with_chunked"},
		{"Transfer-Encoding before Content-Length", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400, "content_length_with_chunked"},
		{"gzip transfer coding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400, "unsupported_transfer_encoding"},
		{"two Transfer-Encoding headers", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "unsupported_transfer_encoding"},
		{"negative length", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "bad_content_length"},
		{"length with a sign", "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello", 400, "bad_content_length"},
		{"bare LF", "POST / HTTP/1.1\nHost: x\nContent-Length: 2\n\nhi", 400, "bare_lf"},
		{"bare LF after one good line", "GET / HTTP/1.1\r\nHost: x\n\r\n", 400, "bare_lf"},
		{"bare CR", "GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", 400, "bare_cr"},
		{"folded header", "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", 400, "folded_header"},
		{"space before colon", "GET / HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello", 400, "bad_header"},
		{"no colon", "GET / HTTP/1.1\r\nAuthorization: Bearer secret\r\nBad Header\r\n\r\n", 400, "bad_header"},
		{"control character", "GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", 400, "bad_header"},
		{"NUL", "GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n", 400, "bad_request"},
		{"TLS hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n", 400, "bad_request"},
		{"garbage request line", "\x16\x03\x01garbage\r\n\r\n", 400, "bad_request_line"},
		{"HTTP/0.9 style", "GET /ping\r\n\r\n", 400, "bad_request_line"},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "bad_request_line"},
		{"unknown method", "BREW /pot HTTP/1.1\r\n\r\n", 405, "method_not_allowed"},
		{"head too large", long, 431, "header_too_large"},
		{"chunk size not hex", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "bad_chunk"},
		{"chunk without CRLF after data", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhixx", 400, "bad_chunk"},
		{"chunk line with bare LF", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n", 400, "bad_chunk"},
		{"smuggled after a good request", "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", 400, "conflicting_content_length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := through(t, tt.input)
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("read %q, err %v; want a refusal", got, err)
			}
			if fe.Status != tt.status || fe.Code != tt.code {
				t.Fatalf("refused with %d %s, want %d %s", fe.Status, fe.Code, tt.status, tt.code)
			}
			// Of a refused head the server reads its first byte and nothing more; of a refused
			// chunk, the head and the chunks before it.
			want := tt.input[:1]
			switch {
			case tt.name == "chunk without CRLF after data":
				want = tt.input[:strings.Index(tt.input, "hi")+2]
			case strings.HasPrefix(tt.name, "chunk"):
				want = tt.input[:strings.Index(tt.input, "\r\n\r\n")+4]
			case tt.name == "smuggled after a good request":
				want = "GET /a HTTP/1.1\r\n\r\nP"
			}
			if got != want {
				t.Fatalf("the server read %q of a refused request, want %q", got, want)
			}
		})
	}
}

// TestDrainOnClose: a connection closed by the server in the middle of a body it did not read
// reads the rest of that body first (so the client does not get a reset), within the bounds.
func TestDrainOnClose(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := Listen(lis, Options{DrainBytes: 1 << 20, DrainTimeout: 5 * time.Second})
	defer g.Close()
	go func() {
		c, err := g.Accept()
		if err != nil {
			return
		}
		// The server reads the head and refuses the body unread, as fasthttp does for a body
		// over its limit, then answers and closes.
		buf := make([]byte, 64)
		for {
			n, _ := c.Read(buf)
			if strings.Contains(string(buf[:n]), "\r\n\r\n") || n == 0 {
				break
			}
		}
		c.Write([]byte("HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"))
		c.Close()
	}()
	conn, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	request := append([]byte("POST / HTTP/1.1\r\nContent-Length: 614400\r\n\r\n"), bytes.Repeat([]byte("x"), 600<<10)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// Like Python's http.client: the whole request first, then the answer.
	if _, err := conn.Write(request); err != nil {
		t.Fatalf("sending the body: %v", err)
	}
	answer, err := io.ReadAll(conn)
	if err != nil || !strings.HasPrefix(string(answer), "HTTP/1.1 413") {
		t.Fatalf("read %q, %v; want the 413", answer, err)
	}
	// What is drained is dropped, not copied: a refused body costs the server no memory.
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 200<<10 {
		t.Errorf("draining a 600 KiB body allocated %d KiB", n>>10)
	}
}

// readN reads n bytes from g.
func readN(t *testing.T, g net.Conn, n int) string {
	t.Helper()
	buf := make([]byte, n)
	if _, err := io.ReadFull(g, buf); err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(buf)
}

// TestWatch: while the server works on a request it has read whole, a watch tells when the
// client hangs up; a pipelined request sent meanwhile is kept, byte for byte, for the server's
// next read, and ends the watch without calling the client gone.
func TestWatch(t *testing.T) {
	first := "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
	second := "GET /b HTTP/1.1\r\nHost: x\r\n\r\n"
	setup := func(t *testing.T) (client net.Conn, g *conn) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		gl := Listen(ln, Options{MaxHeadBytes: 4096})
		client, err = net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc, err := gl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close(); sc.Close() })
		io.WriteString(client, first)
		g = sc.(*conn)
		if got := readN(t, g, len(first)); got != first {
			t.Fatalf("read %q", got)
		}
		return client, g
	}
	t.Run("hang-up", func(t *testing.T) {
		client, g := setup(t)
		gone, stop := Watch(g)
		defer stop()
		client.Close()
		select {
		case <-gone:
		case <-time.After(5 * time.Second):
			t.Fatal("the hang-up was not seen")
		}
	})
	t.Run("pipelined", func(t *testing.T) {
		client, g := setup(t)
		g.SetReadDeadline(time.Now().Add(time.Minute))
		gone, stop := Watch(g)
		io.WriteString(client, second)
		time.Sleep(100 * time.Millisecond)
		select {
		case <-gone:
			t.Fatal("a client that sent its next request was called gone")
		default:
		}
		stop()
		if got := readN(t, g, len(second)); got != second {
			t.Fatalf("the next request reached the server as %q", got)
		}
	})
	t.Run("stopped while nothing came", func(t *testing.T) {
		client, g := setup(t)
		_, stop := Watch(g)
		time.Sleep(50 * time.Millisecond)
		stop()
		io.WriteString(client, second)
		if got := readN(t, g, len(second)); got != second {
			t.Fatalf("after the watch the server read %q", got)
		}
	})
}

// TestFormOverhead: a multipart form's body may pass MaxBodyBytes by FormOverhead (its framing
// and fields, beside files of up to MaxBodyBytes); any other body may not.
func TestFormOverhead(t *testing.T) {
	opt := Options{MaxHeadBytes: 4096, MaxBodyBytes: 100, FormOverhead: 50,
		BodyLimit: func(method, path []byte) int64 {
			if string(method) == "POST" && string(path) == "/jobs" {
				return 1000
			}
			return 0
		}}
	tests := []struct {
		name, ctype string
		length      int
		refused     bool
		target      string
	}{
		{"JSON at the limit", "application/json", 100, false, ""},
		{"JSON over the limit", "application/json", 120, true, ""},
		{"form within the overhead", "multipart/form-data; boundary=b", 150, false, ""},
		{"form in upper case", "Multipart/Form-Data; boundary=b", 150, false, ""},
		{"form over the overhead", "multipart/form-data; boundary=b", 151, true, ""},
		{"other multipart", "multipart/mixed; boundary=b", 120, true, ""},
		{"a route's own limit", "application/pdf", 1000, false, "/jobs?pages=1-3"},
		{"over a route's own limit", "application/pdf", 1001, true, "/jobs"},
		{"a route's form", "multipart/form-data; boundary=b", 1050, false, "/jobs"},
		{"another route keeps the limit", "application/pdf", 120, true, "/jobs/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := net.Pipe()
			g := &conn{Conn: server, opt: opt}
			target := tt.target
			if target == "" {
				target = "/"
			}
			head := "POST " + target + " HTTP/1.1\r\nContent-Type: " + tt.ctype + "\r\nContent-Length: " + strconv.Itoa(tt.length) + "\r\n\r\n"
			go func() {
				client.Write([]byte(head))
				client.Close()
			}()
			buf := make([]byte, 4096)
			var err error
			for err == nil {
				_, err = g.Read(buf)
			}
			g.Close()
			var fe *Error
			if refused := errors.As(err, &fe) && fe.Code == "body_too_large"; refused != tt.refused {
				t.Fatalf("err %v, want refused %v", err, tt.refused)
			}
		})
	}
}
