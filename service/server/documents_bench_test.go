package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/server"
)

// BenchmarkDocuments measures documents through POST /ocr on the real models, with admission as
// the service runs it (a budget of 824 MiB, two jobs at once): the 20 sroie-dev receipts as one
// scanned PDF (each page a JPEG read from the file) and as one rendered by PDFium (a speck on
// every page), against the same 20 JPEGs sent one by one; and one born-digital invoice page (165
// lines) answered from its text layer against the same page rendered and OCR'd; and a book of 300
// such pages from its text layer (under the OCR page limit of 50). It reports milliseconds per
// page, how far the process's resident memory rose (sampled every 10 ms) over the run, and the
// process's peak resident memory.
//
//	go test -run x -bench Documents -benchtime 1x ./service/server/
//	go test -run x -bench 'Documents/scanned_PDF,_20_pages,_JPEGs' -benchtime 1x ./service/server/   # one, alone
func BenchmarkDocuments(b *testing.B) {
	needModels(b)
	paths, err := filepath.Glob(filepath.Join(testenv.Dataset(b, "sroie-dev"), "img", "*.jpg"))
	if err != nil || len(paths) < 20 {
		b.Fatalf("dataset: %v", err)
	}
	sort.Strings(paths)
	var jpegs [][]byte
	for _, p := range paths[:20] {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		jpegs = append(jpegs, data)
	}
	gate := admission.New(admission.Options{Budget: 824 << 20, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	// 20 receipts are 16 MB of JPEG: 22 MB of base64, over the default body limit.
	app := docApp(b, server.Options{Gate: gate, MaxRequestCost: 824 << 20, RequestTimeout: 5 * time.Minute, MaxBodyBytes: 64 << 20}, nil, nil)
	// The same service without the text-layer check (OCRGATE_TEXT_LAYER_CHECK=0): what the check
	// adds is the difference.
	unchecked := docApp(b, server.Options{Gate: gate, MaxRequestCost: 824 << 20, RequestTimeout: 5 * time.Minute, MaxBodyBytes: 64 << 20}, nil,
		func(c *document.Config) { c.LayerCheck = 0 })
	born, _ := bornDigital(b, denseInvoice())

	run := func(b *testing.B, pages int, send func()) {
		b.Helper()
		var grew uint64
		start, cpu := time.Now(), cpuTime()
		for b.Loop() {
			grew = max(grew, uint64(memlimit.Growth(10*time.Millisecond, send)))
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N*pages), "ms/page")
		// The process's CPU time over the run, per page: what a page costs whatever the load.
		b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N*pages), "CPU-ms/page")
		b.ReportMetric(float64(grew>>20), "MiB-RSS-growth")
		b.ReportMetric(float64(memlimit.RSS()>>20), "MiB-RSS-after")
		// The process's peak: run one sub-benchmark per process (-bench with its name) for the
		// peak of that workload alone, models loaded included.
		b.ReportMetric(float64(memlimit.PeakRSS()>>20), "MiB-peak-RSS")
	}
	postTo := func(b *testing.B, app *checkedApp, data []byte, extra map[string]any) {
		code, body := call(b, app, readRequest(data, extra))
		if code != 200 {
			b.Fatalf("status %d: %.300s", code, body)
		}
		var d struct{ Pages []json.RawMessage }
		if json.Unmarshal(body, &d) != nil {
			b.Fatalf("answer: %.300s", body)
		}
	}
	post := func(b *testing.B, data []byte, extra map[string]any) { postTo(b, app, data, extra) }
	b.Run("scanned PDF, 20 pages, JPEGs read from the file", func(b *testing.B) {
		doc := scanned(b, jpegs, nil, false)
		run(b, 20, func() { post(b, doc, nil) })
	})
	b.Run("scanned PDF, 20 pages, rendered", func(b *testing.B) {
		doc := scanned(b, jpegs, nil, true)
		run(b, 20, func() { post(b, doc, nil) })
	})
	b.Run("20 JPEGs one by one", func(b *testing.B) {
		run(b, 20, func() {
			for _, j := range jpegs {
				post(b, j, nil)
			}
		})
	})
	b.Run("born-digital page, text layer", func(b *testing.B) {
		run(b, 1, func() { post(b, born, nil) })
	})
	b.Run("born-digital page, text layer, unchecked", func(b *testing.B) {
		run(b, 1, func() { postTo(b, unchecked, born, nil) })
	})
	b.Run("born-digital page, OCR", func(b *testing.B) {
		run(b, 1, func() { post(b, born, map[string]any{"ocr": "always"}) })
	})
	// A book: 300 dense born-digital pages (49 500 lines), six times the OCR page limit, read
	// from the text layer in one request.
	b.Run("book", func(b *testing.B) {
		pages := make([][]testdoc.Text, 300)
		for i := range pages {
			pages[i] = append(denseInvoice(), testdoc.Text{X: 56, Y: 800, Size: 9, Text: fmt.Sprintf("Page %d of 300", i+1)})
		}
		book, _ := bornDigital(b, pages...)
		b.Run("checked", func(b *testing.B) { run(b, 300, func() { post(b, book, nil) }) })
		b.Run("unchecked", func(b *testing.B) { run(b, 300, func() { postTo(b, unchecked, book, nil) }) })
	})
}

// denseInvoice is an A4 invoice page of 165 lines: a header and 40 item rows of four columns.
func denseInvoice() []testdoc.Text {
	page := []testdoc.Text{
		{X: 56, Y: 60, Size: 20, Text: "TAX INVOICE"},
		{X: 56, Y: 90, Size: 10, Text: "Invoice number INV-2024-000117"},
		{X: 360, Y: 90, Size: 10, Text: "Date 17 January 2024"},
		{X: 56, Y: 105, Size: 10, Text: "Acme Trading Sdn Bhd, 12 Jalan Example, 50450 Kuala Lumpur"},
	}
	for i := range 40 {
		y := 140 + float64(i)*15
		page = append(page,
			testdoc.Text{X: 56, Y: y, Size: 9, Text: fmt.Sprint(i + 1)},
			testdoc.Text{X: 80, Y: y, Size: 9, Text: fmt.Sprintf("Item description number %d with a long name", i+1)},
			testdoc.Text{X: 380, Y: y, Size: 9, Text: fmt.Sprintf("%d x 12.50", i%7+1)},
			testdoc.Text{X: 480, Y: y, Size: 9, Text: fmt.Sprintf("%.2f", float64(i%7+1)*12.5)},
		)
	}
	return append(page, testdoc.Text{X: 380, Y: 760, Size: 11, Text: "TOTAL RM 1,937.50"})
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
