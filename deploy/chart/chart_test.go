// Package chart tests the Helm chart in helm/ocrgate without a cluster or a helm binary: it renders
// the chart with the Helm library for the main value combinations, decodes every rendered object
// strictly into the Kubernetes API types, checks what the deployment depends on (containers, ports,
// probes, shared volumes, GPU limits, the API key Secret, security contexts) and lints the chart.
package chart

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ocrgate/ocrgate/deploy"
)

// repoRoot is the repository root, seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// chartDir is the chart under test.
var chartDir = filepath.Join(repoRoot, "helm", "ocrgate")

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

const (
	releaseName = "ocr"
	namespace   = "vision"
	fullname    = "ocr-ocrgate"
	gpuResource = corev1.ResourceName("nvidia.com/gpu")
)

// Kubernetes versions on either side of native sidecars (on by default from 1.29).
const (
	kubeWithoutNativeSidecars = "v1.28.9"
	kubeWithNativeSidecars    = "v1.30.2"
)

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor the chart writes; decoding
// into it is strict, so a field the chart adds must be added here too.
type serviceMonitor struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// release is one rendering of the chart, decoded. Pointers are nil for objects not rendered.
type release struct {
	deployment     *appsv1.Deployment
	service        *corev1.Service
	configMap      *corev1.ConfigMap
	secret         *corev1.Secret
	serviceAccount *corev1.ServiceAccount
	hpa            *autoscalingv2.HorizontalPodAutoscaler
	pdb            *policyv1.PodDisruptionBudget
	serviceMonitor *serviceMonitor
	nats           natsObjects // the chart-run NATS (nats.enabled), decoded apart from ocrgate's
	notes          string
	kinds          map[string]bool // kinds decoded so far
}

// natsObjects are the objects of the chart-run NATS JetStream (label component=jobs-store).
type natsObjects struct {
	config      *corev1.ConfigMap
	headless    *corev1.Service
	client      *corev1.Service
	statefulSet *appsv1.StatefulSet
	pdb         *policyv1.PodDisruptionBudget
}

// natsComponent is the component label of the NATS objects.
const natsComponent = "jobs-store"

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// renderChart renders the chart as `helm install ocr helm/ocrgate -n vision -f <values>` would against
// a cluster of kubeVersion, in strict mode (a template reading a value that does not exist fails).
func renderChart(t *testing.T, values, kubeVersion string) (map[string]string, error) {
	t.Helper()
	ch := loadChart(t)
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatalf("kube version: %v", err)
	}
	if !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, kv.Version) {
		t.Fatalf("chart kubeVersion %q excludes %s", ch.Metadata.KubeVersion, kv.Version)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{
		Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(ch, top)
}

// render renders and decodes the chart; the test fails on any error, unknown kind or unknown field.
func render(t *testing.T, values, kubeVersion string) release {
	t.Helper()
	files, err := renderChart(t, values, kubeVersion)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var r release
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.notes = content
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			decode(t, name, doc, &r)
		}
	}
	if r.deployment == nil || r.service == nil || r.configMap == nil {
		t.Fatalf("render: want a Deployment, a Service and a ConfigMap, got %+v", r)
	}
	return r
}

// decode decodes one manifest strictly into the API type of its kind.
func decode(t *testing.T, file, doc string, r *release) {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		t.Fatalf("%s: not YAML: %v\n%s", file, err, doc)
	}
	type target struct {
		apiVersion string
		obj        any
	}
	var tg target
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		t.Fatalf("%s: not YAML: %v", file, err)
	}
	if meta.Metadata.Labels["app.kubernetes.io/component"] == natsComponent {
		decodeNATS(t, file, doc, tm, &r.nats)
		return
	}
	if r.kinds == nil {
		r.kinds = map[string]bool{}
	}
	if r.kinds[tm.Kind] {
		t.Fatalf("%s: a second %s; the chart renders one of each kind", file, tm.Kind)
	}
	r.kinds[tm.Kind] = true
	switch tm.Kind {
	case "Deployment":
		r.deployment = new(appsv1.Deployment)
		tg = target{"apps/v1", r.deployment}
	case "Service":
		r.service = new(corev1.Service)
		tg = target{"v1", r.service}
	case "ConfigMap":
		r.configMap = new(corev1.ConfigMap)
		tg = target{"v1", r.configMap}
	case "Secret":
		r.secret = new(corev1.Secret)
		tg = target{"v1", r.secret}
	case "ServiceAccount":
		r.serviceAccount = new(corev1.ServiceAccount)
		tg = target{"v1", r.serviceAccount}
	case "HorizontalPodAutoscaler":
		r.hpa = new(autoscalingv2.HorizontalPodAutoscaler)
		tg = target{"autoscaling/v2", r.hpa}
	case "PodDisruptionBudget":
		r.pdb = new(policyv1.PodDisruptionBudget)
		tg = target{"policy/v1", r.pdb}
	case "ServiceMonitor":
		r.serviceMonitor = new(serviceMonitor)
		tg = target{"monitoring.coreos.com/v1", r.serviceMonitor}
	default:
		t.Fatalf("%s: unexpected kind %q", file, tm.Kind)
	}
	if tm.APIVersion != tg.apiVersion {
		t.Errorf("%s: %s apiVersion %q, want %q", file, tm.Kind, tm.APIVersion, tg.apiVersion)
	}
	if err := yaml.UnmarshalStrict([]byte(doc), tg.obj); err != nil {
		t.Fatalf("%s: %s does not decode strictly: %v\n%s", file, tm.Kind, err, doc)
	}
}

