package server_test

import (
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestBornDigitalDocument: a born-digital PDF comes back from its text layer with exactly the
// text drawn, one region per drawn string in reading order, boxes within 2 px of where fpdf drew
// each string (left edge, right edge at its measured width, bottom on its baseline) in the page's
// pixel space, words that tile their lines, and the document's text page by page.
func TestBornDigitalDocument(t *testing.T) {
	data, widths := bornDigital(t, invoice, letter)
	app := docApp(t, server.Options{}, nil, nil)
	d := readDocument(t, app, data, map[string]any{"words": true})
	if d.ImageInfo.Format != "pdf" || d.ImageInfo.Pages != 2 || d.ImageInfo.Bytes != len(data) || len(d.Pages) != 2 {
		t.Fatalf("image_info %+v, %d pages read", d.ImageInfo, len(d.Pages))
	}
	drawn := [][]testdoc.Text{invoice, letter}
	for i, p := range d.Pages {
		if p.Page != i+1 || p.Source != "text-layer" {
			t.Errorf("page %d: number %d, source %q", i+1, p.Page, p.Source)
		}
		// fpdf's A4 is 595.28 × 841.89 pt.
		sx, sy := float64(p.Width)/595.28, float64(p.Height)/841.89
		if math.Abs(sx-sy) > 0.01 || sx < 1 {
			t.Errorf("page %d is %d×%d px: not A4 at one scale", p.Page, p.Width, p.Height)
		}
		if len(p.Regions) != len(drawn[i]) {
			t.Fatalf("page %d: %d regions, want %d: %+v", p.Page, len(p.Regions), len(drawn[i]), p.Regions)
		}
		for k, r := range p.Regions {
			want := drawn[i][k]
			// A checked layer's regions carry the page's confidence: how well OCR of its probes
			// agreed with it (1 in the fast tier, where it is taken unchecked).
			if r.Text != want.Text || p.Confidence == nil || r.Confidence != *p.Confidence || r.Confidence < 0.9 || r.ReadingOrder != k+1 || r.Direction != "horizontal" {
				t.Errorf("page %d region %d: %q (confidence %v, order %d, %s), want %q", p.Page, k, r.Text, r.Confidence, r.ReadingOrder, r.Direction, want.Text)
				continue
			}
			x0, _, x1, y1 := r.BoundingShape.bounds()
			wx0, wx1, wy1 := want.X*sx, (want.X+widths[i][k])*sx, want.Y*sy
			if math.Abs(float64(x0)-wx0) > 2 || math.Abs(float64(x1)-wx1) > 2 || math.Abs(float64(y1)-wy1) > 2 {
				t.Errorf("page %d %q: box x %d..%d bottom %d, drawn at x %.1f..%.1f baseline %.1f", p.Page, r.Text, x0, x1, y1, wx0, wx1, wy1)
			}
			var words []string
			prev := x0 - 1
			for _, w := range r.Words {
				words = append(words, w.Text)
				wx0, _, wx1, _ := w.BoundingShape.bounds()
				if w.Confidence != r.Confidence || wx0 < x0-1 || wx1 > x1+1 || wx0 < prev {
					t.Errorf("word %q of %q at %d..%d (confidence %v): outside its line %d..%d or out of order", w.Text, r.Text, wx0, wx1, w.Confidence, x0, x1)
				}
				prev = wx1
			}
			if strings.Join(words, " ") != r.Text {
				t.Errorf("words %q do not spell %q", words, r.Text)
			}
		}
	}
	if r := d.Pages[0].Regions; r[2].Row != r[3].Row || r[2].Row == r[1].Row {
		t.Errorf("rows %d, %d, %d: the two strings drawn on one baseline must share a row", r[1].Row, r[2].Row, r[3].Row)
	}
	wantText := "TAX INVOICE 2024-0117 TOTAL DUE AT\nTRACKING NUMBER 88214 PAID IN FULL AT\nTHE SUBTOTAL TWELVE DOLLARS FLAT\nTOTAL 1299.00 NET"
	if d.Pages[0].Text != wantText {
		t.Errorf("page 1 text %q, want %q", d.Pages[0].Text, wantText)
	}
	if d.Text != d.Pages[0].Text+"\f"+d.Pages[1].Text {
		t.Errorf("document text %q is not the pages' texts separated by a form feed", d.Text)
	}
	// Without "words", no region carries them.
	_, raw := call(t, app, readRequest(data, nil))
	if strings.Contains(string(raw), `"words"`) {
		t.Errorf("words sent unasked: %.200s", raw)
	}
}

// TestDocumentPageSelection: pages select what is read; a selection the document cannot satisfy
// is a 400 that states its page count and does not quote the selection; over the page limit is
// 413; an image has page 1 only.
func TestDocumentPageSelection(t *testing.T) {
	data, _ := bornDigital(t, invoice, letter, invoice)
	app := docApp(t, server.Options{}, nil, nil)
	for _, tt := range []struct {
		pages string
		want  []int
	}{{"", []int{1, 2, 3}}, {"2", []int{2}}, {"1,3", []int{1, 3}}, {"2-", []int{2, 3}}, {" 3 - 3 ", []int{3}}, {"3,1", []int{1, 3}}} {
		t.Run(fmt.Sprintf("%q", tt.pages), func(t *testing.T) {
			d := readDocument(t, app, data, map[string]any{"pages": tt.pages})
			var got []int
			for _, p := range d.Pages {
				got = append(got, p.Page)
			}
			if !slices.Equal(got, tt.want) || d.ImageInfo.Pages != 3 {
				t.Errorf("read pages %v of %d, want %v", got, d.ImageInfo.Pages, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name  string
		pages any
		says  string
	}{
		{"past the end", "4", "the document has 3 pages"},
		{"range past the end", "2-9", "the document has 3 pages"},
		{"backwards", "3-1", "the document has 3 pages"},
		{"page zero", "0", "numbered from 1"},
		{"words", "first", `such as "1-3,5"`},
		{"number", 2, "must be a string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, readRequest(data, map[string]any{"pages": tt.pages}))
			checkJSONError(t, code, body, 400, "invalid_pages")
			if msg := errorMessage(body); !strings.Contains(msg, tt.says) || strings.Contains(msg, "first") {
				t.Errorf("message %s: want it to say %q and not to quote the selection", body, tt.says)
			}
		})
	}
	t.Run("over the page limit", func(t *testing.T) {
		small := docApp(t, server.Options{}, &docfile.Limits{MaxPages: 2}, nil)
		code, body := call(t, small, readRequest(data, nil))
		checkJSONError(t, code, body, 413, "too_many_pages")
		if !strings.Contains(string(body), "3 pages; the limit is 2") {
			t.Errorf("message %s does not give the count and the limit", body)
		}
		if d := readDocument(t, small, data, map[string]any{"pages": "2-3"}); len(d.Pages) != 2 {
			t.Errorf("a selection within the limit read %d pages", len(d.Pages))
		}
	})
	t.Run("an image", func(t *testing.T) {
		img := fixtures(t).receipt
		code, body := call(t, app, readRequest(img, map[string]any{"pages": "2"}))
		checkJSONError(t, code, body, 400, "invalid_pages")
		if !strings.Contains(string(body), "an image has 1 page") {
			t.Errorf("message %s", body)
		}
		if ans := readImageAnswer(t, app, img, map[string]any{"pages": "1"}); len(ans.Regions) == 0 {
			t.Error("page 1 of an image read nothing")
		}
	})
}

// TestMultiPageTIFF: each page of a multi-page TIFF reads exactly as the same pixels sent alone
// (as a PNG); a one-page TIFF is an image and answers as one.
func TestMultiPageTIFF(t *testing.T) {
	f := fixtures(t)
	var pages []image.Image
	for _, data := range [][]byte{f.receipt, f.fields} {
		src := decoded(t, data)
		rgba := image.NewRGBA(src.Bounds())
		draw.Draw(rgba, rgba.Bounds(), src, src.Bounds().Min, draw.Src)
		pages = append(pages, rgba)
	}
	tiff, err := testdoc.TIFF(pages...)
	if err != nil {
		t.Fatal(err)
	}
	app := docApp(t, server.Options{}, nil, nil)
	d := readDocument(t, app, tiff, nil)
	if d.ImageInfo.Format != "tiff" || d.ImageInfo.Pages != 2 || len(d.Pages) != 2 {
		t.Fatalf("image_info %+v, %d pages", d.ImageInfo, len(d.Pages))
	}
	for i, p := range d.Pages {
		alone := readImageAnswer(t, app, pngOf(t, pages[i]), nil)
		b := pages[i].Bounds()
		if p.Source != "ocr" || p.Width != b.Dx() || p.Height != b.Dy() {
			t.Errorf("page %d: %s, %d×%d; want ocr at %v", p.Page, p.Source, p.Width, p.Height, b.Size())
		}
		if p.Text != alone.Text || !sameRegions(p.Regions, alone.Regions) {
			t.Errorf("page %d reads %q (%d regions); the same pixels alone read %q (%d regions)", p.Page, p.Text, len(p.Regions), alone.Text, len(alone.Regions))
		}
	}
	one, err := testdoc.TIFF(pages[0])
	if err != nil {
		t.Fatal(err)
	}
	ans := readImageAnswer(t, app, one, nil)
	if ans.ImageInfo.Format != "tiff" || len(ans.Regions) == 0 {
		t.Errorf("a one-page TIFF: %+v with %d regions; want an image answer", ans.ImageInfo, len(ans.Regions))
	}
}

// sameRegions compares two answers' regions: text, box and confidence.
func sameRegions(a, b []regionBody) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Text != b[i].Text || a[i].Confidence != b[i].Confidence || !slices.Equal(a[i].BoundingShape.Points, b[i].BoundingShape.Points) {
			return false
		}
	}
	return true
}

// TestMixedDocument: a scanned page and a born-digital page in one PDF: the scan is OCR'd from its
// JPEG, read from the file (so it reads exactly as the JPEG sent alone), the born-digital page
// comes from its text layer; with "ocr": "always" that page is OCR'd too, in the same pixel space.
func TestMixedDocument(t *testing.T) {
	jpg := fixtures(t).jpeg
	data := scanned(t, [][]byte{jpg}, letter, false)
	app := docApp(t, server.Options{}, nil, nil)
	d := readDocument(t, app, data, nil)
	if len(d.Pages) != 2 || d.Pages[0].Source != "ocr" || d.Pages[1].Source != "text-layer" {
		t.Fatalf("pages %+v", d.Pages)
	}
	alone := readImageAnswer(t, app, jpg, nil)
	if p := d.Pages[0]; p.Text != alone.Text || !sameRegions(p.Regions, alone.Regions) ||
		p.Width != alone.ImageInfo.Width || p.Height != alone.ImageInfo.Height {
		t.Errorf("the scanned page reads %q at %d×%d; the JPEG alone %q at %d×%d", p.Text, p.Width, p.Height, alone.Text, alone.ImageInfo.Width, alone.ImageInfo.Height)
	}
	if got := d.Pages[1].Text; got != "THANK YOU FOR THE PAYMENT\nTERMS NET THIRTY DAYS AT" {
		t.Errorf("born-digital page: %q", got)
	}
	always := readDocument(t, app, data, map[string]any{"ocr": "always", "pages": "2"})
	if p := always.Pages[0]; p.Source != "ocr" || p.Width != d.Pages[1].Width || p.Height != d.Pages[1].Height {
		t.Errorf(`with "ocr": "always" page 2 is %s at %d×%d; want OCR in the text layer's space %d×%d`,
			p.Source, p.Width, p.Height, d.Pages[1].Width, d.Pages[1].Height)
	}
	// The stand-in models of the fast tier read blocks of ink, not Helvetica.
	if !testing.Short() && !strings.Contains(always.Pages[0].Text, "THANK YOU") {
		t.Errorf("OCR of the born-digital page: %q", always.Pages[0].Text)
	}
}

// TestDocumentErrors: each broken document is refused with its own 4xx and code, quickly, and
// the message quotes nothing of it.
func TestDocumentErrors(t *testing.T) {
	enc, err := testdoc.Encrypted("user-secret")
	if err != nil {
		t.Fatal(err)
	}
	born, _ := bornDigital(t, invoice)
	app := docApp(t, server.Options{RequestTimeout: 20 * time.Second}, nil, func(c *document.Config) { c.OpTimeout = time.Second })
	for _, tt := range []struct {
		name   string
		data   []byte
		status int
		code   string
	}{
		{"encrypted", enc, 422, "encrypted_document"},
		{"truncated", born[:120], 422, "corrupt_document"},
		{"garbage after the header", append([]byte("%PDF-1.7\n"), strings.Repeat("garbage ", 100)...), 422, "corrupt_document"},
		{"no pages", testdoc.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"), 422, "corrupt_document"},
		{"page 300 inches wide", hostile.PDFPageSize(21_600, 842), 413, "document_too_large"},
		{"image of 20000×20000 px", hostile.PDFFlateImage(20_000, 20_000), 413, "document_too_large"},
		{"page that draws forever", hostile.PDFEndlessPage(400_000), 422, "document_too_complex"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, body := call(t, app, readRequest(tt.data, nil))
			checkJSONError(t, code, body, tt.status, tt.code)
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("answered after %v", took)
			}
			if strings.Contains(string(body), "secret") || strings.Contains(string(body), "garbage") {
				t.Errorf("the message quotes the document: %s", body)
			}
		})
	}
}

// TestImagesArray: an "images" array answers one result per entry, in order: each the answer it
// would get alone, or the error it would get alone with its status, good and bad mixed.
func TestImagesArray(t *testing.T) {
	f := fixtures(t)
	born, _ := bornDigital(t, letter)
	enc, _ := testdoc.Encrypted("pw")
	gate := admission.New(admission.Options{Budget: 4 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, server.Options{Gate: gate, MaxImages: 8}, nil, nil)
	body, _ := json.Marshal(map[string]any{"images": []any{
		b64(f.receipt), "not base64 at all!", b64(born), b64([]byte("a text file, not a picture")), "", b64(enc), b64(f.fields),
	}})
	code, raw := call(t, app, postJSON("/ocr", "application/json", body))
	if code != 200 {
		t.Fatalf("status %d: %s", code, raw)
	}
	var got struct {
		Version string
		Results []json.RawMessage
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 7 {
		t.Fatalf("%d results for 7 images", len(got.Results))
	}
	for i, want := range []struct {
		status int
		code   string
	}{{200, ""}, {400, "invalid_base64"}, {200, ""}, {415, "unsupported_image_format"}, {400, "empty_image"}, {422, "encrypted_document"}, {200, ""}} {
		var e struct {
			Error, Code string
			Status      int
		}
		json.Unmarshal(got.Results[i], &e)
		if want.status != 200 {
			if e.Status != want.status || e.Code != want.code || e.Error == "" {
				t.Errorf("result %d: %s; want %d %s", i, got.Results[i], want.status, want.code)
			}
			continue
		}
		if e.Code != "" {
			t.Errorf("result %d failed: %s", i, got.Results[i])
		}
	}
	var first imageBody
	json.Unmarshal(got.Results[0], &first)
	if alone := readImageAnswer(t, app, f.receipt, nil); first.Text != alone.Text || !sameRegions(first.Regions, alone.Regions) {
		t.Errorf("first result %q; the image alone reads %q", first.Text, alone.Text)
	}
	var doc docBody
	json.Unmarshal(got.Results[2], &doc)
	if len(doc.Pages) != 1 || doc.Pages[0].Source != "text-layer" || !strings.HasPrefix(doc.Text, "THANK YOU") {
		t.Errorf("the document's result: %s", got.Results[2])
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Errorf("the gate holds %+v afterwards", s)
	}

	for _, tt := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"too many", map[string]any{"images": slices.Repeat([]any{b64(f.receipt)}, 9)}, 413, "too_many_images"},
		{"both image and images", map[string]any{"image": b64(f.receipt), "images": []any{b64(f.receipt)}}, 400, "image_and_images"},
		{"empty", map[string]any{"images": []any{}}, 400, "empty_images"},
		{"not an array", map[string]any{"images": b64(f.receipt)}, 400, "invalid_images_field"},
		{"an entry not a string", map[string]any{"images": []any{b64(f.receipt), 42}}, 400, "invalid_images_field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(tt.body)
			code, raw := call(t, app, postJSON("/ocr", "application/json", body))
			checkJSONError(t, code, raw, tt.status, tt.code)
		})
	}
}

