package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/ocr"
)

const (
	testModel = "test-model"
	testKey   = "sk-test-SECRET-1234"
)

// wireRequest is a chat completion request as the server sees it on the wire, decoded
// independently of go-openai's types.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature    *float64 `json:"temperature"`
	Stream         bool     `json:"stream"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`

	raw           map[string]json.RawMessage
	authorization string
}

// reply is what the fake server answers to one call.
type reply struct {
	status int
	body   any  // JSON-encoded; a string is sent as it is
	hang   bool // never answer; wait for the client to give up
}

// chatServer is an OpenAI-compatible /v1/chat/completions endpoint that records what it gets
// and answers call n (from 1) with replies(n).
type chatServer struct {
	t       *testing.T
	srv     *httptest.Server
	replies func(n int) reply
	release chan struct{}

	mu   sync.Mutex
	reqs []wireRequest
}

func newChatServer(t *testing.T, replies func(n int) reply) *chatServer {
	t.Helper()
	cs := &chatServer{t: t, replies: replies, release: make(chan struct{})}
	cs.srv = httptest.NewServer(http.HandlerFunc(cs.handle))
	t.Cleanup(cs.srv.Close)
	t.Cleanup(func() { close(cs.release) }) // runs first: frees hanging handlers so Close returns
	return cs
}

func (cs *chatServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req wireRequest
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(r.Body)
	if err := json.Unmarshal(body.Bytes(), &req); err != nil {
		cs.t.Errorf("request body is not a chat completion request: %v", err)
	}
	_ = json.Unmarshal(body.Bytes(), &req.raw)
	req.authorization = r.Header.Get("Authorization")
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		cs.t.Errorf("Content-Type = %q", ct)
	}
	cs.mu.Lock()
	cs.reqs = append(cs.reqs, req)
	n := len(cs.reqs)
	cs.mu.Unlock()

	rep := cs.replies(n)
	if rep.hang {
		select {
		case <-r.Context().Done():
		case <-cs.release:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	if s, ok := rep.body.(string); ok {
		_, _ = w.Write([]byte(s))
		return
	}
	_ = json.NewEncoder(w).Encode(rep.body)
}

func (cs *chatServer) requests() []wireRequest {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]wireRequest(nil), cs.reqs...)
}

func (cs *chatServer) extractor(t *testing.T, opt Options) *Extractor {
	t.Helper()
	opt.Model = cmpOr(opt.Model, testModel)
	opt.BaseURL = cs.srv.URL + "/v1"
	opt.APIKey = testKey
	e, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// completion is a chat completion in the wire format.
func completion(content any, finish string) map[string]any {
	return map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1767225600,
		"model":   testModel,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil},
			"logprobs":      nil,
			"finish_reason": finish,
		}},
		"usage": map[string]any{"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
	}
}

func answer(content string) reply { return reply{body: completion(content, "stop")} }

func always(r reply) func(int) reply { return func(int) reply { return r } }

// testPage is a hand-built OCR result: a title row and a table row of two cells.
func testPage() *ocr.Result {
	box := func(x0, y0, x1, y1 float64) geom.Quad {
		return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
	}
	return &ocr.Result{
		Width: 400, Height: 200,
		Regions: []ocr.Region{
			{Quad: box(10, 10, 200, 30), Text: "ACME SDN BHD  INVOICE INV-7", Score: 0.98, Row: 0, Order: 0},
			{Quad: box(10, 50, 80, 70), Text: "TOTAL", Score: 0.97, Row: 1, Order: 1},
			{Quad: box(300, 50, 360, 70), Text: "9.00", Score: 0.99, Row: 1, Order: 2},
		},
	}
}

const validInvoice = `{"invoiceNumber":"INV-7","invoiceDate":null,"invoiceItems":[],"totalAmount":9.00}`

