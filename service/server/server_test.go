package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/server"
)

var (
	appOnce sync.Once
	testApp *fiber.App
)

// app is the service on the tier's engine (see fixtures), built once for the package's tests.
func app(t testing.TB) *checkedApp {
	t.Helper()
	eng := fixtures(t).engine
	appOnce.Do(func() {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		testApp = server.New(eng.Pipeline, eng, log, server.Options{
			RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20, CORSOrigins: "*",
		})
	})
	return checked(t, testApp)
}

func do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := app(t).Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func postJSON(path, ct string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	return req
}

func TestPing(t *testing.T) {
	resp, body := do(t, httptest.NewRequest(http.MethodGet, "/ping", nil))
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("GET /ping = %d %q", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q", ct)
	}
}

type ocrBody struct {
	Version   string `json:"version"`
	ImageInfo struct {
		Width, Height, Bytes int
		Format               string
	} `json:"image_info"`
	Regions []struct {
		RegionID      int     `json:"region_id"`
		Text          string  `json:"text"`
		Confidence    float64 `json:"confidence"`
		BoundingShape struct {
			Type     string  `json:"type"`
			Rotation float64 `json:"rotation"`
			Points   []struct{ X, Y int }
		} `json:"bounding_shape"`
		Direction    string `json:"direction"`
		Language     string `json:"language"`
		ReadingOrder int    `json:"reading_order"`
	} `json:"regions"`
	Text           string  `json:"text"`
	ProcessingTime float64 `json:"processing_time"`
}

func TestOCRHappyPath(t *testing.T) {
	img := readImage(t, "photo.jpg")
	tests := []struct {
		name, image string
	}{
		{"plain base64", base64.StdEncoding.EncodeToString(img)},
		{"data URL", "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(img)},
		{"wrapped lines", wrap(base64.StdEncoding.EncodeToString(img), 76)},
		{"URL-safe without padding", base64.RawURLEncoding.EncodeToString(img)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"image": tt.image})
			resp, raw := do(t, postJSON("/ocr", "application/json", body))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			var got ocrBody
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if got.Version != server.Version || got.ImageInfo.Width != 470 || got.ImageInfo.Height != 940 ||
				got.ImageInfo.Bytes != len(img) || got.ImageInfo.Format != "jpeg" {
				t.Errorf("header fields: %+v %+v", got.Version, got.ImageInfo)
			}
			if len(got.Regions) < 40 {
				t.Fatalf("only %d regions on a receipt of 59 segments", len(got.Regions))
			}
			for i, r := range got.Regions {
				if r.RegionID != i || r.ReadingOrder != i+1 || len(r.BoundingShape.Points) != 4 ||
					r.BoundingShape.Type != "polygon" || r.Confidence < 0.5 || r.Confidence > 1 || r.Text == "" {
					t.Errorf("region %d malformed: %+v", i, r)
				}
				for _, p := range r.BoundingShape.Points {
					if p.X < 0 || p.Y < 0 || p.X > 470 || p.Y > 940 {
						t.Errorf("region %d point %v outside the image", i, p)
					}
				}
			}
			for _, want := range []string{"SERI MURNI", "JOHOR BAHRU", "77.55", "100.00"} {
				if !strings.Contains(got.Text, want) {
					t.Errorf("text lacks %q:\n%s", want, got.Text)
				}
			}
			if got.ProcessingTime <= 0 {
				t.Errorf("processing_time %v", got.ProcessingTime)
			}
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n])
		b.WriteString("\r\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

func TestOCRErrors(t *testing.T) {
	b64 := func(b []byte) []byte {
		body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(b)})
		return body
	}
	img := fixtures(t).jpeg
	tests := []struct {
		name   string
		ct     string
		body   []byte
		status int
		code   string
	}{
		{"empty body", "application/json", nil, 400, "empty_body"},
		{"whitespace body", "application/json", []byte("  \n"), 400, "empty_body"},
		{"invalid JSON", "application/json", []byte(`{"image": `), 400, "invalid_json"},
		{"JSON array", "application/json", []byte(`["image"]`), 400, "invalid_json"},
		{"missing image", "application/json", []byte(`{"picture": "abc"}`), 400, "missing_image"},
		{"image is a number", "application/json", []byte(`{"image": 42}`), 400, "invalid_image_field"},
		{"image is null", "application/json", []byte(`{"image": null}`), 400, "missing_image"},
		{"empty image", "application/json", []byte(`{"image": ""}`), 400, "empty_image"},
		{"bad base64", "application/json", []byte(`{"image": "not*base64!"}`), 400, "invalid_base64"},
		{"data URL without base64", "application/json", []byte(`{"image": "data:image/png,abc"}`), 400, "invalid_base64"},
		{"bytes that are no image", "application/json", b64([]byte("hello, this is plain text and not a picture")), 415, "unsupported_image_format"},
		{"truncated JPEG", "application/json", b64(img[:len(img)/3]), 422, "undecodable_image"},
		{"text/plain content type", "text/plain", b64(img), 415, "unsupported_media_type"},
		{"form content type", "application/x-www-form-urlencoded", b64(img), 415, "unsupported_media_type"},
		{"no content type", "", b64(img), 415, "unsupported_media_type"},
		{"multipart without a disposition", "multipart/form-data; boundary=x", []byte("--x\r\n\r\n--x--"), 400, "invalid_multipart"},
		{"multipart without a boundary", "multipart/form-data", []byte("--x\r\n\r\n--x--"), 400, "invalid_multipart"},
		{"multipart/mixed", "multipart/mixed; boundary=x", []byte("--x\r\n\r\n--x--"), 415, "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := do(t, postJSON("/ocr", tt.ct, tt.body))
			checkError(t, resp, raw, tt.status, tt.code)
		})
	}
}

