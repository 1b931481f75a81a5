package onnxgraph

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// CTCTopOutput is the name of the output CTCTop gives the recognizer.
const CTCTopOutput = "ctc_top"

// CTCTopWidth is the number of values per time step of CTCTop's output: the winning class, its
// probability, the space class's probability, the second and third classes, and their
// probabilities.
const CTCTopWidth = 7

// CTCTop replaces a CTC recognizer's final Softmax over C classes ([N,T,C] probabilities) by the
// values per time step a CTC decoder reads ([N,T,CTCTopWidth], class indexes as floats): the
// winning class, its probability and the probability of class space, then the runners-up, the
// second and third classes and their probabilities. The runners-up are what a lexicon reads to
// correct a word the winners misspell (a typewriter's e read as c: the e is second at that step).
// The probabilities are the softmax's own, computed from the logits as exp(l_k − max)/Σexp(l − max);
// only the three largest, the normalizer and one column are kept instead of writing (and copying,
// and scanning) all C. One TopK(k=3) finds the three largest logits and their classes in a single
// pass: ArgMax and ReduceMax, which it replaces, took twice its time (ArgMax alone 2.8 % of the
// int8 recognizer's), and TopK, like ArgMax here, takes the lowest class of equals.
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
	top, cls, clsf, mx, shifted, ex, sum, inv := name("top"), name("class"), name("class_f"), name("max"), name("shifted"), name("exp"), name("sum"), name("p")
	sp, spExp, spP := name("space"), name("space_exp"), name("space_p")
	topShifted, topExp, topP := name("top_shifted"), name("top_exp"), name("top_p")
	first, rest, restP := name("first"), name("rest"), name("rest_p")
	axes2 := intsAttr("axes", 2)
	keep := intAttr("keepdims", 1)
	slice := func(in, out string, from, to int64) *node {
		return &node{op: "Slice", inputs: []string{in}, outputs: []string{out}, attrs: [][]byte{intsAttr("starts", from), intsAttr("ends", to), axes2}}
	}
	nodes := []*node{
		{op: "TopK", inputs: []string{logits}, outputs: []string{top, cls}, attrs: [][]byte{intAttr("axis", 2), intAttr("k", 3)}},
		{op: "Cast", inputs: []string{cls}, outputs: []string{clsf}, attrs: [][]byte{intAttr("to", dataTypeFloat)}},
		slice(top, mx, 0, 1),
		{op: "Sub", inputs: []string{logits, mx}, outputs: []string{shifted}},
		{op: "Exp", inputs: []string{shifted}, outputs: []string{ex}},
		{op: "ReduceSum", inputs: []string{ex}, outputs: []string{sum}, attrs: [][]byte{axes2, keep}},
		{op: "Reciprocal", inputs: []string{sum}, outputs: []string{inv}},
		slice(shifted, sp, space, space+1),
		{op: "Exp", inputs: []string{sp}, outputs: []string{spExp}},
		{op: "Mul", inputs: []string{spExp, inv}, outputs: []string{spP}},
		{op: "Sub", inputs: []string{top, mx}, outputs: []string{topShifted}},
		{op: "Exp", inputs: []string{topShifted}, outputs: []string{topExp}},
		{op: "Mul", inputs: []string{topExp, inv}, outputs: []string{topP}},
		slice(clsf, first, 0, 1),
		slice(clsf, rest, 1, 3),
		slice(topP, restP, 1, 3),
		{op: "Concat", inputs: []string{first, inv, spP, rest, restP}, outputs: []string{CTCTopOutput}, attrs: [][]byte{intAttr("axis", 2)}},
	}
	for _, n := range nodes {
		n.name = n.outputs[0]
	}
	g.replace(sm, nodes...)
	g.fields[outs[0]] = bytesField(graphOutput, outputValueInfo(CTCTopOutput, CTCTopWidth))
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
