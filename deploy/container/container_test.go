// Package container tests the container deployment files that can be checked without a Docker engine:
// the Dockerfile (parsed with BuildKit's own parser), .dockerignore, scripts/build_docker_image.sh
// (run against a copy of the repository with a stand-in docker) and the compose files (loaded with
// the Compose specification's Go library).
package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/ocrgate/ocrgate/deploy"
)

// repoRoot is the repository root, seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// version is service.Version, read from service/server/version.go by TestMain.
var version string

func TestMain(m *testing.M) {
	v, err := deploy.ServiceVersion(repoRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	version = v
	os.Exit(m.Run())
}

// requiredModels are the files the build script insists on in $OCRGATE_HOME.
var requiredModels = []string{
	"models/ch_PP-OCRv4_det_infer.prepared.onnx",
	"models/ch_PP-OCRv4_rec_infer.prepared.onnx",
	"models/ch_PP-OCRv4_rec_infer.int8.onnx",
	"models/ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx",
	"models/ppocr_keys_v1.txt",
	"models/words.txt",
	"lib/libonnxruntime.so.1",
}

// ---- Dockerfile ----------------------------------------------------------------------------------

type dockerfile struct {
	stages   map[string]instructions.Stage
	order    []string // stage names in file order
	metaArgs map[string]string
}

// parseDockerfile parses ../Dockerfile with BuildKit's parser and instruction parser; BuildKit's
// linter (the checks of `docker build --check`) must not warn.
func parseDockerfile(t *testing.T) dockerfile {
	t.Helper()
	return parseDockerfileAt(t, "Dockerfile")
}

// parseDockerfileAt parses the Dockerfile at path (from the repository root) as parseDockerfile does.
func parseDockerfileAt(t *testing.T, path string) dockerfile {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("parse Dockerfile: %v", err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile parser warning: %s", w.Short)
	}
	lint := linter.New(&linter.Config{Warn: func(rule, desc, _, msg string, loc []parser.Range) {
		t.Errorf("Dockerfile lint %s at %v: %s", rule, loc, msg)
	}})
	stages, metaArgs, err := instructions.Parse(res.AST, lint)
	if err != nil {
		t.Fatalf("Dockerfile instructions: %v", err)
	}
	df := dockerfile{stages: map[string]instructions.Stage{}, metaArgs: map[string]string{}}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			v := ""
			if kv.Value != nil {
				v = *kv.Value
			}
			df.metaArgs[kv.Key] = v
		}
	}
	for _, s := range stages {
		if s.Name == "" {
			t.Fatalf("Dockerfile stage FROM %s has no name", s.BaseName)
		}
		df.stages[s.Name] = s
		df.order = append(df.order, s.Name)
	}
	return df
}

// expand replaces ${NAME} and $NAME from vars (a missing name is an error).
func expand(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return os.Expand(s, func(name string) string {
		v, ok := vars[name]
		if !ok {
			t.Errorf("%q uses undefined variable %s", s, name)
		}
		return v
	})
}

