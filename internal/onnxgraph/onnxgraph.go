// Package onnxgraph Rewrites the PaddleOCR ONNX exports into an equivalent graph ONNX Runtime runs
// faster. It edits the protobuf wire format directly, so no ONNX schema is compiled in.
package onnxgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Optimize Rewrites a PaddleOCR ONNX export into a form ONNX Runtime runs faster, without
// changing what the model computes (outputs differ only by float rounding):
//
//   - hard-swish activations become HardSigmoid+Mul (below);
//   - the scale and bias of PP-LCNetV3's learnable affine blocks are reshaped so that ONNX
//     Runtime's own Conv+Mul and Conv+Add fusions fold them into the preceding convolution.
//
// paddle2onnx writes hardswish(x) = x·clip(x+3, 0, 6)/6 as four nodes (Add, Clip, Mul, Div) at
// opset 9, which has no HardSwish operator. Each of those is a full pass over the activation and,
// between the blocked-layout convolutions ONNX Runtime uses on CPU, forces a layout conversion.
// The same function is x·HardSigmoid(x) with alpha 1/6 and beta 0.5 (HardSigmoid exists at opset
// 9): two nodes instead of four, and HardSigmoid stays in the blocked layout. The results differ
// only by float rounding.
//
// The model is edited at the protobuf wire level (ModelProto field 7 is the graph; GraphProto
// field 1 its nodes; NodeProto fields 1 input, 2 output, 3 name, 4 op_type, 5 attribute), so no
// ONNX schema has to be compiled in; every other field is copied through untouched. It returns the
// new model and what it changed (nothing: the model is returned as it was).
func Optimize(model []byte) ([]byte, Rewrites, error) {
	top, err := splitFields(model)
	if err != nil {
		return nil, Rewrites{}, fmt.Errorf("model: %w", err)
	}
	gi := -1
	for i, f := range top {
		if f.num == 7 && f.typ == protowire.BytesType {
			gi = i
		}
	}
	if gi < 0 {
		return nil, Rewrites{}, errors.New("model has no graph")
	}
	graph, err := splitFields(top[gi].value)
	if err != nil {
		return nil, Rewrites{}, fmt.Errorf("graph: %w", err)
	}
	var nodes []*node
	for _, f := range graph {
		if f.num == 1 && f.typ == protowire.BytesType {
			n, err := parseNode(f.value)
			if err != nil {
				return nil, Rewrites{}, fmt.Errorf("node %d: %w", len(nodes), err)
			}
			nodes = append(nodes, n)
		}
	}

	producer := map[string]*node{}
	consumers := map[string]int{}
	for _, n := range nodes {
		for _, o := range n.outputs {
			producer[o] = n
		}
		for _, in := range n.inputs {
			consumers[in]++
		}
	}
	for _, f := range graph { // graph outputs count as consumers
		if f.num == 12 && f.typ == protowire.BytesType {
			if name, ok := valueInfoName(f.value); ok {
				consumers[name]++
			}
		}
	}

	removed := map[*node]bool{}
	replace := map[*node][]*node{} // the Div node → its replacement
	fused := 0
	for _, div := range nodes {
		// Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)
		if div.op != "Div" || len(div.inputs) != 2 || len(div.outputs) != 1 || !isConst(producer[div.inputs[1]], 6) {
			continue
		}
		mul := producer[div.inputs[0]]
		if mul == nil || mul.op != "Mul" || len(mul.inputs) != 2 || consumers[mul.outputs[0]] != 1 {
			continue
		}
		for k := range 2 {
			x, clipOut := mul.inputs[k], mul.inputs[1-k]
			clip := producer[clipOut]
			if clip == nil || clip.op != "Clip" || len(clip.inputs) != 1 || consumers[clipOut] != 1 {
				continue
			}
			lo, hi, ok := clipBounds(clip)
			if !ok || lo != 0 || hi != 6 {
				continue
			}
			add := producer[clip.inputs[0]]
			if add == nil || add.op != "Add" || len(add.inputs) != 2 || consumers[add.outputs[0]] != 1 {
				continue
			}
			var three string
			switch x {
			case add.inputs[0]:
				three = add.inputs[1]
			case add.inputs[1]:
				three = add.inputs[0]
			default:
				continue
			}
			if !isConst(producer[three], 3) {
				continue
			}
			gate := div.outputs[0] + ".hardsigmoid"
			replace[div] = []*node{
				{op: "HardSigmoid", inputs: []string{x}, outputs: []string{gate}, name: gate,
					attrs: [][]byte{floatAttr("alpha", 1.0/6), floatAttr("beta", 0.5)}},
				{op: "Mul", inputs: []string{x, gate}, outputs: []string{div.outputs[0]}, name: div.outputs[0] + ".mul"},
			}
			removed[add], removed[clip], removed[mul] = true, true, true
			fused++
			break
		}
	}
	// Put the constant operand of Mul and Add second. PP-OCRv4's learnable affine blocks write
	// Mul(scale, conv(x)), and ONNX Runtime folds a per-tensor scale or bias into the preceding
	// convolution only when the constant is the second operand. Both operators commute.
	commuted := 0
	for _, n := range nodes {
		if (n.op == "Mul" || n.op == "Add") && len(n.inputs) == 2 && !removed[n] && replace[n] == nil {
			a, b := producer[n.inputs[0]], producer[n.inputs[1]]
			if a != nil && a.op == "Constant" && (b == nil || b.op != "Constant") {
				n.inputs[0], n.inputs[1] = n.inputs[1], n.inputs[0]
				n.raw = n.encodeKeeping()
				commuted++
			}
		}
	}
	// Make one-element constants that only feed Mul and Add true scalars. Broadcasting treats
	// shape [1] and shape [] alike, but ONNX Runtime's Conv+Mul and Conv+Add fusions accept a
	// scalar or a per-channel tensor only, so the [1]-shaped scales of the affine blocks stay
	// separate passes over the activation otherwise.
	onlyElementwise := map[string]bool{}
	for _, n := range nodes {
		if removed[n] || replace[n] != nil {
			continue
		}
		for _, in := range n.inputs {
			if _, seen := onlyElementwise[in]; !seen {
				onlyElementwise[in] = true
			}
			if n.op != "Mul" && n.op != "Add" {
				onlyElementwise[in] = false
			}
		}
	}
	scalars := 0
	for _, n := range nodes {
		if n.op == "Constant" && len(n.outputs) == 1 && onlyElementwise[n.outputs[0]] {
			if raw, ok := scalarConstant(n); ok {
				n.raw = raw
				scalars++
			}
		}
	}
	// A scalar bias added right after a convolution (and its folded scale) becomes a per-channel
	// [C,1,1] tensor: ONNX Runtime folds an Add into the convolution's bias only in that shape.
	biases := 0
	for _, add := range nodes {
		if add.op != "Add" || len(add.inputs) != 2 || removed[add] || replace[add] != nil || consumers[add.inputs[1]] != 1 {
			continue
		}
		src := producer[add.inputs[0]]
		if src != nil && src.op == "Mul" && len(src.inputs) == 2 && isOneFloat(producer[src.inputs[1]]) && consumers[src.outputs[0]] == 1 {
			src = producer[src.inputs[0]]
		}
		if src == nil || src.op != "Conv" || len(src.inputs) < 2 || consumers[src.outputs[0]] != 1 {
			continue
		}
		channels, ok := constDim0(producer[src.inputs[1]])
		bias := producer[add.inputs[1]]
		v, isScalar := constFloat(bias)
		if !ok || !isScalar {
			continue
		}
		bias.raw = channelConstant(bias, v, channels)
		biases++
	}
	rw := Rewrites{HardSwish: fused, Commuted: commuted, Scalars: scalars, Biases: biases}
	if rw == (Rewrites{}) {
		return model, rw, nil
	}

	// Constants only the rewritten nodes used are dropped with them.
	used := map[string]int{}
	for _, n := range nodes {
		if removed[n] || replace[n] != nil {
			continue
		}
		for _, in := range n.inputs {
			used[in]++
		}
	}
	for _, rs := range replace {
		for _, r := range rs {
			for _, in := range r.inputs {
				used[in]++
			}
		}
	}
	for name := range consumers {
		if p := producer[name]; p != nil && p.op == "Constant" && used[name] == 0 && consumers[name] > 0 {
			// consumers[name] > 0 with no remaining use: it fed only removed nodes.
			removed[p] = true
		}
	}

	var g []byte
	for _, n := range nodes {
		switch {
		case replace[n] != nil:
			for _, r := range replace[n] {
				g = protowire.AppendTag(g, 1, protowire.BytesType)
				g = protowire.AppendBytes(g, r.encode())
			}
		case removed[n]:
		default:
			g = protowire.AppendTag(g, 1, protowire.BytesType)
			g = protowire.AppendBytes(g, n.raw)
		}
	}
	for _, f := range graph {
		if f.num != 1 {
			g = append(g, f.raw...)
		}
	}
	var out []byte
	for i, f := range top {
		if i == gi {
			out = protowire.AppendTag(out, 7, protowire.BytesType)
			out = protowire.AppendBytes(out, g)
			continue
		}
		out = append(out, f.raw...)
	}
	return out, rw, nil
}

