package chart

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// The NATS objects' names for the release "ocr".
const (
	natsName     = fullname + "-nats"
	natsHeadless = natsName + "-headless"
)

// pageAnswerPayload is the largest message ocrgate stores: an 8 MiB page answer plus 64 KiB of
// headers, what the embedded server allows (service/jobs).
const pageAnswerPayload = 8<<20 + 64<<10

func TestJobsOffByDefault(t *testing.T) {
	r := render(t, "", kubeWithNativeSidecars)
	checkInvariants(t, r)
	if got := r.configMap.Data["OCRGATE_JOBS"]; got != "false" {
		t.Errorf("OCRGATE_JOBS %q, want false by default", got)
	}
	for _, k := range []string{"OCRGATE_NATS_URL", "OCRGATE_JOB_REPLICAS"} {
		if _, ok := r.configMap.Data[k]; ok {
			t.Errorf("jobs off, but %s is set", k)
		}
	}
	if r.nats != (natsObjects{}) {
		t.Errorf("NATS objects rendered with nats.enabled false: %+v", r.nats)
	}
	if v := volume(r.deployment.Spec.Template.Spec, "jobs-spool"); v != nil {
		t.Errorf("jobs off, but the pod has a jobs-spool volume")
	}
	// The chart owns the jobs settings: config: cannot turn jobs on behind its back.
	r = render(t, "config: {OCRGATE_JOBS: \"true\", OCRGATE_NATS_URL: \"nats://x:4222\"}", kubeWithNativeSidecars)
	if r.configMap.Data["OCRGATE_JOBS"] != "false" || r.configMap.Data["OCRGATE_NATS_URL"] != "" {
		t.Errorf("config: turned jobs on without jobs.enabled: %v", r.configMap.Data)
	}
}

func TestJobsExternalNATS(t *testing.T) {
	tests := []struct {
		name, values, replicas string
	}{
		{"one server", "jobs: {enabled: true}\nnats: {url: \"nats://nats.messaging.svc:4222\"}", "1"},
		{"a cluster of your own", "jobs: {enabled: true, streamReplicas: 3}\nnats: {url: \"nats://nats.messaging.svc:4222\"}", "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.values, kubeWithNativeSidecars)
			checkInvariants(t, r)
			want := map[string]string{"OCRGATE_JOBS": "true", "OCRGATE_NATS_URL": "nats://nats.messaging.svc:4222", "OCRGATE_JOB_REPLICAS": tt.replicas}
			for k, v := range want {
				if got := r.configMap.Data[k]; got != v {
					t.Errorf("ConfigMap %s=%q, want %q", k, got, v)
				}
			}
			if r.nats != (natsObjects{}) {
				t.Errorf("NATS objects rendered for an external NATS")
			}
			checkJobsSpool(t, r)
		})
	}
}

func TestJobsChartNATS(t *testing.T) {
	for _, replicas := range []int{3, 1, 5} {
		t.Run(fmt.Sprintf("%d servers", replicas), func(t *testing.T) {
			values := "jobs: {enabled: true}\nnats: {enabled: true"
			if replicas != 3 {
				values += fmt.Sprintf(", replicas: %d", replicas)
			}
			values += "}\n"
			r := render(t, values, kubeWithNativeSidecars)
			checkInvariants(t, r)
			checkNATS(t, r, replicas)
			checkJobsSpool(t, r)
		})
	}
}

