package onnx

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ocrgate/ocrgate/internal/onnxgraph"
)

func ortHome(t testing.TB) string {
	t.Helper()
	home := os.Getenv("OCRGATE_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		home = filepath.Join(h, ".ocrgate")
	}
	lib := filepath.Join(home, "lib", "libonnxruntime.so.1")
	if err := initEnvironment(lib); err != nil {
		t.Fatalf("%v (run `make test`, which fetches the models first)", err)
	}
	return home
}

func runModel(t testing.TB, model []byte, in []float32, shape ort.Shape) []float32 {
	t.Helper()
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{ins[0].Name}, []string{outs[0].Name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	x, err := ort.NewTensor(shape, in)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Destroy()
	out := []ort.Value{nil}
	if err := s.Run([]ort.Value{x}, out); err != nil {
		t.Fatal(err)
	}
	defer out[0].Destroy()
	return out[0].(*ort.Tensor[float32]).GetData()
}

func TestOptimizeGraph(t *testing.T) {
	home := ortHome(t)
	tests := []struct {
		file      string
		shape     ort.Shape
		minFused  int // hard-swish activations
		tolerance float64
	}{
		{"ch_PP-OCRv4_rec_infer.onnx", ort.NewShape(2, 3, 48, 160), 20, 1e-4},
		{"ch_PP-OCRv4_det_infer.onnx", ort.NewShape(1, 3, 128, 160), 20, 1e-4},
		{"ch_ppocr_mobile_v2.0_cls_infer.onnx", ort.NewShape(2, 3, 48, 192), 1, 1e-4},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join(home, "models", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			fused, n, err := onnxgraph.Optimize(orig)
			if err != nil {
				t.Fatal(err)
			}
			if n.HardSwish < tt.minFused {
				t.Fatalf("fused %d activations, want at least %d", n.HardSwish, tt.minFused)
			}
			again, n2, err := onnxgraph.Optimize(fused)
			if err != nil || n2.Total() != 0 || len(again) != len(fused) {
				t.Errorf("second pass rewrote %+v more (err %v); the rewrite must be idempotent", n2, err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			in := make([]float32, tt.shape.FlattenedSize())
			for i := range in {
				in[i] = rng.Float32()*2 - 1
			}
			t0 := time.Now()
			want := runModel(t, orig, in, tt.shape)
			t1 := time.Now()
			got := runModel(t, fused, in, tt.shape)
			t.Logf("%s: %+v; first run %v → %v", tt.file, n, t1.Sub(t0), time.Since(t1))
			if len(got) != len(want) {
				t.Fatalf("output has %d values, want %d", len(got), len(want))
			}
			worst := 0.0
			for i := range got {
				worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
			}
			if worst > tt.tolerance {
				t.Errorf("outputs differ by up to %g, want ≤ %g", worst, tt.tolerance)
			}
		})
	}
}

func TestOptimizeGraphRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0xff, 0xff}, []byte("not a model")} {
		if _, _, err := onnxgraph.Optimize(b); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
}
