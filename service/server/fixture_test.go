package server_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/onnxrt"
)

// The HTTP tests run in two tiers (see internal/testenv). The full tier (make test) serves them from
// the real models on the embedded ONNX Runtime and the receipts the repository renders
// (testdata/receipts); the fast tier (go test -short) has neither, and
// serves them from ocrtest's stand-in runtime, which turns synthetic pages into real regions through
// the real pipeline. A fixture holds what a test reads in the tier it runs in.
type fixture struct {
	engine  *engine.Engine
	receipt []byte // a receipt the engine reads
	text    string // a line of the receipt's text, upper case
	jpeg    []byte // a JPEG receipt, for the truncation and content-type cases
	fields  []byte // a receipt for /ocr-json with a date and a total
	date    string // the date on it
	total   string // the total on it
	says    string // text of the fields receipt that must reach the chat model
}

var (
	fakeOnce sync.Once
	fake     fixture
)

// fixtures returns the fixture of the tier the tests run in.
func fixtures(t testing.TB) fixture {
	t.Helper()
	if testing.Short() {
		fakeOnce.Do(func() {
			page, _, _ := ocrtest.Receipt()
			var jpg bytes.Buffer
			if err := jpeg.Encode(&jpg, page, &jpeg.Options{Quality: 95}); err != nil {
				panic(err)
			}
			fields := ocrtest.Page(640, 260,
				ocrtest.Block{Rect: image.Rect(40, 30, 360, 62), Word: 5},   // JOHOR BAHRU
				ocrtest.Block{Rect: image.Rect(40, 100, 480, 132), Word: 7}, // DATE 25/12/2018
				ocrtest.Block{Rect: image.Rect(40, 170, 300, 202), Word: 0}) // TOTAL 9.00
			fake = fixture{
				engine:  fakeEngine(&ocrtest.Runtime{}),
				receipt: ocrtest.PNG(page),
				text:    "INVOICE NO: 2024-1121",
				jpeg:    jpg.Bytes(),
				fields:  ocrtest.PNG(fields),
				date:    "25/12/2018",
				total:   "9.00",
				says:    "JOHOR BAHRU",
			}
		})
		return fake
	}
	return fixture{
		engine:  embeddedEngine(t),
		receipt: readImage(t, "thermal.jpg"),
		text:    "SENTOSA HEALTHCARE",
		jpeg:    readImage(t, "thermal.jpg"),
		fields:  readImage(t, "photo.jpg"),
		date:    "25/12/2018",
		total:   "77.55",
		says:    "JOHOR BAHRU",
	}
}

// fakeEngine is the pipeline on rt with ocrtest's charset: what the fast tier serves. It is costed
// as the embedded runtime it stands in for, so admission answers as it would in production.
func fakeEngine(rt ocr.Runtime) *engine.Engine {
	opt := ocr.DefaultOptions()
	opt.RuntimeMemory = onnxrt.Memory
	p, err := ocr.New(rt, ocrtest.Charset(), opt)
	if err != nil {
		panic(err) // the default options are valid
	}
	return &engine.Engine{Pipeline: p, Runtime: rt}
}

// needModels skips a test that needs the real models in the fast tier. In the full tier a missing
// model is a failure that says how to fetch it.
func needModels(t testing.TB) {
	t.Helper()
	testenv.Models(t)
}

// readImage reads a receipt of testdata/receipts by file name (full tier only: the fast tier has
// no models to read it with).
func readImage(t testing.TB, name string) []byte {
	t.Helper()
	needModels(t)
	data, err := os.ReadFile(filepath.Join(testenv.Receipts(t), "img", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
