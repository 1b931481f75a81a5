// Command loadgen drives ocrgate with concurrent clients on loopback and reports throughput,
// latency percentiles, status counts and the service's memory.
//
// It starts the service binary itself (so the memory it reports is the service's alone), waits for
// /readyz, sends POST /ocr requests built from a dataset's images from -c clients until -d has
// passed or -n requests were sent, then stops the service with SIGTERM (a graceful shutdown) and
// prints the report. Every request loop is bounded in count and time, and all traffic stays on
// 127.0.0.1.
//
//	go run ./cmd/ocrgate-loadgen -c 8 -d 60s                  # load: 4× what 2 cores run at once
//	go run ./cmd/ocrgate-loadgen -c 1 -n 1000 -checkpoint 100 # soak: RSS after 100 and after 1000
//	go run ./cmd/ocrgate-loadgen -c 4 -n 300 -mix hostile     # every fourth request a hostile file
//	go run ./cmd/ocrgate-loadgen -c 4 -n 300 -mix http        # receipts while the connections are attacked
//	go run ./cmd/ocrgate-loadgen -c 8 -d 10m -mix soak -faults 'recognizer batch=40' -bin bin/ocrgate-faults
//	                                                          # both at once, with panics injected
//
// With -mix hostile every fourth request is one of the uploads that once took the service past
// its memory or its deadline (built by internal/hostile, no downloads): a JPEG frame larger than
// its header, a progressive scan bomb, progressive and 16-bit PNG images that are tiny files but
// legitimately huge, and costly ones within the limits. The report splits statuses by kind.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
)

func main() {
	bin := flag.String("bin", "bin/ocrgate", "ocrgate binary to start")
	dataset := flag.String("dataset", filepath.Join("..", "shared", "datasets", "sroie-dev"), "dataset whose img/ files are sent")
	clients := flag.Int("c", 8, "concurrent clients")
	duration := flag.Duration("d", 60*time.Second, "stop sending after this long")
	total := flag.Int("n", 0, "stop after this many requests (0: only the duration bounds it)")
	checkpoint := flag.Int("checkpoint", 0, "also report the service's RSS after this many requests")
	timeout := flag.Duration("timeout", 60*time.Second, "client timeout per request")
	flag.BoolVar(&hammer, "hammer", false, "retry refused requests at once instead of honouring Retry-After")
	mix := flag.String("mix", "receipts", "what to send: receipts (the dataset's images), hostile (every fourth request a hostile file), http (receipts while heads without bodies, hang-ups, slow bodies and multipart floods attack the connections) or soak (hostile and http at once)")
	flag.StringVar(&faults, "faults", "", "OCRGATE_FAULTS for the service: panic every Nth unit of the kinds named, \"unit=N,unit=N\" (the binary must be built with -tags faults, e.g. make soak-mixed)")
	flag.Parse()
	if *mix != "receipts" && *mix != "hostile" && *mix != "http" && *mix != "soak" {
		fmt.Fprintln(os.Stderr, "loadgen: -mix must be receipts, hostile, http or soak")
		os.Exit(2)
	}
	hostileMix = *mix == "hostile" || *mix == "soak"
	httpMix = *mix == "http" || *mix == "soak"
	if err := run(*bin, *dataset, *clients, *duration, *total, *checkpoint, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// hammer makes clients ignore Retry-After (an abusive client).
var hammer bool

// hostileMix makes every fourth request a hostile file.
var hostileMix bool

// httpMix runs the HTTP attacks (attackHTTP) beside the clients.
var httpMix bool

// faults is OCRGATE_FAULTS for the service (see cmd/ocrgate/faults.go).
var faults string

type sample struct {
	status  int
	code    string // the error's code, for a 5xx
	took    time.Duration
	hostile string // the hostile file's name; "" for a receipt
}

// hostileFile is a request body built from one of internal/hostile's generators.
type hostileFile struct {
	name string
	body []byte
}

func hostileBodies() []hostileFile {
	files := []struct {
		name string
		data []byte
	}{
		{"smuggled 8192² frame", hostile.SmuggledFrame(image.Pt(16, 16), image.Pt(8192, 8192), false)},
		{"scan bomb 1500 scans", hostile.ScanBomb(7071, 7071, 1500)},
		{"tiny 7071² progressive", hostile.HugeProgressive(7071, 7071)},
		{"16-bit PNG bomb 7071²", hostile.PNG16Bomb(7071, 7071, 7071)},
		{"progressive 6000² 60 scans", hostile.ScanBomb(6000, 6000, 60)},
		{"16-bit PNG 4000²", hostile.PNG16Bomb(4000, 4000, 4000)},
		{"progressive 4000² cut short", hostile.HugeProgressive(4000, 4000)},
		{"TIFF of 50000 overlapping IFDs", hostile.TIFFOverlappingIFDs(50_000, 4095)},
		{"TIFF Deflate strip of 290 MB", hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20)},
		{"TIFF G3 without EOLs over 10000 overlapping strips", hostile.TIFFG3NoEOLStrips(10_000, 1, 4<<20)},
		{"TIFF rows of zero-length CCITT runs", hostile.TIFFCCITTZeroRuns(4, 500_000)},
		{"TIFF of 2000 pages of one-pixel tiles", hostile.TIFFManyPages(2000, 1000)},
		{"TIFF palette with an extra plane", hostile.TIFFPaletteExtra(600, 400, true)},
		{"PDF of 2000 pages of 20000 objects", hostile.PDFManyObjects(2000, 20_000)},
		{"PDF of 2000 pages of 40 lines", hostile.PDFTextBook(2000, 40)},
		{"PDF of 2000 pages in new fonts", hostile.PDFNewFonts(2000, 4, 10)},
		{"PDF of 2000 200000-rectangle forms", hostile.PDFFormPages(2000, 200_000)},
		{"PDF page of 33000 short lines", hostile.PDFShortLines(33_000, 8)},
	}
	out := make([]hostileFile, len(files))
	for i, f := range files {
		b, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(f.data)})
		out[i] = hostileFile{f.name, b}
	}
	return out
}

