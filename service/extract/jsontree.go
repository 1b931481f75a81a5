package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// object is a decoded JSON object that remembers the order of its keys.
//
// Order matters twice here: a schema is shown to the model, and constrained decoders generate the
// properties in schema order, so the caller's order is the order the model fills the fields in;
// and the answer is returned to the caller in the order the model wrote it. map[string]any would
// sort both alphabetically.
//
// Values in a tree are *object, []any, string, json.Number, bool or nil.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) has(k string) bool {
	_, ok := o.vals[k]
	return ok
}

// set adds k at the end, or replaces its value in place.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// obj returns the value of k if it is an object.
func (o *object) obj(k string) *object {
	v, _ := o.vals[k].(*object)
	return v
}

// str returns the value of k if it is a string.
func (o *object) str(k string) (string, bool) {
	v, ok := o.vals[k].(string)
	return v, ok
}

// MarshalJSON keeps the key order, so an *object can go wherever encoding/json is used.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, o, "", ""); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// errTooDeep is returned by decodeTree when the nesting passes its limit.
var errTooDeep = errors.New("nested too deeply")

// decodeTree decodes exactly one JSON value, keeping key order, numbers as json.Number, and
// rejecting duplicate keys (which JSON leaves undefined and encoding/json silently resolves to
// the last one) and nesting deeper than maxNesting arrays and objects.
func decodeTree(data []byte, maxNesting int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0, maxNesting)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// token reads the next token; the input ending inside a value is io.ErrUnexpectedEOF.
func token(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, io.ErrUnexpectedEOF
	}
	return tok, err
}

func decodeValue(dec *json.Decoder, depth, maxNesting int) (any, error) {
	tok, err := token(dec)
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxNesting {
		return nil, errTooDeep
	}
	switch d {
	case '{':
		o := newObject()
		for dec.More() {
			kt, err := token(dec)
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key is %v, not a string", kt)
			}
			if o.has(k) {
				return nil, fmt.Errorf("duplicate key %q", k)
			}
			v, err := decodeValue(dec, depth+1, maxNesting)
			if err != nil {
				return nil, err
			}
			o.set(k, v)
		}
		if _, err := token(dec); err != nil { // '}'
			return nil, err
		}
		return o, nil
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1, maxNesting)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := token(dec); err != nil { // ']'
			return nil, err
		}
		return arr, nil
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// encodeTree writes a tree as JSON: compact when indent is empty. Unlike encoding/json it leaves
// <, > and & alone, since the text is read by a model and a person, not embedded in HTML.
func encodeTree(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v, "", indent); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any, prefix, indent string) error {
	next := prefix + indent
	newline := func(p string) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(p)
		}
	}
	switch x := v.(type) {
	case *object:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(next)
			writeString(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			if err := writeJSON(b, x.vals[k], next, indent); err != nil {
				return err
			}
		}
		newline(prefix)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		// Short lists of names and values (type, required, enum) stay on one line.
		flat := indent != "" && !slices.ContainsFunc(x, func(e any) bool {
			switch e.(type) {
			case *object, []any:
				return true
			}
			return false
		})
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
				if flat {
					b.WriteByte(' ')
				}
			}
			if !flat {
				newline(next)
			}
			if err := writeJSON(b, e, next, indent); err != nil {
				return err
			}
		}
		if !flat {
			newline(prefix)
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("extract: cannot encode %T", v)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// plain converts a tree into the map[string]any form the JSON Schema validator expects.
func plain(v any) any {
	switch x := v.(type) {
	case *object:
		m := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			m[k] = plain(x.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// pointerToken escapes a property name for a JSON Pointer (RFC 6901), as used in error paths.
func pointerToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
