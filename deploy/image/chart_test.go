//go:build image

package image

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// renderPod renders helm/ocrgate as `helm template` would (the Helm library the chart tests use),
// with values, and returns its Deployment and ConfigMap.
func renderPod(t *testing.T, values string) (*appsv1.Deployment, *corev1.ConfigMap) {
	t.Helper()
	ch, err := loader.Load(filepath.Join(repoRoot, "helm", "ocrgate"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "ocr", Namespace: "default", Revision: 1, IsInstall: true},
		chartutil.DefaultCapabilities.Copy())
	if err != nil {
		t.Fatal(err)
	}
	files, err := helmengine.Engine{Strict: true}.Render(ch, top)
	if err != nil {
		t.Fatalf("render the chart: %v", err)
	}
	var dep *appsv1.Deployment
	var cm *corev1.ConfigMap
	for name, content := range files {
		for _, doc := range releaseutil.SplitManifests(content) {
			switch {
			case strings.HasSuffix(name, "deployment.yaml"):
				dep = new(appsv1.Deployment)
				if err := yaml.UnmarshalStrict([]byte(doc), dep); err != nil {
					t.Fatal(err)
				}
			case strings.HasSuffix(name, "configmap.yaml"):
				cm = new(corev1.ConfigMap)
				if err := yaml.UnmarshalStrict([]byte(doc), cm); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if dep == nil || cm == nil {
		t.Fatalf("the chart rendered no Deployment or ConfigMap")
	}
	return dep, cm
}

// containerOf returns the pod spec's container called name, from containers or init containers.
func containerOf(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	t.Fatalf("the pod has no container %s", name)
	return nil
}

// emptyDirsAsVolumes gives kube play the pod's emptyDir volumes as a cluster makes them: each
// becomes a volume of the engine made for this test (prefix + the volume's name), which the pod
// claims (kube play's persistentVolumeClaim is a volume of the engine's). They are removed when the
// test ends. It returns their names for removal and what devShm reads in a container where the
// one of medium Memory is mounted.
//
// podman 4.3's kube play makes an emptyDir a volume on disk named after it (an older volume of that
// name in the engine's storage is used as it is), ignores medium: Memory, sizeLimit and the pod's
// fsGroup, and gives a new volume the owner and mode of the first container that mounts it: its
// user's, or its image's directory at the mount path when the image has one. Which container
// that is and what its image holds would then decide whether the pod's user may write there.
//
// A kubelet makes each emptyDir a new directory (with medium: Memory, a tmpfs mounted there) owned
// by root, mode 0777; with fsGroup, of that group and with the set-group-ID bit (2777). Here:
//   - medium: Memory: a new tmpfs with that owner, group and mode in its options (with uid= and
//     gid= podman never changes them). sizeLimit is left out: podman 4.3 takes size= on a volume
//     for a disk quota and refuses it on a tmpfs;
//   - the others: a new directory on disk, owner and group in its options, its mode set here as a
//     kubelet sets it. (A tmpfs volume lives only while a container mounts it, so the init
//     container's copy would be gone before Triton starts.)
func emptyDirsAsVolumes(t *testing.T, spec *corev1.PodSpec, prefix string) (volumes []string, shm string) {
	t.Helper()
	mode, gid := os.FileMode(0o777), int64(0)
	if sc := spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		mode, gid = 0o777|os.ModeSetgid, *sc.FSGroup
	}
	octal := fmt.Sprintf("%o", mode.Perm()) // as stat's %a writes it
	if mode&os.ModeSetgid != 0 {
		octal = "2" + octal
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.EmptyDir == nil {
			continue
		}
		name := prefix + "-" + v.Name
		removeStale("volume:" + name)
		switch v.EmptyDir.Medium {
		case corev1.StorageMediumMemory:
			eng(t, "volume", "create", "--opt", "type=tmpfs", "--opt", "device=tmpfs",
				"--opt", fmt.Sprintf("o=mode=%s,uid=0,gid=%d", octal, gid), name)
		case corev1.StorageMediumDefault:
			eng(t, "volume", "create", "--opt", fmt.Sprintf("o=uid=0,gid=%d", gid), name)
			dir := strings.TrimSpace(eng(t, "volume", "inspect", "--format", "{{.Mountpoint}}", name))
			if err := os.Chmod(dir, mode); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("volume %s: emptyDir medium %q is not translated", v.Name, v.EmptyDir.Medium)
		}
		volumes = append(volumes, "volume:"+name)
		v.VolumeSource = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
	}
	return volumes, fmt.Sprintf("tmpfs %s 0:%d", octal, gid)
}

// TestChartPod renders helm/ocrgate with the Triton test stand-in in place of tritonserver and runs
// its Deployment with `podman kube play`: the init container's model copy, the shared /dev/shm
// emptyDir, the environment from the ConfigMap, the ports and the probes, as written.
//
// What kube play does not do as a cluster would, and how the test covers it:
//   - native sidecars (an init container with restartPolicy: Always) are not run beside the others:
//     the pod is rendered with triton.nativeSidecar=false; the native form stays under the chart
//     tests (deploy/chart TestSidecar);
//   - it has no --publish: the test adds hostPorts (127.0.0.1) to the rendered ports;
//   - it makes emptyDirs differently (emptyDirsAsVolumes): the test gives it each as a cluster
//     makes it, in a volume of its own;
//   - it does not act on probes (no startup gating, no endpoint removal, no restart on liveness
//     failure): the test sends each probe's request as the kubelet would and checks the answers;
//   - Service, ServiceAccount, PodDisruptionBudget, HPA, ServiceMonitor and preStop hooks have no
//     kube play counterpart: the chart tests check them in the rendered manifests.
func TestChartPod(t *testing.T) {
	if !isPodman {
		t.Skip("kube play is podman's; with docker the chart is checked as rendered manifests only (deploy/chart)")
	}
	repo, tag, _ := strings.Cut(standinImage, ":")
	dep, cm := renderPod(t, fmt.Sprintf(`
image:
  pullPolicy: Never
triton:
  nativeSidecar: "false"
  image:
    repository: %s
    tag: %q
    pullPolicy: Never
`, repo, tag))
	spec := &dep.Spec.Template.Spec
	oc, triton := containerOf(t, spec, "ocrgate"), containerOf(t, spec, "triton")
	if triton.Image != standinImage || oc.Image != cpuImage {
		t.Fatalf("rendered images ocrgate %s, triton %s", oc.Image, triton.Image)
	}
	hostPorts := map[string]int32{"http": portPod, "triton-http": portPodTriton, "triton-metrics": portPodMetrics}
	for _, c := range []*corev1.Container{oc, triton} {
		for i, p := range c.Ports {
			if hp, ok := hostPorts[p.Name]; ok {
				c.Ports[i].HostPort, c.Ports[i].HostIP = hp, "127.0.0.1"
			}
		}
	}
	// kube play removes a run-once init container as soon as it has waited for it, and podman 4.3
	// often tries before the container is marked exited ("cannot remove container ... as it is
	// running"; every try failed on a loaded machine), which fails the whole play. Kept instead
	// (podman's init-container type "always", which Kubernetes ignores) it is not removed, and is
	// there to check; restartPolicy OnFailure, so that a kept init container that exited 0 is not
	// restarted. Nothing in the pod is meant to exit, so the policy changes nothing else here.
	// (kube play reads a Deployment's own annotations for this, not its pod template's.)
	if dep.Annotations == nil {
		dep.Annotations = map[string]string{}
	}
	dep.Annotations["io.podman.annotations.init.container.type"] = "always"
	spec.RestartPolicy = corev1.RestartPolicyOnFailure
	pod := dep.Name + "-pod-0"
	removeStale("pod:" + pod) // before its volumes: a pod left behind holds them
	volumes, shmWant := emptyDirsAsVolumes(t, spec, "ocrgate-image-test-pod")
	removeOnCleanup(t, volumes...) // after kube down, which is registered later
	dir := t.TempDir()
	kube, cmFile := filepath.Join(dir, "deployment.yaml"), filepath.Join(dir, "configmap.yaml")
	for f, obj := range map[string]any{kube: dep, cmFile: cm} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	out, err := exec.Command(engine, "kube", "play", "--configmap", cmFile, kube).CombinedOutput()
	if err != nil {
		t.Fatalf("podman kube play: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command(engine, "pod", "logs", "--tail", "30", pod).CombinedOutput()
			t.Logf("pod logs:\n%s", out)
			if keep() {
				return
			}
		}
		if out, err := exec.Command(engine, "kube", "down", kube).CombinedOutput(); err != nil {
			t.Logf("kube down: %v %s", err, out)
		}
	})
	name := func(c string) string { return pod + "-" + c }
	base := fmt.Sprintf("http://127.0.0.1:%d", portPod)
	if _, err := waitStatus(base+"/readyz", http.StatusOK, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	note(t, "chart pod: kube play to ocrgate /readyz 200 in %.1f s", time.Since(start).Seconds())

	t.Run("init container copied the model repository", func(t *testing.T) {
		if code := inspect(t, name("model-repository"), "{{.State.ExitCode}}"); code != "0" {
			t.Errorf("the init container exited %s", code)
		}
		ls := eng(t, "exec", name("triton"), "sh", "-c", "ls /models/*/1/model.onnx /models/*/config.pbtxt")
		for _, m := range []string{"ppocr_det", "ppocr_rec", "ppocr_cls"} {
			if !strings.Contains(ls, "/models/"+m+"/1/model.onnx") || !strings.Contains(ls, "/models/"+m+"/config.pbtxt") {
				t.Errorf("the stand-in's /models lacks %s:\n%s", m, ls)
			}
		}
		logs, _ := exec.Command(engine, "logs", name("triton")).CombinedOutput()
		if strings.Count(string(logs), "successfully loaded") != 3 {
			t.Errorf("the stand-in did not load the three models from /models:\n%s", logs)
		}
		if out, err := exec.Command(engine, "exec", name("triton"), "touch", "/models/x").CombinedOutput(); err == nil {
			t.Errorf("/models is writable in the Triton container (readOnly: true) (%s)", out)
		}
		note(t, "check: chart pod: the init container exited 0; its copy is the stand-in's /models (read-only), 3 models loaded")
	})

	t.Run("environment", func(t *testing.T) {
		env := eng(t, "exec", name("ocrgate"), "printenv")
		for k, v := range cm.Data {
			if !strings.Contains(env, k+"="+v+"\n") {
				t.Errorf("ocrgate's environment lacks %s=%s from the ConfigMap", k, v)
			}
		}
		for _, kv := range []string{"OCRGATE_RUNTIME=triton", "OCRGATE_TRITON_ADDR=localhost:8001", "OCRGATE_TRITON_SHM=auto"} {
			if !strings.Contains(env, kv+"\n") {
				t.Errorf("ocrgate's environment lacks %s", kv)
			}
		}
		if tenv := eng(t, "exec", name("triton"), "printenv", "HOME"); strings.TrimSpace(tenv) != "/tmp" {
			t.Errorf("triton HOME=%q, want /tmp", tenv)
		}
		note(t, "check: chart pod: environment from the ConfigMap (%d settings) and the chart's Triton settings", len(cm.Data))
	})

	t.Run("security context", func(t *testing.T) {
		for _, c := range []string{"ocrgate", "triton"} {
			status := eng(t, "exec", name(c), "cat", "/proc/1/status")
			if !strings.Contains(status, "Uid:\t65532\t65532\t65532\t65532") || !strings.Contains(status, "CapEff:\t0000000000000000") {
				t.Errorf("%s: pid 1 is not uid 65532 without capabilities:\n%s", c, status)
			}
			if out, err := exec.Command(engine, "exec", name(c), "touch", "/probe").CombinedOutput(); err == nil {
				t.Errorf("%s: the root filesystem is writable (%s)", c, out)
			}
		}
		note(t, "check: chart pod: both containers uid 65532, no capabilities, read-only root")
	})

	t.Run("shared /dev/shm", func(t *testing.T) {
		for _, c := range []string{"ocrgate", "triton"} {
			if got := devShm(t, name(c)); got != shmWant {
				t.Errorf("%s: /dev/shm is %q, want %q (the dshm emptyDir as a cluster makes it)", c, got, shmWant)
			}
		}
		eng(t, "exec", name("ocrgate"), "sh", "-c", "echo from-ocrgate > /dev/shm/image-test")
		if got := strings.TrimSpace(eng(t, "exec", name("triton"), "cat", "/dev/shm/image-test")); got != "from-ocrgate" {
			t.Errorf("triton reads %q from the shared /dev/shm", got)
		}
		eng(t, "exec", name("ocrgate"), "rm", "/dev/shm/image-test")
		st := standin{t, fmt.Sprintf("http://127.0.0.1:%d/metrics", portPodMetrics)}
		want := hostText(t, "receipt.jpg", receipt(t))
		infers, shm := st.infers(), st.value("triton_standin_shm_outputs_total")
		if got := ocr(t, base, receipt(t)); got.Text != want {
			t.Fatalf("/ocr in the pod differs from the embedded runtime:\npod:  %q\nhost: %q", got.Text, want)
		}
		dInfers, dSHM := st.infers()-infers, st.value("triton_standin_shm_outputs_total")-shm
		if dInfers < 3 || dSHM < dInfers {
			t.Errorf("%v inferences, %v outputs through shared memory; want all", dInfers, dSHM)
		}
		note(t, "check: chart pod: /dev/shm in both containers is %q (the dshm emptyDir as a cluster makes it); /ocr = embedded runtime's text over gRPC on localhost:8001, %v of %v outputs through it", shmWant, dSHM, dInfers)
	})

	t.Run("ports and probes as written", func(t *testing.T) {
		for _, c := range []*corev1.Container{oc, triton} {
			for kind, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				if p == nil || p.HTTPGet == nil {
					t.Errorf("%s has no %s httpGet probe", c.Name, kind)
					continue
				}
				var hostPort int32
				for _, port := range c.Ports {
					if port.Name == p.HTTPGet.Port.String() || port.ContainerPort == p.HTTPGet.Port.IntVal {
						hostPort = port.HostPort
					}
				}
				if hostPort == 0 {
					t.Errorf("%s %s probe: port %s is none of the container's ports", c.Name, kind, p.HTTPGet.Port.String())
					continue
				}
				client := &http.Client{Timeout: time.Duration(p.TimeoutSeconds) * time.Second}
				url := fmt.Sprintf("http://127.0.0.1:%d%s", hostPort, p.HTTPGet.Path)
				r, err := client.Get(url)
				if err != nil {
					t.Errorf("%s %s probe GET %s: %v", c.Name, kind, p.HTTPGet.Path, err)
					continue
				}
				r.Body.Close()
				if r.StatusCode < 200 || r.StatusCode >= 400 {
					t.Errorf("%s %s probe GET %s = %d", c.Name, kind, p.HTTPGet.Path, r.StatusCode)
				}
			}
		}
		hc, _ := engOut("inspect", "--format", "{{json .Config.Healthcheck}}", name("ocrgate"))
		note(t, "check: chart pod: ports 8000 (ocrgate), 8010/8002 (Triton http/metrics) answer; all 6 httpGet probes pass within their timeouts; kube play's own healthcheck for ocrgate: %s", strings.TrimSpace(hc))
	})
}
