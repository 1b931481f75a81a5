// Package onnxgraph rewrites the PaddleOCR ONNX exports into equivalent graphs that ONNX Runtime
// runs faster, and stamps the result so a runtime can tell a prepared model from an original.
//
// It edits the protobuf wire format directly (the field numbers are in graph.go), so no ONNX schema
// is compiled in and every field a rewrite does not touch is copied through byte for byte. Every
// rewrite keeps what the model computes; outputs change only by float rounding, and only standard
// ONNX operators at the model's own opset are written, so the result loads in any ONNX runtime
// (ONNX Runtime embedded, Triton's ONNX Runtime backend, on CPU or GPU).
//
// The rewrites exist because of how paddle2onnx writes PP-LCNet-style networks and how ONNX
// Runtime's CPU provider runs them. Its convolutions work in a blocked channel layout (NCHWc);
// every operator it cannot run in that layout forces a conversion out of it and back, a full pass
// over the activation each way. paddle2onnx writes each hard-swish as four elementwise operators
// and each learnable affine block (a scalar scale and bias after a convolution or an activation)
// as a Mul and an Add, none of which run blocked: in the PP-OCRv4 recognizer, these and the layout
// conversions around them took a quarter of the time.
package onnxgraph

import (
	"slices"
)

// Rewrites counts what Optimize changed.
type Rewrites struct {
	HardSwish  int // Add+Clip+Mul+Div activations now HardSigmoid+Mul
	IntoConv   int // scale-and-bias blocks folded into the convolution before them
	IntoNext   int // scale-and-bias blocks folded into the 1×1 convolution after them
	BatchNorm  int // scale-and-bias blocks after an activation written as one BatchNormalization
	Commuted   int // Mul/Add with the constant moved second
	Scalars    int // [1]-shaped constants made scalars
	Biases     int // scalar biases after a Conv made per-channel
	Removed    int // Constant nodes nothing read any more
	NodesAfter int // nodes in the rewritten graph
}

// Total is the number of changes of every kind.
func (r Rewrites) Total() int {
	return r.HardSwish + r.IntoConv + r.IntoNext + r.BatchNorm + r.Commuted + r.Scalars + r.Biases
}

// Optimize rewrites a PaddleOCR ONNX export into a form ONNX Runtime runs faster without changing
// what it computes (outputs differ only by float rounding):
//
//   - hard-swish x·clip(x+3, 0, 6)/6, which paddle2onnx writes as Add, Clip, Mul and Div (opsets
//     9 and 11 have no HardSwish), becomes x·HardSigmoid(x) with alpha 1/6 and beta 1/2: two
//     nodes instead of four, which ONNX Runtime fuses into the convolution before them;
//   - a scalar scale and bias (Mul, Add) right after a convolution is folded into the
//     convolution's weights and bias;
//   - a scalar scale and bias after an activation is folded into the next convolution when that
//     is a 1×1 convolution without padding (exact: it is linear and sees no padded border), and
//     is otherwise written as a BatchNormalization over the channels, which ONNX Runtime turns
//     into a blocked-layout depthwise 1×1 convolution instead of leaving the layout twice;
//   - what remains of the older rewrites: constants of Mul and Add moved second, [1]-shaped
//     constants feeding only Mul and Add made scalars, and scalar biases after a convolution made
//     per-channel, the shapes ONNX Runtime's own Conv+Mul and Conv+Add fusions accept.
//
// It returns the rewritten model and what changed; a model with nothing to rewrite (for one, a
// model Optimize already wrote) is returned as it was, so the rewrite is idempotent.
func Optimize(model []byte) ([]byte, Rewrites, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, Rewrites{}, err
	}
	var rw Rewrites
	rw.HardSwish = g.hardSwish()
	rw.IntoConv = g.foldAffineIntoConv()
	rw.IntoNext = g.foldAffineIntoNextConv()
	rw.BatchNorm = g.affineAsBatchNorm()
	rw.Commuted = g.commuteConstants()
	rw.Scalars = g.scalarConstants()
	rw.Biases = g.channelBiases()
	if rw.Total() == 0 {
		return model, Rewrites{NodesAfter: len(g.nodes)}, nil
	}
	before := len(g.nodes)
	g.dropUnusedConstants()
	rw.Removed = before - len(g.nodes)
	rw.NodesAfter = len(g.nodes)
	return g.encode(nil), rw, nil
}

