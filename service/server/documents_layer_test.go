package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestDegeneratePageRefused: a page box thinner than a pixel at any scale the render limits allow
// is a 422 at once, and the service is whole afterwards: the admission and the engine instance it
// took are back (a 656-byte PDF used to hold both forever, so that every other PDF got 429).
func TestDegeneratePageRefused(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, server.Options{Gate: gate, RequestTimeout: 30 * time.Second}, nil, nil)
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"media box 14400×0.01 pt", hostile.PDFThinPage(14_400, 0.01)},
		{"crop box 0.01×0.01 pt", hostile.PDFTinyCropBox(0.01)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Twice the engine's instances: a leaked instance would make the later ones wait.
			for range 5 {
				resp, err := app.Test(readRequest(tt.data, nil), int((2 * time.Minute).Milliseconds()))
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				code := resp.StatusCode
				checkJSONError(t, code, body, 422, "degenerate_page")
			}
			if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
				t.Errorf("the gate holds %+v after the answers", s)
			}
		})
	}
	born, _ := bornDigital(t, invoice)
	if d := readDocument(t, app, born, nil); len(d.Pages) != 1 || d.Pages[0].Source != "text-layer" {
		t.Errorf("afterwards a good document reads %+v", d.Pages)
	}
}

// TestAnswerSizeEstimate: the size a document's answer is priced at before it is written is at
// least the size of the JSON the service writes, and not more than twice it, with and without
// words: a limit just under the real answer refuses it, one twice its size lets it through.
func TestAnswerSizeEstimate(t *testing.T) {
	born, _ := bornDigital(t, invoice, letter)
	for _, tt := range []struct {
		name  string
		data  []byte
		words bool
	}{
		{"born-digital", born, false},
		{"born-digital with words", born, true},
		{"a page of one-letter words", hostile.PDFLongText(1, 30, 120), false},
		{"a page of one-letter words, with words", hostile.PDFLongText(1, 30, 120), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			extra := map[string]any{"words": tt.words}
			code, body := call(t, docApp(t, server.Options{}, nil, nil), readRequest(tt.data, extra))
			if code != 200 {
				t.Fatalf("status %d: %.300s", code, body)
			}
			n := int64(len(body))
			under := docApp(t, server.Options{}, nil, func(c *document.Config) { c.Budget.AnswerBytes = n - 1 })
			if code, refused := call(t, under, readRequest(tt.data, extra)); code != 413 || !strings.Contains(string(refused), `"answer_too_large"`) {
				t.Errorf("an answer of %d bytes under a limit of one byte less: status %d (%.100s): the estimate is too low", n, code, refused)
			}
			twice := docApp(t, server.Options{}, nil, func(c *document.Config) { c.Budget.AnswerBytes = 2 * n })
			if code, _ := call(t, twice, readRequest(tt.data, extra)); code != 200 {
				t.Errorf("an answer of %d bytes refused under a limit of twice that: the estimate is too high", n)
			}
		})
	}
}

// TestAnswerBound: an "images" array of copies of a small PDF whose pages hold long text runs
// (each letter a word) asks for an answer far larger than the limit: the request is refused with
// 413 answer_too_large as soon as the bound is crossed, every admission and answer charge goes
// back to the gate, and the process's memory stays within the bound's order (the same request
// used to answer 699 MB of JSON at a 2.4 GiB peak).
func TestAnswerBound(t *testing.T) {
	const limit = 256 << 10
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, server.Options{Gate: gate, MaxImages: 16}, nil, func(c *document.Config) { c.Budget.AnswerBytes = limit })
	pdf := hostile.PDFLongText(3, 20, 200)
	if len(pdf) > 2048 {
		t.Fatalf("the PDF is %d bytes", len(pdf))
	}
	images := make([]any, 16)
	for i := range images {
		images[i] = base64.StdEncoding.EncodeToString(pdf)
	}
	body, _ := json.Marshal(map[string]any{"images": images, "words": true})
	var code int
	var raw []byte
	grew := memlimit.Growth(10*time.Millisecond, func() { code, raw = call(t, app, postJSON("/ocr", "application/json", body)) })
	if code != 413 || !strings.Contains(string(raw), `"answer_too_large"`) {
		t.Errorf("status %d: %.300s; want 413 answer_too_large", code, raw)
	}
	if grew > 200<<20 {
		t.Errorf("resident memory grew by %d MiB for an answer bounded at %d KiB", grew>>20, limit>>10)
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Errorf("the gate holds %+v afterwards", s)
	}
	// One copy alone, one page, is within the bound.
	if d := readDocument(t, app, pdf, map[string]any{"pages": "1"}); len(d.Pages) != 1 || d.Pages[0].Source != "text-layer" {
		t.Errorf("one page alone: %+v", d.Pages)
	}
}

