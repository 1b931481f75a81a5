package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/pdfengine"
	"github.com/ocrgate/ocrgate/service/server"
)

// The document tests build their documents (see internal/testdoc) and send them through POST
// /ocr and /ocr-json to the service with the real PDF engine, on the tier's OCR engine (the real
// models, or ocrtest's stand-in in the fast tier).

var (
	docsOnce sync.Once
	docs     *docfile.Reader
	docsErr  error
)

// engineStartup bounds the one compilation of the PDF engine in a test binary: under the race
// detector wazero's compiler (Go code) runs several times slower, and the machine may be shared.
// The compiled engine is kept in the user's cache directory, so only the first run pays.
const engineStartup = 15 * time.Minute

// documentReader is the package's one document reader (one compiled PDF engine), ready.
func documentReader(t testing.TB) *docfile.Reader {
	t.Helper()
	docsOnce.Do(func() {
		cache := ""
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "ocrgate", "pdfium-wasm-test")
		}
		docs = docfile.NewReader(docfile.Config{
			// The service's defaults: a selection of up to 2 000 pages (OCRGATE_MAX_TEXT_PAGES),
			// 10 CPU-s an engine operation (OCRGATE_RENDER_CPU).
			Limits: docfile.Limits{MaxPages: 2000, OpCPU: 10 * time.Second},
			Engine: pdfengine.Config{Instances: 4, MemoryLimit: 256 << 20, CacheDir: cache},
		})
		ctx, cancel := context.WithTimeout(context.Background(), engineStartup)
		defer cancel()
		docsErr = docs.Ready(ctx)
	})
	if docsErr != nil {
		t.Fatalf("PDF engine: %v", docsErr)
	}
	return docs
}

// documentConfig is the service's default document settings (see config.Load).
func documentConfig() document.Config {
	return document.Config{
		Scale:             docfile.DefaultScalePolicy(),
		EngineMemory:      256 << 20,
		PageTimeout:       15 * time.Second,
		SurveyPageTimeout: time.Second,
		MaxTimeout:        10 * time.Minute,
		Parallel:          2,
		Budget:            document.BudgetLimits{Pages: 2000, OCRPages: 50, AnswerBytes: 64 << 20},
		LayerCheck:        layerCheck(),
	}
}

// layerCheck is the service's default OCRGATE_TEXT_LAYER_CHECK in the full tier. The fast tier's
// stand-in recognizer reads only its own synthetic pages, never a drawn PDF's text, so there a
// text layer is taken by its structure (TestTextLayerChecked runs in the full tier).
func layerCheck() int {
	if testing.Short() {
		return 0
	}
	return 4
}

// docApp is the service reading documents with the default document settings, edited by edit
// (and the page limit, when limit is set), on the tier's engine.
func docApp(t testing.TB, opt server.Options, lim *docfile.Limits, edit func(*document.Config)) *checkedApp {
	t.Helper()
	r := documentReader(t)
	if lim != nil {
		r = r.WithLimits(*lim)
	}
	cfg := documentConfig()
	if edit != nil {
		edit(&cfg)
	}
	opt.Documents = document.New(r, cfg)
	return newApp(t, opt, nil)
}

// The answers, as a client reads them.
type (
	wordBody struct {
		Text          string  `json:"text"`
		Confidence    float64 `json:"confidence"`
		BoundingShape shape   `json:"bounding_shape"`
	}
	shape struct {
		Type     string  `json:"type"`
		Rotation float64 `json:"rotation"`
		Points   []struct{ X, Y int }
	}
	regionBody struct {
		RegionID      int        `json:"region_id"`
		Text          string     `json:"text"`
		Confidence    float64    `json:"confidence"`
		BoundingShape shape      `json:"bounding_shape"`
		Direction     string     `json:"direction"`
		ReadingOrder  int        `json:"reading_order"`
		Row           int        `json:"row"`
		Source        string     `json:"source"`
		Words         []wordBody `json:"words"`
	}
	blockBody struct {
		BoundingShape shape `json:"bounding_shape"`
		Regions       []int `json:"regions"`
	}
	pageBody struct {
		Page, Width, Height int
		Source              string
		SourceReason        string   `json:"source_reason"`
		Confidence          *float64 `json:"confidence"`
		TextLayerCheck      *struct {
			Probes, Agreed, Disagreed, Unreadable int
			Similarity                            float64
		} `json:"text_layer_check"`
		Regions []regionBody
		Blocks  []blockBody
		Text    string
	}
	docBody struct {
		Version   string `json:"version"`
		ImageInfo struct {
			Format       string
			Pages, Bytes int
		} `json:"image_info"`
		Pages          []pageBody
		Text           string
		ProcessingTime float64 `json:"processing_time"`
	}
	imageBody struct {
		ImageInfo struct {
			Width, Height, Bytes int
			Format               string
		} `json:"image_info"`
		Regions []regionBody
		Text    string
	}
)