// decodeNATS decodes one object of the chart-run NATS strictly; each is rendered at most once.
func decodeNATS(t *testing.T, file, doc string, tm metav1.TypeMeta, n *natsObjects) {
	t.Helper()
	var obj any
	want := "v1"
	switch {
	case tm.Kind == "ConfigMap" && n.config == nil:
		n.config = new(corev1.ConfigMap)
		obj = n.config
	case tm.Kind == "Service" && strings.Contains(doc, "clusterIP: None") && n.headless == nil:
		n.headless = new(corev1.Service)
		obj = n.headless
	case tm.Kind == "Service" && !strings.Contains(doc, "clusterIP: None") && n.client == nil:
		n.client = new(corev1.Service)
		obj = n.client
	case tm.Kind == "StatefulSet" && n.statefulSet == nil:
		n.statefulSet = new(appsv1.StatefulSet)
		obj, want = n.statefulSet, "apps/v1"
	case tm.Kind == "PodDisruptionBudget" && n.pdb == nil:
		n.pdb = new(policyv1.PodDisruptionBudget)
		obj, want = n.pdb, "policy/v1"
	default:
		t.Fatalf("%s: unexpected NATS object %s (or a second one)", file, tm.Kind)
	}
	if tm.APIVersion != want {
		t.Errorf("%s: NATS %s apiVersion %q, want %q", file, tm.Kind, tm.APIVersion, want)
	}
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		t.Fatalf("%s: NATS %s does not decode strictly: %v\n%s", file, tm.Kind, err, doc)
	}
}

func container(t *testing.T, cs []corev1.Container, name string) corev1.Container {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %q in %v", name, names(cs))
	return corev1.Container{}
}

func names(cs []corev1.Container) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func volume(pod corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

func mountPath(c corev1.Container, vol string) (string, bool) {
	for _, m := range c.VolumeMounts {
		if m.Name == vol {
			return m.MountPath, true
		}
	}
	return "", false
}

// probePath returns a probe's HTTP path and port name.
func probePath(t *testing.T, c corev1.Container, p *corev1.Probe, kind string) (string, string) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Fatalf("container %s: no HTTP %s probe", c.Name, kind)
	}
	return p.HTTPGet.Path, p.HTTPGet.Port.String()
}

func ocrgateImage(variant string) string { return "ocrgate:" + variant + "-" + version }

