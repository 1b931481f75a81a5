package modelprep_test

import (
	"bytes"
	"cmp"
	"errors"
	"image"
	"image/draw"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/ocrgate/ocrgate/internal/modelprep"
	"github.com/ocrgate/ocrgate/internal/onnxgraph"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/onnxrt"
)

// models is where scripts/fetch_models.sh installs the models and ONNX Runtime; the fast tier
// (-short) skips the test.
func models(t testing.TB) testenv.Paths {
	t.Helper()
	return testenv.Models(t)
}

func source(t testing.TB, m modelprep.Model) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(models(t).ModelDir, m.Source))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var ortOnce sync.Once

func initORT(t testing.TB) {
	t.Helper()
	lib := models(t).ORTLibrary
	var err error
	ortOnce.Do(func() {
		ort.SetSharedLibraryPath(lib)
		err = ort.InitializeEnvironment()
	})
	if err != nil {
		t.Fatalf("load ONNX Runtime: %v", err)
	}
	if !ort.IsInitialized() {
		t.Fatal("ONNX Runtime failed to load earlier in this test binary")
	}
}

// TestPinned checks that preparing each pinned source gives the pinned bytes, stamped with what
// the embedded runtime reads, and that preparing a prepared model changes nothing.
func TestPinned(t *testing.T) {
	if modelprep.MetadataKey != onnxrt.PreparedMetadataKey || modelprep.OutputShapeKey != onnxrt.OutputShapeMetadataKey {
		t.Fatal("internal/modelprep and service/onnxrt disagree on the metadata keys")
	}
	// The language packs too: make test fetches them (TEST_LANGS in the Makefile).
	all := slices.Clone(modelprep.Models)
	for _, p := range modelprep.Packs {
		all = append(all, p.Model)
	}
	for _, m := range all {
		t.Run(m.Name, func(t *testing.T) {
			src := source(t, m)
			if got := modelprep.SHA256(src); got != m.SourceSHA256 {
				t.Fatalf("source SHA-256 %s, pinned %s (scripts/fetch_models.sh pins the same)", got, m.SourceSHA256)
			}
			out, rw, err := m.Prepare(src)
			if err != nil {
				t.Fatal(err)
			}
			if got := modelprep.SHA256(out); got != m.PreparedSHA256 {
				t.Errorf("prepared SHA-256 %s, pinned %s: the rewrite changed; update the pin and FormatVersion", got, m.PreparedSHA256)
			}
			if rw.HardSwish == 0 {
				t.Errorf("no hard-swish rewritten: %+v", rw)
			}
			meta, err := onnxgraph.Metadata(out)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				modelprep.MetadataKey:       modelprep.FormatVersion,
				modelprep.SourceMetadataKey: m.SourceSHA256,
				modelprep.OutputShapeKey:    m.OutputShape,
			}
			for _, e := range meta {
				if v, ok := want[e.Key]; ok && v != e.Value {
					t.Errorf("metadata %s = %q, want %q", e.Key, e.Value, v)
				}
				delete(want, e.Key)
			}
			if len(want) > 0 {
				t.Errorf("metadata lacks %v", want)
			}
			again, rw2, err := onnxgraph.Optimize(out)
			if err != nil || rw2.Total() != 0 || !bytes.Equal(again, out) {
				t.Errorf("rewriting the prepared model changed %+v (err %v); the rewrite must be idempotent", rw2, err)
			}
			if len(m.Int8) == 0 {
				return
			}
			q, err := m.PrepareInt8(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := modelprep.SHA256(q); got != m.Int8SHA256 {
				t.Errorf("int8 SHA-256 %s, pinned %s: the rewrite or the ranges changed; update the pin", got, m.Int8SHA256)
			}
		})
	}
}

// run runs a model on one input with ONNX Runtime.
func run(t *testing.T, model []byte, in []float32, shape ort.Shape) ([]float32, ort.Shape) {
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
	y := out[0].(*ort.Tensor[float32])
	return y.GetData(), y.GetShape().Clone()
}

