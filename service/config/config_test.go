package config

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/modelprep"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// env is a getenv over a fixed map: the tests never read the process environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// home is a fixed OCRGATE_HOME, so no test depends on the user's home directory.
const home = "/srv/ocrgate-test"

func load(t *testing.T, args []string, vars map[string]string) (Config, error) {
	t.Helper()
	all := map[string]string{"OCRGATE_HOME": home}
	for k, v := range vars {
		all[k] = v
	}
	return Load(args, env(all), io.Discard)
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":5000" || c.Runtime != "embedded" || c.Home != home ||
		c.ModelDir != filepath.Join(home, "models") || c.ORTLibrary != filepath.Join(home, "lib", "libonnxruntime.so.1") ||
		c.RequestTimeout != 30*time.Second || c.MaxBodyBytes != 20<<20 || c.CORSOrigins != "*" || c.TritonSHM != "auto" ||
		c.MaxQueue != -1 || c.LogLevel != "info" || c.LogFormat != "text" || c.Chat.Model != "" {
		t.Errorf("defaults: %+v", c)
	}
	if c.OCR.DetLimitSide != 960 || !c.OCR.UseClassifier || c.OCR.MinScore != 0.5 || c.OCR.DB.UnclipRatio != 1.5 {
		t.Errorf("pipeline defaults: %+v", c.OCR)
	}
	if got := c.ModelPath(c.Dictionary); got != filepath.Join(home, "models", "ppocr_keys_v1.txt") {
		t.Errorf("ModelPath = %s", got)
	}

	// Without OCRGATE_HOME, the home is ~/.ocrgate.
	someone := t.TempDir()
	t.Setenv("HOME", someone)
	c, err = Load(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != filepath.Join(someone, ".ocrgate") || c.ModelDir != filepath.Join(someone, ".ocrgate", "models") {
		t.Errorf("home %s, model dir %s", c.Home, c.ModelDir)
	}
}

func TestEnvironmentAndFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		vars  map[string]string
		check func(c Config) bool
	}{
		{"env sets", nil, map[string]string{
			"OCRGATE_ADDR": "127.0.0.1:9000", "OCRGATE_RUNTIME": "triton", "OCRGATE_TRITON_ADDR": "triton:8001",
			"OCRGATE_REQUEST_TIMEOUT": "5s", "OCRGATE_USE_CLS": "false", "OCRGATE_REC_WIDTH_BUCKETS": "64, 128,256",
			"OCRGATE_DET_UNCLIP_RATIO": "1.8", "OCRGATE_CLS_THRESH": "0.95", "OCRGATE_MAX_INFLIGHT": "3",
			"CHAT_BOT_MODEL": "m", "CHAT_BOT_BASEURL": "http://chat.test/v1", "CHAT_BOT_APIKEY": "sk-secret",
		}, func(c Config) bool {
			return c.Addr == "127.0.0.1:9000" && c.Runtime == "triton" && c.TritonAddr == "triton:8001" &&
				c.RequestTimeout == 5*time.Second && !c.OCR.UseClassifier && slices.Equal(c.OCR.RecWidthBuckets, []int{64, 128, 256}) &&
				c.OCR.DB.UnclipRatio == 1.8 && c.OCR.ClsThreshold == 0.95 && c.MaxInFlight == 3 &&
				c.Chat.Model == "m" && c.Chat.BaseURL == "http://chat.test/v1" && c.Chat.APIKey == "sk-secret"
		}},
		{"flags set", []string{"-addr", ":7000", "-use-cls=false", "-request-timeout=2m", "-chat-model", "f"}, nil,
			func(c Config) bool {
				return c.Addr == ":7000" && !c.OCR.UseClassifier && c.RequestTimeout == 2*time.Minute && c.Chat.Model == "f"
			}},
		{"flag wins over env", []string{"-addr=:7001", "-max-queue", "4", "-log-level", "debug"},
			map[string]string{"OCRGATE_ADDR": ":7000", "OCRGATE_MAX_QUEUE": "9", "OCRGATE_LOG_LEVEL": "warn"},
			func(c Config) bool { return c.Addr == ":7001" && c.MaxQueue == 4 && c.LogLevel == "debug" }},
		{"env without flag stays", []string{"-addr=:7001"}, map[string]string{"OCRGATE_MAX_QUEUE": "9"},
			func(c Config) bool { return c.Addr == ":7001" && c.MaxQueue == 9 }},
		{"model dir moves with the flag, not the home", []string{"-model-dir", "/m"}, nil,
			func(c Config) bool {
				return c.ModelDir == "/m" && c.ModelPath("x.onnx") == "/m/x.onnx" && c.Home == home
			}},
		{"empty env is unset", nil, map[string]string{"OCRGATE_ADDR": ""},
			func(c Config) bool { return c.Addr == ":5000" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, tt.args, tt.vars)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("config %+v\nocr %+v", c, c.OCR)
			}
		})
	}
}