// docTimeout is how long a client waits for a hostile document's answer: the service's longest
// document deadline (OCRGATE_MAX_DOCUMENT_TIMEOUT's default) and a minute more.
const docTimeout = 11 * time.Minute

func run(bin, dataset string, clients int, duration time.Duration, total, checkpoint int, timeout time.Duration) error {
	bodies, err := loadBodies(dataset)
	if err != nil {
		return err
	}
	var hostiles []hostileFile
	if hostileMix {
		hostiles = hostileBodies()
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve")
	// Jobs off: the load is /ocr's, and the resident figures are compared with plans made without
	// the job store.
	cmd.Env = append(os.Environ(), "OCRGATE_ADDR="+addr, "OCRGATE_LOG_LEVEL=warn", "OCRGATE_JOBS=false")
	if faults != "" {
		cmd.Env = append(cmd.Env, "OCRGATE_FAULTS="+faults)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() { _ = cmd.Process.Kill() }() // a service that stopped on SIGTERM below is gone already
	base := "http://" + addr
	if err := waitReady(base, 90*time.Second); err != nil {
		return err
	}
	fmt.Printf("service pid %d on %s ready; RSS %s\n", cmd.Process.Pid, addr, mib(rss(cmd.Process.Pid, "VmRSS")))

	client := &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	// A document's deadline grows with its pages (OCRGATE_TEXT_PAGE_TIMEOUT a text page, up to
	// OCRGATE_MAX_DOCUMENT_TIMEOUT, 10 minutes): a client of the hostile documents waits that long
	// and a little more, or a 2 000-page survey that is still within its deadline reads as a hang.
	docClient := &http.Client{Timeout: max(timeout, docTimeout), Transport: client.Transport}
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	// A hostile document still running a minute after the run is cut there (and said so), so
	// the run does not wait out a long document's deadline.
	docCtx, docCancel := context.WithTimeout(context.Background(), duration+time.Minute)
	defer docCancel()
	baseGoroutines, baseFDs := runtimeGauges(base)
	attackCtx, stopAttacks := context.WithCancel(ctx)
	var attacks sync.WaitGroup
	var attacked attackCounts
	if httpMix {
		attacks.Go(func() { attackHTTP(attackCtx, addr, bodies, &attacked) })
	}
	var (
		mu        sync.Mutex
		samples   []sample
		sent      int
		atCheck   int64
		wg        sync.WaitGroup
		start     = time.Now()
		errorsOut int
		// transportErrors counts the requests that got no answer, by kind of error and of request.
		transportErrors = map[string]int{}
	)
	next := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || (total > 0 && sent >= total) {
			return 0, false
		}
		sent++
		return sent, true
	}
	for range clients {
		wg.Go(func() {
			for {
				n, ok := next()
				if !ok {
					return
				}
				body, kind := bodies[n%len(bodies)], ""
				if len(hostiles) > 0 && n%4 == 3 {
					h := hostiles[(n/4)%len(hostiles)]
					body, kind = h.body, h.name
				}
				t0 := time.Now()
				c, reqCtx := client, context.Background()
				if kind != "" {
					c, reqCtx = docClient, docCtx
				}
				req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, base+"/ocr", bytes.NewReader(body))
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				s := sample{took: time.Since(t0), hostile: kind}
				if err != nil {
					mu.Lock()
					errorsOut++
					what := kind
					if what == "" {
						what = "receipt"
					}
					why := errorKind(err)
					if reqCtx.Err() != nil {
						why = "cut at the run's end"
					}
					transportErrors[why+" ("+what+")"]++
					mu.Unlock()
					continue
				}
				s.status = resp.StatusCode
				if s.status >= 500 {
					var e struct{ Code string }
					_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e) // the code is what is reported; a body that is not JSON has none
					s.code = e.Code
				}
				_, _ = io.Copy(io.Discard, resp.Body) // drained for the connection's reuse; the status is what counts
				_ = resp.Body.Close()
				if s.status == http.StatusTooManyRequests && !hammer {
					// A well-behaved client waits as told (bounded, and never past the run).
					if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
						select {
						case <-time.After(min(time.Duration(secs)*time.Second, 5*time.Second)):
						case <-ctx.Done():
						}
					}
				}
				mu.Lock()
				samples = append(samples, s)
				if checkpoint > 0 && len(samples) == checkpoint {
					atCheck = rss(cmd.Process.Pid, "VmRSS")
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stopAttacks()
	attacks.Wait()
	elapsed := time.Since(start)
	rssEnd, hwm := rss(cmd.Process.Pid, "VmRSS"), rss(cmd.Process.Pid, "VmHWM")
	panics, budget := metric(base, "ocrgate_panics_total"), metric(base, "ocrgate_memory_budget_bytes")
	if httpMix {
		// What the attacks left behind, once the service has closed their connections and
		// fasthttp's idle workers (kept 10 s) have gone: polled for up to 60 s.
		// The clients' own keep-alive connections are closed first: what is left is the service's.
		client.CloseIdleConnections()
		settle := time.Now()
		g, fds := runtimeGauges(base)
		for (g > baseGoroutines+2 || fds > baseFDs+2) && time.Since(settle) < 60*time.Second {
			time.Sleep(time.Second)
			g, fds = runtimeGauges(base)
		}
		fmt.Printf("settled in %s\n", time.Since(settle).Round(time.Second))
		fmt.Printf("attacks: %s\n", attacked.String())
		fmt.Printf("service goroutines %d -> %d, open fds %d -> %d (before the run -> after it)\n", baseGoroutines, g, baseFDs, fds)
		late := 0
		for _, s := range samples {
			// Receipts only: a hostile document's deadline is its own (see docClient).
			if s.hostile == "" && (s.took > timeout-time.Second || s.took > 35*time.Second) {
				late++
			}
		}
		fmt.Printf("receipts past their deadline + 5 s: %d\n", late)
	}

	// Graceful stop: SIGTERM, then the service must exit on its own.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		fmt.Printf("SIGTERM: %v\n", err) // it exited already: Wait below says how
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Printf("service exit: %v\n", err)
		}
	case <-time.After(45 * time.Second):
		fmt.Println("service did not exit within 45s of SIGTERM")
	}

	report(samples, errorsOut, clients, elapsed)
	if errorsOut > 0 {
		fmt.Printf("transport errors by kind: %v\n", transportErrors)
	}
	if hostileMix {
		reportHostile(samples)
	}
	reportServerErrors(samples, panics)
	fmt.Printf("memory budget of the admitted requests %s\n", mib(int64(budget)))
	if checkpoint > 0 && atCheck > 0 {
		fmt.Printf("RSS after %d requests %s, after %d %s (%+.1f%%)\n", checkpoint, mib(atCheck), len(samples), mib(rssEnd),
			100*(float64(rssEnd)/float64(atCheck)-1))
	}
	fmt.Printf("service RSS at end %s, peak %s\n", mib(rssEnd), mib(hwm))
	return nil
}

func report(samples []sample, transportErrors, clients int, elapsed time.Duration) {
	counts := map[int]int{}
	var ok, refused []time.Duration
	for _, s := range samples {
		counts[s.status]++
		switch s.status {
		case http.StatusOK:
			ok = append(ok, s.took)
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			refused = append(refused, s.took)
		}
	}
	fmt.Printf("\n%d clients, %s: %d requests, %.2f requests/s, %.2f OK/s\n", clients, elapsed.Round(time.Millisecond),
		len(samples), float64(len(samples))/elapsed.Seconds(), float64(len(ok))/elapsed.Seconds())
	codes := make([]int, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", counts[c], c))
	}
	fmt.Printf("statuses: %s; transport errors %d\n", strings.Join(parts, " "), transportErrors)
	fmt.Printf("200 latency   p50 %s  p95 %s  p99 %s  max %s\n", pct(ok, 50), pct(ok, 95), pct(ok, 99), pct(ok, 100))
	if len(refused) > 0 {
		fmt.Printf("429/503 latency p50 %s  p99 %s  max %s\n", pct(refused, 50), pct(refused, 99), pct(refused, 100))
	}
}

// reportHostile prints the statuses and the slowest answer of each hostile file, and the
// statuses of the receipts sent beside them.
func reportHostile(samples []sample) {
	type stat struct {
		codes map[int]int
		max   time.Duration
	}
	byKind := map[string]*stat{}
	var kinds []string
	for _, s := range samples {
		k := s.hostile
		if k == "" {
			k = "receipts"
		}
		st := byKind[k]
		if st == nil {
			st = &stat{codes: map[int]int{}}
			byKind[k] = st
			kinds = append(kinds, k)
		}
		st.codes[s.status]++
		st.max = max(st.max, s.took)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		st := byKind[k]
		var parts []string
		for c, n := range st.codes {
			parts = append(parts, fmt.Sprintf("%d×%d", n, c))
		}
		sort.Strings(parts)
		fmt.Printf("  %-28s %s, slowest %s\n", k, strings.Join(parts, " "), st.max.Round(time.Millisecond))
	}
}

// reportServerErrors splits the 5xx answers: 500 internal_error (a unit of work that panicked;
// with -faults, the injected panics the service counted in ocrgate_panics_total) and any other.
func reportServerErrors(samples []sample, panics float64) {
	internal, other := 0, map[string]int{}
	for _, s := range samples {
		switch {
		case s.status < 500:
		case s.status == 500 && s.code == "internal_error":
			internal++
		default:
			other[fmt.Sprintf("%d %s", s.status, s.code)]++
		}
	}
	fmt.Printf("5xx: %d × 500 internal_error (the service counted %.0f panics), other 5xx: %v\n", internal, panics, other)
}

// errorKind names a transport error for the report: a client timeout, a connection reset or
// closed by the service, or another.
func errorKind(err error) string {
	var ne net.Error
	switch msg := err.Error(); {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(msg, "connection reset"):
		return "reset"
	case strings.Contains(msg, "EOF"), strings.Contains(msg, "closed"):
		return "closed"
	case strings.Contains(msg, "broken pipe"):
		return "broken pipe"
	default:
		return "other"
	}
}

// metric sums the samples of a metric on the service's /metrics (every label set), -1 when it
// cannot be read.
func metric(base, name string) float64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if i := strings.LastIndexByte(rest, ' '); i >= 0 {
			if v, err := strconv.ParseFloat(rest[i+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// attackCounts counts the HTTP attacks made.
type attackCounts struct {
	mu     sync.Mutex
	counts map[string]int
}

func (a *attackCounts) add(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts = map[string]int{}
	}
	a.counts[kind]++
}

func (a *attackCounts) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var parts []string
	for k, n := range a.counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// attackHTTP attacks the service's connections until ctx ends, at most 48 attacks at once, one
// started every 100 ms (internal/hostile's HTTP attacks): heads announcing 20 MiB bodies that
// never come, receipts whose client hangs up 300 ms in, 20 MiB bodies sent 4 KiB every 100 ms,
// and multipart bodies of 1 000 parts.
func attackHTTP(ctx context.Context, addr string, bodies [][]byte, counts *attackCounts) {
	ct, flood := hostile.MultipartFlood(1000)
	sem := make(chan struct{}, 48)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case sem <- struct{}{}:
		default:
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			actx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			switch i % 4 {
			case 0:
				counts.add("heads without bodies")
				_ = hostile.HeadOnly(actx, addr, "/ocr", 20<<20) // a refused or cut connection is an outcome this mix provokes
			case 1:
				counts.add("hang-ups")
				_ = hostile.HangUp(actx, addr, "/ocr", "application/json", bodies[i%len(bodies)], 300*time.Millisecond) // a refused or cut connection is an outcome this mix provokes
			case 2:
				counts.add("slow bodies")
				_ = hostile.SlowBody(actx, addr, "/ocr", 20<<20, 4<<10, 100*time.Millisecond) // a refused or cut connection is an outcome this mix provokes
			case 3:
				counts.add("multipart floods")
				_ = hostile.HangUp(actx, addr, "/ocr", ct, flood, 2*time.Second)
			}
		})
	}
}

// runtimeGauges reads the service's goroutines and open file descriptors from /metrics.
func runtimeGauges(base string) (goroutines, fds int) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return -1, -1
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		var v float64
		if _, err := fmt.Sscanf(line, "go_goroutines %g", &v); err == nil {
			goroutines = int(v)
		}
		if _, err := fmt.Sscanf(line, "process_open_fds %g", &v); err == nil {
			fds = int(v)
		}
	}
	return goroutines, fds
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i].Round(time.Millisecond)
}

func loadBodies(dataset string) ([][]byte, error) {
	paths, _ := filepath.Glob(filepath.Join(dataset, "img", "*"))
	if len(paths) == 0 {
		return nil, fmt.Errorf("no images in %s/img: give -dataset DIR (make: DATASET=DIR), a directory with an img/ folder; testdata/receipts in the repository is a small one", dataset)
	}
	slices.Sort(paths)
	var bodies [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(data)})
		bodies = append(bodies, b)
	}
	return bodies, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }() // only its port number was wanted
	return l.Addr().String(), nil
}

func waitReady(base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			_ = resp.Body.Close() // only the status is read
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("service at %s not ready within %s", base, within)
}

// rss reads a memory field (VmRSS, VmHWM) of a process, in bytes.
func rss(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb); err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
