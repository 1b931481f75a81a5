package onnxgraph

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// MetadataEntry is one ModelProto.metadata_props entry. ONNX Runtime exposes them as the model's
// custom metadata map, so a runtime can read them without parsing the graph.
type MetadataEntry struct {
	Key, Value string
}

type metadataEntry = MetadataEntry

// Metadata returns a model's metadata_props in file order.
func Metadata(model []byte) ([]MetadataEntry, error) {
	top, err := splitFields(model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	var out []MetadataEntry
	for _, f := range top {
		if f.num != modelMetadata || f.typ != protowire.BytesType {
			continue
		}
		fs, err := splitFields(f.value)
		if err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		var e MetadataEntry
		for _, kv := range fs {
			switch {
			case kv.num == 1 && kv.typ == protowire.BytesType:
				e.Key = string(kv.value)
			case kv.num == 2 && kv.typ == protowire.BytesType:
				e.Value = string(kv.value)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// SetMetadata returns the model with the given metadata entries set: an existing entry with the
// same key is replaced, other entries are kept in order, new keys are appended. The graph is not
// touched.
func SetMetadata(model []byte, entries ...MetadataEntry) ([]byte, error) {
	g, err := parseModel(model)
	if err != nil {
		return nil, err
	}
	meta, err := Metadata(model)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		replaced := false
		for i := range meta {
			if meta[i].Key == e.Key {
				meta[i].Value, replaced = e.Value, true
			}
		}
		if !replaced {
			meta = append(meta, e)
		}
	}
	if meta == nil {
		meta = []MetadataEntry{}
	}
	return g.encode(meta), nil
}
