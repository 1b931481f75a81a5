package server_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/png"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/server"
)

// stripOf returns where page n's (1-based) first strip lies in a little-endian TIFF, and its
// compressed size.
func stripOf(t *testing.T, data []byte, n int) (off, size int) {
	t.Helper()
	le := binary.LittleEndian
	ifd := int(le.Uint32(data[4:]))
	for range n - 1 {
		ifd = int(le.Uint32(data[ifd+2+12*int(le.Uint16(data[ifd:])):]))
	}
	value := func(e []byte) int {
		if le.Uint16(e[2:]) == 3 && le.Uint32(e[4:]) == 1 {
			return int(le.Uint16(e[8:]))
		}
		if le.Uint32(e[4:]) == 1 {
			return int(le.Uint32(e[8:]))
		}
		return int(le.Uint32(data[le.Uint32(e[8:]):])) // the first of several
	}
	for k := range int(le.Uint16(data[ifd:])) {
		e := data[ifd+2+12*k:]
		switch le.Uint16(e) {
		case 273:
			off = value(e)
		case 279:
			size = value(e)
		}
	}
	return off, size
}

// damageMiddle overwrites bytes in the middle of page n's first strip with zeros.
func damageMiddle(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	data = bytes.Clone(data)
	off, size := stripOf(t, data, n)
	for i := off + size/2; i < off+size/2+16; i++ {
		data[i] = 0
	}
	return data
}

// TestTIFFDamagedAnswersWithWarning: a TIFF damaged part way (a G4 fax page whose data goes
// wrong in its middle; a multi-page TIFF with such a page) answers 200 with the rows before the
// damage read, and says so: the image's warning, the page's warning. The damage is not an error,
// and an undamaged page has no warning.
func TestTIFFDamagedAnswersWithWarning(t *testing.T) {
	app := docApp(t, server.Options{}, nil, nil)
	t.Run("an image", func(t *testing.T) {
		code, body := call(t, app, readRequest(damageMiddle(t, tiffFile(t, "bw-g4.tif"), 1), nil))
		var r struct {
			Warning string
			Error   string
		}
		if err := json.Unmarshal(body, &r); err != nil || code != 200 || !strings.Contains(r.Warning, "damaged") ||
			!strings.Contains(r.Warning, "left white") || r.Error != "" {
			t.Fatalf("status %d: %.400s", code, body)
		}
		if code, body := call(t, app, readRequest(tiffFile(t, "bw-g4.tif"), nil)); code != 200 || strings.Contains(string(body), "warning") {
			t.Errorf("the undamaged page: status %d: %.300s", code, body)
		}
	})
	t.Run("a document page", func(t *testing.T) {
		src, err := png.Decode(bytes.NewReader(tiffFile(t, "src-gray.png")))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := testdoc.TIFF(src, src)
		if err != nil {
			t.Fatal(err)
		}
		code, body := call(t, app, readRequest(damageMiddle(t, doc, 2), nil))
		var d struct {
			Pages []struct {
				Warning string
				Error   *struct{ Code string }
			}
		}
		if err := json.Unmarshal(body, &d); err != nil || code != 200 || len(d.Pages) != 2 || d.Pages[0].Warning != "" ||
			!strings.Contains(d.Pages[1].Warning, "damaged") || d.Pages[1].Error != nil {
			t.Fatalf("status %d: %.600s", code, body)
		}
	})
}

// wholeNeeds is what reading data's page whole needs, as a refusal says it (the tier's models
// and runtime set it): a request allowed a MiB less cannot read it whole. A document's pages are
// priced after its survey, which a limit too low refuses first.
func wholeNeeds(t *testing.T, data []byte) int64 {
	t.Helper()
	limit := int64(1 << 20)
	for range 3 {
		app := docApp(t, server.Options{MaxRequestCost: limit, MaxBodyBytes: 64 << 20}, nil, nil)
		code, body := call(t, app, readRequest(data, nil))
		m := regexp.MustCompile(`needs about (\d+) MiB`).FindSubmatch(body)
		if code != 413 || m == nil {
			t.Fatalf("status %d: %.300s", code, body)
		}
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		if !strings.Contains(string(body), "reading this document") {
			return n << 20
		}
		limit = (n + 1) << 20
	}
	t.Fatal("no page was priced")
	return 0
}

