package onnxgraph

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Range is the calibrated value range of a tensor.
type Range struct{ Lo, Hi float32 }

// ConvRanges are the calibrated ranges of one convolution's input and output.
type ConvRanges struct {
	Input, Output Range
}

// QuantizeConvs rewrites the 1×1 convolutions named (by their input tensor) in ranges into
// static int8 form with standard operators: QuantizeLinear (uint8 activations, scale and zero
// point from the input's calibrated range) → QLinearConv (int8 weights quantized symmetrically per
// output channel, int32 bias) → DequantizeLinear (the output's calibrated range). ONNX Runtime's
// CPU provider runs QLinearConv u8s8 with VNNI (or AVX2) integer kernels. The model is raised to
// opset 14 (QuantizeLinear and QLinearConv need 10; HardSwish, which a hard-swish after a
// DequantizeLinear becomes, needs 14; see raiseOpset for what that rewrites). It returns the
// model and how many convolutions it quantized; a convolution named but not found, or not 1×1,
// is an error.
func QuantizeConvs(model []byte, ranges map[string]ConvRanges) ([]byte, int, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, 0, err
	}
	if err := g.raiseOpset(14); err != nil {
		return nil, 0, err
	}
	done := map[string]bool{}
	for _, n := range slices.Clone(g.nodes) {
		c, ok := g.ownConv(n)
		if !ok {
			continue
		}
		r, ok := ranges[n.inputs[0]]
		if !ok {
			continue
		}
		if !pointwise(c) {
			return nil, 0, fmt.Errorf("convolution reading %s is not 1×1", n.inputs[0])
		}
		g.quantizeConv(c, r)
		done[n.inputs[0]] = true
	}
	for name := range ranges {
		if !done[name] {
			return nil, 0, fmt.Errorf("no 1×1 convolution reads %s", name)
		}
	}
	g.hardSwishAfterDequantize()
	g.dropUnusedConstants()
	return g.encode(nil), len(done), nil
}

