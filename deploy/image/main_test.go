//go:build image

// Package image tests the container images themselves, not a description of them: it builds the
// cpu and gpu images with scripts/build_docker_image.sh and the Triton test stand-in
// (cmd/triton-standin) through whichever engine is there (docker, or podman with runc), then runs
// them — the cpu image alone under a memory limit, compose.yaml's topology with the stand-in in
// Triton's place, and the Helm chart's Deployment as a pod with `podman kube play` — and checks what
// a user would. `make image-test` runs it (build tag image; it needs root and an engine, which
// scripts/container_engine.sh installs).
//
// Environment: DOCKER names the engine CLI (scripts/container_engine.sh prints it); the base images
// are used when present, pulled when a registry serves them, and made with
// scripts/offline_base_images.sh otherwise. IMAGE_TEST_KEEP=1 leaves containers behind after a
// failure, for a look; IMAGE_TEST_REUSE=1 uses the images already built, as they are.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/deploy"
)

// repoRoot is the repository root, seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

var (
	engine   string // the engine's CLI: docker, podman or a wrapper
	isPodman bool
	version  string // service.Version
	// The images under test, set by TestMain.
	cpuImage, gpuImage, standinImage string
	// hostOCRGATE is the service binary built on this machine, the reference for the images' answers.
	hostOCRGATE string
)

// Host ports of this test (the project's range for it): published container ports bind here.
const (
	portCPU        = 5501 // the cpu image alone
	portDrain      = 5502 // the cpu image, stopped while it answers
	portGPU        = 5503 // the gpu image alone
	portCompose    = 5510 // compose.yaml's ocrgate
	portComposeSHM = 5511 // the stand-in's metrics in the compose topology (published by the test)
	portComposeRPC = 5512 // a second ocrgate outside the stand-in's IPC namespace (gRPC only)
	portPod        = 5520 // the chart pod's ocrgate http port
	portPodTriton  = 5521 // the chart pod's Triton HTTP port (probes)
	portPodMetrics = 5522 // the chart pod's Triton metrics port
)

// summary collects the figures and checks the run prints at its end.
var summary struct {
	sync.Mutex
	lines []string
}

// note adds a line to the summary and logs it.
func note(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	summary.Lock()
	summary.lines = append(summary.lines, line)
	summary.Unlock()
}

func TestMain(m *testing.M) {
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image test setup:", err)
		os.Exit(1)
	}
	if code == 0 {
		code = m.Run()
	}
	fmt.Println("\n==== image test summary ====")
	for _, l := range summary.lines {
		fmt.Println(l)
	}
	os.Exit(code)
}

// setup finds the engine, makes the base images when needed, builds the images and the reference
// binary, and notes build times and sizes.
func setup() (int, error) {
	v, err := deploy.ServiceVersion(repoRoot)
	if err != nil {
		return 1, err
	}
	version = v
	// Absolute, so that commands run from the repository root find what the test names.
	if repoRoot, err = filepath.Abs(repoRoot); err != nil {
		return 1, err
	}
	cpuImage, gpuImage = "ocrgate:cpu-"+version, "ocrgate:gpu-"+version
	standinImage = "ocrgate-test/triton-standin:" + version
	engine = os.Getenv("DOCKER")
	if engine == "" {
		out, err := exec.Command(filepath.Join(repoRoot, "scripts", "container_engine.sh")).Output()
		if err != nil {
			return 1, fmt.Errorf("scripts/container_engine.sh: %w", err)
		}
		engine = strings.TrimSpace(string(out))
	}
	ver, err := exec.Command(engine, "--version").CombinedOutput()
	if err != nil {
		return 1, fmt.Errorf("%s --version: %w\n%s", engine, err, ver)
	}
	isPodman = strings.Contains(strings.ToLower(string(ver)), "podman")
	fmt.Printf("engine: %s (%s)\n", engine, strings.TrimSpace(string(ver)))
	logs := filepath.Join(repoRoot, "out", "image-test")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return 1, err
	}

	if err := baseImages(logs); err != nil {
		return 1, err
	}
	for _, variant := range []string{"cpu", "gpu"} {
		if reuseImages() && imageExists("ocrgate:"+variant+"-"+version) {
			summary.lines = append(summary.lines, "IMAGE_TEST_REUSE=1: ocrgate:"+variant+"-"+version+" used as it is")
			continue
		}
		start := time.Now()
		log := filepath.Join(logs, "build-"+variant+".log")
		out, err := runLogged(log, 40*time.Minute, "bash", filepath.Join(repoRoot, "scripts", "build_docker_image.sh"), variant)
		if err != nil {
			return 1, fmt.Errorf("scripts/build_docker_image.sh %s: %w (log: %s)\n%s", variant, err, log, tail(log, 40))
		}
		tag := lastLine(out)
		if want := "ocrgate:" + variant + "-" + version; tag != want {
			return 1, fmt.Errorf("build script printed tag %q, want %q", tag, want)
		}
		summary.lines = append(summary.lines, fmt.Sprintf("build %s: %.0f s wall; image %s", tag, time.Since(start).Seconds(), imageSize(tag)))
	}
	if reuseImages() && imageExists(standinImage) {
		summary.lines = append(summary.lines, "IMAGE_TEST_REUSE=1: "+standinImage+" used as it is")
		return hostBinary()
	}
	start := time.Now()
	log := filepath.Join(logs, "build-standin.log")
	args := []string{"build", "-f", "cmd/triton-standin/Dockerfile", "--build-arg", "OCRGATE_IMAGE=" + cpuImage}
	if isPodman {
		args = append(args, "--format", "docker")
	}
	args = append(args, "-t", standinImage, ".")
	cmd := exec.Command(engine, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=1")
	if err := runCmdLogged(cmd, log, 30*time.Minute); err != nil {
		return 1, fmt.Errorf("build the Triton test stand-in: %w (log: %s)\n%s", err, log, tail(log, 40))
	}
	summary.lines = append(summary.lines, fmt.Sprintf("build %s (test stand-in): %.0f s wall; image %s", standinImage, time.Since(start).Seconds(), imageSize(standinImage)))
	return hostBinary()
}

