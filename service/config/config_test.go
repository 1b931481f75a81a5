package config

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/extract"
)

func load(t *testing.T, env map[string]string, args ...string) (Config, error) {
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
				c.ChatMaxInFlight != 4 || c.ChatMaxQueue != 8 {
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
		{name: "budget not a size", env: map[string]string{"OCRGATE_MEMORY_BUDGET": "plenty"}, wantErr: "OCRGATE_MEMORY_BUDGET"},
		{name: "negative scans", env: map[string]string{"OCRGATE_MAX_JPEG_SCANS": "-1"}, wantErr: "must not be negative"},
		{name: "no chat slot", env: map[string]string{"OCRGATE_CHAT_MAX_INFLIGHT": "0"}, wantErr: "chat max inflight"},
		{name: "tiny answer cap", env: map[string]string{"OCRGATE_CHAT_MAX_ANSWER_BYTES": "100"}, wantErr: "answer bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, tt.env)
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

// TestEverySettingDocumented: the README's configuration tables name every environment variable
// the service reads.
func TestEverySettingDocumented(t *testing.T) {
	var usage strings.Builder
	if _, err := Load([]string{"-h"}, func(string) string { return "" }, &usage); err == nil {
		t.Fatal("-h did not ask for help")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	envs := regexp.MustCompile(`\(env ([A-Z_]+)\)`).FindAllStringSubmatch(usage.String(), -1)
	if len(envs) < 40 {
		t.Fatalf("found only %d settings in the usage text", len(envs))
	}
	for _, m := range envs {
		name := m[1]
		// The README groups related names in one row ("OCRGATE_SCHEMA_MAX_BYTES, …_MAX_DEPTH").
		found := strings.Contains(string(readme), "`"+name+"`")
		for i := range len(name) {
			if name[i] == '_' && strings.Contains(string(readme), "`…"+name[i:]+"`") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not in the README", name)
		}
	}
}
