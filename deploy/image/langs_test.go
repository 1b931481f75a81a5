//go:build image

package image

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// portLangs is the host port of the cpu image built with a language pack.
const portLangs = 5530

// retagEngine is a stand-in for the engine CLI that runs the engine ($LANG_TEST_ENGINE) with the
// tag of a build replaced by $LANG_TEST_TAG, so that a second build of the cpu image leaves the
// tag the other tests use (ocrgate:cpu-<version>) on the image they test.
const retagEngine = `#!/usr/bin/env bash
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = -t ]; then args+=(-t "$LANG_TEST_TAG"); shift 2; continue; fi
  args+=("$1"); shift
done
exec "$LANG_TEST_ENGINE" "${args[@]}"
`

// TestLangPackImage builds the cpu image with OCRGATE_LANGS=ja (scripts/build_docker_image.sh
// stages the Japanese pack into models/ and its Triton repository) and runs it with
// OCRGATE_LANGS=ja: it carries the pack, loads it, reads a rendered Japanese line with lang=ja
// as the line says, and refuses a pack it was not built with. The build reuses the cpu build's
// layers but for the models.
func TestLangPackImage(t *testing.T) {
	tag := "ocrgate-test/cpu-ja:" + version
	bin := t.TempDir()
	wrapper := filepath.Join(bin, "engine")
	if err := os.WriteFile(wrapper, []byte(retagEngine), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "build_docker_image.sh"), "cpu")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "DOCKER="+wrapper, "LANG_TEST_ENGINE="+engine, "LANG_TEST_TAG="+tag, "OCRGATE_LANGS=ja")
	log := filepath.Join(repoRoot, "out", "image-test", "build-cpu-ja.log")
	if err := runCmdLogged(cmd, log, 40*time.Minute); err != nil {
		t.Fatalf("OCRGATE_LANGS=ja scripts/build_docker_image.sh cpu: %v (log: %s)\n%s", err, log, tail(log, 40))
	}
	t.Cleanup(func() { _ = exec.Command(engine, "rmi", tag).Run() })
	note(t, "build %s (OCRGATE_LANGS=ja): %.0f s wall; image %s (ocrgate:cpu-%s: %s)", tag, time.Since(start).Seconds(), imageSize(tag), version, imageSize(cpuImage))

	const name = "ocrgate-image-test-cpu-ja"
	base, startup := startOCRGATE(t, name, tag, portLangs, "-e", "OCRGATE_LANGS=ja")
	for _, path := range []string{"/opt/ocrgate/models/rec_japan_PP-OCRv3_infer.prepared.onnx", "/opt/ocrgate/models/dict_japan.txt",
		"/opt/ocrgate/model_repository/ppocr_rec_ja/config.pbtxt", "/opt/ocrgate/model_repository/ppocr_rec_ja/1/model.onnx"} {
		if out, err := exec.Command(engine, "exec", name, "test", "-s", path).CombinedOutput(); err != nil {
			t.Errorf("the image lacks %s: %v %s", path, err, out)
		}
	}

	line, err := os.ReadFile(filepath.Join(repoRoot, "service", "ocr", "testdata", "langs", "ja-00.png"))
	if err != nil {
		t.Fatal(err)
	}
	texts, err := os.ReadFile(filepath.Join(repoRoot, "service", "ocr", "testdata", "langs", "ja.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := strings.Cut(string(texts), "\n")
	post := func(lang string) response {
		t.Helper()
		resp, err := httpClient.Post(base+"/ocr?lang="+lang, "image/png", bytes.NewReader(line))
		if err != nil {
			t.Fatalf("POST /ocr?lang=%s: %v", lang, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("POST /ocr?lang=%s: %v", lang, err)
		}
		return response{status: resp.StatusCode, header: resp.Header, body: b}
	}
	r := post("ja")
	var got ocrResult
	if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil {
		t.Fatalf("POST /ocr?lang=ja: %d %s", r.status, r.body)
	}
	if strings.Join(strings.Fields(got.Text), "") != strings.Join(strings.Fields(want), "") {
		t.Errorf("lang=ja read %q, want %q", got.Text, want)
	}
	r = post("ko")
	var e struct {
		Code  string `json:"code"`
		Error string `json:"error"`
	}
	if r.status != http.StatusBadRequest || json.Unmarshal(r.body, &e) != nil || e.Code != "lang_not_loaded" || !strings.Contains(e.Error, "ch, ja") {
		t.Errorf("POST /ocr?lang=ko: %d %s, want 400 lang_not_loaded listing ch, ja", r.status, r.body)
	}
	note(t, "check: the cpu image built with OCRGATE_LANGS=ja carries the pack (models/, ppocr_rec_ja), ready in %.1f s with it loaded, reads lang=ja, refuses lang=ko", startup.Seconds())
}