// TestRefusedJPEGRefusedInPDF: a 364-byte progressive JPEG asking for 750 MB of pixels and
// coefficients is refused alone (413) and refused the same way as a PDF's scanned page, having
// allocated next to nothing: the page is priced by its JPEG's header, as the upload is, not at
// four bytes a pixel (it used to be read, at +591 MiB).
func TestRefusedJPEGRefusedInPDF(t *testing.T) {
	const budget = 390 << 20 // as TestHostileFiles: about the default plan's
	gate := admission.New(admission.Options{Budget: budget, MaxRunning: 2, MaxQueue: 4, MaxWait: 10 * time.Second})
	app := docApp(t, server.Options{Gate: gate, MaxRequestCost: budget, RequestTimeout: 20 * time.Second}, nil, nil)
	jpg := hostile.HugeProgressive(7071, 7071)
	code, body := call(t, app, imageRequest(jpg))
	checkJSONError(t, code, body, 413, "image_too_large")
	pdf := hostile.PDFScan(jpg, 7071, 7071)
	alloc, _ := allocated(func() { code, body = call(t, app, readRequest(pdf, nil)) })
	if code != 413 {
		t.Errorf("status %d as a PDF page: %.300s", code, body)
	}
	if alloc > 32<<20 {
		t.Errorf("allocated %d MB before refusing a %d-byte PDF", alloc>>20, len(pdf))
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Errorf("the gate holds %+v afterwards", s)
	}
}

// TestPageBudgetAcrossImages: the page limit is the request's, not each document's: an "images"
// array of documents that each fit it but together do not is refused (16 documents of 50 pages
// used to read 800 pages in one request); within it, the same array reads.
func TestPageBudgetAcrossImages(t *testing.T) {
	const limit = 5
	app := docApp(t, server.Options{MaxImages: 16}, &docfile.Limits{MaxPages: limit}, func(c *document.Config) { c.Budget.Pages = limit })
	born, _ := bornDigital(t, invoice, letter, invoice)
	batch := func(n int) *http.Request {
		images := make([]any, n)
		for i := range images {
			images[i] = base64.StdEncoding.EncodeToString(born)
		}
		body, _ := json.Marshal(map[string]any{"images": images})
		return postJSON("/ocr", "application/json", body)
	}
	code, body := call(t, app, batch(3))
	checkJSONError(t, code, body, 413, "too_many_pages")
	if msg := errorMessage(body); !strings.Contains(msg, "per request") || !strings.Contains(msg, fmt.Sprintf("the limit is %d", limit)) {
		t.Errorf("message %q does not say the limit is the request's", msg)
	}
	if code, body := call(t, app, batch(1)); code != 200 {
		t.Errorf("one document of 3 pages under a limit of %d: %d %.200s", limit, code, body)
	}
	// Two documents with a selection each, 4 pages together.
	images := []any{base64.StdEncoding.EncodeToString(born), base64.StdEncoding.EncodeToString(born)}
	raw, _ := json.Marshal(map[string]any{"images": images, "pages": "2-3"})
	if code, body := call(t, app, postJSON("/ocr", "application/json", raw)); code != 200 {
		t.Errorf("two selections of 2 pages under a limit of %d: %d %.200s", limit, code, body)
	}
}

