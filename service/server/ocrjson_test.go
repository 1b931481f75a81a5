package server_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

// chatServer is an OpenAI-compatible chat-completions server for tests (a hosted chat model is not
// something this machine can run). It speaks the real wire format and answers with answer(),
// which sees the OCR text of the request, as a model would.
type chatServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	answer   func(ocrText string) (status int, content string)
	delay    time.Duration
}

func newChatServer(t *testing.T, answer func(string) (int, string)) *chatServer {
	cs := &chatServer{answer: answer}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		req["_auth"] = r.Header.Get("Authorization")
		cs.mu.Lock()
		cs.requests = append(cs.requests, req)
		cs.mu.Unlock()
		if cs.delay > 0 {
			select {
			case <-time.After(cs.delay):
			case <-r.Context().Done():
				return
			}
		}
		status, content := cs.answer(ocrBlock(req))
		w.Header().Set("Content-Type", "application/json")
		if status != 200 {
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": content, "type": "invalid_request_error"}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": req["model"],
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
		})
	}))
	t.Cleanup(cs.Close)
	return cs
}

// ocrBlock returns the delimited OCR text of the last user message.
func ocrBlock(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if c, _ := m["content"].(string); m["role"] == "user" && strings.Contains(c, "<<<OCR") {
			c = c[strings.Index(c, "<<<OCR")+len("<<<OCR"):]
			if end := strings.Index(c, "OCR>>>"); end >= 0 {
				c = c[:end]
			}
			return strings.TrimSpace(c)
		}
	}
	return ""
}

// receiptReader plays a model reading the SROIE fields from the OCR text it was given.
func receiptReader(text string) (int, string) {
	lines := strings.Split(text, "\n")
	out := map[string]any{"company": nil, "date": nil, "address": nil, "total": nil}
	if len(lines) > 0 {
		out["company"] = strings.TrimSpace(strings.Split(lines[0], "|")[0])
	}
	if d := regexp.MustCompile(`\b\d{2}/\d{2}/\d{2,4}\b`).FindString(text); d != "" {
		out["date"] = d
	}
	// The amount on the "total ... inclusive of GST" row (OCR may read the I as l), else on the
	// first total row.
	for _, pass := range []string{"CLUSIV", ""} {
		for _, l := range lines {
			u := strings.ToUpper(l)
			if strings.Contains(u, "TOTAL") && strings.Contains(u, pass) && !strings.Contains(u, "EXCL") && out["total"] == nil {
				if n := regexp.MustCompile(`\d+\.\d{2}`).FindAllString(l, -1); len(n) > 0 {
					out["total"] = n[len(n)-1]
				}
			}
		}
	}
	b, _ := json.Marshal(out)
	return 200, "```json\n" + string(b) + "\n```"
}

