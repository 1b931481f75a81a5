package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/server"
	"github.com/ocrgate/ocrgate/service/tiffdec"
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
		// Issue 33: no TIFF has 0-bit samples; such a file is corrupt, not unsupported.
		{"0-bit samples", "", 422, "undecodable_image", "0-bit samples"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := hostile.TIFFZeroBitSamples()
			if tt.file != "" {
				data = tiffFile(t, tt.file)
			}
			code, body := call(t, app, readRequest(data, nil))
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

// TestTIFFOrientationAnswers: a TIFF stored turned or mirrored, with the Orientation tag that says
// so, answers as the page it shows, sent alone as a PNG: the same size, text and boxes (boxes are
// in the coordinates of the image as its tag shows it, as for a JPEG's EXIF orientation). As a
// document page (the three-page stack) each page answers its upright size.
func TestTIFFOrientationAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("the short tier's recognizer is a stand-in; the answers are compared with the models")
	}
	app := docApp(t, server.Options{}, nil, nil)
	for _, tc := range []struct{ file, source string }{
		{"orient-bw-g4-6.tif", "src-bilevel.png"},
		{"orient-bw-g4-2.tif", "src-bilevel.png"},
		{"orient-rgb-lzw-7.tif", "src-color.png"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := readImageAnswer(t, app, tiffFile(t, tc.file), nil)
			want := readImageAnswer(t, app, tiffFile(t, tc.source), nil)
			if got.ImageInfo.Width != want.ImageInfo.Width || got.ImageInfo.Height != want.ImageInfo.Height {
				t.Errorf("answered %d×%d, the page it shows is %d×%d", got.ImageInfo.Width, got.ImageInfo.Height, want.ImageInfo.Width, want.ImageInfo.Height)
			}
			if got.Text != want.Text || !sameRegions(got.Regions, want.Regions) || !strings.Contains(got.Text, "45.51") {
				t.Errorf("reads %q (%d regions); %s reads %q (%d regions)", got.Text, len(got.Regions), tc.source, want.Text, len(want.Regions))
			}
		})
	}
	t.Run("fax-std-g3.tif", func(t *testing.T) {
		// 800 × 147 px stored at 204 × 98 dpi: answered at square pixels, as fax viewers show it.
		got := readImageAnswer(t, app, tiffFile(t, "fax-std-g3.tif"), nil)
		if got.ImageInfo.Width != 800 || got.ImageInfo.Height != 306 || !strings.Contains(got.Text, "7757 0041 6336") || !strings.Contains(got.Text, "1,000.00") {
			t.Errorf("%d×%d, %q; want 800×306 and the account number and amount read", got.ImageInfo.Width, got.ImageInfo.Height, got.Text)
		}
		for _, r := range got.Regions {
			if _, y0, _, y1 := r.BoundingShape.bounds(); y0 < 0 || y1 > 306 {
				t.Errorf("region %q at y %d–%d, outside the 306-px page", r.Text, y0, y1)
			}
		}
	})
	t.Run("orient-multipage.tif", func(t *testing.T) {
		d := readDocument(t, app, tiffFile(t, "orient-multipage.tif"), nil)
		if len(d.Pages) != 3 {
			t.Fatalf("%d pages", len(d.Pages))
		}
		for i, p := range d.Pages {
			if p.Width != 400 || p.Height != 146 || !strings.Contains(p.Text, "45.51") {
				t.Errorf("page %d: %d×%d, %q; want the 400×146 invoice upright", i+1, p.Width, p.Height, p.Text)
			}
		}
	})
}

// TestTIFFDirectoriesReadOncePerRequest (issue 33): a one-page TIFF's directories are read twice
// a request: once by the look that tells an image from a document before admission (at most 8
// directories), once by the header that prices it, whose walked chain the decode then reads the
// page from. They were read four times: that look, the header, the header again and the file
// again inside the decode.
func TestTIFFDirectoriesReadOncePerRequest(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	before := tiffdec.Walks()
	code, body := call(t, app, readRequest(tiffFile(t, "gray8-lzw.tif"), nil))
	if code != 200 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	if n := tiffdec.Walks() - before; n != 2 {
		t.Errorf("the request walked the TIFF's directories %d times; want 2", n)
	}
}
