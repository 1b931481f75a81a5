package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestLangNotLoaded: a lang the server has not loaded is refused with 400 lang_not_loaded, whose
// message lists the loaded ones and does not repeat what was sent; the default's own code reads.
func TestLangNotLoaded(t *testing.T) {
	app := newApp(t, server.Options{}, nil)
	img := fixtures(t).receipt
	for _, tt := range []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
	}{
		{"query ja", func() *http.Request { return rawRequest("/ocr", "image/png", img, url.Values{"lang": {"ja"}}) }, 400, "lang_not_loaded"},
		{"json unknown", func() *http.Request { return jsonRequest("/ocr", img, map[string]any{"lang": "xx-secret"}) }, 400, "lang_not_loaded"},
		{"json not a string", func() *http.Request { return jsonRequest("/ocr", img, map[string]any{"lang": 5}) }, 400, "invalid_lang"},
		{"json empty", func() *http.Request { return jsonRequest("/ocr", img, map[string]any{"lang": ""}) }, 400, "invalid_lang"},
		{"query ch", func() *http.Request { return rawRequest("/ocr", "image/png", img, url.Values{"lang": {"ch"}}) }, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, tt.req())
			if tt.status == 200 {
				if code != 200 {
					t.Fatalf("status %d: %s", code, body)
				}
				return
			}
			checkJSONError(t, code, body, tt.status, tt.code)
			if strings.Contains(string(body), "secret") {
				t.Errorf("the error repeats what was sent: %s", body)
			}
			if tt.code == "lang_not_loaded" && !strings.Contains(string(body), "it reads ch") {
				t.Errorf("the error does not list the loaded languages: %s", body)
			}
		})
	}
}

// TestLangPicksRecognizer: with the Japanese pack loaded, lang=ja reads a rendered Japanese line
// exactly where the default recognizer misreads it, as a raw body with the query parameter and as
// a JSON member.
func TestLangPicksRecognizer(t *testing.T) {
	needModels(t)
	cfg, err := config.Load(nil, os.Getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Langs = "ja"
	for _, f := range []string{"rec_japan_PP-OCRv3_infer.prepared.onnx", "dict_japan.txt"} {
		if _, err := os.Stat(cfg.ModelPath(f)); err != nil {
			t.Fatalf("the Japanese pack: %v; run OCRGATE_LANGS=ja make models (make test does)", err)
		}
	}
	eng, err := engine.Embedded(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	app := checked(t, server.New(eng.Pipeline, eng, slog.New(slog.NewTextHandler(io.Discard, nil)), server.Options{RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20}))
	img, err := os.ReadFile(filepath.Join("..", "ocr", "testdata", "langs", "ja-03.png"))
	if err != nil {
		t.Fatal(err)
	}
	const want = "合計金額 3,240円"
	text := func(req *http.Request) string {
		t.Helper()
		code, body := call(t, app, req)
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		var ans struct {
			Regions []struct{ Text string } `json:"regions"`
		}
		if err := json.Unmarshal(body, &ans); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, r := range ans.Regions {
			parts = append(parts, r.Text)
		}
		return strings.Join(parts, " ")
	}
	if got := text(rawRequest("/ocr", "image/png", img, url.Values{"lang": {"ja"}})); got != want {
		t.Errorf("lang=ja read %q, want %q", got, want)
	}
	if got := text(jsonRequest("/ocr", img, map[string]any{"lang": "ja"})); got != want {
		t.Errorf(`"lang": "ja" read %q, want %q`, got, want)
	}
	if got := text(rawRequest("/ocr", "image/png", img, nil)); got == want {
		t.Errorf("the default recognizer read %q too: the test no longer tells them apart", got)
	}
}