func TestRouting(t *testing.T) {
	resp, raw := do(t, httptest.NewRequest(http.MethodGet, "/nope", nil))
	checkError(t, resp, raw, 404, "not_found")
	resp, raw = do(t, httptest.NewRequest(http.MethodGet, "/ocr", nil))
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("GET /ocr = %d %s", resp.StatusCode, raw)
	}
}

func TestCORS(t *testing.T) {
	req := httptest.NewRequest(http.MethodOptions, "/ocr", nil)
	req.Header.Set("Origin", "https://example.test")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "Content-Type")
	resp, _ := do(t, req)
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("preflight = %d, allow-origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

func checkError(t *testing.T, resp *http.Response, raw []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d: %s", resp.StatusCode, status, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q, want application/json", ct)
	}
	var e struct{ Error, Code string }
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("error body is not JSON: %q", raw)
	}
	if e.Code != code || e.Error == "" {
		t.Errorf("error = %+v, want code %q and a message", e, code)
	}
}

func TestProbes(t *testing.T) {
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, body := do(t, httptest.NewRequest(http.MethodGet, path, nil))
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"status"`) {
			t.Errorf("GET %s = %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestOCRStandIn reads ocrtest's synthetic receipt through POST /ocr on the stand-in runtime, in
// both tiers: the whole answer — header fields, one region per line with its box in page pixels,
// reading order, rows, the joined text — comes from the real service and pipeline code.
func TestOCRStandIn(t *testing.T) {
	page, blocks, text := ocrtest.Receipt()
	eng := fakeEngine(&ocrtest.Runtime{})
	a := server.New(eng.Pipeline, eng, slog.New(slog.NewTextHandler(io.Discard, nil)), server.Options{RequestTimeout: time.Minute, MaxBodyBytes: 20 << 20})
	img := ocrtest.PNG(page)
	resp, err := a.Test(ocrRequest(img), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d (%s): %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var got ocrBody
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	w, h := page.Bounds().Dx(), page.Bounds().Dy()
	if got.Version != server.Version || got.ImageInfo.Width != w || got.ImageInfo.Height != h ||
		got.ImageInfo.Bytes != len(img) || got.ImageInfo.Format != "png" || got.ProcessingTime <= 0 {
		t.Errorf("header fields: %s %+v %v", got.Version, got.ImageInfo, got.ProcessingTime)
	}
	if got.Text != text || len(got.Regions) != len(blocks) {
		t.Fatalf("text %q in %d regions, want %q in %d", got.Text, len(got.Regions), text, len(blocks))
	}
	for i, r := range got.Regions {
		b := blocks[i]
		if r.RegionID != i || r.ReadingOrder != i+1 || r.Text != ocrtest.Words[b.Word] || r.Direction != "horizontal" ||
			r.BoundingShape.Type != "polygon" || len(r.BoundingShape.Points) != 4 || r.Confidence < 0.5 || r.Confidence > 1 {
			t.Errorf("region %d: %+v", i, r)
			continue
		}
		// Clockwise from the top-left, around the block (DB's unclip adds a margin).
		p := r.BoundingShape.Points
		if p[0].X > b.Rect.Min.X || p[0].Y > b.Rect.Min.Y || p[2].X < b.Rect.Max.X-1 || p[2].Y < b.Rect.Max.Y-1 ||
			p[1].X < p[0].X || p[3].Y < p[0].Y || p[0].X < 0 || p[0].Y < 0 || p[2].X > w || p[2].Y > h {
			t.Errorf("region %d points %v around block %v", i, p, b.Rect)
		}
	}
}