// Rewrites counts what Optimize changed.
type Rewrites struct {
	HardSwish int // Add+Clip+Mul+Div activations now HardSigmoid+Mul
	Commuted  int // Mul/Add with the constant moved second
	Scalars   int // [1]-shaped constants made scalars
	Biases    int // scalar biases after a Conv made per-channel
}

// Total is the number of changes of every kind.
func (r Rewrites) Total() int { return r.HardSwish + r.Commuted + r.Scalars + r.Biases }

// field is one protobuf field: its number, wire type, payload (for length-delimited fields) and
// the raw bytes including the tag, so it can be copied through unchanged.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	value []byte
	raw   []byte
}

func splitFields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		f := field{num: num, typ: typ, raw: b[:n+m]}
		if typ == protowire.BytesType {
			f.value, _ = protowire.ConsumeBytes(b[n:])
		}
		out = append(out, f)
		b = b[n+m:]
	}
	return out, nil
}

// node is the part of a NodeProto the rewrite looks at.
type node struct {
	raw     []byte
	op      string
	name    string
	inputs  []string
	outputs []string
	attrs   [][]byte // AttributeProto payloads
}

func parseNode(b []byte) (*node, error) {
	fs, err := splitFields(b)
	if err != nil {
		return nil, err
	}
	n := &node{raw: b}
	for _, f := range fs {
		if f.typ != protowire.BytesType {
			continue
		}
		switch f.num {
		case 1:
			n.inputs = append(n.inputs, string(f.value))
		case 2:
			n.outputs = append(n.outputs, string(f.value))
		case 3:
			n.name = string(f.value)
		case 4:
			n.op = string(f.value)
		case 5:
			n.attrs = append(n.attrs, f.value)
		}
	}
	return n, nil
}