// bounds is a shape's bounding box.
func (s shape) bounds() (x0, y0, x1, y1 int) {
	x0, y0, x1, y1 = s.Points[0].X, s.Points[0].Y, s.Points[0].X, s.Points[0].Y
	for _, p := range s.Points[1:] {
		x0, y0, x1, y1 = min(x0, p.X), min(y0, p.Y), max(x1, p.X), max(y1, p.Y)
	}
	return
}

// readRequest is a POST /ocr of data with the read members in extra.
func readRequest(data []byte, extra map[string]any) *http.Request {
	body := map[string]any{"image": b64(data)}
	for k, v := range extra {
		body[k] = v
	}
	raw, _ := json.Marshal(body)
	return postJSON("/ocr", "application/json", raw)
}

// readDocument posts a document and decodes the 200 answer; any other status fails the test.
func readDocument(t testing.TB, app *checkedApp, data []byte, extra map[string]any) docBody {
	t.Helper()
	code, body := call(t, app, readRequest(data, extra))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var d docBody
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	return d
}

// readImageAnswer posts an image and decodes the 200 answer.
func readImageAnswer(t testing.TB, app *checkedApp, data []byte, extra map[string]any) imageBody {
	t.Helper()
	code, body := call(t, app, readRequest(data, extra))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var ans imageBody
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	return ans
}

// invoice is a born-digital page: strings that start and end with a T (whose side bearings in
// Helvetica are a fortieth of an em, so the ink starts and ends where fpdf placed the string),
// with no descenders (the ink ends on the baseline), two of them on one row.
var invoice = []testdoc.Text{
	{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117 TOTAL DUE AT"},
	{X: 72, Y: 140, Size: 12, Text: "TRACKING NUMBER 88214 PAID IN FULL AT"},
	{X: 72, Y: 200, Size: 10, Text: "THE SUBTOTAL"},
	{X: 400, Y: 200, Size: 10, Text: "TWELVE DOLLARS FLAT"},
	{X: 72, Y: 260, Size: 14, Text: "TOTAL 1299.00 NET"},
}

// letter is a second born-digital page.
var letter = []testdoc.Text{
	{X: 72, Y: 120, Size: 16, Text: "THANK YOU FOR THE PAYMENT"},
	{X: 72, Y: 170, Size: 11, Text: "TERMS NET THIRTY DAYS AT"},
}

func bornDigital(t testing.TB, pages ...[]testdoc.Text) ([]byte, [][]float64) {
	t.Helper()
	data, widths, err := testdoc.BornDigital(pages...)
	if err != nil {
		t.Fatal(err)
	}
	return data, widths
}

// scanned wraps JPEGs as the pages of a scanner's PDF at 200 dpi; after, when not nil, adds a
// born-digital page; mark draws a speck on each scan so that PDFium renders it.
func scanned(t testing.TB, jpegs [][]byte, after []testdoc.Text, mark bool) []byte {
	t.Helper()
	data, err := testdoc.Scanned(jpegs, testdoc.ScanOptions{DPI: 200, After: after, Mark: mark})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// decoded decodes an image file, as the service does.
func decoded(t testing.TB, data []byte) image.Image {
	t.Helper()
	dec, err := imaging.Decode(data, imaging.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return dec.Image
}

func pngOf(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