// TestRequestOptions: every option is checked, a bad value or an unknown option is a 400 naming
// it (and only a name that looks like one), valid options change this request only, and unknown
// top-level members are ignored as they always were.
func TestRequestOptions(t *testing.T) {
	img := fixtures(t).receipt
	app := newApp(t, server.Options{}, nil)
	base := readImageAnswer(t, app, img, nil)
	for _, tt := range []struct {
		name  string
		extra map[string]any
		code  string
		names string
	}{
		{"score above 1", map[string]any{"options": map[string]any{"min_score": 2}}, "invalid_option", "options.min_score"},
		{"score as a string", map[string]any{"options": map[string]any{"min_score": "0.5"}}, "invalid_option", "options.min_score"},
		{"limit side too small", map[string]any{"options": map[string]any{"det_limit_side": 10}}, "invalid_option", "options.det_limit_side"},
		{"limit side not whole", map[string]any{"options": map[string]any{"det_limit_side": 960.5}}, "invalid_option", "options.det_limit_side"},
		{"threshold 0", map[string]any{"options": map[string]any{"det_thresh": 0}}, "invalid_option", "options.det_thresh"},
		{"box threshold negative", map[string]any{"options": map[string]any{"det_box_thresh": -0.1}}, "invalid_option", "options.det_box_thresh"},
		{"unclip 0", map[string]any{"options": map[string]any{"det_unclip_ratio": 0}}, "invalid_option", "options.det_unclip_ratio"},
		{"classifier yes", map[string]any{"options": map[string]any{"use_cls": "yes"}}, "invalid_option", "options.use_cls"},
		{"unknown option", map[string]any{"options": map[string]any{"colour": "red"}}, "invalid_option", "an option it does not know"},
		{"unknown option with an odd name", map[string]any{"options": map[string]any{"<b>Bearer sk-1</b>": 1}}, "invalid_option", "an option it does not know"},
		{"options not an object", map[string]any{"options": 5}, "invalid_option", `"options" must be an object`},
		{"options an array", map[string]any{"options": []any{1}}, "invalid_option", `"options" must be an object`},
		{"ocr mode", map[string]any{"ocr": "never"}, "invalid_ocr_mode", `"ocr"`},
		{"words not a boolean", map[string]any{"words": "yes"}, "invalid_words", `"words"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, readRequest(img, tt.extra))
			checkJSONError(t, code, body, 400, tt.code)
			if msg := errorMessage(body); !strings.Contains(msg, tt.names) {
				t.Errorf("message %q does not name %s", msg, tt.names)
			}
			if strings.Contains(string(body), "Bearer") || strings.Contains(string(body), "red") {
				t.Errorf("message quotes the request: %s", body)
			}
		})
	}
	t.Run("valid options apply to the request only", func(t *testing.T) {
		strict := readImageAnswer(t, app, img, map[string]any{"options": map[string]any{"min_score": 0.97}})
		for _, r := range strict.Regions {
			if r.Confidence < 0.97 {
				t.Errorf("region %q of confidence %v under the request's minimum score", r.Text, r.Confidence)
			}
		}
		if len(strict.Regions) > len(base.Regions) {
			t.Errorf("%d regions with a higher minimum score, %d without", len(strict.Regions), len(base.Regions))
		}
		all := readImageAnswer(t, app, img, map[string]any{"options": map[string]any{
			"det_limit_side": 640, "det_thresh": 0.35, "det_box_thresh": 0.55, "det_unclip_ratio": 1.6, "use_cls": false, "min_score": 0.4}})
		if len(all.Regions) == 0 {
			t.Error("no region with every option set")
		}
		again := readImageAnswer(t, app, img, map[string]any{"colour": "red", "template": 7})
		if again.Text != base.Text || !sameRegions(again.Regions, base.Regions) {
			t.Errorf("the service's defaults changed after requests with options: %q, was %q", again.Text, base.Text)
		}
	})
}

// TestWords: "words" adds each region's words, which spell the region's text and lie inside its
// box; without it, the answer has no words.
func TestWords(t *testing.T) {
	img := fixtures(t).receipt
	app := newApp(t, server.Options{}, nil)
	ans := readImageAnswer(t, app, img, map[string]any{"words": true})
	if len(ans.Regions) == 0 {
		t.Fatal("no regions")
	}
	for _, r := range ans.Regions {
		var texts []string
		x0, y0, x1, y1 := r.BoundingShape.bounds()
		for _, w := range r.Words {
			texts = append(texts, w.Text)
			wx0, wy0, wx1, wy1 := w.BoundingShape.bounds()
			if wx0 < x0-2 || wy0 < y0-2 || wx1 > x1+2 || wy1 > y1+2 || w.Confidence <= 0 || w.Confidence > 1 {
				t.Errorf("word %q (%d,%d)-(%d,%d), confidence %v: outside region %q (%d,%d)-(%d,%d)", w.Text, wx0, wy0, wx1, wy1, w.Confidence, r.Text, x0, y0, x1, y1)
			}
		}
		if strings.Join(texts, " ") != strings.Join(strings.Fields(r.Text), " ") {
			t.Errorf("words %q do not spell %q", texts, r.Text)
		}
	}
	_, raw := call(t, app, readRequest(img, map[string]any{"words": false}))
	if strings.Contains(string(raw), `"words"`) {
		t.Error("words sent with \"words\": false")
	}
}

// TestPlainImageAnswerUnchanged: a plain image gets today's answer, field for field: the same
// members (and the page's rotation and blocks) and nothing more, each with the value the pipeline gives; the new request members, at
// their defaults, change nothing.
func TestPlainImageAnswerUnchanged(t *testing.T) {
	f := fixtures(t)
	app := docApp(t, server.Options{}, nil, nil)
	res, err := f.engine.Pipeline.Run(t.Context(), f.jpeg)
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []map[string]any{nil, {"pages": "1", "ocr": "auto", "words": false}, {"ocr": "always", "pages": ""}} {
		_, raw := call(t, app, readRequest(f.jpeg, extra))
		var top map[string]json.RawMessage
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		checkKeys(t, "answer", top, "version", "image_info", "rotation", "regions", "blocks", "text", "processing_time")
		var blocks []blockBody
		json.Unmarshal(top["blocks"], &blocks)
		if len(blocks) != len(res.Blocks) {
			t.Errorf("%d blocks, the pipeline's %d", len(blocks), len(res.Blocks))
		}
		for i := range min(len(blocks), len(res.Blocks)) {
			if !slices.Equal(blocks[i].Regions, res.Blocks[i].Regions) {
				t.Errorf("block %d: regions %v, the pipeline's %v", i, blocks[i].Regions, res.Blocks[i].Regions)
			}
		}
		var info map[string]json.RawMessage
		json.Unmarshal(top["image_info"], &info)
		checkKeys(t, "image_info", info, "width", "height", "bytes", "format")
		var regions []map[string]json.RawMessage
		json.Unmarshal(top["regions"], &regions)
		for _, r := range regions {
			checkKeys(t, "region", r, "region_id", "text", "confidence", "bounding_shape", "direction", "language", "reading_order", "row")
		}
		var ans ocrBody
		json.Unmarshal(raw, &ans)
		if ans.Version != server.Version || ans.ImageInfo.Width != res.Width || ans.ImageInfo.Height != res.Height ||
			ans.ImageInfo.Bytes != len(f.jpeg) || ans.ImageInfo.Format != "jpeg" || ans.Text != res.Text || len(ans.Regions) != len(res.Regions) {
			t.Fatalf("answer %+v / %q; the pipeline: %d×%d %q", ans.ImageInfo, ans.Text, res.Width, res.Height, res.Text)
		}
		for i, r := range ans.Regions {
			want := res.Regions[i]
			dir := "horizontal"
			if want.Vertical {
				dir = "vertical"
			}
			if r.RegionID != i || r.Text != want.Text || r.Confidence != math.Round(float64(want.Score)*1e4)/1e4 ||
				r.Direction != dir || r.Language != "unknown" || r.ReadingOrder != want.Order+1 || r.BoundingShape.Type != "polygon" ||
				r.BoundingShape.Rotation != math.Round(want.Quad.Angle()*100)/100 {
				t.Errorf("region %d: %+v; the pipeline's: %+v", i, r, want)
			}
			for k, p := range r.BoundingShape.Points {
				if p.X != int(math.Round(want.Quad[k].X)) || p.Y != int(math.Round(want.Quad[k].Y)) {
					t.Errorf("region %d point %d: %v, want %v", i, k, p, want.Quad[k])
				}
			}
		}
	}
}

func checkKeys(t *testing.T, what string, m map[string]json.RawMessage, want ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s has members %v, want exactly %v", what, got, want)
	}
}

// errorMessage is the "error" of an error answer.
func errorMessage(body []byte) string {
	var e struct{ Error string }
	json.Unmarshal(body, &e)
	return e.Error
}

// TestDocumentExtract: /ocr-json on a document sends the selected pages' text to the chat model in
// page order, each after its page marker, and answers one object; a document longer than the
// text limit is cut at a line, the model is told, and X-Chat-Text-Cut names the page.
func TestDocumentExtract(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	cs := newChatServer(t, func(text string) (int, string) {
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
		return 200, `{"company": "ACME", "date": null, "address": null, "total": "1299.00"}`
	})
	data, _ := bornDigital(t, invoice, letter, invoice)
	newExtractApp := func(maxText int) *checkedApp {
		ex, err := extract.New(extract.Options{Model: "m", BaseURL: cs.URL + "/v1", Timeout: time.Minute, MaxText: maxText})
		if err != nil {
			t.Fatal(err)
		}
		return docApp(t, server.Options{Extractor: ex}, nil, nil)
	}
	app := newExtractApp(0)
	resp, err := app.Test(ocrJSONRequest(t, data, map[string]any{"template": "receipt", "pages": "2-3"}), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"1299.00"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if h := resp.Header.Get("X-Chat-Text-Cut"); h != "" {
		t.Errorf("X-Chat-Text-Cut %q on a short document", h)
	}
	mu.Lock()
	text := seen[len(seen)-1]
	mu.Unlock()
	want := "<<<PAGE 2>>>\nTHANK YOU FOR THE PAYMENT\nTERMS NET THIRTY DAYS AT\n<<<PAGE 3>>>\nTAX INVOICE 2024-0117 TOTAL DUE AT\n" +
		"TRACKING NUMBER 88214 PAID IN FULL AT\nTHE SUBTOTAL | TWELVE DOLLARS FLAT\nTOTAL 1299.00 NET"
	if text != want {
		t.Errorf("the chat model read\n%s\nwant\n%s", text, want)
	}

	cut := newExtractApp(60) // the first page marker and line fit, the second line does not
	resp, err = cut.Test(ocrJSONRequest(t, data, map[string]any{"template": "receipt"}), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Chat-Text-Cut") != "1" {
		t.Errorf("status %d, X-Chat-Text-Cut %q; want 200 and page 1", resp.StatusCode, resp.Header.Get("X-Chat-Text-Cut"))
	}
	mu.Lock()
	text = seen[len(seen)-1]
	mu.Unlock()
	if text != "<<<PAGE 1>>>\nTAX INVOICE 2024-0117 TOTAL DUE AT" {
		t.Errorf("cut text %q", text)
	}
	cs.mu.Lock()
	last := cs.requests[len(cs.requests)-1]
	cs.mu.Unlock()
	if raw, _ := json.Marshal(last["messages"]); !strings.Contains(string(raw), "cut at 60 characters, during page 1") {
		t.Errorf("the prompt does not say the text was cut: %s", raw)
	}

	code, raw := call(t, app, postJSON("/ocr-json", "application/json", []byte(`{"images": ["aGVsbG8="]}`)))
	checkJSONError(t, code, raw, 400, "images_not_supported")
}
