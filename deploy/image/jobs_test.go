//go:build image

package image

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Host ports of the jobs test.
const (
	portJobsOCR  = 5530 // + i: the i-th ocrgate pod's http port
	portJobsNATS = 5535 // + i: the i-th NATS pod's monitoring port (probes)
	// + i: the i-th NATS pod's client and route ports (kube play publishes them anyway)
	portJobsNATSClient = 5540
	portJobsNATSRoute  = 5545
)

// The jobs test's network (its NATS pods have fixed addresses in it) and its NATS servers.
const (
	jobsSubnet  = "10.235.35"
	natsServers = 3
)

// jobsRelease is what the chart renders for jobs with its own NATS: ocrgate's Deployment and
// ConfigMap, the NATS StatefulSet, its ConfigMap and its client Service.
type jobsRelease struct {
	deployment  *appsv1.Deployment
	config      *corev1.ConfigMap
	statefulSet *appsv1.StatefulSet
	natsConfig  *corev1.ConfigMap
	natsService *corev1.Service
}

// renderJobs renders helm/ocrgate with values as `helm template` would and decodes what the jobs
// test runs.
func renderJobs(t *testing.T, values string) jobsRelease {
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
	var r jobsRelease
	strict := func(doc string, obj any) {
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue // NOTES.txt
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatal(err)
			}
			switch {
			case strings.HasSuffix(name, "deployment.yaml"):
				r.deployment = new(appsv1.Deployment)
				strict(doc, r.deployment)
			case strings.HasSuffix(name, "configmap.yaml"):
				r.config = new(corev1.ConfigMap)
				strict(doc, r.config)
			case strings.HasSuffix(name, "nats.yaml") && tm.Kind == "StatefulSet":
				r.statefulSet = new(appsv1.StatefulSet)
				strict(doc, r.statefulSet)
			case strings.HasSuffix(name, "nats.yaml") && tm.Kind == "ConfigMap":
				r.natsConfig = new(corev1.ConfigMap)
				strict(doc, r.natsConfig)
			case strings.HasSuffix(name, "nats.yaml") && tm.Kind == "Service" && !strings.Contains(doc, "clusterIP: None"):
				r.natsService = new(corev1.Service)
				strict(doc, r.natsService)
			}
		}
	}
	if r.deployment == nil || r.config == nil || r.statefulSet == nil || r.natsConfig == nil || r.natsService == nil {
		t.Fatalf("the chart rendered no Deployment, ConfigMap, NATS StatefulSet, NATS ConfigMap or NATS Service")
	}
	return r
}

var natsModule = regexp.MustCompile(`(?m)^\s*github\.com/nats-io/nats-server/v2 v([0-9][^\s]*)`)

// buildNATSImage builds the NATS image with scripts/build_docker_image.sh nats and returns its
// tag, ocrgate-nats:<the nats-server version go.mod pins>.
func buildNATSImage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := natsModule.FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod does not require github.com/nats-io/nats-server/v2")
	}
	want := "ocrgate-nats:" + string(m[1])
	if reuseImages() && imageExists(want) {
		return want
	}
	start := time.Now()
	log := filepath.Join(repoRoot, "out", "image-test", "build-nats.log")
	out, err := runLogged(log, 20*time.Minute, "bash", filepath.Join(repoRoot, "scripts", "build_docker_image.sh"), "nats")
	if err != nil {
		t.Fatalf("scripts/build_docker_image.sh nats: %v (log: %s)\n%s", err, log, tail(log, 40))
	}
	if tag := lastLine(out); tag != want {
		t.Fatalf("build script printed tag %q, want %q", tag, want)
	}
	note(t, "build %s (from go.mod's nats-server): %.0f s wall; image %s", want, time.Since(start).Seconds(), imageSize(want))
	return want
}

// jobState is the part of a job (GET /jobs/{id}) the test reads.
type jobState struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Pages struct {
		Total  int `json:"total"`
		Done   int `json:"done"`
		Failed int `json:"failed"`
	} `json:"pages"`
	Redeliveries int `json:"redeliveries"`
	Result       *struct {
		Pages []struct {
			Page  int             `json:"page"`
			Text  string          `json:"text"`
			Error json.RawMessage `json:"error"`
		} `json:"pages"`
	} `json:"result"`
}

// metricOr reads a sample like metric, or -1 when the pod does not answer.
func metricOr(url, name string) float64 {
	r, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		return -1
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return 0
}