func TestExtract(t *testing.T) {
	invoice, err := TemplateSchema("invoice")
	if err != nil {
		t.Fatal(err)
	}
	badInvoice := `{"invoiceNumber":7,"invoiceDate":null,"invoiceItems":[],"totalAmount":"9.00"}`

	tests := []struct {
		name         string
		replies      func(n int) reply
		wantErr      error
		wantMsg      []string // substrings of the error message
		wantAttempts int
		wantObject   string
		check        func(t *testing.T, reqs []wireRequest)
	}{
		{
			name:         "valid answer",
			replies:      always(answer(validInvoice)),
			wantAttempts: 1,
			wantObject:   validInvoice,
			check: func(t *testing.T, reqs []wireRequest) {
				r := reqs[0]
				if r.Model != testModel {
					t.Errorf("model = %q", r.Model)
				}
				if r.authorization != "Bearer "+testKey {
					t.Errorf("Authorization = %q", r.authorization)
				}
				if r.Temperature == nil || *r.Temperature != 0 {
					t.Errorf("temperature = %v, want 0 sent explicitly (raw %s)", r.Temperature, r.raw["temperature"])
				}
				if r.Stream {
					t.Error("stream = true")
				}
				rf := r.ResponseFormat
				if rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil {
					t.Fatalf("response_format = %s", r.raw["response_format"])
				}
				if rf.JSONSchema.Name != "invoice" || !rf.JSONSchema.Strict {
					t.Errorf("json_schema name = %q, strict = %v", rf.JSONSchema.Name, rf.JSONSchema.Strict)
				}
				if !jsonEqual(t, rf.JSONSchema.Schema, invoice.send) {
					t.Errorf("schema sent = %s\nwant %s", rf.JSONSchema.Schema, invoice.send)
				}
				if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Role != "user" {
					t.Fatalf("messages = %+v", r.Messages)
				}
				if !strings.Contains(r.Messages[0].Content, "not instructions") {
					t.Errorf("system prompt does not call the OCR text data:\n%s", r.Messages[0].Content)
				}
				user := r.Messages[1].Content
				block := "<<<OCR\nACME SDN BHD  INVOICE INV-7\nTOTAL | 9.00\nOCR>>>"
				if !strings.Contains(user, block) {
					t.Errorf("user message lacks the OCR block %q:\n%s", block, user)
				}
				if !strings.Contains(user, `"invoiceItems"`) || !strings.Contains(user, "Quantity") {
					t.Errorf("user message does not describe the schema:\n%s", user)
				}
			},
		},
		{
			name: "invalid then valid: re-ask with the validation errors",
			replies: func(n int) reply {
				if n == 1 {
					return answer(badInvoice)
				}
				return answer(validInvoice)
			},
			wantAttempts: 2,
			wantObject:   validInvoice,
			check: func(t *testing.T, reqs []wireRequest) {
				if len(reqs) != 2 {
					t.Fatalf("%d calls, want 2", len(reqs))
				}
				m := reqs[1].Messages
				if len(m) != 4 || m[2].Role != "assistant" || m[3].Role != "user" {
					t.Fatalf("re-ask messages = %+v", m)
				}
				if m[2].Content != badInvoice {
					t.Errorf("re-ask does not carry the previous answer: %q", m[2].Content)
				}
				for _, want := range []string{"does not match the schema", "/invoiceNumber", "/totalAmount", "want"} {
					if !strings.Contains(m[3].Content, want) {
						t.Errorf("re-ask lacks %q:\n%s", want, m[3].Content)
					}
				}
				if reqs[1].Temperature == nil || reqs[1].ResponseFormat == nil {
					t.Error("re-ask lost the temperature or the response format")
				}
			},
		},
		{
			name:         "always invalid: bad answer after 1+Reasks attempts",
			replies:      always(answer(badInvoice)),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"did not match the schema after 3 attempts", "/invoiceNumber"},
			wantAttempts: 3,
			check: func(t *testing.T, reqs []wireRequest) {
				if len(reqs) != 3 || len(reqs[2].Messages) != 6 {
					t.Errorf("%d calls, last with %d messages; want 3 calls, 6 messages", len(reqs), len(reqs[len(reqs)-1].Messages))
				}
			},
		},
		{
			name:         "markdown fences",
			replies:      always(answer("```json\n" + validInvoice + "\n```")),
			wantAttempts: 1,
			wantObject:   validInvoice,
		},
		{
			name:         "prose around the object",
			replies:      always(answer("Here is the extracted data:\n\n" + validInvoice + "\n\nLet me know if you need more.")),
			wantAttempts: 1,
			wantObject:   validInvoice,
		},
		{
			name: "not JSON, then valid",
			replies: func(n int) reply {
				if n == 1 {
					return answer("The document is an invoice from ACME.")
				}
				return answer(validInvoice)
			},
			wantAttempts: 2,
			wantObject:   validInvoice,
			check: func(t *testing.T, reqs []wireRequest) {
				if got := reqs[1].Messages[3].Content; !strings.Contains(got, "could not be read as a JSON object") {
					t.Errorf("re-ask = %q", got)
				}
			},
		},
		{
			name:         "never JSON",
			replies:      always(answer("I cannot read this document.")),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"did not answer with a JSON object after 3 attempts"},
			wantAttempts: 3,
		},
		{
			name:         "empty content",
			replies:      always(answer("")),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"empty"},
			wantAttempts: 3,
		},
		{
			name:         "truncated at the output limit",
			replies:      always(reply{body: completion(`{"invoiceNumber":"INV-7","invoiceItems":[{"name":"Coff`, "length")}),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"cut off"},
			wantAttempts: 1,
		},
		{
			name: "refusal",
			replies: always(reply{body: map[string]any{
				"id": "chatcmpl-test", "object": "chat.completion", "created": 1767225600, "model": testModel,
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": nil, "refusal": "I'm sorry, I cannot help with that request."}}},
			}}),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"refused", "cannot help"},
			wantAttempts: 1,
		},
		{
			name:         "content filter",
			replies:      always(reply{body: completion("", "content_filter")}),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"content filter"},
			wantAttempts: 1,
		},
		{
			name: "empty choices",
			replies: always(reply{body: map[string]any{
				"id": "chatcmpl-test", "object": "chat.completion", "created": 1767225600, "model": testModel,
				"choices": []any{}, "usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1},
			}}),
			wantErr:      ErrBadAnswer,
			wantMsg:      []string{"no choices"},
			wantAttempts: 1,
		},
		{
			name: "401: the key is rejected",
			replies: always(reply{status: http.StatusUnauthorized, body: map[string]any{"error": map[string]any{
				"message": "Incorrect API key provided: " + testKey + ".", "type": "invalid_request_error", "code": "invalid_api_key"}}}),
			wantErr:      ErrAuth,
			wantMsg:      []string{"API key", "CHAT_BOT_APIKEY", "401"},
			wantAttempts: 1,
		},
		{
			name:         "403 with a non-OpenAI body",
			replies:      always(reply{status: http.StatusForbidden, body: "forbidden"}),
			wantErr:      ErrAuth,
			wantMsg:      []string{"CHAT_BOT_APIKEY", "403"},
			wantAttempts: 1,
		},
		{
			name: "500",
			replies: always(reply{status: http.StatusInternalServerError, body: map[string]any{"error": map[string]any{
				"message": "model crashed", "type": "server_error"}}}),
			wantErr:      ErrUpstream,
			wantMsg:      []string{"HTTP 500", "model crashed"},
			wantAttempts: 1,
		},
		{
			name: "404: unknown model",
			replies: always(reply{status: http.StatusNotFound, body: map[string]any{"error": map[string]any{
				"message": `model "test-model" not found, try pulling it first`, "type": "api_error"}}}),
			wantErr:      ErrUpstream,
			wantMsg:      []string{"HTTP 404", "CHAT_BOT_MODEL", "not found"},
			wantAttempts: 1,
		},
		{
			name:         "200 with a web page instead of a completion",
			replies:      always(reply{body: "<html><body>Welcome to nginx!</body></html>"}),
			wantErr:      ErrUpstream,
			wantMsg:      []string{"not a chat completion", "/v1"},
			wantAttempts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newChatServer(t, tt.replies)
			e := cs.extractor(t, Options{Reasks: DefaultReasks})
			res, err := e.Extract(t.Context(), invoice, testPage())
			if res.Attempts != tt.wantAttempts {
				t.Errorf("Attempts = %d, want %d", res.Attempts, tt.wantAttempts)
			}
			if res.ChatTime <= 0 {
				t.Errorf("ChatTime = %v", res.ChatTime)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				for _, want := range tt.wantMsg {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message %q lacks %q", err, want)
					}
				}
				if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), cs.srv.URL) {
					t.Errorf("message %q reveals the key or the server address", err)
				}
				if res.Object != nil {
					t.Errorf("Object = %s with an error", res.Object)
				}
			} else {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if !jsonEqual(t, res.Object, []byte(tt.wantObject)) {
					t.Errorf("Object = %s, want %s", res.Object, tt.wantObject)
				}
				if err := invoice.validator.Validate(plainJSON(t, res.Object)); err != nil {
					t.Errorf("returned object is not valid: %v", err)
				}
			}
			if tt.check != nil {
				tt.check(t, cs.requests())
			}
		})
	}
}

