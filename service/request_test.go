package service

import (
	"bytes"
	"encoding/base64"
	"errors"
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
