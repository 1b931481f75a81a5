package onnxgraph

import (
	"encoding/binary"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// TensorProto and AttributeProto field numbers and enum values used here.
const (
	tensorDims      = 1
	tensorDataType  = 2
	tensorFloatData = 4
	tensorName      = 8
	tensorRawData   = 9

	dataTypeFloat = 1 // TensorProto.FLOAT

	attrName   = 1
	attrF      = 2
	attrI      = 3
	attrT      = 5
	attrInts   = 8
	attrType   = 20
	attrString = 4

	attrTypeFloat  = 1
	attrTypeInt    = 2
	attrTypeTensor = 4
	attrTypeInts   = 7
)

// floatTensor is a float32 TensorProto decoded: its shape and values.
type floatTensor struct {
	dims []int64
	data []float32
}

// decodeFloatTensor reads a float32 TensorProto held inline (float_data or raw_data). Other types
// and externally stored data are reported as not ok.
func decodeFloatTensor(b []byte) (floatTensor, bool) {
	fs, err := splitFields(b)
	if err != nil {
		return floatTensor{}, false
	}
	var t floatTensor
	dtype := uint64(0)
	for _, f := range fs {
		switch {
		case f.num == tensorDims && f.typ == protowire.VarintType:
			d, _ := protowire.ConsumeVarint(f.raw[protowire.SizeTag(tensorDims):])
			t.dims = append(t.dims, int64(d))
		case f.num == tensorDims && f.typ == protowire.BytesType: // packed
			for p := f.value; len(p) > 0; {
				d, n := protowire.ConsumeVarint(p)
				if n < 0 {
					return floatTensor{}, false
				}
				t.dims = append(t.dims, int64(d))
				p = p[n:]
			}
		case f.num == tensorDataType && f.typ == protowire.VarintType:
			dtype, _ = protowire.ConsumeVarint(f.raw[protowire.SizeTag(tensorDataType):])
		case f.num == tensorFloatData && f.typ == protowire.BytesType: // packed
			for p := f.value; len(p) >= 4; p = p[4:] {
				t.data = append(t.data, math.Float32frombits(binary.LittleEndian.Uint32(p)))
			}
		case f.num == tensorFloatData && f.typ == protowire.Fixed32Type:
			v, _ := protowire.ConsumeFixed32(f.raw[protowire.SizeTag(tensorFloatData):])
			t.data = append(t.data, math.Float32frombits(v))
		case f.num == tensorRawData && f.typ == protowire.BytesType:
			if len(f.value)%4 != 0 {
				return floatTensor{}, false
			}
			for p := f.value; len(p) >= 4; p = p[4:] {
				t.data = append(t.data, math.Float32frombits(binary.LittleEndian.Uint32(p)))
			}
		}
	}
	if dtype != dataTypeFloat || int64(len(t.data)) != t.size() {
		return floatTensor{}, false
	}
	return t, true
}

// size is the number of values the shape holds.
func (t floatTensor) size() int64 {
	n := int64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

// encode writes the tensor as a TensorProto named name, values in raw_data (little-endian).
func (t floatTensor) encode(name string) []byte {
	var b []byte
	for _, d := range t.dims {
		b = protowire.AppendTag(b, tensorDims, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, tensorDataType, protowire.VarintType)
	b = protowire.AppendVarint(b, dataTypeFloat)
	b = protowire.AppendTag(b, tensorName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	raw := make([]byte, 4*len(t.data))
	for i, v := range t.data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	b = protowire.AppendTag(b, tensorRawData, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	return b
}

// constValue returns the float32 tensor a Constant node holds in its "value" attribute.
func constValue(n *node) (floatTensor, bool) {
	if n == nil || n.op != "Constant" || n.domain != "" {
		return floatTensor{}, false
	}
	a, ok := n.attr("value")
	if !ok {
		return floatTensor{}, false
	}
	for _, f := range a {
		if f.num == attrT && f.typ == protowire.BytesType {
			return decodeFloatTensor(f.value)
		}
	}
	return floatTensor{}, false
}

// setConstValue makes Constant node n hold t.
func setConstValue(n *node, t floatTensor) {
	n.attrs = [][]byte{tensorAttr("value", t.encode(n.outputs[0]))}
	n.dirty = true
}

// newConstant returns a Constant node producing tensor name with value t.
func newConstant(name string, t floatTensor) *node {
	n := &node{op: "Constant", name: name, outputs: []string{name}}
	setConstValue(n, t)
	return n
}

// constScalar returns the value of a Constant node holding one float32, of shape [] or [1].
func constScalar(n *node) (float32, bool) {
	t, ok := constValue(n)
	if !ok || len(t.data) != 1 || len(t.dims) > 1 {
		return 0, false
	}
	return t.data[0], true
}

// isConst reports whether n is a Constant node holding one float32 equal to want.
func isConst(n *node, want float32) bool {
	v, ok := constScalar(n)
	return ok && v == want
}

// attr returns the named attribute's fields.
func (n *node) attr(name string) ([]field, bool) {
	for _, a := range n.attrs {
		fs, err := splitFields(a)
		if err != nil {
			continue
		}
		for _, f := range fs {
			if f.num == attrName && string(f.value) == name {
				return fs, true
			}
		}
	}
	return nil, false
}

// dropAttr removes the named attribute.
func (n *node) dropAttr(name string) {
	n.attrs = slices.DeleteFunc(n.attrs, func(a []byte) bool {
		fs, err := splitFields(a)
		if err != nil {
			return false
		}
		for _, f := range fs {
			if f.num == attrName {
				return string(f.value) == name
			}
		}
		return false
	})
}

// attrFloat reads a FLOAT attribute.
func (n *node) attrFloat(name string) (float32, bool) {
	fs, ok := n.attr(name)
	if !ok {
		return 0, false
	}
	for _, f := range fs {
		if f.num == attrF && f.typ == protowire.Fixed32Type {
			v, _ := protowire.ConsumeFixed32(f.raw[protowire.SizeTag(attrF):])
			return math.Float32frombits(v), true
		}
	}
	return 0, false
}

// attrInt reads an INT attribute, or def when it is absent.
func (n *node) attrInt(name string, def int64) int64 {
	fs, ok := n.attr(name)
	if !ok {
		return def
	}
	for _, f := range fs {
		if f.num == attrI && f.typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(f.raw[protowire.SizeTag(attrI):])
			return int64(v)
		}
	}
	return def
}

// attrInts reads an INTS attribute (nil when absent).
func (n *node) attrInts(name string) []int64 {
	fs, ok := n.attr(name)
	if !ok {
		return nil
	}
	var out []int64
	for _, f := range fs {
		switch {
		case f.num == attrInts && f.typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(f.raw[protowire.SizeTag(attrInts):])
			out = append(out, int64(v))
		case f.num == attrInts && f.typ == protowire.BytesType:
			for p := f.value; len(p) > 0; {
				v, k := protowire.ConsumeVarint(p)
				if k < 0 {
					return nil
				}
				out = append(out, int64(v))
				p = p[k:]
			}
		}
	}
	return out
}

// attrString reads a STRING attribute ("" when absent).
func (n *node) attrString(name string) string {
	fs, ok := n.attr(name)
	if !ok {
		return ""
	}
	for _, f := range fs {
		if f.num == attrString && f.typ == protowire.BytesType {
			return string(f.value)
		}
	}
	return ""
}

// floatAttr encodes an AttributeProto of type FLOAT.
func floatAttr(name string, v float32) []byte {
	var b []byte
	b = protowire.AppendTag(b, attrName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, attrF, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, math.Float32bits(v))
	b = protowire.AppendTag(b, attrType, protowire.VarintType)
	b = protowire.AppendVarint(b, attrTypeFloat)
	return b
}

// tensorAttr encodes an AttributeProto of type TENSOR holding the TensorProto bytes t.
func tensorAttr(name string, t []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, attrName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, attrT, protowire.BytesType)
	b = protowire.AppendBytes(b, t)
	b = protowire.AppendTag(b, attrType, protowire.VarintType)
	b = protowire.AppendVarint(b, attrTypeTensor)
	return b
}

// filled returns a tensor of shape dims holding v everywhere.
func filled(v float32, dims ...int64) floatTensor {
	t := floatTensor{dims: dims}
	t.data = make([]float32, t.size())
	for i := range t.data {
		t.data[i] = v
	}
	return t
}