// checkInvariants holds for every rendering: security contexts, names that refer to each other,
// probes on declared ports, mounts of declared volumes.
func checkInvariants(t *testing.T, r release) {
	t.Helper()
	d := r.deployment
	pod := d.Spec.Template.Spec
	if d.Name != fullname {
		t.Errorf("deployment name %q, want %q", d.Name, fullname)
	}

	// Selectors: Deployment, Service and PDB select the pod template's labels.
	podLabels := d.Spec.Template.Labels
	selects := func(what string, sel map[string]string) {
		t.Helper()
		if len(sel) == 0 {
			t.Errorf("%s: empty selector", what)
		}
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("%s selects %s=%s, pod template has %q", what, k, v, podLabels[k])
			}
		}
	}
	selects("deployment", d.Spec.Selector.MatchLabels)
	selects("service", r.service.Spec.Selector)
	if r.pdb != nil {
		selects("pdb", r.pdb.Spec.Selector.MatchLabels)
	}
	if r.hpa != nil && (r.hpa.Spec.ScaleTargetRef.Kind != "Deployment" || r.hpa.Spec.ScaleTargetRef.Name != d.Name) {
		t.Errorf("hpa targets %+v, want Deployment %s", r.hpa.Spec.ScaleTargetRef, d.Name)
	}

	// Pod security: non-root, no service account token.
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero runAsUser", psc)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken should be false")
	}
	if r.serviceAccount == nil || pod.ServiceAccountName != r.serviceAccount.Name {
		t.Errorf("pod service account %q, rendered %+v", pod.ServiceAccountName, r.serviceAccount)
	}

	all := slices.Concat(pod.InitContainers, pod.Containers)
	for _, c := range all {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("container %s: security context %+v, want no privilege escalation, read-only root, drop ALL", c.Name, sc)
		}
		if sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("container %s runs as root", c.Name)
		}
		for _, m := range c.VolumeMounts {
			if volume(pod, m.Name) == nil {
				t.Errorf("container %s mounts undeclared volume %q", c.Name, m.Name)
			}
		}
		ports := map[string]bool{}
		for _, p := range c.Ports {
			ports[p.Name] = true
			if len(p.Name) > 15 {
				t.Errorf("container %s: port name %q longer than 15 characters", c.Name, p.Name)
			}
		}
		for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
			if p != nil && p.HTTPGet != nil && !ports[p.HTTPGet.Port.String()] {
				t.Errorf("container %s: probe on port %q it does not declare", c.Name, p.HTTPGet.Port.String())
			}
		}
		if c.Resources.Limits.Memory().IsZero() {
			t.Errorf("container %s: no memory limit", c.Name)
		}
	}

	// ocrgate: the image of this chart's version, port 8000, settings from the ConfigMap, probes.
	oc := container(t, pod.Containers, "ocrgate")
	if len(oc.Ports) != 1 || oc.Ports[0].ContainerPort != 8000 || oc.Ports[0].Name != "http" {
		t.Errorf("ocrgate ports %+v, want http 8000", oc.Ports)
	}
	if len(oc.EnvFrom) != 1 || oc.EnvFrom[0].ConfigMapRef == nil || oc.EnvFrom[0].ConfigMapRef.Name != r.configMap.Name {
		t.Errorf("ocrgate envFrom %+v, want ConfigMap %s", oc.EnvFrom, r.configMap.Name)
	}
	if p, _ := probePath(t, oc, oc.ReadinessProbe, "readiness"); p != "/readyz" {
		t.Errorf("ocrgate readiness probe %s, want /readyz", p)
	}
	if p, _ := probePath(t, oc, oc.LivenessProbe, "liveness"); p != "/healthz" {
		t.Errorf("ocrgate liveness probe %s, want /healthz", p)
	}
	if got := r.configMap.Data["OCRGATE_ADDR"]; got != ":8000" {
		t.Errorf("OCRGATE_ADDR %q, want :8000", got)
	}
	if got := r.configMap.Data["OCRGATE_LOG_FORMAT"]; got != "json" {
		t.Errorf("OCRGATE_LOG_FORMAT %q, want json", got)
	}
	if _, ok := r.configMap.Data["CHAT_BOT_APIKEY"]; ok {
		t.Errorf("the API key must not be in the ConfigMap")
	}
	if _, ok := oc.Resources.Limits[gpuResource]; ok {
		t.Errorf("ocrgate never uses a GPU but has a %s limit", gpuResource)
	}

	// Service: the API port to the container's http port.
	sp := r.service.Spec.Ports
	if len(sp) == 0 || sp[0].Name != "http" || sp[0].Port != 8000 || sp[0].TargetPort.String() != "http" {
		t.Errorf("service ports %+v, want http 8000 -> http", sp)
	}
	for _, p := range sp {
		found := false
		for _, c := range all {
			for _, cp := range c.Ports {
				found = found || cp.Name == p.TargetPort.String()
			}
		}
		if !found {
			t.Errorf("service port %s targets %q, which no container declares", p.Name, p.TargetPort.String())
		}
	}
	if !strings.Contains(r.notes, "port-forward service/"+fullname) || !strings.Contains(r.notes, "/ocr") {
		t.Errorf("NOTES.txt does not tell how to call the service:\n%s", r.notes)
	}
}

