package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/server"
)

// file is a file part of a form: its bytes, its name and media type as a client names them.
type file struct {
	name, ctype string
	data        []byte
}

// formRequest is a multipart/form-data POST to path, written as curl -F (and browsers, and Go's
// mime/multipart) write one: each file in a part named "file" with a filename and a media
// type, then the fields.
func formRequest(path string, files []file, fields map[string]string, q url.Values) *http.Request {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, f.name))
		h.Set("Content-Type", f.ctype)
		pw, _ := w.CreatePart(h)
		pw.Write(f.data)
	}
	for k, v := range fields {
		w.WriteField(k, v)
	}
	w.Close()
	req := httptest.NewRequest(http.MethodPost, path+query(q), &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return req
}

// rawRequest is a POST to path whose body is the file itself, with its media type.
func rawRequest(path, ctype string, data []byte, q url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path+query(q), bytes.NewReader(data))
	req.Header.Set("Content-Type", ctype)
	return req
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// jsonRequest is a POST to path of {"image": base64} with the members in extra.
func jsonRequest(path string, data []byte, extra map[string]any) *http.Request {
	body := map[string]any{"image": b64(data)}
	for k, v := range extra {
		body[k] = v
	}
	raw, _ := json.Marshal(body)
	return postJSON(path, "application/json", raw)
}

// comparable is an answer without what differs between two runs of the same request: the time
// it took, and the message of an entry's error, which names what the request sent ("image", a
// "file" part).
func comparable(t testing.TB, body []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("answer is not JSON: %.300s", body)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "processing_time")
			delete(v, "error") // an entry's message, worded for the kind of body; its code stays
			for _, e := range v {
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(v)
	out, _ := json.MarshalIndent(v, "", " ")
	return string(out)
}

