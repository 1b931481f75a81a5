package container

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildScriptStagesLanguagePacks: with OCRGATE_LANGS=ja the build script stages the Japanese
// pack (its prepared recognizer and dictionary) into the image's models/ and, as ppocr_rec_ja,
// into its Triton repository, the model.onnx a hard link to the staged model, and no other pack;
// it refuses a pack that is not in OCRGATE_HOME and a language that has no pack, before it runs
// the engine.
func TestBuildScriptStagesLanguagePacks(t *testing.T) {
	pack := []string{"models/rec_japan_PP-OCRv3_infer.prepared.onnx", "models/dict_japan.txt"}
	withPack := func(t *testing.T) string {
		home := fakeHome(t)
		for _, f := range pack {
			if err := os.WriteFile(filepath.Join(home, f), []byte("stand-in for "+f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return home
	}
	fakeEngine := func(t *testing.T) (string, string) {
		bin := t.TempDir()
		ran := filepath.Join(bin, "ran")
		script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Docker version 28.2.2, build e6534b4'; exit 0; fi\ntouch \"" + ran + "\"\n"
		if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(bin, "docker"), ran
	}

	t.Run("staged", func(t *testing.T) {
		root, home := fakeRepo(t), withPack(t)
		docker, ran := fakeEngine(t)
		r := runScript(t, root, []string{"OCRGATE_HOME=" + home, "DOCKER=" + docker, "OCRGATE_LANGS=ja"}, "cpu")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(ran); err != nil {
			t.Errorf("the engine was not run: %v", err)
		}
		stage := filepath.Join(root, "build/docker/cpu")
		for _, f := range pack {
			if b, err := os.ReadFile(filepath.Join(stage, f)); err != nil || string(b) != "stand-in for "+f {
				t.Errorf("%s not staged (err %v)", f, err)
			}
		}
		repo := filepath.Join(stage, "model_repository", "ppocr_rec_ja")
		want, err := os.ReadFile(filepath.Join(repoRoot, "model_repository", "cpu", "ppocr_rec_ja", "config.pbtxt"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(repo, "config.pbtxt")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("ppocr_rec_ja: staged config differs from model_repository/cpu (err %v)", err)
		}
		a, errA := os.Stat(filepath.Join(repo, "1", "model.onnx"))
		b, errB := os.Stat(filepath.Join(stage, pack[0]))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("ppocr_rec_ja: model.onnx is not a hard link to %s (%v, %v)", pack[0], errA, errB)
		}
		for _, other := range []string{"ppocr_rec_ko", "ppocr_rec_zh-Hant", "ppocr_rec_en"} {
			if _, err := os.Stat(filepath.Join(stage, "model_repository", other)); err == nil {
				t.Errorf("%s staged, though OCRGATE_LANGS names ja only", other)
			}
		}
	})

	for _, tt := range []struct {
		name, langs, says string
		home              func(*testing.T) string
	}{
		{"pack missing", "ja", "rec_japan_PP-OCRv3_infer.prepared.onnx", fakeHome},
		{"no such pack", "ja,fr", "the language packs are ja, ko, zh-Hant and en", withPack},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docker, ran := fakeEngine(t)
			r := runScript(t, fakeRepo(t), []string{"OCRGATE_HOME=" + tt.home(t), "DOCKER=" + docker, "OCRGATE_LANGS=" + tt.langs}, "cpu")
			if r.code == 0 || !strings.Contains(r.stderr, tt.says) {
				t.Errorf("OCRGATE_LANGS=%s: exit %d, stderr %q; want a refusal that says %q", tt.langs, r.code, r.stderr, tt.says)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Errorf("the engine ran")
			}
		})
	}
}