// TestEquivalent runs each original and prepared model on the same inputs, at shapes the pipeline
// uses: the outputs must agree to float rounding, and have the shape the stamped rule predicts.
func TestEquivalent(t *testing.T) {
	initORT(t)
	shapes := map[string][]ort.Shape{
		"det": {ort.NewShape(1, 3, 128, 160), ort.NewShape(1, 3, 96, 352)},
		"rec": {ort.NewShape(2, 3, 48, 160), ort.NewShape(1, 3, 48, 64), ort.NewShape(3, 3, 48, 320)},
		"cls": {ort.NewShape(2, 3, 48, 192)},
	}
	for _, m := range modelprep.Models {
		src := source(t, m)
		prepared, _, err := m.Prepare(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, shape := range shapes[m.Name] {
			t.Run(m.Name+shape.String(), func(t *testing.T) {
				in := uniform(shape, 1)
				want, wantShape := run(t, src, in, shape)
				got, gotShape := run(t, prepared, in, shape)
				if m.CTCSpace > 0 {
					// The prepared recognizer answers the winner, the space and the runners-up.
					want, wantShape = compactCTC(want, wantShape, m.CTCSpace)
					tiedRunnersUp(got, want)
				}
				if !gotShape.Equals(wantShape) {
					t.Fatalf("output shape %v, want %v", gotShape, wantShape)
				}
				if rule := predict(t, m.OutputShape, shape); !rule.Equals(gotShape) {
					t.Errorf("stamped output shape %q predicts %v, the model gives %v", m.OutputShape, rule, gotShape)
				}
				worst := 0.0
				for i := range got {
					worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
				}
				// Probabilities in [0,1]; the folds reorder float sums.
				if worst > 1e-4 {
					t.Errorf("outputs differ by up to %g, want ≤ 1e-4", worst)
				}
			})
		}
	}
}

// uniform is a model input of the shape, uniform in [-1, 1) from a generator seeded (seed, seed+1).
func uniform(shape ort.Shape, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	in := make([]float32, shape.FlattenedSize())
	for i := range in {
		in[i] = rng.Float32()*2 - 1
	}
	return in
}

// compactCTC turns softmax rows [N,T,C] into the prepared recognizer's [N,T,7]: the winning class
// (first of equals), its probability, the space class's probability, then the second and third
// classes and their probabilities.
func compactCTC(probs []float32, shape ort.Shape, space int64) ([]float32, ort.Shape) {
	c := int(shape[2])
	var out []float32
	for row := 0; row < len(probs)/c; row++ {
		r := probs[row*c : (row+1)*c]
		order := make([]int, c)
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r[b], r[a]) })
		k1, k2, k3 := order[0], order[1], order[2]
		out = append(out, float32(k1), r[k1], r[space], float32(k2), float32(k3), r[k2], r[k3])
	}
	return out, ort.NewShape(shape[0], shape[1], onnxgraph.CTCTopWidth)
}

// tiedRunnersUp copies want's runner-up class into got where the two name different classes of
// the same probability (to 1e-4): a tie the folds' reordered sums may break either way. The
// probabilities themselves are still compared.
func tiedRunnersUp(got, want []float32) {
	for i := 0; i+7 <= min(len(got), len(want)); i += 7 {
		for j := i + 3; j <= i+4; j++ {
			if got[j] != want[j] && math.Abs(float64(got[j+2]-want[j+2])) < 1e-4 {
				got[j] = want[j]
			}
		}
	}
}

// predict applies an output shape rule the simple way (the runtime's parser is tested in
// service/onnxrt).
func predict(t *testing.T, rule string, in ort.Shape) ort.Shape {
	t.Helper()
	var out ort.Shape
	for _, d := range strings.Split(rule, ",") {
		if rest, ok := strings.CutPrefix(d, "in"); ok {
			idx, by, _ := strings.Cut(rest, "/")
			k, div := in[int(idx[0]-'0')], int64(1)
			if by != "" {
				div = int64(by[0] - '0')
			}
			out = append(out, k/div)
			continue
		}
		var v int64
		for _, c := range d {
			v = v*10 + int64(c-'0')
		}
		out = append(out, v)
	}
	return out
}

