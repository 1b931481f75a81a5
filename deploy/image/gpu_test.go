//go:build image

package image

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGPUImage runs the gpu image alone: it serves /ping, and says not ready with no Triton beside it
// rather than answering anything else; its Triton repository is the GPU one.
func TestGPUImage(t *testing.T) {
	const name = "ocrgate-image-test-gpu"
	removeStale(name)
	args := append([]string{"run", "-d", "--name", name, "--memory", "768m", "-p", "127.0.0.1:5503:8000"}, hardened...)
	eng(t, append(args, gpuImage)...)
	removeOnCleanup(t, name)
	base := "http://127.0.0.1:5503"
	if _, err := waitStatus(base+"/ping", http.StatusOK, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if r, err := get(base + "/readyz"); err != nil || r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz without Triton = %d %s (%v), want 503", r.status, r.body, err)
	}
	r, err := postOCR(base, receipt(t))
	var e struct{ Error, Code string }
	if err != nil || r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || json.Unmarshal(r.body, &e) != nil || e.Code == "" {
		t.Errorf("/ocr without Triton = %d %s (Retry-After %q, %v), want 503 with Retry-After and a JSON error", r.status, r.body, r.header.Get("Retry-After"), err)
	}
	if env := inspect(t, gpuImage, "{{json .Config.Env}}"); !strings.Contains(env, `"OCRGATE_RUNTIME=triton"`) || !strings.Contains(env, `"OCRGATE_TRITON_ADDR=localhost:8001"`) {
		t.Errorf("gpu image environment %s, want OCRGATE_RUNTIME=triton at localhost:8001", env)
	}
	cfg := eng(t, "exec", name, "cat", "/opt/ocrgate/model_repository/ppocr_rec/config.pbtxt")
	if !strings.Contains(cfg, "KIND_GPU") {
		t.Errorf("gpu image's ppocr_rec config has no KIND_GPU instances:\n%s", cfg)
	}
	note(t, "check: gpu image: /ping 200, /readyz 503 and /ocr 503 + Retry-After with no Triton, GPU repository baked in")
}

// TestImageContents checks what the images hold: only the models the service loads, and the Triton
// repository's ONNX files stored once (hard links to the models).
func TestImageContents(t *testing.T) {
	for _, tc := range []struct {
		image, rec string
	}{{cpuImage, "ch_PP-OCRv4_rec_infer.int8.onnx"}, {gpuImage, "ch_PP-OCRv4_rec_infer.prepared.onnx"}} {
		t.Run(tc.image, func(t *testing.T) {
			ls := eng(t, "run", "--rm", "--entrypoint", "ls", tc.image, "/opt/ocrgate/models")
			got := strings.Fields(ls)
			want := []string{"ch_PP-OCRv4_det_infer.prepared.onnx", "ch_PP-OCRv4_rec_infer.int8.onnx", "ch_PP-OCRv4_rec_infer.prepared.onnx",
				"ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx", "ppocr_keys_v1.txt", "words.txt"}
			if !slices.Equal(got, want) {
				t.Errorf("/opt/ocrgate/models holds %q, want %q", got, want)
			}
			stat := eng(t, "run", "--rm", "--entrypoint", "stat", tc.image, "-c", "%i %h %n",
				"/opt/ocrgate/model_repository/ppocr_rec/1/model.onnx", "/opt/ocrgate/models/"+tc.rec)
			lines := strings.Split(strings.TrimSpace(stat), "\n")
			if len(lines) != 2 || strings.Fields(lines[0])[0] != strings.Fields(lines[1])[0] || strings.Fields(lines[0])[1] != "2" {
				t.Errorf("the repository's ppocr_rec model is not a hard link to %s:\n%s", tc.rec, stat)
			}
		})
	}
	note(t, "check: images hold only the models the service loads; repository ONNX files are hard links (stored once)")
}