// hardSwish replaces Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6) by Mul(x, HardSigmoid(x)).
func (g *graph) hardSwish() int {
	fused := 0
	for _, div := range slices.Clone(g.nodes) {
		if div.op != "Div" || len(div.inputs) != 2 || len(div.outputs) != 1 || !isConst(g.producer[div.inputs[1]], 6) {
			continue
		}
		mul := g.producer[div.inputs[0]]
		if mul == nil || mul.op != "Mul" || len(mul.inputs) != 2 || g.uses(mul.outputs[0]) != 1 {
			continue
		}
		for k := range 2 {
			x, clipOut := mul.inputs[k], mul.inputs[1-k]
			clip := g.producer[clipOut]
			if clip == nil || clip.op != "Clip" || g.uses(clipOut) != 1 {
				continue
			}
			if lo, hi, ok := g.clipBounds(clip); !ok || lo != 0 || hi != 6 {
				continue
			}
			add := g.producer[clip.inputs[0]]
			if add == nil || add.op != "Add" || len(add.inputs) != 2 || g.uses(add.outputs[0]) != 1 {
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
			if !isConst(g.producer[three], 3) {
				continue
			}
			gate := g.newName(div.outputs[0] + ".hardsigmoid")
			hs := &node{op: "HardSigmoid", name: gate, inputs: []string{x}, outputs: []string{gate},
				attrs: [][]byte{floatAttr("alpha", 1.0/6), floatAttr("beta", 0.5)}}
			m := &node{op: "Mul", name: g.newName(div.outputs[0] + ".mul"), inputs: []string{x, gate}, outputs: []string{div.outputs[0]}}
			g.replace(div, hs, m)
			g.remove(add, clip, mul)
			g.index()
			fused++
			break
		}
	}
	return fused
}

// clipBounds reads a Clip's bounds: attributes up to opset 10, constant inputs from opset 11.
func (g *graph) clipBounds(clip *node) (lo, hi float32, ok bool) {
	if len(clip.inputs) == 3 {
		lo, ok1 := constScalar(g.producer[clip.inputs[1]])
		hi, ok2 := constScalar(g.producer[clip.inputs[2]])
		return lo, hi, ok1 && ok2
	}
	if len(clip.inputs) != 1 {
		return 0, 0, false
	}
	lo, ok1 := clip.attrFloat("min")
	hi, ok2 := clip.attrFloat("max")
	return lo, hi, ok1 && ok2
}

// affine is a scalar scale and bias, Add(Mul(x, a), b), as paddle2onnx writes a learnable affine
// block (either operand order).
type affine struct {
	mul, add *node
	x        string // the input being scaled
	a, b     float32
}

// affineAt reports whether add ends a scalar scale-and-bias block.
func (g *graph) affineAt(add *node) (affine, bool) {
	if add.op != "Add" || add.domain != "" || len(add.inputs) != 2 || len(add.outputs) != 1 {
		return affine{}, false
	}
	for k := range 2 {
		mulOut, bias := add.inputs[k], add.inputs[1-k]
		b, ok := constScalar(g.producer[bias])
		mul := g.producer[mulOut]
		if !ok || mul == nil || mul.op != "Mul" || mul.domain != "" || len(mul.inputs) != 2 || g.uses(mulOut) != 1 {
			continue
		}
		for j := range 2 {
			x, scale := mul.inputs[j], mul.inputs[1-j]
			a, ok := constScalar(g.producer[scale])
			if !ok || g.producer[x] != nil && g.producer[x].op == "Constant" {
				continue
			}
			return affine{mul: mul, add: add, x: x, a: a, b: b}, true
		}
	}
	return affine{}, false
}

// affines lists every scale-and-bias block of the graph.
func (g *graph) affines() []affine {
	var out []affine
	for _, n := range g.nodes {
		if af, ok := g.affineAt(n); ok {
			out = append(out, af)
		}
	}
	return out
}

// conv describes a Conv node whose weights and bias are constants only it reads.
type conv struct {
	n       *node
	w       *node // Constant holding the weights [M, C/group, kh, kw]
	bias    *node // Constant holding the bias [M], or nil when the Conv has none
	weights floatTensor
	biasT   floatTensor
}

// ownConv returns n as a conv when it is a float Conv whose weights (and bias) are constants read
// by it alone, so they can be changed without touching anything else.
func (g *graph) ownConv(n *node) (conv, bool) {
	if n == nil || n.op != "Conv" || n.domain != "" || len(n.inputs) < 2 || len(n.inputs) > 3 || len(n.outputs) != 1 {
		return conv{}, false
	}
	c := conv{n: n, w: g.producer[n.inputs[1]]}
	var ok bool
	if c.weights, ok = constValue(c.w); !ok || len(c.weights.dims) != 4 || g.uses(n.inputs[1]) != 1 {
		return conv{}, false
	}
	if len(n.inputs) == 3 && n.inputs[2] != "" {
		c.bias = g.producer[n.inputs[2]]
		if c.biasT, ok = constValue(c.bias); !ok || c.biasT.size() != c.weights.dims[0] || g.uses(n.inputs[2]) != 1 {
			return conv{}, false
		}
	}
	return c, true
}

// setBias gives the convolution the bias values (adding a bias input when it had none).
func (g *graph) setBias(c conv, values []float32) {
	t := floatTensor{dims: []int64{int64(len(values))}, data: values}
	if c.bias != nil {
		setConstValue(c.bias, t)
		return
	}
	name := g.newName(c.n.outputs[0] + ".bias")
	g.insertBefore(c.n, newConstant(name, t))
	c.n.inputs = append(c.n.inputs[:2], name)
	c.n.dirty = true
}

// foldAffineIntoConv folds y = a·Conv(x) + b into the convolution: weights·a, bias·a + b.
func (g *graph) foldAffineIntoConv() int {
	folded := 0
	for _, af := range g.affines() {
		if !g.has(af.add) || !g.has(af.mul) {
			continue
		}
		c, ok := g.ownConv(g.producer[af.x])
		if !ok || g.uses(af.x) != 1 {
			continue
		}
		m := c.weights.dims[0]
		w := c.weights
		for i := range w.data {
			w.data[i] *= af.a
		}
		setConstValue(c.w, w)
		bias := make([]float32, m)
		for o := range bias {
			if c.bias != nil {
				bias[o] = c.biasT.data[o]
			}
			bias[o] = bias[o]*af.a + af.b
		}
		g.setBias(c, bias)
		c.n.outputs[0] = af.add.outputs[0]
		c.n.dirty = true
		g.remove(af.mul, af.add)
		g.index()
		folded++
	}
	return folded
}

// foldAffineIntoNextConv folds a scale and bias whose only reader is a 1×1 convolution without
// padding into that convolution: Conv(W, a·x + b) = Conv(a·W, x) + b·ΣW. Padding would break the
// identity (padded zeros are not a·0 + b), so other convolutions are left alone.
func (g *graph) foldAffineIntoNextConv() int {
	folded := 0
	for _, af := range g.affines() {
		if !g.has(af.add) || !g.has(af.mul) {
			continue
		}
		out := af.add.outputs[0]
		readers := g.consumers[out]
		if g.uses(out) != 1 || len(readers) != 1 || readers[0].inputs[0] != out {
			continue
		}
		c, ok := g.ownConv(readers[0])
		if !ok || !pointwise(c) {
			continue
		}
		w := c.weights
		m, perOut := w.dims[0], int(w.size()/w.dims[0])
		bias := make([]float32, m)
		for o := range int(m) {
			var sum float64
			for i := o * perOut; i < (o+1)*perOut; i++ {
				sum += float64(w.data[i])
				w.data[i] *= af.a
			}
			if c.bias != nil {
				bias[o] = c.biasT.data[o]
			}
			bias[o] += float32(float64(af.b) * sum)
		}
		setConstValue(c.w, w)
		g.setBias(c, bias)
		c.n.inputs[0] = af.x
		c.n.dirty = true
		g.remove(af.mul, af.add)
		g.index()
		folded++
	}
	return folded
}

// pointwise reports whether a convolution is 1×1, ungrouped and unpadded.
func pointwise(c conv) bool {
	d := c.weights.dims
	if d[2] != 1 || d[3] != 1 || c.n.attrInt("group", 1) != 1 {
		return false
	}
	switch c.n.attrString("auto_pad") {
	case "", "NOTSET", "VALID":
	default:
		return false
	}
	for _, p := range c.n.attrInts("pads") {
		if p != 0 {
			return false
		}
	}
	return true
}

// affineAsBatchNorm writes each remaining scale and bias on a convolution's activations as
// BatchNormalization(x, scale a, bias b, mean 0, variance 1, epsilon 0): the same a·x + b, as
// one operator that ONNX Runtime keeps in the blocked layout.
func (g *graph) affineAsBatchNorm() int {
	written := 0
	for _, af := range g.affines() {
		if !g.has(af.add) || !g.has(af.mul) {
			continue
		}
		channels, ok := g.channels(af.x, 8)
		if !ok {
			continue
		}
		base := af.add.outputs[0]
		names := [4]string{g.newName(base + ".bn_scale"), g.newName(base + ".bn_bias"), g.newName(base + ".bn_mean"), g.newName(base + ".bn_var")}
		values := [4]float32{af.a, af.b, 0, 1}
		var add []*node
		for i, name := range names {
			add = append(add, newConstant(name, filled(values[i], channels)))
		}
		add = append(add, &node{op: "BatchNormalization", name: g.newName(base + ".bn"),
			inputs:  []string{af.x, names[0], names[1], names[2], names[3]},
			outputs: []string{base},
			attrs:   [][]byte{floatAttr("epsilon", 0)}})
		g.replace(af.add, add...)
		g.remove(af.mul)
		g.index()
		written++
	}
	return written
}

// channels finds the channel count of an NCHW tensor by following elementwise operators back to
// the convolution that made it (at most depth steps).
func (g *graph) channels(name string, depth int) (int64, bool) {
	for range depth {
		p := g.producer[name]
		if p == nil || p.domain != "" {
			return 0, false
		}
		switch p.op {
		case "Conv":
			if w, ok := constValue(g.producer[p.inputs[1]]); ok && len(w.dims) == 4 {
				return w.dims[0], true
			}
			return 0, false
		case "HardSigmoid", "Relu", "Sigmoid", "Clip", "BatchNormalization":
			name = p.inputs[0]
		case "Mul", "Add", "Div", "Sub":
			if len(p.inputs) != 2 {
				return 0, false
			}
			// Follow the operand that is not a constant (both are activations of the same shape
			// in x·HardSigmoid(x); a broadcast [N,C,1,1] gate keeps the channels too).
			name = p.inputs[0]
			if q := g.producer[name]; q != nil && q.op == "Constant" {
				name = p.inputs[1]
			}
		default:
			return 0, false
		}
	}
	return 0, false
}

// commuteConstants puts the constant operand of Mul and Add second. PP-OCRv4's learnable affine
// blocks may write Mul(scale, conv(x)), and ONNX Runtime folds a per-tensor scale or bias into the
// preceding convolution only when the constant is the second operand. Both operators commute.
func (g *graph) commuteConstants() int {
	commuted := 0
	for _, n := range g.nodes {
		if (n.op == "Mul" || n.op == "Add") && n.domain == "" && len(n.inputs) == 2 {
			a, b := g.producer[n.inputs[0]], g.producer[n.inputs[1]]
			if a != nil && a.op == "Constant" && (b == nil || b.op != "Constant") {
				n.inputs[0], n.inputs[1] = n.inputs[1], n.inputs[0]
				n.dirty = true
				commuted++
			}
		}
	}
	if commuted > 0 {
		g.index()
	}
	return commuted
}

// scalarConstants makes one-element constants that only feed Mul and Add true scalars.
// Broadcasting treats shape [1] and shape [] alike, but ONNX Runtime's Conv+Mul and Conv+Add
// fusions accept a scalar or a per-channel tensor only.
func (g *graph) scalarConstants() int {
	scalars := 0
	for _, n := range g.nodes {
		if n.op != "Constant" || len(n.outputs) != 1 || g.outputs[n.outputs[0]] {
			continue
		}
		t, ok := constValue(n)
		if !ok || len(t.data) != 1 || len(t.dims) != 1 {
			continue
		}
		readers := g.consumers[n.outputs[0]]
		elementwise := len(readers) > 0
		for _, r := range readers {
			elementwise = elementwise && (r.op == "Mul" || r.op == "Add") && r.domain == ""
		}
		if elementwise {
			setConstValue(n, floatTensor{data: t.data})
			scalars++
		}
	}
	return scalars
}

// channelBiases makes a scalar bias added right after a convolution (and its folded scale) a
// per-channel [C,1,1] tensor: ONNX Runtime folds an Add into the convolution's bias only in that
// shape.
func (g *graph) channelBiases() int {
	biases := 0
	for _, add := range g.nodes {
		if add.op != "Add" || add.domain != "" || len(add.inputs) != 2 || g.uses(add.inputs[1]) != 1 {
			continue
		}
		src := g.producer[add.inputs[0]]
		if src != nil && src.op == "Mul" && len(src.inputs) == 2 && g.uses(src.outputs[0]) == 1 {
			if _, ok := constScalar(g.producer[src.inputs[1]]); ok {
				src = g.producer[src.inputs[0]]
			}
		}
		if src == nil || src.op != "Conv" || len(src.inputs) < 2 || g.uses(src.outputs[0]) != 1 {
			continue
		}
		w, ok := constValue(g.producer[src.inputs[1]])
		bias := g.producer[add.inputs[1]]
		v, isScalar := constScalar(bias)
		if !ok || len(w.dims) != 4 || !isScalar {
			continue
		}
		setConstValue(bias, filled(v, w.dims[0], 1, 1))
		biases++
	}
	return biases
}