// TestFilesAsFiles: an image and a PDF sent as the request body itself, or in a multipart form
// as curl -F sends them, are answered exactly as the same files sent as base64 JSON, with the
// same options given as query parameters, form fields or JSON members; several file parts are
// answered as an "images" array is.
func TestFilesAsFiles(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	img := fixtures(t).jpeg
	pdf, _ := bornDigital(t, invoice, letter)
	scan := scanned(t, [][]byte{img}, nil, true)
	tests := []struct {
		name  string
		json  *http.Request
		other map[string]*http.Request
	}{
		{"image", jsonRequest("/ocr", img, nil), map[string]*http.Request{
			"raw image/jpeg":   rawRequest("/ocr", "image/jpeg", img, nil),
			"raw octet-stream": rawRequest("/ocr", "application/octet-stream", img, nil),
			"form":             formRequest("/ocr", []file{{"receipt.jpg", "image/jpeg", img}}, nil, nil),
		}},
		{"image with options", jsonRequest("/ocr", img, map[string]any{"words": true, "options": map[string]any{"min_score": 0.7, "use_cls": false}}), map[string]*http.Request{
			"raw":            rawRequest("/ocr", "image/jpeg", img, url.Values{"words": {"true"}, "min_score": {"0.7"}, "use_cls": {"false"}}),
			"form fields":    formRequest("/ocr", []file{{"receipt.jpg", "image/jpeg", img}}, map[string]string{"words": "true", "min_score": "0.7", "use_cls": "false"}, nil),
			"form and query": formRequest("/ocr", []file{{"receipt.jpg", "image/jpeg", img}}, map[string]string{"words": "true"}, url.Values{"min_score": {"0.7"}, "use_cls": {"false"}}),
		}},
		{"born-digital PDF", jsonRequest("/ocr", pdf, map[string]any{"pages": "2-", "words": true}), map[string]*http.Request{
			"raw application/pdf": rawRequest("/ocr", "application/pdf", pdf, url.Values{"pages": {"2-"}, "words": {"true"}}),
			"form":                formRequest("/ocr", []file{{"invoice.pdf", "application/pdf", pdf}}, map[string]string{"pages": "2-", "words": "true"}, nil),
		}},
		{"scanned PDF", jsonRequest("/ocr", scan, map[string]any{"ocr": "always"}), map[string]*http.Request{
			"raw application/pdf": rawRequest("/ocr", "application/pdf", scan, url.Values{"ocr": {"always"}}),
			"form":                formRequest("/ocr", []file{{"scan.pdf", "application/pdf", scan}}, map[string]string{"ocr": "always"}, nil),
		}},
		{"several", postJSON("/ocr", "application/json", mustJSON(map[string]any{"images": []string{b64(img), b64(pdf), ""}})), map[string]*http.Request{
			"form": formRequest("/ocr", []file{{"a.jpg", "image/jpeg", img}, {"b.pdf", "application/pdf", pdf}, {"c.png", "image/png", nil}}, nil, nil),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, tt.json)
			if code != 200 {
				t.Fatalf("JSON: %d %.300s", code, body)
			}
			want := comparable(t, body)
			for name, req := range tt.other {
				code, body := call(t, app, req)
				if code != 200 {
					t.Errorf("%s: %d %.300s", name, code, body)
					continue
				}
				if got := comparable(t, body); got != want {
					t.Errorf("%s answers otherwise than JSON: %s", name, firstDifference(got, want))
				}
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestExtractFilesAsFiles: /ocr-json fills the same object from a file sent as the body (its
// template as a query parameter) or in a form (a template or a schema as a field) as from base64
// JSON.
func TestExtractFilesAsFiles(t *testing.T) {
	cs := newChatServer(t, receiptReader)
	ex, err := extract.New(extract.Options{Model: "test-model", BaseURL: cs.URL + "/v1", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	app := docApp(t, server.Options{Extractor: ex}, nil, nil)
	img := fixtures(t).fields
	pdf := scanned(t, [][]byte{fixtures(t).jpeg, jpegOf(t, img)}, nil, true)
	schema := `{"type":"object","properties":{"company":{"type":["string","null"]},"date":{"type":["string","null"]},"address":{"type":["string","null"]},"total":{"type":["string","null"]}},"required":["company","date","address","total"]}`
	tests := []struct {
		name  string
		json  *http.Request
		other map[string]*http.Request
	}{
		{"template", jsonRequest("/ocr-json", img, map[string]any{"template": "receipt"}), map[string]*http.Request{
			"raw":  rawRequest("/ocr-json", "image/png", img, url.Values{"template": {"receipt"}}),
			"form": formRequest("/ocr-json", []file{{"receipt.png", "image/png", img}}, map[string]string{"template": "receipt"}, nil),
		}},
		{"schema", jsonRequest("/ocr-json", img, map[string]any{"schema": json.RawMessage(schema)}), map[string]*http.Request{
			"form": formRequest("/ocr-json", []file{{"receipt.png", "image/png", img}}, map[string]string{"schema": schema}, nil),
		}},
		{"PDF page", jsonRequest("/ocr-json", pdf, map[string]any{"template": "receipt", "pages": "2"}), map[string]*http.Request{
			"raw":  rawRequest("/ocr-json", "application/pdf", pdf, url.Values{"template": {"receipt"}, "pages": {"2"}}),
			"form": formRequest("/ocr-json", []file{{"receipts.pdf", "application/pdf", pdf}}, map[string]string{"schema": schema}, url.Values{"pages": {"2"}}),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, want := call(t, app, tt.json)
			if code != 200 {
				t.Fatalf("JSON: %d %.300s", code, want)
			}
			if !strings.Contains(string(want), fixtures(t).total) {
				t.Fatalf("the JSON answer does not hold the total %s: %s", fixtures(t).total, want)
			}
			for name, req := range tt.other {
				code, got := call(t, app, req)
				if code != 200 || !bytes.Equal(got, want) {
					t.Errorf("%s: %d %s, JSON gave %s", name, code, got, want)
				}
			}
		})
	}
}

// TestUploadErrors: what is wrong with a raw body, a form or the options sent beside them gets
// the same 4xx JSON error as the same mistake in a JSON body, or one of its own kind.
func TestUploadErrors(t *testing.T) {
	ex, err := extract.New(extract.Options{Model: "m", BaseURL: "http://127.0.0.1:1/v1", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(t, server.Options{Extractor: ex, MaxBodyBytes: 1 << 20, MaxImages: 4}, nil)
	img := fixtures(t).receipt
	one := []file{{"r.png", "image/png", img}}
	raw := func(body string, ctype string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/ocr", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		return req
	}
	head := func(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }
	part := `Content-Disposition: form-data; name="file"; filename="x.png"`
	nested := head("--b", part, "Content-Type: multipart/mixed; boundary=in") + "--in\r\n\r\nx\r\n--in--\r\n--b--\r\n"
	var flood strings.Builder
	for range 1000 {
		flood.WriteString(head("--b", part) + "\r\n")
	}
	flood.WriteString("--b--\r\n")
	var heads strings.Builder
	for range 1000 {
		heads.WriteString(head("--b", part, "X-A: "+strings.Repeat("a", 1000), "X-B: "+strings.Repeat("b", 1000)))
		heads.WriteString("x\r\n")
	}
	heads.WriteString("--b--\r\n")
	fieldsCT, fields := hostile.MultipartFlood(1000)
	tests := []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"empty raw body", rawRequest("/ocr", "image/jpeg", nil, nil), 400, "empty_body"},
		{"raw text", rawRequest("/ocr", "text/plain", img, nil), 415, "unsupported_media_type"},
		{"raw body over the limit", rawRequest("/ocr", "image/jpeg", make([]byte, 1<<20+1), nil), 413, "body_too_large"},
		{"raw body that is no image", rawRequest("/ocr", "image/jpeg", []byte("not an image at all"), nil), 415, "unsupported_image_format"},
		{"unknown query parameter", rawRequest("/ocr", "image/png", img, url.Values{"page": {"2"}}), 400, "invalid_parameter"},
		{"query parameter twice", rawRequest("/ocr", "image/png", img, url.Values{"pages": {"1", "1"}}), 400, "invalid_parameter"},
		{"query parameter with a JSON body", withQuery(jsonRequest("/ocr", img, nil), "pages=1"), 400, "invalid_parameter"},
		{"bad pages", rawRequest("/ocr", "image/png", img, url.Values{"pages": {"x-y"}}), 400, "invalid_pages"},
		{"page an image lacks", rawRequest("/ocr", "image/png", img, url.Values{"pages": {"2"}}), 400, "invalid_pages"},
		{"bad ocr mode", rawRequest("/ocr", "image/png", img, url.Values{"ocr": {"never"}}), 400, "invalid_ocr_mode"},
		{"bad words", rawRequest("/ocr", "image/png", img, url.Values{"words": {"yes"}}), 400, "invalid_words"},
		{"option out of range", rawRequest("/ocr", "image/png", img, url.Values{"min_score": {"2"}}), 400, "invalid_option"},
		{"option not a number", rawRequest("/ocr", "image/png", img, url.Values{"det_thresh": {"high"}}), 400, "invalid_option"},
		{"template on /ocr", rawRequest("/ocr", "image/png", img, url.Values{"template": {"receipt"}}), 400, "invalid_parameter"},
		{"schema as a query parameter", rawRequest("/ocr-json", "image/png", img, url.Values{"schema": {"{}"}}), 400, "invalid_parameter"},
		{"unknown template", rawRequest("/ocr-json", "image/png", img, url.Values{"template": {"nope"}}), 422, "unknown_template"},
		{"form without a boundary", raw("", "multipart/form-data"), 400, "invalid_multipart"},
		{"form with a bad boundary", raw("", `multipart/form-data; boundary="a\"b"`), 400, "invalid_multipart"},
		{"form without its boundary", raw("just bytes", "multipart/form-data; boundary=b"), 400, "invalid_multipart"},
		{"form cut before its end", raw(head("--b", part)+"x", "multipart/form-data; boundary=b"), 400, "invalid_multipart"},
		{"nested multipart", raw(nested, "multipart/form-data; boundary=b"), 400, "invalid_multipart"},
		{"part head of 9 KiB", raw(head("--b", part, "X-Pad: "+strings.Repeat("p", 9<<10))+"x\r\n--b--", "multipart/form-data; boundary=b"), 400, "invalid_multipart"},
		{"1 000 empty file parts", raw(flood.String(), "multipart/form-data; boundary=b"), 413, "too_many_images"},
		{"1 000 file parts of heads", raw(heads.String(), "multipart/form-data; boundary=b"), 413, "too_many_images"},
		{"1 000 fields", raw(string(fields), fieldsCT), 400, "invalid_parameter"},
		{"form without a file", formRequest("/ocr", nil, map[string]string{"pages": "1"}, nil), 400, "missing_image"},
		{"empty file", formRequest("/ocr", []file{{"x.png", "image/png", nil}}, nil, nil), 400, "empty_image"},
		{"file part too large", formRequest("/ocr", []file{{"x.png", "image/png", make([]byte, 1<<20+1)}}, nil, nil), 413, "body_too_large"},
		{"files too large together", formRequest("/ocr", []file{{"x.png", "image/png", make([]byte, 600<<10)}, {"y.png", "image/png", make([]byte, 600<<10)}}, nil, nil), 413, "body_too_large"},
		{"field too large", formRequest("/ocr", one, map[string]string{"pages": strings.Repeat("1,", 4<<10)}, nil), 400, "invalid_parameter"},
		{"field and query", formRequest("/ocr", one, map[string]string{"pages": "1"}, url.Values{"pages": {"1"}}), 400, "invalid_parameter"},
		{"schema too large", formRequest("/ocr-json", one, map[string]string{"schema": `{"x":"` + strings.Repeat("s", 70<<10) + `"}`}, nil), 422, "invalid_schema"},
		{"invalid schema", formRequest("/ocr-json", one, map[string]string{"schema": `{"type":"array"}`}, nil), 422, "invalid_schema"},
		{"schema and template", formRequest("/ocr-json", one, map[string]string{"schema": `{"type":"object"}`, "template": "receipt"}, nil), 400, "schema_and_template"},
		{"two files to /ocr-json", formRequest("/ocr-json", append(one, one...), nil, nil), 400, "images_not_supported"},
		{"schema field on /ocr", formRequest("/ocr", one, map[string]string{"schema": "{}"}, nil), 400, "invalid_parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, tt.req)
			checkJSONError(t, code, body, tt.status, tt.code)
		})
	}
}

func withQuery(req *http.Request, q string) *http.Request {
	req.URL.RawQuery = q
	req.RequestURI = req.URL.RequestURI()
	return req
}

// TestUploadFloodsWithinTheirBounds: forms built to cost the server memory (1 000 parts, parts
// that are all head, a nested form, a file larger than the limit) are refused at the bound they
// pass, sent over a real socket: the server allocates for them no more than the file bytes it
// was sent (a file over the limit), or next to nothing (the floods), where a 12 MiB body read
// whole costs its buffer. Nothing of a form is collected before its bounds are checked.
func TestUploadFloodsWithinTheirBounds(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 16 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	size := 12 << 20
	_, fields := hostile.MultipartFlood(size / 100)
	send := func(ctype string, body []byte) (int, []byte, int64) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(time.Minute))
		request := append([]byte(fmt.Sprintf("POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ctype, len(body))), body...)
		var resp *http.Response
		var got []byte
		n := allocatedBy(func() {
			// The server may answer before it has all of the request.
			go conn.Write(request)
			if resp, err = http.ReadResponse(bufio.NewReader(conn), nil); err != nil { //nolint:bodyclose // closed just below, inside the measured call
				t.Fatalf("no answer: %v", err)
			}
			got, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		})
		return resp.StatusCode, got, n
	}
	// What a body as large costs when it is read whole: a raw body that is no image.
	code, got, whole := send("application/octet-stream", bytes.Repeat([]byte("a"), size))
	checkJSONError(t, code, got, 415, "unsupported_image_format")
	t.Logf("a %d MiB body read whole: %.1f MiB allocated", size>>20, float64(whole)/(1<<20))
	head := func(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }
	big := head("--b", `Content-Disposition: form-data; name="file"; filename="x.png"`) + strings.Repeat("f", 16<<20+1) + "\r\n--b--\r\n"
	for _, tt := range []struct {
		name   string
		ctype  string
		body   string
		status int
		code   string
		bound  int64
	}{
		{"heads", hostile.FormContentType, string(hostile.MultipartHeadFlood(size)), 413, "too_many_images", 1 << 20},
		{"empty files", hostile.FormContentType, string(hostile.MultipartFileFlood(size)), 413, "too_many_images", 1 << 20},
		{"fields", "multipart/form-data; boundary=" + boundaryOf(fields), string(fields), 400, "invalid_parameter", 1 << 20},
		{"nested", hostile.FormContentType, string(hostile.MultipartNested(size)), 400, "invalid_multipart", 1 << 20},
		// A file within the limit, read as it arrives (in a buffer that grows by doubling), whose
		// form never ends.
		{"unterminated", hostile.FormContentType, string(hostile.MultipartUnterminated(size)), 400, "invalid_multipart", 2*16<<20 + 1<<20},
		// Read up to the limit, in a buffer that grows to it by doubling.
		{"file over the limit", "multipart/form-data; boundary=b", big, 413, "body_too_large", 2*16<<20 + 1<<20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, got, n := send(tt.ctype, []byte(tt.body))
			checkJSONError(t, code, got, tt.status, tt.code)
			t.Logf("a %d MiB form: %.1f MiB allocated", len(tt.body)>>20, float64(n)/(1<<20))
			if n > tt.bound {
				t.Errorf("a %d MiB form allocated %.1f MiB (bound %d MiB)", len(tt.body)>>20, float64(n)/(1<<20), tt.bound>>20)
			}
		})
	}
}

// boundaryOf is the boundary of a form written by mime/multipart: its first line, less "--".
func boundaryOf(body []byte) string {
	line, _, _ := bytes.Cut(body, []byte("\r\n"))
	return string(bytes.TrimPrefix(line, []byte("--")))
}

// TestCurl sends a PDF with curl -F and a JPEG with curl --data-binary to the service over a
// real socket, as the users do, and compares the answers with base64 JSON's.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed; TestFilesAsFiles sends the same requests from Go")
	}
	opt := server.Options{}
	app := docApp(t, opt, nil, nil)
	addr := serveGuarded(t, app, server.Options{MaxBodyBytes: 20 << 20})
	dir := t.TempDir()
	pdf, _ := bornDigital(t, invoice)
	img := fixtures(t).jpeg
	os.WriteFile(filepath.Join(dir, "x.pdf"), pdf, 0o644)
	os.WriteFile(filepath.Join(dir, "x.jpg"), img, 0o644)
	for _, tt := range []struct {
		name string
		args []string
		json *http.Request
	}{
		{"curl -F file=@x.pdf", []string{"-F", "file=@x.pdf", "-F", "words=true", "http://" + addr + "/ocr"}, jsonRequest("/ocr", pdf, map[string]any{"words": true})},
		{"curl --data-binary @x.jpg", []string{"--data-binary", "@x.jpg", "-H", "Content-Type: image/jpeg", "http://" + addr + "/ocr?pages=1"}, jsonRequest("/ocr", img, map[string]any{"pages": "1"})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(curl, append([]string{"-sS", "--fail-with-body", "--max-time", "120"}, tt.args...)...)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			code, want := call(t, app, tt.json)
			if code != 200 {
				t.Fatalf("JSON: %d %.300s", code, want)
			}
			if got, want := comparable(t, out), comparable(t, want); got != want {
				t.Errorf("curl's answer differs from JSON's: %s", firstDifference(got, want))
			}
		})
	}
}

// firstDifference shows where two indented JSON texts first differ, with the lines before.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			from := max(0, i-6)
			at := func(l []string) string {
				if i >= len(l) {
					return "(end)"
				}
				return l[i]
			}
			return fmt.Sprintf("at line %d, after\n%s\ngot  %s\nwant %s", i+1, strings.Join(g[from:min(i, len(g))], "\n"), at(g), at(w))
		}
	}
	return "no difference"
}