// checkSidecar checks the Triton sidecar wiring: model repository handed over by the init container,
// Triton's ports, flags and probes, /dev/shm shared with ocrgate. It returns the Triton container.
func checkSidecar(t *testing.T, r release, variant string, native bool) corev1.Container {
	t.Helper()
	pod := r.deployment.Spec.Template.Spec
	var triton corev1.Container
	if native {
		if got := names(pod.InitContainers); !slices.Equal(got, []string{"model-repository", "triton"}) {
			t.Fatalf("init containers %v, want [model-repository triton] (copy first, then the sidecar)", got)
		}
		if got := names(pod.Containers); !slices.Equal(got, []string{"ocrgate"}) {
			t.Fatalf("containers %v, want [ocrgate]", got)
		}
		triton = container(t, pod.InitContainers, "triton")
		if triton.RestartPolicy == nil || *triton.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Errorf("native sidecar needs restartPolicy Always, got %v", triton.RestartPolicy)
		}
		if triton.StartupProbe == nil {
			t.Errorf("native sidecar needs a startup probe, so ocrgate starts after Triton is ready")
		}
	} else {
		if got := names(pod.InitContainers); !slices.Equal(got, []string{"model-repository"}) {
			t.Fatalf("init containers %v, want [model-repository]", got)
		}
		if got := names(pod.Containers); !slices.Equal(got, []string{"ocrgate", "triton"}) {
			t.Fatalf("containers %v, want [ocrgate triton]", got)
		}
		triton = container(t, pod.Containers, "triton")
		if triton.RestartPolicy != nil {
			t.Errorf("regular Triton container has restartPolicy %v", *triton.RestartPolicy)
		}
		if triton.Lifecycle == nil || triton.Lifecycle.PreStop == nil {
			t.Errorf("regular Triton container should wait (preStop) while ocrgate drains")
		}
	}

	// The init container copies the repository baked into the ocrgate image into the shared volume.
	cp := container(t, pod.InitContainers, "model-repository")
	if cp.Image != ocrgateImage(variant) {
		t.Errorf("model-repository image %q, want %q", cp.Image, ocrgateImage(variant))
	}
	if !slices.Equal(cp.Command, []string{"cp", "-R", "/opt/ocrgate/model_repository/.", "/models/"}) {
		t.Errorf("model-repository command %q", cp.Command)
	}
	if p, ok := mountPath(cp, "model-repository"); !ok || p != "/models" {
		t.Errorf("model-repository init container mounts the volume at %q, want /models", p)
	}
	repo := volume(pod, "model-repository")
	if repo == nil || repo.EmptyDir == nil {
		t.Fatalf("model-repository volume %+v, want an emptyDir", repo)
	}

	// Triton serves that volume, read-only.
	if !strings.HasPrefix(triton.Image, "nvcr.io/nvidia/tritonserver:") {
		t.Errorf("triton image %q", triton.Image)
	}
	for _, m := range triton.VolumeMounts {
		if m.Name == "model-repository" && (m.MountPath != "/models" || !m.ReadOnly) {
			t.Errorf("triton mounts the model repository at %s (readOnly %v), want /models read-only", m.MountPath, m.ReadOnly)
		}
	}
	if _, ok := mountPath(triton, "model-repository"); !ok {
		t.Errorf("triton does not mount the model repository")
	}
	for _, flag := range []string{"tritonserver", "--model-repository=/models", "--allow-client-shm=true",
		"--strict-readiness=true", "--exit-on-error=true", "--http-port=8010", "--grpc-port=8001", "--metrics-port=8002"} {
		if !slices.Contains(triton.Args, flag) {
			t.Errorf("triton args %q lack %s", triton.Args, flag)
		}
	}
	wantPorts := map[string]int32{"triton-http": 8010, "triton-grpc": 8001, "triton-metrics": 8002}
	for _, p := range triton.Ports {
		if want, ok := wantPorts[p.Name]; !ok || want != p.ContainerPort {
			t.Errorf("triton port %s %d unexpected", p.Name, p.ContainerPort)
		}
		if p.ContainerPort == 8000 {
			t.Errorf("triton port %s on 8000 collides with ocrgate", p.Name)
		}
		delete(wantPorts, p.Name)
	}
	if len(wantPorts) > 0 {
		t.Errorf("triton lacks ports %v", wantPorts)
	}
	for kind, want := range map[string]string{"startup": "/v2/health/ready", "readiness": "/v2/health/ready", "liveness": "/v2/health/live"} {
		p := map[string]*corev1.Probe{"startup": triton.StartupProbe, "readiness": triton.ReadinessProbe, "liveness": triton.LivenessProbe}[kind]
		if got, port := probePath(t, triton, p, kind); got != want || port != "triton-http" {
			t.Errorf("triton %s probe %s on %s, want %s on triton-http", kind, got, port, want)
		}
	}

	// /dev/shm: one memory-backed volume in both containers.
	shm := volume(pod, "dshm")
	if shm == nil || shm.EmptyDir == nil || shm.EmptyDir.Medium != corev1.StorageMediumMemory || shm.EmptyDir.SizeLimit == nil {
		t.Fatalf("dshm volume %+v, want emptyDir medium Memory with a size limit", shm)
	}
	oc := container(t, pod.Containers, "ocrgate")
	for _, c := range []corev1.Container{oc, triton} {
		if p, ok := mountPath(c, "dshm"); !ok || p != "/dev/shm" {
			t.Errorf("%s mounts dshm at %q, want /dev/shm", c.Name, p)
		}
	}
	// The kubelet makes the emptyDir mode 0777, of the pod's fsGroup. ocrgate makes its regions
	// there its user's alone (0600), and Triton has no capabilities: it must run as ocrgate's user.
	if pod.SecurityContext == nil || pod.SecurityContext.FSGroup == nil {
		t.Errorf("the pod has no fsGroup for its volumes")
	}
	runAs := func(c corev1.Container) (uid, gid *int64) {
		if psc := pod.SecurityContext; psc != nil {
			uid, gid = psc.RunAsUser, psc.RunAsGroup
		}
		if sc := c.SecurityContext; sc != nil && sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc := c.SecurityContext; sc != nil && sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
		return uid, gid
	}
	ou, og := runAs(oc)
	tu, tg := runAs(triton)
	if ou == nil || tu == nil || *ou != *tu || og == nil || tg == nil || *og != *tg {
		t.Errorf("triton runs as %v:%v and ocrgate as %v:%v (nil: the image's user): Triton must run as ocrgate's user and group to open its shared-memory regions",
			deref(tu), deref(tg), deref(ou), deref(og))
	}

	// ocrgate waits for Triton's models and calls it on localhost.
	if p, _ := probePath(t, oc, oc.StartupProbe, "startup"); p != "/readyz" {
		t.Errorf("ocrgate startup probe %s, want /readyz", p)
	}
	want := map[string]string{"OCRGATE_RUNTIME": "triton", "OCRGATE_TRITON_ADDR": "localhost:8001", "OCRGATE_TRITON_SHM": "auto"}
	for k, v := range want {
		if got := r.configMap.Data[k]; got != v {
			t.Errorf("ConfigMap %s=%q, want %q", k, got, v)
		}
	}
	if !slices.ContainsFunc(r.service.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "triton-metrics" }) {
		t.Errorf("service lacks the triton-metrics port")
	}
	return triton
}