// TestTIFFTooLargeReadSmaller: a TIFF page that does not fit what a request may hold is read
// smaller (as a PDF page too large is drawn smaller), not refused with 413; its answer keeps
// the page's own size, its boxes in its own pixels.
func TestTIFFTooLargeReadSmaller(t *testing.T) {
	src, err := png.Decode(bytes.NewReader(tiffFile(t, "src-gray.png")))
	if err != nil {
		t.Fatal(err)
	}
	// A 6000×8000 gray page (48 MB decoded) with the test page's print doubled at its top.
	page := image.NewGray(image.Rect(0, 0, 6000, 8000))
	for i := range page.Pix {
		page.Pix[i] = 255
	}
	b := src.Bounds()
	for y := range 2 * b.Dy() {
		for x := range 2 * b.Dx() {
			page.Set(100+x, 100+y, src.At(x/2, y/2))
		}
	}
	data, err := testdoc.TIFF(page)
	if err != nil {
		t.Fatal(err)
	}
	app := docApp(t, server.Options{MaxRequestCost: wholeNeeds(t, data) - 1<<20, MaxBodyBytes: 64 << 20}, nil, nil)
	code, body := call(t, app, readRequest(data, nil))
	var r struct {
		ImageInfo struct{ Width, Height int } `json:"image_info"`
		Regions   []struct {
			BoundingShape shape `json:"bounding_shape"`
		}
		Text string
	}
	if err := json.Unmarshal(body, &r); err != nil || code != 200 || r.ImageInfo.Width != 6000 || r.ImageInfo.Height != 8000 {
		t.Fatalf("status %d: %.400s", code, body)
	}
	if testing.Short() {
		return // the short tier's recognizer is a stand-in
	}
	if !strings.Contains(r.Text, "45.51") || len(r.Regions) == 0 {
		t.Fatalf("text %q", r.Text)
	}
	for _, g := range r.Regions {
		if x0, y0, x1, y1 := g.BoundingShape.bounds(); x0 < 90 || y0 < 90 || x1 > 110+2*b.Dx() || y1 > 110+2*b.Dy() {
			t.Errorf("a box at (%d, %d)-(%d, %d): outside the print, in the page's own pixels", x0, y0, x1, y1)
		}
	}
}

// TestTIFFDocumentPageTooLargeReadSmaller: the same page, twice in a multi-page TIFF, is read
// smaller page by page where it would fail alone with document_too_large; each page answers its
// own size.
func TestTIFFDocumentPageTooLargeReadSmaller(t *testing.T) {
	src, err := png.Decode(bytes.NewReader(tiffFile(t, "src-gray.png")))
	if err != nil {
		t.Fatal(err)
	}
	page := image.NewGray(image.Rect(0, 0, 6000, 8000))
	for i := range page.Pix {
		page.Pix[i] = 255
	}
	b := src.Bounds()
	for y := range 2 * b.Dy() {
		for x := range 2 * b.Dx() {
			page.Set(100+x, 100+y, src.At(x/2, y/2))
		}
	}
	data, err := testdoc.TIFF(page, page)
	if err != nil {
		t.Fatal(err)
	}
	app := docApp(t, server.Options{MaxRequestCost: wholeNeeds(t, data) - 1<<20, MaxBodyBytes: 64 << 20}, nil, nil)
	code, body := call(t, app, readRequest(data, nil))
	var d struct {
		Pages []struct {
			Width, Height int
			Text          string
			Error         *struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(body, &d); err != nil || code != 200 || len(d.Pages) != 2 {
		t.Fatalf("status %d: %.400s", code, body)
	}
	for i, p := range d.Pages {
		if p.Error != nil || p.Width != 6000 || p.Height != 8000 || (!testing.Short() && !strings.Contains(p.Text, "45.51")) {
			t.Errorf("page %d: %+v", i+1, p)
		}
	}
}
