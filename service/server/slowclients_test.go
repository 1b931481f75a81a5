package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestSlowUploadsTakeNoSlot: clients that send their bodies a trickle at a time, as many as the
// gate can run and queue, hold connections and what they have sent, not the gate: a seventh
// client, whose body arrives at once, is read and answered 200 meanwhile (it was 429 while a
// request took its slot before its body was read).
func TestSlowUploadsTakeNoSlot(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	opt := server.Options{Gate: gate, MaxBodyBytes: 20 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range 6 {
		// 9 KiB at once: past what the HTTP server reads before it calls the handler.
		wg.Go(func() { _, _, _ = hostile.SlowUpload(ctx, addr, "/ocr", 64<<10, 9<<10, 16, 100*time.Millisecond) })
	}
	// Their heads are in and their handlers wait for their bodies (a slot each, before).
	time.Sleep(time.Second)
	body := `{"image":"` + b64(fixtures(t).receipt) + `"}`
	resp, got := rawExchange(t, addr, fmt.Sprintf("POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	if resp.StatusCode != 200 {
		t.Fatalf("a fast /ocr beside six slow uploads: %d %.300s", resp.StatusCode, got)
	}
	if s := gate.Stats(); s.Inside != 0 || s.Used != 0 {
		t.Errorf("the gate holds %+v for uploads still arriving", s)
	}
}

// TestShutdownDuringUpload: a shutdown while a client is still sending its body (it sent 9 KiB
// and pauses) stops the read when the requests in flight are canceled: the client hears 503
// shutting_down, and the shutdown ends within its grace (the read, blocked, went on until the
// read timeout, past the grace, and the client got no answer).
func TestShutdownDuringUpload(t *testing.T) {
	work, cancelWork := context.WithCancelCause(context.Background())
	defer cancelWork(nil)
	opt := server.Options{Context: work, MaxBodyBytes: 20 << 20, RequestTimeout: time.Minute}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		status, body, err := hostile.SlowUpload(ctx, addr, "/ocr", 64<<10, 9<<10, 16, time.Hour)
		answered <- answer{status, body, err}
	}()
	time.Sleep(time.Second) // the handler waits for the body

	const grace = 3 * time.Second
	start := time.Now()
	if err := server.Shutdown(app.App, cancelWork, grace); err != nil {
		t.Errorf("shutdown: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
	select {
	case a := <-answered:
		if a.err != nil {
			t.Fatalf("the upload got no answer: %v", a.err)
		}
		checkJSONError(t, a.status, a.body, 503, "shutting_down")
	case <-time.After(30 * time.Second):
		t.Fatal("the upload got no answer")
	}
}
