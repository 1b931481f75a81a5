//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
)

// These tests run `ocrgate serve` as separate processes (this test binary, re-executed as the
// command: see TestMain) and kill them with SIGKILL in the middle of a job, on the real models and
// a real NATS server (embedded in one of them).
//
//	go test -tags integration -run 'TestJob' ./cmd/ocrgate

func TestMain(m *testing.M) {
	if os.Getenv("OCRGATE_TEST_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

type process struct {
	cmd  *exec.Cmd
	addr string
	log  *bytes.Buffer
}

// startServe starts `ocrgate serve` with env added to this process's environment and waits
// until it is ready.
func startServe(t *testing.T, env ...string) *process {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve")
	// The memory budget is given a figure, as testEnv does: a race-detector test binary's RSS at
	// rest is no measure of the service's, and derived from it the budget refuses a page.
	cmd.Env = append(os.Environ(), append([]string{"OCRGATE_TEST_AS_COMMAND=1", "OCRGATE_ADDR=" + addr, "OCRGATE_LOG_LEVEL=warn",
		"OCRGATE_MEMORY_BUDGET=" + testEnv("OCRGATE_MEMORY_BUDGET")}, env...)...)
	p := &process{cmd: cmd, addr: addr, log: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if cmd.ProcessState != nil {
			break
		}
	}
	t.Fatalf("ocrgate serve did not get ready: %s", p.log)
	return nil
}

func (p *process) kill() {
	if p.cmd.Process != nil && p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type crashJob struct {
	ID    string
	State string
	Pages struct{ Total, Done, Failed int }
	// Redeliveries are the page tasks given to a worker again.
	Redeliveries int
	// Error is why a failed job failed as a whole.
	Error  *struct{ Code, Error string }
	Result *struct {
		Pages []struct {
			Page  int
			Text  string
			Error *struct{ Code, Error string }
		}
	}
}

func getJob(t *testing.T, addr, id, wait string) (crashJob, error) {
	resp, err := http.Get("http://" + addr + "/jobs/" + id + "?wait=" + wait)
	if err != nil {
		return crashJob{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return crashJob{}, fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	var j crashJob
	return j, json.Unmarshal(body, &j)
}

func submit(t *testing.T, addr string, doc []byte) crashJob {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/jobs", "application/pdf", bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 202 {
		t.Fatalf("submit: %d %s", resp.StatusCode, body)
	}
	var j crashJob
	if err := json.Unmarshal(body, &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// receiptPDF is a scanned PDF of n pages, the repository's receipts in turn.
func receiptPDF(t *testing.T, n int) []byte {
	t.Helper()
	testenv.Models(t)
	dir := filepath.Join(testenv.Receipts(t), "img")
	var jpegs [][]byte
	for _, name := range []string{"thermal.jpg", "photo.jpg"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		jpegs = append(jpegs, data)
	}
	pages := make([][]byte, n)
	for i := range pages {
		pages[i] = jpegs[i%len(jpegs)]
	}
	doc, err := testdoc.Scanned(pages, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// finished waits for the job on addr to end, and checks that every page was answered once.
func finished(t *testing.T, addr, id string, n int, limit time.Duration) crashJob {
	t.Helper()
	for end := time.Now().Add(limit); time.Now().Before(end); {
		j, err := getJob(t, addr, id, "30s")
		if err != nil {
			t.Fatal(err)
		}
		if j.State == "running" || j.State == "queued" {
			continue
		}
		if j.State != "succeeded" || j.Pages.Done != n || j.Pages.Failed != 0 || j.Result == nil || len(j.Result.Pages) != n {
			first := "none"
			if j.Error != nil {
				first = j.Error.Code + ": " + j.Error.Error
			}
			if j.Result != nil {
				for _, p := range j.Result.Pages {
					if p.Error != nil {
						first = p.Error.Code + ": " + p.Error.Error
						break
					}
				}
			}
			t.Fatalf("job ended %s, %+v; first page error: %s", j.State, j.Pages, first)
		}
		for i, p := range j.Result.Pages {
			if p.Page != i+1 || p.Error != nil || p.Text == "" {
				t.Errorf("page %d: %+v", i+1, p)
			}
		}
		return j
	}
	t.Fatalf("job %s not finished within %s", id, limit)
	return crashJob{}
}

// TestJobSurvivesKill: the single service is killed with SIGKILL in the middle of a job and
// started again on the same jobs directory: the job resumes and finishes, every page once.
func TestJobSurvivesKill(t *testing.T) {
	const n = 8
	doc := receiptPDF(t, n)
	dir := t.TempDir()
	p := startServe(t, "OCRGATE_JOBS_DIR="+dir)
	j := submit(t, p.addr, doc)
	for end := time.Now().Add(3 * time.Minute); ; {
		now, err := getJob(t, p.addr, j.ID, "20s")
		if err != nil {
			t.Fatal(err)
		}
		if now.Pages.Done >= 2 || time.Now().After(end) {
			t.Logf("killed with %d of %d pages done", now.Pages.Done, n)
			break
		}
	}
	p.kill()
	p = startServe(t, "OCRGATE_JOBS_DIR="+dir)
	done := finished(t, p.addr, j.ID, n, 5*time.Minute)
	t.Logf("finished after the restart: %+v, %d redeliveries", done.Pages, done.Redeliveries)
}

var pagesRead = regexp.MustCompile(`(?m)^ocrgate_job_page_seconds_count (\d+)$`)

// pagesOf is how many job pages the process read (its metrics).
func pagesOf(p *process) int {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := pagesRead.FindSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

var redeliveredTasks = regexp.MustCompile(`(?m)^ocrgate_job_task_redeliveries_total (\d+)$`)

// redeliveriesOf is how many redelivered tasks the process received (its metrics).
func redeliveriesOf(p *process) int {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := redeliveredTasks.FindSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestJobSpreadsOverProcesses: three processes on one NATS server (embedded in the first, which
// listens on a port) split one job's pages, each taking 20–45 % of the pages read before one of
// them is killed with SIGKILL, half-way; the job still finishes, every page once, and the task the
// killed process held is redelivered to another and counted, in the job and in the metrics.
func TestJobSpreadsOverProcesses(t *testing.T) {
	const n, snapshot = 48, 30
	doc := receiptPDF(t, n)
	nats := freeAddr(t)
	a := startServe(t, "OCRGATE_JOBS_DIR="+t.TempDir(), "OCRGATE_JOBS_LISTEN="+nats)
	b := startServe(t, "OCRGATE_NATS_URL=nats://"+nats)
	c := startServe(t, "OCRGATE_NATS_URL=nats://"+nats)
	j := submit(t, b.addr, doc)
	var shares []int
	for end := time.Now().Add(10 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		shares = []int{pagesOf(a), pagesOf(b), pagesOf(c)}
		if shares[0]+shares[1]+shares[2] >= snapshot || time.Now().After(end) {
			break
		}
	}
	// The third is killed in the middle of a page: a moment after it finished one, when its
	// worker has taken the next task (a page takes seconds; taking the next, milliseconds).
	for end, last := time.Now().Add(2*time.Minute), shares[2]; pagesOf(c) == last && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	shares = []int{pagesOf(a), pagesOf(b), pagesOf(c)}
	c.kill()
	read := shares[0] + shares[1] + shares[2]
	t.Logf("pages read by each process when the third was killed: %v of %d", shares, read)
	for i, s := range shares {
		if share := float64(s) / float64(read); share < 0.20 || share > 0.45 {
			t.Errorf("process %d read %d of the %d pages read (%.0f %%); want 20–45 %%", i+1, s, read, 100*share)
		}
	}
	done := finished(t, a.addr, j.ID, n, 10*time.Minute)
	after := []int{pagesOf(a), pagesOf(b)}
	redelivered := redeliveriesOf(a) + redeliveriesOf(b)
	t.Logf("pages read in all: %d and %d, and %d by the killed one; %d pages counted after a redelivery, %d redelivered tasks received",
		after[0], after[1], shares[2], done.Redeliveries, redelivered)
	if after[0]+after[1]+shares[2] < n {
		t.Errorf("the processes read %d pages; the job has %d", after[0]+after[1]+shares[2], n)
	}
	// The killed process was at work on a page (its worker takes the next task as soon as one
	// ends, and tasks were left): that task went to another once its acknowledgement timed out.
	if done.Redeliveries < 1 || redelivered < done.Redeliveries {
		t.Errorf("redeliveries: %d in the job, %d in the survivors' metrics; want at least one, the metrics at least the job's", done.Redeliveries, redelivered)
	}
}
