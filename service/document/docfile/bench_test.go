package docfile_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// Benchmarks of the document layer (figures in the closing note):
//
//	go test -run '^$' -bench . -benchtime 10x ./service/document/
//
// BenchmarkEngineStartup     compiling PDFium's WebAssembly module (once per process)
// BenchmarkRenderPage        one page's pixels: a scan's JPEG read from the file, a scan rendered
//                            by PDFium, a born-digital invoice rendered for OCR
// BenchmarkTextLayerPage     a born-digital invoice page read from its text layer
// BenchmarkOCRPage           the same page rendered and OCR'd instead
// BenchmarkScannedPDF20      20 scanned receipts, page by page, end to end, with peak RSS
// BenchmarkJPEG20            the same receipts as JPEGs (run it in its own process for RSS)

func BenchmarkEngineStartup(b *testing.B) {
	cache := b.TempDir()
	for _, c := range []struct {
		name string
		cfg  pdfengine.Config
	}{
		{"compile", pdfengine.Config{}},
		{"from-cache", pdfengine.Config{CacheDir: cache}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.cfg.CacheDir != "" { // fill the cache first
				r := docfile.NewReader(docfile.Config{Engine: c.cfg})
				if err := r.Ready(context.Background()); err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
			for b.Loop() {
				r := docfile.NewReader(docfile.Config{Engine: c.cfg})
				if err := r.Ready(context.Background()); err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		})
	}
}

// invoicePage is a dense born-digital page: a header, 40 item rows in four columns, totals.
func invoicePage() []drawn {
	page := []drawn{
		{X: 56, Y: 60, Size: 20, Text: "TAX INVOICE"},
		{X: 56, Y: 90, Size: 10, Text: "Invoice number INV-2024-000117"},
		{X: 360, Y: 90, Size: 10, Text: "Date 17 January 2024"},
		{X: 56, Y: 105, Size: 10, Text: "Acme Trading Sdn Bhd, 12 Jalan Example, 50450 Kuala Lumpur"},
	}
	for i := range 40 {
		y := 140 + float64(i)*15
		page = append(page,
			drawn{X: 56, Y: y, Size: 9, Text: fmt.Sprintf("%d", i+1)},
			drawn{X: 80, Y: y, Size: 9, Text: fmt.Sprintf("Item description number %d with a long name", i+1)},
			drawn{X: 380, Y: y, Size: 9, Text: fmt.Sprintf("%d x 12.50", i%7+1)},
			drawn{X: 480, Y: y, Size: 9, Text: fmt.Sprintf("%.2f", float64(i%7+1)*12.5)},
		)
	}
	return append(page, drawn{X: 380, Y: 760, Size: 11, Text: "TOTAL RM 1,937.50"})
}

func BenchmarkRenderPage(b *testing.B) {
	recs := receipts(b, 0)
	var jpegs [][]byte
	for _, r := range recs {
		jpegs = append(jpegs, r.JPEG)
	}
	invoice, _ := bornDigital(b, invoicePage())
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"scan-jpeg-from-file", scannedPDF(b, jpegs, nil)},
		{"scan-rendered", markedScanPDF(b, jpegs)},
		{"born-digital", invoice},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc := open(b, c.data)
			ctx := context.Background()
			pages := make([]*docfile.Page, doc.NumPages())
			for i := range pages {
				p, err := doc.Page(ctx, i+1)
				if err != nil {
					b.Fatal(err)
				}
				pages[i] = p
			}
			var px int64
			i := 0
			for b.Loop() {
				p := pages[i%len(pages)]
				dec, err := doc.Render(ctx, p, scaleOf(b, p, docfile.Limits{}), nil)
				if err != nil {
					b.Fatal(err)
				}
				px += int64(dec.Width * dec.Height)
				i++
			}
			b.ReportMetric(float64(px)/float64(i)/1e6, "Mpx/page")
		})
	}
}

