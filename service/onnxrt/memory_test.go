package onnxrt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// runMemoryChildEnv names the case a child process of BenchmarkRunMemory measures.
const runMemoryChildEnv = "OCRGATE_RUN_MEMORY_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(runMemoryChildEnv); spec != "" {
		os.Exit(runMemoryChild(spec))
	}
	os.Exit(m.Run())
}

// runMemoryCase is one measurement: a model run on inputs of one shape, parallel runs at once
// (as batches of one request, or detections of concurrent requests, share a session), repeated
// rounds times.
type runMemoryCase struct {
	model    ocr.Model
	shape    []int64
	parallel int
	rounds   int
}

func (c runMemoryCase) String() string {
	dims := make([]string, len(c.shape))
	for i, d := range c.shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	return fmt.Sprintf("%s %s ×%d r%d", c.model, strings.Join(dims, "x"), c.parallel, c.rounds)
}

func parseRunMemoryCase(s string) (runMemoryCase, error) {
	var c runMemoryCase
	var model, shape string
	if _, err := fmt.Sscanf(s, "%s %s ×%d r%d", &model, &shape, &c.parallel, &c.rounds); err != nil {
		return c, fmt.Errorf("case %q: %w", s, err)
	}
	c.model = ocr.Model(model)
	for _, d := range strings.Split(shape, "x") {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return c, err
		}
		c.shape = append(c.shape, n)
	}
	return c, nil
}

// runMemoryMeasure is what a child reports: the growth of the peak RSS over the runs, less the
// Go outputs they returned (which the pipeline's cost counts itself), and the RSS the runs left
// behind (what the session's arena keeps).
type runMemoryMeasure struct {
	Growth   int64 `json:"growth"`
	Kept     int64 `json:"kept"`
	OutBytes int64 `json:"out_bytes"`
}

// runMemoryChild opens the models as the service does (prepared models, the int8 recognizer, the
// recognizer and classifier single-threaded, inputs above a 960×960 detector input on sessions
// of their own) and measures one case.
func runMemoryChild(spec string) int {
	c, err := parseRunMemoryCase(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	home := config.Home(os.Getenv)
	dir := filepath.Join(home, "models")
	rt, err := Open(Options{
		LibraryPath: filepath.Join(home, "lib", "libonnxruntime.so.1"),
		Models: map[ocr.Model]string{
			ocr.Detector:   filepath.Join(dir, "ch_PP-OCRv4_det_infer.prepared.onnx"),
			ocr.Recognizer: filepath.Join(dir, "ch_PP-OCRv4_rec_infer.int8.onnx"),
			ocr.Classifier: filepath.Join(dir, "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx"),
		},
		IntraOpThreads: runtime.NumCPU(),
		Threads:        map[ocr.Model]int{ocr.Recognizer: 1, ocr.Classifier: 1},
		ArenaMaxInput:  3 * 960 * 960,
		Arena:          Arena(os.Getenv("RM_ARENA")),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer rt.Close()
	in := randomTensor(c.shape...)
	debug.SetGCPercent(10)
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		fmt.Fprintln(os.Stderr, "cannot reset the peak RSS:", err)
		return 2
	}
	before := memlimit.RSS()
	var m runMemoryMeasure
	var mu sync.Mutex
	for range c.rounds {
		var wg sync.WaitGroup
		for range c.parallel {
			wg.Go(func() {
				out, err := rt.Infer(context.Background(), c.model, in)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				m.OutBytes = max(m.OutBytes, int64(len(out.Data))*4*int64(c.parallel))
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	m.Growth = memlimit.PeakRSS() - before - m.OutBytes
	runtime.GC()
	debug.FreeOSMemory()
	m.Kept = memlimit.RSS() - before
	json.NewEncoder(os.Stdout).Encode(m)
	return 0
}

// BenchmarkRunMemory measures what ONNX Runtime allocates in this process for one model run
// (Memory), each case in a fresh process: the growth of the peak RSS less the
// Go output, per input pixel, and what the run leaves behind.
//
//	go test -run x -bench RunMemory -benchtime 1x ./service/onnxrt/
func BenchmarkRunMemory(b *testing.B) {
	var cases []runMemoryCase
	for _, side := range [][2]int64{{320, 320}, {640, 480}, {960, 704}, {960, 960}, {1248, 1248}, {1728, 1728}} {
		cases = append(cases, runMemoryCase{ocr.Detector, []int64{1, 3, side[0], side[1]}, 1, 1})
	}
	cases = append(cases, runMemoryCase{ocr.Detector, []int64{1, 3, 960, 960}, 2, 1})
	for _, w := range []int64{64, 320, 960, 2560} {
		cases = append(cases, runMemoryCase{ocr.Recognizer, []int64{6, 3, 48, w}, 1, 1})
		cases = append(cases, runMemoryCase{ocr.Recognizer, []int64{6, 3, 48, w}, 2, 1})
	}
	cases = append(cases, runMemoryCase{ocr.Classifier, []int64{6, 3, 48, 192}, 2, 1})
	if f := os.Getenv("RM_FILTER"); f != "" {
		var keep []runMemoryCase
		for _, c := range cases {
			if strings.Contains(c.String(), f) {
				keep = append(keep, c)
			}
		}
		cases = keep
	}
	for _, c := range cases {
		b.Run(c.String(), func(b *testing.B) {
			var m runMemoryMeasure
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), runMemoryChildEnv+"="+c.String())
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v", err)
				}
				if err := json.Unmarshal(out, &m); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
			}
			px := int64(c.parallel)
			for _, d := range c.shape {
				px *= d
			}
			px /= 3 // pixels, not values
			b.ReportMetric(float64(m.Growth)/(1<<20), "growth-MiB")
			b.ReportMetric(float64(m.Growth)/float64(px), "B/px")
			b.ReportMetric(float64(m.Kept)/(1<<20), "kept-MiB")
		})
	}
}
