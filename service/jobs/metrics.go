package jobs

import (
	"context"
	"errors"
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
	for _, c := range []prometheus.Collector{jobsSubmitted, jobsFinished, redeliveries, pageSeconds, jobSeconds, byState{s},
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

// byState is the live ocrgate_jobs gauge: the jobs the store holds now, by state, read from their
// records when scraped, so that every replica reports the same figures and none drifts (a
// counter per replica would miss the jobs another finished, or one that restarted). A deleted
// job's record is gone at once, so canceled is 0 but for the moment of a delete.
type byState struct{ s *Store }

var jobsDesc = prometheus.NewDesc("ocrgate_jobs", "Jobs the store holds now, by state, over every replica (read from the job records when scraped; absent when NATS did not answer).", []string{"state"}, nil)

// Describe implements prometheus.Collector.
func (b byState) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

// Collect implements prometheus.Collector.
func (b byState) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := b.s.States(ctx)
	if err != nil {
		return
	}
	for _, st := range []State{Queued, Running, Succeeded, Failed, Canceled} {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n[st]), string(st))
	}
}

// States counts the jobs the store holds, by state.
func (s *Store) States(ctx context.Context) (map[State]int, error) {
	lister, err := s.jobs.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	n := map[State]int{}
	for k := range lister.Keys() {
		j, _, err := s.load(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			_ = lister.Stop()
			return nil, err
		}
		n[j.State]++
	}
	return n, ctx.Err()
}