// checkNoTriton checks a pod without Triton: one container, no init containers, no shared volumes.
func checkNoTriton(t *testing.T, r release) {
	t.Helper()
	pod := r.deployment.Spec.Template.Spec
	if len(pod.InitContainers) != 0 || !slices.Equal(names(pod.Containers), []string{"ocrgate"}) {
		t.Errorf("init containers %v, containers %v, want only ocrgate", names(pod.InitContainers), names(pod.Containers))
	}
	for _, v := range []string{"dshm", "model-repository"} {
		if volume(pod, v) != nil {
			t.Errorf("volume %s without a Triton sidecar", v)
		}
	}
	for _, c := range pod.Containers {
		if _, ok := c.Resources.Limits[gpuResource]; ok {
			t.Errorf("container %s has a GPU limit without a Triton sidecar", c.Name)
		}
	}
	if len(r.service.Spec.Ports) != 1 {
		t.Errorf("service ports %+v, want only http", r.service.Spec.Ports)
	}
}

func TestChartAppVersionIsServiceVersion(t *testing.T) {
	ch := loadChart(t)
	if ch.Metadata.AppVersion != version {
		t.Errorf("helm/ocrgate/Chart.yaml appVersion %q, service.Version %q: bump appVersion (and version) "+
			"in Chart.yaml together with service/server/version.go", ch.Metadata.AppVersion, version)
	}
	if err := ch.Validate(); err != nil {
		t.Errorf("Chart.yaml: %v", err)
	}
}

func TestSidecar(t *testing.T) {
	tests := []struct {
		name, values, kube string
		native             bool
	}{
		{"auto on 1.30 is native", "", kubeWithNativeSidecars, true},
		{"auto on 1.28 is a regular container", "", kubeWithoutNativeSidecars, false},
		{"forced native", "triton: {nativeSidecar: true}", kubeWithoutNativeSidecars, true},
		{"forced regular", "triton: {nativeSidecar: \"false\"}", kubeWithNativeSidecars, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.values, tt.kube)
			checkInvariants(t, r)
			triton := checkSidecar(t, r, "cpu", tt.native)
			if _, ok := triton.Resources.Limits[gpuResource]; ok {
				t.Errorf("cpu variant: triton has a GPU limit")
			}
			if got := container(t, r.deployment.Spec.Template.Spec.Containers, "ocrgate").Image; got != ocrgateImage("cpu") {
				t.Errorf("ocrgate image %q, want %q", got, ocrgateImage("cpu"))
			}
			// Defaults: fixed replicas, a PDB, no HPA, no Secret, no ServiceMonitor.
			if r.deployment.Spec.Replicas == nil || *r.deployment.Spec.Replicas != 1 {
				t.Errorf("replicas %v, want 1", r.deployment.Spec.Replicas)
			}
			if r.pdb == nil || r.hpa != nil || r.secret != nil || r.serviceMonitor != nil {
				t.Errorf("default objects: pdb %v hpa %v secret %v serviceMonitor %v", r.pdb != nil, r.hpa != nil, r.secret != nil, r.serviceMonitor != nil)
			}
		})
	}
}

