package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
)

// scanPage is a 200-dpi A4 "scan": white, with dark bars where lines of text would be, so that
// each page costs the detector and the recognizer real work.
func scanPage(t *testing.T) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 1654, 2339))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for y := 200; y < 2100; y += 40 {
		draw.Draw(img, image.Rect(150, y, 1500-(y%300), y+22), &image.Uniform{color.Gray{Y: 30}}, image.Point{}, draw.Src)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestShutdownWithinGrace runs the service as `ocrgate serve` does and stops it (what SIGTERM
// does) while a 50-page scanned PDF is being read (far more work than the grace: a quiet machine
// read 30 pages of 32 bars inside it, and the request was answered 200 before the cancel): the service returns within its shutdown
// timeout, and the request in flight is answered 503 shutting_down, not dropped.
func TestShutdownWithinGrace(t *testing.T) {
	testenv.Models(t)
	// The work is canceled at two thirds of the grace; the third left is for the stage in flight
	// (a model run cannot be stopped midway) to end and the answer to go out, on a busy machine too.
	const grace = 10 * time.Second
	cfg, err := config.Load(nil, env(map[string]string{
		"OCRGATE_ADDR": "127.0.0.1:0", "OCRGATE_SHUTDOWN_TIMEOUT": grace.String(), "OCRGATE_UI": "false",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrc := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- serveUntil(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(a net.Addr) { addrc <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-served:
		t.Fatalf("the service did not start: %v (run `make test`, which fetches the models first)", err)
	}

	page := scanPage(t)
	pages := make([][]byte, 50)
	for i := range pages {
		pages[i] = page
	}
	doc, err := testdoc.Scanned(pages, testdoc.ScanOptions{DPI: 200, Mark: true})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(doc)})
	type answer struct {
		status int
		code   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post("http://"+addr.String()+"/ocr", "application/json", bytes.NewReader(body))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var e struct{ Code string }
		json.NewDecoder(resp.Body).Decode(&e)
		answered <- answer{status: resp.StatusCode, code: e.Code}
	}()
	time.Sleep(2 * time.Second) // the document's pages are being read

	start := time.Now()
	stop() // SIGTERM
	select {
	case err := <-served:
		took := time.Since(start)
		t.Logf("stopped %v after the signal (grace %v)", took.Round(time.Millisecond), grace)
		if err != nil {
			t.Errorf("serve: %v", err)
		}
		if took > grace+time.Second {
			t.Errorf("stopping took %v, past the %v grace", took, grace)
		}
	case <-time.After(grace + 30*time.Second):
		t.Fatalf("the service had not stopped %v after the signal", time.Since(start))
	}
	select {
	case a := <-answered:
		if a.err != nil || a.status != 503 || a.code != "shutting_down" {
			t.Errorf("the request in flight got %d %q (%v), want 503 shutting_down", a.status, a.code, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the request in flight got no answer")
	}
}

// TestShutdownDuringUpload runs the service as `ocrgate serve` does and stops it (what SIGTERM
// does) while a client is in the middle of sending its body (9 KiB of 64 KiB sent, then nothing):
// the read stops when the requests in flight are canceled, the client hears 503 shutting_down,
// and serve returns nil (exit code 0) within the grace. Before, the read waited for the read
// timeout, past the grace: exit code 1 and no answer.
func TestShutdownDuringUpload(t *testing.T) {
	testenv.Models(t)
	const grace = 6 * time.Second
	cfg, err := config.Load(nil, env(map[string]string{
		"OCRGATE_ADDR": "127.0.0.1:0", "OCRGATE_SHUTDOWN_TIMEOUT": grace.String(), "OCRGATE_UI": "false",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrc := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- serveUntil(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(a net.Addr) { addrc <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-served:
		t.Fatalf("the service did not start: %v", err)
	}
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	upload, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		status, body, err := hostile.SlowUpload(upload, addr.String(), "/ocr", 64<<10, 9<<10, 16, time.Hour)
		answered <- answer{status, body, err}
	}()
	time.Sleep(time.Second) // the handler waits for the rest of the body

	start := time.Now()
	stop() // SIGTERM
	select {
	case err := <-served:
		took := time.Since(start)
		t.Logf("stopped %v after the signal (grace %v)", took.Round(time.Millisecond), grace)
		if err != nil {
			t.Errorf("serve: %v (exit code 1)", err)
		}
		if took > grace+time.Second {
			t.Errorf("stopping took %v, past the %v grace", took, grace)
		}
	case <-time.After(grace + 30*time.Second):
		t.Fatalf("the service had not stopped %v after the signal", time.Since(start))
	}
	select {
	case a := <-answered:
		var e struct{ Code string }
		_ = json.Unmarshal(a.body, &e)
		if a.err != nil || a.status != 503 || e.Code != "shutting_down" {
			t.Errorf("the upload got %d %q (%v), want 503 shutting_down", a.status, e.Code, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the upload got no answer")
	}
}
