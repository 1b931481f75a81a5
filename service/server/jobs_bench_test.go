package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/server"
)

// BenchmarkJobPageCPU compares the CPU time of a scanned page read in a job with the same page
// read by a synchronous /ocr of the whole document, in one run on one process (JOB_PAGES pages,
// the repository's receipts in turn; within /ocr's page limit, so that both read the same pages).
//
//	go test -run '^$' -bench JobPageCPU -benchtime 1x ./service/server
func BenchmarkJobPageCPU(b *testing.B) {
	needModels(b)
	const n = 24
	app, _ := jobApp(b, server.Options{}, jobs.Config{Workers: 2})
	doc := scannedPages(b, n)
	readDocument(b, app, doc, nil) // warm the runtime and the engine
	var sync, job time.Duration
	for b.Loop() {
		start := cpuTime()
		readDocument(b, app, doc, nil)
		sync += cpuTime() - start
		start = cpuTime()
		_, j, _ := submitJob(b, app, doc, "", "")
		if j = waitJob(b, app, j.ID, "", 10*time.Minute); j.State != "succeeded" {
			b.Fatalf("job %s", j.State)
		}
		job += cpuTime() - start
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N*n) }
	b.ReportMetric(per(sync), "sync-CPU-s/page")
	b.ReportMetric(per(job), "job-CPU-s/page")
	b.ReportMetric(per(job)/per(sync), "job/sync")
}

// BenchmarkReceiptsDuringJob measures the p50 latency of receipts sent one after another to an
// idle service, then while a scanned job of 60 pages runs on the same service (its workers take
// pages only while no request waits), then idle again, and reports each run's ratio of the p50
// during the job to the mean of the idle p50s just before and after it (the machine's load,
// shared with other work, moves less within a run than between runs), and their median.
//
//	go test -run '^$' -bench ReceiptsDuringJob -benchtime 3x -v ./service/server
func BenchmarkReceiptsDuringJob(b *testing.B) {
	needModels(b)
	const n, receipts = 60, 20
	gate := admission.New(admission.Options{Budget: 2 << 30, MaxRunning: 2, MaxQueue: 16, MaxWait: time.Minute})
	app, _ := jobApp(b, server.Options{Gate: gate}, jobs.Config{Workers: 1})
	img := fixtures(b).receipt
	p50 := func() time.Duration {
		var ds []time.Duration
		for range receipts {
			start := time.Now()
			if code, body := call(b, app, ocrRequest(img)); code != 200 {
				b.Fatalf("%d %s", code, body)
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	p50() // warm
	doc := scannedPages(b, n)
	var ratios []float64
	run := 0
	for b.Loop() {
		run++
		before := p50()
		_, j, _ := submitJob(b, app, doc, "", "")
		time.Sleep(2 * time.Second) // its pages under way
		busy := p50()
		if _, body := jobCall(b, app, "GET", "/jobs/"+j.ID, ""); strings.Contains(string(body), `"succeeded"`) {
			b.Logf("the job ended before the receipts did")
		}
		if code, body := jobCall(b, app, "DELETE", "/jobs/"+j.ID, ""); code != 204 {
			b.Fatalf("delete: %d %s", code, body)
		}
		after := p50()
		idle := (before + after) / 2
		ratios = append(ratios, float64(busy)/float64(idle))
		b.Logf("run %d: receipt p50 %.3f s idle before, %.3f s during the job, %.3f s idle after: %.2f×",
			run, before.Seconds(), busy.Seconds(), after.Seconds(), ratios[len(ratios)-1])
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
}
