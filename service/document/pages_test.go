package document_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestPageFailsAlone: a page that cannot be read, drawn or afforded fails alone, with an error
// that names it and says why; the document's other pages are read and its text keeps every
// page's place. A document of which no page is read fails as its first page did.
func TestPageFailsAlone(t *testing.T) {
	good := hostile.TextPage("FIRST PAGE OF THE LETTER")
	last := hostile.TextPage("THE LAST PAGE")
	for _, tt := range []struct {
		name string
		bad  hostile.PageSpec
		cfg  func(*document.Config)
		req  func(*document.Request)
		want func(error) bool
		// limits replace the engine's defaults, nil keeps them.
		limits *docfile.Limits
	}{
		{"a page box under a pixel", hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}, nil, nil,
			func(err error) bool { return errors.Is(err, docfile.ErrDegenerate) }, nil},
		{"a page that draws forever", hostile.EndlessPage(400_000), func(c *document.Config) { c.OpTimeout = time.Second }, nil,
			func(err error) bool { var tc *document.TooComplexError; return errors.As(err, &tc) && tc.Page == 2 }, nil},
		// Drawn at 10 000 px a side (the default caps would draw it at 4 000, and at 2 000 it
		// fits: TestPageDrawnSmallerToFit), it does not fit even drawn at half that.
		{"a page the request cannot afford", hostile.PageSpec{Box: "0 0 4000 4000", Content: "0 0 1 rg 0 0 4000 4000 re f"}, nil,
			func(r *document.Request) { r.MaxCost = engineMemory + 40<<20 },
			func(err error) bool { var ce *document.CostError; return errors.As(err, &ce) && ce.Page == 2 },
			&docfile.Limits{MaxRenderPixels: 100_000_000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			engine := docs(t)
			if tt.limits != nil {
				engine = engine.WithLimits(*tt.limits)
			}
			r := document.New(engine, cfg)
			req := document.Request{Data: hostile.PDFPages(good, tt.bad, last), Start: time.Now(), Timeout: time.Minute}
			if tt.req != nil {
				tt.req(&req)
			}
			rec := &recorder{}
			res, err := r.Read(t.Context(), pipeline(t), rec, req)
			if err != nil {
				t.Fatalf("the document failed: %v", err)
			}
			if len(res.Read) != 3 {
				t.Fatalf("%d pages", len(res.Read))
			}
			for i, want := range []string{"FIRST PAGE OF THE LETTER", "", "THE LAST PAGE"} {
				p := res.Read[i]
				if p.Number != i+1 || p.Result == nil || p.Result.Text != want {
					t.Errorf("page %d: number %d, result %+v; want %q", i+1, p.Number, p.Result, want)
				}
			}
			p := res.Read[1]
			var pe *docfile.PageError
			if p.Source != document.Failed || !errors.As(p.Err, &pe) || pe.Page != 2 || !tt.want(p.Err) || !strings.Contains(p.Err.Error(), "page 2") {
				t.Errorf("page 2: source %q, error %v", p.Source, p.Err)
			}
			if res.Read[0].Err != nil || res.Read[2].Err != nil {
				t.Errorf("good pages failed: %v, %v", res.Read[0].Err, res.Read[2].Err)
			}
			if res.Text != "FIRST PAGE OF THE LETTER\f\fTHE LAST PAGE" {
				t.Errorf("text %q", res.Text)
			}
			if rec.running != 0 {
				t.Errorf("%d admissions still held", rec.running)
			}
			// Alone, the failing page fails the document with its own error.
			req.Data = hostile.PDFPages(tt.bad)
			if _, err := r.Read(t.Context(), pipeline(t), &recorder{}, req); err == nil || !errors.As(err, &pe) || pe.Page != 1 {
				t.Errorf("the page alone: %v", err)
			}
		})
	}
}

// TestPageDrawnSmallerToFit: a page whose render for OCR would cost more than the request may
// use is drawn smaller, down to half its resolution, and read; its size in the answer is the
// smaller render's. (One that does not fit even at half fails alone: TestPageFailsAlone.)
func TestPageDrawnSmallerToFit(t *testing.T) {
	// A poster of 2000 × 1500 pt holding two lines (ocrtest's solid blocks of known gray), drawn
	// at the render cap of 16 megapixels: 128 MB of pixels beside the engine's memory.
	line := func(y float64, word int) string {
		return fmt.Sprintf("%.4f g 100 %.0f 1200 60 re f\n", float64(ocrtest.Ink(word).Y)/255, y)
	}
	poster := hostile.PageSpec{Box: "0 0 2000 1500", Content: line(1300, 4) + line(1100, 0)}
	const want = "INVOICE NO: 2024-1121\nTOTAL 9.00"
	r := document.New(docs(t), config())
	req := document.Request{Data: hostile.PDFPages(poster), Start: time.Now(), Timeout: time.Minute}
	rec := &recorder{}
	full, err := r.Read(t.Context(), pipeline(t), rec, req)
	if err != nil {
		t.Fatal(err)
	}
	w0, h0 := full.Read[0].Width, full.Read[0].Height
	// What the request may spend: more than the survey's (the engine and 32 MiB), less than the
	// page costs drawn whole.
	limit := int64(engineMemory + 64<<20)
	if rec.costs[len(rec.costs)-1] <= limit || full.Text != want {
		t.Fatalf("the page costs %d MiB at %d×%d px, within %d MiB, and reads %q", rec.costs[len(rec.costs)-1]>>20, w0, h0, limit>>20, full.Text)
	}
	req.MaxCost = limit
	req.Start = time.Now()
	rec = &recorder{}
	res, err := r.Read(t.Context(), pipeline(t), rec, req)
	if err != nil {
		t.Fatalf("the page was not drawn smaller: %v", err)
	}
	p := res.Read[0]
	t.Logf("drawn at %d×%d px instead of %d×%d, admitted at %d MiB", p.Width, p.Height, w0, h0, rec.costs[len(rec.costs)-1]>>20)
	if p.Err != nil || p.Width >= w0 || 2*p.Width < w0 || rec.costs[len(rec.costs)-1] > limit {
		t.Errorf("page drawn at %d×%d px (error %v); want under %d×%d, at least half, within %d MiB", p.Width, p.Height, p.Err, w0, h0, limit>>20)
	}
	if res.Text != want {
		t.Errorf("text %q, want %q", res.Text, want)
	}
}
