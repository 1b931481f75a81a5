package server_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/server"
)

// BenchmarkCheckedRealPages measures what the text-layer check costs on real born-digital pages,
// which no test may hold: the pages are named by OCRGATE_BENCH_PAGES (FILE:PAGE, separated by
// spaces; public test PDFs, kept outside the repository), each sent alone through POST /ocr with
// the check (the service's default) and without it (OCRGATE_TEXT_LAYER_CHECK=0). It reports the
// process's CPU time per page for each, and their ratio, which the check must keep within 2.
//
//	OCRGATE_BENCH_PAGES='a.pdf:1 b.pdf:2' go test -run x -bench CheckedRealPages -benchtime 1x ./service/server/
func BenchmarkCheckedRealPages(b *testing.B) {
	spec := os.Getenv("OCRGATE_BENCH_PAGES")
	if spec == "" {
		b.Skip("OCRGATE_BENCH_PAGES names no pages")
	}
	needModels(b)
	type page struct {
		data []byte
		n    int
	}
	var pages []page
	for _, f := range strings.Fields(spec) {
		path, num, _ := strings.Cut(f, ":")
		n, err := strconv.Atoi(num)
		if err != nil {
			n = 1
		}
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, page{data, n})
	}
	opt := server.Options{RequestTimeout: time.Minute}
	checked := docApp(b, opt, nil, nil)
	unchecked := docApp(b, opt, nil, func(c *document.Config) { c.LayerCheck = 0 })
	perPage := map[string]float64{}
	for _, mode := range []struct {
		name string
		app  *checkedApp
	}{{"checked", checked}, {"unchecked", unchecked}} {
		b.Run(mode.name, func(b *testing.B) {
			// The models and the engine warm first.
			readDocument(b, mode.app, pages[0].data, map[string]any{"pages": strconv.Itoa(pages[0].n)})
			cpu := cpuTime()
			for b.Loop() {
				for _, p := range pages {
					readDocument(b, mode.app, p.data, map[string]any{"pages": strconv.Itoa(p.n)})
				}
			}
			perPage[mode.name] = float64((cpuTime() - cpu).Microseconds()) / 1e3 / float64(b.N*len(pages))
			b.ReportMetric(perPage[mode.name], "CPU-ms/page")
			if u := perPage["unchecked"]; mode.name == "unchecked" && u > 0 {
				b.ReportMetric(perPage["checked"]/u, "checked/unchecked")
			}
		})
	}
}