// chain returns the stages an image of variant is built from, final first, down to the first
// stage whose base is not a stage of this file.
func (df dockerfile) chain(t *testing.T, variant string) []instructions.Stage {
	t.Helper()
	vars := merge(df.metaArgs, map[string]string{"VARIANT": variant})
	var out []instructions.Stage
	name := df.order[len(df.order)-1]
	for {
		s, ok := df.stages[name]
		if !ok {
			break
		}
		out = append(out, s)
		name = expand(t, s.BaseName, vars)
		if len(out) > len(df.order) {
			t.Fatalf("stage chain loops: %v", out)
		}
	}
	return out
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// commands returns the commands of type T in the stages, in build order (base stage first).
func commands[T instructions.Command](chain []instructions.Stage) []T {
	var out []T
	for i := len(chain) - 1; i >= 0; i-- {
		for _, c := range chain[i].Commands {
			if tc, ok := c.(T); ok {
				out = append(out, tc)
			}
		}
	}
	return out
}

// env returns the image's environment: the ENV of its stage chain, later stages winning.
func env(chain []instructions.Stage) map[string]string {
	out := map[string]string{}
	for _, e := range commands[*instructions.EnvCommand](chain) {
		for _, kv := range e.Env {
			out[kv.Key] = kv.Value
		}
	}
	return out
}

func TestDockerfileStages(t *testing.T) {
	df := parseDockerfile(t)
	if got, want := df.metaArgs["VARIANT"], "cpu"; got != want {
		t.Errorf("ARG VARIANT defaults to %q, want %q", got, want)
	}
	base := func(stage string) string {
		s, ok := df.stages[stage]
		if !ok {
			t.Fatalf("no stage %q in %v", stage, df.order)
		}
		return expand(t, s.BaseName, df.metaArgs)
	}
	// Multi-stage: the Go toolchain builds; a small glibc base of the same Debian release runs.
	if got := base("build"); got != "golang:1.26-bookworm" {
		t.Errorf("build stage FROM %s, want golang:1.26-bookworm", got)
	}
	if got := base("runtime"); got != "debian:bookworm-slim" {
		t.Errorf("runtime stage FROM %s, want debian:bookworm-slim", got)
	}
	build := df.stages["build"]
	var buildsBinary bool
	for _, r := range commands[*instructions.RunCommand]([]instructions.Stage{build}) {
		line := strings.Join(r.CmdLine, " ")
		buildsBinary = buildsBinary || strings.Contains(line, "go build") && strings.Contains(line, "/out/ocrgate")
	}
	if !buildsBinary {
		t.Errorf("build stage does not go build /out/ocrgate")
	}
	if got := env([]instructions.Stage{build})["CGO_ENABLED"]; got != "1" {
		t.Errorf("build stage CGO_ENABLED=%q, want 1 (ONNX Runtime through cgo)", got)
	}

	for variant, runtime := range map[string]string{"cpu": "embedded", "gpu": "triton"} {
		t.Run(variant, func(t *testing.T) {
			chain := df.chain(t, variant)
			if last := chain[len(chain)-1]; last.Name != "runtime" {
				t.Fatalf("%s image is not built on the runtime stage: %v", variant, last.Name)
			}
			e := env(chain)
			want := map[string]string{
				"OCRGATE_ADDR":       ":8000",
				"OCRGATE_LOG_FORMAT": "json",
				"OCRGATE_LOG_LEVEL":  "info",
				"OCRGATE_RUNTIME":    runtime,
				"OCRGATE_MODEL_DIR":  "/opt/ocrgate/models",
				"OCRGATE_ORT_LIB":    "/opt/ocrgate/lib/libonnxruntime.so.1",
				"OCRGATE_HOME":       "/opt/ocrgate",
				// A read-only root has no room for the embedded job store (docs/jobs.md).
				"OCRGATE_JOBS": "false",
			}
			for k, v := range want {
				if e[k] != v {
					t.Errorf("ENV %s=%q, want %q", k, e[k], v)
				}
			}

			// Non-root: the last USER is numeric (so Kubernetes can verify runAsNonRoot) and not 0.
			users := commands[*instructions.UserCommand](chain)
			if len(users) == 0 {
				t.Fatalf("no USER: the image would run as root")
			}
			user := users[len(users)-1].User
			uid, _, _ := strings.Cut(user, ":")
			if uid == "" || strings.Trim(uid, "0123456789") != "" || strings.Trim(uid, "0") == "" {
				t.Errorf("USER %q, want a numeric non-root uid", user)
			}

			var ports []string
			for _, x := range commands[*instructions.ExposeCommand](chain) {
				ports = append(ports, x.Ports...)
			}
			if !slices.Equal(ports, []string{"8000"}) {
				t.Errorf("EXPOSE %v, want [8000]", ports)
			}

			hcs := commands[*instructions.HealthCheckCommand](chain)
			if len(hcs) != 1 || hcs[0].Health == nil {
				t.Fatalf("want one HEALTHCHECK, got %d", len(hcs))
			}
			if got := hcs[0].Health.Test; !slices.Equal(got, []string{"CMD", "/usr/local/bin/ocrgate", "healthcheck"}) {
				t.Errorf("HEALTHCHECK %q, want exec form of ocrgate healthcheck (no curl in the image)", got)
			}

			eps := commands[*instructions.EntrypointCommand](chain)
			if len(eps) == 0 || !slices.Equal(eps[len(eps)-1].CmdLine, []string{"/usr/local/bin/ocrgate"}) || eps[len(eps)-1].PrependShell {
				t.Errorf("ENTRYPOINT should be exec form /usr/local/bin/ocrgate")
			}

			// What the image holds: the binary from the build stage, models, ONNX Runtime, and the
			// Triton repository of this variant.
			dests := map[string]string{}
			for _, c := range commands[*instructions.CopyCommand](chain) {
				for _, src := range c.SourcePaths {
					dests[expand(t, c.DestPath, nil)] = c.From + ":" + expand(t, src, map[string]string{"VARIANT": variant})
				}
			}
			wantCopies := map[string]string{
				"/usr/local/bin/ocrgate": "build:/out/ocrgate",
				// Models, ONNX Runtime and the repository in one COPY, so hard links between the
				// repository's ONNX files and the models survive.
				"/opt/ocrgate/": ":build/docker/" + variant + "/",
				// The CA bundle for the chat model's HTTPS, without installing packages.
				"/etc/ssl/certs/ca-certificates.crt": "build:/etc/ssl/certs/ca-certificates.crt",
			}
			for dst, src := range wantCopies {
				if dests[dst] != src {
					t.Errorf("COPY to %s from %q, want %q", dst, dests[dst], src)
				}
			}
			// The runtime stage installs no packages: no network at build time, no apt lists or
			// caches in the image.
			for _, r := range commands[*instructions.RunCommand](chain) {
				if line := strings.Join(r.CmdLine, " "); strings.Contains(line, "apt-get") {
					t.Errorf("the %s image runs apt-get: %s", variant, line)
				}
			}
		})
	}
}

// ---- build script ---------------------------------------------------------------------------------

// fakeRepo lays out the parts of the repository the build script reads (itself,
// make_model_repository.sh, service/server/version.go, model_repository/) in a temporary directory, so the
// script can stage and "build" there without touching the checkout.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{"scripts/build_docker_image.sh", "scripts/make_model_repository.sh", "service/server/version.go"} {
		copyFile(t, filepath.Join(repoRoot, f), filepath.Join(root, f))
	}
	err := filepath.WalkDir(filepath.Join(repoRoot, "model_repository"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			return err
		}
		copyFile(t, p, filepath.Join(root, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// fakeHome returns an OCRGATE_HOME holding small stand-ins for the models and ONNX Runtime.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, f := range requiredModels {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("stand-in for "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

type scriptRun struct {
	stdout, stderr string
	code           int
}

// runScript runs build_docker_image.sh of root with args and extra environment.
func runScript(t *testing.T, root string, env []string, args ...string) scriptRun {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts/build_docker_image.sh")}, args...)...)
	cmd.Dir = t.TempDir() // the script must not depend on the caller's directory
	// The caller's engine and Go settings stay out: each test says what it wants.
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "DOCKER", "GOPROXY", "GOSUMDB", "GOPRIVATE", "GONOSUMDB":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run script: %v", err)
	}
	return scriptRun{stdout.String(), stderr.String(), code}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestBuildScriptDryRun(t *testing.T) {
	for _, variant := range []string{"cpu", "gpu"} {
		t.Run(variant, func(t *testing.T) {
			root, home := fakeRepo(t), fakeHome(t)
			r := runScript(t, root, []string{"OCRGATE_HOME=" + home, "DOCKER=docker", "GOPROXY=https://proxy.example/go"}, "--dry-run", variant)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			tag := "ocrgate:" + variant + "-" + version
			if got := lastLine(r.stdout); got != tag {
				t.Errorf("last line %q, want %q", got, tag)
			}
			stage := "build/docker/" + variant
			want := []string{
				"cd " + root,
				"rm -rf " + stage,
				"cp " + home + "/lib/libonnxruntime.so.1 " + stage + "/lib/libonnxruntime.so.1",
				"env OCRGATE_HOME=" + home + " scripts/make_model_repository.sh " + variant + " " + stage + "/model_repository",
				"link_duplicates " + stage + "/model_repository " + stage + "/models",
				"env DOCKER_BUILDKIT=1 docker build --build-arg VARIANT=" + variant + " --build-arg VERSION=" + version +
					" --build-arg GOPROXY=https://proxy.example/go -t " + tag + " .",
			}
			for _, f := range requiredModels[:len(requiredModels)-1] {
				want = append(want, "cp "+home+"/"+f+" "+stage+"/"+f)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			for _, w := range want {
				if !slices.Contains(lines, w) {
					t.Errorf("dry run does not print %q; it printed:\n%s", w, r.stdout)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "build")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--dry-run created build/ (err %v)", err)
			}
		})
	}
}

func TestBuildScriptReadsVersionFromGo(t *testing.T) {
	root, home := fakeRepo(t), fakeHome(t)
	versionFile := filepath.Join(root, "service/server/version.go")
	b, err := os.ReadFile(versionFile)
	if err != nil {
		t.Fatal(err)
	}
	const line = `const Version = "`
	if !bytes.Contains(b, []byte(line+version+`"`)) {
		t.Fatalf("service/server/version.go does not hold the line the script reads: %s%s\"", line, version)
	}
	b = bytes.Replace(b, []byte(line+version+`"`), []byte(line+`9.8.7-rc.1"`), 1)
	if err := os.WriteFile(versionFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runScript(t, root, []string{"OCRGATE_HOME=" + home}, "gpu", "--dry-run")
	if got := lastLine(r.stdout); r.code != 0 || got != "ocrgate:gpu-9.8.7-rc.1" {
		t.Errorf("exit %d, last line %q, want ocrgate:gpu-9.8.7-rc.1\n%s", r.code, got, r.stderr)
	}
}

func TestBuildScriptRefuses(t *testing.T) {
	root, home := fakeRepo(t), fakeHome(t)
	for _, args := range [][]string{{}, {"tpu"}, {"--dry-run"}, {"cpu", "gpu"}, {"--dry-run", "CPU"}, {"--push", "cpu"}} {
		r := runScript(t, root, []string{"OCRGATE_HOME=" + home}, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "usage: scripts/build_docker_image.sh [--dry-run] cpu|gpu") || r.stdout != "" {
			t.Errorf("args %q: exit %d, stdout %q, stderr %q; want usage on stderr and exit 1", args, r.code, r.stdout, r.stderr)
		}
	}

	// Missing models: a clear error naming the file and the fetch script, in dry runs too.
	for _, missing := range []string{requiredModels[1], "lib/libonnxruntime.so.1"} {
		home := fakeHome(t)
		if err := os.Remove(filepath.Join(home, missing)); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"cpu"}, {"--dry-run", "gpu"}} {
			r := runScript(t, root, []string{"OCRGATE_HOME=" + home, "DOCKER=false"}, args...)
			if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(home, missing)) ||
				!strings.Contains(r.stderr, "scripts/fetch_models.sh") || r.stdout != "" {
				t.Errorf("without %s, args %q: exit %d, stdout %q, stderr %q", missing, args, r.code, r.stdout, r.stderr)
			}
		}
	}
}

// TestBuildScriptStagesWhatTheDockerfileCopies runs the script for real with a stand-in engine, then
// checks that every file the Dockerfile copies from the build context is staged (and nothing the
// image does not load), that the repository's ONNX files are hard links to the models, that podman
// is asked for Docker's image format (the HEALTHCHECK), and that stdout is the tag alone.
func TestBuildScriptStagesWhatTheDockerfileCopies(t *testing.T) {
	df := parseDockerfile(t)
	for _, tc := range []struct{ variant, engine, version string }{
		{"cpu", "docker", "Docker version 28.2.2, build e6534b4"},
		{"gpu", "docker", "Docker version 28.2.2, build e6534b4"},
		{"cpu", "podman", "podman version 4.3.1"},
	} {
		variant := tc.variant
		t.Run(variant+"/"+tc.engine, func(t *testing.T) {
			root, home := fakeRepo(t), fakeHome(t)
			// An original model the image does not load.
			if err := os.WriteFile(filepath.Join(home, "models", "ch_PP-OCRv4_det_infer.onnx"), []byte("original"), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := t.TempDir()
			argsFile := filepath.Join(bin, "args")
			fake := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '" + tc.version + "'; exit 0; fi\n" +
				"printf '%s\\n' \"$PWD\" \"$@\" > \"" + argsFile + "\"\necho 'Step 1/9: pretend'\n"
			if err := os.WriteFile(filepath.Join(bin, tc.engine), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			r := runScript(t, root, []string{"OCRGATE_HOME=" + home, "DOCKER=" + filepath.Join(bin, tc.engine)}, variant)
			tag := "ocrgate:" + variant + "-" + version
			if r.code != 0 || r.stdout != tag+"\n" {
				t.Fatalf("exit %d, stdout %q, want only %q\nstderr:\n%s", r.code, r.stdout, tag, r.stderr)
			}
			got, err := os.ReadFile(argsFile)
			if err != nil {
				t.Fatalf("the engine was not run: %v", err)
			}
			wantArgs := []string{root, "build", "--build-arg", "VARIANT=" + variant, "--build-arg", "VERSION=" + version}
			if tc.engine == "podman" {
				wantArgs = append(wantArgs, "--format", "docker")
			}
			wantArgs = append(wantArgs, "-t", tag, ".")
			if args := strings.Split(strings.TrimSpace(string(got)), "\n"); !slices.Equal(args, wantArgs) {
				t.Errorf("the engine ran in/with %q, want %q", args, wantArgs)
			}

			// Every COPY source from the context exists after staging.
			for _, c := range commands[*instructions.CopyCommand](df.chain(t, variant)) {
				if c.From != "" {
					continue
				}
				for _, src := range c.SourcePaths {
					p := filepath.Join(root, expand(t, src, map[string]string{"VARIANT": variant}))
					if _, err := os.Stat(p); err != nil {
						t.Errorf("COPY %s: not staged: %v", src, err)
					}
				}
			}
			stage := filepath.Join(root, "build/docker", variant)
			// The staged Triton repository is the variant's: configs from model_repository/<variant>,
			// each model.onnx the staged model itself (a hard link).
			recModel := map[string]string{"cpu": "ch_PP-OCRv4_rec_infer.int8.onnx", "gpu": "ch_PP-OCRv4_rec_infer.prepared.onnx"}[variant]
			for m, file := range map[string]string{"ppocr_det": "ch_PP-OCRv4_det_infer.prepared.onnx", "ppocr_rec": recModel, "ppocr_cls": "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx"} {
				staged := filepath.Join(stage, "model_repository", m)
				want, err := os.ReadFile(filepath.Join(repoRoot, "model_repository", variant, m, "config.pbtxt"))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(filepath.Join(staged, "config.pbtxt")); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: staged config differs from model_repository/%s (err %v)", m, variant, err)
				}
				a, errA := os.Stat(filepath.Join(staged, "1", "model.onnx"))
				b, errB := os.Stat(filepath.Join(stage, "models", file))
				if errA != nil || errB != nil || !os.SameFile(a, b) {
					t.Errorf("%s: model.onnx is not a hard link to models/%s (%v, %v)", m, file, errA, errB)
				}
			}
			for _, f := range requiredModels {
				if b, err := os.ReadFile(filepath.Join(stage, f)); err != nil || string(b) != "stand-in for "+f {
					t.Errorf("%s not staged (err %v)", f, err)
				}
			}
			if _, err := os.Stat(filepath.Join(stage, "models", "ch_PP-OCRv4_det_infer.onnx")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("an original model the image never loads was staged (err %v)", err)
			}
		})
	}
}

// TestDockerignore checks that the build context keeps what the build needs and drops the rest.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	for _, p := range []string{".git", "bin", "out", "*.test", "build/*", "!build/docker"} {
		if !slices.Contains(patterns, p) {
			t.Errorf(".dockerignore lacks %q", p)
		}
	}
	// The sources and the staged inputs must stay in the context.
	for _, p := range patterns {
		for _, keep := range []string{"go.mod", "go.sum", "cmd", "internal", "service", "tritonclient", "build/docker", "build"} {
			if strings.TrimPrefix(p, "/") == keep || p == "*" || p == "**" {
				t.Errorf(".dockerignore pattern %q drops %s, which the image build needs", p, keep)
			}
		}
	}
}

// ---- compose --------------------------------------------------------------------------------------

// loadCompose loads compose files as `docker compose -f ... config` would, validating them against
// the Compose specification, with only env as the environment.
func loadCompose(t *testing.T, env []string, files ...string) *types.Project {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(repoRoot, f))
	}
	opts, err := cli.NewProjectOptions(paths,
		cli.WithWorkingDirectory(repoRoot),
		cli.WithEnv(env),
		cli.WithName("ocrgate"),
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("load %v: %v", files, err)
	}
	return p
}

