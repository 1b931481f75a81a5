package document_test

import (
	"bytes"
	"context"
	"errors"
	"image/jpeg"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/onnxrt"
	"github.com/ocrgate/ocrgate/service/pdfengine"
)

// These tests run the real PDF engine with ocrtest's stand-in models: what they check is how a
// document is cut into jobs, what each job is charged, and how errors and deadlines end a read.

var (
	readerOnce sync.Once
	reader     *docfile.Reader
	readerErr  error
)

func docs(t testing.TB) *docfile.Reader {
	t.Helper()
	readerOnce.Do(func() {
		cache := ""
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "ocrgate", "pdfium-wasm-test")
		}
		reader = docfile.NewReader(docfile.Config{Engine: pdfengine.Config{Instances: 4, MemoryLimit: 256 << 20, CacheDir: cache}})
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold compile under -race
		defer cancel()
		readerErr = reader.Ready(ctx)
	})
	if readerErr != nil {
		t.Fatalf("PDF engine: %v", readerErr)
	}
	return reader
}

func pipeline(t testing.TB) *ocr.Pipeline {
	t.Helper()
	opt := ocr.DefaultOptions()
	opt.RuntimeMemory = onnxrt.Memory
	p, err := ocr.New(&ocrtest.Runtime{}, ocrtest.Charset(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const engineMemory = 256 << 20

func config() document.Config {
	return document.Config{Scale: docfile.DefaultScalePolicy(), EngineMemory: engineMemory, OpTimeout: 10 * time.Second,
		PageTimeout: 15 * time.Second, MaxTimeout: 10 * time.Minute, Parallel: 2}
}

// recorder admits everything and records what it admitted.
type recorder struct {
	mu               sync.Mutex
	costs            []int64
	running, maxRun  int
	released, failAt int // failAt > 0: the failAt-th admission fails
}

var errFull = errors.New("full")

func (r *recorder) Admit(ctx context.Context, cost int64) (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failAt > 0 && len(r.costs)+1 == r.failAt {
		return nil, errFull
	}
	r.costs = append(r.costs, cost)
	r.running++
	r.maxRun = max(r.maxRun, r.running)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.running--
			r.released++
			r.mu.Unlock()
		})
	}, nil
}