func (g *graph) quantizeConv(c conv, r ConvRanges) {
	n, w := c.n, c.weights
	m := int(w.dims[0])
	per := len(w.data) / m
	xs, xz := uint8Params(r.Input)
	ys, yz := uint8Params(r.Output)
	wq := make([]byte, len(w.data))
	ws := make([]float32, m)
	bq := make([]byte, 4*m)
	for o := range m {
		amax := float32(0)
		for _, v := range w.data[o*per : (o+1)*per] {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		ws[o] = max(amax/127, 1e-12)
		for i := o * per; i < (o+1)*per; i++ {
			wq[i] = byte(int8(max(-127, min(127, math.Round(float64(w.data[i]/ws[o]))))))
		}
		b := float32(0)
		if c.bias != nil {
			b = c.biasT.data[o]
		}
		binary.LittleEndian.PutUint32(bq[4*o:], uint32(int32(math.Round(float64(b/(xs*ws[o]))))))
	}
	base := n.outputs[0]
	name := func(s string) string { return g.newName(base + ".q_" + s) }
	xsN, xzN, wqN, wsN, wzN, ysN, yzN, bqN, xq, yq, dq := name("xs"), name("xz"), name("wq"), name("ws"), name("wz"), name("ys"), name("yz"), name("bq"), name("x"), name("y"), name("dq")
	const (
		uint8Type = 2
		int8Type  = 3
		int32Type = 6
	)
	add := []*node{
		newConstant(xsN, floatTensor{data: []float32{xs}}),
		rawConstant(xzN, uint8Type, nil, []byte{xz}),
		rawConstant(wqN, int8Type, w.dims, wq),
		newConstant(wsN, floatTensor{dims: []int64{int64(m)}, data: ws}),
		rawConstant(wzN, int8Type, []int64{int64(m)}, make([]byte, m)),
		newConstant(ysN, floatTensor{data: []float32{ys}}),
		rawConstant(yzN, uint8Type, nil, []byte{yz}),
		rawConstant(bqN, int32Type, []int64{int64(m)}, bq),
		{op: "QuantizeLinear", name: xq, inputs: []string{n.inputs[0], xsN, xzN}, outputs: []string{xq}},
		{op: "QLinearConv", name: yq, inputs: []string{xq, xsN, xzN, wqN, wsN, wzN, ysN, yzN, bqN}, outputs: []string{yq}, attrs: slices.Clone(n.attrs)},
		{op: "DequantizeLinear", name: dq, inputs: []string{yq, ysN, yzN}, outputs: []string{base}},
	}
	g.replace(n, add...)
	g.index()
}

// uint8Params is the scale and zero point mapping r (widened to hold 0) onto 0…255.
func uint8Params(r Range) (scale float32, zp uint8) {
	lo, hi := min(r.Lo, 0), max(r.Hi, 0)
	scale = max((hi-lo)/255, 1e-8)
	z := math.Round(float64(-lo / scale))
	return scale, uint8(max(0, min(255, z)))
}

// rawConstant is a Constant node holding a tensor of data type dtype with raw little-endian data.
func rawConstant(name string, dtype uint64, dims []int64, raw []byte) *node {
	var t []byte
	for _, d := range dims {
		t = protowire.AppendTag(t, tensorDims, protowire.VarintType)
		t = protowire.AppendVarint(t, uint64(d))
	}
	t = protowire.AppendTag(t, tensorDataType, protowire.VarintType)
	t = protowire.AppendVarint(t, dtype)
	t = protowire.AppendTag(t, tensorName, protowire.BytesType)
	t = protowire.AppendString(t, name)
	t = protowire.AppendTag(t, tensorRawData, protowire.BytesType)
	t = protowire.AppendBytes(t, raw)
	return &node{op: "Constant", name: name, outputs: []string{name}, attrs: [][]byte{tensorAttr("value", t)}}
}

// ConvTensors lists, for each 1×1 convolution of the model in graph order, its input and output
// tensor names (what calibration measures).
func ConvTensors(model []byte) ([][2]string, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, n := range g.nodes {
		if c, ok := g.ownConv(n); ok && pointwise(c) {
			out = append(out, [2]string{n.inputs[0], n.outputs[0]})
		}
	}
	return out, nil
}

// AddOutputs makes the named tensors graph outputs as well (float, shape unstated), so a runtime
// returns them: what calibration reads.
func AddOutputs(model []byte, names []string) ([]byte, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		var tensor []byte
		tensor = protowire.AppendTag(tensor, 1, protowire.VarintType) // TypeProto.Tensor.elem_type
		tensor = protowire.AppendVarint(tensor, dataTypeFloat)
		var typ []byte
		typ = protowire.AppendTag(typ, 1, protowire.BytesType) // TypeProto.tensor_type
		typ = protowire.AppendBytes(typ, tensor)
		var vi []byte
		vi = protowire.AppendTag(vi, 1, protowire.BytesType) // ValueInfoProto.name
		vi = protowire.AppendString(vi, name)
		vi = protowire.AppendTag(vi, 2, protowire.BytesType) // ValueInfoProto.type
		vi = protowire.AppendBytes(vi, typ)
		g.fields = append(g.fields, bytesField(graphOutput, vi))
	}
	return g.encode(nil), nil
}

// hardSwishAfterDequantize replaces Mul(x, HardSigmoid(x)) by one HardSwish (opset 14) where x
// is a DequantizeLinear's output, and returns how many it replaced. ONNX Runtime gives each
// DequantizeLinear one consumer (it copies one that has two), so the two-node form dequantized
// the tensor twice; HardSwish reads it once (6 % of the int8 recognizer's time). Where x comes
// from a float convolution the two-node form stays: ONNX Runtime fuses it into the convolution,
// and replacing those measured no faster.
func (g *graph) hardSwishAfterDequantize() int {
	n := 0
	for _, mul := range slices.Clone(g.nodes) {
		if mul.op != "Mul" || len(mul.inputs) != 2 || len(mul.outputs) != 1 {
			continue
		}
		for k := range 2 {
			x, gate := mul.inputs[k], mul.inputs[1-k]
			hs := g.producer[gate]
			if hs == nil || hs.op != "HardSigmoid" || hs.inputs[0] != x || g.uses(gate) != 1 {
				continue
			}
			if a, ok := hs.attrFloat("alpha"); !ok || math.Abs(float64(a)-1.0/6) > 1e-6 {
				continue
			}
			if b, ok := hs.attrFloat("beta"); !ok || b != 0.5 {
				continue
			}
			if p := g.producer[x]; p == nil || p.op != "DequantizeLinear" {
				continue
			}
			g.replace(mul, &node{op: "HardSwish", name: g.newName(mul.outputs[0] + ".hardswish"), inputs: []string{x}, outputs: mul.outputs})
			g.remove(hs)
			g.index()
			n++
			break
		}
	}
	return n
}
