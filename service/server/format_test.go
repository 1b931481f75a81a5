package server_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/server"
)

// xmlWords reads an hOCR or ALTO answer as XML (failing the test when it is not well-formed) and
// returns its elements' count by name or class, and its words in document order: the text of
// hOCR's ocrx_word spans, or ALTO's String CONTENT.
func xmlWords(t *testing.T, data []byte) (map[string]int, []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	count := map[string]int{}
	var words []string
	inWord := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return count, words
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v: %.300s", err, data)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			count[tk.Name.Local]++
			for _, a := range tk.Attr {
				switch {
				case a.Name.Local == "class":
					count[a.Value]++
					inWord = a.Value == "ocrx_word"
					if inWord {
						words = append(words, "")
					}
				case a.Name.Local == "CONTENT" && tk.Name.Local == "String":
					words = append(words, a.Value)
				}
			}
		case xml.CharData:
			if inWord {
				words[len(words)-1] += string(tk)
			}
		case xml.EndElement:
			inWord = false
		}
	}
}

// answerWords are a JSON answer's words in reading order: each region's words, or its text when
// it has none located.
func answerWords(pages []pageBody) []string {
	var out []string
	for _, p := range pages {
		for _, r := range p.Regions {
			if len(r.Words) == 0 {
				out = append(out, r.Text)
			}
			for _, w := range r.Words {
				out = append(out, w.Text)
			}
		}
	}
	return out
}

// TestAnswerFormats: a mixed PDF (a scanned page, OCR'd, and a born-digital page, read from its
// layer) asked for as text, hOCR and ALTO, by "format", by the Accept header and by a query
// parameter on a raw upload: each answer has its media type, one page element per page, and the
// JSON answer's words in its order; the text is the JSON's text.
func TestAnswerFormats(t *testing.T) {
	jpg := fixtures(t).jpeg
	data := scanned(t, [][]byte{jpg}, letter, false)
	app := docApp(t, server.Options{}, nil, nil)
	d := readDocument(t, app, data, map[string]any{"words": true})
	if len(d.Pages) != 2 || d.Pages[0].Source != "ocr" || d.Pages[1].Source != "text-layer" {
		t.Fatalf("pages %+v", d.Pages)
	}
	want := answerWords(d.Pages)
	byAccept := func(accept string) *http.Request {
		req := readRequest(data, nil)
		req.Header.Set("Accept", accept)
		return req
	}
	for _, tt := range []struct {
		name  string
		req   *http.Request
		ctype string
	}{
		{"format text", readRequest(data, map[string]any{"format": "text"}), "text/plain; charset=utf-8"},
		{"Accept text/plain", byAccept("text/plain"), "text/plain; charset=utf-8"},
		{"format hocr", readRequest(data, map[string]any{"format": "hocr"}), "text/vnd.hocr+html; charset=utf-8"},
		{"Accept hOCR", byAccept("text/vnd.hocr+html, application/json;q=0.5"), "text/vnd.hocr+html; charset=utf-8"},
		{"format alto", readRequest(data, map[string]any{"format": "alto"}), "application/alto+xml; charset=utf-8"},
		{"raw upload ?format=alto", rawRequest("/ocr", "application/pdf", data, url.Values{"format": {"alto"}}), "application/alto+xml; charset=utf-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := app.Test(tt.req, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tt.ctype {
				t.Fatalf("status %d, %q: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if strings.HasPrefix(tt.ctype, "text/plain") {
				if string(body) != d.Text+"\n" {
					t.Errorf("text %q, the JSON's %q", body, d.Text)
				}
				return
			}
			count, words := xmlWords(t, body)
			if n := count["ocr_page"] + count["Page"]; n != 2 {
				t.Errorf("%d pages", n)
			}
			if strings.Join(words, " ") != strings.Join(want, " ") {
				t.Errorf("words %q, the JSON's %q", words, want)
			}
		})
	}
}

