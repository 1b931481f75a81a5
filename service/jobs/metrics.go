package jobs

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The jobs' metrics. Counters and histograms are the process's own; the gauges (pages pending,
// store bytes) ask NATS when scraped, so every replica reports the shared figures.
var (
	jobsSubmitted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ocrgate_jobs_submitted_total", Help: "Jobs accepted (202) by this replica."})
	jobsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ocrgate_jobs_finished_total", Help: "Jobs that reached a final state on this replica (its last page read here), by state; canceled ones where DELETE came."}, []string{"state"})
	redeliveries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ocrgate_job_task_redeliveries_total", Help: "Page tasks this replica received again (their first worker died, stopped or failed)."})
	pageSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ocrgate_job_page_seconds", Help: "Time to read one job page on this replica.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)})
	jobSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ocrgate_job_seconds", Help: "Time from a job's submission to its last page.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14)})
)

// Register adds the jobs' metrics to reg.
func (s *Store) Register(reg prometheus.Registerer) error {
	gauge := func(name, help string, f func(ctx context.Context) (float64, error)) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			v, err := f(ctx)
			if err != nil {
				return -1
			}
			return v
		})
	}
	for _, c := range []prometheus.Collector{jobsSubmitted, jobsFinished, redeliveries, pageSeconds, jobSeconds,
		gauge("ocrgate_job_pages_pending", "Page tasks queued or at work, over every replica (-1: NATS did not answer).", func(ctx context.Context) (float64, error) {
			ci, err := s.cons.Info(ctx)
			if err != nil {
				return 0, err
			}
			return float64(ci.NumPending + uint64(ci.NumAckPending)), nil
		}),
		gauge("ocrgate_job_store_bytes", "Bytes of the documents stored for jobs (-1: NATS did not answer).", func(ctx context.Context) (float64, error) {
			b, err := s.StoreBytes(ctx)
			return float64(b), err
		}),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
