package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestImagesArrayRefusedBeforeOCR: an "images" array whose documents together hold more pages
// that need OCR than a request may read is refused whole, 413 too_many_pages, before any page is
// drawn or OCR'd: every document of the request is surveyed first. (The first document's pages
// were OCR'd before the second's survey found the request over its limit.)
func TestImagesArrayRefusedBeforeOCR(t *testing.T) {
	// Two pages without a text layer: both need OCR.
	drawn := hostile.PageSpec{Content: "0.2 g 72 600 300 120 re f"}
	scan := hostile.PDFPages(drawn, drawn)
	gate := admission.New(admission.Options{Budget: 4 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	m := metrics.New()
	app := docApp(t, server.Options{Gate: gate, Metrics: m}, nil, func(c *document.Config) { c.Budget.OCRPages = 3 })
	body, _ := json.Marshal(map[string]any{"images": []any{b64(scan), b64(scan)}})
	code, raw := call(t, app, postJSON("/ocr", "application/json", body))
	checkJSONError(t, code, raw, 413, "too_many_pages")
	if msg := errorMessage(raw); !strings.Contains(msg, "4 pages that need OCR") {
		t.Errorf("message %q", msg)
	}
	code, raw = call(t, app, get("/metrics"))
	if code != 200 || strings.Contains(string(raw), "ocrgate_stage_duration_seconds_count") || strings.Contains(string(raw), `ocrgate_document_pages_total{source="ocr"}`) {
		t.Errorf("pages were OCR'd before the request was refused:\n%s", grep(string(raw), "ocrgate_stage_duration_seconds_count", "ocrgate_document_pages_total"))
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Errorf("the gate holds %+v afterwards", s)
	}
	// Within the limit, both documents are read, in order.
	app = docApp(t, server.Options{Gate: gate}, nil, func(c *document.Config) { c.Budget.OCRPages = 4 })
	code, raw = call(t, app, postJSON("/ocr", "application/json", body))
	var got struct{ Results []docBody }
	if err := json.Unmarshal(raw, &got); code != 200 || err != nil || len(got.Results) != 2 {
		t.Fatalf("status %d: %s", code, raw)
	}
	for i, r := range got.Results {
		if len(r.Pages) != 2 || r.Pages[0].Source != "ocr" || r.Pages[1].Source != "ocr" {
			t.Errorf("document %d: %+v", i, r)
		}
	}
}

// grep keeps the lines of s that hold one of words.
func grep(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
