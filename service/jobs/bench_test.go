package jobs

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/memlimit"
)

// BenchmarkEmbeddedAtRest measures what the embedded NATS server with the jobs' streams and
// buckets costs at rest: the resident memory it adds, and its start-up time.
//
//	go test -run '^$' -bench EmbeddedAtRest -benchtime 3x ./service/jobs
func BenchmarkEmbeddedAtRest(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var grew, took float64
	for b.Loop() {
		runtime.GC()
		memlimit.Release()
		before := memlimit.RSS()
		start := time.Now()
		s, err := Open(context.Background(), Config{Dir: b.TempDir(), Workers: 1}, log)
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(start).Seconds()
		time.Sleep(2 * time.Second) // at rest: its timers have run
		runtime.GC()
		memlimit.Release()
		grew += float64(memlimit.RSS() - before)
		_ = s.Close()
	}
	b.ReportMetric(grew/float64(b.N)/(1<<20), "MiB-at-rest")
	b.ReportMetric(took/float64(b.N)*1000, "ms-start")
}
