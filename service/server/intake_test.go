package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/server"
)

// heapInUse is the Go heap the test process holds now (the server runs in it).
func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// TestHeadsAllocateNothing: request heads that announce a 20 MiB body and never send it must not
// make the server allocate those bodies. Sixty connections (on /ocr without the API key, on
// /ocr-json, on a route that takes no body and on one that does not exist), some with the first
// 16 KiB of the body, must leave the heap within a few MiB of where it was; before bodies were
// streamed, each head allocated its announced body (32 MiB rounded) before routing or auth.
func TestHeadsAllocateNothing(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 20 << 20, APIKeys: []string{"k-secret"}}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	runtime.GC()
	base := heapInUse()

	const conns = 60
	const bound = 24 << 20
	paths := []string{"POST /ocr", "POST /ocr-json", "GET /ping", "POST /nowhere"}
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		head := fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", paths[i%len(paths)], 20<<20)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			// A start of a body: past what the server reads before it calls a handler.
			if _, err := c.Write(append([]byte(`{"image":"`), make([]byte, 16<<10)...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The server reads the heads as they come; watch the heap for a while.
	var peak int64
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		peak = max(peak, heapInUse()-base)
		if peak > bound {
			break
		}
	}
	t.Logf("heap growth with %d heads of 20 MiB bodies in flight: %.1f MiB", conns, float64(peak)/(1<<20))
	if peak > bound {
		t.Fatalf("%d request heads grew the heap by %d MiB (bound %d MiB): bodies are allocated before they arrive",
			conns, peak>>20, bound>>20)
	}
}

// TestBodyMemoryIsAdmitted: bodies being received share a memory budget. A slow upload holds
// what it has sent (not what it announced); a second body that does not fit waits a moment and
// is refused with 429 and Retry-After, and the budget is whole again once the first ends.
func TestBodyMemoryIsAdmitted(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 4 << 20, BodyMemory: 2 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// 600 KiB sent of an announced 4 MiB: its buffer has grown to 1 MiB, half the budget.
	fmt.Fprintf(slow, "POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 4<<20)
	if _, err := slow.Write(append([]byte(`{"image":"`), bytes.Repeat([]byte("A"), 600<<10)...)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)

	// 1.2 MiB: its buffer's growth to 2 MiB does not fit beside the slow one's.
	body := append([]byte(`{"image":"`), bytes.Repeat([]byte("A"), 1200<<10)...)
	body = append(body, `"}`...)
	resp, got := rawExchange(t, addr, fmt.Sprintf("POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	checkJSONError(t, resp.StatusCode, got, 429, "overloaded")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}

	slow.Close() // the slow upload's memory goes back
	time.Sleep(300 * time.Millisecond)
	resp, got = rawExchange(t, addr, fmt.Sprintf("POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	checkJSONError(t, resp.StatusCode, got, 415, "unsupported_image_format") // read whole and decoded
}

// TestConnectionBound: at MaxConnections, a new connection takes the place of an idle one; when
// every connection is busy in a request, it is answered 503 too_many_connections (JSON, with
// Retry-After) and closed.
func TestConnectionBound(t *testing.T) {
	open := func(t *testing.T) (dial func() net.Conn, addr string) {
		opt := server.Options{MaxConnections: 4}
		app := newApp(t, opt, nil)
		addr = serveGuarded(t, app, opt)
		return func() net.Conn {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}, addr
	}
	t.Run("idle connections make way", func(t *testing.T) {
		dial, addr := open(t)
		for range 4 {
			dial()
		}
		time.Sleep(500 * time.Millisecond) // the server waits on each for a request
		if resp, _ := rawExchange(t, addr, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
			t.Fatalf("/ping beside idle connections at the bound: %d", resp.StatusCode)
		}
	})
	t.Run("busy connections do not", func(t *testing.T) {
		dial, addr := open(t)
		for range 4 {
			io.WriteString(dial(), "GET /ping HTTP/1.1\r\nHo") // in the middle of a head
		}
		time.Sleep(500 * time.Millisecond)
		resp, body := rawExchange(t, addr, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
		checkJSONError(t, resp.StatusCode, body, 503, "too_many_connections")
		if resp.Header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	})
}

// TestUnreadBodyClosesTheConnection: a route that answers without reading a body (or a refusal
// before it) closes the connection after its answer, so that the rest of the body is never read
// as a request of its own.
func TestUnreadBodyClosesTheConnection(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 1 << 20, APIKeys: []string{"k"}}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	hidden := "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, first := range []string{"GET /ping", "POST /ocr", "POST /nowhere"} {
		t.Run(first, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(20 * time.Second))
			body := append(bytes.Repeat([]byte(" "), 16<<10), hidden...)
			fmt.Fprintf(conn, "%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", first, len(body), body)
			all, _ := io.ReadAll(conn)
			if n := bytes.Count(all, []byte("HTTP/1.1 ")); n != 1 {
				t.Fatalf("%d answers on the connection:\n%s", n, all)
			}
		})
	}
}

// allocatedBy is the bytes the process allocated while fn ran.
func allocatedBy(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// TestStructureWithinTheBody: what a body's structure makes the server allocate is bounded by
// the body, not multiplied by its entries: 16 MiB of empty "images" entries, or of unknown
// option names, cost no more than 16 MiB of one ignored string (each entry would have cost a
// result or an error of its own, a map entry for each option: some 1 GiB before).
func TestStructureWithinTheBody(t *testing.T) {
	app := newApp(t, server.Options{MaxBodyBytes: 20 << 20}, nil)
	size := 16 << 20
	plain := append([]byte(`{"image":"","pad":"`), bytes.Repeat([]byte("a"), size)...)
	plain = append(plain, `"}`...)
	images := append([]byte(`{"images":[`), bytes.Repeat([]byte(`"",`), size/3)...)
	images = append(images, `""]}`...)
	var options bytes.Buffer
	options.WriteString(`{"image":"` + b64(fixtures(t).receipt) + `","options":{`)
	for i := 0; options.Len() < size; i++ {
		fmt.Fprintf(&options, `"o%d":0,`, i)
	}
	options.WriteString(`"x":0}}`)
	send := func(body []byte) (int, []byte, int64) {
		var resp *http.Response
		n := allocatedBy(func() {
			var err error
			if resp, err = app.App.Test(postJSON("/ocr", "application/json", body), -1); err != nil { //nolint:bodyclose // closed below, after the measured call
				t.Fatal(err)
			}
		})
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, got, n
	}
	code, got, baseline := send(plain)
	checkJSONError(t, code, got, 400, "empty_image")
	for _, tt := range []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"images", images, 413, "too_many_images"},
		{"options", options.Bytes(), 400, "invalid_option"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, got, n := send(tt.body)
			checkJSONError(t, code, got, tt.status, tt.code)
			t.Logf("%d MiB allocated for a %d MiB body; %d MiB for one string as long", n>>20, len(tt.body)>>20, baseline>>20)
			if n > 2*baseline {
				t.Errorf("%d MiB allocated for a %d MiB body, %d MiB for one string as long", n>>20, len(tt.body)>>20, baseline>>20)
			}
		})
	}
}