// encodeKeeping re-encodes a parsed node with its current inputs, keeping every other field of the
// original as it was.
func (n *node) encodeKeeping() []byte {
	fs, _ := splitFields(n.raw)
	var b []byte
	for _, in := range n.inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, f := range fs {
		if f.num != 1 {
			b = append(b, f.raw...)
		}
	}
	return b
}

func (n *node) encode() []byte {
	var b []byte
	for _, in := range n.inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, o := range n.outputs {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, o)
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, n.name)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, n.op)
	for _, a := range n.attrs {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, a)
	}
	return b
}

// floatAttr encodes an AttributeProto{name: 1, f: 2, type: 20 = FLOAT (1)}.
func floatAttr(name string, v float32) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, math.Float32bits(v))
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	return b
}

// attr returns the named attribute's fields.
func (n *node) attr(name string) ([]field, bool) {
	for _, a := range n.attrs {
		fs, err := splitFields(a)
		if err != nil {
			continue
		}
		for _, f := range fs {
			if f.num == 1 && string(f.value) == name {
				return fs, true
			}
		}
	}
	return nil, false
}

// clipBounds reads an opset-9 Clip's min and max attributes.
func clipBounds(n *node) (lo, hi float32, ok bool) {
	get := func(name string) (float32, bool) {
		fs, ok := n.attr(name)
		if !ok {
			return 0, false
		}
		for _, f := range fs {
			if f.num == 2 && f.typ == protowire.Fixed32Type {
				v, _ := protowire.ConsumeFixed32(f.raw[protowire.SizeTag(2):])
				return math.Float32frombits(v), true
			}
		}
		return 0, false
	}
	lo, ok1 := get("min")
	hi, ok2 := get("max")
	return lo, hi, ok1 && ok2
}

// isConst reports whether n is a Constant node holding one float32 equal to want. The value is a
// TensorProto (dims 1, data_type 2 = FLOAT (1), float_data 4, raw_data 9) in attribute "value".
func isConst(n *node, want float32) bool {
	v, ok := constFloat(n)
	return ok && v == want
}

// isOneFloat reports whether n is a Constant holding a single float32 of shape [1].
func isOneFloat(n *node) bool {
	_, ok := constFloat(n)
	return ok
}