// hostBinary builds the reference: the service on this machine.
func hostBinary() (int, error) {
	logs := filepath.Join(repoRoot, "out", "image-test")
	// The reference: the service built on this machine, answering the same files in-process.
	hostOCRGATE = filepath.Join(logs, "ocrgate-host")
	build := exec.Command("go", "build", "-trimpath", "-o", hostOCRGATE, "./cmd/ocrgate")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("build ocrgate on this machine: %w\n%s", err, out)
	}
	hostOCRGATE, _ = filepath.Abs(hostOCRGATE)
	return 0, nil
}

// baseImages makes sure the engine has the Dockerfile's base images: present, pulled from a
// registry, or made on this machine by scripts/offline_base_images.sh.
func baseImages(logs string) error {
	bases := []string{"debian:bookworm-slim", "golang:1.26-bookworm"}
	var missing []string
	for _, b := range bases {
		if !imageExists(b) {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		fmt.Println("base images: present")
		return nil
	}
	pulled := true
	for _, b := range missing {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		out, err := exec.CommandContext(ctx, engine, "pull", b).CombinedOutput()
		cancel()
		if err != nil {
			fmt.Printf("base image %s: no registry serves it (%s)\n", b, lastLine(string(out)))
			pulled = false
			break
		}
	}
	if pulled {
		summary.lines = append(summary.lines, "base images: pulled from a registry")
		return nil
	}
	start := time.Now()
	log := filepath.Join(logs, "offline-base-images.log")
	if _, err := runLogged(log, 30*time.Minute, "bash", filepath.Join(repoRoot, "scripts", "offline_base_images.sh")); err != nil {
		return fmt.Errorf("scripts/offline_base_images.sh: %w (log: %s)\n%s", err, log, tail(log, 40))
	}
	summary.lines = append(summary.lines, fmt.Sprintf("base images made offline (debootstrap + this machine's Go): %.0f s wall; debian:bookworm-slim %s, golang:1.26-bookworm %s",
		time.Since(start).Seconds(), imageSize("debian:bookworm-slim"), imageSize("golang:1.26-bookworm")))
	return nil
}

// runLogged runs a command with the engine in the environment, stdout and stderr to log, and
// returns stdout.
func runLogged(log string, timeout time.Duration, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "DOCKER="+engine)
	var stdout bytes.Buffer
	f, err := os.Create(log)
	if err != nil {
		return "", err
	}
	defer f.Close()
	cmd.Stdout = io.MultiWriter(&stdout, f)
	cmd.Stderr = f
	err = runWithTimeout(cmd, timeout)
	return stdout.String(), err
}

func runCmdLogged(cmd *exec.Cmd, log string, timeout time.Duration) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	return runWithTimeout(cmd, timeout)
}

