// Package testenv is where a test learns what it may assume about the machine it runs on. The
// tests run in two tiers, and this package is the one place that decides what a missing piece
// means in each:
//
//   - The fast tier, go test -short ./..., needs nothing but Go: no models, no ONNX Runtime, no
//     dataset, no network. A test that needs the real models calls [Models], which skips it here.
//   - The full tier, make test, runs everything on the real models through the real runtimes.
//     [Models] then fails a test whose models or ONNX Runtime are missing, saying how to fetch
//     them (make models): a missing install step must never pass as a skip.
//
// Test data lives in the repository, so a lone clone passes both tiers, and it is the project's
// own: written by the tests, or by the project's scripts and commands (the repository holds
// nothing fetched from elsewhere). A fixture that one package's tests read sits in that package's
// testdata/ folder; the receipts that several packages read sit once in testdata/receipts at the
// repository root, rendered with their ground truth by cmd/ocrgate-receipts (SROIE's img/, box/,
// key/ layout, so the scorer and ocrgate bench read it as a dataset), and are reached through
// [Receipts] and [Receipt]. Every testdata folder has a README saying how each file is made.
//
// Real receipts and whole datasets are for benchmarks only: [Dataset] finds one for a benchmark
// (../shared/datasets, never committed), and no test calls it.
//
// Nothing in the service imports this package.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The package imports nothing of ocrgate, so that every package's tests can use it (service/config
// imports most of the pipeline; a test of one of those packages importing it would be a cycle).
// config's tests check that Locate finds what config.Load configures.

// FetchHint says how to get the models and ONNX Runtime; failures of the full tier end with it.
const FetchHint = "run `make models` (scripts/fetch_models.sh installs the models and ONNX Runtime into $OCRGATE_HOME, default ~/.ocrgate), or `make test`, which does it first"

// Paths are where the service looks for the models and ONNX Runtime.
type Paths struct {
	Home       string // $OCRGATE_HOME, default ~/.ocrgate
	ModelDir   string // $OCRGATE_MODEL_DIR, default Home/models
	ORTLibrary string // $OCRGATE_ORT_LIB, default Home/lib/libonnxruntime.so.1
}

// Locate finds the paths as config.Load does from the same environment.
func Locate(getenv func(string) string) Paths {
	var p Paths
	if p.Home = getenv("OCRGATE_HOME"); p.Home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			p.Home = filepath.Join(h, ".ocrgate")
		} else {
			p.Home = ".ocrgate"
		}
	}
	if p.ModelDir = getenv("OCRGATE_MODEL_DIR"); p.ModelDir == "" {
		p.ModelDir = filepath.Join(p.Home, "models")
	}
	if p.ORTLibrary = getenv("OCRGATE_ORT_LIB"); p.ORTLibrary == "" {
		p.ORTLibrary = filepath.Join(p.Home, "lib", "libonnxruntime.so.1")
	}
	return p
}

// ModelFiles are the files scripts/fetch_models.sh installs into the model directory: the three
// models as published, the dictionary, the word list, and the checksums it writes once it has
// prepared the models (the prepared files are checked by the code that loads them).
var ModelFiles = []string{
	"ch_PP-OCRv4_det_infer.onnx",
	"ch_PP-OCRv4_rec_infer.onnx",
	"ch_ppocr_mobile_v2.0_cls_infer.onnx",
	"ppocr_keys_v1.txt",
	"words.txt",
	"prepared.sha256",
}

// Check returns nil when every model file and the ONNX Runtime library are there, else an error
// that names the first one missing and ends with [FetchHint].
func (p Paths) Check() error {
	files := []string{p.ORTLibrary}
	for _, f := range ModelFiles {
		files = append(files, filepath.Join(p.ModelDir, f))
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s: %w; %s", f, errors.Unwrap(err), FetchHint)
		}
	}
	return nil
}

// ModelsPresent is Locate(os.Getenv).Check(), for a TestMain, which has no test to skip or fail;
// a test calls [Models].
func ModelsPresent() error { return Locate(os.Getenv).Check() }

