package server_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/ocrgate/ocrgate/service/server"
)

// pngHeader is a PNG signature, an IHDR claiming w×h (8-bit RGB) with a correct CRC, and IEND:
// a valid header over no pixel data, the shape of a decompression bomb.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b.Bytes()
}

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zipBytes(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	f, _ := zw.Create("receipt.jpg")
	f.Write([]byte("not really"))
	zw.Close()
	return b.Bytes()
}

func jsonImage(s string) []byte {
	body, _ := json.Marshal(map[string]string{"image": s})
	return body
}

// TestBodyTooLarge sends a 30 MiB body to a real listener, guarded as main serves it (the
// in-memory test transport cannot carry an over-limit body back): the server refuses it with 413
// JSON as soon as it has the head, and keeps serving.
func TestBodyTooLarge(t *testing.T) {
	opt := server.Options{MaxBodyBytes: 20 << 20}
	app := newApp(t, opt, nil)
	addr := serveGuarded(t, app, opt)
	url := "http://" + addr
	// The server answers as soon as it has read the headers, and closes while a client would still
	// be sending, so talk HTTP by hand: announce 30 MiB, send a little, read the answer.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"image\":\"", 30<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conn.Close()
	checkJSONError(t, resp.StatusCode, body, 413, "body_too_large")
	resp, err = http.Get(url + "/ping")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the big body: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestBadInput sends hostile and broken requests. Each gets its proper status with a JSON error
// (or a proper answer when the input is odd but valid), and afterwards the service still reads a
// real receipt.
func TestBadInput(t *testing.T) {
	app := newApp(t, server.Options{}, nil)
	pngOf := func(w, h int) []byte {
		return encoded(t, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }, w, h)
	}
	jpegOf := func(w, h int) []byte {
		return encoded(t, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) }, w, h)
	}
	gifOf := func(w, h int) []byte {
		return encoded(t, func(b *bytes.Buffer, m image.Image) error {
			p := image.NewPaletted(m.Bounds(), []color.Color{color.White, color.Black})
			return gif.Encode(b, p, nil)
		}, w, h)
	}
	bmpOf := func(w, h int) []byte {
		return encoded(t, func(b *bytes.Buffer, m image.Image) error { return bmp.Encode(b, m) }, w, h)
	}
	receipt := fixtures(t).jpeg
	b64 := base64.StdEncoding.EncodeToString
	imageBody := func(data []byte) []byte {
		body, _ := json.Marshal(map[string]string{"image": b64(data)})
		return body
	}
	raw := func(s string) []byte { return []byte(s) }
	deep := strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000)
	deeper := strings.Repeat(`[`, 100000) + strings.Repeat(`]`, 100000)

	tests := []struct {
		name   string
		ct     string
		body   []byte
		status int
		code   string
	}{
		{"truncated PNG", "application/json", imageBody(pngOf(300, 200)[:60]), 422, "undecodable_image"},
		{"truncated JPEG", "application/json", imageBody(receipt[:len(receipt)/2]), 422, "undecodable_image"},
		{"truncated GIF", "application/json", imageBody(gifOf(50, 50)[:30]), 422, "undecodable_image"},
		{"BMP header only", "application/json", imageBody(bmpOf(40, 40)[:54]), 422, "undecodable_image"},
		{"RIFF WebP header with garbage", "application/json", imageBody(append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 40)...)), 422, "undecodable_image"},
		{"1x1 image", "application/json", imageBody(pngOf(1, 1)), 200, ""},
		{"1x100000 image", "application/json", imageBody(pngHeader(1, 100000)), 413, "image_too_large"},
		{"60000x60000 header bomb", "application/json", imageBody(pngHeader(60000, 60000)), 413, "image_too_large"},
		{"9000x9000 is over 50 MP", "application/json", imageBody(pngHeader(9000, 9000)), 413, "image_too_large"},
		{"zero-size PNG header", "application/json", imageBody(pngHeader(0, 0)), 422, "undecodable_image"},
		{"zip archive", "application/json", imageBody(zipBytes(t)), 415, "unsupported_image_format"},
		{"PDF", "application/json", imageBody([]byte("%PDF-1.7\n1 0 obj << >> endobj\n%%EOF")), 415, "unsupported_image_format"},
		{"HTML", "application/json", imageBody([]byte("<!doctype html><html><body>hi</body></html>")), 415, "unsupported_image_format"},
		{"SVG", "application/json", imageBody([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)), 415, "unsupported_image_format"},
		{"long run of A", "application/json", imageBody(bytes.Repeat([]byte("A"), 100000)), 415, "unsupported_image_format"},
		{"base64 with spaces and newlines", "application/json", jsonImage(" " + wrap(b64(pngOf(32, 32)), 19) + " \n"), 200, ""},
		{"URL-safe base64", "application/json", raw(`{"image":"` + base64.RawURLEncoding.EncodeToString(jpegOf(64, 32)) + `"}`), 200, ""},
		{"JSON nested 10000 deep", "application/json", raw(deep), 400, "missing_image"},
		{"JSON nested 100000 deep", "application/json", raw(deeper), 400, "invalid_json"},
		{"image is a number", "application/json", raw(`{"image": 12345}`), 400, "invalid_image_field"},
		{"image is an array", "application/json", raw(`{"image": ["aGk="]}`), 400, "invalid_image_field"},
		{"image is an object", "application/json", raw(`{"image": {"data": "aGk="}}`), 400, "invalid_image_field"},
		{"image is true", "application/json", raw(`{"image": true}`), 400, "invalid_image_field"},
		{"image is null", "application/json", raw(`{"image": null}`), 400, "missing_image"},
		{"empty object", "application/json", raw(`{}`), 400, "missing_image"},
		{"unicode field name", "application/json", raw(`{"imagé": "aGk="}`), 400, "missing_image"},
		{"JSON array", "application/json", raw(`[1,2,3]`), 400, "invalid_json"},
		{"JSON string", "application/json", raw(`"image"`), 400, "invalid_json"},
		{"trailing garbage", "application/json", raw(`{"image":"aGk="} trailing`), 400, "invalid_json"},
		{"control character in string", "application/json", raw("{\"image\":\"aGk\x01=\"}"), 400, "invalid_json"},
		{"UTF-16 body", "application/json", []byte("\xff\xfe{\x00}\x00"), 400, "invalid_json"},
		{"gzip bytes as body", "application/json", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"), 400, "invalid_json"},
		{"bad base64 characters", "application/json", raw(`{"image":"%%%%"}`), 400, "invalid_base64"},
		{"data URL without base64", "application/json", raw(`{"image":"data:image/png,xyz"}`), 400, "invalid_base64"},
		{"empty image string", "application/json", raw(`{"image":""}`), 400, "empty_image"},
		{"text/plain", "text/plain", imageBody(receipt), 415, "unsupported_media_type"},
		{"XML content type", "application/xml", imageBody(receipt), 415, "unsupported_media_type"},
		{"no content type", "", imageBody(receipt), 415, "unsupported_media_type"},
		{"multipart part named image", "multipart/form-data; boundary=b", raw("--b\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nx\r\n--b--"), 400, "invalid_parameter"},
		{"multipart file that is no image", "multipart/form-data; boundary=b", raw("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--b--"), 415, "unsupported_image_format"},
		{"raw body that is no image", "image/png", raw("hello, this is plain text"), 415, "unsupported_image_format"},
		{"raw PNG header bomb", "application/octet-stream", pngHeader(60000, 60000), 413, "image_too_large"},
		{"empty body", "application/json", nil, 400, "empty_body"},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d hostile cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, postJSON("/ocr", tt.ct, tt.body))
			if tt.status == 200 {
				if code != 200 {
					t.Fatalf("status %d, want 200: %s", code, body)
				}
				return
			}
			checkJSONError(t, code, body, tt.status, tt.code)
		})
	}
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		code, body := call(t, app, httptest.NewRequest(m, "/ocr", nil))
		if code < 400 || code >= 500 {
			t.Errorf("%s /ocr = %d %s", m, code, body)
		}
	}
	// Still healthy and still reading.
	code, body := call(t, app, ocrRequest(fixtures(t).receipt))
	if code != 200 || !strings.Contains(strings.ToUpper(string(body)), fixtures(t).text) {
		t.Fatalf("good request after the hostile ones: %d %.200s", code, body)
	}
}