// TestHiddenTextNotRead: text hidden in a PDF (invisible, white on white, off the page) is in
// neither the /ocr answer nor what /ocr-json sends the chat model, and the answer says that the
// page held hidden text and why; a page without any says nothing.
func TestHiddenTextNotRead(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	cs := newChatServer(t, func(text string) (int, string) {
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
		return 200, `{"company": "ACME", "date": null, "address": null, "total": "100.00"}`
	})
	ex, err := extract.New(extract.Options{Model: "m", BaseURL: cs.URL + "/v1", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	app := docApp(t, server.Options{Extractor: ex}, nil, nil)
	for _, tt := range []struct {
		name                string
		before, hide, after string
		reason              string
	}{
		{"invisible", "", "3 Tr", "", "invisible_render_mode"},
		{"white on white", "", "1 g", "", "no_visible_mark"},
		{"off the page", "", "0 -900 Td", "", "outside_page"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pdf := hostile.PDFHiddenText(tt.before, tt.hide, tt.after)
			code, raw := call(t, app, readRequest(pdf, nil))
			if code != 200 {
				t.Fatalf("status %d: %.300s", code, raw)
			}
			var d struct {
				Text  string
				Pages []struct {
					Source     string
					Text       string
					HiddenText *struct {
						Characters int
						Reasons    []string
					} `json:"hidden_text"`
				}
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Pages) != 1 || d.Pages[0].Source != "text-layer" || d.Text != hostile.VisibleLine {
				t.Errorf("read %q from %+v; want %q from the text layer", d.Text, d.Pages, hostile.VisibleLine)
			}
			if h := d.Pages[0].HiddenText; h == nil || h.Characters < 30 || len(h.Reasons) != 1 || h.Reasons[0] != tt.reason {
				t.Errorf("hidden_text %+v; want the instruction's characters, for %s", h, tt.reason)
			}
			resp, err := app.Test(ocrJSONRequest(t, pdf, map[string]any{"template": "receipt"}), -1)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mu.Lock()
			text := seen[len(seen)-1]
			mu.Unlock()
			if resp.StatusCode != 200 || strings.Contains(text, "SYSTEM") || strings.Contains(text, "99999") || !strings.Contains(text, hostile.VisibleLine) {
				t.Errorf("status %d; the chat model read %q", resp.StatusCode, text)
			}
		})
	}
	born, _ := bornDigital(t, invoice)
	if _, raw := call(t, app, readRequest(born, nil)); strings.Contains(string(raw), "hidden_text") {
		t.Errorf("hidden_text on a page without hidden text: %.300s", raw)
	}
}

// TestPageErrors: a document with a page that cannot be read answers 200 with the other pages
// read and that page's error (code and message) in its place; a document of which no page can
// be read answers the error of its first page, as it did before pages failed alone.
func TestPageErrors(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	good, last := hostile.TextPage("FIRST PAGE OF THE LETTER"), hostile.TextPage("THE LAST PAGE")
	bad := hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}
	code, raw := call(t, app, readRequest(hostile.PDFPages(good, bad, last), nil))
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, raw)
	}
	var d struct {
		Text  string
		Pages []struct {
			Page   int
			Source string
			Text   string
			Error  *struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Pages) != 3 || d.Pages[0].Error != nil || d.Pages[2].Error != nil || d.Pages[2].Text != "THE LAST PAGE" {
		t.Fatalf("pages %+v", d.Pages)
	}
	if p := d.Pages[1]; p.Page != 2 || p.Source != "none" || p.Error == nil || p.Error.Code != "degenerate_page" ||
		!strings.Contains(p.Error.Message, "page 2") || p.Text != "" {
		t.Errorf("page 2: %+v", p)
	}
	if d.Text != "FIRST PAGE OF THE LETTER\f\fTHE LAST PAGE" {
		t.Errorf("text %q", d.Text)
	}
	code, raw = call(t, app, readRequest(hostile.PDFPages(bad, bad), nil))
	checkJSONError(t, code, raw, 422, "degenerate_page")
}

