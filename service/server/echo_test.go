package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/server"
)

// marker is what the echo test puts in every field, header and path it sends: no error body may
// contain it.
const marker = "zqMarkerQ7"

// TestErrorsNeverEchoTheRequest sends marked input to every error path of the API (and to the
// entries of an "images" array, which answer their errors inside a 200) and checks that no answer
// body carries the marker: error messages are built from the service's own words and numbers.
func TestErrorsNeverEchoTheRequest(t *testing.T) {
	ex, err := extract.New(extract.Options{Model: "m", BaseURL: "http://127.0.0.1:1/v1", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	app := newApp(t, server.Options{Extractor: ex, Metrics: m, APIKeys: []string{"k"}}, nil)
	png := b64(fixtures(t).receipt)
	img := fixtures(t).receipt
	one := []file{{"receipt.png", "image/png", img}}
	json := func(path string, body any) *http.Request {
		raw, ok := body.(string)
		if !ok {
			b, _ := jsonMarshal(body)
			raw = string(b)
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	schema := func(s string) *http.Request {
		return json("/ocr-json", `{"image":"`+png+`","schema":`+s+`}`)
	}
	tests := map[string]*http.Request{
		"content type":           postJSON("/ocr", "application/"+marker, []byte(`{}`)),
		"base64":                 json("/ocr", map[string]any{"image": marker + "!!"}),
		"data URL":               json("/ocr", map[string]any{"image": "data:" + marker + ",AAAA"}),
		"image object":           json("/ocr", `{"image":{"`+marker+`":1}}`),
		"images entry":           json("/ocr", map[string]any{"images": []string{marker + "!!", marker}}),
		"images field":           json("/ocr", map[string]any{"images": marker}),
		"pages":                  json("/ocr", map[string]any{"image": png, "pages": marker}),
		"ocr mode":               json("/ocr", map[string]any{"image": png, "ocr": marker}),
		"words":                  json("/ocr", map[string]any{"image": png, "words": marker}),
		"option name":            json("/ocr", map[string]any{"image": png, "options": map[string]any{marker: 1}}),
		"option value":           json("/ocr", map[string]any{"image": png, "options": map[string]any{"min_score": marker}}),
		"syntax":                 json("/ocr", `{"image": `+marker+`}`),
		"unknown member":         json("/ocr", `{"`+marker+`": 1}`),
		"template":               json("/ocr-json", map[string]any{"image": png, "template": marker}),
		"template type":          json("/ocr-json", `{"image":"`+png+`","template":{"`+marker+`":1}}`),
		"schema property":        schema(`{"type":"object","properties":{"` + marker + `":{"type":"` + marker + `"}}}`),
		"schema keyword":         schema(`{"type":"object","properties":{"a":{"type":"string"}},"` + marker + `":1}`),
		"schema keyword nested":  schema(`{"type":"object","properties":{"` + marker + `":{"` + marker + `":{}}}}`),
		"schema ref":             schema(`{"type":"object","properties":{"a":{"$ref":"#/$defs/` + marker + `"}}}`),
		"schema foreign ref":     schema(`{"type":"object","properties":{"a":{"$ref":"http://` + marker + `/x"}}}`),
		"schema defs":            schema(`{"type":"object","$defs":{"` + marker + `":5},"properties":{"a":{"type":"string"}}}`),
		"schema ref sibling":     schema(`{"type":"object","$defs":{"d":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/d","` + marker + `":1}}}`),
		"schema pattern":         schema(`{"type":"object","properties":{"` + marker + `":{"type":"string","pattern":"(?=` + marker + `)"}}}`),
		"schema meta":            schema(`{"type":"object","properties":{"` + marker + `":{"type":"string","minLength":"` + marker + `"}}}`),
		"schema $schema":         schema(`{"$schema":"http://` + marker + `/","type":"object","properties":{"a":{"type":"string"}}}`),
		"schema duplicate key":   schema(`{"type":"object","properties":{"` + marker + `":{},"` + marker + `":{}}}`),
		"schema not an object":   schema(`"` + marker + `"`),
		"schema and template":    json("/ocr-json", map[string]any{"image": png, "template": marker, "schema": map[string]any{marker: 1}}),
		"unknown path":           httptest.NewRequest(http.MethodGet, "/"+marker+"?"+marker+"="+marker, nil),
		"unknown path under ocr": json("/ocr/"+marker, `{}`),
		"method":                 httptest.NewRequest(http.MethodPut, "/ocr?"+marker, nil),
		// The file sent as the body, its options as query parameters.
		"raw media type":         rawRequest("/ocr", "image/"+marker, []byte(marker), nil),
		"raw media type param":   rawRequest("/ocr", "application/pdf; x="+marker, []byte(marker), nil),
		"query name":             rawRequest("/ocr", "image/png", img, url.Values{marker: {marker}}),
		"query twice":            rawRequest("/ocr", "image/png", img, url.Values{"pages": {marker, marker}}),
		"query pages":            rawRequest("/ocr", "image/png", img, url.Values{"pages": {marker}}),
		"query ocr mode":         rawRequest("/ocr", "image/png", img, url.Values{"ocr": {marker}}),
		"query words":            rawRequest("/ocr", "image/png", img, url.Values{"words": {marker}}),
		"query option":           rawRequest("/ocr", "image/png", img, url.Values{"min_score": {marker}}),
		"query template":         rawRequest("/ocr-json", "image/png", img, url.Values{"template": {marker}}),
		"query schema":           rawRequest("/ocr-json", "image/png", img, url.Values{"schema": {`{"` + marker + `":1}`}}),
		"query with a JSON body": withQuery(json("/ocr", map[string]any{"image": png}), marker+"="+marker),
		// Multipart forms.
		"form field name":         formRequest("/ocr", one, map[string]string{marker: marker}, nil),
		"form field value":        formRequest("/ocr", one, map[string]string{"pages": marker}, nil),
		"form option value":       formRequest("/ocr", one, map[string]string{"det_thresh": marker}, nil),
		"form field too long":     formRequest("/ocr", one, map[string]string{"pages": strings.Repeat(marker, 500)}, nil),
		"form file name":          formRequest("/ocr", []file{{marker + ".png", "image/" + marker, []byte(marker)}}, nil, nil),
		"form template":           formRequest("/ocr-json", one, map[string]string{"template": marker}, nil),
		"form schema":             formRequest("/ocr-json", one, map[string]string{"schema": `{"type":"object","properties":{"` + marker + `":{"type":"` + marker + `"}}}`}, nil),
		"form schema too long":    formRequest("/ocr-json", one, map[string]string{"schema": `{"` + strings.Repeat(marker, 8000) + `":1}`}, nil),
		"form boundary":           rawRequest("/ocr", "multipart/form-data; boundary="+marker, []byte("--"+marker+"x\r\n"+marker), nil),
		"form boundary invalid":   rawRequest("/ocr", `multipart/form-data; boundary="`+marker+`@"`, []byte(marker), nil),
		"form part name":          rawRequest("/ocr", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\""+marker+"\"\r\n\r\nx\r\n--b--"), nil),
		"form part disposition":   rawRequest("/ocr", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: "+marker+"\r\n\r\nx\r\n--b--"), nil),
		"form part nested":        rawRequest("/ocr", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\nContent-Type: multipart/"+marker+"\r\n\r\nx\r\n--b--"), nil),
		"form part encoding":      rawRequest("/ocr", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\nContent-Transfer-Encoding: "+marker+"\r\n\r\nx\r\n--b--"), nil),
		"form part head too long": rawRequest("/ocr", "multipart/form-data; boundary=b", []byte("--b\r\nX-"+marker+": "+strings.Repeat(marker, 1000)+"\r\n\r\nx\r\n--b--"), nil),
		"form two files":          formRequest("/ocr-json", []file{{marker, marker, []byte(marker)}, {marker, marker, []byte(marker)}}, nil, nil),
	}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			if req.Header.Get("Authorization") == "" {
				req.Header.Set("Authorization", "Bearer k")
			}
			req.Header.Set("X-Request-ID", marker)
			req.Header.Set("Cookie", "session="+marker)
			req.Header.Set("User-Agent", marker)
			resp, err := app.App.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if bytes.Contains(bytes.ToLower(body), bytes.ToLower([]byte(marker))) {
				t.Errorf("%d answer echoes the request: %s", resp.StatusCode, body)
			}
			if resp.StatusCode < 400 && name != "images entry" {
				t.Errorf("status %d: %s", resp.StatusCode, body)
			}
		})
	}
	t.Run("API key", func(t *testing.T) {
		req := json("/ocr", map[string]any{"image": png})
		req.Header.Set("Authorization", "Bearer "+marker)
		resp, _ := app.App.Test(req, -1)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 401 || bytes.Contains(body, []byte(marker)) {
			t.Errorf("%d %s", resp.StatusCode, body)
		}
	})
	// Unknown paths are counted under a route label of their own, never under a real route's.
	if n := metricValue2(t, m, "ocrgate_http_requests_total", map[string]string{"route": "unmatched", "code": "404"}); n < 2 {
		t.Errorf("404s counted under route=\"unmatched\": %v, want 2", n)
	}
	if n := metricValue2(t, m, "ocrgate_http_requests_total", map[string]string{"route": "/", "code": "404"}); n != 0 {
		t.Errorf("404s counted under route=\"/\": %v", n)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// metricValue2 is a counter's (or a gauge's) value of the series of name with exactly these
// labels.
func metricValue2(t testing.TB, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			if len(s.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range s.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			if g := s.GetGauge(); g != nil {
				return g.GetValue()
			}
			return s.GetCounter().GetValue()
		}
	}
	return 0
}
