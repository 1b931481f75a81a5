package extract

import (
	"slices"
)

// Strict Structured Outputs (OpenAI; vLLM and Ollama accept the same form) constrain the
// model's decoding to the schema, but only for a subset of JSON Schema in a fixed shape: every
// property required (an optional one is written as nullable instead), additionalProperties
// false on every object. The functions here decide whether a caller's schema fits that subset,
// derive the strict form, and undo the derivation on the answer.

// strictFormats are the formats strict mode accepts.
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// strictDropped are annotations strict mode may refuse; they do not change which answers are
// valid, so the strict form leaves them out (the prompt shows the same strict form).
var strictDropped = []string{"default", "examples", "$comment", "$schema"}

// strictable tells whether the strict form can express the schema at n exactly. root is true
// for the top-level schema.
func strictable(n *object, root bool) bool {
	_, hasType := n.get("type")
	_, hasAnyOf := n.get("anyOf")
	if !hasType && !hasAnyOf {
		return false // strict mode wants a type on every schema
	}
	if hasType && nonNullTypes(n) > 1 {
		return false // one type, optionally nullable; use anyOf for more
	}
	for _, k := range n.keys {
		v := n.vals[k]
		switch k {
		case "type", "required", "enum", "const", "description", "title", "pattern",
			"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
			"minItems", "maxItems":
		case "default", "examples", "$comment", "$schema":
		case "format":
			if f, _ := v.(string); !slices.Contains(strictFormats, f) {
				return false
			}
		case "properties":
			for _, p := range v.(*object).vals {
				if !strictable(p.(*object), false) {
					return false
				}
			}
		case "additionalProperties":
			if b, ok := v.(bool); !ok || b {
				return false // strict objects allow no other properties
			}
		case "items":
			if !strictable(v.(*object), false) {
				return false
			}
		case "anyOf":
			if root {
				return false
			}
			for _, b := range v.([]any) {
				if !strictable(b.(*object), false) {
					return false
				}
			}
		default: // minLength, maxLength, uniqueItems
			return false
		}
	}
	if hasTypeName(n, "object") && n.obj("properties") == nil {
		return false // a free-form object cannot be strict
	}
	if props := n.obj("properties"); props != nil {
		for name := range requiredSet(n) {
			if !props.has(name) {
				return false // required but undeclared: strict objects could never have it
			}
		}
	}
	if hasTypeName(n, "array") && n.obj("items") == nil {
		return false
	}
	return true
}

// strictSchema returns the strict form of a strictable schema: every object's properties all
// required, the ones that were optional made nullable, additionalProperties false. It builds new
// nodes and never changes n.
func strictSchema(n *object) *object {
	out := newObject()
	var names []any
	for _, k := range n.keys {
		v := n.vals[k]
		if slices.Contains(strictDropped, k) {
			continue
		}
		switch k {
		case "properties":
			props := v.(*object)
			req := requiredSet(n)
			np := newObject()
			for _, name := range props.keys {
				p := strictSchema(props.vals[name].(*object))
				if !req[name] {
					p = nullable(p)
				}
				np.set(name, p)
				names = append(names, name)
			}
			v = np
		case "items":
			v = strictSchema(v.(*object))
		case "anyOf":
			branches := v.([]any)
			nb := make([]any, len(branches))
			for i, b := range branches {
				nb[i] = strictSchema(b.(*object))
			}
			v = nb
		}
		out.set(k, v)
	}
	if out.obj("properties") != nil {
		if names == nil {
			names = []any{}
		}
		out.set("required", names)
		out.set("additionalProperties", false)
	}
	return out
}

