package ocr_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// The tests of this file run the real pipeline on the fake runtime of ocrtest: no models, no ONNX
// Runtime, milliseconds each. They pin down the pipeline's own logic — boxes back in page
// coordinates, crops reaching the recognizer, reading order, errors and deadlines — while the
// tests on the real models (pipeline_test.go) cover what the networks make of real pages.

func fakePipeline(t *testing.T, rt ocr.Runtime, edit func(*ocr.Options)) *ocr.Pipeline {
	t.Helper()
	opt := ocr.DefaultOptions()
	if edit != nil {
		edit(&opt)
	}
	p, err := ocr.New(rt, ocrtest.Charset(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// contains reports whether region r's box covers rect within tol pixels.
func contains(r ocr.Region, rect image.Rectangle, tol float64) bool {
	x0, y0, x1, y1 := r.Quad.Bounds()
	return x0 <= float64(rect.Min.X)+tol && y0 <= float64(rect.Min.Y)+tol && x1 >= float64(rect.Max.X)-tol && y1 >= float64(rect.Max.Y)-tol
}

func TestFakeReceipt(t *testing.T) {
	img, blocks, text := ocrtest.Receipt()
	for _, useCls := range []bool{true, false} {
		t.Run(fmt.Sprintf("classifier %v", useCls), func(t *testing.T) {
			rt := &ocrtest.Runtime{}
			p := fakePipeline(t, rt, func(o *ocr.Options) { o.UseClassifier = useCls })
			res, err := p.Run(t.Context(), ocrtest.PNG(img))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != text {
				t.Errorf("text %q, want %q", res.Text, text)
			}
			if res.Format != "png" || res.Width != img.Bounds().Dx() || res.Height != img.Bounds().Dy() {
				t.Errorf("format %s %dx%d", res.Format, res.Width, res.Height)
			}
			if len(res.Regions) != len(blocks) {
				t.Fatalf("%d regions, want %d: %+v", len(res.Regions), len(blocks), res.Regions)
			}
			wantRows := []int{0, 1, 1, 2}
			for i, r := range res.Regions {
				b := blocks[i]
				if r.Text != ocrtest.Words[b.Word] || r.Order != i || r.Row != wantRows[i] || r.Vertical || r.Flipped {
					t.Errorf("region %d = %q order %d row %d vertical %v flipped %v; want %q row %d",
						i, r.Text, r.Order, r.Row, r.Vertical, r.Flipped, ocrtest.Words[b.Word], wantRows[i])
				}
				// DB grows the detected area by the unclip ratio, so boxes cover the ink with a
				// margin, never by more than the text's height.
				if !contains(r, b.Rect, 1) || contains(r, b.Rect.Inset(-b.Rect.Dy()), 0) {
					t.Errorf("region %d box %v does not fit the block %v", i, r.Quad, b.Rect)
				}
				if r.Score < 0.9 || r.Score > 1 {
					t.Errorf("region %d score %v", i, r.Score)
				}
			}
			if got := rt.Calls(ocr.Classifier); (got > 0) != useCls {
				t.Errorf("%d classifier calls with the classifier %v", got, useCls)
			}
			if rt.Calls(ocr.Detector) != 1 || rt.Calls(ocr.Recognizer) == 0 {
				t.Errorf("det %d, rec %d calls", rt.Calls(ocr.Detector), rt.Calls(ocr.Recognizer))
			}
		})
	}
}

// TestFakeScaled: a page twice the detector's limit is detected downscaled; the boxes still come
// back in the page's own pixels and every line is read from the full-resolution crop.
func TestFakeScaled(t *testing.T) {
	blocks := []ocrtest.Block{
		{Rect: image.Rect(100, 100, 900, 180), Word: 1},
		{Rect: image.Rect(100, 1500, 1200, 1580), Word: 3},
	}
	p := fakePipeline(t, &ocrtest.Runtime{}, nil)
	res, err := p.Run(t.Context(), ocrtest.PNG(ocrtest.Page(1600, 1900, blocks...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Regions) != 2 || res.Text != "CASH 10.00\nTHANK YOU" {
		t.Fatalf("%d regions, text %q", len(res.Regions), res.Text)
	}
	for i, r := range res.Regions {
		if !contains(r, blocks[i].Rect, 4) {
			t.Errorf("region %d box %v does not cover %v", i, r.Quad, blocks[i].Rect)
		}
	}
}

func TestFakeBlankPage(t *testing.T) {
	rt := &ocrtest.Runtime{}
	res, err := fakePipeline(t, rt, nil).Run(t.Context(), ocrtest.PNG(ocrtest.Page(300, 200)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Regions) != 0 || res.Text != "" {
		t.Errorf("blank page read as %q (%d regions)", res.Text, len(res.Regions))
	}
	if rt.Calls(ocr.Recognizer) != 0 {
		t.Errorf("recognizer ran %d times on a blank page", rt.Calls(ocr.Recognizer))
	}
}

// TestFakeRuntimeErrors: what a runtime reports comes out of Run with the ocr package's error
// kinds intact, whichever model failed, and a deadline stops the work with the context's error.
func TestFakeRuntimeErrors(t *testing.T) {
	img, _, _ := ocrtest.Receipt()
	page := ocrtest.PNG(img)
	tests := []struct {
		name  string
		model ocr.Model
		err   error
	}{
		{"detector unavailable", ocr.Detector, ocr.ErrRuntimeUnavailable},
		{"classifier failed", ocr.Classifier, ocr.ErrRuntimeFailed},
		{"recognizer missing", ocr.Recognizer, ocr.ErrModelMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &ocrtest.Runtime{Fail: func(m ocr.Model) error {
				if m == tt.model {
					return tt.err
				}
				return nil
			}}
			_, err := fakePipeline(t, rt, nil).Run(t.Context(), page)
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
		})
	}

	t.Run("deadline", func(t *testing.T) {
		rt := &ocrtest.Runtime{Delay: time.Hour}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := fakePipeline(t, rt, nil).Run(ctx, page)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want the deadline", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("stopped after %v", took)
		}
	})

	t.Run("wrong output", func(t *testing.T) {
		_, err := fakePipeline(t, badShape{}, nil).Run(t.Context(), page)
		if !errors.Is(err, ocr.ErrRuntimeFailed) {
			t.Errorf("error %v, want ErrRuntimeFailed for an output of the wrong shape", err)
		}
	})
}

// badShape answers every call with a tensor of the wrong shape, as a misconfigured server would.
type badShape struct{}

func (badShape) Infer(context.Context, ocr.Model, ocr.Tensor) (ocr.Tensor, error) {
	return ocr.Tensor{Shape: []int64{1, 2}, Data: []float32{0, 1}}, nil
}

// pixelGauge is a runtime that records the largest recognizer input in flight at once, in pixels
// (N×H×W), and the largest single batch.
type pixelGauge struct {
	ocrtest.Runtime
	mu                   sync.Mutex
	now, peak, peakBatch int64
	recCalls             int
}

func (g *pixelGauge) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	if m != ocr.Recognizer {
		return g.Runtime.Infer(ctx, m, in)
	}
	px := in.Shape[0] * in.Shape[2] * in.Shape[3]
	g.mu.Lock()
	g.now += px
	g.peak = max(g.peak, g.now)
	g.peakBatch = max(g.peakBatch, px)
	g.recCalls++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.now -= px
		g.mu.Unlock()
	}()
	return g.Runtime.Infer(ctx, m, in)
}

// TestBatchPixelsBounded runs a page of many lines, short and very wide, with eight batches
// allowed in flight, and checks that no recognizer batch exceeds RecBatchPixels (or one crop, when
// a crop alone is larger) and that the batches in flight never hold more than BatchPixelsInFlight
// together (or the largest batch alone): the bounds Cost relies on. The text must not change.
func TestBatchPixelsBounded(t *testing.T) {
	var blocks []ocrtest.Block
	var want []string
	for i := range 24 {
		w := 120 + (i%6)*60 // wide enough for the fake recognizer's one step per character
		if i%5 == 0 {
			w = 1160 // a crop of the widest buckets
		}
		blocks = append(blocks, ocrtest.Block{Rect: image.Rect(20, 20+i*40, 20+w, 44+i*40), Word: i % len(ocrtest.Words)})
		want = append(want, ocrtest.Words[i%len(ocrtest.Words)])
	}
	img := ocrtest.PNG(ocrtest.Page(1200, 20+24*40+20, blocks...))
	const batchPx, inFlightPx = 6 * 48 * 256, 2 * 6 * 48 * 256
	for _, tt := range []struct {
		name              string
		batchPx, flightPx int
	}{
		{"capped", batchPx, inFlightPx},
		{"uncapped", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &pixelGauge{Runtime: ocrtest.Runtime{Delay: 5 * time.Millisecond}}
			p := fakePipeline(t, g, func(o *ocr.Options) {
				o.UseClassifier = false
				o.BatchParallel = 8
				o.RecBatchPixels = tt.batchPx
				o.BatchPixelsInFlight = tt.flightPx
			})
			res, err := p.Run(t.Context(), img)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(strings.Fields(res.Text), " "); got != strings.Join(strings.Fields(strings.Join(want, " ")), " ") {
				t.Errorf("text %q, want the 24 words in order", res.Text)
			}
			widest := int64(48 * 2560)
			if tt.batchPx == 0 {
				if g.peak <= inFlightPx {
					t.Errorf("uncapped: %d px in flight at most; the page should exceed %d (the test no longer exercises the cap)", g.peak, inFlightPx)
				}
				return
			}
			if g.peakBatch > max(int64(tt.batchPx), widest) {
				t.Errorf("a batch of %d px; the cap is %d", g.peakBatch, tt.batchPx)
			}
			if g.peak > max(int64(tt.flightPx), g.peakBatch) {
				t.Errorf("%d px in flight; the cap is %d", g.peak, tt.flightPx)
			}
			if g.recCalls < 5 {
				t.Errorf("%d recognizer batches; the page should need several", g.recCalls)
			}
		})
	}
}

// TestTiledDetectionStitches runs a page whose lines cross tile seams on the fake detector, whose
// map is a pixel-wise function of its input: tiles stitched correctly give exactly the map of one
// run, so the regions must be identical, and the detector must have run once per tile.
func TestTiledDetectionStitches(t *testing.T) {
	var blocks []ocrtest.Block
	for i := range 18 {
		x := 40 + (i%3)*420
		blocks = append(blocks, ocrtest.Block{Rect: image.Rect(x, 30+i*70, x+360+(i%4)*20, 60+i*70), Word: i % len(ocrtest.Words)})
	}
	img := ocrtest.PNG(ocrtest.Page(1400, 1300, blocks...))
	run := func(tilePx int) (*ocr.Result, int) {
		rt := &ocrtest.Runtime{}
		p := fakePipeline(t, rt, func(o *ocr.Options) {
			o.DetLimitSide = 1600 // one pass over the whole page, at full size
			o.DetTilePixels = tilePx
			o.UseClassifier = false
		})
		res, err := p.Run(t.Context(), img)
		if err != nil {
			t.Fatal(err)
		}
		return res, rt.Calls(ocr.Detector)
	}
	want, calls := run(0)
	if calls != 1 {
		t.Fatalf("%d detector runs untiled", calls)
	}
	got, calls := run(300_000)
	if calls < 4 {
		t.Errorf("%d detector runs for a 1.8-megapixel input in tiles of 300 000 pixels", calls)
	}
	if len(got.Regions) != len(want.Regions) || len(want.Regions) != len(blocks) {
		t.Fatalf("%d regions tiled, %d in one run, %d lines drawn", len(got.Regions), len(want.Regions), len(blocks))
	}
	for i := range want.Regions {
		if got.Regions[i].Quad != want.Regions[i].Quad || got.Regions[i].Text != want.Regions[i].Text {
			t.Errorf("region %d: tiled %v %q, one run %v %q", i, got.Regions[i].Quad, got.Regions[i].Text, want.Regions[i].Quad, want.Regions[i].Text)
		}
	}
}
