package onnxrt

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/onnxgraph"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// ortHome is $OCRGATE_HOME (default ~/.ocrgate) with ONNX Runtime loaded from it; the fast tier
// (-short) skips the test.
func ortHome(t testing.TB) string {
	t.Helper()
	home := testenv.Models(t).Home
	if err := initEnvironment(filepath.Join(home, "lib", "libonnxruntime.so.1")); err != nil {
		t.Fatal(err)
	}
	return home
}

// files maps each model to its original and its prepared file.
var files = map[ocr.Model][2]string{
	ocr.Detector:   {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_det_infer.prepared.onnx"},
	ocr.Recognizer: {"ch_PP-OCRv4_rec_infer.onnx", "ch_PP-OCRv4_rec_infer.prepared.onnx"},
	ocr.Classifier: {"ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx"},
}

func open(t *testing.T, prepared bool, opt Options) (*Runtime, *bytes.Buffer) {
	t.Helper()
	home := ortHome(t)
	var logs bytes.Buffer
	opt.LibraryPath = filepath.Join(home, "lib", "libonnxruntime.so.1")
	opt.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	opt.Models = map[ocr.Model]string{}
	for m, f := range files {
		name := f[0]
		if prepared {
			name = f[1]
		}
		opt.Models[m] = filepath.Join(home, "models", name)
	}
	rt, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, &logs
}

func randomTensor(shape ...int64) ocr.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]float32, n)
	for i := range data {
		data[i] = rng.Float32()*2 - 1
	}
	return ocr.Tensor{Shape: shape, Data: data}
}

// compactCTC turns softmax rows [N,T,C] into [N,T,7]: winning class, its probability, the last
// (space) class's probability, the second and third classes and their probabilities (first of
// equals), as the prepared recognizer answers.
func compactCTC(t ocr.Tensor) ocr.Tensor {
	c := int(t.Shape[2])
	out := ocr.Tensor{Shape: []int64{t.Shape[0], t.Shape[1], 7}}
	for row := 0; row < len(t.Data)/c; row++ {
		r := t.Data[row*c : (row+1)*c]
		order := make([]int, c)
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r[b], r[a]) })
		k1, k2, k3 := order[0], order[1], order[2]
		out.Data = append(out.Data, float32(k1), r[k1], r[c-1], float32(k2), float32(k3), r[k2], r[k3])
	}
	return out
}

// tiedRunnersUp copies want's runner-up class into got where the two name different classes of
// the same probability (to 1e-4), a tie that reordered float sums may break either way; the
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

func maxDiff(a, b []float32) float64 {
	worst := 0.0
	for i := range a {
		worst = math.Max(worst, math.Abs(float64(a[i]-b[i])))
	}
	return worst
}