// nullable returns s changed to accept null as well. s is a node of a derived schema, owned by
// the caller; shared values (enum arrays) are copied before they change.
func nullable(s *object) *object {
	if allowsNull(s) {
		return s
	}
	_, hasConst := s.get("const")
	if t, ok := s.get("type"); ok && !hasConst {
		switch t := t.(type) {
		case string:
			s.set("type", []any{t, "null"})
		case []any:
			s.set("type", append(slices.Clone(t), "null"))
		}
		if e, ok := s.get("enum"); ok {
			if e, ok := e.([]any); ok {
				s.set("enum", append(slices.Clone(e), nil))
			}
		}
		return s
	}
	null := newObject()
	null.set("type", "null")
	if a, ok := s.get("anyOf"); ok && !hasConst {
		if a, ok := a.([]any); ok {
			s.set("anyOf", append(slices.Clone(a), null))
			return s
		}
	}
	w := newObject()
	w.set("anyOf", []any{s, null})
	return w
}

// allowsNull tells whether null is valid against s as far as its type, enum, const and anyOf
// say; a schema that says nothing about them accepts null.
func allowsNull(s *object) bool {
	if t, ok := s.get("type"); ok {
		switch t := t.(type) {
		case string:
			if t != "null" {
				return false
			}
		case []any:
			if !slices.Contains(t, any("null")) {
				return false
			}
		}
	}
	if e, ok := s.get("enum"); ok {
		if e, ok := e.([]any); ok && !slices.Contains(e, nil) {
			return false
		}
	}
	if c, ok := s.get("const"); ok && c != nil {
		return false
	}
	if a, ok := s.get("anyOf"); ok {
		if a, ok := a.([]any); ok {
			return slices.ContainsFunc(a, func(b any) bool {
				bo, ok := b.(*object)
				return ok && allowsNull(bo)
			})
		}
	}
	return true
}

func nonNullTypes(n *object) int {
	switch t := n.vals["type"].(type) {
	case string:
		if t == "null" {
			return 0
		}
		return 1
	case []any:
		c := 0
		for _, x := range t {
			if x != "null" {
				c++
			}
		}
		return c
	}
	return 0
}

func hasTypeName(n *object, name string) bool {
	switch t := n.vals["type"].(type) {
	case string:
		return t == name
	case []any:
		return slices.Contains(t, any(name))
	}
	return false
}

func requiredSet(n *object) map[string]bool {
	req := map[string]bool{}
	if r, ok := n.get("required"); ok {
		if r, ok := r.([]any); ok {
			for _, x := range r {
				if s, ok := x.(string); ok {
					req[s] = true
				}
			}
		}
	}
	return req
}

// dropOptionalNulls removes from an answer the properties whose value is null where the
// caller's schema makes them optional and does not allow null: the strict form made the model
// write them, and for the caller's schema "absent" is what they mean. Nulls the caller's schema
// allows, and nulls for required properties, stay (the second is a validation error and a
// re-ask). Inside anyOf it follows the one branch that fits the value's kind, if exactly one
// does.
func dropOptionalNulls(s *object, v any) {
	switch v := v.(type) {
	case *object:
		s = branchFor(s, func(b *object) bool { return b.obj("properties") != nil || hasTypeName(b, "object") })
		if s == nil {
			return
		}
		props := s.obj("properties")
		if props == nil {
			return
		}
		req := requiredSet(s)
		for _, k := range slices.Clone(v.keys) {
			ps := props.obj(k)
			if ps == nil {
				continue
			}
			if v.vals[k] == nil && !req[k] && !allowsNull(ps) {
				v.del(k)
				continue
			}
			dropOptionalNulls(ps, v.vals[k])
		}
	case []any:
		s = branchFor(s, func(b *object) bool { return b.obj("items") != nil || hasTypeName(b, "array") })
		if s == nil {
			return
		}
		if items := s.obj("items"); items != nil {
			for _, e := range v {
				dropOptionalNulls(items, e)
			}
		}
	}
}

// branchFor returns s if it fits, or the only anyOf branch that fits, or nil.
func branchFor(s *object, fits func(*object) bool) *object {
	if fits(s) {
		return s
	}
	branches, _ := s.vals["anyOf"].([]any)
	var found *object
	for _, b := range branches {
		bo, ok := b.(*object)
		if !ok {
			continue
		}
		if c := branchFor(bo, fits); c != nil {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}
