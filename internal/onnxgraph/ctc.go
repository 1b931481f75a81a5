package onnxgraph

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// CTCTopOutput is the name of the output CTCTop gives the recognizer.
const CTCTopOutput = "ctc_top"

// CTCTop replaces a CTC recognizer's final Softmax over C classes ([N,T,C] probabilities) by the
// three values per time step a greedy CTC decoder reads: the winning class, its probability and
// the probability of class space ([N,T,3], the class index as a float). The probabilities are
// the softmax's own, computed from the logits as exp(l_k − max)/Σexp(l − max); only the argmax,
// the normalizer and one column are kept instead of writing (and copying, and scanning) all C.
// One TopK(k=1) finds the largest logit and its class in a single pass: ArgMax and ReduceMax,
// which it replaces, took twice its time (ArgMax alone 2.8 % of the int8 recognizer's), and
// TopK, like ArgMax here, takes the lowest class of equals.
//
// It applies to a graph whose only output is a Softmax over the last axis of a rank-3 tensor, and
// uses operators of opset 9 (TopK, Exp, ReduceSum, Slice with attributes).
func CTCTop(model []byte, space int64) ([]byte, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	var outs []int
	for i, f := range g.fields {
		if f.num == graphOutput && f.typ == protowire.BytesType {
			outs = append(outs, i)
		}
	}
	if len(outs) != 1 {
		return nil, fmt.Errorf("model has %d outputs, want 1", len(outs))
	}
	outName, _ := valueInfoName(g.fields[outs[0]].value)
	sm := g.producer[outName]
	if sm == nil || sm.op != "Softmax" || sm.domain != "" || len(sm.inputs) != 1 || len(g.consumers[outName]) != 0 {
		return nil, errors.New("the output is not a Softmax read by nothing else")
	}
	if axis := sm.attrInt("axis", 1); axis != 2 && axis != -1 {
		return nil, fmt.Errorf("softmax over axis %d, want the last of three", axis)
	}
	logits := sm.inputs[0]
	name := func(s string) string { return g.newName(CTCTopOutput + "." + s) }
	mx, am, amf, shifted, ex, sum, inv, sp, spExp, spP := name("max"), name("argmax"), name("argmax_f"), name("shifted"), name("exp"), name("sum"), name("p"), name("space"), name("space_exp"), name("space_p")
	axes2 := intsAttr("axes", 2)
	keep := intAttr("keepdims", 1)
	nodes := []*node{
		{op: "TopK", inputs: []string{logits}, outputs: []string{mx, am}, attrs: [][]byte{intAttr("axis", 2), intAttr("k", 1)}},
		{op: "Cast", inputs: []string{am}, outputs: []string{amf}, attrs: [][]byte{intAttr("to", dataTypeFloat)}},
		{op: "Sub", inputs: []string{logits, mx}, outputs: []string{shifted}},
		{op: "Exp", inputs: []string{shifted}, outputs: []string{ex}},
		{op: "ReduceSum", inputs: []string{ex}, outputs: []string{sum}, attrs: [][]byte{axes2, keep}},
		{op: "Reciprocal", inputs: []string{sum}, outputs: []string{inv}},
		{op: "Slice", inputs: []string{shifted}, outputs: []string{sp}, attrs: [][]byte{intsAttr("starts", space), intsAttr("ends", space+1), axes2}},
		{op: "Exp", inputs: []string{sp}, outputs: []string{spExp}},
		{op: "Mul", inputs: []string{spExp, inv}, outputs: []string{spP}},
		{op: "Concat", inputs: []string{amf, inv, spP}, outputs: []string{CTCTopOutput}, attrs: [][]byte{intAttr("axis", 2)}},
	}
	for _, n := range nodes {
		n.name = n.outputs[0]
	}
	g.replace(sm, nodes...)
	g.fields[outs[0]] = bytesField(graphOutput, outputValueInfo(CTCTopOutput, 3))
	g.dropUnusedConstants()
	return g.encode(nil), nil
}

// outputValueInfo encodes a ValueInfoProto: a float tensor [batch, steps, last].
func outputValueInfo(name string, last int64) []byte {
	dim := func(param string, value int64) []byte {
		var d []byte
		if param != "" {
			d = protowire.AppendTag(d, 2, protowire.BytesType)
			d = protowire.AppendString(d, param)
		} else {
			d = protowire.AppendTag(d, 1, protowire.VarintType)
			d = protowire.AppendVarint(d, uint64(value))
		}
		return d
	}
	var shape []byte
	for _, d := range [][]byte{dim("batch", 0), dim("steps", 0), dim("", last)} {
		shape = protowire.AppendTag(shape, 1, protowire.BytesType)
		shape = protowire.AppendBytes(shape, d)
	}
	var tensor []byte
	tensor = protowire.AppendTag(tensor, 1, protowire.VarintType)
	tensor = protowire.AppendVarint(tensor, dataTypeFloat)
	tensor = protowire.AppendTag(tensor, 2, protowire.BytesType)
	tensor = protowire.AppendBytes(tensor, shape)
	var typ []byte
	typ = protowire.AppendTag(typ, 1, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tensor)
	var vi []byte
	vi = protowire.AppendTag(vi, 1, protowire.BytesType)
	vi = protowire.AppendString(vi, name)
	vi = protowire.AppendTag(vi, 2, protowire.BytesType)
	vi = protowire.AppendBytes(vi, typ)
	return vi
}

// intAttr encodes an AttributeProto of type INT.
func intAttr(name string, v int64) []byte {
	var b []byte
	b = protowire.AppendTag(b, attrName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, attrI, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(v))
	b = protowire.AppendTag(b, attrType, protowire.VarintType)
	b = protowire.AppendVarint(b, attrTypeInt)
	return b
}

// intsAttr encodes an AttributeProto of type INTS.
func intsAttr(name string, vs ...int64) []byte {
	var b []byte
	b = protowire.AppendTag(b, attrName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	for _, v := range vs {
		b = protowire.AppendTag(b, attrInts, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v))
	}
	b = protowire.AppendTag(b, attrType, protowire.VarintType)
	b = protowire.AppendVarint(b, attrTypeInts)
	return b
}
