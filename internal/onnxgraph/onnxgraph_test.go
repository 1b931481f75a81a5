package onnxgraph_test

// These tests build small ONNX graphs in the test (the protobuf written here with protowire, not
// with the package's own encoder), rewrite them, read the result back with a decoder of their own
// and run both graphs through a small float32 interpreter (eval_test.go): no ONNX Runtime, no
// models, so they run in the fast tier. internal/modelprep checks the same rewrites on the real
// PP-OCR models under ONNX Runtime (the full tier).

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ocrgate/ocrgate/internal/onnxgraph"
)

// ONNX field numbers, from onnx.proto3, written independently of the package's own table.
const (
	fModelIRVersion    = 1
	fModelProducerName = 2
	fModelGraph        = 7
	fModelOpset        = 8
	fModelMetadata     = 14
	fOpsetDomain       = 1
	fOpsetVersion      = 2
	fGraphNode         = 1
	fGraphName         = 2
	fGraphInput        = 11
	fGraphOutput       = 12
	fNodeInput         = 1
	fNodeOutput        = 2
	fNodeName          = 3
	fNodeOpType        = 4
	fNodeAttribute     = 5
	fNodeDocString     = 6
	fAttrName          = 1
	fAttrF             = 2
	fAttrI             = 3
	fAttrT             = 5
	fAttrInts          = 8
	fAttrType          = 20
	fTensorDims        = 1
	fTensorDataType    = 2
	fTensorName        = 8
	fTensorRawData     = 9
	fValueInfoName     = 1

	attrFloat  = 1
	attrInt    = 2
	attrTensor = 4
	attrInts   = 7
	typeFloat  = 1
	typeInt64  = 7
)

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendString(b []byte, num protowire.Number, v string) []byte {
	return appendBytes(b, num, []byte(v))
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// tensor is a float32 (or int64) tensor for building and evaluating graphs.
type tensor struct {
	dims []int64
	data []float32
	ints []int64 // for INT64 tensors
}

func (t tensor) size() int {
	n := 1
	for _, d := range t.dims {
		n *= int(d)
	}
	return n
}

// encodeTensor writes a TensorProto with raw little-endian data.
func encodeTensor(name string, t tensor) []byte {
	var b []byte
	for _, d := range t.dims {
		b = appendVarint(b, fTensorDims, uint64(d))
	}
	var raw []byte
	if t.ints != nil {
		b = appendVarint(b, fTensorDataType, typeInt64)
		for _, v := range t.ints {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
		}
	} else {
		b = appendVarint(b, fTensorDataType, typeFloat)
		for _, v := range t.data {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
	}
	b = appendString(b, fTensorName, name)
	return appendBytes(b, fTensorRawData, raw)
}

// attr is an AttributeProto to write.
type attr struct {
	name string
	f    *float32
	i    *int64
	ints []int64
	t    *tensor
}

func fAttr(name string, v float32) attr     { return attr{name: name, f: &v} }
func iAttr(name string, v int64) attr       { return attr{name: name, i: &v} }
func intsAttr(name string, v ...int64) attr { return attr{name: name, ints: v} }

func encodeAttr(a attr) []byte {
	b := appendString(nil, fAttrName, a.name)
	switch {
	case a.f != nil:
		b = protowire.AppendTag(b, fAttrF, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(*a.f))
		b = appendVarint(b, fAttrType, attrFloat)
	case a.i != nil:
		b = appendVarint(b, fAttrI, uint64(*a.i))
		b = appendVarint(b, fAttrType, attrInt)
	case a.t != nil:
		b = appendBytes(b, fAttrT, encodeTensor("", *a.t))
		b = appendVarint(b, fAttrType, attrTensor)
	default:
		for _, v := range a.ints {
			b = appendVarint(b, fAttrInts, uint64(v))
		}
		b = appendVarint(b, fAttrType, attrInts)
	}
	return b
}

// op is a node to write.
type op struct {
	typ     string
	inputs  []string
	outputs []string
	attrs   []attr
	doc     string // written as NodeProto.doc_string, a field no rewrite reads
}

func encodeNode(n op) []byte {
	var b []byte
	for _, in := range n.inputs {
		b = appendString(b, fNodeInput, in)
	}
	for _, out := range n.outputs {
		b = appendString(b, fNodeOutput, out)
	}
	b = appendString(b, fNodeName, n.outputs[0]+"_node")
	b = appendString(b, fNodeOpType, n.typ)
	for _, a := range n.attrs {
		b = appendBytes(b, fNodeAttribute, encodeAttr(a))
	}
	if n.doc != "" {
		b = appendString(b, fNodeDocString, n.doc)
	}
	return b
}

// constant is a Constant node with a float32 value, as paddle2onnx writes weights and scalars.
func constant(name string, dims []int64, data ...float32) op {
	t := tensor{dims: dims, data: data}
	return op{typ: "Constant", outputs: []string{name}, attrs: []attr{{name: "value", t: &t}}}
}

// model writes a ModelProto: IR version 7, the default-domain opset, the nodes, one float input
// and the outputs, a producer name and a graph name (fields no rewrite reads, which must come
// through unchanged).
func model(opset uint64, input string, outputs []string, nodes ...op) []byte {
	var g []byte
	for _, n := range nodes {
		g = appendBytes(g, fGraphNode, encodeNode(n))
	}
	g = appendString(g, fGraphName, "test-graph")
	g = appendBytes(g, fGraphInput, appendString(nil, fValueInfoName, input))
	for _, o := range outputs {
		g = appendBytes(g, fGraphOutput, appendString(nil, fValueInfoName, o))
	}
	m := appendVarint(nil, fModelIRVersion, 7)
	m = appendString(m, fModelProducerName, "ocrgate-onnxgraph-test")
	m = appendBytes(m, fModelGraph, g)
	opsetID := appendString(nil, fOpsetDomain, "")
	opsetID = appendVarint(opsetID, fOpsetVersion, opset)
	return appendBytes(m, fModelOpset, opsetID)
}

// randomValues are n values in [-1, 1) from a fixed seed.
func randomValues(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// paddleBlock is a graph as paddle2onnx writes a PP-LCNet stage, at opset 11: a convolution with
// a learnable scale and bias after it (Mul, Add), a hard-swish written as Add, Clip, Mul and Div,
// another scale and bias after the activation feeding a 1×1 convolution without padding, and a
// third after a second hard-swish feeding a padded 3×3 convolution. The scalars are [1]-shaped, as
// paddle2onnx writes them; the first Mul has its constant first.
func paddleBlock() []byte {
	hardSwish := func(x, out string) []op {
		return []op{
			constant(out+"_three", []int64{1}, 3),
			op{typ: "Add", inputs: []string{x, out + "_three"}, outputs: []string{out + "_plus3"}},
			constant(out+"_zero", nil, 0),
			constant(out+"_six", nil, 6),
			op{typ: "Clip", inputs: []string{out + "_plus3", out + "_zero", out + "_six"}, outputs: []string{out + "_clip"}},
			op{typ: "Mul", inputs: []string{x, out + "_clip"}, outputs: []string{out + "_prod"}},
			constant(out+"_sixth", []int64{1}, 6),
			op{typ: "Div", inputs: []string{out + "_prod", out + "_sixth"}, outputs: []string{out}},
		}
	}
	nodes := []op{
		constant("w1", []int64{3, 2, 1, 1}, randomValues(1, 6)...),
		constant("b1", []int64{3}, randomValues(2, 3)...),
		op{typ: "Conv", inputs: []string{"x", "w1", "b1"}, outputs: []string{"c1"}, attrs: []attr{intsAttr("kernel_shape", 1, 1)}, doc: "first convolution"},
		constant("s1", []int64{1}, 0.5),
		op{typ: "Mul", inputs: []string{"s1", "c1"}, outputs: []string{"m1"}},
		constant("t1", []int64{1}, 0.25),
		op{typ: "Add", inputs: []string{"m1", "t1"}, outputs: []string{"a1"}},
	}
	nodes = append(nodes, hardSwish("a1", "h1")...)
	nodes = append(nodes,
		constant("s2", []int64{1}, 1.5),
		op{typ: "Mul", inputs: []string{"h1", "s2"}, outputs: []string{"m2"}},
		constant("t2", []int64{1}, -0.75),
		op{typ: "Add", inputs: []string{"m2", "t2"}, outputs: []string{"a2"}},
		constant("w2", []int64{4, 3, 1, 1}, randomValues(3, 12)...),
		op{typ: "Conv", inputs: []string{"a2", "w2"}, outputs: []string{"c2"}, attrs: []attr{intsAttr("kernel_shape", 1, 1)}},
	)
	nodes = append(nodes, hardSwish("c2", "h2")...)
	nodes = append(nodes,
		constant("s3", []int64{1}, 0.8),
		op{typ: "Mul", inputs: []string{"h2", "s3"}, outputs: []string{"m3"}},
		constant("t3", []int64{1}, 0.1),
		op{typ: "Add", inputs: []string{"m3", "t3"}, outputs: []string{"a3"}},
		constant("w3", []int64{2, 4, 3, 3}, randomValues(4, 72)...),
		constant("b3", []int64{2}, randomValues(5, 2)...),
		op{typ: "Conv", inputs: []string{"a3", "w3", "b3"}, outputs: []string{"y"},
			attrs: []attr{intsAttr("kernel_shape", 3, 3), intsAttr("pads", 1, 1, 1, 1)}},
	)
	return model(11, "x", []string{"y"}, nodes...)
}

// TestOptimizeSmallGraph rewrites paddleBlock and checks each rewrite by what the graph then holds
// and by what it computes.
func TestOptimizeSmallGraph(t *testing.T) {
	src := paddleBlock()
	got, rw, err := onnxgraph.Optimize(src)
	if err != nil {
		t.Fatal(err)
	}
	want := onnxgraph.Rewrites{HardSwish: 2, IntoConv: 1, IntoNext: 1, BatchNorm: 1}
	if rw.HardSwish != want.HardSwish || rw.IntoConv != want.IntoConv || rw.IntoNext != want.IntoNext || rw.BatchNorm != want.BatchNorm {
		t.Errorf("rewrites %+v, want hard-swish 2, into conv 1, into next 1, batch norm 1", rw)
	}
	counts, err := onnxgraph.OpCounts(got)
	if err != nil {
		t.Fatal(err)
	}
	for opType, n := range map[string]int{"Conv": 3, "HardSigmoid": 2, "Mul": 2, "BatchNormalization": 1, "Add": 0, "Clip": 0, "Div": 0} {
		if counts[opType] != n {
			t.Errorf("%d %s nodes after the rewrite, want %d (all: %v)", counts[opType], opType, n, counts)
		}
	}
	if rw.NodesAfter != countNodes(t, got) {
		t.Errorf("NodesAfter %d, the graph has %d nodes", rw.NodesAfter, countNodes(t, got))
	}

	// The same numbers out, within float rounding, on inputs of two sizes.
	for i, dims := range [][]int64{{1, 2, 5, 4}, {2, 2, 3, 7}} {
		x := tensor{dims: dims}
		x.data = randomValues(uint64(10+i), x.size())
		for k := range x.data {
			x.data[k] *= 4 // past the hard-swish's bends at -3 and 3
		}
		before := evalModel(t, src, map[string]tensor{"x": x})["y"]
		after := evalModel(t, got, map[string]tensor{"x": x})["y"]
		if !slices.Equal(before.dims, after.dims) {
			t.Fatalf("output shape %v, was %v", after.dims, before.dims)
		}
		for k := range before.data {
			if d := math.Abs(float64(before.data[k] - after.data[k])); d > 1e-5*(1+math.Abs(float64(before.data[k]))) {
				t.Fatalf("input %v, output %d: %g after the rewrite, %g before", dims, k, after.data[k], before.data[k])
			}
		}
	}

	// Fields no rewrite reads come through: the producer, the graph's name, an untouched node's
	// doc string.
	for _, s := range []string{"ocrgate-onnxgraph-test", "test-graph", "first convolution"} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("%q was lost in the rewrite", s)
		}
	}

	// Idempotent: a rewritten graph has nothing left to rewrite and comes back as it was.
	again, rw2, err := onnxgraph.Optimize(got)
	if err != nil || rw2.Total() != 0 || !bytes.Equal(again, got) {
		t.Errorf("second Optimize: %+v, %v; same bytes: %v", rw2, err, bytes.Equal(again, got))
	}
}

// TestOptimizeLeavesWhatItCannotProve: a scale and bias whose constant is not a scalar, a
// hard-swish whose clip is not [0, 6], and a convolution's weights read twice are left alone, and a
// graph with nothing to rewrite comes back byte for byte.
func TestOptimizeLeavesWhatItCannotProve(t *testing.T) {
	src := model(11, "x", []string{"y", "w"},
		constant("w", []int64{2, 2, 1, 1}, 1, 2, 3, 4),
		op{typ: "Conv", inputs: []string{"x", "w"}, outputs: []string{"c"}},
		constant("s", []int64{2, 1, 1}, 0.5, 2), // per channel: not a scalar block
		op{typ: "Mul", inputs: []string{"c", "s"}, outputs: []string{"m"}},
		constant("three", nil, 3),
		op{typ: "Add", inputs: []string{"m", "three"}, outputs: []string{"p"}},
		constant("lo", nil, 0),
		constant("hi", nil, 5), // not hard-swish's 6
		op{typ: "Clip", inputs: []string{"p", "lo", "hi"}, outputs: []string{"cl"}},
		op{typ: "Mul", inputs: []string{"m", "cl"}, outputs: []string{"q"}},
		constant("six", nil, 6),
		op{typ: "Div", inputs: []string{"q", "six"}, outputs: []string{"y"}},
	)
	got, rw, err := onnxgraph.Optimize(src)
	if err != nil {
		t.Fatal(err)
	}
	if rw.Total() != 0 || !bytes.Equal(got, src) {
		t.Errorf("rewrites %+v; same bytes: %v", rw, bytes.Equal(got, src))
	}
}

// TestMetadata sets, replaces and reads back metadata entries without touching the graph.
func TestMetadata(t *testing.T) {
	src := paddleBlock()
	if md, err := onnxgraph.Metadata(src); err != nil || len(md) != 0 {
		t.Fatalf("metadata of a fresh model: %v, %v", md, err)
	}
	m1, err := onnxgraph.SetMetadata(src, onnxgraph.MetadataEntry{Key: "a", Value: "1"}, onnxgraph.MetadataEntry{Key: "b", Value: "2"})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := onnxgraph.SetMetadata(m1, onnxgraph.MetadataEntry{Key: "a", Value: "3"}, onnxgraph.MetadataEntry{Key: "c", Value: "4"})
	if err != nil {
		t.Fatal(err)
	}
	md, err := onnxgraph.Metadata(m2)
	if err != nil {
		t.Fatal(err)
	}
	want := []onnxgraph.MetadataEntry{{Key: "a", Value: "3"}, {Key: "b", Value: "2"}, {Key: "c", Value: "4"}}
	if !slices.Equal(md, want) {
		t.Errorf("metadata %v, want %v", md, want)
	}
	if !bytes.Equal(graphOf(t, m2), graphOf(t, src)) {
		t.Error("SetMetadata changed the graph")
	}
}

// TestRaiseOpset raises a graph of opset 11 to 13: Unsqueeze's and ReduceSum's axes become INT64
// inputs, the graph computes the same, and an operator whose change the rewrite does not make
// refuses it.
func TestRaiseOpset(t *testing.T) {
	src := model(11, "x", []string{"y"},
		op{typ: "Unsqueeze", inputs: []string{"x"}, outputs: []string{"u"}, attrs: []attr{intsAttr("axes", 0)}},
		op{typ: "ReduceSum", inputs: []string{"u"}, outputs: []string{"y"}, attrs: []attr{intsAttr("axes", 2), iAttr("keepdims", 0)}},
	)
	got, err := onnxgraph.RaiseOpset(src, 13)
	if err != nil {
		t.Fatal(err)
	}
	if v := opsetOf(t, got); v != 13 {
		t.Errorf("opset %d after raising to 13", v)
	}
	nodes := parseGraph(t, got).nodes
	for _, n := range nodes {
		if (n.op == "Unsqueeze" || n.op == "ReduceSum") && (len(n.inputs) != 2 || n.attrs["axes"].ints != nil) {
			t.Errorf("%s still has inputs %v and axes %v", n.op, n.inputs, n.attrs["axes"].ints)
		}
	}
	x := tensor{dims: []int64{2, 3}, data: randomValues(20, 6)}
	before := evalModel(t, src, map[string]tensor{"x": x})["y"]
	after := evalModel(t, got, map[string]tensor{"x": x})["y"]
	if !slices.Equal(before.dims, after.dims) || !slices.Equal(before.data, after.data) {
		t.Errorf("raised graph computes %v %v, the original %v %v", after.dims, after.data, before.dims, before.data)
	}

	clip := model(9, "x", []string{"y"}, op{typ: "Clip", inputs: []string{"x"}, outputs: []string{"y"}, attrs: []attr{fAttr("min", 0), fAttr("max", 6)}})
	if _, err := onnxgraph.RaiseOpset(clip, 13); err == nil || !strings.Contains(err.Error(), "Clip") {
		t.Errorf("raising a Clip of opset 9: %v, want a refusal naming Clip", err)
	}
}

// TestMalformed: bytes that are not a model are an error from every entry point, never a panic.
func TestMalformed(t *testing.T) {
	good := paddleBlock()
	for _, b := range [][]byte{
		nil,
		{0xff},
		good[:len(good)/2],
		good[:len(good)-1],
		append([]byte{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}, good...), // a graph field longer than the file
	} {
		if _, _, err := onnxgraph.Optimize(b); err == nil && len(b) > 0 {
			t.Errorf("Optimize(%d bytes): no error", len(b))
		}
		onnxgraph.Metadata(b)
		onnxgraph.OpCounts(b)
		onnxgraph.RaiseOpset(b, 13)
	}
}

// FuzzOptimize feeds the entry points arbitrary bytes, from a valid small model: none may panic,
// and whatever Optimize accepts it must accept again.
func FuzzOptimize(f *testing.F) {
	f.Add(paddleBlock())
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _, err := onnxgraph.Optimize(b)
		if err == nil {
			if _, _, err := onnxgraph.Optimize(out); err != nil {
				t.Fatalf("Optimize accepted a model, then refused its own output: %v", err)
			}
		}
		onnxgraph.Metadata(b)
		onnxgraph.OpCounts(b)
		onnxgraph.RaiseOpset(b, 13)
	})
}