// constFloat returns the value of a Constant node holding a single float32 (shape [] or [1]).
func constFloat(n *node) (float32, bool) {
	if n == nil || n.op != "Constant" {
		return 0, false
	}
	fs, ok := n.attr("value")
	if !ok {
		return 0, false
	}
	for _, f := range fs {
		if f.num != 5 || f.typ != protowire.BytesType { // AttributeProto.t
			continue
		}
		ts, err := splitFields(f.value)
		if err != nil {
			return 0, false
		}
		var vals []float32
		dtype := uint64(0)
		for _, t := range ts {
			switch {
			case t.num == 1 && t.typ == protowire.VarintType: // a dim: must be 1
				if d, _ := protowire.ConsumeVarint(t.raw[protowire.SizeTag(1):]); d != 1 {
					return 0, false
				}
			case t.num == 2 && t.typ == protowire.VarintType:
				dtype, _ = protowire.ConsumeVarint(t.raw[protowire.SizeTag(2):])
			case t.num == 4 && t.typ == protowire.BytesType: // packed float_data
				for p := t.value; len(p) >= 4; p = p[4:] {
					vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(p)))
				}
			case t.num == 4 && t.typ == protowire.Fixed32Type:
				v, _ := protowire.ConsumeFixed32(t.raw[protowire.SizeTag(4):])
				vals = append(vals, math.Float32frombits(v))
			case t.num == 9 && t.typ == protowire.BytesType: // raw_data, little-endian
				for p := t.value; len(p) >= 4; p = p[4:] {
					vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(p)))
				}
			}
		}
		if dtype != 1 || len(vals) != 1 {
			return 0, false
		}
		return vals[0], true
	}
	return 0, false
}

// scalarConstant re-encodes a Constant node whose value is a float32 tensor of shape [1] as a
// scalar (the same tensor without dims). It reports false for any other constant.
func scalarConstant(n *node) ([]byte, bool) {
	if !isOneFloat(n) {
		return nil, false
	}
	nfs, err := splitFields(n.raw)
	if err != nil {
		return nil, false
	}
	var out []byte
	changed := false
	for _, nf := range nfs {
		if nf.num != 5 || nf.typ != protowire.BytesType {
			out = append(out, nf.raw...)
			continue
		}
		afs, err := splitFields(nf.value)
		if err != nil {
			return nil, false
		}
		var attr []byte
		for _, af := range afs {
			if af.num != 5 || af.typ != protowire.BytesType {
				attr = append(attr, af.raw...)
				continue
			}
			tfs, err := splitFields(af.value)
			if err != nil {
				return nil, false
			}
			var tensor []byte
			for _, tf := range tfs {
				if tf.num == 1 { // dims
					changed = true
					continue
				}
				tensor = append(tensor, tf.raw...)
			}
			attr = protowire.AppendTag(attr, 5, protowire.BytesType)
			attr = protowire.AppendBytes(attr, tensor)
		}
		out = protowire.AppendTag(out, 5, protowire.BytesType)
		out = protowire.AppendBytes(out, attr)
	}
	return out, changed
}

// constDim0 returns the first dimension of a Constant node's tensor (a Conv weight's output
// channels).
func constDim0(n *node) (int, bool) {
	if n == nil || n.op != "Constant" {
		return 0, false
	}
	fs, ok := n.attr("value")
	if !ok {
		return 0, false
	}
	for _, f := range fs {
		if f.num != 5 || f.typ != protowire.BytesType {
			continue
		}
		ts, err := splitFields(f.value)
		if err != nil {
			return 0, false
		}
		for _, t := range ts {
			if t.num == 1 && t.typ == protowire.VarintType {
				d, _ := protowire.ConsumeVarint(t.raw[protowire.SizeTag(1):])
				return int(d), d > 0 && d < 1<<20
			}
		}
	}
	return 0, false
}

// channelConstant encodes a Constant node named like n whose value is a float32 tensor of shape
// [c,1,1] filled with v.
func channelConstant(n *node, v float32, c int) []byte {
	var t []byte
	for _, d := range []uint64{uint64(c), 1, 1} {
		t = protowire.AppendTag(t, 1, protowire.VarintType)
		t = protowire.AppendVarint(t, d)
	}
	t = protowire.AppendTag(t, 2, protowire.VarintType)
	t = protowire.AppendVarint(t, 1) // FLOAT
	t = protowire.AppendTag(t, 8, protowire.BytesType)
	t = protowire.AppendString(t, n.outputs[0])
	data := make([]byte, 4*c)
	for i := range c {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	t = protowire.AppendTag(t, 9, protowire.BytesType)
	t = protowire.AppendBytes(t, data)

	var a []byte
	a = protowire.AppendTag(a, 1, protowire.BytesType)
	a = protowire.AppendString(a, "value")
	a = protowire.AppendTag(a, 5, protowire.BytesType)
	a = protowire.AppendBytes(a, t)
	a = protowire.AppendTag(a, 20, protowire.VarintType)
	a = protowire.AppendVarint(a, 4) // TENSOR

	c2 := &node{op: "Constant", name: n.name, outputs: n.outputs, attrs: [][]byte{a}}
	return c2.encode()
}

// valueInfoName reads ValueInfoProto.name (field 1).
func valueInfoName(b []byte) (string, bool) {
	fs, err := splitFields(b)
	if err != nil {
		return "", false
	}
	for _, f := range fs {
		if f.num == 1 && f.typ == protowire.BytesType {
			return string(f.value), true
		}
	}
	return "", false
}
