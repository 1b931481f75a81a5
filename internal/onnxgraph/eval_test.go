package onnxgraph_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file reads ONNX models back and runs them: a decoder of the fields the tests look at and a
// float32 interpreter of the operators the rewrites read and write, written from the ONNX operator
// specifications (broadcasting as numpy's). It is slow and small on purpose: it exists to say
// whether two small graphs compute the same.

const (
	fGraphInitializer = 5
	fAttrFloats       = 7
	fTensorFloatData  = 4
	fTensorInt64Data  = 7
)

// field is one protobuf field of a message.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	bytes []byte // length-delimited payload
	u     uint64 // varint or fixed32 value
}

func fields(t testing.TB, b []byte) []field {
	t.Helper()
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.u = uint64(v)
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			t.Fatalf("bad field %d: %v", num, protowire.ParseError(n))
		}
		out = append(out, f)
		b = b[n:]
	}
	return out
}

// varints reads a repeated varint field, packed or not.
func varints(t testing.TB, f field) []int64 {
	if f.typ == protowire.VarintType {
		return []int64{int64(f.u)}
	}
	var out []int64
	for p := f.bytes; len(p) > 0; {
		v, n := protowire.ConsumeVarint(p)
		if n < 0 {
			t.Fatal("bad packed varint")
		}
		out = append(out, int64(v))
		p = p[n:]
	}
	return out
}

// floats reads a repeated float field, packed or not.
func floats(f field) []float32 {
	if f.typ == protowire.Fixed32Type {
		return []float32{math.Float32frombits(uint32(f.u))}
	}
	var out []float32
	for p := f.bytes; len(p) >= 4; p = p[4:] {
		out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(p)))
	}
	return out
}

func decodeTensor(t testing.TB, b []byte) tensor {
	t.Helper()
	var x tensor
	var dtype uint64 = typeFloat
	var raw []byte
	for _, f := range fields(t, b) {
		switch f.num {
		case fTensorDims:
			x.dims = append(x.dims, varints(t, f)...)
		case fTensorDataType:
			dtype = f.u
		case fTensorFloatData:
			x.data = append(x.data, floats(f)...)
		case fTensorInt64Data:
			x.ints = append(x.ints, varints(t, f)...)
		case fTensorRawData:
			raw = f.bytes
		}
	}
	switch dtype {
	case typeFloat:
		for p := raw; len(p) >= 4; p = p[4:] {
			x.data = append(x.data, math.Float32frombits(binary.LittleEndian.Uint32(p)))
		}
	case typeInt64:
		for p := raw; len(p) >= 8; p = p[8:] {
			x.ints = append(x.ints, int64(binary.LittleEndian.Uint64(p)))
		}
		if x.ints == nil {
			x.ints = []int64{}
		}
	default:
		t.Fatalf("tensor of data type %d", dtype)
	}
	return x
}

// attrValue is an attribute read back.
type attrValue struct {
	f    float32
	i    int64
	ints []int64
	t    *tensor
	set  bool
}

type node struct {
	op      string
	inputs  []string
	outputs []string
	attrs   map[string]attrValue
}

type graph struct {
	nodes        []node
	initializers map[string]tensor
	outputs      []string
}

func modelFields(t testing.TB, m []byte) (graphBytes []byte, opset uint64) {
	t.Helper()
	for _, f := range fields(t, m) {
		switch f.num {
		case fModelGraph:
			graphBytes = f.bytes
		case fModelOpset:
			domain, version := "", uint64(0)
			for _, g := range fields(t, f.bytes) {
				switch g.num {
				case fOpsetDomain:
					domain = string(g.bytes)
				case fOpsetVersion:
					version = g.u
				}
			}
			if domain == "" {
				opset = version
			}
		}
	}
	return graphBytes, opset
}

func graphOf(t testing.TB, m []byte) []byte {
	g, _ := modelFields(t, m)
	return g
}

func opsetOf(t testing.TB, m []byte) uint64 {
	_, v := modelFields(t, m)
	return v
}

func parseGraph(t testing.TB, m []byte) graph {
	t.Helper()
	g := graph{initializers: map[string]tensor{}}
	for _, f := range fields(t, graphOf(t, m)) {
		switch f.num {
		case fGraphNode:
			n := node{attrs: map[string]attrValue{}}
			for _, nf := range fields(t, f.bytes) {
				switch nf.num {
				case fNodeInput:
					n.inputs = append(n.inputs, string(nf.bytes))
				case fNodeOutput:
					n.outputs = append(n.outputs, string(nf.bytes))
				case fNodeOpType:
					n.op = string(nf.bytes)
				case fNodeAttribute:
					name, v := "", attrValue{set: true}
					for _, af := range fields(t, nf.bytes) {
						switch af.num {
						case fAttrName:
							name = string(af.bytes)
						case fAttrF:
							v.f = math.Float32frombits(uint32(af.u))
						case fAttrI:
							v.i = int64(af.u)
						case fAttrInts:
							v.ints = append(v.ints, varints(t, af)...)
						case fAttrFloats:
						case fAttrT:
							x := decodeTensor(t, af.bytes)
							v.t = &x
						}
					}
					n.attrs[name] = v
				}
			}
			g.nodes = append(g.nodes, n)
		case fGraphInitializer:
			name := ""
			for _, tf := range fields(t, f.bytes) {
				if tf.num == fTensorName {
					name = string(tf.bytes)
				}
			}
			g.initializers[name] = decodeTensor(t, f.bytes)
		case fGraphOutput:
			for _, vf := range fields(t, f.bytes) {
				if vf.num == fValueInfoName {
					g.outputs = append(g.outputs, string(vf.bytes))
				}
			}
		}
	}
	return g
}