// TestDir prepares a model directory twice (the second run only verifies), then with a prepared
// file damaged (it is rewritten) and with a source that is not the pinned file (refused).
func TestDir(t *testing.T) {
	dir := t.TempDir()
	for _, m := range modelprep.Models {
		if err := os.WriteFile(filepath.Join(dir, m.Source), source(t, m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := modelprep.Dir(dir, modelprep.Models)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Written {
			t.Errorf("%s not written on the first run", r.Model.Name)
		}
	}
	sums, err := os.ReadFile(filepath.Join(dir, modelprep.ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modelprep.Models {
		lines := []string{m.PreparedSHA256 + "  " + m.Prepared() + "\n"}
		if len(m.Int8) > 0 {
			lines = append(lines, m.Int8SHA256+"  "+m.Int8Name()+"\n")
		}
		for _, line := range lines {
			if !strings.Contains(string(sums), line) {
				t.Errorf("%s lacks %q:\n%s", modelprep.ChecksumsFile, line, sums)
			}
		}
	}

	res, err = modelprep.Dir(dir, modelprep.Models)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Written {
			t.Errorf("%s rewritten although present and verified", r.Model.Name)
		}
	}

	cls := modelprep.Models[2]
	damaged := filepath.Join(dir, cls.Prepared())
	if err := os.WriteFile(damaged, []byte("truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = modelprep.Dir(dir, modelprep.Models[2:])
	if err != nil || !res[0].Written {
		t.Fatalf("damaged prepared file not rewritten: %+v, %v", res, err)
	}
	if data, _ := os.ReadFile(damaged); modelprep.SHA256(data) != cls.PreparedSHA256 {
		t.Error("rewritten file does not have the pinned checksum")
	}

	if err := os.WriteFile(filepath.Join(dir, cls.Source), []byte("not the pinned model"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(damaged)
	if _, err := modelprep.Dir(dir, modelprep.Models[2:]); !errors.Is(err, modelprep.ErrSource) {
		t.Errorf("a source that is not the pinned file gave %v, want ErrSource", err)
	}
	if _, err := os.Stat(damaged); !errors.Is(err, os.ErrNotExist) {
		t.Error("a prepared file was written from a source that is not the pinned file")
	}
}

// textLines renders receipt-like lines as a recognizer batch [n,3,48,w]: black Go Regular on white,
// normalized as the pipeline does ((x/255−0.5)/0.5), so the activations are those of real text.
func textLines(t *testing.T, w int, lines ...string) ([]float32, ort.Shape) {
	t.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 30, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	plane := 48 * w
	data := make([]float32, 3*plane*len(lines))
	for i, s := range lines {
		img := image.NewGray(image.Rect(0, 0, w, 48))
		draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
		d := font.Drawer{Dst: img, Src: image.Black, Face: face, Dot: fixed.P(6, 35)}
		d.DrawString(s)
		for c := range 3 {
			for p, v := range img.Pix {
				data[(3*i+c)*plane+p] = (float32(v)/255 - 0.5) / 0.5
			}
		}
	}
	return data, ort.NewShape(int64(len(lines)), 3, 48, int64(w))
}

// TestInt8 reads rendered receipt lines with the prepared recognizer and its int8 variant: greedy
// CTC decoding must give the same class sequence for every line, and each line's confidence (the
// mean winning probability of the kept steps) must stay close.
func TestInt8(t *testing.T) {
	initORT(t)
	rec := modelprep.Models[1]
	prepared, _, err := rec.Prepare(source(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	q, err := rec.PrepareInt8(prepared)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := onnxgraph.OpCounts(q)
	if err != nil {
		t.Fatal(err)
	}
	// Each quantized convolution is followed by a hard-swish, which reads its DequantizeLinear
	// once as HardSwish; no ArgMax is left (TopK finds the winner).
	if n := len(rec.Int8); ops["QLinearConv"] != n || ops["HardSwish"] != n || ops["TopK"] != 1 || ops["ArgMax"] != 0 {
		t.Errorf("int8 model has %d QLinearConv, %d HardSwish, %d TopK, %d ArgMax; want %d, %d, 1, 0", ops["QLinearConv"], ops["HardSwish"], ops["TopK"], ops["ArgMax"], n, n)
	}
	lines := []string{"TOTAL AMOUNT RM 89.50", "GST REG NO: 000123456789", "Thank you, please come again", "12/03/2018 14:22 CASHIER 3"}
	in, shape := textLines(t, 320, lines...)
	want, _ := run(t, prepared, in, shape)
	got, gotShape := run(t, q, in, shape)
	steps, width := int(gotShape[1]), int(gotShape[2])
	for i, line := range lines {
		wSeq, wConf := greedy(want[i*steps*width:(i+1)*steps*width], steps)
		gSeq, gConf := greedy(got[i*steps*width:(i+1)*steps*width], steps)
		if !slices.Equal(wSeq, gSeq) {
			t.Errorf("%q: int8 reads classes %v, float %v", line, gSeq, wSeq)
		}
		if math.Abs(wConf-gConf) > 0.02 {
			t.Errorf("%q: confidence %.4f, float %.4f", line, gConf, wConf)
		}
	}
}

// TestRaiseOpset raises the prepared recognizer from opset 9 to 14 (Slice, TopK, Squeeze and
// ReduceSum move attributes to inputs; its attention Softmax over axis 3 keeps its meaning through
// Flatten and Reshape): the outputs must not change beyond float rounding. A model holding an operator whose change the
// raise does not rewrite (the original recognizer's Clip, opset 11) is refused.
func TestRaiseOpset(t *testing.T) {
	initORT(t)
	rec := modelprep.Models[1]
	src := source(t, rec)
	prepared, _, err := rec.Prepare(src)
	if err != nil {
		t.Fatal(err)
	}
	raised, err := onnxgraph.RaiseOpset(prepared, 14)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := onnxgraph.OpCounts(raised)
	if err != nil {
		t.Fatal(err)
	}
	if ops["Flatten"] == 0 || ops["Flatten"] != ops["Softmax"] {
		t.Errorf("%d Flatten for %d Softmax: the attention softmax was not kept to its opset-9 meaning", ops["Flatten"], ops["Softmax"])
	}
	shape := ort.NewShape(3, 3, 48, 256)
	in := uniform(shape, 3)
	want, _ := run(t, prepared, in, shape)
	got, _ := run(t, raised, in, shape)
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	if len(got) != len(want) || worst > 1e-5 { // the same arithmetic, some of it in other kernels
		t.Errorf("outputs at opset 14 differ from opset 9 by up to %g (%d values, want %d)", worst, len(got), len(want))
	}
	if _, err := onnxgraph.RaiseOpset(src, 14); err == nil || !strings.Contains(err.Error(), "Clip") {
		t.Errorf("raising the original recognizer (Clip with attributes) gave %v, want a refusal naming Clip", err)
	}
}

// greedy is CTC greedy decoding of the compact output: the winning class per step, repeats
// collapsed, blanks (class 0) dropped; and the mean winning probability of the steps kept.
func greedy(top []float32, steps int) ([]int, float64) {
	var seq []int
	var sum float64
	prev := 0
	for t := range steps {
		k := int(top[onnxgraph.CTCTopWidth*t])
		if k != 0 && k != prev {
			seq = append(seq, k)
			sum += float64(top[onnxgraph.CTCTopWidth*t+1])
		}
		prev = k
	}
	if len(seq) == 0 {
		return nil, 0
	}
	return seq, sum / float64(len(seq))
}