func TestSidecarGPU(t *testing.T) {
	for _, gpus := range []int64{1, 2} {
		values := "variant: gpu\n"
		if gpus != 1 {
			values += "triton: {gpus: 2}\n"
		}
		r := render(t, values, kubeWithNativeSidecars)
		checkInvariants(t, r)
		triton := checkSidecar(t, r, "gpu", true)
		got, ok := triton.Resources.Limits[gpuResource]
		if !ok || !got.Equal(*resource.NewQuantity(gpus, resource.DecimalSI)) {
			t.Errorf("gpu variant: triton %s limit %v (present %v), want %d", gpuResource, got.String(), ok, gpus)
		}
		if triton.Resources.Limits.Memory().IsZero() {
			t.Errorf("gpu variant: the GPU limit replaced triton's other limits: %v", triton.Resources.Limits)
		}
		if oc := container(t, r.deployment.Spec.Template.Spec.Containers, "ocrgate"); oc.Image != ocrgateImage("gpu") {
			t.Errorf("ocrgate image %q, want %q (the image with the GPU model configs)", oc.Image, ocrgateImage("gpu"))
		}
	}
}

func TestExternal(t *testing.T) {
	for _, variant := range []string{"cpu", "gpu"} {
		t.Run(variant, func(t *testing.T) {
			r := render(t, "variant: "+variant+"\ntriton:\n  mode: external\n  external: {address: triton.inference.svc:8001}\n", kubeWithNativeSidecars)
			checkInvariants(t, r)
			checkNoTriton(t, r)
			for k, v := range map[string]string{"OCRGATE_RUNTIME": "triton", "OCRGATE_TRITON_ADDR": "triton.inference.svc:8001"} {
				if got := r.configMap.Data[k]; got != v {
					t.Errorf("ConfigMap %s=%q, want %q", k, got, v)
				}
			}
			if _, ok := r.configMap.Data["OCRGATE_TRITON_SHM"]; ok {
				t.Errorf("a Triton in another pod cannot share /dev/shm, but OCRGATE_TRITON_SHM is set")
			}
			oc := container(t, r.deployment.Spec.Template.Spec.Containers, "ocrgate")
			if p, _ := probePath(t, oc, oc.StartupProbe, "startup"); p != "/healthz" {
				t.Errorf("external mode: startup probe %s, want /healthz (a restart cannot fix a shared Triton)", p)
			}
		})
	}
	if _, err := renderChart(t, "triton: {mode: external}", kubeWithNativeSidecars); err == nil ||
		!strings.Contains(err.Error(), "triton.external.address") {
		t.Errorf("external mode without an address: err %v, want one naming triton.external.address", err)
	}
}

