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
