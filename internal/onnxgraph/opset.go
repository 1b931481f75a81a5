package onnxgraph

import (
	"encoding/binary"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// int64Type is TensorProto.INT64, the type of the axes, bounds and counts that later opsets take
// as inputs instead of attributes.
const int64Type = 7

// attrsToInputs lists the operators whose integer-list attributes became inputs, the opset that
// made the change and the attributes in input order (each an INT64 tensor; an absent optional
// one becomes an empty input name, or is left off at the end).
var attrsToInputs = map[string]struct {
	since    uint64
	keys     []string
	required int // the first required keys
}{
	"Slice":     {10, []string{"starts", "ends", "axes"}, 2},
	"TopK":      {10, []string{"k"}, 1},
	"Squeeze":   {13, []string{"axes"}, 0},
	"Unsqueeze": {13, []string{"axes"}, 1},
	"ReduceSum": {13, []string{"axes"}, 0},
	"Split":     {13, []string{"split"}, 0},
}

// refused are operators whose meaning or form changed between opsets 9 and 14 in a way raiseOpset
// does not rewrite, with the opset that changed them; If, Loop and Scan because their subgraphs
// would need the same rewrites, which raiseOpset does not make.
var refused = map[string]uint64{
	"Upsample": 10, "Dropout": 10, "Clip": 11, "Pad": 11, "Resize": 11, "Scatter": 11,
	"If": 11, "Loop": 11, "Scan": 11, "Hardmax": 13, "LogSoftmax": 13,
}

// RaiseOpset returns model with its default-domain opset raised to v, as raiseOpset does it.
func RaiseOpset(model []byte, v uint64) ([]byte, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	if err := g.raiseOpset(v); err != nil {
		return nil, err
	}
	g.dropUnusedConstants()
	return g.encode(nil), nil
}

// raiseOpset sets the default-domain opset to v (at most 14) and rewrites the operators whose
// form changed on the way: Slice and TopK take their bounds and k as inputs from opset 10;
// Squeeze, Unsqueeze, ReduceSum and Split their axes or sizes from 13; and Softmax, which
// normalizes over one axis from 13 instead of over all axes from it on, keeps its meaning (see
// keepSoftmax). Models already at v or above are left alone; operators
// whose change the rewrite does not handle refuse it.
func (g *graph) raiseOpset(v uint64) error {
	if v > 14 {
		return fmt.Errorf("raising the opset to %d is not supported", v)
	}
	at, from := -1, uint64(0)
	for i, f := range g.top {
		if f.num != 8 || f.typ != protowire.BytesType { // ModelProto.opset_import
			continue
		}
		fs, err := splitFields(f.value)
		if err != nil {
			return err
		}
		domain, version := "", uint64(0)
		for _, x := range fs {
			switch {
			case x.num == 1 && x.typ == protowire.BytesType:
				domain = string(x.value)
			case x.num == 2 && x.typ == protowire.VarintType:
				version, _ = protowire.ConsumeVarint(x.raw[protowire.SizeTag(2):])
			}
		}
		if domain == "" || domain == "ai.onnx" {
			at, from = i, version
		}
	}
	if at < 0 {
		return fmt.Errorf("model has no default-domain opset")
	}
	if from >= v {
		return nil
	}
	if from < 9 {
		return fmt.Errorf("raising opset %d is not supported (from 9 up)", from)
	}
	changed := func(since uint64) bool { return from < since && since <= v }
	for _, n := range slices.Clone(g.nodes) {
		if n.domain != "" && n.domain != "ai.onnx" {
			continue
		}
		if since, ok := refused[n.op]; ok && changed(since) {
			return fmt.Errorf("raising to opset %d does not rewrite %s", v, n.op)
		}
		if n.op == "Softmax" && changed(13) {
			g.keepSoftmax(n)
			continue
		}
		spec, ok := attrsToInputs[n.op]
		if !ok || !changed(spec.since) || len(n.inputs) != 1 { // more inputs: in the new form already
			continue
		}
		var add []*node
		var inputs []string
		for i, key := range spec.keys {
			vals := n.attrInts(key)
			if _, present := n.attr(key); !present {
				if i < spec.required {
					return fmt.Errorf("%s %s has no %s", n.op, n.name, key)
				}
				inputs = append(inputs, "")
				continue
			}
			if key == "k" {
				vals = []int64{n.attrInt(key, 0)}
			}
			raw := make([]byte, 0, 8*len(vals))
			for _, x := range vals {
				raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
			}
			name := g.newName(n.outputs[0] + "." + key)
			add = append(add, rawConstant(name, int64Type, []int64{int64(len(vals))}, raw))
			inputs = append(inputs, name)
			n.dropAttr(key)
		}
		for len(inputs) > 0 && inputs[len(inputs)-1] == "" {
			inputs = inputs[:len(inputs)-1]
		}
		n.inputs = append(n.inputs, inputs...)
		n.dirty = true
		g.insertBefore(n, add...)
	}
	version := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), v) // OperatorSetIdProto.version
	g.top[at] = bytesField(8, version)
	g.index()
	return nil
}

// keepSoftmax gives a Softmax written for opsets before 13 the same meaning at 13 and later. It
// normalized over the flattened axes from axis on; from 13 it normalizes over axis alone. The
// two agree when axis is the last one, which is known without shapes only for -1; any other axis
// becomes Flatten(axis) → Softmax over the last axis → Reshape back to the input's shape (views,
// no copies, in ONNX Runtime).
func (g *graph) keepSoftmax(n *node) {
	axis := n.attrInt("axis", 1)
	if axis == -1 {
		return
	}
	x, y := n.inputs[0], n.outputs[0]
	shape, flat, soft := g.newName(y+".shape"), g.newName(y+".flat"), g.newName(y+".softmax")
	n.inputs, n.outputs = []string{flat}, []string{soft}
	n.dropAttr("axis")
	n.attrs = append(n.attrs, intAttr("axis", -1))
	n.dirty = true
	g.insertBefore(n,
		&node{op: "Shape", name: shape, inputs: []string{x}, outputs: []string{shape}},
		&node{op: "Flatten", name: flat, inputs: []string{x}, outputs: []string{flat}, attrs: [][]byte{intAttr("axis", axis)}},
	)
	i := indexOf(g.nodes, n)
	g.nodes = slices.Insert(g.nodes, i+1, &node{op: "Reshape", name: g.newName(y + ".reshape"), inputs: []string{soft, shape}, outputs: []string{y}})
}

// OpCounts counts the model's nodes by operator type (what tests check a rewrite by).
func OpCounts(model []byte) (map[string]int, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, n := range g.nodes {
		counts[n.op]++
	}
	return counts, nil
}