func composeService(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	return s
}

func TestCompose(t *testing.T) {
	p := loadCompose(t, nil, "compose.yaml")
	img := "ocrgate:cpu-" + version

	repo := composeService(t, p, "model-repository")
	if repo.Image != img {
		t.Errorf("model-repository image %q, want %q (the version in service/server/version.go)", repo.Image, img)
	}
	if !slices.Equal([]string(repo.Entrypoint), []string{"cp", "-R", "/opt/ocrgate/model_repository/.", "/models/"}) {
		t.Errorf("model-repository entrypoint %q", repo.Entrypoint)
	}

	triton := composeService(t, p, "triton")
	if !strings.HasPrefix(triton.Image, "nvcr.io/nvidia/tritonserver:") {
		t.Errorf("triton image %q", triton.Image)
	}
	for _, flag := range []string{"tritonserver", "--model-repository=/models", "--allow-client-shm=true"} {
		if !slices.Contains([]string(triton.Command), flag) {
			t.Errorf("triton command %q lacks %s", triton.Command, flag)
		}
	}
	if d, ok := triton.DependsOn["model-repository"]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
		t.Errorf("triton should wait for the model repository copy, depends_on %+v", triton.DependsOn)
	}
	if triton.Deploy != nil && triton.Deploy.Resources.Reservations != nil {
		t.Errorf("compose.yaml alone reserves devices for triton")
	}

	// The model repository goes from the ocrgate image through one named volume to Triton.
	mounts := func(s types.ServiceConfig) map[string]types.ServiceVolumeConfig {
		out := map[string]types.ServiceVolumeConfig{}
		for _, v := range s.Volumes {
			out[v.Source] = v
		}
		return out
	}
	if _, ok := p.Volumes["model-repository"]; !ok {
		t.Errorf("no model-repository volume")
	}
	if v, ok := mounts(repo)["model-repository"]; !ok || v.Type != types.VolumeTypeVolume || v.Target != "/models" || v.ReadOnly {
		t.Errorf("model-repository service mounts %+v, want the volume at /models, writable", v)
	}
	if v, ok := mounts(triton)["model-repository"]; !ok || v.Target != "/models" || !v.ReadOnly {
		t.Errorf("triton mounts %+v, want the volume at /models, read-only", v)
	}

	oc := composeService(t, p, "ocrgate")
	if oc.Image != img {
		t.Errorf("ocrgate image %q, want %q", oc.Image, img)
	}
	if len(oc.Ports) != 1 || oc.Ports[0].Target != 8000 || oc.Ports[0].Published != "8000" {
		t.Errorf("ocrgate ports %+v, want 8000:8000", oc.Ports)
	}
	for k, v := range map[string]string{"OCRGATE_RUNTIME": "triton", "OCRGATE_TRITON_ADDR": "triton:8001", "OCRGATE_TRITON_SHM": "auto"} {
		if got := oc.Environment[k]; got == nil || *got != v {
			t.Errorf("ocrgate %s=%v, want %q", k, got, v)
		}
	}
	checkSharedMemory(t, p)
	if p := loadCompose(t, []string{"OCRGATE_PORT=18080"}, "compose.yaml"); composeService(t, p, "ocrgate").Ports[0].Published != "18080" {
		t.Errorf("OCRGATE_PORT does not pick the host port")
	}
	if !oc.ReadOnly || !slices.Contains(oc.CapDrop, "ALL") {
		t.Errorf("ocrgate should run read-only with all capabilities dropped")
	}

	// CHAT_BOT_* come from the caller's environment.
	p = loadCompose(t, []string{"CHAT_BOT_MODEL=gpt-4o-mini", "CHAT_BOT_BASEURL=https://llm.example/v1", "CHAT_BOT_APIKEY=sk-1"}, "compose.yaml")
	oc = composeService(t, p, "ocrgate")
	for k, v := range map[string]string{"CHAT_BOT_MODEL": "gpt-4o-mini", "CHAT_BOT_BASEURL": "https://llm.example/v1", "CHAT_BOT_APIKEY": "sk-1"} {
		if got := oc.Environment[k]; got == nil || *got != v {
			t.Errorf("ocrgate %s=%v, want %q from the environment", k, got, v)
		}
	}
}