// checkNATS checks the chart-run NATS of n servers and ocrgate's way to it.
func checkNATS(t *testing.T, r release, n int) {
	t.Helper()
	nt := r.nats
	if nt.config == nil || nt.headless == nil || nt.client == nil || nt.statefulSet == nil || nt.pdb == nil {
		t.Fatalf("NATS objects missing: %+v", nt)
	}
	ss := nt.statefulSet
	pod := ss.Spec.Template.Spec
	podLabels := labels.Set(ss.Spec.Template.Labels)

	// The StatefulSet: n servers started at once, named through the headless Service.
	if ss.Name != natsName || ss.Spec.Replicas == nil || int(*ss.Spec.Replicas) != n {
		t.Errorf("statefulset %s replicas %v, want %s with %d", ss.Name, ss.Spec.Replicas, natsName, n)
	}
	if ss.Spec.PodManagementPolicy != "Parallel" {
		t.Errorf("podManagementPolicy %q, want Parallel (a cluster forms only once a majority is up)", ss.Spec.PodManagementPolicy)
	}
	if ss.Spec.ServiceName != nt.headless.Name || nt.headless.Name != natsHeadless {
		t.Errorf("statefulset serviceName %q, headless service %q, want %q", ss.Spec.ServiceName, nt.headless.Name, natsHeadless)
	}
	if nt.headless.Spec.ClusterIP != corev1.ClusterIPNone || !nt.headless.Spec.PublishNotReadyAddresses {
		t.Errorf("headless service: clusterIP %q publishNotReadyAddresses %v, want None and true",
			nt.headless.Spec.ClusterIP, nt.headless.Spec.PublishNotReadyAddresses)
	}
	selects := func(what string, sel map[string]string) {
		t.Helper()
		if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(podLabels) {
			t.Errorf("%s selects %v, NATS pods have %v", what, sel, podLabels)
		}
	}
	selects("statefulset", ss.Spec.Selector.MatchLabels)
	selects("headless service", nt.headless.Spec.Selector)
	selects("client service", nt.client.Spec.Selector)
	selects("NATS pdb", nt.pdb.Spec.Selector.MatchLabels)
	// ocrgate's Service, Deployment and PDB never take a NATS pod, nor NATS's an ocrgate pod.
	ocrLabels := labels.Set(r.deployment.Spec.Template.Labels)
	for what, sel := range map[string]map[string]string{"ocrgate service": r.service.Spec.Selector,
		"ocrgate deployment": r.deployment.Spec.Selector.MatchLabels} {
		if labels.SelectorFromSet(sel).Matches(podLabels) {
			t.Errorf("%s selects the NATS pods", what)
		}
	}
	if r.pdb != nil && labels.SelectorFromSet(r.pdb.Spec.Selector.MatchLabels).Matches(podLabels) {
		t.Errorf("ocrgate's pdb selects the NATS pods")
	}
	if labels.SelectorFromSet(nt.client.Spec.Selector).Matches(ocrLabels) {
		t.Errorf("the NATS service selects ocrgate pods")
	}
	if nt.pdb.Spec.MaxUnavailable == nil || nt.pdb.Spec.MaxUnavailable.IntValue() != 1 || nt.pdb.Spec.MinAvailable != nil {
		t.Errorf("NATS pdb %+v, want maxUnavailable 1", nt.pdb.Spec)
	}

	// The container: the image built from go.mod's nats-server, the ports, probes, security.
	if len(pod.Containers) != 1 || pod.Containers[0].Name != "nats" {
		t.Fatalf("NATS pod containers %v, want [nats]", names(pod.Containers))
	}
	c := pod.Containers[0]
	if want := "ocrgate-nats:" + natsModuleVersion(t); c.Image != want {
		t.Errorf("NATS image %q, want %q (the nats-server version pinned in go.mod)", c.Image, want)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if !maps(ports, map[string]int32{"client": 4222, "cluster": 6222, "monitor": 8222}) {
		t.Errorf("NATS ports %v", ports)
	}
	for kind, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != "monitor" || !strings.HasPrefix(p.HTTPGet.Path, "/healthz") {
			t.Errorf("NATS %s probe %+v, want httpGet /healthz on monitor", kind, p)
		}
	}
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.FSGroup == nil {
		t.Errorf("NATS pod security context %+v, want non-root with an fsGroup (the volume is written by the pod's user)", psc)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("NATS container security context %+v", sc)
	}
	if c.Resources.Limits.Memory().IsZero() {
		t.Errorf("NATS container has no memory limit")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("NATS pods mount a service account token")
	}
	podName := ""
	for _, e := range c.Env {
		if e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			podName = e.Name
		}
	}
	if podName == "" {
		t.Errorf("NATS env %+v lacks POD_NAME from metadata.name (the server's name)", c.Env)
	}

	// Persistent volumes: one claim per server, mounted where the configuration stores JetStream.
	if len(ss.Spec.VolumeClaimTemplates) != 1 || ss.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Fatalf("volumeClaimTemplates %+v, want one called data", ss.Spec.VolumeClaimTemplates)
	}
	pvc := ss.Spec.VolumeClaimTemplates[0]
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !got.Equal(resource.MustParse("12Gi")) {
		t.Errorf("NATS volume size %s, want 12Gi", got.String())
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) {
		t.Errorf("NATS volume access modes %v", pvc.Spec.AccessModes)
	}
	dataDir, ok := mountPath(c, "data")
	if !ok {
		t.Fatalf("the NATS container does not mount its volume")
	}
	confDir, ok := mountPath(c, "config")
	cfgVol := volume(pod, "config")
	if !ok || cfgVol == nil || cfgVol.ConfigMap == nil || cfgVol.ConfigMap.Name != nt.config.Name {
		t.Fatalf("the NATS configuration is not mounted from %s: %+v", nt.config.Name, cfgVol)
	}
	if !slices.Equal(c.Args, []string{"--config", confDir + "/nats.conf"}) {
		t.Errorf("NATS args %q, want --config %s/nats.conf", c.Args, confDir)
	}

	// The configuration, read by nats-server's own parser as server i of n would read it.
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte(nt.config.Data["nats.conf"]), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POD_NAME", natsName+"-0")
	o, err := natsserver.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("nats-server refuses the configuration: %v\n%s", err, nt.config.Data["nats.conf"])
	}
	if o.ServerName != natsName+"-0" {
		t.Errorf("server_name %q, want the pod's name", o.ServerName)
	}
	if !o.JetStream || o.StoreDir != dataDir {
		t.Errorf("JetStream %v in %q, want on in %q (the volume)", o.JetStream, o.StoreDir, dataDir)
	}
	if o.MaxPayload < pageAnswerPayload {
		t.Errorf("max_payload %d, below the %d bytes of ocrgate's largest page answer", o.MaxPayload, pageAnswerPayload)
	}
	if o.JetStreamMaxStore != 10<<30 {
		t.Errorf("max_file_store %d, want 10 GiB", o.JetStreamMaxStore)
	}
	if o.Port != 4222 || o.HTTPPort != 8222 {
		t.Errorf("client port %d, monitor port %d, want 4222 and 8222", o.Port, o.HTTPPort)
	}
	if n == 1 {
		if o.Cluster.Port != 0 || len(o.Routes) != 0 {
			t.Errorf("one server: cluster port %d routes %v, want none", o.Cluster.Port, o.Routes)
		}
	} else {
		if o.Cluster.Port != 6222 || o.Cluster.Name == "" {
			t.Errorf("cluster port %d name %q", o.Cluster.Port, o.Cluster.Name)
		}
		var hosts []string
		for _, u := range o.Routes {
			hosts = append(hosts, u.Host)
		}
		var want []string
		for i := range n {
			want = append(want, fmt.Sprintf("%s-%d.%s:6222", natsName, i, natsHeadless))
		}
		if !slices.Equal(hosts, want) {
			t.Errorf("routes %v, want every server's pod DNS name %v", hosts, want)
		}
		if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil {
			t.Errorf("a NATS cluster without pod anti-affinity")
		}
	}

	// ocrgate: jobs on, the client Service's URL, streams and buckets replicated on every server.
	u, err := url.Parse(r.configMap.Data["OCRGATE_NATS_URL"])
	if err != nil || u.Scheme != "nats" || u.Hostname() != nt.client.Name || u.Port() != "4222" {
		t.Errorf("OCRGATE_NATS_URL %q, want nats://%s:4222", r.configMap.Data["OCRGATE_NATS_URL"], nt.client.Name)
	}
	if len(nt.client.Spec.Ports) != 1 || nt.client.Spec.Ports[0].Port != 4222 || nt.client.Spec.Ports[0].TargetPort.String() != "client" {
		t.Errorf("client service ports %+v", nt.client.Spec.Ports)
	}
	if got := r.configMap.Data["OCRGATE_JOB_REPLICAS"]; got != fmt.Sprint(n) {
		t.Errorf("OCRGATE_JOB_REPLICAS %q, want %d", got, n)
	}
	if got := r.configMap.Data["OCRGATE_JOBS"]; got != "true" {
		t.Errorf("OCRGATE_JOBS %q, want true", got)
	}
	if !strings.Contains(r.notes, "StatefulSet "+natsName) {
		t.Errorf("NOTES.txt does not name the NATS StatefulSet:\n%s", r.notes)
	}
}

