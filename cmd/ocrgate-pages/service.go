package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// service is an ocrgate the pages are sent to: one this command started, or one it was pointed
// at. pid is its process, whose CPU time is read around each request (0: not known, no CPU
// figures).
type service struct {
	base   string
	pid    int
	client *http.Client
	cmd    *exec.Cmd // nil when not started here
}

// startService starts bin serve on a free loopback port with env added to this process's
// environment, and waits for /readyz.
func startService(ctx context.Context, bin string, env []string, log io.Writer) (*service, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close() // only its port number was wanted
	cmd := exec.Command(bin, "serve")
	// Jobs off: this service answers /ocr only, and its job store would hold the one directory a
	// running `make run` (or the second service of -modes unchecked) also wants.
	cmd.Env = append(append(os.Environ(), "OCRGATE_ADDR="+addr, "OCRGATE_LOG_LEVEL=warn", "OCRGATE_JOBS=false"), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &service{base: "http://" + addr, pid: cmd.Process.Pid, client: httpClient(), cmd: cmd}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/readyz", nil)
		resp, err := s.client.Do(req)
		if err == nil {
			_ = resp.Body.Close() // only the status is read
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("%s serve not ready on %s within 2 minutes", bin, addr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// httpClient sends the pages; each request's context bounds it.
func httpClient() *http.Client { return &http.Client{} }

// stop ends a service this command started: SIGTERM, then SIGKILL after 10 s.
func (s *service) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill() // it did not stop on SIGTERM; the figures are taken
		<-done
	}
}

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on every Linux the
// service runs on.
const userHZ = 100

// cpu is the service's CPU time so far, user and system (/proc/PID/stat fields 14 and 15); -1
// when it cannot be read.
func (s *service) cpu() time.Duration {
	if s.pid <= 0 {
		return -1
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.pid), "stat"))
	if err != nil {
		return -1
	}
	return parseStat(string(data))
}

// parseStat reads utime + stime from the text of /proc/PID/stat. The command name (field 2) is
// in parentheses and may hold spaces, so fields are counted from the last ')'.
func parseStat(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(ut+st) * time.Second / userHZ
}

// answer is what /ocr says of a document (pages) or of an image (regions at the top).
type answer struct {
	ImageInfo struct {
		Pages int `json:"pages"`
	} `json:"image_info"`
	Pages   []pageAnswer `json:"pages"`
	Regions []region     `json:"regions"`
	Text    string       `json:"text"`
	// An error answer.
	Error string `json:"error"`
	Code  string `json:"code"`
}

type pageAnswer struct {
	Page         int      `json:"page"`
	Source       string   `json:"source"`
	SourceReason string   `json:"source_reason"`
	Confidence   float64  `json:"confidence"`
	Regions      []region `json:"regions"`
	Text         string   `json:"text"`
	Error        *struct {
		Code string `json:"code"`
	} `json:"error"`
	// What the text-layer check read, and the layer's text dropped as unseen.
	Check *struct {
		Probes    int `json:"probes"`
		Agreed    int `json:"agreed"`
		Disagreed int `json:"disagreed"`
	} `json:"text_layer_check"`
	Hidden *struct {
		Characters int      `json:"characters"`
		Reasons    []string `json:"reasons"`
	} `json:"hidden_text"`
}

type region struct {
	Text   string `json:"text"`
	Source string `json:"source"` // set where a page mixes the layer and OCR
}

// reply is one page's answer with what it cost.
type reply struct {
	Status int
	Raw    []byte
	Answer answer
	CPU    time.Duration // the service's CPU time over the request; -1 when unknown
	Wall   time.Duration
}

// send posts one page of a file to /ocr as a form (file, pages, ocr) and waits for the answer.
// It is the only request in flight, so the service's CPU time over it is the page's.
func (s *service) send(ctx context.Context, name string, data []byte, page int, ocrMode string) (reply, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", filepath.Base(name))
	if err != nil {
		return reply{}, err
	}
	if _, err := part.Write(data); err != nil {
		return reply{}, err
	}
	for k, v := range map[string]string{"pages": strconv.Itoa(page), "ocr": ocrMode, "words": "false"} {
		if err := w.WriteField(k, v); err != nil {
			return reply{}, err
		}
	}
	if err := w.Close(); err != nil {
		return reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/ocr", &body)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	cpu0, t0 := s.cpu(), time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s page %d: %w", name, page, err)
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // read whole
	r := reply{Status: resp.StatusCode, Raw: raw, Wall: time.Since(t0), CPU: -1}
	if cpu1 := s.cpu(); cpu0 >= 0 && cpu1 >= 0 {
		r.CPU = cpu1 - cpu0
	}
	if err != nil {
		return r, fmt.Errorf("%s page %d: %w", name, page, err)
	}
	if err := json.Unmarshal(raw, &r.Answer); err != nil {
		return r, fmt.Errorf("%s page %d: status %d, not JSON: %w", name, page, resp.StatusCode, err)
	}
	return r, nil
}

// errNoPage is an answer that holds no page of the number asked for.
var errNoPage = errors.New("the answer holds no such page")

// page finds the answer's page n: a document's entry, or an image's answer as page 1 (an image,
// or a one-page TIFF, is always OCR'd).
func (a answer) page(n int) (pageAnswer, error) {
	if a.Pages == nil {
		if n != 1 {
			return pageAnswer{}, errNoPage
		}
		return pageAnswer{Page: 1, Source: "ocr", SourceReason: "image", Regions: a.Regions, Text: a.Text}, nil
	}
	for _, p := range a.Pages {
		if p.Page == n {
			return p, nil
		}
	}
	return pageAnswer{}, errNoPage
}

// lines are the page's answered lines: its regions' texts (a region is a line), else its text's
// lines.
func (p pageAnswer) lines() []string {
	if len(p.Regions) == 0 {
		if p.Text == "" {
			return nil
		}
		return strings.Split(p.Text, "\n")
	}
	out := make([]string, len(p.Regions))
	for i, r := range p.Regions {
		out[i] = r.Text
	}
	return out
}

// source is the page's source, "mixed" where its regions say different ones.
func (p pageAnswer) source() string {
	seen := ""
	for _, r := range p.Regions {
		switch {
		case r.Source == "":
		case seen == "":
			seen = r.Source
		case r.Source != seen:
			return "mixed"
		}
	}
	if p.Source == "" {
		return "none"
	}
	return p.Source
}
