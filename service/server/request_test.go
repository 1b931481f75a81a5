package server

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestDecodeBase64Image(t *testing.T) {
	payload := []byte("\x89PNG\r\n\x1a\nsome bytes \xff\xfe")
	std := base64.StdEncoding.EncodeToString(payload)
	tests := []struct {
		name    string
		in      string
		want    []byte
		wantErr string
	}{
		{"standard", std, payload, ""},
		{"no padding", base64.RawStdEncoding.EncodeToString(payload), payload, ""},
		{"url-safe", base64.URLEncoding.EncodeToString(payload), payload, ""},
		{"wrapped with CRLF and spaces", std[:8] + "\r\n" + std[8:16] + " \t" + std[16:], payload, ""},
		{"data URL", "data:image/png;base64," + std, payload, ""},
		{"data URL without base64 marker", "data:image/png," + std, nil, "invalid_base64"},
		{"empty", "", nil, "empty_image"},
		{"only padding", "==", nil, "empty_image"},
		{"illegal characters", "ab$%", nil, "invalid_base64"},
		{"mixed alphabets", "ab+_", nil, "invalid_base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeBase64Image([]byte(tt.in))
			if tt.wantErr != "" {
				var ae *apiError
				if !errors.As(err, &ae) || ae.code != tt.wantErr || ae.status != 400 {
					t.Fatalf("err = %v, want 400 %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

// FuzzDecodeBase64Image: any string either decodes or is a 400 with a code; never a panic.
func FuzzDecodeBase64Image(f *testing.F) {
	for _, s := range []string{"", "aGVsbG8=", "data:image/png;base64,aGk", "a b\nc", "-_-_", "====", "data:,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := decodeBase64Image([]byte(s))
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != 400 || ae.code == "" {
				t.Fatalf("error %v is not a 400 apiError", err)
			}
			return
		}
		if len(out) == 0 {
			t.Fatalf("%q decoded to nothing without an error", s)
		}
	})
}

// TestImageField: the image is decoded from the JSON body's bytes, escapes and all, and every
// way the field can be wrong is the 400 it always was; no message quotes the body.
func TestImageField(t *testing.T) {
	payload := []byte("\x89PNG\r\n\x1a\n?>>")
	std := base64.StdEncoding.EncodeToString(payload) // holds '/' and '+'
	tests := []struct {
		name, body string
		want       []byte
		code       string
	}{
		{"plain", `{"image":"` + std + `"}`, payload, ""},
		{"escaped solidus", `{"image":"` + strings.ReplaceAll(std, "/", `\/`) + `"}`, payload, ""},
		{"escaped line breaks", `{"image":"` + std[:8] + `\r\n` + std[8:] + `"}`, payload, ""},
		{"unicode escape", `{"image":"` + strings.Replace(std, "i", `\u0069`, 1) + `"}`, payload, ""},
		{"data URL", `{"image":"data:image/png;base64,` + std + `"}`, payload, ""},
		{"number", `{"image":12}`, nil, "invalid_image_field"},
		{"escaped garbage", `{"image":"\u00e9\u00e9"}`, nil, "invalid_base64"},
		{"not JSON", `{"image":"abc"`, nil, "invalid_json"},
		{"secret in a syntax error", `{"image": Bearer-sk-123}`, nil, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req ocrRequest
			err := decodeBody([]byte(tt.body), &req)
			if tt.code != "" {
				var ae *apiError
				if !errors.As(err, &ae) || ae.code != tt.code || ae.status != 400 {
					t.Fatalf("err = %v, want 400 %s", err, tt.code)
				}
				if strings.Contains(ae.msg, "Bearer") || strings.Contains(ae.msg, "sk-") {
					t.Fatalf("message quotes the body: %q", ae.msg)
				}
				return
			}
			if err != nil || req.Image == nil || !bytes.Equal(req.Image.data, tt.want) {
				t.Fatalf("got %v, %v", req.Image, err)
			}
		})
	}
}
