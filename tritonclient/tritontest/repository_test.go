package tritontest_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

var (
	repoRoot   = filepath.Join("..", "..")
	configRoot = filepath.Join(repoRoot, "model_repository")
	makeRepo   = filepath.Join(repoRoot, "scripts", "make_model_repository.sh")
)

// onnxFiles maps each Triton model to the prepared file scripts/fetch_models.sh writes (the graph
// the embedded runtime runs too): the default three, and one recognizer per language pack
// (`make test` fetches every pack; internal/modelprep.Packs names the same files, but the Triton
// client's packages import nothing of the application).
var onnxFiles = map[string]string{
	"ppocr_det":         "ch_PP-OCRv4_det_infer.prepared.onnx",
	"ppocr_rec":         "ch_PP-OCRv4_rec_infer.prepared.onnx",
	"ppocr_cls":         "ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx",
	"ppocr_rec_ja":      "rec_japan_PP-OCRv3_infer.prepared.onnx",
	"ppocr_rec_ko":      "rec_korean_PP-OCRv3_infer.prepared.onnx",
	"ppocr_rec_zh-Hant": "rec_chinese_cht_PP-OCRv3_infer.prepared.onnx",
	"ppocr_rec_en":      "en_PP-OCRv4_rec.prepared.onnx",
}

// packLangs are the language packs whose recognizers the repository holds.
const packLangs = "ja,ko,zh-Hant,en"

// variantFile is the file a variant's repository serves for a model: the CPU repository serves the
// recognizer's int8 variant (integer kernels), the GPU one the float graph.
func variantFile(variant, name string) string {
	if variant == "cpu" && name == "ppocr_rec" {
		return "ch_PP-OCRv4_rec_infer.int8.onnx"
	}
	return onnxFiles[name]
}

func modelsDir(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the models: skipped in -short mode")
	}
	home := os.Getenv("OCRGATE_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		home = filepath.Join(h, ".ocrgate")
	}
	dir := filepath.Join(home, "models")
	for _, f := range onnxFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%v (run `make test`, which fetches the models first, or scripts/fetch_models.sh)", err)
		}
	}
	return dir
}

// TestConfigsMatchONNX checks every config.pbtxt of both variants against the ONNX graph it
// serves: tensor names, FP32, and dimensions (the config may fix a dimension the graph leaves
// open, never contradict one), plus the settings the variants promise.
func TestConfigsMatchONNX(t *testing.T) {
	dir := modelsDir(t)
	for _, variant := range []struct {
		name string
		kind inferencepb.ModelInstanceGroup_Kind
	}{{"cpu", inferencepb.ModelInstanceGroup_KIND_CPU}, {"gpu", inferencepb.ModelInstanceGroup_KIND_GPU}} {
		configs, err := tritontest.ReadRepository(filepath.Join(configRoot, variant.name))
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(configs)); !slices.Equal(got, slices.Sorted(maps.Keys(onnxFiles))) {
			t.Errorf("%s holds %v", variant.name, got)
		}
		for name, c := range configs {
			t.Run(variant.name+"/"+name, func(t *testing.T) {
				graph, err := readONNX(filepath.Join(dir, variantFile(variant.name, name)))
				if err != nil {
					t.Fatal(err)
				}
				if c.GetPlatform() != "onnxruntime_onnx" || c.GetName() != name {
					t.Errorf("platform %q, name %q", c.GetPlatform(), c.GetName())
				}
				if c.GetMaxBatchSize() <= 0 {
					t.Errorf("max_batch_size %d: the pipeline sends batches", c.GetMaxBatchSize())
				}
				if len(c.GetInstanceGroup()) != 1 || c.GetInstanceGroup()[0].GetKind() != variant.kind || c.GetInstanceGroup()[0].GetCount() < 1 {
					t.Errorf("instance_group %v, want one %v group", c.GetInstanceGroup(), variant.kind)
				}
				if db := c.GetDynamicBatching(); name != "ppocr_det" {
					if db == nil || db.GetMaxQueueDelayMicroseconds() == 0 || db.GetMaxQueueDelayMicroseconds() > 10_000 {
						t.Errorf("dynamic_batching %v, want one with a small max_queue_delay", db)
					}
					for _, p := range db.GetPreferredBatchSize() {
						if p < 1 || p > c.GetMaxBatchSize() {
							t.Errorf("preferred batch size %d outside 1..%d", p, c.GetMaxBatchSize())
						}
					}
				}
				var ins, outs []tensorDecl
				for _, in := range c.GetInput() {
					ins = append(ins, tensorDecl{in.GetName(), in.GetDataType(), in.GetDims()})
				}
				for _, out := range c.GetOutput() {
					outs = append(outs, tensorDecl{out.GetName(), out.GetDataType(), out.GetDims()})
				}
				compare(t, "input", ins, graph.inputs)
				compare(t, "output", outs, graph.outputs)
			})
		}
	}
}