// jpegOf is an image file as a JPEG (itself when it is one), for a scanner's PDF.
func jpegOf(t testing.TB, data []byte) []byte {
	t.Helper()
	if bytes.HasPrefix(data, []byte{0xff, 0xd8}) {
		return data
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, decoded(t, data), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFilesUpToTheBodyLimit: the body limit is the size of the files a client can send: a file
// of exactly OCRGATE_MAX_BODY_BYTES is read, raw or in a form (whose framing may add up to
// 1 MiB), over a real socket through the framing guard; a byte more is 413. The same file as
// base64 JSON is a third larger, and over the limit.
func TestFilesUpToTheBodyLimit(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 1 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	limit := bytes.Repeat([]byte("z"), 1<<20) // no image: read whole, then 415
	over := append(bytes.Clone(limit), 'z')
	send := func(req *http.Request) (int, []byte) {
		body, _ := io.ReadAll(req.Body)
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", req.URL.RequestURI(), req.Header.Get("Content-Type"), len(body))
		resp, got := rawExchange(t, addr, head+string(body))
		return resp.StatusCode, got
	}
	for _, tt := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"raw file at the limit", rawRequest("/ocr", "application/octet-stream", limit, nil), 415, "unsupported_image_format"},
		{"raw file over the limit", rawRequest("/ocr", "application/octet-stream", over, nil), 413, "body_too_large"},
		{"form file at the limit", formRequest("/ocr", []file{{"x.bin", "application/octet-stream", limit}}, map[string]string{"pages": "1"}, nil), 415, "unsupported_image_format"},
		{"form file over the limit", formRequest("/ocr", []file{{"x.bin", "application/octet-stream", over}}, nil, nil), 413, "body_too_large"},
		{"base64 of the file at the limit", jsonRequest("/ocr", limit, nil), 413, "body_too_large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, got := send(tt.req)
			checkJSONError(t, code, got, tt.status, tt.code)
		})
	}
}
