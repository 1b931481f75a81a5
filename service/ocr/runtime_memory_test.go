package ocr_test

import (
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// reporting is the fake runtime saying what it allocates per inference, as the real runtime
// adapters do (ocr.MemoryReporter).
type reporting struct {
	*ocrtest.Runtime
	mem ocr.RuntimeMemory
}

func (r reporting) MemoryFigures() ocr.RuntimeMemory { return r.mem }

// TestRuntimeMemoryFromRuntime: the pipeline charges the memory figures its runtime says it
// allocates, unless the options set their own; a runtime that does not say adds nothing. A
// pipeline with request options (With) is charged the same.
func TestRuntimeMemoryFromRuntime(t *testing.T) {
	figures := ocr.RuntimeMemory{DetBase: 30 << 20, DetPerPixel: 161, RecPerPixel: 391, RecOutPerPixel: 1}
	own := ocr.RuntimeMemory{DetPerPixel: 4}
	tests := []struct {
		name string
		rt   ocr.Runtime
		set  ocr.RuntimeMemory
		want ocr.RuntimeMemory
	}{
		{"the runtime says", reporting{&ocrtest.Runtime{}, figures}, ocr.RuntimeMemory{}, figures},
		{"the runtime does not say", &ocrtest.Runtime{}, ocr.RuntimeMemory{}, ocr.RuntimeMemory{}},
		{"the options set their own", reporting{&ocrtest.Runtime{}, figures}, own, own},
	}
	h, err := imaging.Inspect(ocrtest.PNG(ocrtest.Page(1200, 900)), imaging.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	bare := ocr.DefaultOptions().Cost(h)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := ocr.DefaultOptions()
			opt.RuntimeMemory = tt.set
			p, err := ocr.New(tt.rt, ocrtest.Charset(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Options().RuntimeMemory; got != tt.want {
				t.Fatalf("runtime memory %+v, want %+v", got, tt.want)
			}
			if got := (p.Cost(h) > bare); got != (tt.want != ocr.RuntimeMemory{}) {
				t.Errorf("cost %d, %d without runtime memory", p.Cost(h), bare)
			}
			w, err := p.With(ocr.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := w.Options().RuntimeMemory, tt.want; tt.set == (ocr.RuntimeMemory{}) && got != want {
				t.Errorf("With: runtime memory %+v, want %+v", got, want)
			}
		})
	}
}