// TestPreparedModels runs the prepared models (outputs written into Go memory through their
// stamped output shapes) against the originals (outputs allocated by ONNX Runtime and copied):
// same shapes, same values to float rounding, and only the originals draw the warning.
func TestPreparedModels(t *testing.T) {
	prep, prepLogs := open(t, true, Options{IntraOpThreads: 2})
	orig, origLogs := open(t, false, Options{IntraOpThreads: 2})
	for m, ok := range prep.Prepared() {
		if !ok {
			t.Errorf("%s: prepared model not recognized", m)
		}
		if orig.Prepared()[m] {
			t.Errorf("%s: original model taken for prepared", m)
		}
		if prep.models[m].outShape == nil {
			t.Errorf("%s: prepared model has no output shape rule", m)
		}
	}
	if prepLogs.Len() != 0 {
		t.Errorf("prepared models logged %s", prepLogs)
	}
	if got := strings.Count(origLogs.String(), "model is not prepared"); got != 3 {
		t.Errorf("%d warnings for 3 unprepared models:\n%s", got, origLogs)
	}
	inputs := map[ocr.Model]ocr.Tensor{
		ocr.Detector:   randomTensor(1, 3, 96, 128),
		ocr.Recognizer: randomTensor(3, 3, 48, 96),
		ocr.Classifier: randomTensor(2, 3, 48, 192),
	}
	ctx := context.Background()
	for m, in := range inputs {
		want, err := orig.Infer(ctx, m, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := prep.Infer(ctx, m, in)
		if err != nil {
			t.Fatal(err)
		}
		if m == ocr.Recognizer {
			// The prepared recognizer answers per step the winning class, its probability, the
			// space class's (the last) probability and the two runners-up.
			want = compactCTC(want)
			tiedRunnersUp(got.Data, want.Data)
		}
		if !slices.Equal(got.Shape, want.Shape) {
			t.Fatalf("%s: shape %v, want %v", m, got.Shape, want.Shape)
		}
		if d := maxDiff(got.Data, want.Data); d > 1e-4 {
			t.Errorf("%s: outputs differ by %g", m, d)
		}
		if prep.models[m].bindFailed.Load() {
			t.Errorf("%s: output binding failed", m)
		}
	}
}

// TestOutputShapeMismatch gives a model a wrong output shape rule: the call must still answer
// correctly (run again with ONNX Runtime's own output), say so once, and stop binding.
func TestOutputShapeMismatch(t *testing.T) {
	home := ortHome(t)
	data, err := os.ReadFile(filepath.Join(home, "models", files[ocr.Classifier][1]))
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := onnxgraph.SetMetadata(data, onnxgraph.MetadataEntry{Key: OutputShapeMetadataKey, Value: "in0,3"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cls.onnx")
	if err := os.WriteFile(path, wrong, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	rt, err := Open(Options{
		LibraryPath: filepath.Join(home, "lib", "libonnxruntime.so.1"),
		Models:      map[ocr.Model]string{ocr.Classifier: path},
		Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for range 2 {
		out, err := rt.Infer(context.Background(), ocr.Classifier, randomTensor(4, 3, 48, 192))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Shape, []int64{4, 2}) || len(out.Data) != 8 {
			t.Fatalf("output shape %v with %d values", out.Shape, len(out.Data))
		}
	}
	if got := strings.Count(logs.String(), "output shape metadata did not fit"); got != 1 {
		t.Errorf("%d warnings, want 1:\n%s", got, logs.String())
	}
}

// TestArenaMaxInput runs inputs above the arena bound on sessions of their own: the answers must
// be the persistent session's.
func TestArenaMaxInput(t *testing.T) {
	bounded, _ := open(t, true, Options{IntraOpThreads: 2, ArenaMaxInput: 3 * 64 * 64})
	plain, _ := open(t, true, Options{IntraOpThreads: 2})
	ctx := context.Background()
	for _, in := range []ocr.Tensor{randomTensor(1, 3, 64, 64), randomTensor(1, 3, 96, 128)} {
		want, err := plain.Infer(ctx, ocr.Detector, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bounded.Infer(ctx, ocr.Detector, in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Shape, want.Shape) || maxDiff(got.Data, want.Data) > 1e-6 {
			t.Errorf("input %v: output %v differs from the persistent session's %v", in.Shape, got.Shape, want.Shape)
		}
	}
}

// TestConcurrentRuns runs one single-threaded session from several callers at once, as batches of
// concurrent requests do: every answer must equal the one a lone caller gets.
func TestConcurrentRuns(t *testing.T) {
	rt, _ := open(t, true, Options{IntraOpThreads: 2, Threads: map[ocr.Model]int{ocr.Recognizer: 1}})
	if rt.models[ocr.Recognizer].threads != 1 || rt.models[ocr.Detector].threads != 2 {
		t.Fatalf("threads: rec %d, det %d; want 1 and 2", rt.models[ocr.Recognizer].threads, rt.models[ocr.Detector].threads)
	}
	in := randomTensor(2, 3, 48, 128)
	ctx := context.Background()
	want, err := rt.Infer(ctx, ocr.Recognizer, in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 4 {
				got, err := rt.Infer(ctx, ocr.Recognizer, in)
				if err != nil {
					t.Error(err)
					return
				}
				if d := maxDiff(got.Data, want.Data); d > 1e-6 {
					t.Errorf("concurrent run differs by %g", d)
				}
			}
		})
	}
	wg.Wait()
}

// TestDeadlineAsRunEnds ends contexts around the moment runs finish, so that the terminate call a
// deadline starts can overlap the end of Infer: the run options must not be freed under it (the
// race detector and the C allocator catch a use after free). Each run must end either with its
// output or with the context's error.
func TestDeadlineAsRunEnds(t *testing.T) {
	rt, _ := open(t, true, Options{IntraOpThreads: 1})
	in := randomTensor(1, 3, 48, 192)
	run := time.Hour
	for range 5 {
		start := time.Now()
		if _, err := rt.Infer(context.Background(), ocr.Classifier, in); err != nil {
			t.Fatal(err)
		}
		run = min(run, time.Since(start))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var ok, ended int
	for range 1000 {
		// Deadlines from half to one and a half times a run's length: most land while the
		// run ends.
		ctx, cancel := context.WithTimeout(context.Background(), run/2+time.Duration(rng.Int64N(int64(run)+1)))
		_, err := rt.Infer(ctx, ocr.Classifier, in)
		cancel()
		switch {
		case err == nil:
			ok++
		case errors.Is(err, context.DeadlineExceeded):
			ended++
		default:
			t.Fatalf("run ended with %v, want its output or the deadline", err)
		}
	}
	t.Logf("%d runs finished, %d stopped by their deadline", ok, ended)
}

func TestShapeRule(t *testing.T) {
	tests := []struct {
		rule    string
		outRank int
		in      []int64
		want    []int64 // nil: no prediction
		wantErr bool
	}{
		{rule: "in0,1,in2,in3", outRank: 4, in: []int64{1, 3, 96, 128}, want: []int64{1, 1, 96, 128}},
		{rule: "in0,in3/8,6625", outRank: 3, in: []int64{6, 3, 48, 320}, want: []int64{6, 40, 6625}},
		{rule: "in0,in3/8,6625", outRank: 3, in: []int64{6, 3, 48, 100}},
		{rule: "in0, 2", outRank: 2, in: []int64{5, 3, 48, 192}, want: []int64{5, 2}},
		{rule: "in0,2,3", outRank: 2, wantErr: true},
		{rule: "in4,2", outRank: 2, wantErr: true},
		{rule: "in0,x", outRank: 2, wantErr: true},
		{rule: "in0,0", outRank: 2, wantErr: true},
		{rule: "in0,in1/0", outRank: 2, wantErr: true},
	}
	for _, tt := range tests {
		r, err := parseShapeRule(tt.rule, 4, tt.outRank)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%q accepted", tt.rule)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.rule, err)
			continue
		}
		got, ok := r.apply(tt.in)
		if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
			t.Errorf("%q on %v = %v (%v), want %v", tt.rule, tt.in, got, ok, tt.want)
		}
	}
}

// TestSharedArena runs every model on the environment's shared arena, from several callers at
// once and across models, and on a second runtime opened on the same arena: the answers must be
// those of sessions with arenas of their own.
func TestSharedArena(t *testing.T) {
	own, _ := open(t, true, Options{IntraOpThreads: 2, Threads: map[ocr.Model]int{ocr.Recognizer: 1, ocr.Classifier: 1}})
	shared, _ := open(t, true, Options{IntraOpThreads: 2, Threads: map[ocr.Model]int{ocr.Recognizer: 1, ocr.Classifier: 1}, Arena: ArenaShared})
	again, _ := open(t, true, Options{IntraOpThreads: 2, Arena: ArenaShared})
	ctx := context.Background()
	cases := []struct {
		m  ocr.Model
		in ocr.Tensor
	}{
		{ocr.Detector, randomTensor(1, 3, 96, 128)},
		{ocr.Recognizer, randomTensor(3, 3, 48, 160)},
		{ocr.Classifier, randomTensor(2, 3, 48, 192)},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		want, err := own.Infer(ctx, c.m, c.in)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range []*Runtime{shared, again, shared} {
			wg.Go(func() {
				got, err := rt.Infer(ctx, c.m, c.in)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(got.Shape, want.Shape) || maxDiff(got.Data, want.Data) > 1e-6 {
					t.Errorf("%s on the shared arena: %v differs from its own arena's %v", c.m, got.Shape, want.Shape)
				}
			})
		}
	}
	wg.Wait()
	if _, err := ParseArena("shared"); err != nil {
		t.Error(err)
	}
	if _, err := ParseArena("global"); err == nil {
		t.Error("an unknown arena setting was accepted")
	}
}