// TestAnswerFormatOfAnImage: an image asked for as hOCR is one page the image's size.
func TestAnswerFormatOfAnImage(t *testing.T) {
	jpg := fixtures(t).jpeg
	app := docApp(t, server.Options{}, nil, nil)
	ans := readImageAnswer(t, app, jpg, nil)
	code, body := call(t, app, readRequest(jpg, map[string]any{"format": "hocr"}))
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	page := regexp.MustCompile(`class="ocr_page" id="page_1" title="bbox 0 0 (\d+) (\d+);`).FindSubmatch(body)
	if page == nil || string(page[1]) != itoa(ans.ImageInfo.Width) || string(page[2]) != itoa(ans.ImageInfo.Height) {
		t.Errorf("page %q, the image %d×%d", page, ans.ImageInfo.Width, ans.ImageInfo.Height)
	}
	if count, _ := xmlWords(t, body); count["ocr_line"] != len(ans.Regions) {
		t.Errorf("%d lines, %d regions", count["ocr_line"], len(ans.Regions))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestAnswerFormatErrors: an unknown format is a 400 and an Accept header of no format's type a
// 406, both listing the formats without repeating what was sent; several images are answered in
// JSON only; and a bad image asked for in another format gets the JSON error it gets alone.
func TestAnswerFormatErrors(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	jpg := fixtures(t).jpeg
	accept := readRequest(jpg, nil)
	accept.Header.Set("Accept", "image/x-secret-type")
	batch, _ := json.Marshal(map[string]any{"images": []string{b64(jpg), b64(jpg)}, "format": "hocr"})
	for _, tt := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
		lists  bool
	}{
		{"unknown format", readRequest(jpg, map[string]any{"format": "x-secret-format"}), 400, "invalid_format", true},
		{"format not a string", readRequest(jpg, map[string]any{"format": 7}), 400, "invalid_format", true},
		{"unknown format as a query parameter", rawRequest("/ocr", "image/jpeg", jpg, url.Values{"format": {"x-secret-format"}}), 400, "invalid_format", true},
		{"Accept of no format", accept, 406, "not_acceptable", true},
		{"images as hOCR", postJSON("/ocr", "application/json", batch), 400, "format_not_for_batch", false},
		{"undecodable image as ALTO", readRequest([]byte("\xff\xd8\xff\xe0 not a jpeg"), map[string]any{"format": "alto"}), 422, "", false},
		{"truncated PDF as hOCR", readRequest([]byte("%PDF-1.7\n1 0 obj"), map[string]any{"format": "hocr"}), 422, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, tt.req)
			checkJSONError(t, code, body, tt.status, tt.code)
			if bytes.Contains(body, []byte("secret")) {
				t.Errorf("the error repeats what was sent: %s", body)
			}
			if tt.lists && !bytes.Contains(body, []byte("json, text, hocr, alto, pdf")) {
				t.Errorf("the error does not list the formats: %s", body)
			}
		})
	}
}

// TestHostileDocumentsInEveryFormat: every hostile document (the PDFs, and a few TIFFs) asked for
// as hOCR, ALTO or PDF gets the status and error code it gets as JSON (the answer's form changes
// nothing before the answer is written), and memory grows no more than under the JSON run's bound.
func TestHostileDocumentsInEveryFormat(t *testing.T) {
	const budget = 512 << 20
	gate := admission.New(admission.Options{Budget: budget, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, server.Options{Gate: gate, MaxRequestCost: budget, RequestTimeout: 30 * time.Second}, nil,
		func(c *document.Config) { c.OpTimeout = 2 * time.Second })
	codeOf := func(status int, body []byte) string {
		if status == 200 {
			return ""
		}
		var e struct{ Code string }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("status %d with a body that is not a JSON error: %.200s", status, body)
		}
		return e.Code
	}
	docs := append(hostile.PDFs(),
		hostile.HostilePDF{Name: "TIFF of directories of 65535 entries", Data: hostile.TIFFOverlappingIFDs(100, 65535)},
		hostile.HostilePDF{Name: "TIFF Deflate bomb", Data: hostile.TIFFDeflateBomb(2000, 2000, 8, 64<<20)},
		hostile.HostilePDF{Name: "TIFF CCITT rows of zero-length runs", Data: hostile.TIFFCCITTZeroRuns(8, 500_000)},
		hostile.HostilePDF{Name: "TIFF of one-pixel tiles", Data: hostile.TIFFManyPages(1, 2000)},
	)
	for _, d := range docs {
		t.Run(d.Name, func(t *testing.T) {
			status, body := call(t, app, readRequest(d.Data, nil))
			want := codeOf(status, body)
			for _, f := range []string{"hocr", "alto", "pdf"} {
				var got int
				var gotBody []byte
				grew := uint64(memlimit.Growth(10*time.Millisecond, func() { got, gotBody = call(t, app, readRequest(d.Data, map[string]any{"format": f})) }))
				if got != status || codeOf(got, gotBody) != want {
					t.Errorf("%s: status %d %q; as JSON %d %q", f, got, codeOf(got, gotBody), status, want)
				}
				if grew > budget+400<<20 {
					t.Errorf("%s: resident memory grew by %d MiB; the budget is %d MiB", f, grew>>20, budget>>20)
				}
			}
		})
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Errorf("the gate holds %+v after the hostile set", s)
	}
}

