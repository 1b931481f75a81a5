package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/server"
)

// tiffSet is the TIFF reader's test set (made with libtiff's tools; see its README).
const tiffSet = "../tiffdec/testdata"

func tiffFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tiffSet, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTIFFAnswers: the TIFFs that x/image/tiff refused (JPEG, G3 fax with fill bits, CMYK,
// YCbCr, a 4-bit palette page) answer 200 with their text; valid TIFFs the reader does not read
// are 415, not 422 "corrupt"; and every TIFF error says TIFF (never the PDF engine), names the
// page at fault, and quotes nothing of the file.
func TestTIFFAnswers(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	for _, name := range []string{"rgb-jpeg-ycbcr.tif", "bw-g3-2d-fill.tif", "cmyk-lzw.tif", "ycbcr-zip-420.tif", "pal4-packbits.tif", "multipage.tif"} {
		t.Run(name, func(t *testing.T) {
			code, body := call(t, app, readRequest(tiffFile(t, name), nil))
			// The short tier's recognizer is a stand-in: the text is checked with the models.
			if code != 200 || (!testing.Short() && !strings.Contains(string(body), "45.51")) {
				t.Fatalf("status %d: %.300s", code, body)
			}
		})
	}
	for _, tt := range []struct {
		name, file string
		status     int
		code, says string
	}{
		{"12-bit samples", "unsup-gray12.tif", 415, "unsupported_image_format", "12-bit samples"},
		{"floating point", "unsup-float32.tif", 415, "unsupported_image_format", "floating-point"},
		{"Zstandard", "unsup-zstd.tif", 415, "unsupported_image_format", "compression 50000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(t, app, readRequest(tiffFile(t, tt.file), nil))
			checkJSONError(t, code, body, tt.status, tt.code)
			if !strings.Contains(string(body), "TIFF") || !strings.Contains(string(body), tt.says) || strings.Contains(string(body), "PDF") {
				t.Errorf("message %s; want it to say TIFF and %q", body, tt.says)
			}
		})
	}
	t.Run("a corrupt page", func(t *testing.T) {
		code, body := call(t, app, readRequest(tiffFile(t, "multipage-corrupt.tif"), nil))
		if code == 200 {
			// Per-page errors: page 2 fails alone and the others answer.
			var d struct {
				Pages []struct {
					Text  string
					Error *struct{ Code, Error, Message string }
				}
			}
			if err := json.Unmarshal(body, &d); err != nil || len(d.Pages) != 3 || d.Pages[1].Error == nil ||
				d.Pages[0].Error != nil || d.Pages[2].Error != nil || (!testing.Short() && !strings.Contains(d.Pages[2].Text, "45.51")) {
				t.Fatalf("%.600s", body)
			}
			return
		}
		checkJSONError(t, code, body, 422, "corrupt_document")
		if !strings.Contains(string(body), "TIFF page 2") || strings.Contains(string(body), "PDF") {
			t.Errorf("message %s; want it to name TIFF page 2", body)
		}
	})
}