// checkSharedMemory checks the /dev/shm that Triton and ocrgate share: one tmpfs volume at
// /dev/shm in both, which survives either one's restart (a joined IPC namespace does not survive
// Triton's), with its owner and mode set in the file and nothing taken from an image.
func checkSharedMemory(t *testing.T, p *types.Project) {
	t.Helper()
	dshm, ok := p.Volumes["dshm"]
	if !ok || dshm.DriverOpts["type"] != "tmpfs" || dshm.DriverOpts["device"] != "tmpfs" {
		t.Fatalf("volume dshm %+v, want a tmpfs", dshm)
	}
	// mode: any user creates its regions there (ocrgate runs as 65532); uid and gid: podman leaves
	// a volume with an owner set as it is, where it would otherwise give it the owner and mode of
	// the first container's directory at /dev/shm.
	opts := strings.Split(dshm.DriverOpts["o"], ",")
	for _, want := range []string{"mode=1777", "uid=0", "gid=0"} {
		if !slices.Contains(opts, want) {
			t.Errorf("volume dshm o=%q lacks %s", dshm.DriverOpts["o"], want)
		}
	}
	for _, name := range []string{"triton", "ocrgate"} {
		s := composeService(t, p, name)
		i := slices.IndexFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool { return v.Source == "dshm" })
		if i < 0 {
			t.Errorf("%s does not mount dshm", name)
			continue
		}
		// nocopy: Docker would give the empty volume the owner and mode of the image's /dev/shm.
		if v := s.Volumes[i]; v.Type != types.VolumeTypeVolume || v.Target != "/dev/shm" || v.ReadOnly || v.Volume == nil || !v.Volume.NoCopy {
			t.Errorf("%s mounts dshm as %+v, want it writable at /dev/shm, nocopy", name, v)
		}
		if s.Ipc != "" {
			t.Errorf("%s ipc %q: /dev/shm is shared through the dshm volume", name, s.Ipc)
		}
	}
}