// pdfWords runs poppler's pdftotext -bbox -raw (words in the order the PDF sets them) on a PDF and
// returns its words with their boxes, and its first page's width in points.
func pdfWords(t *testing.T, pdf []byte) (words []string, boxes [][4]float64, pageWidth float64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.Command(t, "pdftotext", "make poppler installs it (make test does)")
	out, err := exec.Command("pdftotext", "-bbox", "-raw", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (poppler-utils) on the PDF: %v", err)
	}
	page := regexp.MustCompile(`<page width="([0-9.]+)"`).FindSubmatch(out)
	if page == nil {
		t.Fatalf("pdftotext found no page: %.300s", out)
	}
	pageWidth, _ = strconv.ParseFloat(string(page[1]), 64)
	re := regexp.MustCompile(`<word xMin="([0-9.]+)" yMin="([0-9.]+)" xMax="([0-9.]+)" yMax="([0-9.]+)">([^<]*)</word>`)
	for _, m := range re.FindAllSubmatch(out, -1) {
		var b [4]float64
		for i := range b {
			b[i], _ = strconv.ParseFloat(string(m[i+1]), 64)
		}
		words = append(words, html.UnescapeString(string(m[5])))
		boxes = append(boxes, b)
	}
	return words, boxes, pageWidth
}

// wordF1 is the F1 score of the words got against want, as multisets.
func wordF1(got, want []string) float64 {
	shared := ocrscore.SharedWords(want, got)
	if len(got) == 0 || len(want) == 0 {
		return 0
	}
	p, r := float64(shared)/float64(len(got)), float64(shared)/float64(len(want))
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func boxIoU(a, b [4]float64) float64 {
	ix := max(0, min(a[2], b[2])-max(a[0], b[0]))
	iy := max(0, min(a[3], b[3])-max(a[1], b[1]))
	inter := ix * iy
	union := (a[2]-a[0])*(a[3]-a[1]) + (b[2]-b[0])*(b[3]-b[1]) - inter
	if union <= 0 {
		return 0
	}
	return inter / union
}

// TestSearchablePDFOfAnImage: a JPEG and the same picture as a PNG, asked for as "pdf": poppler's
// pdftotext reads back the JSON answer's words (word F1 ≥ 0.99) in the same order, and at least
// 95 % of its word boxes overlap the answer's (IoU ≥ 0.5); the JPEG is in the PDF byte for byte.
func TestSearchablePDFOfAnImage(t *testing.T) {
	jpg := fixtures(t).jpeg
	app := docApp(t, server.Options{}, nil, nil)
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"JPEG", jpg},
		{"PNG", pngOf(t, decoded(t, jpg))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ans struct {
				ImageInfo struct{ Width, Height int } `json:"image_info"`
				Regions   []regionBody
			}
			code, body := call(t, app, readRequest(tt.data, map[string]any{"words": true}))
			if code != 200 || json.Unmarshal(body, &ans) != nil {
				t.Fatalf("status %d: %.300s", code, body)
			}
			var want []string
			var wantBoxes [][4]float64
			for _, r := range ans.Regions {
				for _, w := range r.Words {
					x0, y0, x1, y1 := w.BoundingShape.bounds()
					want = append(want, w.Text)
					wantBoxes = append(wantBoxes, [4]float64{float64(x0), float64(y0), float64(x1), float64(y1)})
				}
			}
			if len(want) == 0 {
				t.Fatal("the answer has no words")
			}
			resp, err := app.Test(readRequest(tt.data, map[string]any{"format": "pdf"}), -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			pdf, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" {
				t.Fatalf("status %d, %q: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), pdf)
			}
			if tt.name == "JPEG" && !bytes.Contains(pdf, jpg) {
				t.Errorf("the JPEG is not in the PDF byte for byte")
			}
			got, boxes, width := pdfWords(t, pdf)
			if f1 := wordF1(got, want); f1 < 0.99 {
				t.Errorf("word F1 %.3f: pdftotext reads %q; the answer %q", f1, got, want)
			}
			if len(got) != len(want) {
				t.Fatalf("%d words read back, %d in the answer", len(got), len(want))
			}
			scale := width / float64(ans.ImageInfo.Width) // points a pixel
			on := 0
			for i := range got {
				wb := wantBoxes[i]
				if got[i] == want[i] && boxIoU(boxes[i], [4]float64{wb[0] * scale, wb[1] * scale, wb[2] * scale, wb[3] * scale}) >= 0.5 {
					on++
				}
			}
			if on*100 < 95*len(want) {
				t.Errorf("%d of %d words in order on their boxes", on, len(want))
			}
			t.Logf("%d words, %d in order on their boxes; %d bytes for a %d-byte image", len(want), on, len(pdf), len(tt.data))
		})
	}
}
