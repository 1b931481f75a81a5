package ppocrtest_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ppocrtest"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/onnxrt"
	"github.com/ocrgate/ocrgate/tritonclient"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

// The embedded runtime is process-wide and slow to open, so the tests of this file share one.
var (
	ortOnce sync.Once
	ortRT   *onnxrt.Runtime
	ortErr  error
)

func embeddedRuntime(t *testing.T) *onnxrt.Runtime {
	t.Helper()
	home := testenv.Models(t).Home
	ortOnce.Do(func() {
		dir := filepath.Join(home, "models")
		ortRT, ortErr = onnxrt.Open(onnxrt.Options{
			LibraryPath: filepath.Join(home, "lib", "libonnxruntime.so.1"),
			Models: map[ocr.Model]string{
				ocr.Detector:   filepath.Join(dir, "ch_PP-OCRv4_det_infer.prepared.onnx"),
				ocr.Recognizer: filepath.Join(dir, "ch_PP-OCRv4_rec_infer.prepared.onnx"),
				ocr.Classifier: filepath.Join(dir, "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx"),
			},
			IntraOpThreads: 2,
		})
	})
	if ortErr != nil {
		t.Fatalf("open the embedded runtime: %v (run `make test`, which fetches the models first, or scripts/fetch_models.sh)", ortErr)
	}
	return ortRT
}

// TestPPOCRThroughTriton serves the real models from model_repository/cpu through the test server
// and checks that the client returns exactly what the embedded runtime computes for the same
// tensors, with outputs over gRPC and through shared memory: the wire adds nothing and loses
// nothing.
func TestPPOCRThroughTriton(t *testing.T) {
	checkGoroutines(t)
	rt := embeddedRuntime(t)
	models, err := ppocrtest.ONNXModels(rt, filepath.Join("..", "..", "model_repository", "cpu"))
	if err != nil {
		t.Fatal(err)
	}
	srv := tritontest.StartServer(t, models...)
	c := tritontest.NewClient(t, srv.Addr(), tritonclient.Options{})
	shm, log, dir := shmClient(t, srv.Addr(), tritonclient.SharedMemoryOptions{Mode: tritonclient.SharedMemoryOn, RegionBytes: 16 << 20})
	srv.SetSharedMemoryDir(dir)
	clients := []struct {
		name string
		c    *tritonclient.Client
		want []tritontest.WireCall // logged
	}{{"gRPC", c, nil}, {"shared memory", shm, []tritontest.WireCall{tritontest.ViaSHM}}}
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(shape ...int64) []float32 {
		n := 1
		for _, d := range shape {
			n *= int(d)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	tests := []struct {
		triton    string
		model     ocr.Model
		input     string
		output    string
		shape     []int64
		wantShape []int64
	}{
		{"ppocr_cls", ocr.Classifier, "x", "softmax_0.tmp_0", []int64{3, 3, 48, 192}, []int64{3, 2}},
		{"ppocr_rec", ocr.Recognizer, "x", "ctc_top", []int64{2, 3, 48, 320}, []int64{2, 40, 7}},
		{"ppocr_det", ocr.Detector, "x", "sigmoid_0.tmp_0", []int64{1, 3, 64, 96}, []int64{1, 1, 64, 96}},
	}
	for _, tt := range tests {
		data := random(tt.shape...)
		want, err := rt.Infer(context.Background(), tt.model, ocr.Tensor{Shape: tt.shape, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		for _, cl := range clients {
			t.Run(tt.triton+"/"+cl.name, func(t *testing.T) {
				got, err := cl.c.Infer(t.Context(), tt.triton, []tritonclient.Tensor{{Name: tt.input, Shape: tt.shape, Data: data}}, tt.output)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].Name != tt.output || !slices.Equal(got[0].Shape, tt.wantShape) || !slices.Equal(want.Shape, tt.wantShape) {
					t.Fatalf("output %+v (embedded shape %v), want %s %v", got[0].Shape, want.Shape, tt.output, tt.wantShape)
				}
				for i := range want.Data {
					if math.Float32bits(got[0].Data[i]) != math.Float32bits(want.Data[i]) {
						t.Fatalf("value %d: %v through Triton, %v embedded", i, got[0].Data[i], want.Data[i])
					}
				}
				if cl.want != nil {
					log.Check(t, cl.want...)
				}
			})
		}
	}

	t.Run("metadata", func(t *testing.T) {
		md, err := c.ModelMetadata(t.Context(), "ppocr_rec", "")
		if err != nil {
			t.Fatal(err)
		}
		in, _ := md.Input("x")
		out, _ := md.Output("ctc_top")
		if md.Platform != "onnxruntime_onnx" || !slices.Equal(in.Shape, []int64{-1, 3, 48, -1}) || !slices.Equal(out.Shape, []int64{-1, -1, 7}) {
			t.Errorf("ppocr_rec metadata = %+v", md)
		}
	})

	t.Run("shape the config refuses", func(t *testing.T) {
		_, err := c.Infer(t.Context(), "ppocr_rec", []tritonclient.Tensor{{Name: "x", Shape: []int64{1, 3, 32, 100}, Data: make([]float32, 3*32*100)}})
		tritontest.CheckErr(t, err, tritonclient.ErrInvalidTensor, "Expected [-1,3,48,-1], got [1,3,32,100]")
	})
}
