package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/ppocrtest"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/server"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
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

// TestLangTritonSameText: the Triton path (the in-process KServe v2 server over loopback, serving
// the packs' configs of model_repository/cpu from the embedded runtime) reads the same text per
// language as the embedded runtime, on four rendered lines of each.
func TestLangTritonSameText(t *testing.T) {
	needModels(t)
	const langs = "ja,ko,zh-Hant,en"
	getenv := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return os.Getenv(k)
		}
	}
	cfg, err := config.Load(nil, getenv(map[string]string{"OCRGATE_LANGS": langs}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := engine.Embedded(cfg)
	if err != nil {
		t.Fatalf("%v; run OCRGATE_LANGS=%s make models (make test does)", err, langs)
	}
	t.Cleanup(func() { _ = emb.Close() })
	models, err := ppocrtest.ONNXModels(emb.Runtime, "../../model_repository/cpu")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := tritontest.Start(models...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	tcfg, err := config.Load(nil, getenv(map[string]string{"OCRGATE_LANGS": langs, "OCRGATE_RUNTIME": "triton", "OCRGATE_TRITON_ADDR": srv.Addr()}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tri, err := engine.Open(tcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tri.Close() })
	if err := tri.Ready(t.Context()); err != nil {
		t.Fatalf("triton not ready with the packs: %v", err)
	}
	for _, lang := range []string{"ja", "ko", "zh-Hant", "en"} {
		set := lang
		if lang == "en" {
			set = "ja" // the Japanese lines carry Latin and digits
		}
		a, err := emb.Pipeline.Lang(lang)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tri.Pipeline.Lang(lang)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			img, err := os.ReadFile(filepath.Join("..", "ocr", "testdata", "langs", fmt.Sprintf("%s-%02d.png", set, i*7)))
			if err != nil {
				t.Fatal(err)
			}
			ra, err := a.Run(t.Context(), img)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Run(t.Context(), img)
			if err != nil {
				t.Fatalf("%s over triton: %v", lang, err)
			}
			ta, tb := regionText(ra), regionText(rb)
			if ta != tb || (ta == "" && lang != "en") { // en may find nothing to read on a line of kana
				t.Errorf("%s line %d: embedded %q, triton %q", lang, i*7, ta, tb)
			}
		}
	}
}

func regionText(r *ocr.Result) string {
	var parts []string
	for _, g := range r.Regions {
		parts = append(parts, g.Text)
	}
	return strings.Join(parts, " ")
}