func TestComposeGPU(t *testing.T) {
	p := loadCompose(t, nil, "compose.yaml", "compose.gpu.yaml")
	checkSharedMemory(t, p)
	img := "ocrgate:gpu-" + version
	for _, name := range []string{"model-repository", "ocrgate"} {
		if s := composeService(t, p, name); s.Image != img {
			t.Errorf("%s image %q, want %q (the image with the GPU model configs)", name, s.Image, img)
		}
	}
	triton := composeService(t, p, "triton")
	if triton.Deploy == nil || triton.Deploy.Resources.Reservations == nil || len(triton.Deploy.Resources.Reservations.Devices) != 1 {
		t.Fatalf("triton has no device reservation: %+v", triton.Deploy)
	}
	d := triton.Deploy.Resources.Reservations.Devices[0]
	if d.Driver != "nvidia" || d.Count != -1 || !slices.Equal(d.Capabilities, []string{"gpu"}) {
		t.Errorf("triton devices %+v, want nvidia, all, [gpu]", d)
	}
	if oc := composeService(t, p, "ocrgate"); oc.Deploy != nil && oc.Deploy.Resources.Reservations != nil {
		t.Errorf("ocrgate reserves devices; only Triton uses the GPU")
	}

	// OCRGATE_IMAGE (e.g. the tag the build script printed) picks the image in both files.
	p = loadCompose(t, []string{"OCRGATE_IMAGE=registry.example/ocrgate:gpu-1.2.3"}, "compose.yaml", "compose.gpu.yaml")
	if s := composeService(t, p, "ocrgate"); s.Image != "registry.example/ocrgate:gpu-1.2.3" {
		t.Errorf("OCRGATE_IMAGE ignored: %q", s.Image)
	}
}