type tensorDecl struct {
	name string
	typ  inferencepb.DataType
	dims []int64 // without the batch dimension
}

// compare checks config tensors against graph tensors (whose first dimension is the batch).
func compare(t *testing.T, what string, config []tensorDecl, graph []onnxTensor) {
	t.Helper()
	if len(config) != len(graph) {
		t.Fatalf("%d %ss in the config, %d in the graph (%v)", len(config), what, len(graph), graph)
	}
	for i, c := range config {
		g := graph[i]
		if c.name != g.name {
			t.Errorf("%s %d is %q in the config, %q in the graph", what, i, c.name, g.name)
		}
		if c.typ != inferencepb.DataType_TYPE_FP32 || g.elemType != onnxFloat {
			t.Errorf("%s %q: config %v, graph element type %d; want FP32 in both", what, c.name, c.typ, g.elemType)
		}
		if len(g.dims) != len(c.dims)+1 {
			t.Errorf("%s %q: graph shape %v, config dims %v plus the batch dimension", what, c.name, g.dims, c.dims)
			continue
		}
		if g.dims[0] != -1 {
			t.Errorf("%s %q: graph batch dimension is fixed at %d", what, c.name, g.dims[0])
		}
		for j, d := range c.dims {
			if gd := g.dims[j+1]; d == 0 || d < -1 || (gd != -1 && d != gd) {
				t.Errorf("%s %q: config dims %v contradict graph shape %v", what, c.name, c.dims, g.dims)
				break
			}
		}
	}
}

// TestMakeModelRepository runs the script into a temporary directory and checks the layout
// Triton expects, and its answers to bad arguments and missing models.
func TestMakeModelRepository(t *testing.T) {
	dir := modelsDir(t)
	home := filepath.Dir(dir)
	for _, variant := range []string{"cpu", "gpu"} {
		t.Run(variant, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "repo")
			if msg, err := runScript(t, home, variant, out); err != nil {
				t.Fatalf("%v\n%s", err, msg)
			}
			for name := range onnxFiles {
				file := variantFile(variant, name)
				config, err := os.ReadFile(filepath.Join(out, name, "config.pbtxt"))
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(configRoot, variant, name, "config.pbtxt"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(config, want) {
					t.Errorf("%s/config.pbtxt differs from model_repository/%s", name, variant)
				}
				model, err := os.ReadFile(filepath.Join(out, name, "1", "model.onnx"))
				if err != nil {
					t.Fatal(err)
				}
				src, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(model, src) {
					t.Errorf("%s/1/model.onnx is not %s", name, file)
				}
			}
			// The written repository reads back as one.
			if _, err := tritontest.ReadRepository(out); err != nil {
				t.Error(err)
			}
			// Running it again over the same directory works.
			if msg, err := runScript(t, home, variant, out); err != nil {
				t.Fatalf("second run: %v\n%s", err, msg)
			}
		})
	}

	tests := []struct {
		name string
		home string
		args []string
		msg  string
	}{
		{"no arguments", home, nil, "usage:"},
		{"unknown variant", home, []string{"tpu", t.TempDir()}, "usage:"},
		{"extra argument", home, []string{"cpu", t.TempDir(), "x"}, "usage:"},
		{"missing models", t.TempDir(), []string{"cpu", t.TempDir()}, "run scripts/fetch_models.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := runScript(t, tt.home, tt.args...)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("err = %v, want exit status 1\n%s", err, msg)
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("output %q lacks %q", msg, tt.msg)
			}
		})
	}
}

