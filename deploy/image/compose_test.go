//go:build image

package image

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// composeProject is the project name the test runs compose.yaml under, so that it never touches a
// user's `ocrgate` project.
const composeProject = "ocrgate-image-test"

// composeUp runs compose.yaml as `docker compose up -d` would, with the engine's CLI: it loads the
// file with the Compose specification's Go library (interpolation, defaults, depends_on), creates
// the default network (service names resolve) and the named volumes, and starts the services in
// dependency order, waiting for a service_completed_successfully dependency to exit 0. Every
// service key the file uses must be one it translates; anything else fails the test rather than
// being dropped. extra adds run flags per service (test-only, e.g. a published port to read the
// stand-in's counters). It returns the container name of each service.
func composeUp(t *testing.T, env map[string]string, extra map[string][]string) map[string]string {
	t.Helper()
	var envList []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		envList = append(envList, k+"="+env[k])
	}
	opts, err := cli.NewProjectOptions([]string{repoRoot + "/compose.yaml"},
		cli.WithWorkingDirectory(repoRoot), cli.WithEnv(envList), cli.WithName(composeProject))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("load compose.yaml: %v", err)
	}

	network := composeProject + "_default"
	names := map[string]string{}
	var cleanup []string
	for _, s := range p.Services {
		names[s.Name] = composeProject + "-" + s.Name + "-1"
		cleanup = append(cleanup, names[s.Name])
	}
	for name := range p.Volumes {
		cleanup = append(cleanup, "volume:"+composeProject+"_"+name)
	}
	cleanup = append(cleanup, "network:"+network)
	removeStale(cleanup...)
	removeOnCleanup(t, cleanup...)

	eng(t, "network", "create", network)
	for _, name := range slices.Sorted(maps.Keys(p.Volumes)) {
		v := p.Volumes[name]
		if bool(v.External) || v.Name != "" && v.Name != composeProject+"_"+name || len(v.Labels) > 0 {
			t.Fatalf("volume %s: %+v is not translated", name, v)
		}
		args := []string{"volume", "create"}
		for _, k := range slices.Sorted(maps.Keys(v.DriverOpts)) {
			args = append(args, "--opt", k+"="+v.DriverOpts[k])
		}
		if v.Driver != "" && v.Driver != "local" {
			t.Fatalf("volume %s: driver %q is not translated", name, v.Driver)
		}
		eng(t, append(args, composeProject+"_"+name)...)
	}

	started := map[string]bool{}
	var start func(name string)
	start = func(name string) {
		if started[name] {
			return
		}
		s, err := p.GetService(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, dep := range slices.Sorted(maps.Keys(s.DependsOn)) {
			start(dep)
			switch cond := s.DependsOn[dep].Condition; cond {
			case types.ServiceConditionCompletedSuccessfully:
				code := strings.TrimSpace(eng(t, "wait", names[dep]))
				if code != "0" {
					t.Fatalf("%s depends on %s completing, which exited %s", name, dep, code)
				}
			case types.ServiceConditionStarted, "":
			default:
				t.Fatalf("%s: depends_on condition %q is not translated", name, cond)
			}
		}
		eng(t, append([]string{"run", "-d"}, runFlags(t, s, names[name], network, extra[name])...)...)
		started[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		start(name)
	}
	return names
}

// runFlags translates one compose service into run arguments: its flags, then extra, then image
// and command.
func runFlags(t *testing.T, s types.ServiceConfig, container, network string, extra []string) []string {
	t.Helper()
	// The keys the translation knows; compose-go writes the default network itself.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	known := []string{"name", "image", "entrypoint", "command", "volumes", "restart", "depends_on", "ports",
		"environment", "read_only", "tmpfs", "cap_drop", "security_opt", "networks", "ipc", "stop_grace_period"}
	for k := range keys {
		if !slices.Contains(known, k) {
			t.Fatalf("compose.yaml service %s uses %q, which the image test does not translate: add it to runFlags", s.Name, k)
		}
	}
	args := []string{"--name", container, "--network", network, "--network-alias", s.Name}
	if s.Restart != "" {
		args = append(args, "--restart", s.Restart)
	}
	if s.Entrypoint != nil {
		ep, _ := json.Marshal([]string(s.Entrypoint))
		args = append(args, "--entrypoint", string(ep))
	}
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeVolume {
			t.Fatalf("%s: volume type %q is not translated", s.Name, v.Type)
		}
		if v.Bind != nil || v.Tmpfs != nil || v.Image != nil || v.Consistency != "" ||
			(v.Volume != nil && (v.Volume.Subpath != "" || len(v.Volume.Labels) > 0)) {
			t.Fatalf("%s: the options of volume %s are not translated: %+v", s.Name, v.Source, v)
		}
		var opts []string
		if v.ReadOnly {
			opts = append(opts, "ro")
		}
		if v.Volume != nil && v.Volume.NoCopy {
			opts = append(opts, "nocopy")
		}
		m := composeProject + "_" + v.Source + ":" + v.Target
		if len(opts) > 0 {
			m += ":" + strings.Join(opts, ",")
		}
		args = append(args, "-v", m)
	}
	for _, port := range s.Ports {
		spec := fmt.Sprintf("%s:%d", port.Published, port.Target)
		if port.HostIP != "" {
			spec = port.HostIP + ":" + spec
		}
		args = append(args, "-p", spec+"/"+cmpOr(port.Protocol, "tcp"))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Environment)) {
		if v := s.Environment[k]; v != nil { // unset pass-through stays unset
			args = append(args, "-e", k+"="+*v)
		}
	}
	if s.ReadOnly {
		args = append(args, "--read-only")
	}
	if g := s.StopGracePeriod; g != nil {
		args = append(args, "--stop-timeout", strconv.Itoa(int(time.Duration(*g).Seconds())))
	}
	for _, tm := range s.Tmpfs {
		args = append(args, "--tmpfs", tm)
	}
	for _, c := range s.CapDrop {
		args = append(args, "--cap-drop", c)
	}
	for _, o := range s.SecurityOpt {
		args = append(args, "--security-opt", o)
	}
	if s.Ipc != "" {
		t.Fatalf("%s: ipc %q: compose.yaml shares /dev/shm through a volume; translate ipc if it comes back", s.Name, s.Ipc)
	}
	for n := range s.Networks {
		if n != "default" {
			t.Fatalf("%s: network %q is not translated", s.Name, n)
		}
	}
	args = append(append(args, extra...), s.Image)
	return append(args, s.Command...)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// standin reads the stand-in's counters from its metrics URL.
