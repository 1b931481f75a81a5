//go:build image

package image

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// hardened are the run flags of compose.yaml's ocrgate service: read-only root, a /tmp tmpfs, no
// capabilities, no privilege escalation. The image must work under them.
var hardened = []string{"--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"}

// startOCRGATE runs image as a container called name with its port 8000 on 127.0.0.1:port, a
// memory limit and the hardened flags, waits until /readyz answers 200, and returns the base URL
// and the time from the run to ready.
func startOCRGATE(t *testing.T, name, image string, port int, extra ...string) (string, time.Duration) {
	t.Helper()
	removeStale(name)
	args := append([]string{"run", "-d", "--name", name, "--memory", "768m", "-p", fmt.Sprintf("127.0.0.1:%d:8000", port)}, hardened...)
	args = append(append(args, extra...), image)
	start := time.Now()
	eng(t, args...)
	removeOnCleanup(t, name)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	took, err := waitStatus(base+"/readyz", http.StatusOK, 2*time.Minute)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	_ = took
	return base, time.Since(start)
}

// logLines returns the container's log lines, each decoded as the service's JSON log records.
func logLines(t *testing.T, name string) []map[string]any {
	t.Helper()
	out, err := exec.Command(engine, "logs", name).CombinedOutput()
	if err != nil {
		t.Fatalf("logs %s: %v", name, err)
	}
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("%s: log line is not JSON (OCRGATE_LOG_FORMAT=json): %q", name, l)
			continue
		}
		recs = append(recs, rec)
	}
	return recs
}

func TestCPUImage(t *testing.T) {
	const name = "ocrgate-image-test-cpu"
	base, startup := startOCRGATE(t, name, cpuImage, portCPU)
	note(t, "cpu image: run --memory 768m to /readyz 200 in %.1f s", startup.Seconds())

	t.Run("ping and readyz", func(t *testing.T) {
		r, err := get(base + "/ping")
		if err != nil || r.status != http.StatusOK || string(r.body) != "pong" {
			t.Errorf("GET /ping = %d %q (%v), want 200 pong", r.status, r.body, err)
		}
		r, err = get(base + "/readyz")
		if err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), `"ready"`) {
			t.Errorf("GET /readyz = %d %q (%v), want 200 ready", r.status, r.body, err)
		}
		note(t, "check: /ping 200 pong, /readyz 200")
	})

	t.Run("receipt", func(t *testing.T) {
		want := hostText(t, "receipt.jpg", receipt(t))
		start := time.Now()
		got := ocr(t, base, receipt(t))
		took := time.Since(start)
		if got.Text != want {
			t.Fatalf("/ocr text differs from this machine's binary:\nimage: %q\nhost:  %q", got.Text, want)
		}
		for _, w := range []string{"TOTAL", "19.08", "GREEN LEAF CAFE"} {
			if !strings.Contains(got.Text, w) {
				t.Errorf("/ocr text lacks %q: %q", w, got.Text)
			}
		}
		note(t, "check: /ocr receipt (%d lines) = this machine's binary, %.2f s wall", strings.Count(got.Text, "\n")+1, took.Seconds())
	})

	t.Run("PDF", func(t *testing.T) {
		text := bornDigitalPDF(t)
		got := ocr(t, base, text)
		if want := hostText(t, "invoice.pdf", text); got.Text != want {
			t.Errorf("born-digital PDF: image %q, host %q", got.Text, want)
		}
		if got.ImageInfo.Format != "pdf" || got.ImageInfo.Pages != 2 || len(got.Pages) != 2 || got.Pages[0].Source != "text-layer" ||
			!strings.Contains(got.Text, "INVOICE 2041") {
			t.Errorf("born-digital PDF answered %+v", got)
		}
		scan := scannedPDF(t, 1)
		got = ocr(t, base, scan)
		if want := hostText(t, "scan.pdf", scan); got.Text != want {
			t.Errorf("scanned PDF: image %q, host %q", got.Text, want)
		}
		if len(got.Pages) != 1 || got.Pages[0].Source != "ocr" || !strings.Contains(got.Text, "TOTAL") {
			t.Errorf("scanned PDF answered %+v", got)
		}
		note(t, "check: /ocr PDF: text layer (2 pages) and a scanned page = this machine's binary")
	})

	t.Run("non-root", func(t *testing.T) {
		if u := inspect(t, cpuImage, "{{.Config.User}}"); u != "65532:65532" {
			t.Errorf("image USER %q, want 65532:65532", u)
		}
		status := eng(t, "exec", name, "cat", "/proc/1/status")
		var uid, gid string
		for _, l := range strings.Split(status, "\n") {
			if v, ok := strings.CutPrefix(l, "Uid:"); ok {
				uid = strings.Join(strings.Fields(v), " ")
			}
			if v, ok := strings.CutPrefix(l, "Gid:"); ok {
				gid = strings.Join(strings.Fields(v), " ")
			}
		}
		if uid != "65532 65532 65532 65532" || gid != "65532 65532 65532 65532" {
			t.Errorf("the service runs as uid %q gid %q, want 65532 throughout", uid, gid)
		}
		// The root filesystem is read-only and the models are not the service user's to change.
		if out, err := exec.Command(engine, "exec", name, "touch", "/opt/ocrgate/models/x").CombinedOutput(); err == nil {
			t.Errorf("the service user could write into /opt/ocrgate/models (%s)", out)
		}
		note(t, "check: runs as uid/gid 65532, read-only root, models not writable")
	})

	t.Run("memory plan from the limit", func(t *testing.T) {
		var plan map[string]any
		for _, rec := range logLines(t, name) {
			if rec["msg"] == "memory" {
				plan, _ = rec["plan"].(map[string]any)
			}
			if rec["level"] == "ERROR" {
				t.Errorf("error logged: %v", rec)
			}
		}
		if plan == nil {
			t.Fatalf("no \"memory\" plan in the logs")
		}
		from, _ := plan["limit_from"].(string)
		if plan["limit"] != "768 MiB" || plan["runs"] != 1.0 || !strings.HasPrefix(from, "/sys/fs/cgroup/") {
			t.Errorf("memory plan %v, want limit 768 MiB read from the cgroup, 1 run", plan)
		}
		note(t, "check: memory plan from the container's cgroup (%s): limit %v, %v run(s), budget %v", from, plan["limit"], plan["runs"], plan["budget"])
	})

	t.Run("HEALTHCHECK", func(t *testing.T) {
		format := "{{json .Config.Healthcheck.Test}}" // docker's image inspect
		if isPodman {
			format = "{{json .HealthCheck.Test}}"
		}
		test := strings.TrimSpace(eng(t, "image", "inspect", "--format", format, cpuImage))
		if test != `["CMD","/usr/local/bin/ocrgate","healthcheck"]` {
			t.Fatalf("image HEALTHCHECK %s, want [CMD /usr/local/bin/ocrgate healthcheck] (podman keeps it only with --format docker)", test)
		}
		if isPodman {
			if out, err := exec.Command(engine, "healthcheck", "run", name).CombinedOutput(); err != nil {
				t.Errorf("podman healthcheck run: %v %s", err, out)
			}
		}
		if _, err := waitHealth(name, "healthy", 90*time.Second); err != nil {
			t.Error(err)
		}
		// The same command fails where nothing answers: the check can fail.
		out, err := exec.Command(engine, "run", "--rm", "--network", "none", cpuImage, "healthcheck").CombinedOutput()
		if err == nil {
			t.Errorf("ocrgate healthcheck with no server exited 0 (%s)", out)
		}
		note(t, "check: HEALTHCHECK kept in the image, healthy while serving, fails with no server")
	})
}