func runScript(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), makeRepo, args...)
	// Every language pack, as `make test` fetches them: the layout is checked for all of them.
	cmd.Env = append(os.Environ(), "OCRGATE_HOME="+home, "OCRGATE_LANGS="+packLangs)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A minimal reader of ONNX graph inputs and outputs (onnx.proto field numbers), enough to check
// configs without loading ONNX Runtime.

const onnxFloat = 1 // TensorProto.DataType.FLOAT

type onnxTensor struct {
	name     string
	elemType int64
	dims     []int64 // -1 where the graph leaves the size open
}

type onnxGraph struct{ inputs, outputs []onnxTensor }

func readONNX(path string) (onnxGraph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return onnxGraph{}, err
	}
	graph, ok := field(b, 7) // ModelProto.graph
	if !ok {
		return onnxGraph{}, fmt.Errorf("%s: no graph", path)
	}
	var g onnxGraph
	initializers := map[string]bool{}
	err = walk(graph, func(num protowire.Number, v []byte) error {
		if num == 5 { // GraphProto.initializer: older exports list weights among the inputs too
			if name, ok := field(v, 8); ok {
				initializers[string(name)] = true
			}
		}
		return nil
	})
	if err != nil {
		return onnxGraph{}, fmt.Errorf("%s: %w", path, err)
	}
	err = walk(graph, func(num protowire.Number, v []byte) error {
		if num != 11 && num != 12 { // GraphProto.input, GraphProto.output
			return nil
		}
		t, err := valueInfo(v)
		if err != nil {
			return err
		}
		switch {
		case num == 12:
			g.outputs = append(g.outputs, t)
		case !initializers[t.name]:
			g.inputs = append(g.inputs, t)
		}
		return nil
	})
	if err != nil {
		return onnxGraph{}, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// valueInfo reads a ValueInfoProto: name = 1, type = 2 → TypeProto.tensor_type = 1 →
// elem_type = 1, shape = 2 → TensorShapeProto.dim = 1 → dim_value = 1 | dim_param = 2.
func valueInfo(b []byte) (onnxTensor, error) {
	var t onnxTensor
	name, _ := field(b, 1)
	t.name = string(name)
	typ, _ := field(b, 2)
	tensor, ok := field(typ, 1)
	if !ok {
		return t, fmt.Errorf("%q is not a tensor", t.name)
	}
	err := walk(tensor, func(num protowire.Number, v []byte) error {
		if num != 2 {
			return nil
		}
		return walk(v, func(num protowire.Number, dim []byte) error {
			if num != 1 {
				return nil
			}
			size := int64(-1)
			_ = walkVarints(dim, func(num protowire.Number, x uint64) {
				if num == 1 && int64(x) > 0 {
					size = int64(x)
				}
			})
			t.dims = append(t.dims, size)
			return nil
		})
	})
	if err != nil {
		return t, err
	}
	return t, walkVarints(tensor, func(num protowire.Number, x uint64) {
		if num == 1 {
			t.elemType = int64(x)
		}
	})
}

// field returns the first length-delimited field num of a message.
func field(b []byte, num protowire.Number) ([]byte, bool) {
	var found []byte
	ok := false
	_ = walk(b, func(n protowire.Number, v []byte) error {
		if n == num && !ok {
			found, ok = v, true
		}
		return nil
	})
	return found, ok
}

// walk calls fn for each length-delimited field of a message, skipping the others.
func walk(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			if err := fn(num, v); err != nil {
				return err
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// walkVarints calls fn for each varint field of a message.
func walkVarints(b []byte, fn func(protowire.Number, uint64)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.VarintType {
			x, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			fn(num, x)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}
