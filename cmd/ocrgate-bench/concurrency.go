package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocrgate/ocrgate/service/ocr"
)

// ConcurrencyOptions select a concurrency measurement.
type ConcurrencyOptions struct {
	Dataset string
	Clients int // requests in flight in the concurrent passes (the sequential passes have one)
	Rounds  int // rounds of (one sequential pass, one concurrent pass), alternating
	Passes  int // passes over the dataset per measurement
}

// ConcurrencyRound is one sequential pass and one concurrent pass, run back to back.
type ConcurrencyRound struct {
	Sequential, Concurrent Load
}

// Load is what one pass with a fixed number of clients measured.
type Load struct {
	Clients   int
	Images    int
	Wall      time.Duration
	P50, P95  time.Duration // per-image latency
	ImagesPer float64       // images per second
}

// RunConcurrency measures what the pipeline does with one request in flight and with several,
// alternating the two round by round so machine drift hits both alike. Each client takes the
// next image of the dataset until every image was read Passes times, as requests arriving
// back to back would.
func RunConcurrency(ctx context.Context, p *ocr.Pipeline, opt ConcurrencyOptions) ([]ConcurrencyRound, error) {
	_, images, err := readImages(opt.Dataset)
	if err != nil {
		return nil, err
	}
	// Warm every session the clients will use: one run alone, then one with all clients at once.
	if _, err := load(ctx, p, images[:1], 1, 1); err != nil {
		return nil, err
	}
	if _, err := load(ctx, p, images[:min(opt.Clients, len(images))], opt.Clients, 1); err != nil {
		return nil, err
	}
	var rounds []ConcurrencyRound
	for range max(1, opt.Rounds) {
		var r ConcurrencyRound
		if r.Sequential, err = load(ctx, p, images, 1, opt.Passes); err != nil {
			return nil, err
		}
		if r.Concurrent, err = load(ctx, p, images, opt.Clients, opt.Passes); err != nil {
			return nil, err
		}
		rounds = append(rounds, r)
	}
	return rounds, nil
}

// load runs every image passes times with clients requests in flight.
func load(ctx context.Context, p *ocr.Pipeline, images [][]byte, clients, passes int) (Load, error) {
	n := len(images) * max(1, passes)
	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t := time.Now()
				_, err := p.Run(ctx, images[i%len(images)])
				d := time.Since(t)
				mu.Lock()
				lat = append(lat, d)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return Load{}, firstErr
	}
	slices.Sort(lat)
	return Load{
		Clients:   clients,
		Images:    n,
		Wall:      wall,
		P50:       lat[len(lat)/2],
		P95:       lat[min(len(lat)-1, len(lat)*95/100)],
		ImagesPer: float64(n) / wall.Seconds(),
	}, nil
}

// PrintConcurrency writes each round and the median ratios (concurrent / sequential throughput,
// and p50 latency), the figures the targets are stated in.
func PrintConcurrency(w io.Writer, rounds []ConcurrencyRound) {
	var thr, p50 []float64
	for i, r := range rounds {
		s, c := r.Sequential, r.Concurrent
		tr, lr := c.ImagesPer/s.ImagesPer, float64(c.P50)/float64(s.P50)
		thr, p50 = append(thr, tr), append(p50, lr)
		fmt.Fprintf(w, "round %d: 1 client %.3f images/s p50 %v p95 %v | %d clients %.3f images/s p50 %v p95 %v | throughput ×%.3f, p50 ×%.3f\n",
			i+1, s.ImagesPer, s.P50.Round(time.Millisecond), s.P95.Round(time.Millisecond),
			c.Clients, c.ImagesPer, c.P50.Round(time.Millisecond), c.P95.Round(time.Millisecond), tr, lr)
	}
	fmt.Fprintf(w, "median: throughput ratio %.3f (target ≥ 1.3), p50 ratio %.3f (target ≤ 1.8)\n", median(thr), median(p50))
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