func runWithTimeout(cmd *exec.Cmd, timeout time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("timed out after %s", timeout)
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// ---- the engine ------------------------------------------------------------------------------------

// eng runs the engine with args and returns its stdout; it fails the test with stderr on error.
func eng(t testing.TB, args ...string) string {
	t.Helper()
	out, err := engOut(args...)
	if err != nil {
		t.Fatalf("%s %s: %v", engine, strings.Join(args, " "), err)
	}
	return out
}

// engOut runs the engine with args (two minutes at most) and returns stdout, or an error with
// stderr.
func engOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, engine, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func imageExists(ref string) bool {
	_, err := engOut("image", "inspect", ref)
	return err == nil
}

// imageSize is an image's size as the engine reports it, in MB (10^6 bytes, as docker images
// prints).
func imageSize(ref string) string {
	out, err := engOut("image", "inspect", "--format", "{{.Size}}", ref)
	if err != nil {
		return "size unknown: " + err.Error()
	}
	var n int64
	if _, err := fmt.Sscan(strings.TrimSpace(out), &n); err != nil {
		return "size unknown: " + out
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}

// reuseImages reports whether images already in the engine are used as they are (IMAGE_TEST_REUSE=1),
// for a quicker run while working on a test; they may be older than the tree.
func reuseImages() bool { return os.Getenv("IMAGE_TEST_REUSE") == "1" }

// keep reports whether containers stay after a failure (IMAGE_TEST_KEEP=1).
func keep() bool { return os.Getenv("IMAGE_TEST_KEEP") == "1" }

// removeOnCleanup removes containers (and then pods, volumes, networks given as "pod:NAME",
// "volume:NAME", "network:NAME") when the test ends; on failure it first logs each container's
// last log lines.
func removeOnCleanup(t *testing.T, things ...string) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range things {
				if strings.Contains(c, ":") {
					continue
				}
				out, _ := exec.Command(engine, "logs", "--tail", "40", c).CombinedOutput()
				t.Logf("last logs of %s:\n%s", c, out)
			}
			if keep() {
				t.Logf("IMAGE_TEST_KEEP=1: leaving %v", things)
				return
			}
		}
		for _, c := range things {
			if err := remove(c); err != nil && !strings.Contains(err.Error(), "no such") && !strings.Contains(err.Error(), "no container") {
				t.Logf("clean up %s: %v", c, err)
			}
		}
	})
}

// remove removes a container, or a "pod:NAME", "volume:NAME" or "network:NAME".
func remove(thing string) error {
	kind, name, found := strings.Cut(thing, ":")
	var err error
	switch {
	case !found:
		_, err = engOut("rm", "-f", "-t", "0", thing)
	case kind == "pod":
		_, err = engOut("pod", "rm", "-f", "-t", "0", name)
	default:
		_, err = engOut(kind, "rm", "-f", name)
	}
	return err
}

// removeStale removes what an earlier, interrupted run may have left under these names.
func removeStale(things ...string) {
	for _, c := range things {
		_ = remove(c)
	}
}

// inspect returns one field of a container or image (a Go template).
func inspect(t testing.TB, what, format string) string {
	t.Helper()
	return strings.TrimSpace(eng(t, "inspect", "--format", format, what))
}

// ---- /dev/shm --------------------------------------------------------------------------------------

// devShm describes the /dev/shm that a running container sees: the type of the file system mounted
// there, its mode in octal and its owner, e.g. "tmpfs 1777 0:0".
func devShm(t testing.TB, container string) string {
	t.Helper()
	return strings.Join(strings.Fields(eng(t, "exec", container, "sh", "-c",
		`grep ' /dev/shm ' /proc/mounts | tail -n 1 | cut -d ' ' -f 3; stat -c '%a %u:%g' /dev/shm`)), " ")
}

// imageDevShm describes the /dev/shm directory that an image itself holds, under what the engine
// mounts there at run time, e.g. "755 0:0", or "" when the image has none. It is read from the
// export of a container that is created, never started.
func imageDevShm(t testing.TB, image string) string {
	t.Helper()
	name := fmt.Sprintf("ocrgate-image-test-devshm-%d", time.Now().UnixNano())
	eng(t, "create", "--name", name, image)
	defer func() { _ = remove(name) }()
	cmd := exec.Command(engine, "export", name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := tar.NewReader(out)
	for {
		h, err := r.Next()
		if err == io.EOF {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s export %s: %v: %s", engine, image, err, strings.TrimSpace(stderr.String()))
			}
			return ""
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("%s export %s: %v: %s", engine, image, err, strings.TrimSpace(stderr.String()))
		}
		if strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/") == "dev/shm" {
			_ = cmd.Process.Kill() // the rest of the file system is not needed
			_ = cmd.Wait()
			return fmt.Sprintf("%o %d:%d", h.Mode&0o7777, h.Uid, h.Gid) // permission, set-ID and sticky bits
		}
	}
}