// TestInvalid: every setting that cannot work is refused at start with a message naming it, and
// all problems are reported at once.
func TestInvalid(t *testing.T) {
	keysFile := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keysFile, []byte("# no keys here\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want []string
	}{
		{"unknown runtime", nil, map[string]string{"OCRGATE_RUNTIME": "tensorrt"}, []string{`OCRGATE_RUNTIME (-runtime): must be one of embedded, triton, got "tensorrt"`}},
		{"triton without address", []string{"-triton-addr="}, map[string]string{"OCRGATE_RUNTIME": "triton"}, []string{"triton runtime needs an address"}},
		{"triton without a model name", []string{"-runtime=triton", "-triton-rec-model="}, nil, []string{"triton runtime needs an address and three model names"}},
		{"shared memory mode", nil, map[string]string{"OCRGATE_TRITON_SHM": "maybe"}, []string{`OCRGATE_TRITON_SHM (-triton-shm): must be one of auto, on, off, got "maybe"`}},
		{"receive limit under grpc's", nil, map[string]string{"OCRGATE_TRITON_MAX_RECV_BYTES": "1024"}, []string{"OCRGATE_TRITON_MAX_RECV_BYTES (-triton-max-recv-bytes): must be at least 4194304, got 1024"}},
		{"zero timeout", []string{"-request-timeout=0s"}, nil, []string{"OCRGATE_REQUEST_TIMEOUT (-request-timeout): must be positive, got 0s"}},
		{"tiny body limit", nil, map[string]string{"OCRGATE_MAX_BODY_BYTES": "10"}, []string{"OCRGATE_MAX_BODY_BYTES (-max-body-bytes): must be at least 1024"}},
		{"negative queue", nil, map[string]string{"OCRGATE_MAX_QUEUE": "-2"}, []string{"OCRGATE_MAX_QUEUE (-max-queue): must be at least -1, got -2"}},
		{"negative threads", nil, map[string]string{"OCRGATE_ORT_INTRA_THREADS": "-1"}, []string{"OCRGATE_ORT_INTRA_THREADS (-ort-intra-threads): must not be negative, got -1"}},
		{"session config", nil, map[string]string{"OCRGATE_ORT_SESSION_CONFIG": "a=1,broken"}, []string{`"broken" is not key=value`}},
		{"log level", nil, map[string]string{"OCRGATE_LOG_LEVEL": "loud"}, []string{`OCRGATE_LOG_LEVEL (-log-level): log level must be debug, info, warn or error, got "loud"`}},
		{"log format", nil, map[string]string{"OCRGATE_LOG_FORMAT": "xml"}, []string{`OCRGATE_LOG_FORMAT (-log-format): must be one of text, json, got "xml"`}},
		{"keys file missing", nil, map[string]string{"OCRGATE_API_KEYS_FILE": filepath.Join(t.TempDir(), "none")}, []string{"API keys file"}},
		{"keys file empty", nil, map[string]string{"OCRGATE_API_KEYS_FILE": keysFile}, []string{"holds no key"}},
		{"pipeline options", nil, map[string]string{"OCRGATE_DET_LIMIT_SIDE": "-5"}, []string{"OCRGATE_DET_LIMIT_SIDE (-det-limit-side): must be at least 32, got -5"}},
		{"what only the pipeline sees", nil, map[string]string{"OCRGATE_DET_TILE_PIXELS": "1000", "OCRGATE_DET_TILE_OVERLAP": "0"}, []string{"OCRGATE_DET_TILE_PIXELS (-det-tile-pixels): must be 0 or at least 4 × (32 + 2 × 0)² = 4096, got 1000"}},
		{"several at once", nil, map[string]string{"OCRGATE_LOG_FORMAT": "xml", "OCRGATE_RUNTIME": "x"}, []string{"OCRGATE_LOG_FORMAT", "OCRGATE_RUNTIME"}},
		{"not an integer", nil, map[string]string{"OCRGATE_MAX_BODY_BYTES": "lots"}, []string{`OCRGATE_MAX_BODY_BYTES="lots": not an integer`}},
		{"not a duration", nil, map[string]string{"OCRGATE_REQUEST_TIMEOUT": "30"}, []string{"OCRGATE_REQUEST_TIMEOUT", "not a duration"}},
		{"not a boolean", nil, map[string]string{"OCRGATE_USE_CLS": "sometimes"}, []string{"OCRGATE_USE_CLS", "not a boolean"}},
		{"not a number", nil, map[string]string{"OCRGATE_DET_THRESH": "high"}, []string{"OCRGATE_DET_THRESH", "not a number"}},
		{"not a list", nil, map[string]string{"OCRGATE_REC_WIDTH_BUCKETS": "64,wide"}, []string{"comma-separated list of integers"}},
		{"bad flag value", []string{"-max-queue=many"}, nil, []string{"not an integer"}},
		{"unknown flag", []string{"-colour"}, nil, []string{"flag provided but not defined: -colour"}},
		{"extra arguments", []string{"-addr=:1", "serve"}, nil, []string{"unexpected arguments: serve"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.args, tt.vars)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := Load([]string{"-h"}, env(map[string]string{"OCRGATE_HOME": home}), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("error %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: ocrgate", "-addr", "env OCRGATE_ADDR", "env CHAT_BOT_APIKEY", "-det-unclip-ratio",
		"env OCRGATE_MAX_PAGES; from 1 to 10000", "env OCRGATE_RUNTIME; embedded or triton", "Environment only:\n  OCRGATE_HOME"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}

// TestLogRedactsSecrets logs the config as main does and checks that no key reaches the log, while
// the log still says whether auth and a chat key are set.
func TestLogRedactsSecrets(t *testing.T) {
	keysFile := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keysFile, []byte("file-key-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, []string{"-chat-apikey", "sk-live-0123456789"}, map[string]string{
		"OCRGATE_API_KEYS": "api-key-one,api-key-two", "OCRGATE_API_KEYS_FILE": keysFile,
		"CHAT_BOT_MODEL": "gpt-test", "CHAT_BOT_BASEURL": "https://proxy-user:url-pass-42@chat.test/v1?key=query-key-9",
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", c)
	log := buf.String()
	for _, secret := range []string{"sk-live-0123456789", "api-key-one", "api-key-two", "file-key-77", "url-pass-42", "query-key-9"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds the secret %q: %s", secret, log)
		}
	}
	for _, want := range []string{`"api_keys":true`, `"api_key":"[redacted]"`, `"model":"gpt-test"`, `"runtime":"embedded"`,
		`"base_url":"https://proxy-user:redacted@chat.test/v1?redacted"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s: %s", want, log)
		}
	}
	keys, err := c.Keys()
	if err != nil || !slices.Equal(keys, []string{"api-key-one", "api-key-two", "file-key-77"}) {
		t.Errorf("Keys = %q, %v", keys, err)
	}

	// Without a chat key the log says so, rather than printing an empty redaction.
	c.Chat.APIKey, c.APIKeys, c.APIKeysFile = "", "", ""
	buf.Reset()
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", c)
	if !strings.Contains(buf.String(), `"api_key":""`) || !strings.Contains(buf.String(), `"api_keys":false`) {
		t.Errorf("log without keys: %s", buf.String())
	}
}

func TestDerived(t *testing.T) {
	c, err := load(t, nil, map[string]string{"OCRGATE_ORT_SESSION_CONFIG": " session.a = 1 , b=x=y ,", "OCRGATE_LOG_LEVEL": "warn"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := c.SessionConfig()
	if err != nil || len(sc) != 2 || sc["session.a"] != "1" || sc["b"] != "x=y" {
		t.Errorf("SessionConfig = %v, %v", sc, err)
	}
	if l, err := c.SlogLevel(); err != nil || l != slog.LevelWarn {
		t.Errorf("SlogLevel = %v, %v", l, err)
	}
	for _, tt := range []struct{ inflight, queue, wantIn, wantQ int }{
		{0, -1, runtime.NumCPU(), 2 * runtime.NumCPU()},
		{3, -1, 3, 6},
		{3, 0, 3, 0},
		{1, 5, 1, 5},
	} {
		c.MaxInFlight, c.MaxQueue = tt.inflight, tt.queue
		if in, q := c.Admission(); in != tt.wantIn || q != tt.wantQ {
			t.Errorf("Admission(%d, %d) = %d, %d; want %d, %d", tt.inflight, tt.queue, in, q, tt.wantIn, tt.wantQ)
		}
	}
}

// loadEnv is Load over env alone (no OCRGATE_HOME added), with args after it.
func loadEnv(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	return Load(args, func(k string) string { return env[k] }, io.Discard)
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824", 1 << 30, true},
		{"800MiB", 800 << 20, true},
		{"800Mi", 800 << 20, true},
		{"1.5GiB", 3 << 29, true},
		{"1GB", 1_000_000_000, true},
		{"512k", 512_000, true},
		{" 2 GiB ", 2 << 30, true},
		{"auto", 0, true},
		{"0", 0, true},
		{"-1GiB", 0, false},
		{"lots", 0, false},
		{"12XB", 0, false},
		{"99999999999TiB", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestLoadLimits(t *testing.T) {
	keysFile := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(keysFile, []byte("# comment only\n\n"), 0o600)
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{name: "defaults", check: func(t *testing.T, c Config) {
			if c.MemoryBudget != 0 || c.MaxRequestMemory != 0 || c.OCR.Limits.MaxScans != 64 ||
				c.Chat.Reasks != extract.DefaultReasks || c.Chat.MaxAnswerBytes != extract.DefaultMaxAnswerBytes ||
				c.ChatMaxInFlight != 4 || c.ChatMaxQueue != 8 || c.MaxRequestCPU != 10*time.Minute {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{name: "sizes with units", env: map[string]string{"OCRGATE_MEMORY_BUDGET": "700MiB", "OCRGATE_MAX_REQUEST_MEMORY": "1GiB",
			"OCRGATE_CHAT_MAX_ANSWER_BYTES": "256KiB"}, check: func(t *testing.T, c Config) {
			if c.MemoryBudget != 700<<20 || c.MaxRequestMemory != 1<<30 || c.Chat.MaxAnswerBytes != 256<<10 {
				t.Errorf("got %d %d %d", c.MemoryBudget, c.MaxRequestMemory, c.Chat.MaxAnswerBytes)
			}
		}},
		{name: "zero re-asks mean none", env: map[string]string{"OCRGATE_CHAT_REASKS": "0", "CHAT_BOT_MODEL": "m", "CHAT_BOT_BASEURL": "http://x/v1"},
			check: func(t *testing.T, c Config) {
				ex, err := extract.New(c.Chat)
				if err != nil {
					t.Fatal(err)
				}
				if c.Chat.Reasks != 0 || ex.Options().Reasks != 0 {
					t.Errorf("OCRGATE_CHAT_REASKS=0 gives %d re-asks (extractor: %d)", c.Chat.Reasks, ex.Options().Reasks)
				}
			}},
		{name: "API keys that hold no key", env: map[string]string{"OCRGATE_API_KEYS": " , "}, wantErr: "holds no key"},
		{name: "API keys file that holds no key", env: map[string]string{"OCRGATE_API_KEYS_FILE": keysFile}, wantErr: "holds no key"},
		{name: "CPU budget", env: map[string]string{"OCRGATE_MAX_REQUEST_CPU": "90s"}, check: func(t *testing.T, c Config) {
			if c.MaxRequestCPU != 90*time.Second {
				t.Errorf("got %v", c.MaxRequestCPU)
			}
		}},
		{name: "no CPU budget", env: map[string]string{"OCRGATE_MAX_REQUEST_CPU": "0"}, check: func(t *testing.T, c Config) {
			if c.MaxRequestCPU != 0 {
				t.Errorf("got %v", c.MaxRequestCPU)
			}
		}},
		{name: "negative CPU budget", env: map[string]string{"OCRGATE_MAX_REQUEST_CPU": "-1s"}, wantErr: "OCRGATE_MAX_REQUEST_CPU (-max-request-cpu): must not be negative"},
		{name: "budget not a size", env: map[string]string{"OCRGATE_MEMORY_BUDGET": "plenty"}, wantErr: "OCRGATE_MEMORY_BUDGET"},
		{name: "negative scans", env: map[string]string{"OCRGATE_MAX_JPEG_SCANS": "-1"}, wantErr: "OCRGATE_MAX_JPEG_SCANS (-max-jpeg-scans): must not be negative"},
		{name: "no chat slot", env: map[string]string{"OCRGATE_CHAT_MAX_INFLIGHT": "0"}, wantErr: "OCRGATE_CHAT_MAX_INFLIGHT (-chat-max-inflight): must be at least 1"},
		{name: "tiny answer cap", env: map[string]string{"OCRGATE_CHAT_MAX_ANSWER_BYTES": "100"}, wantErr: "OCRGATE_CHAT_MAX_ANSWER_BYTES (-chat-max-answer-bytes): must be at least 1KiB, got 100"},
		{name: "document defaults", check: func(t *testing.T, c Config) {
			if c.MaxPages != 50 || c.MaxImages != 16 || c.MaxAnswerBytes != 64<<20 || c.PageTimeout != 15*time.Second || c.MaxDocumentTimeout != 10*time.Minute ||
				c.RenderCPU != 10*time.Second || c.MaxTextPages != 2000 || c.TextPageTimeout != time.Second || c.PDFMemory != 256<<20 || c.Chat.MaxText != extract.DefaultMaxText ||
				c.PDFCache() != filepath.Join(c.Home, "cache", "pdfium") {
				t.Errorf("document defaults: %+v", c)
			}
			if inflight, _ := c.Admission(); c.Instances() != inflight {
				t.Errorf("PDF instances %d, want max-inflight %d", c.Instances(), inflight)
			}
		}},
		{name: "document settings", env: map[string]string{"OCRGATE_MAX_PAGES": "5", "OCRGATE_PDF_MEMORY": "128MiB",
			"OCRGATE_PDF_CACHE_DIR": "off", "OCRGATE_PDF_INSTANCES": "3", "OCRGATE_CHAT_MAX_TEXT": "2000"}, check: func(t *testing.T, c Config) {
			if c.MaxPages != 5 || c.PDFMemory != 128<<20 || c.PDFCache() != "" || c.Instances() != 3 || c.Chat.MaxText != 2000 {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "no pages", env: map[string]string{"OCRGATE_MAX_PAGES": "0"}, wantErr: "OCRGATE_MAX_PAGES (-max-pages): must be from 1 to 10000, got 0"},
		{name: "no images", env: map[string]string{"OCRGATE_MAX_IMAGES": "0"}, wantErr: "OCRGATE_MAX_IMAGES (-max-images): must be from 1 to 1000"},
		{name: "tiny answers", env: map[string]string{"OCRGATE_MAX_ANSWER_BYTES": "100KiB"}, wantErr: "OCRGATE_MAX_ANSWER_BYTES (-max-answer-bytes): must be at least 1MiB"},
		{name: "no render time", env: map[string]string{"OCRGATE_RENDER_CPU": "0s"}, wantErr: "OCRGATE_RENDER_CPU (-render-cpu): must be positive"},
		{name: "PDF memory too small", env: map[string]string{"OCRGATE_PDF_MEMORY": "1MiB"}, wantErr: "OCRGATE_PDF_MEMORY (-pdf-memory): must be from 64MiB to 4GiB, got 1MiB"},
		{name: "PDF memory past WebAssembly's", env: map[string]string{"OCRGATE_PDF_MEMORY": "5GiB"}, wantErr: "OCRGATE_PDF_MEMORY (-pdf-memory): must be from 64MiB to 4GiB, got 5GiB"},
		{name: "tiny chat text", env: map[string]string{"OCRGATE_CHAT_MAX_TEXT": "10"}, wantErr: "OCRGATE_CHAT_MAX_TEXT (-chat-max-text): must be at least 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadEnv(t, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

var update = flag.Bool("update", false, "rewrite docs/configuration.md from the settings table")

// TestConfigurationDoc fails when docs/configuration.md is not what the settings table writes, as
// a change to a setting's name, default, rule or meaning that was not regenerated would leave it.
func TestConfigurationDoc(t *testing.T) {
	var want bytes.Buffer
	if err := Markdown(&want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "configuration.md")
	if *update {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(want.String(), "\n")
		for i := range max(len(gotLines), len(wantLines)) {
			g, w := "", ""
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Fatalf("docs/configuration.md is stale (run go generate ./service/config); first difference at line %d:\n have: %s\n want: %s", i+1, g, w)
			}
		}
	}
}

// TestTestenvFindsTheConfiguredModels: internal/testenv, which decides whether a test has the
// models, looks where the service does (it cannot import this package: most of the pipeline's
// tests would then import themselves).
func TestTestenvFindsTheConfiguredModels(t *testing.T) {
	for _, e := range []map[string]string{
		{},
		{"OCRGATE_HOME": "/opt/ocrgate"},
		{"OCRGATE_HOME": "/opt/ocrgate", "OCRGATE_MODEL_DIR": "/srv/models", "OCRGATE_ORT_LIB": "/usr/lib/libonnxruntime.so.1"},
	} {
		getenv := func(k string) string { return e[k] }
		cfg, err := Load(nil, getenv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		got := testenv.Locate(getenv)
		if got.Home != cfg.Home || got.ModelDir != cfg.ModelDir || got.ORTLibrary != cfg.ORTLibrary {
			t.Errorf("env %v: testenv finds %+v, the service %s, %s, %s", e, got, cfg.Home, cfg.ModelDir, cfg.ORTLibrary)
		}
		if !slices.Contains(testenv.ModelFiles, cfg.Dictionary) {
			t.Errorf("testenv does not check for the dictionary %s", cfg.Dictionary)
		}
	}
}

// TestSettingsTable: every row names a variable of the house form and a flag of its own, and
// every default passes its own rule.
func TestSettingsTable(t *testing.T) {
	c := defaults(home)
	envs, flags := map[string]bool{}, map[string]bool{}
	for _, s := range c.settings() {
		if s.isSection() {
			continue
		}
		if !regexp.MustCompile(`^(OCRGATE|CHAT_BOT)_[A-Z0-9_]+$`).MatchString(s.env) || envs[s.env] {
			t.Errorf("variable %q: not OCRGATE_* or CHAT_BOT_*, or named twice", s.env)
		}
		envs[s.env] = true
		if s.flag != "" && flags[s.flag] {
			t.Errorf("flag -%s named twice", s.flag)
		}
		flags[s.flag] = true
		if s.usage == "" || s.value == nil {
			t.Errorf("%s: no meaning or no value", s.env)
		}
		if r, ok := s.value.(rule); ok {
			if err := r.check(); err != nil {
				t.Errorf("%s: the default %s breaks its own rule: %v", s.env, s.value, err)
			}
		}
	}
	if len(envs) < 80 {
		t.Errorf("only %d settings in the table", len(envs))
	}
}

// TestRulesMatchThePipeline holds each bound in the table to what Validate does: a value just
// past the bound is refused naming the setting, one at the bound is accepted, and where the
// setting is a pipeline option, ocr.Options.Validate refuses the value past the bound too, so the
// pipeline is never looser than the docs say (for the programs that fill ocr.Options without
// this package).
func TestRulesMatchThePipeline(t *testing.T) {
	base := defaults(home)
	n := 0
	for i, s := range base.settings() {
		b, ok := s.value.(*bounded)
		if !ok {
			continue
		}
		n++
		for _, x := range b.outside() {
			c := defaults(home)
			v := c.settings()[i].value.(*bounded)
			if err := v.Set(v.format(x)); err != nil {
				continue // the parser refuses it (a negative size), and Load names the variable
			}
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), s.env) {
				t.Errorf("%s=%s: Validate says %v, want a refusal naming it", s.env, v.format(x), err)
			}
			if !reflect.DeepEqual(c.OCR, base.OCR) && c.OCR.Validate() == nil {
				t.Errorf("%s=%s: the rule refuses it but ocr.Options.Validate accepts it", s.env, v.format(x))
			}
		}
		for _, x := range b.inside() {
			c := defaults(home)
			v := c.settings()[i].value.(*bounded)
			if err := v.Set(v.format(x)); err != nil {
				t.Fatalf("%s: set %s: %v", s.env, v.format(x), err)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("%s=%s is within its rule (%s), but Validate says %v", s.env, v.format(x), b.rule(), err)
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d bounded settings", n)
	}
}

// TestLangPacks: OCRGATE_LANGS names packs that exist, each once, in order; the files it loads
// are the ones internal/modelprep prepares.
func TestLangPacks(t *testing.T) {
	for _, tt := range []struct {
		langs string
		want  []string
		bad   bool
	}{
		{"", nil, false},
		{"ch", nil, false},
		{"ja, ko,ja", []string{"ja", "ko"}, false},
		{"zh-Hant,en", []string{"zh-Hant", "en"}, false},
		{"fr", nil, true},
		{"zh-hant", nil, true},
	} {
		packs, err := Config{Langs: tt.langs}.LoadedPacks()
		if (err != nil) != tt.bad {
			t.Errorf("%q: error %v, want one: %v", tt.langs, err, tt.bad)
			continue
		}
		var got []string
		for _, p := range packs {
			got = append(got, p.Lang)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: packs %v, want %v", tt.langs, got, tt.want)
		}
	}
	for _, p := range LangPacks {
		mp, ok := modelprep.PackFor(p.Lang)
		if !ok || mp.Model.Prepared() != p.Model || mp.Dictionary != p.Dictionary || mp.Model.Name != string(ocr.RecognizerFor(p.Lang)) {
			t.Errorf("%s: config loads %s and %s, modelprep prepares %+v", p.Lang, p.Model, p.Dictionary, mp)
		}
	}
	if len(LangPacks) != len(modelprep.Packs) {
		t.Errorf("config knows %d packs, modelprep %d", len(LangPacks), len(modelprep.Packs))
	}
}
