// Command calibrate measures the value ranges the int8 recognizer is quantized with, and prints
// them as the Go table pinned in internal/modelprep (RecInt8Ranges). It is a developer tool, run
// once when the rewrite or the choice of quantized convolutions changes, never by the prepare
// step (which applies the pinned table and needs no images):
//
//	go run ./cmd/ocrgate-calibrate -images '../shared/datasets/myocr-samples/*'
//
// It runs the pipeline (embedded runtime, prepared fp32 models, OCRGATE_* settings) over the
// images, keeps every recognizer batch, runs the prepared recognizer on them with the inputs and
// outputs of its 1×1 convolutions exposed, and takes their minimum and maximum. The images should
// not be the ones accuracy is judged on: the pinned ranges come from the ten myocr samples, not
// from sroie-dev.
//
// -lang calibrates a language pack's prepared recognizer instead, reading the images with that
// language (docs/languages.md measured int8 packs from ranges taken on the rendered pages,
// service/ocr/testdata/langpages, and judged them on the rendered lines):
//
//	go run ./cmd/ocrgate-calibrate -lang ja -images 'service/ocr/testdata/langpages/ja-*.png'
//
// -convs and -int8 write the prepared model quantized at those convolutions with the ranges
// measured, to be measured before its ranges are pinned (docs/languages.md gives the command).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ocrgate/ocrgate/internal/modelprep"
	"github.com/ocrgate/ocrgate/internal/onnxgraph"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// recorder keeps the input batches of one recognizer (rec).
type recorder struct {
	ocr.Runtime
	rec     ocr.Model
	mu      sync.Mutex
	batches []ocr.Tensor
}

func (r *recorder) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	if m == r.rec {
		r.mu.Lock()
		r.batches = append(r.batches, ocr.Tensor{Shape: slices.Clone(in.Shape), Data: slices.Clone(in.Data)})
		r.mu.Unlock()
	}
	return r.Runtime.Infer(ctx, m, in)
}

func main() {
	images := flag.String("images", filepath.Join("..", "shared", "datasets", "myocr-samples", "*"), "glob of calibration images")
	lang := flag.String("lang", ocr.DefaultLang, "the recognizer to calibrate: ch (the default one) or a language pack (ja, ko, zh-Hant, en), read with -lang's pipeline")
	quantize := flag.String("convs", "", "with -int8: the 1×1 convolutions (by input tensor, comma-separated) to quantize with the ranges measured")
	int8Out := flag.String("int8", "", "write the prepared model quantized at -convs here (to measure an int8 variant before pinning its ranges)")
	flag.Parse()
	if err := run(*images, *lang, *quantize, *int8Out); err != nil {
		fmt.Fprintf(os.Stderr, "calibrate: %v\n", err)
		os.Exit(1)
	}
}

func run(glob, lang, quantize, int8Out string) error {
	cfg, err := config.Load(nil, os.Getenv, io.Discard)
	if err != nil {
		return err
	}
	cfg.RecModel = modelprep.PreparedName(modelprep.Models[1].Source) // calibrate the fp32 graph
	prepared, pinned := cfg.RecModel, modelprep.RecInt8Ranges
	if lang != ocr.DefaultLang {
		pack, ok := modelprep.PackFor(lang)
		if !ok {
			return fmt.Errorf("no language pack %q", lang)
		}
		cfg.Langs, prepared, pinned = lang, pack.Model.Prepared(), pack.Model.Int8
	}
	eng, err := engine.Embedded(cfg)
	if err != nil {
		return err
	}
	defer func() { _ = eng.Close() }() // the ranges are printed; the process ends
	rec := &recorder{Runtime: eng.Runtime, rec: ocr.RecognizerFor(lang)}
	cs, err := engine.Charset(cfg)
	if err != nil {
		return err
	}
	_, langs, err := engine.Languages(cfg)
	if err != nil {
		return err
	}
	p, err := ocr.New(rec, cs, cfg.OCR, langs...)
	if err != nil {
		return err
	}
	if p, err = p.Lang(lang); err != nil {
		return err
	}
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no images match %s: give -images GLOB (the pinned ranges were measured on the ten myocr sample images, which the repository does not carry)", glob)
	}
	slices.Sort(paths)
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, err := p.Run(context.Background(), data); err != nil {
			fmt.Fprintf(os.Stderr, "calibrate: %s skipped: %v\n", path, err)
		}
	}

	model, err := os.ReadFile(cfg.ModelPath(prepared))
	if err != nil {
		return err
	}
	convs, err := onnxgraph.ConvTensors(model)
	if err != nil {
		return err
	}
	var names []string
	for _, c := range convs {
		names = append(names, c[0], c[1])
	}
	probe, err := onnxgraph.AddOutputs(model, names)
	if err != nil {
		return err
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(probe)
	if err != nil {
		return err
	}
	var outNames []string
	for _, o := range outs {
		outNames = append(outNames, o.Name)
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(probe, []string{ins[0].Name}, outNames, nil)
	if err != nil {
		return err
	}
	defer s.Destroy()
	lo, hi := map[string]float32{}, map[string]float32{}
	for _, b := range rec.batches {
		x, err := ort.NewTensor(ort.Shape(b.Shape), b.Data)
		if err != nil {
			return err
		}
		vals := make([]ort.Value, len(outNames))
		if err := s.Run([]ort.Value{x}, vals); err != nil {
			return err
		}
		for i, name := range outNames[1:] {
			for _, v := range vals[i+1].(*ort.Tensor[float32]).GetData() {
				lo[name], hi[name] = min(lo[name], v), max(hi[name], v)
			}
		}
		for _, v := range vals {
			v.Destroy()
		}
		x.Destroy()
	}
	fmt.Printf("// calibrated on %d recognizer batches of %d images (%s)\n", len(rec.batches), len(paths), glob)
	for _, c := range convs {
		mark := "//"
		if _, ok := pinned[c[0]]; ok {
			mark = "  "
		}
		fmt.Printf("%s\t%q: {Input: onnxgraph.Range{Lo: %g, Hi: %g}, Output: onnxgraph.Range{Lo: %g, Hi: %g}},\n", mark, c[0], lo[c[0]], hi[c[0]], lo[c[1]], hi[c[1]])
	}
	if int8Out == "" {
		return nil
	}
	ranges := map[string]onnxgraph.ConvRanges{}
	for _, name := range strings.Split(quantize, ",") {
		i := slices.IndexFunc(convs, func(c [2]string) bool { return c[0] == name })
		if i < 0 {
			return fmt.Errorf("-convs: %q is not the input of a 1×1 convolution of %s", name, prepared)
		}
		ranges[name] = onnxgraph.ConvRanges{Input: onnxgraph.Range{Lo: lo[name], Hi: hi[name]}, Output: onnxgraph.Range{Lo: lo[convs[i][1]], Hi: hi[convs[i][1]]}}
	}
	out, n, err := onnxgraph.QuantizeConvs(model, ranges)
	if err != nil {
		return err
	}
	if err := os.WriteFile(int8Out, out, 0o644); err != nil {
		return err
	}
	fmt.Printf("// %d convolutions quantized: %s (%d bytes)\n", n, int8Out, len(out))
	return nil
}
