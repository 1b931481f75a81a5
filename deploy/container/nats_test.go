package container

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

// natsVersion is the nats-server version the service's go.mod pins, without its v.
func natsVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/nats-io/nats-server/v2 v([0-9][^\s]*)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod does not require github.com/nats-io/nats-server/v2")
	}
	return string(m[1])
}

// TestNATSDockerfile checks the NATS image's Dockerfile: BuildKit's parser and linter, the same
// base image as the ocrgate image (so scripts/offline_base_images.sh makes it), the server built
// from the module go.mod pins with nothing of the build context but go.mod and go.sum, and a
// non-root image of the one binary.
func TestNATSDockerfile(t *testing.T) {
	df := parseDockerfileAt(t, "deploy/nats/Dockerfile")
	main := parseDockerfile(t)
	if !slices.Equal(df.order, []string{"build", "nats"}) {
		t.Fatalf("stages %v, want [build nats]", df.order)
	}
	if got, want := expand(t, df.stages["build"].BaseName, df.metaArgs), expand(t, main.stages["build"].BaseName, main.metaArgs); got != want {
		t.Errorf("build stage FROM %s, the ocrgate image's FROM %s: one set of base images", got, want)
	}
	if got := df.stages["nats"].BaseName; got != "scratch" {
		t.Errorf("final stage FROM %s, want scratch (a static binary)", got)
	}
	var fromContext []string
	for _, c := range commands[*instructions.CopyCommand]([]instructions.Stage{df.stages["build"]}) {
		if c.From == "" {
			fromContext = append(fromContext, c.SourcePaths...)
		}
	}
	if !slices.Equal(fromContext, []string{"go.mod", "go.sum"}) {
		t.Errorf("the build stage copies %v from the context, want only go.mod and go.sum", fromContext)
	}
	var built bool
	for _, r := range commands[*instructions.RunCommand]([]instructions.Stage{df.stages["build"]}) {
		line := strings.Join(r.CmdLine, " ")
		built = built || (strings.Contains(line, "go build") && strings.Contains(line, "github.com/nats-io/nats-server/v2 ") &&
			strings.Contains(line, "NATS_VERSION"))
	}
	if !built {
		t.Errorf("the build stage does not build github.com/nats-io/nats-server/v2 and check it against NATS_VERSION")
	}
	final := []instructions.Stage{df.stages["nats"]}
	var user string
	for _, u := range commands[*instructions.UserCommand](final) {
		user = u.User
	}
	if user != "65532:65532" {
		t.Errorf("USER %q, want 65532:65532 (the chart's pod user)", user)
	}
	var entry []string
	for _, e := range commands[*instructions.EntrypointCommand](final) {
		entry = e.CmdLine
	}
	if !slices.Equal(entry, []string{"/usr/local/bin/nats-server"}) {
		t.Errorf("ENTRYPOINT %q, want nats-server (the chart passes --config)", entry)
	}
}

func TestBuildScriptNATSDryRun(t *testing.T) {
	root := fakeRepo(t)
	copyFile(t, filepath.Join(repoRoot, "go.mod"), filepath.Join(root, "go.mod"))
	// No models or ONNX Runtime: the NATS image needs none.
	r := runScript(t, root, []string{"OCRGATE_HOME=" + t.TempDir(), "DOCKER=docker", "GOPROXY=https://proxy.example/go"}, "--dry-run", "nats")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	v := natsVersion(t)
	tag := "ocrgate-nats:" + v
	if got := lastLine(r.stdout); got != tag {
		t.Errorf("last line %q, want %q", got, tag)
	}
	want := "env DOCKER_BUILDKIT=1 docker build -f deploy/nats/Dockerfile --build-arg NATS_VERSION=" + v +
		" --build-arg GOPROXY=https://proxy.example/go -t " + tag + " ."
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if !slices.Contains(lines, want) {
		t.Errorf("dry run does not print %q; it printed:\n%s", want, r.stdout)
	}
	if strings.Contains(r.stdout, "build/docker") {
		t.Errorf("the NATS image stages models:\n%s", r.stdout)
	}

	// A go.mod without the server: a clear error, no build.
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runScript(t, root, []string{"OCRGATE_HOME=" + t.TempDir(), "DOCKER=false"}, "nats")
	if r.code != 1 || !strings.Contains(r.stderr, "nats-server version from go.mod") || r.stdout != "" {
		t.Errorf("without nats-server in go.mod: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