func BenchmarkTextLayerPage(b *testing.B) {
	data, _ := bornDigital(b, invoicePage())
	doc := open(b, data)
	ctx := context.Background()
	lines := 0
	for b.Loop() {
		p, err := doc.Page(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		if !p.TextUsable().Usable {
			b.Fatal("text layer not usable")
		}
		c := p.RenderCost(scaleOf(b, p, docfile.Limits{}))
		lines = len(p.Lines(c.Width, c.Height))
	}
	b.ReportMetric(float64(lines), "lines")
}

func BenchmarkOCRPage(b *testing.B) {
	data, _ := bornDigital(b, invoicePage())
	doc := open(b, data)
	ctx := context.Background()
	pl := pipeline(b)
	regions := 0
	for b.Loop() {
		p, err := doc.Page(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		dec, err := doc.Render(ctx, p, scaleOf(b, p, docfile.Limits{}), nil)
		if err != nil {
			b.Fatal(err)
		}
		res, err := pl.RunImage(ctx, dec)
		if err != nil {
			b.Fatal(err)
		}
		regions = len(res.Regions)
	}
	b.ReportMetric(float64(regions), "regions")
}

// BenchmarkScannedPDF20 reads a 20-page scanned PDF the way the service will: open, then page by
// page render and OCR, one page's pixels alive at a time. It reports the time per page and the
// peak resident memory during the run (sampled every 10 ms) and over the whole process
// (VmHWM, which includes loading the models and compiling the engine).
func BenchmarkScannedPDF20(b *testing.B) {
	recs := receipts(b, 0)
	var jpegs [][]byte
	for _, r := range recs {
		jpegs = append(jpegs, r.JPEG)
	}
	data := scannedPDF(b, jpegs, nil)
	pl := pipeline(b)
	r := testReader(b)
	if err := r.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	base := uint64(memlimit.RSS())
	stop := sampleRSS()
	pages := 0
	var renderTime, ocrTime time.Duration
	for b.Loop() {
		ctx := context.Background()
		doc, err := r.Open(ctx, data)
		if err != nil {
			b.Fatal(err)
		}
		for n := 1; n <= doc.NumPages(); n++ {
			p, err := doc.Page(ctx, n)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			dec, err := doc.Render(ctx, p, scaleOf(b, p, docfile.Limits{}), nil)
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := pl.RunImage(ctx, dec); err != nil {
				b.Fatal(err)
			}
			renderTime += t1.Sub(t0)
			ocrTime += time.Since(t1)
			pages++
		}
		doc.Close()
	}
	peak := stop()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(pages), "ms/page")
	b.ReportMetric(float64(renderTime.Milliseconds())/float64(pages), "render_ms/page")
	b.ReportMetric(float64(ocrTime.Milliseconds())/float64(pages), "ocr_ms/page")
	b.ReportMetric(float64(base>>20), "rss_before_MiB")
	b.ReportMetric(float64(peak>>20), "peak_rss_MiB")
	b.ReportMetric(float64(hwm()>>20), "vmhwm_MiB")
}

// BenchmarkJPEG20 is the baseline for BenchmarkScannedPDF20: the same 20 receipts sent as JPEGs.
func BenchmarkJPEG20(b *testing.B) {
	recs := receipts(b, 0)
	pl := pipeline(b)
	base := uint64(memlimit.RSS())
	stop := sampleRSS()
	for b.Loop() {
		for _, r := range recs {
			if _, err := pl.Run(context.Background(), r.JPEG); err != nil {
				b.Fatal(err)
			}
		}
	}
	peak := stop()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(recs)), "ms/page")
	b.ReportMetric(float64(base>>20), "rss_before_MiB")
	b.ReportMetric(float64(peak>>20), "peak_rss_MiB")
	b.ReportMetric(float64(hwm()>>20), "vmhwm_MiB")
}

// sampleRSS samples resident memory every 10 ms until the returned function is called, which
// returns the peak.
func sampleRSS() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if m := uint64(memlimit.RSS()); m > peak.Load() {
				peak.Store(m)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// hwm is the process's peak resident memory (Linux VmHWM), 0 where unknown.
func hwm() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb uint64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}
