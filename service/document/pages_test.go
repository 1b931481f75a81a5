package document_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
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
	}{
		{"a page box under a pixel", hostile.PageSpec{Crop: "0 0 0.01 0.01", Content: good.Content}, nil, nil,
			func(err error) bool { return errors.Is(err, docfile.ErrDegenerate) }},
		{"a page that draws forever", hostile.EndlessPage(400_000), func(c *document.Config) { c.OpTimeout = time.Second }, nil,
			func(err error) bool { var tc *document.TooComplexError; return errors.As(err, &tc) && tc.Page == 2 }},
		{"a page the request cannot afford", hostile.PageSpec{Box: "0 0 4000 4000", Content: "0 0 1 rg 0 0 4000 4000 re f"}, nil,
			func(r *document.Request) { r.MaxCost = engineMemory + 40<<20 },
			func(err error) bool { var ce *document.CostError; return errors.As(err, &ce) && ce.Page == 2 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			r := document.New(docs(t), cfg)
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