func TestEmbedded(t *testing.T) {
	for _, variant := range []string{"cpu", "gpu"} {
		t.Run(variant, func(t *testing.T) {
			r := render(t, "variant: "+variant+"\ntriton: {mode: embedded}\n", kubeWithNativeSidecars)
			checkInvariants(t, r)
			checkNoTriton(t, r)
			if got := r.configMap.Data["OCRGATE_RUNTIME"]; got != "embedded" {
				t.Errorf("OCRGATE_RUNTIME %q, want embedded", got)
			}
			for _, k := range []string{"OCRGATE_TRITON_ADDR", "OCRGATE_TRITON_SHM"} {
				if _, ok := r.configMap.Data[k]; ok {
					t.Errorf("embedded mode sets %s", k)
				}
			}
			oc := container(t, r.deployment.Spec.Template.Spec.Containers, "ocrgate")
			if p, _ := probePath(t, oc, oc.StartupProbe, "startup"); p != "/readyz" {
				t.Errorf("embedded startup probe %s, want /readyz", p)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	r := render(t, `
config:
  OCRGATE_ORT_INTRA_THREADS: 4
  OCRGATE_RUNTIME: embedded
  OCRGATE_REQUEST_TIMEOUT: 20s
chat: {model: gpt-4o-mini, baseURL: "https://api.example.com/v1"}
`, kubeWithNativeSidecars)
	checkInvariants(t, r)
	want := map[string]string{
		"OCRGATE_ORT_INTRA_THREADS": "4",
		"OCRGATE_REQUEST_TIMEOUT":   "20s",
		"OCRGATE_RUNTIME":           "triton", // decided by triton.mode, not by config
		"CHAT_BOT_MODEL":            "gpt-4o-mini",
		"CHAT_BOT_BASEURL":          "https://api.example.com/v1",
		"OCRGATE_LOG_LEVEL":         "info",
	}
	for k, v := range want {
		if got := r.configMap.Data[k]; got != v {
			t.Errorf("ConfigMap %s=%q, want %q", k, got, v)
		}
	}
	if !strings.Contains(r.notes, "/ocr-json needs a chat model") {
		t.Errorf("NOTES.txt should say /ocr-json needs an API key")
	}
}

func TestChatAPIKey(t *testing.T) {
	apiKeyEnv := func(t *testing.T, r release) *corev1.SecretKeySelector {
		t.Helper()
		oc := container(t, r.deployment.Spec.Template.Spec.Containers, "ocrgate")
		for _, e := range oc.Env {
			if e.Name == "CHAT_BOT_APIKEY" {
				if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					t.Fatalf("CHAT_BOT_APIKEY %+v, want a secretKeyRef", e)
				}
				return e.ValueFrom.SecretKeyRef
			}
		}
		t.Fatalf("no CHAT_BOT_APIKEY in ocrgate's env %+v", oc.Env)
		return nil
	}

	t.Run("chart secret", func(t *testing.T) {
		r := render(t, "chat: {apiKey: sk-test-123}", kubeWithNativeSidecars)
		checkInvariants(t, r)
		if r.secret == nil {
			t.Fatalf("no Secret rendered")
		}
		if got := string(r.secret.Data["CHAT_BOT_APIKEY"]); got != "sk-test-123" {
			t.Errorf("Secret CHAT_BOT_APIKEY %q", got)
		}
		ref := apiKeyEnv(t, r)
		if ref.Name != r.secret.Name || ref.Key != "CHAT_BOT_APIKEY" {
			t.Errorf("env refers to %s/%s, want %s/CHAT_BOT_APIKEY", ref.Name, ref.Key, r.secret.Name)
		}
		if ref.Optional != nil && *ref.Optional {
			t.Errorf("the API key reference should not be optional")
		}
		for file, content := range mustRender(t, "chat: {apiKey: sk-test-123}") {
			if !strings.HasSuffix(file, "secret.yaml") && strings.Contains(content, "sk-test-123") {
				t.Errorf("%s holds the API key in clear", file)
			}
		}
		if _, ok := r.deployment.Spec.Template.Annotations["checksum/secret"]; !ok {
			t.Errorf("pods do not roll when the API key changes")
		}
	})

	t.Run("existing secret", func(t *testing.T) {
		r := render(t, "chat: {existingSecret: llm-credentials, secretKey: openai}", kubeWithNativeSidecars)
		checkInvariants(t, r)
		if r.secret != nil {
			t.Errorf("a Secret was rendered although existingSecret is set")
		}
		if ref := apiKeyEnv(t, r); ref.Name != "llm-credentials" || ref.Key != "openai" {
			t.Errorf("env refers to %s/%s, want llm-credentials/openai", ref.Name, ref.Key)
		}
	})

	t.Run("never in the ConfigMap", func(t *testing.T) {
		for _, key := range []string{"CHAT_BOT_APIKEY", "OCRGATE_API_KEYS"} {
			if _, err := renderChart(t, "config: {"+key+": sk-oops}", kubeWithNativeSidecars); err == nil {
				t.Errorf("config.%s rendered; a secret must be refused in the ConfigMap", key)
			}
		}
	})
}

func mustRender(t *testing.T, values string) map[string]string {
	t.Helper()
	files, err := renderChart(t, values, kubeWithNativeSidecars)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return files
}

func TestAutoscalingAndMonitoring(t *testing.T) {
	values := `
autoscaling: {enabled: true, minReplicas: 3, maxReplicas: 12, targetMemoryUtilizationPercentage: 80}
metrics: {serviceMonitor: {enabled: true, labels: {release: prometheus}}}
`
	r := render(t, values, kubeWithNativeSidecars)
	checkInvariants(t, r)
	if r.deployment.Spec.Replicas != nil {
		t.Errorf("replicas %d set although the HPA owns them", *r.deployment.Spec.Replicas)
	}
	h := r.hpa
	if h == nil {
		t.Fatalf("no HPA")
	}
	if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != 3 || h.Spec.MaxReplicas != 12 {
		t.Errorf("hpa replicas %v..%d, want 3..12", h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	var resources []corev1.ResourceName
	for _, m := range h.Spec.Metrics {
		if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || m.Resource.Target.AverageUtilization == nil {
			t.Errorf("hpa metric %+v, want a resource utilization", m)
			continue
		}
		resources = append(resources, m.Resource.Name)
	}
	if !slices.Equal(resources, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}) {
		t.Errorf("hpa metrics on %v, want cpu and memory", resources)
	}

	sm := r.serviceMonitor
	if sm == nil {
		t.Fatalf("no ServiceMonitor")
	}
	if sm.Metadata.Labels["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v lack release=prometheus", sm.Metadata.Labels)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if r.service.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, the Service has %q", k, v, r.service.Labels[k])
		}
	}
	var ports []string
	for _, e := range sm.Spec.Endpoints {
		ports = append(ports, e.Port)
		if e.Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoint %s path %q", e.Port, e.Path)
		}
	}
	if !slices.Equal(ports, []string{"http", "triton-metrics"}) {
		t.Errorf("ServiceMonitor scrapes %v, want [http triton-metrics]", ports)
	}

	r = render(t, "triton: {mode: embedded}\nmetrics: {serviceMonitor: {enabled: true}}", kubeWithNativeSidecars)
	if r.serviceMonitor == nil || len(r.serviceMonitor.Spec.Endpoints) != 1 {
		t.Errorf("embedded mode: ServiceMonitor %+v, want only ocrgate's endpoint", r.serviceMonitor)
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	r := render(t, "", kubeWithNativeSidecars)
	if r.pdb == nil || r.pdb.Spec.MaxUnavailable == nil || r.pdb.Spec.MaxUnavailable.IntValue() != 1 || r.pdb.Spec.MinAvailable != nil {
		t.Errorf("default pdb %+v, want maxUnavailable 1", r.pdb)
	}
	r = render(t, "podDisruptionBudget: {maxUnavailable: \"\", minAvailable: 2}", kubeWithNativeSidecars)
	if r.pdb == nil || r.pdb.Spec.MinAvailable == nil || r.pdb.Spec.MinAvailable.IntValue() != 2 || r.pdb.Spec.MaxUnavailable != nil {
		t.Errorf("pdb %+v, want minAvailable 2", r.pdb)
	}
	r = render(t, "podDisruptionBudget: {enabled: false}", kubeWithNativeSidecars)
	if r.pdb != nil {
		t.Errorf("pdb rendered although disabled")
	}
}

func TestInvalidValues(t *testing.T) {
	for _, values := range []string{
		"triton: {mode: kserve}",
		"variant: tpu",
		"triton: {nativeSidecar: sometimes}",
		"podDisruptionBudget: {minAvailable: 1, maxUnavailable: 1}",
		"triton: {ports: {http: 8000}}",
		"config: {LOG_LEVEL: debug}",
	} {
		if _, err := renderChart(t, values, kubeWithNativeSidecars); err == nil {
			t.Errorf("values %q rendered; want an error", values)
		}
	}
}

// lintCases are the value combinations `helm lint` must pass.
var lintCases = map[string]string{
	"defaults":          "",
	"sidecar gpu":       "variant: gpu",
	"external":          "triton: {mode: external, external: {address: triton:8001}}",
	"embedded":          "triton: {mode: embedded}",
	"everything on":     "chat: {apiKey: k}\nautoscaling: {enabled: true}\nmetrics: {serviceMonitor: {enabled: true}}",
	"existing secret":   "chat: {existingSecret: s}\npodDisruptionBudget: {enabled: false}",
	"regular sidecar":   "triton: {nativeSidecar: false}",
	"no serviceaccount": "serviceAccount: {create: false}",
	"jobs, chart NATS":  "jobs: {enabled: true}\nnats: {enabled: true}",
	"jobs, one NATS":    "jobs: {enabled: true}\nnats: {enabled: true, replicas: 1, podDisruptionBudget: {enabled: false}}",
	"jobs, own NATS":    "jobs: {enabled: true, streamReplicas: 3}\nnats: {url: \"nats://nats:4222\"}",
}

func TestLint(t *testing.T) {
	for name, values := range lintCases {
		t.Run(name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(values))
			if err != nil {
				t.Fatal(err)
			}
			for _, kube := range []string{kubeWithoutNativeSidecars, kubeWithNativeSidecars} {
				kv, err := chartutil.ParseKubeVersion(kube)
				if err != nil {
					t.Fatal(err)
				}
				l := lint.AllWithKubeVersion(chartDir, vals, namespace, kv)
				var buf bytes.Buffer
				for _, m := range l.Messages {
					buf.WriteString(m.Error() + "\n")
				}
				// INFO messages (e.g. "icon is recommended") are fine; warnings and errors are not.
				if l.HighestSeverity >= support.WarningSev {
					t.Errorf("helm lint (kube %s):\n%s", kube, buf.String())
				}
			}
		})
	}
}

// deref prints a security context's optional ID.
func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