func receiptJPEG(t testing.TB) []byte {
	img, _, _ := ocrtest.Receipt()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var letter = []testdoc.Text{{X: 72, Y: 120, Size: 16, Text: "THANK YOU FOR THE PAYMENT"}}

// TestJobsAndTheirCosts: a document of two scans around a born-digital page is read in three
// jobs: the survey, charged the engine's memory (the born-digital page is answered in it), then
// one job per scan, each charged its pixels and the larger of the engine and the models'
// tensors at its size, at most Parallel at once; every admission is given back.
func TestJobsAndTheirCosts(t *testing.T) {
	jpg := receiptJPEG(t)
	data, err := testdoc.Scanned([][]byte{jpg, jpg}, testdoc.ScanOptions{DPI: 200, After: letter})
	if err != nil {
		t.Fatal(err)
	}
	// Page 3 is the born-digital one; read it between the scans.
	r := document.New(docs(t), config())
	p := pipeline(t)
	rec := &recorder{}
	const held = 1 << 20
	res, err := r.Read(t.Context(), p, rec, document.Request{Data: data, Pages: "1-3", Held: held, Start: time.Now(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Read) != 3 || res.Read[0].Source != document.OCR || res.Read[1].Source != document.OCR || res.Read[2].Source != document.TextLayer {
		t.Fatalf("pages %+v", res.Read)
	}
	if len(rec.costs) != 3 {
		t.Fatalf("%d jobs admitted, want 3 (the survey and two scans): %v", len(rec.costs), rec.costs)
	}
	if rec.costs[0] < held+engineMemory || rec.costs[0] > held+engineMemory+64<<20 {
		t.Errorf("survey charged %d MiB; want the engine's %d MiB and little more", rec.costs[0]>>20, engineMemory>>20)
	}
	// A scan read from the file costs what decoding its JPEG holds, as the same upload would.
	h, err := imaging.Inspect(jpg, imaging.Limits{MaxPixels: 50_000_000, MaxSide: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	want := held + h.DecodeBytes() + max(int64(engineMemory), p.Options().ModelBytes(h.Width, h.Height))
	for i, c := range rec.costs[1:] {
		if c != want {
			t.Errorf("scan %d charged %d, want %d (held + its decoding + the larger of engine and models)", i+1, c, want)
		}
	}
	if rec.maxRun > 2 || rec.released != 3 || rec.running != 0 {
		t.Errorf("%d jobs at once (Parallel is 2), %d released, %d still running", rec.maxRun, rec.released, rec.running)
	}
	if res.Text != res.Read[0].Result.Text+document.PageSeparator+res.Read[1].Result.Text+document.PageSeparator+"THANK YOU FOR THE PAYMENT" {
		t.Errorf("text %q", res.Text)
	}
}

// TestAdmissionErrors: a refused survey is returned as it is; a page the request may not afford
// is a CostError naming it, before it is admitted; a refused page ends the read with every other
// admission given back once its work has stopped. Each read starts its own deadline, a generous
// one: what ends these reads is the admission, never the clock of a busy machine.
func TestAdmissionErrors(t *testing.T) {
	jpg := receiptJPEG(t)
	data, err := testdoc.Scanned([][]byte{jpg, jpg, jpg}, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config()
	cfg.OpTimeout, cfg.PageTimeout = 5*time.Minute, 5*time.Minute
	r := document.New(docs(t), cfg)
	p := pipeline(t)
	req := document.Request{Data: data, Timeout: 10 * time.Minute}
	req.Start = time.Now()

	rec := &recorder{failAt: 1}
	if _, err := r.Read(t.Context(), p, rec, req); !errors.Is(err, errFull) {
		t.Errorf("refused survey: %v", err)
	}
	// A 36-megapixel scan: its page costs decoding it (54 MB at 4:2:0) and the larger of the
	// engine and the models, the survey the engine and 32 MiB.
	var big bytes.Buffer
	if err := jpeg.Encode(&big, ocrtest.Page(6000, 6000), &jpeg.Options{Quality: 50}); err != nil {
		t.Fatal(err)
	}
	bigDoc, err := testdoc.Scanned([][]byte{big.Bytes()}, testdoc.ScanOptions{DPI: 600})
	if err != nil {
		t.Fatal(err)
	}
	limited := req
	limited.Data = bigDoc
	limited.MaxCost = engineMemory + 32<<20 // the survey fits, no OCR page does
	limited.Start = time.Now()
	rec = &recorder{}
	_, err = r.Read(t.Context(), p, rec, limited)
	var ce *document.CostError
	if !errors.As(err, &ce) || ce.Page != 1 || ce.Limit != limited.MaxCost || !errors.Is(err, docfile.ErrTooLarge) {
		t.Errorf("page over the limit: %v", err)
	}
	rec = &recorder{failAt: 3}
	req.Start = time.Now()
	if _, err := r.Read(t.Context(), p, rec, req); !errors.Is(err, errFull) {
		t.Errorf("refused page: %v", err)
	}
	// A scan's decode under way when the read ended cannot be interrupted: it keeps its page's
	// admission until it is over (a receipt's takes well under a second), then gives it back.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		rec.mu.Lock()
		running := rec.running
		rec.mu.Unlock()
		if running == 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d admissions still held 10 s after the read failed", running)
		}
	}
}

// failing fails OCR of its n-th page.
type failing struct {
	*ocr.Pipeline
	mu    sync.Mutex
	calls int
}

var errModel = errors.New("model failed")

func (f *failing) RunImage(ctx context.Context, dec imaging.Decoded) (*ocr.Result, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if n == 2 {
		return nil, errModel
	}
	return f.Pipeline.RunImage(ctx, dec)
}

// TestFirstErrorEndsTheRead: a page that fails fails the document with its error.
func TestFirstErrorEndsTheRead(t *testing.T) {
	jpg := receiptJPEG(t)
	data, err := testdoc.Scanned([][]byte{jpg, jpg, jpg, jpg}, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	r := document.New(docs(t), config())
	rec := &recorder{}
	_, err = r.Read(t.Context(), &failing{Pipeline: pipeline(t)}, rec, document.Request{Data: data, Start: time.Now(), Timeout: time.Minute})
	if !errors.Is(err, errModel) {
		t.Fatalf("error %v, want the model's", err)
	}
	if rec.running != 0 {
		t.Errorf("%d admissions still held", rec.running)
	}
}

// TestDeadline: a document gets the request's timeout, plus PageTimeout for every OCR'd page
// after the first and SurveyPageTimeout for every page read after the first, up to MaxTimeout.
func TestDeadline(t *testing.T) {
	r := document.New(docs(t), document.Config{PageTimeout: 15 * time.Second, SurveyPageTimeout: time.Second, MaxTimeout: 5 * time.Minute})
	start := time.Unix(1_000_000, 0)
	req := document.Request{Start: start, Timeout: 30 * time.Second}
	for _, tt := range []struct {
		pages, ocr int
		want       time.Duration
	}{
		{0, 0, 30 * time.Second}, {1, 1, 30 * time.Second}, {2, 2, 46 * time.Second}, {10, 10, 174 * time.Second},
		{50, 50, 5 * time.Minute}, {300, 0, 5 * time.Minute}, {100, 0, 129 * time.Second}, {100, 2, 144 * time.Second},
	} {
		if got := r.Deadline(req, tt.pages, tt.ocr).Sub(start); got != tt.want {
			t.Errorf("%d pages, %d OCR'd: deadline after %v, want %v", tt.pages, tt.ocr, got, tt.want)
		}
	}
}

// opens counts the documents a Reader opens, by format: each TIFF opened is a walk of its IFD
// chain.
type opens struct {
	*docfile.Reader
	mu    sync.Mutex
	count map[docfile.Format]int
}

func (o *opens) Open(ctx context.Context, data []byte) (*docfile.Document, error) {
	d, err := o.Reader.Open(ctx, data)
	if err == nil {
		o.mu.Lock()
		if o.count == nil {
			o.count = map[docfile.Format]int{}
		}
		o.count[d.Format()]++
		o.mu.Unlock()
	}
	return d, err
}

// TestTIFFWalkedOnce: a multi-page TIFF's IFD chain is walked once per request, by the survey,
// whose document stays open for the page jobs (it holds no engine instance); a PDF is opened by
// the survey and again by each page job, each of which holds the engine only while it draws.
func TestTIFFWalkedOnce(t *testing.T) {
	img, _, _ := ocrtest.Receipt()
	tiff, err := testdoc.TIFF(img, img, img, img)
	if err != nil {
		t.Fatal(err)
	}
	jpg := receiptJPEG(t)
	pdf, err := testdoc.Scanned([][]byte{jpg, jpg, jpg}, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		data   []byte
		format docfile.Format
		pages  int
		opened int
	}{
		{tiff, docfile.FormatTIFF, 4, 1},
		{pdf, docfile.FormatPDF, 3, 4},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			o := &opens{Reader: docs(t)}
			r := document.New(o, config())
			rec := &recorder{}
			res, err := r.Read(t.Context(), pipeline(t), rec, document.Request{Data: tt.data, Start: time.Now(), Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Read) != tt.pages {
				t.Fatalf("%d pages read, want %d", len(res.Read), tt.pages)
			}
			for _, pg := range res.Read {
				if pg.Source != document.OCR || pg.Err != nil {
					t.Errorf("page %d: source %q, error %v", pg.Number, pg.Source, pg.Err)
				}
			}
			if got := o.count[tt.format]; got != tt.opened {
				t.Errorf("opened %d times, want %d", got, tt.opened)
			}
			if rec.running != 0 {
				t.Errorf("%d admissions still held", rec.running)
			}
		})
	}
}