// waitHealth polls a container's health status until it is want.
func waitHealth(name, want string, d time.Duration) (time.Duration, error) {
	start := time.Now()
	var last string
	for time.Since(start) < d {
		out, err := engOut("inspect", "--format", "{{.State.Health.Status}}", name)
		last = strings.TrimSpace(out)
		if err == nil && last == want {
			return time.Since(start), nil
		}
		time.Sleep(time.Second)
	}
	return 0, fmt.Errorf("%s: health %q after %s, want %q", name, last, d, want)
}

// TestCPUImageStopDrains stops the container while it reads a multi-page document: the request
// must finish with every page and the process exit 0.
func TestCPUImageStopDrains(t *testing.T) {
	const name = "ocrgate-image-test-drain"
	base, _ := startOCRGATE(t, name, cpuImage, portDrain, "--cpus", "1")
	doc := scannedPDF(t, 6)

	var wg sync.WaitGroup
	var resp response
	var reqErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, reqErr = postOCR(base, doc)
	}()
	// Stop only once the request is being worked on.
	deadline := time.Now().Add(30 * time.Second)
	for metric(t, base+"/metrics", "ocrgate_jobs_in_flight") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the document never showed as a job in flight")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if out, err := exec.Command(engine, "stop", "-t", "60", name).CombinedOutput(); err != nil {
		t.Fatalf("stop: %v %s", err, out)
	}
	stopped := time.Since(start)
	wg.Wait()
	if reqErr != nil || resp.status != http.StatusOK {
		t.Fatalf("request in flight during stop: %v, %d %s", reqErr, resp.status, resp.body)
	}
	var res ocrResult
	if err := json.Unmarshal(resp.body, &res); err != nil || len(res.Pages) != 6 {
		t.Fatalf("request in flight during stop answered %d pages (%v)", len(res.Pages), err)
	}
	for _, p := range res.Pages {
		if !strings.Contains(p.Text, "TOTAL") {
			t.Errorf("page %d lost its text: %q", p.Page, p.Text)
		}
	}
	if code := inspect(t, name, "{{.State.ExitCode}}"); code != "0" {
		t.Errorf("exit code %s after stop, want 0", code)
	}
	var msgs []string
	for _, rec := range logLines(t, name) {
		msg, _ := rec["msg"].(string)
		msgs = append(msgs, msg)
	}
	for _, want := range []string{"shutting down: finishing requests in flight", "stopped"} {
		if !slices.Contains(msgs, want) {
			t.Errorf("logs lack %q: %q", want, msgs)
		}
	}
	note(t, "check: stop during a 6-page scanned PDF: answered 200 with 6 pages, exit 0, stop took %.1f s", stopped.Seconds())
}