func countNodes(t testing.TB, m []byte) int { return len(parseGraph(t, m).nodes) }

// evalModel runs the model's graph on inputs and returns every graph output.
func evalModel(t testing.TB, m []byte, inputs map[string]tensor) map[string]tensor {
	t.Helper()
	g := parseGraph(t, m)
	values := map[string]tensor{}
	for k, v := range g.initializers {
		values[k] = v
	}
	for k, v := range inputs {
		values[k] = v
	}
	for _, n := range g.nodes {
		in := make([]tensor, len(n.inputs))
		present := make([]bool, len(n.inputs))
		for i, name := range n.inputs {
			if name == "" {
				continue
			}
			v, ok := values[name]
			if !ok {
				t.Fatalf("%s reads %q before anything writes it", n.op, name)
			}
			in[i], present[i] = v, true
		}
		out, err := run(n, in, present)
		if err != nil {
			t.Fatalf("%s: %v", n.op, err)
		}
		values[n.outputs[0]] = out
	}
	res := map[string]tensor{}
	for _, o := range g.outputs {
		res[o] = values[o]
	}
	return res
}

func run(n node, in []tensor, present []bool) (tensor, error) {
	arg := func(i int) (tensor, bool) {
		if i < len(in) && present[i] {
			return in[i], true
		}
		return tensor{}, false
	}
	switch n.op {
	case "Constant":
		return *n.attrs["value"].t, nil
	case "Identity":
		return in[0], nil
	case "Add":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a + b })
	case "Sub":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a - b })
	case "Mul":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a * b })
	case "Div":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a / b })
	case "Clip":
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		if a := n.attrs["min"]; a.set {
			lo = a.f
		}
		if a := n.attrs["max"]; a.set {
			hi = a.f
		}
		if v, ok := arg(1); ok {
			lo = v.data[0]
		}
		if v, ok := arg(2); ok {
			hi = v.data[0]
		}
		return apply(in[0], func(x float64) float64 { return min(max(x, float64(lo)), float64(hi)) }), nil
	case "HardSigmoid":
		alpha, beta := float32(0.2), float32(0.5)
		if a := n.attrs["alpha"]; a.set {
			alpha = a.f
		}
		if a := n.attrs["beta"]; a.set {
			beta = a.f
		}
		return apply(in[0], func(x float64) float64 { return max(0, min(1, float64(alpha)*x+float64(beta))) }), nil
	case "BatchNormalization":
		eps := float32(1e-5)
		if a := n.attrs["epsilon"]; a.set {
			eps = a.f
		}
		x, scale, bias, mean, variance := in[0], in[1], in[2], in[3], in[4]
		out := tensor{dims: x.dims, data: make([]float32, len(x.data))}
		c, inner := int(x.dims[1]), x.size()/int(x.dims[0])/int(x.dims[1])
		for i := range x.data {
			ch := i / inner % c
			v := float64(scale.data[ch])*(float64(x.data[i])-float64(mean.data[ch]))/math.Sqrt(float64(variance.data[ch])+float64(eps)) + float64(bias.data[ch])
			out.data[i] = float32(v)
		}
		return out, nil
	case "Conv":
		b, _ := arg(2)
		return conv(in[0], in[1], b, n.attrs)
	case "Unsqueeze":
		axes := n.attrs["axes"].ints
		if v, ok := arg(1); ok {
			axes = v.ints
		}
		dims := slices.Clone(in[0].dims)
		for _, a := range axes {
			dims = slices.Insert(dims, int(a), 1)
		}
		return tensor{dims: dims, data: in[0].data}, nil
	case "ReduceSum":
		axes := n.attrs["axes"].ints
		if v, ok := arg(1); ok {
			axes = v.ints
		}
		keep := int64(1)
		if a := n.attrs["keepdims"]; a.set {
			keep = a.i
		}
		return reduceSum(in[0], axes, keep != 0), nil
	}
	return tensor{}, fmt.Errorf("operator %s is not in the test interpreter", n.op)
}

func apply(x tensor, f func(float64) float64) tensor {
	out := tensor{dims: x.dims, data: make([]float32, len(x.data))}
	for i, v := range x.data {
		out.data[i] = float32(f(float64(v)))
	}
	return out
}

