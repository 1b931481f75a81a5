package ocr_test

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/imaging"
)

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gcCPU is the CPU time the Go runtime's garbage collector has used (its own workers and the
// assists it charged to goroutines).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// densePage is an A4 page at dpi, full of 10-point prose (12-point lines, 2 cm margins), as a
// scan's JPEG: the most text a page holds, so the most a page's recognition costs.
func densePage(b *testing.B, dpi int) []byte {
	px := func(pt float64) int { return int(pt * float64(dpi) / 72) }
	w, h := px(595), px(842)
	words := strings.Fields("the quarterly statement lists every payment received and every invoice still open " +
		"for the account named above together with the balance carried forward from the previous period")
	var lines []string
	for i := 0; (i+1)*px(12)+2*px(57) < h; i++ {
		var s strings.Builder
		for j := i; s.Len() < 88; j++ {
			s.WriteString(words[(j*7+i)%len(words)] + " ")
		}
		lines = append(lines, strings.TrimSpace(s.String()))
	}
	img, _ := drawLines(b, w, h, lines, float64(px(10)), px(57), 0, px(12))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// cpuImages are the images the CPU cost model is calibrated on: sroie-dev's 15 receipts and five
// 600-dpi A4 scans (receipts on a mostly white page), a dense A4 page at 300 and at 600 dpi, and
// the decode-heavy legal files: a progressive JPEG of 60 scans and a 16-bit PNG within the pixel
// limit.
func cpuImages(b *testing.B) (names []string, images map[string][]byte) {
	images = map[string][]byte{
		"dense A4, 300 dpi":           densePage(b, 300),
		"dense A4, 600 dpi":           densePage(b, 600),
		"progressive 6000², 60 scans": hostile.ScanBomb(6000, 6000, 60),
		"16-bit PNG 5000²":            hostile.PNG16Bomb(5000, 5000, 5000),
	}
	paths, err := filepath.Glob(filepath.Join(testenv.Dataset(b, "sroie-dev"), "img", "*.jpg"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("sroie-dev: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		images["sroie-dev "+filepath.Base(p)] = data
	}
	for name := range images {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, images
}

// BenchmarkImageCPU calibrates the CPU cost model (Options.CPUCost) and checks what a request is
// charged: each image is read as the service reads it, under a CPU budget (the job under
// cpubudget.Run, as the server runs it; the goroutines it starts charge their own threads, the
// detector's ONNX Runtime pool is charged from the calling thread's share), one image at a time.
// It reports, per image, the estimate, what the budget was charged, and the CPU time the whole
// process used meanwhile, the garbage collector's included; it fails when an image used more than
// its estimate, or was charged a quarter more than the process used (the detector's pool is
// charged at the calling thread's share, which a busy machine skews).
//
//	go test -run '^$' -bench ImageCPU -benchtime 1x ./service/ocr/
func BenchmarkImageCPU(b *testing.B) {
	p := pipeline(b)
	names, images := cpuImages(b)
	if _, err := p.Run(context.Background(), images["sroie-dev 003.jpg"]); err != nil { // warm
		b.Fatal(err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-30s %10s %10s %10s %8s %8s\n", "image", "estimate", "charged", "process", "ch/proc", "proc/est")
	for _, name := range names {
		data := images[name]
		h, err := p.Inspect(context.Background(), data)
		if err != nil {
			b.Fatal(err)
		}
		est := p.CPUCost(h)
		var charged, used, gc time.Duration
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				budget := cpubudget.New(time.Hour)
				ctx := cpubudget.With(context.Background(), budget)
				start, gcStart := processCPU(), gcCPU()
				if _, err := cpubudget.Run(ctx, func(ctx context.Context) error {
					_, err := p.RunAdmitted(ctx, data, h, nil)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				used, charged, gc = processCPU()-start, budget.Spent(), gcCPU()-gcStart
			}
			b.ReportMetric(est.Seconds(), "estimate-CPU-s")
			b.ReportMetric(charged.Seconds(), "charged-CPU-s")
			b.ReportMetric(used.Seconds(), "process-CPU-s")
			b.ReportMetric(gc.Seconds(), "gc-CPU-s")
			if used > est {
				b.Errorf("used %v of CPU time, more than the %v estimated", used, est)
			}
			if charged > used*5/4+10*time.Millisecond {
				b.Errorf("charged %v, more than the %v the process used", charged, used)
			}
		})
		w, ht := h.UprightSize()
		fmt.Fprintf(&table, "%-30s %10.2f %10.2f %10.2f %8.2f %8.2f  (%d×%d %s)\n", name, est.Seconds(), charged.Seconds(), used.Seconds(),
			charged.Seconds()/used.Seconds(), used.Seconds()/est.Seconds(), w, ht, h.Format)
	}
	b.Log(table.String())
}

// BenchmarkChargeOverhead measures what charging a request's CPU budget costs a receipt: the
// sroie-dev receipts (not the A4 scans) read one after another under a budget, as the service
// reads them, and with no budget (no thread of the work metered), round by round in turns. It
// reports the process's CPU time per receipt each way.
//
//	go test -run '^$' -bench ChargeOverhead -benchtime 3x ./service/ocr/
func BenchmarkChargeOverhead(b *testing.B) {
	p := pipeline(b)
	names, images := cpuImages(b)
	var receipts [][]byte
	var headers []imaging.Header
	for _, name := range names {
		if h, err := p.Inspect(context.Background(), images[name]); err == nil && strings.HasPrefix(name, "sroie-dev") && !h.Half {
			receipts = append(receipts, images[name])
			headers = append(headers, h)
		}
	}
	read := func(budget *cpubudget.Budget) time.Duration {
		start := processCPU()
		for i, data := range receipts {
			ctx := cpubudget.With(context.Background(), budget)
			run := func(ctx context.Context) error { _, err := p.RunAdmitted(ctx, data, headers[i], nil); return err }
			var err error
			if budget != nil {
				_, err = cpubudget.Run(ctx, run)
			} else {
				err = run(ctx)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return processCPU() - start
	}
	read(nil) // warm
	var with, without time.Duration
	for b.Loop() {
		without += read(nil)
		with += read(cpubudget.New(time.Hour))
	}
	per := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(b.N*len(receipts)) }
	b.ReportMetric(per(with), "CPU-ms/receipt-charged")
	b.ReportMetric(per(without), "CPU-ms/receipt-uncharged")
	b.ReportMetric(per(with)/per(without), "charged/uncharged")
}