// TestJobsPodKill runs the chart with jobs on and its own NATS (nats.enabled), the NATS image
// built here from go.mod's nats-server, with `podman kube play`: a three-server JetStream cluster
// and three ocrgate pods (embedded runtime) on it. A 48-page scanned PDF goes in as one job; one
// ocrgate pod is killed (SIGKILL, every container) while it reads a page, and a NATS server with
// it. The job must finish on the other two pods with every page answered once, each page's text
// equal to /ocr's for the same page, the killed pod's page redelivered and counted, and every
// stream and bucket replicated on the three servers, led by the two left.
//
// What kube play does not do as a cluster would, and how the test stands in:
//   - no StatefulSet: the NATS pods are the StatefulSet's pods as written (their names, the
//     servers' names from the pods' metadata), each volume claim a volume made for the test;
//   - no cluster DNS: the NATS pods get fixed addresses on a network of the test, and every NATS
//     pod gets each one's name under the headless Service (the cluster routes) in hostAliases;
//   - no Services: each ocrgate pod gets the NATS client Service's name in hostAliases, bound to
//     the first NATS pod (an address the Service resolves to), so OCRGATE_NATS_URL is the
//     chart's; the servers tell the client about each other;
//   - one pod per Deployment: the Deployment's pod is written out three times (restartPolicy
//     OnFailure); the killed pod is removed at once (a cluster would start it again; the test
//     asks the survivors to finish its pages);
//   - ports without a hostPort are published on the host by kube play: the test gives each its
//     own, on the loopback address;
//   - probes: the test sends the readiness probes' requests itself, as in TestChartPod.
func TestJobsPodKill(t *testing.T) {
	if !isPodman {
		t.Skip("kube play is podman's")
	}
	natsImage := buildNATSImage(t)
	repo, tag, _ := strings.Cut(natsImage, ":")
	ocrRepo, ocrTag, _ := strings.Cut(cpuImage, ":")
	const pods, pages = 3, 48
	rel := renderJobs(t, fmt.Sprintf(`
image: {repository: %s, tag: %q, pullPolicy: Never}
triton: {mode: embedded}
replicaCount: %d
jobs: {enabled: true}
nats:
  enabled: true
  replicas: %d
  image: {repository: %s, tag: %q, pullPolicy: Never}
config:
  OCRGATE_ORT_INTRA_THREADS: "1"
  OCRGATE_JOB_WORKERS: "1"
`, ocrRepo, ocrTag, pods, natsServers, repo, tag))
	dir := t.TempDir()
	write := func(name string, objs ...any) string {
		var b bytes.Buffer
		for _, o := range objs {
			y, err := yaml.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	down := func(file string) {
		if out, err := exec.Command(engine, "kube", "down", file).CombinedOutput(); err != nil {
			t.Logf("kube down %s: %v %s", filepath.Base(file), err, out)
		}
	}

	// NATS: the StatefulSet's pods, each its claim in a volume owned as a provisioner with
	// fsGroup leaves it, and a fixed address on the test's network, so that each pod's DNS name
	// under the headless Service (the cluster routes) can be given to every pod in hostAliases.
	ss := rel.statefulSet
	network := "ocrgate-image-test-jobs"
	removeStale("network:" + network)
	eng(t, "network", "create", "--subnet", jobsSubnet+".0/24", network)
	var natsPods []any
	var natsIPs, natsNames, volumes []string
	for i := range natsServers {
		natsIPs = append(natsIPs, fmt.Sprintf("%s.%d", jobsSubnet, 10+i))
		natsNames = append(natsNames, fmt.Sprintf("%s-%d", ss.Name, i))
	}
	var routes []corev1.HostAlias
	for i, name := range natsNames {
		routes = append(routes, corev1.HostAlias{IP: natsIPs[i], Hostnames: []string{name + "." + ss.Spec.ServiceName}})
	}
	for i, name := range natsNames {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: ss.Spec.Template.Labels},
			Spec:       *ss.Spec.Template.Spec.DeepCopy(),
		}
		removeStale("pod:" + name)
		pod.Spec.HostAliases = routes
		for _, claim := range ss.Spec.VolumeClaimTemplates {
			vol := fmt.Sprintf("ocrgate-image-test-jobs-%s-%d", claim.Name, i)
			removeStale("volume:" + vol)
			eng(t, "volume", "create", "--opt", fmt.Sprintf("o=uid=0,gid=%d", *pod.Spec.SecurityContext.FSGroup), vol)
			mp := strings.TrimSpace(eng(t, "volume", "inspect", "--format", "{{.Mountpoint}}", vol))
			if err := os.Chmod(mp, 0o777|os.ModeSetgid); err != nil {
				t.Fatal(err)
			}
			volumes = append(volumes, "volume:"+vol)
			pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: claim.Name,
				VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: vol}}})
		}
		// kube play publishes a port without a hostPort on the host's same port: three servers
		// would collide. Each gets its own, on the loopback address.
		c := &pod.Spec.Containers[0]
		hostPorts := map[string]int{"monitor": portJobsNATS, "client": portJobsNATSClient, "cluster": portJobsNATSRoute}
		for j, p := range c.Ports {
			hp, ok := hostPorts[p.Name]
			if !ok {
				t.Fatalf("NATS port %s is not published by the test", p.Name)
			}
			c.Ports[j].HostPort, c.Ports[j].HostIP = int32(hp+i), "127.0.0.1"
		}
		if c.Image != natsImage {
			t.Fatalf("the chart's NATS image %q, built %q", c.Image, natsImage)
		}
		natsPods = append(natsPods, pod)
	}
	nc := ss.Spec.Template.Spec.Containers[0]

	// ocrgate: the Deployment's pod, three times, each with its own emptyDirs and http port.
	var ocrPods []any
	var bases []string
	for i := range pods {
		spec := rel.deployment.Spec.Template.Spec.DeepCopy()
		// A Deployment's pods are restarted; OnFailure here (the kubelet's Always would also
		// restart a container that exits 0). Three pods creating the replicated streams at once
		// on a new cluster may time out and exit (seen once); restarted, they find them made.
		spec.RestartPolicy = corev1.RestartPolicyOnFailure
		name := fmt.Sprintf("%s-%d", rel.deployment.Name, i)
		removeStale("pod:" + name)
		vs, _ := emptyDirsAsVolumes(t, spec, fmt.Sprintf("ocrgate-image-test-jobs-%d", i))
		volumes = append(volumes, vs...)
		for j, p := range spec.Containers[0].Ports {
			if p.Name == "http" {
				spec.Containers[0].Ports[j].HostPort, spec.Containers[0].Ports[j].HostIP = int32(portJobsOCR+i), "127.0.0.1"
			}
		}
		ocrPods = append(ocrPods, &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: rel.deployment.Spec.Template.Labels},
			Spec:       *spec,
		})
		bases = append(bases, fmt.Sprintf("http://127.0.0.1:%d", portJobsOCR+i))
	}
	removeOnCleanup(t, append(volumes, "network:"+network)...) // after kube down, registered later

	natsFile := write("nats.yaml", append([]any{rel.natsConfig}, natsPods...)...)
	play := []string{"kube", "play", "--network", network}
	for _, ip := range natsIPs {
		play = append(play, "--ip", ip) // one per pod, in the file's order
	}
	start := time.Now()
	if out, err := exec.Command(engine, append(play, natsFile)...).CombinedOutput(); err != nil {
		t.Fatalf("kube play NATS: %v\n%s", err, out)
	}
	t.Cleanup(func() { down(natsFile) })
	// Ready as the probe asks, then a JetStream cluster with a meta leader (plain /healthz):
	// ocrgate creates its replicated streams when it starts.
	ready := nc.ReadinessProbe.HTTPGet.Path
	for i, name := range natsNames {
		for _, path := range []string{ready, "/healthz"} {
			if _, err := waitStatus(fmt.Sprintf("http://127.0.0.1:%d%s", portJobsNATS+i, path), http.StatusOK, 2*time.Minute); err != nil {
				out, _ := exec.Command(engine, "logs", "--tail", "30", name+"-nats").CombinedOutput()
				t.Fatalf("NATS %s: %v\n%s", name, err, out)
			}
		}
	}
	note(t, "jobs: %d NATS pods (%s) ready and clustered %.1f s after kube play", natsServers, natsImage, time.Since(start).Seconds())
	for _, p := range ocrPods {
		// The client Service's name resolves to a NATS pod, as the Service would; the servers
		// then tell the client about each other.
		p.(*corev1.Pod).Spec.HostAliases = []corev1.HostAlias{{IP: natsIPs[0], Hostnames: []string{rel.natsService.Name}}}
	}

	ocrFile := write("ocrgate.yaml", append([]any{rel.config}, ocrPods...)...)
	start = time.Now()
	if out, err := exec.Command(engine, "kube", "play", "--network", network, ocrFile).CombinedOutput(); err != nil {
		t.Fatalf("kube play ocrgate: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i := range pods {
				out, _ := exec.Command(engine, "logs", "--tail", "20", fmt.Sprintf("%s-%d-ocrgate", rel.deployment.Name, i)).CombinedOutput()
				t.Logf("ocrgate pod %d logs:\n%s", i, out)
			}
			if keep() {
				return
			}
		}
		// Pod by pod: kube down stops at the killed pod, removed already.
		for i := range pods {
			if err := remove(fmt.Sprintf("pod:%s-%d", rel.deployment.Name, i)); err != nil && !strings.Contains(err.Error(), "no pod") {
				t.Logf("remove ocrgate pod %d: %v", i, err)
			}
		}
	})
	for _, b := range bases {
		if _, err := waitStatus(b+"/readyz", http.StatusOK, 4*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var restarts []string
	for i := range pods {
		restarts = append(restarts, inspect(t, fmt.Sprintf("%s-%d-ocrgate", rel.deployment.Name, i), "{{.RestartCount}}"))
	}
	note(t, "jobs: %d ocrgate pods on the NATS cluster ready %.1f s after kube play (restarts %v)", pods, time.Since(start).Seconds(), restarts)
	env := eng(t, "exec", rel.deployment.Name+"-0-ocrgate", "printenv")
	for _, kv := range []string{"OCRGATE_JOBS=true", "OCRGATE_NATS_URL=nats://" + rel.natsService.Name + ":4222", fmt.Sprintf("OCRGATE_JOB_REPLICAS=%d", natsServers)} {
		if !strings.Contains(env, kv+"\n") {
			t.Errorf("ocrgate's environment lacks %s (the chart's ConfigMap)", kv)
		}
	}

	// The reference: /ocr of one page of the same scan.
	want := ocr(t, bases[0], scannedPDF(t, 1))
	if len(want.Pages) != 1 || !strings.Contains(want.Pages[0].Text, "TOTAL") {
		t.Fatalf("/ocr of one scanned page: %+v", want)
	}

	// Submit on pod 0; kill pod 2 while it reads a page.
	doc := scannedPDF(t, pages)
	resp, err := httpClient.Post(bases[0]+"/jobs", "application/pdf", bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var job jobState
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &job) != nil || job.ID == "" {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, body)
	}
	if loc := resp.Header.Get("Location"); loc != "/jobs/"+job.ID {
		t.Errorf("Location %q, want /jobs/%s", loc, job.ID)
	}
	submitted := time.Now()
	victim := pods - 1
	read := func(i int) float64 { return metricOr(bases[i]+"/metrics", "ocrgate_job_page_seconds_count") }
	var shares [pods]float64
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pod %d did not read 5 job pages within 5 minutes", victim)
		}
		// In the middle: five pages read (about a third of the job, over three pods), and a page
		// admitted now (its worker holds the task unacked).
		n := read(victim)
		if n >= 5 && metricOr(bases[victim]+"/metrics", "ocrgate_jobs_in_flight") >= 1 {
			shares[victim] = n
			break
		}
	}
	eng(t, "pod", "kill", "--signal", "KILL", fmt.Sprintf("%s-%d", rel.deployment.Name, victim))
	killedAt := time.Since(submitted)
	// A cluster would start it again; removed, it leaves its pages to the survivors.
	eng(t, "pod", "rm", "-f", "-t", "0", fmt.Sprintf("%s-%d", rel.deployment.Name, victim))
	// And a NATS server with it: every stream keeps a majority on the other two (what the
	// PodDisruptionBudget keeps through a drain), and those it led elect another leader.
	natsVictim := natsNames[natsServers-1]
	eng(t, "pod", "kill", "--signal", "KILL", natsVictim)

	// The job finishes on the survivors.
	var done jobState
	unavailable := 0
	for deadline := time.Now().Add(8 * time.Minute); ; {
		if time.Now().After(deadline) {
			t.Fatalf("job %s not finished 8 minutes after the kill: %+v", job.ID, done)
		}
		r, err := get(bases[0] + "/jobs/" + job.ID + "?wait=30s")
		if err == nil && r.status == http.StatusServiceUnavailable {
			// The store did not answer in time (a server is gone): a client tries again.
			unavailable++
			time.Sleep(time.Second)
			continue
		}
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("GET /jobs/%s: %v %d %s", job.ID, err, r.status, r.body)
		}
		done = jobState{}
		if err := json.Unmarshal(r.body, &done); err != nil {
			t.Fatal(err)
		}
		if done.State != "queued" && done.State != "running" {
			break
		}
	}
	took := time.Since(submitted)
	if done.State != "succeeded" || done.Pages.Total != pages || done.Pages.Done != pages || done.Pages.Failed != 0 || done.Result == nil {
		t.Fatalf("job ended %s with pages %+v", done.State, done.Pages)
	}
	if len(done.Result.Pages) != pages {
		t.Fatalf("the result has %d pages, want %d", len(done.Result.Pages), pages)
	}
	for i, p := range done.Result.Pages {
		if p.Page != i+1 || len(p.Error) != 0 || p.Text != want.Pages[0].Text {
			t.Errorf("page %d: number %d, error %s, text %q; want /ocr's %q", i+1, p.Page, p.Error, p.Text, want.Pages[0].Text)
		}
	}
	var redelivered float64
	for i := range pods - 1 {
		shares[i] = read(i)
		redelivered += metricOr(bases[i]+"/metrics", "ocrgate_job_task_redeliveries_total")
	}
	// Each pod read pages. The survivors read no page twice, beyond the redelivered ones: at most
	// the pages the killed pod had not finished (it had finished shares[victim] when it was seen
	// at work, and may have finished one more before the kill) plus the redeliveries.
	survivors := shares[0] + shares[1]
	for i, s := range shares {
		if s < 1 {
			t.Errorf("pod %d read no page", i)
		}
	}
	if most := float64(pages) - shares[victim] + redelivered; survivors > most {
		t.Errorf("the survivors read %v pages, more than the %v left to them and redelivered: a page read twice", survivors, most)
	}
	if done.Redeliveries < 1 || redelivered < 1 {
		t.Errorf("pod %d was killed at work, but the job counts %d redeliveries and the survivors' metrics %v",
			victim, done.Redeliveries, redelivered)
	}
	pending := metricOr(bases[0]+"/metrics", "ocrgate_job_pages_pending")
	for end := time.Now().Add(time.Minute); pending != 0 && time.Now().Before(end); time.Sleep(time.Second) {
		pending = metricOr(bases[0]+"/metrics", "ocrgate_job_pages_pending") // -1: NATS did not answer
	}
	if pending != 0 {
		t.Errorf("ocrgate_job_pages_pending %v after the job, want 0", pending)
	}
	// Every stream and bucket of the jobs is replicated on the three servers.
	r, err := get(fmt.Sprintf("http://127.0.0.1:%d/jsz?streams=true&config=true", portJobsNATS))
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("NATS /jsz: %v %d", err, r.status)
	}
	var jsz struct {
		Accounts []struct {
			Streams []struct {
				Name   string `json:"name"`
				Config struct {
					Replicas int `json:"num_replicas"`
				} `json:"config"`
				Cluster struct {
					Leader   string `json:"leader"`
					Replicas []struct {
						Name    string `json:"name"`
						Current bool   `json:"current"`
					} `json:"replicas"`
				} `json:"cluster"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := json.Unmarshal(r.body, &jsz); err != nil {
		t.Fatal(err)
	}
	var streams []string
	for _, a := range jsz.Accounts {
		for _, st := range a.Streams {
			streams = append(streams, st.Name)
			if st.Config.Replicas != natsServers || st.Cluster.Leader == "" || st.Cluster.Leader == natsVictim ||
				len(st.Cluster.Replicas) != natsServers-1 {
				t.Errorf("stream %s: %d replicas configured, leader %q, followers %+v; want %d on as many servers",
					st.Name, st.Config.Replicas, st.Cluster.Leader, st.Cluster.Replicas, natsServers)
			}
		}
	}
	if len(streams) < 5 {
		t.Errorf("NATS holds the streams %v; want the task stream and the four buckets", streams)
	}
	note(t, "jobs: streams %v each on %d servers, led by the two left (/jsz)", streams, natsServers)
	note(t, "jobs: %d waits on the job answered 503 jobs_unavailable and were tried again", unavailable)
	note(t, "jobs: %d-page job on %d pods and %d NATS servers, pod %d and NATS server %s SIGKILLed %.1f s in; succeeded in %.1f s, every page once and equal to /ocr; pages read per pod %v (the killed one's when last seen), %d redeliveries (survivors' metrics %v)",
		pages, pods, natsServers, victim, natsVictim, killedAt.Seconds(), took.Seconds(), shares, done.Redeliveries, redelivered)

	// Deleting the finished job frees it; a second delete and a read answer 404.
	req, _ := http.NewRequest(http.MethodDelete, bases[1]+"/jobs/"+job.ID, nil)
	dr, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dr.Body.Close()
	if dr.StatusCode >= 300 {
		t.Errorf("DELETE /jobs/%s on pod 1: %d", job.ID, dr.StatusCode)
	}
	if r, err := get(bases[0] + "/jobs/" + job.ID); err != nil || r.status != http.StatusNotFound {
		t.Errorf("GET of a deleted job on pod 0: %v %d, want 404", err, r.status)
	}
}
