package onnxgraph

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX protobuf field numbers this package reads and writes. Every other field is copied
// through byte for byte, so no ONNX schema has to be compiled in.
const (
	modelGraph    = 7  // ModelProto.graph
	modelMetadata = 14 // ModelProto.metadata_props (StringStringEntryProto: key 1, value 2)

	graphNode        = 1  // GraphProto.node
	graphInitializer = 5  // GraphProto.initializer
	graphInput       = 11 // GraphProto.input
	graphOutput      = 12 // GraphProto.output

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5
	nodeDomain    = 7
)

// field is one protobuf field: its number, wire type, payload (for length-delimited fields) and
// the raw bytes including the tag, so it can be copied through unchanged.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	value []byte
	raw   []byte
}

// bytesField is a length-delimited field number num holding value, with its raw bytes.
func bytesField(num protowire.Number, value []byte) field {
	raw := protowire.AppendTag(nil, num, protowire.BytesType)
	return field{num: num, typ: protowire.BytesType, value: value, raw: protowire.AppendBytes(raw, value)}
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

// node is a NodeProto: the fields the rewrites look at, decoded, and the original bytes so that a
// node nobody touched is written back exactly as it was read.
type node struct {
	raw     []byte // the NodeProto as read; nil for a node a rewrite created
	dirty   bool   // inputs, outputs or attributes changed: re-encode them
	op      string
	name    string
	domain  string
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
		case nodeInput:
			n.inputs = append(n.inputs, string(f.value))
		case nodeOutput:
			n.outputs = append(n.outputs, string(f.value))
		case nodeName:
			n.name = string(f.value)
		case nodeOpType:
			n.op = string(f.value)
		case nodeAttribute:
			n.attrs = append(n.attrs, f.value)
		case nodeDomain:
			n.domain = string(f.value)
		}
	}
	return n, nil
}