// TestExtractCallerSchema: a caller's schema with an optional, non-nullable property. The
// strict form makes the model write it as null; the caller gets it left out.
func TestExtractCallerSchema(t *testing.T) {
	s, err := ParseSchema([]byte(`{
		"title": "Bestellung / order",
		"type": "object",
		"properties": {
			"firma": {"type": "string", "description": "Name der Firma"},
			"notiz": {"type": "string"},
			"summe": {"type": "number", "minimum": 0}
		},
		"required": ["firma", "summe"]
	}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cs := newChatServer(t, always(answer(`{"firma":"ACME SDN BHD","notiz":null,"summe":9.00}`)))
	res, err := cs.extractor(t, Options{}).Extract(t.Context(), s, testPage())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Object), `{"firma":"ACME SDN BHD","summe":9.00}`; got != want {
		t.Errorf("Object = %s, want %s", got, want)
	}
	rf := cs.requests()[0].ResponseFormat.JSONSchema
	if rf.Name != "Bestellung_order" || !rf.Strict {
		t.Errorf("name %q strict %v", rf.Name, rf.Strict)
	}
	want := `{"title":"Bestellung / order","type":"object","properties":{"firma":{"type":"string","description":"Name der Firma"},"notiz":{"type":["string","null"]},"summe":{"type":"number","minimum":0}},"required":["firma","notiz","summe"],"additionalProperties":false}`
	if !jsonEqual(t, rf.Schema, []byte(want)) {
		t.Errorf("strict schema = %s\nwant %s", rf.Schema, want)
	}
}

// TestExtractNotStrict: a schema strict mode cannot express is still sent as a response
// format, with strict false, and as it is.
func TestExtractNotStrict(t *testing.T) {
	raw := `{"type":"object","properties":{"code":{"type":"string","minLength":3}},"required":["code"]}`
	s, err := ParseSchema([]byte(raw), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cs := newChatServer(t, func(n int) reply {
		if n == 1 {
			return answer(`{"code":"AB"}`)
		}
		return answer(`{"code":"ABC"}`)
	})
	res, err := cs.extractor(t, Options{Reasks: DefaultReasks}).Extract(t.Context(), s, testPage())
	if err != nil || string(res.Object) != `{"code":"ABC"}` || res.Attempts != 2 {
		t.Fatalf("Extract = %s, %d attempts, %v", res.Object, res.Attempts, err)
	}
	rf := cs.requests()[0].ResponseFormat.JSONSchema
	if rf.Strict || !jsonEqual(t, rf.Schema, []byte(raw)) {
		t.Errorf("strict = %v, schema = %s", rf.Strict, rf.Schema)
	}
	if reask := cs.requests()[1].Messages[3].Content; !strings.Contains(reask, "/code") {
		t.Errorf("re-ask = %q", reask)
	}
}

func TestExtractReasks(t *testing.T) {
	s, _ := TemplateSchema("receipt")
	for _, tt := range []struct {
		reasks, want int
	}{{-1, 1}, {0, 1}, {1, 2}, {DefaultReasks, 3}, {4, 5}} {
		t.Run(fmt.Sprint(tt.reasks), func(t *testing.T) {
			cs := newChatServer(t, always(answer(`{"company":1}`)))
			res, err := cs.extractor(t, Options{Reasks: tt.reasks}).Extract(t.Context(), s, testPage())
			if !errors.Is(err, ErrBadAnswer) || res.Attempts != tt.want || len(cs.requests()) != tt.want {
				t.Errorf("Reasks %d: %d attempts, %d calls, %v; want %d", tt.reasks, res.Attempts, len(cs.requests()), err, tt.want)
			}
		})
	}
}

// TestExtractDeadline: a server that never answers. The request's deadline ends the call
// promptly, as context.DeadlineExceeded (504), as does the client's own timeout.
func TestExtractDeadline(t *testing.T) {
	s, _ := TemplateSchema("")
	for _, tt := range []struct {
		name     string
		timeout  time.Duration // Options.Timeout
		deadline time.Duration // on ctx; 0 for none
		wantMsg  string
	}{
		{name: "request deadline", timeout: time.Minute, deadline: 200 * time.Millisecond, wantMsg: "request deadline"},
		{name: "chat timeout", timeout: 200 * time.Millisecond, wantMsg: "chat timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := newChatServer(t, always(reply{hang: true}))
			e := cs.extractor(t, Options{Timeout: tt.timeout})
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			start := time.Now()
			res, err := e.Extract(ctx, s, testPage())
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want DeadlineExceeded", err)
			}
			if errors.Is(err, ErrUnreachable) || errors.Is(err, ErrUpstream) {
				t.Errorf("err %v also classified as a server failure", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("message %q lacks %q", err, tt.wantMsg)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v to give up", took)
			}
			if res.Attempts != 1 {
				t.Errorf("Attempts = %d", res.Attempts)
			}
		})
	}
}

func TestExtractCancelled(t *testing.T) {
	s, _ := TemplateSchema("")
	cs := newChatServer(t, always(answer(validInvoice)))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := cs.extractor(t, Options{}).Extract(ctx, s, testPage())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want Canceled", err)
	}
}

func TestExtractServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL + "/v1"
	srv.Close() // nothing listens there now
	e, err := New(Options{Model: testModel, BaseURL: base, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := TemplateSchema("")
	res, err := e.Extract(t.Context(), s, testPage())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), "CHAT_BOT_BASEURL") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("message %q", err)
	}
	if strings.Contains(err.Error(), base) {
		t.Errorf("message %q reveals the address", err)
	}
	if res.Attempts != 1 {
		t.Errorf("Attempts = %d", res.Attempts)
	}

	// The log form keeps the cause for the operator.
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Error("extract", "err", err)
	if !strings.Contains(buf.String(), "connection refused") || !strings.Contains(buf.String(), "cause=") {
		t.Errorf("log = %s", buf.String())
	}
}

// TestExtractReasoningModelTemperature: models that fix the temperature get none.
func TestExtractReasoningModelTemperature(t *testing.T) {
	s, _ := TemplateSchema("")
	cs := newChatServer(t, always(answer(validInvoice)))
	if _, err := cs.extractor(t, Options{Model: "o3-mini"}).Extract(t.Context(), s, testPage()); err != nil {
		t.Fatal(err)
	}
	if raw, ok := cs.requests()[0].raw["temperature"]; ok {
		t.Errorf("temperature %s sent to a reasoning model", raw)
	}
}

func TestExtractLogRedactsKey(t *testing.T) {
	cs := newChatServer(t, always(reply{status: http.StatusUnauthorized, body: map[string]any{"error": map[string]any{
		"message": "Incorrect API key provided: " + testKey, "type": "invalid_request_error"}}}))
	s, _ := TemplateSchema("")
	_, err := cs.extractor(t, Options{}).Extract(t.Context(), s, testPage())
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Error("extract", "err", err)
	if strings.Contains(buf.String(), testKey) || !strings.Contains(buf.String(), "[redacted]") {
		t.Errorf("log = %s", buf.String())
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		opt     Options
		wantErr error
		wantMsg string
	}{
		{name: "ok", opt: Options{Model: "m", BaseURL: "http://localhost:11434/v1"}},
		{name: "ok https trailing slash, no key", opt: Options{Model: "m", BaseURL: "https://api.openai.com/v1/"}},
		{name: "nothing", opt: Options{}, wantErr: ErrNotConfigured, wantMsg: "CHAT_BOT_MODEL and CHAT_BOT_BASEURL not set"},
		{name: "no model", opt: Options{BaseURL: "http://localhost:11434/v1"}, wantErr: ErrNotConfigured, wantMsg: "(CHAT_BOT_MODEL not set)"},
		{name: "no base URL", opt: Options{Model: "m", APIKey: "k"}, wantErr: ErrNotConfigured, wantMsg: "(CHAT_BOT_BASEURL not set)"},
		{name: "blank model", opt: Options{Model: "  ", BaseURL: "http://x/v1"}, wantErr: ErrNotConfigured},
		{name: "no scheme", opt: Options{Model: "m", BaseURL: "localhost:11434/v1"}, wantMsg: "absolute http"},
		{name: "ftp", opt: Options{Model: "m", BaseURL: "ftp://example.com/v1"}, wantMsg: "absolute http"},
		{name: "relative", opt: Options{Model: "m", BaseURL: "/v1"}, wantMsg: "absolute http"},
		{name: "credentials", opt: Options{Model: "m", BaseURL: "https://user:pw@example.com/v1"}, wantMsg: "CHAT_BOT_APIKEY"},
		{name: "query", opt: Options{Model: "m", BaseURL: "https://example.com/v1?x=1"}, wantMsg: "query"},
		{name: "not a URL", opt: Options{Model: "m", BaseURL: "http://[::1"}, wantMsg: "not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.opt)
			if tt.wantErr == nil && tt.wantMsg == "" {
				if err != nil || e == nil {
					t.Fatalf("New = %v, %v", e, err)
				}
				o := e.Options()
				if o.Timeout != DefaultTimeout || o.Reasks != 0 || o.Schema.MaxBytes != DefaultMaxSchemaBytes {
					t.Errorf("defaults not applied: %+v", o)
				}
				return
			}
			if err == nil {
				t.Fatal("New succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("message %q lacks %q", err, tt.wantMsg)
			}
		})
	}
}

func TestOptionsLogValue(t *testing.T) {
	var buf bytes.Buffer
	opt := Options{Model: "gpt-4o-mini", BaseURL: "https://api.openai.com/v1", APIKey: testKey}
	slog.New(slog.NewTextHandler(&buf, nil)).Info("chat", "opt", opt)
	if strings.Contains(buf.String(), testKey) || !strings.Contains(buf.String(), "api_key=[redacted]") ||
		!strings.Contains(buf.String(), "gpt-4o-mini") {
		t.Errorf("log = %s", buf.String())
	}
}

func TestWithZeroTemperature(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"model":"m","messages":[]}`, `{"temperature":0,"model":"m","messages":[]}`},
		{`{}`, `{"temperature":0}`},
		{` { } `, `{"temperature":0}`},
		{`{"temperature":0.7,"model":"m"}`, `{"temperature":0.7,"model":"m"}`},
		{`not json`, `not json`},
		{`[1]`, `[1]`},
	} {
		if got := string(withZeroTemperature([]byte(tt.in))); got != tt.want {
			t.Errorf("withZeroTemperature(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for model, want := range map[string]bool{"gpt-4o-mini": true, "qwen2.5:7b": true, "o3-mini": false, "o1": false, "gpt-5-mini": false} {
		if got := acceptsTemperature(model); got != want {
			t.Errorf("acceptsTemperature(%q) = %v", model, got)
		}
	}
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	return bytes.Equal(canonical(t, a), canonical(t, b))
}

func canonical(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return out
}

func plainJSON(t *testing.T, b []byte) any {
	t.Helper()
	v, err := decodeTree(b, 100)
	if err != nil {
		t.Fatal(err)
	}
	return plain(v)
}