// TestExtractSkipsFailedPages: /ocr-json fills its object from the pages that were read, and
// names the ones that were not in X-Failed-Pages.
func TestExtractSkipsFailedPages(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	cs := newChatServer(t, func(text string) (int, string) {
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
		return 200, `{"company": "ACME", "date": null, "address": null, "total": "100.00"}`
	})
	ex, err := extract.New(extract.Options{Model: "m", BaseURL: cs.URL + "/v1", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	app := docApp(t, server.Options{Extractor: ex}, nil, nil)
	good, last := hostile.TextPage("FIRST PAGE OF THE LETTER"), hostile.TextPage("THE LAST PAGE")
	bad := hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}
	resp, err := app.Test(ocrJSONRequest(t, hostile.PDFPages(good, bad, last, bad), map[string]any{"template": "receipt"}), -1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	text := seen[len(seen)-1]
	mu.Unlock()
	if resp.StatusCode != 200 || resp.Header.Get("X-Failed-Pages") != "2,4" {
		t.Errorf("status %d, X-Failed-Pages %q; want 200 and 2,4", resp.StatusCode, resp.Header.Get("X-Failed-Pages"))
	}
	if want := "<<<PAGE 1>>>\nFIRST PAGE OF THE LETTER\n<<<PAGE 3>>>\nTHE LAST PAGE"; text != want {
		t.Errorf("the chat model read %q, want %q", text, want)
	}
}

// TestCostlyPageUnderLoad: limits count work, not time. A PDF holds a page that takes a good
// fraction of a second of CPU to draw (several times that under the race detector, still well
// inside the limit) and one built to draw forever; it is read twice at once while every core
// is kept busy by other work. Each answer is the same: the costly page is read (its drawing is
// bounded by CPU time, so the load only makes it slower), the endless one fails alone with
// document_too_complex after its CPU limit, and the other pages answer. A wall-clock limit of the
// same length used to fail the costly page on a busy machine, and with it the whole document.
func TestCostlyPageUnderLoad(t *testing.T) {
	const cpuLimit = 3 * time.Second
	lim := docfile.Limits{MaxPages: 2000, OpCPU: cpuLimit}
	app := docApp(t, server.Options{RequestTimeout: 5 * time.Minute}, &lim, nil)
	pdf := hostile.PDFPages(hostile.TextPage("FIRST PAGE"), hostile.EndlessPage(10), hostile.EndlessPage(400_000), hostile.TextPage("LAST PAGE"))

	// Other work on every core, for as long as the documents are read.
	stop := make(chan struct{})
	var load sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		load.Go(func() {
			x := 1.0
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 100_000 {
					x = x*1.0000001 + float64(i&1)
				}
			}
		})
	}
	type page struct {
		Source, Text string
		Error        *struct{ Code, Message string }
	}
	answers := make([][]page, 2)
	var reads sync.WaitGroup
	for i := range answers {
		reads.Go(func() {
			resp, err := app.Test(readRequest(pdf, nil), -1)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var d struct{ Pages []page }
			if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != 200 {
				t.Errorf("read %d: status %d, %v", i, resp.StatusCode, err)
			}
			answers[i] = d.Pages
		})
	}
	reads.Wait()
	close(stop)
	load.Wait()
	for i, a := range answers {
		if len(a) != 4 {
			t.Fatalf("answer %d: %+v", i, a)
		}
		if a[0].Text != "FIRST PAGE" || a[3].Text != "LAST PAGE" || a[1].Source != "ocr" || a[1].Error != nil {
			t.Errorf("answer %d: pages %+v", i, a)
			if e := a[1].Error; e != nil {
				t.Errorf("answer %d: the costly page failed: %s: %s", i, e.Code, e.Message)
			}
		}
		if e := a[2].Error; a[2].Source != "none" || e == nil || e.Code != "document_too_complex" || !strings.Contains(e.Message, "CPU time") {
			t.Errorf("answer %d: the endless page %+v", i, a[2])
		} else {
			t.Logf("answer %d: %s", i, e.Message)
		}
	}
	a0, _ := json.Marshal(answers[0])
	a1, _ := json.Marshal(answers[1])
	if string(a0) != string(a1) {
		t.Errorf("the two answers differ:\n%s\n%s", a0, a1)
	}
}

