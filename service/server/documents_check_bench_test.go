package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/server"
)

// BenchmarkLayerCheck is what checking a born-digital page's text layer costs: the same pages
// through /ocr with the check (the default) and without it (OCRGATE_TEXT_LAYER_CHECK=0), CPU-ms a
// page. Its pages are the layout test pages (two columns, three columns, a column beside a table,
// a header over columns: 60–110 lines of prose and cells each), each sent as a document of its
// own, so that every page is a document's first and is probed: the check's whole cost, where a
// later page of a document drawn in fonts already checked costs next to nothing. The bar
// is 2× (issue 34); the real pages' figure is ocrgate-pages' (docs/documents.md#figures).
//
//	go test -run x -bench LayerCheck -benchtime 10x ./service/server/
func BenchmarkLayerCheck(b *testing.B) {
	needModels(b)
	gate := admission.New(admission.Options{Budget: 824 << 20, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	opt := server.Options{Gate: gate, MaxRequestCost: 824 << 20, RequestTimeout: time.Minute}
	checked := docApp(b, opt, nil, nil)
	unchecked := docApp(b, opt, nil, func(c *document.Config) { c.LayerCheck = 0 })
	var docs [][]byte
	for _, p := range testdoc.LayoutPages() {
		data, _ := bornDigital(b, p.Text)
		docs = append(docs, data)
	}
	for _, c := range []struct {
		name   string
		app    *checkedApp
		reason string
	}{
		{"checked", checked, "text_layer_agrees"},
		{"unchecked", unchecked, "text_layer_unchecked"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				for _, doc := range docs {
					code, body := call(b, c.app, readRequest(doc, nil))
					var d struct {
						Pages []struct {
							SourceReason string `json:"source_reason"`
						}
					}
					if code != 200 || json.Unmarshal(body, &d) != nil || len(d.Pages) != 1 || d.Pages[0].SourceReason != c.reason {
						b.Fatalf("status %d, want one page read for %s: %.300s", code, c.reason, body)
					}
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N*len(docs)), "CPU-ms/page")
		})
	}
}