// Models is where the real models and ONNX Runtime are. In the fast tier it skips the test; in
// the full tier it fails the test when anything is missing, saying how to fetch it.
func Models(tb testing.TB) Paths {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the PP-OCR models and ONNX Runtime: skipped in -short mode")
	}
	p := Locate(os.Getenv)
	if err := p.Check(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Full skips the test in the fast tier, for a test that needs something else the fast tier
// promises not to: a browser, the pinned protoc, minutes of CPU. why says what.
func Full(tb testing.TB, why string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("needs %s: skipped in -short mode", why)
	}
}

// Command is the path of the program name on the PATH, for a test that runs it (python3 for the
// scorer, chromium for the browser tests). A missing program skips the test in the fast tier and
// fails it in the full tier, with install, which says how to get it.
func Command(tb testing.TB, name, install string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if testing.Short() {
		tb.Skipf("needs %s, which is not on the PATH: skipped in -short mode", name)
	}
	tb.Fatalf("%s is not on the PATH: %s", name, install)
	return ""
}

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// Root is the repository root: the nearest directory above the working directory (a package's
// directory, under go test) that holds go.mod.
func Root(tb testing.TB) string {
	tb.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("testenv: no go.mod above the working directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		tb.Fatal(rootErr)
	}
	return root
}

// Receipts is the absolute path of testdata/receipts: the receipts the project renders, with
// their ground truth, in SROIE's layout (img/<id>.jpg, box/<id>.csv, key/<id>.json; see its
// README, and internal/receipts for how they are made).
func Receipts(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(Root(tb), "testdata", "receipts")
}

// ReceiptIDs are the receipts in testdata/receipts, in id order. Each is there for a case:
//
//	a4scan   4961×7016: a 600-dpi A4 scan, a small receipt on it (lines about 95 px tall): the
//	         JPEG's preview in the first detection pass, half-size decoding, a second pass,
//	         a 35-megapixel page's cost
//	dense    1080×1527, 111 segments: the densest page, and the slowest to read
//	photo    470×940 phone photo, the receipt most tests read (date 25/12/2018, total 77.55)
//	thermal  540×1200 worn thermal print; its truth has CRLF line ends and commas inside a
//	         segment's text
var ReceiptIDs = []string{"a4scan", "dense", "photo", "thermal"}

// ReceiptPath is the path of testdata/receipts/img/<id>.jpg.
func ReceiptPath(tb testing.TB, id string) string {
	tb.Helper()
	return filepath.Join(Receipts(tb), "img", id+".jpg")
}

// Receipt reads testdata/receipts/img/<id>.jpg.
func Receipt(tb testing.TB, id string) []byte {
	tb.Helper()
	data, err := os.ReadFile(ReceiptPath(tb, id))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// DatasetEnv names a dataset directory for the benchmarks; `make bench-accuracy DATASET=...` and
// the other make targets with a DATASET set it.
const DatasetEnv = "OCRGATE_DATASET"

// DatasetHint says how to get a dataset; a benchmark that has none fails with it.
const DatasetHint = "a dataset is a directory in SROIE's layout (img/<id>.jpg, box/<id>.csv, key/<id>.json): " +
	"set " + DatasetEnv + "=DIR (make: DATASET=DIR), or place the team's development set at " +
	"../shared/datasets/<name> beside the checkout; testdata/receipts, the receipts the repository " +
	"renders, is a small one, and SROIE itself is published by the ICDAR 2019 Robust Reading " +
	"Challenge on Scanned Receipts OCR and Information Extraction"

// Dataset finds a whole dataset for a benchmark: $OCRGATE_DATASET when set, else
// shared/datasets/<name> beside the checkout (in the repository root's parent). Tests never call
// it: they read testdata. Under -short it skips; otherwise a missing dataset fails the benchmark
// with [DatasetHint].
func Dataset(tb testing.TB, name string) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a dataset: skipped in -short mode")
	}
	dir := os.Getenv(DatasetEnv)
	if dir == "" {
		dir = filepath.Join(filepath.Dir(Root(tb)), "shared", "datasets", name)
	}
	if st, err := os.Stat(filepath.Join(dir, "img")); err != nil || !st.IsDir() {
		tb.Fatalf("no dataset at %s: %s", dir, DatasetHint)
	}
	return dir
}