// TestTextPagesDoNotCountAsOCR: the page limit counts pages that need OCR. A document of 60
// born-digital pages reads from its text layer under an OCR limit of 50 (it used to be 413); a
// document of 60 pages without text is refused before any is drawn, saying they need OCR.
func TestTextPagesDoNotCountAsOCR(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	var text, blank []hostile.PageSpec
	for i := range 60 {
		text = append(text, hostile.TextPage(fmt.Sprintf("PAGE %d OF THE BOOK", i+1)))
		blank = append(blank, hostile.PageSpec{Content: "0.5 g 100 100 50 50 re f"})
	}
	d := readDocument(t, app, hostile.PDFPages(text...), nil)
	if len(d.Pages) != 60 || d.Pages[59].Source != "text-layer" || d.Pages[59].Text != "PAGE 60 OF THE BOOK" {
		t.Errorf("60 text pages: %d read, the last %+v", len(d.Pages), d.Pages[len(d.Pages)-1])
	}
	code, raw := call(t, app, readRequest(hostile.PDFPages(blank...), nil))
	checkJSONError(t, code, raw, 413, "too_many_pages")
	if msg := errorMessage(raw); !strings.Contains(msg, "60 pages that need OCR") || !strings.Contains(msg, "the limit is 50") {
		t.Errorf("message %q", msg)
	}
	// The text pages under ocr=always are OCR'd because they were asked to be: the refusal says
	// so, not that they lack a usable text layer.
	code, raw = call(t, app, readRequest(hostile.PDFPages(text...), map[string]any{"ocr": "always"}))
	checkJSONError(t, code, raw, 413, "too_many_pages")
	if msg := errorMessage(raw); !strings.Contains(msg, "asks for OCR of 60 pages (ocr=always)") ||
		strings.Contains(msg, "no usable text layer") || !strings.Contains(msg, "ocr=auto") {
		t.Errorf("message %q", msg)
	}
}

// TestBook: a 300-page born-digital book reads from its text layer under the OCR page limit of
// 50, within the memory the plan gives a request: the engine's instance, the survey's bound and
// the answer it charges (BenchmarkDocuments/book measures a dense one).
func TestBook(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 824 << 20, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, server.Options{Gate: gate, MaxRequestCost: 824 << 20, RequestTimeout: time.Minute}, nil, nil)
	pages := make([]hostile.PageSpec, 300)
	for i := range pages {
		pages[i] = hostile.TextPage(fmt.Sprintf("CHAPTER %d", i/10+1), fmt.Sprintf("This is page %d of the book.", i+1),
			"Every page has a few lines of text on it, as a book does.")
	}
	var d docBody
	grew := memlimit.Growth(10*time.Millisecond, func() { d = readDocument(t, app, hostile.PDFPages(pages...), nil) })
	if len(d.Pages) != 300 {
		t.Fatalf("%d pages read", len(d.Pages))
	}
	for _, p := range d.Pages {
		if want := fmt.Sprintf("This is page %d of the book.", p.Page); p.Source != "text-layer" || !strings.Contains(p.Text, want) {
			t.Errorf("page %d: %s %q", p.Page, p.Source, p.Text)
		}
	}
	t.Logf("resident memory grew by %d MiB", grew>>20)
	if grew > 824<<20 {
		t.Errorf("resident memory grew by %d MiB; the plan's budget is 824 MiB", grew>>20)
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 {
		t.Errorf("the gate holds %+v afterwards", s)
	}
}