// encode writes the node. An untouched node is its original bytes; a changed one gets its current
// inputs, outputs and attributes and keeps every other field it was read with (doc strings,
// unknown fields).
func (n *node) encode() []byte {
	if n.raw != nil && !n.dirty {
		return n.raw
	}
	var b []byte
	for _, in := range n.inputs {
		b = protowire.AppendTag(b, nodeInput, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, o := range n.outputs {
		b = protowire.AppendTag(b, nodeOutput, protowire.BytesType)
		b = protowire.AppendString(b, o)
	}
	if n.raw == nil {
		b = protowire.AppendTag(b, nodeName, protowire.BytesType)
		b = protowire.AppendString(b, n.name)
		b = protowire.AppendTag(b, nodeOpType, protowire.BytesType)
		b = protowire.AppendString(b, n.op)
	} else {
		fs, _ := splitFields(n.raw) // parsed once already, cannot fail
		for _, f := range fs {
			if f.num != nodeInput && f.num != nodeOutput && f.num != nodeAttribute {
				b = append(b, f.raw...)
			}
		}
	}
	for _, a := range n.attrs {
		b = protowire.AppendTag(b, nodeAttribute, protowire.BytesType)
		b = protowire.AppendBytes(b, a)
	}
	return b
}

// graph is a model opened for rewriting: its nodes in order plus the indexes the rewrites need.
type graph struct {
	top    []field // the ModelProto's fields
	gi     int     // index in top of the graph field
	fields []field // the GraphProto's fields
	nodes  []*node

	producer  map[string]*node
	consumers map[string][]*node
	outputs   map[string]bool // graph outputs
	used      map[string]bool // every tensor name, to make new ones unique
	seq       int
}

func parseModel(model []byte) (*graph, error) {
	top, err := splitFields(model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	g := &graph{top: top, gi: -1}
	for i, f := range top {
		if f.num == modelGraph && f.typ == protowire.BytesType {
			g.gi = i
		}
	}
	if g.gi < 0 {
		return nil, errors.New("model has no graph")
	}
	if g.fields, err = splitFields(top[g.gi].value); err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	for _, f := range g.fields {
		if f.num == graphNode && f.typ == protowire.BytesType {
			n, err := parseNode(f.value)
			if err != nil {
				return nil, fmt.Errorf("node %d: %w", len(g.nodes), err)
			}
			g.nodes = append(g.nodes, n)
		}
	}
	g.index()
	return g, nil
}

// index rebuilds the producer and consumer maps after nodes were added, removed or rewired.
func (g *graph) index() {
	g.producer = map[string]*node{}
	g.consumers = map[string][]*node{}
	g.outputs = map[string]bool{}
	g.used = map[string]bool{}
	for _, n := range g.nodes {
		for _, o := range n.outputs {
			g.producer[o] = n
			g.used[o] = true
		}
		for _, in := range n.inputs {
			g.consumers[in] = append(g.consumers[in], n)
			g.used[in] = true
		}
	}
	for _, f := range g.fields {
		if (f.num == graphOutput || f.num == graphInput || f.num == graphInitializer) && f.typ == protowire.BytesType {
			name, ok := valueInfoName(f.value) // TensorProto.name is field 8, ValueInfoProto.name 1
			if f.num == graphInitializer {
				name, ok = initializerName(f.value)
			}
			if ok {
				g.used[name] = true
				if f.num == graphOutput {
					g.outputs[name] = true
				}
			}
		}
	}
}

// uses is how many times tensor name is read: by nodes, and once more if it is a graph output.
func (g *graph) uses(name string) int {
	n := len(g.consumers[name])
	if g.outputs[name] {
		n++
	}
	return n
}

// newName returns a tensor or node name based on base that the model does not use yet.
func (g *graph) newName(base string) string {
	for {
		g.seq++
		name := base + "." + strconv.Itoa(g.seq)
		if !g.used[name] {
			g.used[name] = true
			return name
		}
	}
}

// replace puts the nodes add where old was. Nodes stay in topological order as long as add only
// reads tensors produced before old.
func (g *graph) replace(old *node, add ...*node) {
	i := indexOf(g.nodes, old)
	g.nodes = append(g.nodes[:i], append(add, g.nodes[i+1:]...)...)
}

// insertBefore puts the nodes add right before at.
func (g *graph) insertBefore(at *node, add ...*node) {
	i := indexOf(g.nodes, at)
	g.nodes = append(g.nodes[:i], append(add, g.nodes[i:]...)...)
}

// remove drops nodes from the graph.
func (g *graph) remove(ns ...*node) {
	drop := map[*node]bool{}
	for _, n := range ns {
		drop[n] = true
	}
	out := g.nodes[:0]
	for _, n := range g.nodes {
		if !drop[n] {
			out = append(out, n)
		}
	}
	g.nodes = out
}

// has reports whether n is still part of the graph.
func (g *graph) has(n *node) bool { return slices.Contains(g.nodes, n) }

func indexOf(ns []*node, n *node) int {
	for i, m := range ns {
		if m == n {
			return i
		}
	}
	panic("onnxgraph: node not in graph")
}

// dropUnusedConstants removes Constant nodes nothing reads any more.
func (g *graph) dropUnusedConstants() {
	g.index()
	var dead []*node
	for _, n := range g.nodes {
		if n.op == "Constant" && len(n.outputs) == 1 && g.uses(n.outputs[0]) == 0 {
			dead = append(dead, n)
		}
	}
	g.remove(dead...)
	g.index()
}

// encode writes the model back: every field as it was except the graph's nodes, and the metadata
// entries when meta is not nil.
func (g *graph) encode(meta []metadataEntry) []byte {
	var gb []byte
	for _, n := range g.nodes {
		gb = protowire.AppendTag(gb, graphNode, protowire.BytesType)
		gb = protowire.AppendBytes(gb, n.encode())
	}
	for _, f := range g.fields {
		if f.num != graphNode {
			gb = append(gb, f.raw...)
		}
	}
	var out []byte
	for i, f := range g.top {
		switch {
		case i == g.gi:
			out = protowire.AppendTag(out, modelGraph, protowire.BytesType)
			out = protowire.AppendBytes(out, gb)
		case f.num == modelMetadata && meta != nil:
			// replaced below
		default:
			out = append(out, f.raw...)
		}
	}
	for _, e := range meta {
		var m []byte
		m = protowire.AppendTag(m, 1, protowire.BytesType)
		m = protowire.AppendString(m, e.Key)
		m = protowire.AppendTag(m, 2, protowire.BytesType)
		m = protowire.AppendString(m, e.Value)
		out = protowire.AppendTag(out, modelMetadata, protowire.BytesType)
		out = protowire.AppendBytes(out, m)
	}
	return out
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

// initializerName reads TensorProto.name (field 8).
func initializerName(b []byte) (string, bool) {
	fs, err := splitFields(b)
	if err != nil {
		return "", false
	}
	for _, f := range fs {
		if f.num == 8 && f.typ == protowire.BytesType {
			return string(f.value), true
		}
	}
	return "", false
}
