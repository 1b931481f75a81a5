package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg" // the receipt of the full tier
	_ "image/png"  // the receipt of the fast tier
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
	"github.com/ocrgate/ocrgate/service/work"
)

// faultOnce panics the first unit of the kind unit that starts, and no other.
func faultOnce(unit string) (f func(string), fired *atomic.Bool) {
	fired = new(atomic.Bool)
	return func(u string) {
		if u == unit && fired.CompareAndSwap(false, true) {
			panic("injected into a " + unit)
		}
	}, fired
}

// TestPanicsFailTheirUnitOnly injects a panic into each kind of unit of work an "images" request
// runs (the entry itself, the decode of its image, one of its recognizer batches) and checks that
// only that unit fails, as a 500 internal_error in the entry's place that quotes nothing of the
// panic; that the other entry is read; that the panic is logged with its stack and the request's ID
// and counted; and that the service goes on serving. Then the same for a document's units (a
// page, the check of a page's text layer): the page fails, with internal_error, the others are
// read.
func TestPanicsFailTheirUnitOnly(t *testing.T) {
	eng := fixtures(t).engine
	img := fixtures(t).receipt
	for _, unit := range []string{"image", "image decode", "recognizer batch"} {
		t.Run(unit, func(t *testing.T) {
			fault, fired := faultOnce(unit)
			var logs syncBuffer
			m := metrics.New()
			app := checked(t, server.New(eng.Pipeline, eng, slog.New(slog.NewJSONHandler(&logs, nil)), server.Options{
				RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20,
				Gate:    admission.New(admission.Options{Budget: 4 << 30, MaxRunning: 2, MaxQueue: 8, MaxWait: time.Minute}),
				Metrics: m,
				Context: work.WithFault(context.Background(), fault),
			}))
			enc := base64.StdEncoding.EncodeToString(img)
			body, _ := json.Marshal(map[string][]string{"images": {enc, enc}})
			req := postJSON("/ocr", "application/json", body)
			req.Header.Set("X-Request-ID", "panic-test-"+strings.ReplaceAll(unit, " ", "-"))
			code, raw := call(t, app, req)
			if code != 200 || !fired.Load() {
				t.Fatalf("status %d (fault fired: %v): %s", code, fired.Load(), raw)
			}
			var ans struct {
				Results []struct {
					Code, Error, Text string
					Status            int
				}
			}
			if err := json.Unmarshal(raw, &ans); err != nil || len(ans.Results) != 2 {
				t.Fatalf("answer %s: %v", raw, err)
			}
			failed, read := 0, 0
			for _, r := range ans.Results {
				switch {
				case r.Code == "internal_error" && r.Status == 500 && r.Error == "internal error":
					failed++
				case r.Code == "" && r.Text != "":
					read++
				default:
					t.Errorf("entry %+v", r)
				}
			}
			if failed != 1 || read != 1 {
				t.Errorf("%d entries failed and %d were read; want the unit's entry failed and the other read: %s", failed, read, raw)
			}
			if strings.Contains(string(raw), "injected") || strings.Contains(string(raw), "goroutine") {
				t.Errorf("the answer carries the panic: %s", raw)
			}
			// Logged once, with its stack and the request's ID; counted once.
			log := logs.String()
			if n := strings.Count(log, `"msg":"panic recovered"`); n != 1 || !strings.Contains(log, "panic-test-") ||
				!strings.Contains(log, "injected into a "+unit) || !strings.Contains(log, "goroutine ") {
				t.Errorf("log (%d panic lines) lacks the panic, its stack or the request ID:\n%s", n, log)
			}
			code, raw = call(t, app, get("/metrics"))
			if want := `ocrgate_panics_total{unit="` + unit + `"} 1`; code != 200 || !strings.Contains(string(raw), want) {
				t.Errorf("/metrics lacks %s", want)
			}
			// The service goes on: the same image alone is read.
			if code, raw := call(t, app, ocrRequest(img)); code != 200 {
				t.Errorf("after the panic, /ocr = %d: %s", code, raw)
			}
		})
	}
	// A document's units: reading one of its pages (its survey, or its OCR job), the check of a
	// page's text layer, the decode of a TIFF page. The page the panic hit fails with internal_error in its place; the
	// others are read.
	pdf := hostile.PDFPages(hostile.TextPage("THE FIRST PAGE"), hostile.TextPage("THE SECOND PAGE"), hostile.TextPage("THE THIRD PAGE"))
	page, _, err := image.Decode(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	tiff, err := testdoc.TIFF(page, page, page)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		unit string
		doc  []byte
		ocr  string // the request's "ocr"
	}{{"document page", pdf, "auto"}, {"document page", pdf, "always"}, {"text-layer check", pdf, "auto"}, {"tiff decode", tiff, "auto"}} {
		pdf := tt.doc
		t.Run(tt.unit+", ocr "+tt.ocr, func(t *testing.T) {
			fault, fired := faultOnce(tt.unit)
			var logs syncBuffer
			m := metrics.New()
			cfg := documentConfig()
			cfg.LayerCheck = 4 // the check runs in both tiers
			app := checked(t, server.New(eng.Pipeline, eng, slog.New(slog.NewJSONHandler(&logs, nil)), server.Options{
				RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20,
				Gate:      admission.New(admission.Options{Budget: 4 << 30, MaxRunning: 2, MaxQueue: 8, MaxWait: time.Minute}),
				Metrics:   m,
				Documents: document.New(documentReader(t), cfg),
				Context:   work.WithFault(context.Background(), fault),
			}))
			code, raw := call(t, app, readRequest(pdf, map[string]any{"ocr": tt.ocr}))
			if code != 200 || !fired.Load() {
				t.Fatalf("status %d (fault fired: %v): %s", code, fired.Load(), raw)
			}
			var ans struct {
				Pages []struct {
					Page  int
					Text  string
					Error *struct{ Code, Message string }
				}
			}
			if err := json.Unmarshal(raw, &ans); err != nil || len(ans.Pages) != 3 {
				t.Fatalf("answer %s: %v", raw, err)
			}
			failed := 0
			for _, p := range ans.Pages {
				switch {
				case p.Error != nil && p.Error.Code == "internal_error" && p.Error.Message == "internal error":
					failed++
				case p.Error != nil:
					t.Errorf("page %d: %+v", p.Page, p.Error)
				}
			}
			if failed != 1 {
				t.Errorf("%d pages failed; want the one the panic hit: %s", failed, raw)
			}
			if strings.Contains(string(raw), "injected") || strings.Contains(string(raw), "goroutine") {
				t.Errorf("the answer carries the panic: %s", raw)
			}
			log := logs.String()
			if n := strings.Count(log, `"msg":"panic recovered"`); n != 1 || !strings.Contains(log, "injected into a "+tt.unit) || !strings.Contains(log, "goroutine ") {
				t.Errorf("log (%d panic lines) lacks the panic or its stack:\n%s", n, log)
			}
			code, raw = call(t, app, get("/metrics"))
			if want := `ocrgate_panics_total{unit="` + tt.unit + `"} 1`; code != 200 || !strings.Contains(string(raw), want) {
				t.Errorf("/metrics lacks %s", want)
			}
			// The service goes on: the document is read whole.
			code, raw = call(t, app, readRequest(pdf, nil))
			if code != 200 || strings.Contains(string(raw), "internal_error") {
				t.Errorf("after the panic, the document reads %d: %s", code, raw)
			}
		})
	}
}