type standin struct {
	t       *testing.T
	metrics string
}

func (s standin) value(name string) float64 { return metric(s.t, s.metrics, name) }

func (s standin) infers() float64 { return s.value(`triton_standin_rpc_total{rpc="ModelInfer"}`) }

// TestComposeSidecar runs compose.yaml with the Triton test stand-in in Triton's place: ocrgate
// reaches it over gRPC and shared memory, is ready only when it is, answers /ocr with the embedded
// runtime's text, and rides out the stand-in's death and restart.
func TestComposeSidecar(t *testing.T) {
	env := map[string]string{
		"OCRGATE_IMAGE": cpuImage,
		"TRITON_IMAGE":  standinImage,
		"OCRGATE_PORT":  fmt.Sprint(portCompose),
	}
	start := time.Now()
	names := composeUp(t, env, map[string][]string{
		"triton": {"-p", fmt.Sprintf("127.0.0.1:%d:8002", portComposeSHM)},
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", portCompose)
	st := standin{t, fmt.Sprintf("http://127.0.0.1:%d/metrics", portComposeSHM)}
	readyIn, err := waitStatus(base+"/readyz", http.StatusOK, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	note(t, "compose: up (model copy, stand-in, ocrgate) to ocrgate /readyz 200 in %.1f s", time.Since(start).Seconds())
	_ = readyIn

	t.Run("model repository copied", func(t *testing.T) {
		if code := inspect(t, names["model-repository"], "{{.State.ExitCode}}"); code != "0" {
			t.Errorf("model-repository exited %s", code)
		}
		ls := eng(t, "exec", names["triton"], "ls", "/models/ppocr_det/1", "/models/ppocr_rec/1", "/models/ppocr_cls/1")
		if strings.Count(ls, "model.onnx") != 3 {
			t.Errorf("the stand-in's /models lacks the models:\n%s", ls)
		}
		if out, err := exec.Command(engine, "exec", names["triton"], "touch", "/models/x").CombinedOutput(); err == nil {
			t.Errorf("/models is writable in the Triton container (%s)", out)
		}
	})

	// compose.yaml sets the shared /dev/shm's owner and mode; the stand-in's image holds a /dev/shm
	// of root 0755 on purpose, and mounts the volume first.
	t.Run("shared /dev/shm as compose.yaml sets it", func(t *testing.T) {
		img := imageDevShm(t, standinImage)
		if img == "" {
			t.Errorf("the stand-in's image has no /dev/shm of its own, so this no longer shows that the volume takes nothing from an image")
		}
		for _, c := range []string{names["triton"], names["ocrgate"]} {
			if got := devShm(t, c); got != "tmpfs 1777 0:0" {
				t.Errorf("%s: /dev/shm is %q, want %q (the dshm volume's options)", c, got, "tmpfs 1777 0:0")
			}
		}
		note(t, "check: compose: /dev/shm in the stand-in and ocrgate is the dshm tmpfs, mode 1777, root, as compose.yaml sets it (the stand-in's image has a /dev/shm of %s)", img)
	})

	t.Run("shared memory and gRPC", func(t *testing.T) {
		want := hostText(t, "receipt.jpg", receipt(t))
		infers, shm := st.infers(), st.value("triton_standin_shm_outputs_total")
		if got := ocr(t, base, receipt(t)); got.Text != want {
			t.Fatalf("/ocr through the stand-in differs from the embedded runtime:\ncompose: %q\nhost:    %q", got.Text, want)
		}
		dInfers, dSHM := st.infers()-infers, st.value("triton_standin_shm_outputs_total")-shm
		if dInfers < 3 || dSHM < dInfers || st.value("triton_standin_shm_regions") < 1 {
			t.Errorf("one /ocr made %v inferences of which %v wrote their output through shared memory; want every one", dInfers, dSHM)
		}
		note(t, "check: compose /ocr = embedded runtime's text; %v inferences over gRPC, %v outputs through the shared /dev/shm", dInfers, dSHM)

		// A second ocrgate on the same network but not sharing /dev/shm: shared memory refused
		// (auto mode), every tensor over gRPC, the same text.
		const rpcOnly = composeProject + "-ocrgate-grpc"
		removeStale(rpcOnly)
		eng(t, "run", "-d", "--name", rpcOnly, "--network", composeProject+"_default", "-p", fmt.Sprintf("127.0.0.1:%d:8000", portComposeRPC),
			"-e", "OCRGATE_RUNTIME=triton", "-e", "OCRGATE_TRITON_ADDR=triton:8001", "-e", "OCRGATE_TRITON_SHM=auto", cpuImage)
		removeOnCleanup(t, rpcOnly)
		rpcBase := fmt.Sprintf("http://127.0.0.1:%d", portComposeRPC)
		if _, err := waitStatus(rpcBase+"/readyz", http.StatusOK, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		infers, shm = st.infers(), st.value("triton_standin_shm_outputs_total")
		if got := ocr(t, rpcBase, receipt(t)); got.Text != want {
			t.Fatalf("/ocr over gRPC only differs:\ngRPC: %q\nhost: %q", got.Text, want)
		}
		if dInfers, dSHM := st.infers()-infers, st.value("triton_standin_shm_outputs_total")-shm; dInfers < 3 || dSHM != 0 {
			t.Errorf("ocrgate without the shared /dev/shm: %v inferences, %v through shared memory; want all over gRPC", dInfers, dSHM)
		}
		note(t, "check: an ocrgate without the shared /dev/shm falls back to gRPC (auto) with the same text")
	})

	t.Run("stand-in killed and restarted", func(t *testing.T) {
		triton := names["triton"]
		// stop -t 0: SIGKILL, and a stopped container is not restarted by unless-stopped.
		eng(t, "stop", "-t", "0", triton)
		took, err := waitStatus(base+"/readyz", http.StatusServiceUnavailable, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r, err := postOCR(base, receipt(t))
		var e struct{ Error, Code string }
		if err != nil || r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || json.Unmarshal(r.body, &e) != nil || e.Code == "" {
			t.Errorf("/ocr with the stand-in dead = %d %s (Retry-After %q, %v), want 503 + Retry-After + JSON error", r.status, r.body, r.header.Get("Retry-After"), err)
		}
		note(t, "check: stand-in killed: /readyz 503 after %.1f s, /ocr 503 (%s) with Retry-After %s", took.Seconds(), e.Code, r.header.Get("Retry-After"))

		eng(t, "start", triton)
		// ocrgate must not say ready before the stand-in is.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r, err := (&http.Client{Timeout: 2 * time.Second}).Get(base + "/readyz")
			if err == nil {
				r.Body.Close()
				if r.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz not 200 within 2 min of the stand-in's restart")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if v := st.value("triton_standin_ready"); v != 1 {
			t.Errorf("ocrgate said ready while the stand-in says ready=%v", v)
		}
		if got := devShm(t, triton); got != "tmpfs 1777 0:0" {
			t.Errorf("after its restart the stand-in's /dev/shm is %q, want %q", got, "tmpfs 1777 0:0")
		}
		want := hostText(t, "receipt.jpg", receipt(t))
		shm := st.value("triton_standin_shm_outputs_total")
		if got := ocr(t, base, receipt(t)); got.Text != want {
			t.Errorf("/ocr after the restart differs: %q", got.Text)
		}
		if d := st.value("triton_standin_shm_outputs_total") - shm; d < 3 {
			t.Errorf("after the stand-in's restart only %v outputs went through shared memory: the shared /dev/shm was lost", d)
		}
		note(t, "check: stand-in restarted: /readyz 200 only once it was ready, /ocr 200 again, still through shared memory")
	})
}