func maps(a, b map[string]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// natsModuleVersion is the nats-server version the service's go.mod pins, without its v.
func natsModuleVersion(t *testing.T) string {
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

func TestJobsInvalidValues(t *testing.T) {
	for _, tt := range []struct{ values, want string }{
		{"jobs: {enabled: true}", "nats.enabled"},
		{"nats: {enabled: true, url: \"nats://x:4222\"}", "exclude each other"},
		{"nats: {enabled: true, replicas: 2}", "replicas"},
		{"jobs: {enabled: true, streamReplicas: 5}\nnats: {enabled: true}", "streamReplicas"},
		{"jobs: {enabled: true}\nnats: {url: \"http://x:4222\"}", "url"},
		{"nats: {enabled: true, jetstream: {maxFileStore: 10GB}}", "maxFileStore"},
	} {
		if _, err := renderChart(t, tt.values, kubeWithNativeSidecars); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %q: err %v, want one naming %s", tt.values, err, tt.want)
		}
	}
}

// checkJobsSpool: with jobs on, a job's spilled document goes to a volume of its own, the
// directory the ConfigMap names, not to the 64Mi /tmp nor the read-only root file system.
func checkJobsSpool(t *testing.T, r release) {
	t.Helper()
	pod := r.deployment.Spec.Template.Spec
	v := volume(pod, "jobs-spool")
	if v == nil || v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil {
		t.Fatalf("jobs on, but no jobs-spool emptyDir with a size limit: %+v", v)
	}
	if got := v.EmptyDir.SizeLimit.String(); got != "2Gi" {
		t.Errorf("jobs-spool sizeLimit %s, want the default 2Gi", got)
	}
	path, ok := mountPath(container(t, pod.Containers, "ocrgate"), "jobs-spool")
	if !ok || path != r.configMap.Data["OCRGATE_JOBS_DIR"] {
		t.Errorf("jobs-spool mounted at %q (%v), OCRGATE_JOBS_DIR %q", path, ok, r.configMap.Data["OCRGATE_JOBS_DIR"])
	}
}
