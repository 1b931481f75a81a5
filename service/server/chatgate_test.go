package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/server"
)

// hugeChatServer answers every chat completion with a 300 MB message, generated as it is sent,
// announced with its length or not.
func hugeChatServer(t *testing.T, announce bool, calls *atomic.Int64) *httptest.Server {
	const size = 300 << 20
	head := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
	tail := []byte(`"}}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if announce {
			w.Header().Set("Content-Length", strconv.Itoa(len(head)+size+len(tail)))
		}
		if _, err := w.Write(head); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range size >> 20 {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading
			}
		}
		w.Write(tail)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestChatAnswerTooLarge: a chat server answering 300 MB gets a 502 with its own code, after one
// call (nothing is sent back to it), having cost the service about the cap, not the answer.
func TestChatAnswerTooLarge(t *testing.T) {
	img := readImage(t, "thermal.jpg")
	for _, announce := range []bool{false, true} {
		t.Run(fmt.Sprintf("Content-Length %v", announce), func(t *testing.T) {
			var calls atomic.Int64
			srv := hugeChatServer(t, announce, &calls)
			ex, err := extract.New(extract.Options{Model: "m", BaseURL: srv.URL + "/v1", Reasks: 2, MaxAnswerBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			app := newApp(t, server.Options{Extractor: ex}, nil)
			var code int
			var body []byte
			alloc, took := allocated(func() { code, body = call(t, app, ocrJSONRequest(t, img, map[string]any{"template": "receipt"})) })
			checkJSONError(t, code, body, 502, "chat_answer_too_large")
			if calls.Load() != 1 {
				t.Errorf("%d chat calls; an oversized answer must not be re-asked", calls.Load())
			}
			if alloc > 200<<20 {
				t.Errorf("allocated %d MB for a 1 MiB cap", alloc>>20)
			}
			t.Logf("502 after %v, %d MB allocated (OCR included): %s", took.Round(time.Millisecond), alloc>>20, body)
		})
	}
}

// blockingChat is a chat server that reads receipts like receiptReader, but holds every request
// until release is closed, and reports each arrival on arrived.
func blockingChat(t *testing.T) (url string, arrived chan struct{}, release chan struct{}) {
	arrived, release = make(chan struct{}, 8), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, content := receiptReader(ocrBlock(req))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req["model"],
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, arrived, release
}

// TestChatDoesNotHoldOCR: while an /ocr-json request waits on a slow chat model, its OCR
// admission is back in the gate: an /ocr request gets the only OCR slot at once.
func TestChatDoesNotHoldOCR(t *testing.T) {
	url, arrived, release := blockingChat(t)
	ex, err := extract.New(extract.Options{Model: "m", BaseURL: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 1, MaxQueue: 0, MaxWait: time.Second})
	app := newApp(t, server.Options{Extractor: ex, Gate: gate}, nil)
	img := readImage(t, "thermal.jpg")
	done := make(chan int)
	go func() {
		resp, err := app.Test(ocrJSONRequest(t, img, map[string]any{"template": "receipt"}), -1)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-arrived // the /ocr-json request is in its chat call
	if s := gate.Stats(); s.Running != 0 || s.Inside != 0 {
		t.Fatalf("the chat call holds OCR capacity: %+v", s)
	}
	if code, body := call(t, app, ocrRequest(img)); code != 200 {
		t.Fatalf("/ocr while a chat call waits: %d %s", code, body)
	}
	close(release)
	if code := <-done; code != 200 {
		t.Fatalf("/ocr-json: %d", code)
	}
}

// TestChatGateFull: with every chat slot busy and no room to wait, /ocr-json answers 429 with
// Retry-After (after its OCR, which is admitted on its own).
func TestChatGateFull(t *testing.T) {
	url, arrived, release := blockingChat(t)
	ex, err := extract.New(extract.Options{Model: "m", BaseURL: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	chat := admission.New(admission.Options{Budget: 1, MaxRunning: 1, MaxQueue: 0, MaxWait: time.Second})
	app := newApp(t, server.Options{Extractor: ex, ChatGate: chat}, nil)
	img := readImage(t, "thermal.jpg")
	done := make(chan int)
	go func() {
		resp, err := app.Test(ocrJSONRequest(t, img, map[string]any{"template": "receipt"}), -1)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-arrived
	resp, err := app.Test(ocrJSONRequest(t, img, map[string]any{"template": "receipt"}), -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkJSONError(t, resp.StatusCode, body, 429, "chat_overloaded")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	close(release)
	if code := <-done; code != 200 {
		t.Fatalf("the first /ocr-json: %d", code)
	}
}
