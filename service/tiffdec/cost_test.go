package tiffdec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
)

// BenchmarkDecodeCPU measures what Plan.CPU estimates against the CPU time decoding takes (the
// decoding thread's CPU clock): est/cpu is the ratio, which must stay above 1. The pages are the
// reference pages testdata/bench.sh writes from real scans into TIFF_BENCH_DIR (receipt photos
// and an A4 page at 300 dpi, in every compression, depth and layout scanners and fax servers
// write), this package's test set, and the hostile generators' pages. Without TIFF_BENCH_DIR
// only the last two are measured.
//
//	sh service/tiffdec/testdata/bench.sh /tmp/tiffdec-bench
//	TIFF_BENCH_DIR=/tmp/tiffdec-bench go test -run x -bench DecodeCPU -benchtime 5x ./service/tiffdec/
func BenchmarkDecodeCPU(b *testing.B) {
	// Pages are read (or made) one at a time: a collection's work for a large live heap (every
	// page's bytes at once) would land on the decodes measured.
	type page struct {
		name string
		data func() []byte
	}
	var pages []page
	var files []string
	if dir := os.Getenv("TIFF_BENCH_DIR"); dir != "" {
		files, _ = filepath.Glob(filepath.Join(dir, "*.tif"))
	}
	set, _ := filepath.Glob(filepath.Join("testdata", "*.tif"))
	for _, name := range append(files, set...) {
		pages = append(pages, page{filepath.Base(name), func() []byte {
			data, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			return data
		}})
	}
	pages = append(pages,
		page{"hostile: G3 without EOLs over 10000 strips of 4 MB", func() []byte { return hostile.TIFFG3NoEOLStrips(10_000, 1, 4<<20) }},
		page{"hostile: Deflate bomb 7000² 1-bit", func() []byte { return hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20) }},
		page{"hostile: one-pixel tiles, 2000²", func() []byte { return hostile.TIFFManyPages(1, 2000) }},
	)
	var ratios []float64
	for _, pg := range pages {
		f, err := Open(context.Background(), pg.data(), Limits{})
		if err != nil {
			continue // the set's unsupported and corrupt files
		}
		p := &f.Pages[0]
		plan, err := p.Plan()
		if err != nil {
			continue
		}
		if _, err := f.Decode(context.Background(), p); err != nil {
			continue
		}
		b.Run(pg.name, func(b *testing.B) {
			// The median decode: a collection's assist work for garbage other pages left (the
			// benchmark's large pages) lands on whichever decode allocates then.
			var runs []time.Duration
			for b.Loop() {
				m := cpubudget.StartMeter()
				_, err := f.Decode(context.Background(), p)
				runs = append(runs, m.Stop())
				if err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(runs)
			per := runs[len(runs)/2]
			ratio := float64(plan.CPU) / float64(per)
			ratios = append(ratios, ratio)
			b.ReportMetric(per.Seconds()*1e3, "cpu-ms/op")
			b.ReportMetric(plan.CPU.Seconds()*1e3, "est-ms")
			b.ReportMetric(ratio, "est/cpu")
		})
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.Logf("est/cpu over %d pages: least %.2f, median %.2f, most %.2f", len(ratios), ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
	}
}
