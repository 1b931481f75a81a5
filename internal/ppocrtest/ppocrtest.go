// Package ppocrtest serves the pipeline's PP-OCR models from the in-process KServe v2 test server
// (tritonclient/tritontest), so tests and benchmarks of the Triton path run the real models without
// a Triton. It lives beside service/tritonrt rather than in tritonclient so that the generic client
// and its test server never depend on the application; the service never imports it.
package ppocrtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

// PPOCRModels maps the Triton model names in model_repository/ to the pipeline's models.
var PPOCRModels = map[string]ocr.Model{
	"ppocr_det": ocr.Detector,
	"ppocr_rec": ocr.Recognizer,
	"ppocr_cls": ocr.Classifier,
}

// ONNXModels returns the PP-OCR models under their Triton names, configured from repoDir (one
// variant of model_repository/, e.g. "model_repository/cpu") and run by rt, normally ocrgate's
// embedded ONNX Runtime (service/onnxrt) opened on the same .onnx files Triton would load. A test
// server built from them therefore reads the same configs as a real Triton and computes the same
// numbers as the embedded runtime.
func ONNXModels(rt ocr.Runtime, repoDir string) ([]tritontest.Model, error) {
	configs, err := tritontest.ReadRepository(repoDir)
	if err != nil {
		return nil, fmt.Errorf("ppocrtest: %w", err)
	}
	var models []tritontest.Model
	byName := maps.Clone(PPOCRModels)
	// The language packs' recognizers, ppocr_rec_<lang>: served too; rt answers them when it
	// loaded the pack (NotFound otherwise, as Triton answers a model it did not load).
	for name := range configs {
		if lang, ok := strings.CutPrefix(name, "ppocr_rec_"); ok {
			byName[name] = ocr.RecognizerFor(lang)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		c, ok := configs[name]
		if !ok {
			return nil, fmt.Errorf("ppocrtest: %s has no model %s", repoDir, name)
		}
		if len(c.GetInput()) != 1 || len(c.GetOutput()) != 1 {
			return nil, fmt.Errorf("ppocrtest: %s: model %s needs one input and one output", filepath.Join(repoDir, name), name)
		}
		m, output := byName[name], c.GetOutput()[0].GetName()
		models = append(models, tritontest.Model{
			Config: c,
			Run: func(ctx context.Context, inputs []tritonclient.Tensor) ([]tritonclient.Tensor, error) {
				out, err := rt.Infer(ctx, m, ocr.Tensor{Shape: inputs[0].Shape, Data: inputs[0].Data})
				switch {
				case err == nil:
					return []tritonclient.Tensor{{Name: output, Datatype: tritonclient.FP32, Shape: out.Shape, Data: out.Data}}, nil
				case ctx.Err() != nil:
					return nil, status.FromContextError(ctx.Err()).Err()
				case errors.Is(err, ocr.ErrModelMissing):
					return nil, status.Errorf(codes.NotFound, "Request for unknown model: '%s' is not found", name)
				}
				return nil, err
			},
		})
	}
	return models, nil
}