func chatApp(t *testing.T, cs *chatServer, key string, timeout time.Duration) *serviceApp {
	t.Helper()
	ex, err := extract.New(extract.Options{Model: "test-model", BaseURL: cs.URL + "/v1", APIKey: key, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Metrics on, as in production: the error path records them before rendering.
	return &serviceApp{newApp(t, server.Options{Extractor: ex, RequestTimeout: timeout, Metrics: metrics.New()}, nil)}
}

type serviceApp struct {
	app interface {
		Test(*http.Request, ...int) (*http.Response, error)
	}
}

func (a *serviceApp) do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := a.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func ocrJSONRequest(t *testing.T, img []byte, extra map[string]any) *http.Request {
	body := map[string]any{"image": b64(img)}
	for k, v := range extra {
		body[k] = v
	}
	raw, _ := json.Marshal(body)
	return postJSON("/ocr-json", "application/json", raw)
}

// TestOCRJSONReceipt: the models (real, or the stand-in in -short mode) read a receipt, its text reaches the chat model, and the
// values the model picks from that text come back as the response body.
func TestOCRJSONReceipt(t *testing.T) {
	cs := newChatServer(t, receiptReader)
	app := chatApp(t, cs, "sk-test", time.Minute)
	fx := fixtures(t)
	resp, body := app.do(t, ocrJSONRequest(t, fx.fields, map[string]any{"template": "receipt"}))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got["date"] != fx.date || got["total"] != fx.total {
		t.Errorf("fields = %v, want date %s and total %s read from the OCR text", got, fx.date, fx.total)
	}
	for _, h := range []string{"X-OCR-Time", "X-Chat-Time"} {
		if v := resp.Header.Get(h); v == "" || v == "0.000" {
			t.Errorf("header %s = %q", h, v)
		}
	}
	if resp.Header.Get("X-Chat-Attempts") != "1" {
		t.Errorf("attempts %q", resp.Header.Get("X-Chat-Attempts"))
	}
	cs.mu.Lock()
	req := cs.requests[0]
	cs.mu.Unlock()
	if req["model"] != "test-model" || req["_auth"] != "Bearer sk-test" {
		t.Errorf("model %v auth %v", req["model"], req["_auth"])
	}
	rf, _ := req["response_format"].(map[string]any)
	if rf["type"] != "json_schema" {
		t.Errorf("response_format %v", rf)
	}
	if !strings.Contains(ocrBlock(req), fx.says) {
		t.Errorf("OCR text did not reach the model: %q", ocrBlock(req))
	}
}

func TestOCRJSONErrors(t *testing.T) {
	img := fixtures(t).receipt
	good := newChatServer(t, receiptReader)
	app := chatApp(t, good, "", time.Minute)

	unauthorized := newChatServer(t, func(string) (int, string) { return 401, "Incorrect API key provided" })
	garbage := newChatServer(t, func(string) (int, string) { return 200, "I cannot help with that." })
	slow := newChatServer(t, receiptReader)
	slow.delay = 10 * time.Second
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := "http://" + lis.Addr().String()
	lis.Close()
	down := &chatServer{Server: &httptest.Server{URL: downURL}}

	tests := []struct {
		name   string
		app    *serviceApp
		extra  map[string]any
		status int
		code   string
	}{
		{"not an object schema", app, map[string]any{"schema": map[string]any{"type": "array"}}, 422, "invalid_schema"},
		{"malformed schema", app, map[string]any{"schema": "{not json"}, 422, "invalid_schema"},
		{"unknown template", app, map[string]any{"template": "passport"}, 422, "unknown_template"},
		{"schema and template", app, map[string]any{"template": "receipt", "schema": map[string]any{"type": "object", "properties": map[string]any{}}}, 400, "schema_and_template"},
		{"chat key rejected", chatApp(t, unauthorized, "bad", time.Minute), map[string]any{"template": "receipt"}, 502, "chat_auth"},
		{"chat answers garbage", chatApp(t, garbage, "", time.Minute), map[string]any{"template": "receipt"}, 502, "chat_bad_answer"},
		{"chat slower than the deadline", chatApp(t, slow, "", 3*time.Second), map[string]any{"template": "receipt"}, 504, "timeout"},
		{"chat server down", chatApp(t, down, "", time.Minute), map[string]any{"template": "receipt"}, 503, "chat_unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := tt.app.do(t, ocrJSONRequest(t, img, tt.extra))
			checkJSONError(t, resp.StatusCode, body, tt.status, tt.code)
			if tt.status == 502 || tt.code == "chat_unreachable" {
				_, m := tt.app.do(t, get("/metrics"))
				if !strings.Contains(string(m), `ocrgate_runtime_errors_total{kind="chat"} 1`) {
					t.Errorf("chat failure not counted in /metrics")
				}
			}
			if strings.Contains(string(body), "bad") && tt.code == "chat_auth" && strings.Contains(string(body), "Bearer") {
				t.Errorf("key leaked: %s", body)
			}
		})
	}
}

func TestOCRJSONNotConfigured(t *testing.T) {
	app := newApp(t, server.Options{}, nil)
	code, body := call(t, app, ocrJSONRequest(t, fixtures(t).receipt, nil))
	checkJSONError(t, code, body, 503, "chat_not_configured")
	if !strings.Contains(string(body), "CHAT_BOT_MODEL") || !strings.Contains(string(body), "CHAT_BOT_BASEURL") {
		t.Errorf("message does not say what to set: %s", body)
	}
	if code, _ := call(t, app, ocrRequest(fixtures(t).receipt)); code != 200 {
		t.Errorf("/ocr affected: %d", code)
	}
}

func TestTemplatesEndpoint(t *testing.T) {
	code, body := call(t, newApp(t, server.Options{}, nil), get("/templates"))
	var got struct {
		Default   string
		Templates []struct {
			Name   string
			Schema map[string]any
		}
	}
	if code != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("%d %s", code, body)
	}
	names := map[string]bool{}
	for _, tp := range got.Templates {
		names[tp.Name] = tp.Schema["type"] == "object"
	}
	if got.Default != "invoice" || !names["invoice"] || !names["receipt"] {
		t.Errorf("templates: %s", body)
	}
}

func b64(b []byte) string { return base64Std(b) }

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