// strides of dims (row-major), with 0 for a dimension of size 1 so that it broadcasts.
func strides(dims []int64, rank int) []int {
	s := make([]int, rank)
	step := 1
	for i := rank - 1; i >= 0; i-- {
		j := i - (rank - len(dims))
		if j < 0 || dims[j] == 1 {
			continue
		}
		s[i] = step
		step *= int(dims[j])
	}
	return s
}

// broadcast applies f elementwise under numpy broadcasting.
func broadcast(a, b tensor, f func(x, y float64) float64) (tensor, error) {
	rank := max(len(a.dims), len(b.dims))
	dims := make([]int64, rank)
	for i := range rank {
		da, db := int64(1), int64(1)
		if j := i - (rank - len(a.dims)); j >= 0 {
			da = a.dims[j]
		}
		if j := i - (rank - len(b.dims)); j >= 0 {
			db = b.dims[j]
		}
		switch {
		case da == db || db == 1:
			dims[i] = da
		case da == 1:
			dims[i] = db
		default:
			return tensor{}, fmt.Errorf("shapes %v and %v do not broadcast", a.dims, b.dims)
		}
	}
	out := tensor{dims: dims}
	out.data = make([]float32, out.size())
	sa, sb := strides(a.dims, rank), strides(b.dims, rank)
	idx := make([]int, rank)
	for i := range out.data {
		ia, ib := 0, 0
		for k := range rank {
			ia += idx[k] * sa[k]
			ib += idx[k] * sb[k]
		}
		out.data[i] = float32(f(float64(a.data[ia]), float64(b.data[ib])))
		for k := rank - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < int(dims[k]) {
				break
			}
			idx[k] = 0
		}
	}
	return out, nil
}

// conv is a 2-D convolution, NCHW, with groups, strides, pads and dilations.
func conv(x, w, b tensor, attrs map[string]attrValue) (tensor, error) {
	if len(x.dims) != 4 || len(w.dims) != 4 {
		return tensor{}, fmt.Errorf("input %v, weights %v: only 2-D convolutions", x.dims, w.dims)
	}
	ints := func(name string, def ...int64) []int64 {
		if a := attrs[name]; a.set {
			return a.ints
		}
		return def
	}
	group := int64(1)
	if a := attrs["group"]; a.set {
		group = a.i
	}
	stride, dil, pad := ints("strides", 1, 1), ints("dilations", 1, 1), ints("pads", 0, 0, 0, 0)
	n, c, h, wd := x.dims[0], x.dims[1], x.dims[2], x.dims[3]
	m, cg, kh, kw := w.dims[0], w.dims[1], w.dims[2], w.dims[3]
	if cg*group != c {
		return tensor{}, fmt.Errorf("weights %v for %d channels in %d groups", w.dims, c, group)
	}
	oh := (h+pad[0]+pad[2]-dil[0]*(kh-1)-1)/stride[0] + 1
	ow := (wd+pad[1]+pad[3]-dil[1]*(kw-1)-1)/stride[1] + 1
	out := tensor{dims: []int64{n, m, oh, ow}}
	out.data = make([]float32, out.size())
	mg := m / group
	for in := range n {
		for o := range m {
			g := o / mg
			for y := range oh {
				for xo := range ow {
					var sum float64
					if b.data != nil {
						sum = float64(b.data[o])
					}
					for ci := range cg {
						for ky := range kh {
							iy := y*stride[0] - pad[0] + ky*dil[0]
							if iy < 0 || iy >= h {
								continue
							}
							for kx := range kw {
								ix := xo*stride[1] - pad[1] + kx*dil[1]
								if ix < 0 || ix >= wd {
									continue
								}
								xv := x.data[((in*c+g*cg+ci)*h+iy)*wd+ix]
								wv := w.data[((o*cg+ci)*kh+ky)*kw+kx]
								sum += float64(xv) * float64(wv)
							}
						}
					}
					out.data[((in*m+o)*oh+y)*ow+xo] = float32(sum)
				}
			}
		}
	}
	return out, nil
}

func reduceSum(x tensor, axes []int64, keep bool) tensor {
	rank := len(x.dims)
	reduced := make([]bool, rank)
	for _, a := range axes {
		if a < 0 {
			a += int64(rank)
		}
		reduced[a] = true
	}
	if len(axes) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	}
	var dims []int64
	for i, d := range x.dims {
		switch {
		case !reduced[i]:
			dims = append(dims, d)
		case keep:
			dims = append(dims, 1)
		}
	}
	out := tensor{dims: dims}
	out.data = make([]float32, out.size())
	idx := make([]int, rank)
	for i := range x.data {
		o := 0
		for k := range rank {
			if reduced[k] {
				continue
			}
			o = o*int(x.dims[k]) + idx[k]
		}
		out.data[o] += x.data[i]
		for k := rank - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < int(x.dims[k]) {
				break
			}
			idx[k] = 0
		}
	}
	return out
}
