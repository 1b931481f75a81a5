package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Limits bound a caller's schema. The schema goes into every prompt and every response format,
// and is compiled per request, so its size is a cost on the model's context and on the server.
// Zero fields take the defaults.
type Limits struct {
	// MaxBytes bounds the schema's JSON text, and the schema once its $refs are expanded
	// (default 64 KiB).
	MaxBytes int
	// MaxDepth bounds how deep the innermost schema sits: the top-level schema is at depth 1, and
	// each step into properties, items, additionalProperties or an anyOf branch adds one
	// (default 10).
	MaxDepth int
	// MaxProperties bounds the number of property definitions in the whole schema (default 200).
	MaxProperties int
}

// Default limits.
const (
	DefaultMaxSchemaBytes = 64 << 10
	DefaultMaxSchemaDepth = 10
	DefaultMaxProperties  = 200
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxSchemaBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxSchemaDepth
	}
	if l.MaxProperties <= 0 {
		l.MaxProperties = DefaultMaxProperties
	}
	return l
}

// Schema is a checked, compiled JSON Schema for the answer. It is immutable and safe for
// concurrent use.
type Schema struct {
	name string
	// doc is the caller's schema with its local $refs expanded. Answers are validated against it.
	doc       *object
	validator *jsonschema.Schema
	// strict tells whether the schema could be turned into the strict form of
	// Structured Outputs; send is that strict form, or doc itself when it could not.
	strict bool
	send   json.RawMessage // compact, for the response format
	pretty string          // indented, for the prompt
}

// Name is the name the schema is sent under in the response format: the template's name, or
// the caller's "title" reduced to the characters OpenAI accepts, or "extraction".
func (s *Schema) Name() string { return s.name }

// Strict tells whether the schema is sent with strict: true. See [ParseSchema].
func (s *Schema) Strict() bool { return s.strict }

// ParseSchema checks a caller's JSON Schema and compiles it. Errors wrap [ErrInvalidSchema] and
// say, for a person, what to change.
//
// A usable schema is a JSON object whose top level has "type": "object" and "properties". It
// may use these keywords, which cover what extraction needs and what validators and constrained
// decoders agree on:
//
//   - structure: type (a name or an array of names, so ["string", "null"] makes a value
//     nullable), properties, required, additionalProperties, items (one schema), anyOf;
//   - values: enum, const, format, pattern, minLength, maxLength, minimum, maximum,
//     exclusiveMinimum, exclusiveMaximum, multipleOf, minItems, maxItems, uniqueItems;
//   - annotations: description, title, default, examples, $comment;
//   - at the top level only: $schema (a json-schema.org draft), and $defs or definitions with
//     local references "$ref": "#/$defs/Name" anywhere below, which are expanded in place
//     (recursive references are refused: the answer's nesting must be bounded).
//
// Anything else (oneOf, allOf, not, if/then/else, patternProperties, remote $ref, $id, …) is
// refused rather than ignored, so a caller never believes a constraint holds that nobody
// checks. Formats are asserted, not just annotations: "format": "date" means the answer must be
// an RFC 3339 date. Patterns use Go's RE2 syntax (no lookaround).
//
// The schema is sent strict (see [Schema.Strict]) when it only uses what strict Structured
// Outputs supports: every schema has a type or anyOf, objects list their properties and allow
// no others, arrays have items, no minLength, maxLength or uniqueItems, formats from
// OpenAI's list. The strict form makes every property required and adds null to the type of
// those that were optional; answers are still validated against the caller's schema, after
// removing the properties the strict form forced the model to write as null.
func ParseSchema(raw []byte, lim Limits) (*Schema, error) {
	return parseSchema(raw, lim, "")
}

func parseSchema(raw []byte, lim Limits, name string) (*Schema, error) {
	lim = lim.withDefaults()
	if len(raw) > lim.MaxBytes {
		return nil, invalidf("the schema is %d bytes; the limit is %d", len(raw), lim.MaxBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, invalidf("the schema is empty")
	}
	// Each schema level costs at most two levels of JSON nesting (properties → name → schema);
	// the rest is slack for enum and const values.
	tree, err := decodeTree(raw, 2*lim.MaxDepth+16)
	if errors.Is(err, errTooDeep) {
		return nil, invalidf("the schema is nested too deeply; the limit is %d levels of schemas", lim.MaxDepth)
	}
	if err != nil {
		// The parser's errors quote the schema (a duplicate key, a stray token): say what is
		// wrong without them.
		return nil, invalidf("the schema is not valid JSON (or repeats a key in an object)")
	}
	root, ok := tree.(*object)
	if !ok {
		return nil, invalidf("the schema must be a JSON object with \"type\": \"object\", not %s", kindOf(tree))
	}

	in := inliner{limit: lim.MaxBytes}
	if err := in.collectDefs(root); err != nil {
		return nil, err
	}
	expanded, err := in.schema(root, "", nil)
	if err != nil {
		return nil, err
	}
	doc := expanded.(*object)

	if t, _ := doc.str("type"); t != "object" || doc.obj("properties") == nil {
		return nil, invalidf("the top level of the schema must be an object schema: \"type\": \"object\" with \"properties\"")
	}
	w := walker{lim: lim}
	if err := w.schema(doc, "", 1); err != nil {
		return nil, err
	}

	validator, err := compile(doc)
	if err != nil {
		return nil, err
	}
	s := &Schema{name: name, doc: doc, validator: validator, strict: strictable(doc, true)}
	if s.name == "" {
		s.name = schemaName(doc)
	}
	send := doc
	if s.strict {
		send = strictSchema(doc)
	}
	if s.send, err = encodeTree(send, ""); err != nil {
		return nil, err
	}
	if len(s.send) > lim.MaxBytes {
		return nil, invalidf("the schema is too big once its $ref references are expanded (%d bytes; the limit is %d)", len(s.send), lim.MaxBytes)
	}
	pretty, err := encodeTree(send, "  ")
	if err != nil {
		return nil, err
	}
	s.pretty = string(pretty)
	return s, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidSchema, fmt.Sprintf(format, args...))
}

func kindOf(v any) string {
	switch v.(type) {
	case *object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// where names a place in the schema for an error message.
// where says where in the schema something is, as a path of JSON Schema's keywords. The names
// the caller chose (of properties, of definitions) are not repeated back: each stands as
// <name>, so that no error carries the caller's words.
func where(path string) string {
	if path == "" {
		return "at the top level"
	}
	segs := strings.Split(path, "/")
	for i := 1; i < len(segs); i++ {
		switch segs[i-1] {
		case "properties", "$defs", "definitions":
			segs[i] = "<name>"
		}
		if !knownKeyword(segs[i]) && segs[i] != "<name>" && !digitsOnly(segs[i]) && segs[i] != "" {
			segs[i] = "<name>"
		}
	}
	return "at " + strings.Join(segs, "/")
}

func digitsOnly(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// knownKeyword reports whether k is a keyword of JSON Schema (2020-12 and the drafts before it,
// and OpenAPI's nullable): words of the standard, which an error may name.
func knownKeyword(k string) bool {
	if schemaKeywords[k] || keywordHints[k] != "" {
		return true
	}
	switch k {
	case "not", "if", "then", "else", "dependentSchemas", "dependentRequired", "dependencies",
		"contains", "minContains", "maxContains", "patternProperties", "propertyNames",
		"unevaluatedItems", "unevaluatedProperties", "minProperties", "maxProperties",
		"$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
		"$vocabulary", "$ref", "additionalItems", "contentEncoding", "contentMediaType",
		"contentSchema", "deprecated", "readOnly", "writeOnly":
		return true
	}
	return false
}

// Keywords: what each does for the checks below.
var (
	// schemaKeywords may appear in any schema.
	schemaKeywords = map[string]bool{
		"type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "anyOf": true, "enum": true, "const": true, "format": true, "pattern": true,
		"minLength": true, "maxLength": true, "minimum": true, "maximum": true,
		"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
		"minItems": true, "maxItems": true, "uniqueItems": true,
		"description": true, "title": true, "default": true, "examples": true, "$comment": true,
	}
	// hints say what to do instead of a keyword that is refused.
	keywordHints = map[string]string{
		"nullable":    `use a type array such as ["string", "null"]`,
		"oneOf":       "use anyOf",
		"allOf":       "merge the schemas into one",
		"$id":         "remove it; the schema must be self-contained",
		"$defs":       "put $defs at the top level of the schema",
		"definitions": "put definitions at the top level of the schema",
		"$schema":     "put $schema at the top level of the schema",
		"prefixItems": "use items with one schema",
	}
	// schemaTypes are the JSON Schema type names.
	schemaTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}
)

// walker checks keywords, depth and the number of properties of an expanded schema.
type walker struct {
	lim   Limits
	props int
}

func (w *walker) schema(v any, path string, depth int) error {
	if depth > w.lim.MaxDepth {
		return invalidf("the schema is nested too deeply (%s is %d levels deep; the limit is %d)", path, depth, w.lim.MaxDepth)
	}
	n, ok := v.(*object)
	if !ok {
		return invalidf("%s: a schema must be a JSON object, not %s", where(path), kindOf(v))
	}
	for _, k := range n.keys {
		val := n.vals[k]
		switch {
		case k == "$schema" && path == "":
			if s, ok := val.(string); !ok || !strings.Contains(s, "json-schema.org/") {
				return invalidf("$schema must name a json-schema.org draft, such as \"https://json-schema.org/draft/2020-12/schema\"")
			}
			continue
		case !schemaKeywords[k]:
			// A keyword of JSON Schema's own vocabulary is named; anything else is the
			// caller's own word, and is not repeated back.
			msg := fmt.Sprintf("%s: an unsupported keyword", where(path))
			if knownKeyword(k) {
				msg = fmt.Sprintf("%s: unsupported keyword %q", where(path), k)
			}
			if h := keywordHints[k]; h != "" {
				msg += "; " + h
			}
			return invalidf("%s (see the documentation of /ocr-json for the supported keywords)", msg)
		}
		var err error
		switch k {
		case "type":
			err = checkType(val, path)
		case "properties":
			props, ok := val.(*object)
			if !ok {
				return invalidf("%s: properties must be an object", where(path))
			}
			w.props += len(props.keys)
			if w.props > w.lim.MaxProperties {
				return invalidf("the schema has too many properties (the limit is %d in all)", w.lim.MaxProperties)
			}
			for _, name := range props.keys {
				if err := w.schema(props.vals[name], path+"/properties/"+pointerToken(name), depth+1); err != nil {
					return err
				}
			}
		case "items":
			if _, ok := val.([]any); ok {
				return invalidf("%s: items must be one schema; tuple forms are not supported", where(path))
			}
			err = w.schema(val, path+"/items", depth+1)
		case "additionalProperties":
			if _, ok := val.(bool); !ok {
				err = w.schema(val, path+"/additionalProperties", depth+1)
			}
		case "anyOf":
			branches, ok := val.([]any)
			if !ok || len(branches) == 0 {
				return invalidf("%s: anyOf must be a non-empty array of schemas", where(path))
			}
			for i, b := range branches {
				if err := w.schema(b, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1); err != nil {
					return err
				}
			}
		case "required":
			req, ok := val.([]any)
			if !ok {
				return invalidf("%s: required must be an array of property names", where(path))
			}
			for _, r := range req {
				if _, ok := r.(string); !ok {
					return invalidf("%s: required must be an array of property names", where(path))
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkType(v any, path string) error {
	names, ok := v.([]any)
	if !ok {
		names = []any{v}
	}
	if len(names) == 0 {
		return invalidf("%s: type must not be an empty array", where(path))
	}
	for _, t := range names {
		s, ok := t.(string)
		if !ok || !slices.Contains(schemaTypes, s) {
			return invalidf("%s: type must be one of %s (or an array of them)", where(path), strings.Join(schemaTypes, ", "))
		}
	}
	return nil
}

// inliner expands local references (#/$defs/Name, #/definitions/Name) in place. Expansion is
// schema-aware: it only looks for $ref where a schema can stand (properties, items,
// additionalProperties, anyOf), never inside enum or const data or under a property that
// happens to be named "$ref". It counts the bytes it produces, so a few small definitions that
// refer to each other many times cannot expand into a huge schema.
type inliner struct {
	defs  map[string]*object // "#/$defs/Name" → schema
	limit int
	size  int
	refs  int
}

func (in *inliner) collectDefs(root *object) error {
	in.defs = map[string]*object{}
	for _, key := range []string{"$defs", "definitions"} {
		v, ok := root.get(key)
		if !ok {
			continue
		}
		defs, ok := v.(*object)
		if !ok {
			return invalidf("%s must be an object of schemas", key)
		}
		for _, name := range defs.keys {
			d, ok := defs.vals[name].(*object)
			if !ok {
				return invalidf("every entry of %s must be a schema object", key)
			}
			in.defs["#/"+key+"/"+pointerToken(name)] = d
		}
	}
	return nil
}

// refAnnotations may stand beside a $ref; they replace the referenced schema's.
var refAnnotations = []string{"description", "title", "default", "examples", "$comment"}

func (in *inliner) schema(v any, path string, stack []string) (any, error) {
	n, ok := v.(*object)
	if !ok {
		return v, nil // the walker reports it
	}
	if ref, ok := n.get("$ref"); ok {
		return in.ref(n, ref, path, stack)
	}
	out := newObject()
	in.size += 2
	for _, k := range n.keys {
		val := n.vals[k]
		if path == "" && (k == "$defs" || k == "definitions") {
			continue
		}
		in.size += len(k) + 4
		var err error
		switch k {
		case "properties":
			if props, ok := val.(*object); ok {
				np := newObject()
				for _, name := range props.keys {
					in.size += len(name) + 4
					e, err := in.schema(props.vals[name], path+"/properties/"+pointerToken(name), stack)
					if err != nil {
						return nil, err
					}
					np.set(name, e)
				}
				val = np
			}
		case "items", "additionalProperties":
			val, err = in.schema(val, path+"/"+k, stack)
		case "anyOf":
			if branches, ok := val.([]any); ok {
				nb := make([]any, len(branches))
				for i, b := range branches {
					if nb[i], err = in.schema(b, fmt.Sprintf("%s/anyOf/%d", path, i), stack); err != nil {
						return nil, err
					}
				}
				val = nb
			}
		default:
			if in.refs > 0 { // data is shared, not copied; count it only where it repeats
				b, _ := encodeTree(val, "")
				in.size += len(b)
			}
		}
		if err != nil {
			return nil, err
		}
		out.set(k, val)
	}
	if in.refs > 0 && in.size > in.limit {
		return nil, invalidf("the schema is too big once its $ref references are expanded (the limit is %d bytes)", in.limit)
	}
	return out, nil
}

func (in *inliner) ref(n *object, ref any, path string, stack []string) (any, error) {
	s, ok := ref.(string)
	if !ok {
		return nil, invalidf("%s: $ref must be a string", where(path))
	}
	key := s
	if u, err := url.PathUnescape(s); err == nil {
		key = u
	}
	def, ok := in.defs[key]
	if !ok {
		if strings.HasPrefix(s, "#/$defs/") || strings.HasPrefix(s, "#/definitions/") {
			return nil, invalidf("%s: $ref names no definition in the schema", where(path))
		}
		return nil, invalidf("%s: this $ref is not supported; only references to the schema's own $defs (\"#/$defs/Name\") are", where(path))
	}
	if slices.Contains(stack, key) {
		return nil, invalidf("%s: $ref is recursive; recursive schemas are not supported", where(path))
	}
	rootDefs := func(k string) bool { return path == "" && (k == "$defs" || k == "definitions") }
	for _, k := range n.keys {
		if k != "$ref" && k != "$schema" && !rootDefs(k) && !slices.Contains(refAnnotations, k) {
			what := "a keyword"
			if knownKeyword(k) {
				what = fmt.Sprintf("%q", k)
			}
			return nil, invalidf("%s: %s beside $ref is not supported; only annotations (description, title, …) may stand beside it", where(path), what)
		}
	}
	in.refs++
	v, err := in.schema(def, path, append(stack, key))
	if err != nil {
		return nil, err
	}
	out := v.(*object)
	for _, k := range n.keys {
		if k != "$ref" && !rootDefs(k) {
			out.set(k, n.vals[k])
		}
	}
	return out, nil
}

// schemaURL is where the compiler files the caller's schema. Nothing is ever loaded from it.
const schemaURL = "urn:ocrgate:schema"

// noLoader refuses to load anything: the schemas are self-contained, and a caller's schema must
// never make the server read a file or fetch a URL. (The validator's default loader reads
// file: URLs.) Meta-schemas come from the validator's embedded copies without a loader.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("loading %s is not allowed", u)
}

func compile(doc *object) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaURL, plain(doc)); err != nil {
		return nil, invalidf("the schema cannot be compiled")
	}
	sch, err := c.Compile(schemaURL)
	if err == nil {
		return sch, nil
	}
	var (
		metaErr  *jsonschema.SchemaValidationError
		regexErr *jsonschema.InvalidRegexError
		loadErr  *jsonschema.LoadURLError
	)
	switch {
	case errors.As(err, &regexErr):
		return nil, invalidf("%s: invalid regular expression (patterns use Go RE2 syntax)", where(fragment(regexErr.URL)))
	case errors.As(err, &metaErr):
		var ve *jsonschema.ValidationError
		if errors.As(metaErr.Err, &ve) {
			// The validator's reasons quote the caller's values; its locations are paths.
			return nil, invalidf("the schema is not valid JSON Schema %s", where(leafLocation(ve)))
		}
		return nil, invalidf("the schema is not valid JSON Schema")
	case errors.As(err, &loadErr):
		return nil, invalidf("the schema refers to a $schema or $ref that is not a supported JSON Schema draft")
	}
	return nil, invalidf("the schema cannot be compiled")
}

// fragment turns "urn:ocrgate:schema#/properties/a/pattern" into "/properties/a".
func fragment(u string) string {
	_, f, _ := strings.Cut(u, "#")
	if i := strings.LastIndexByte(f, '/'); i >= 0 {
		f = f[:i]
	}
	return f
}

// leafLocation is the path of the first innermost validation error (the validator's messages
// quote the caller's values; its locations are only paths): the exact place that is wrong.
func leafLocation(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	if len(ve.InstanceLocation) == 0 {
		return ""
	}
	return "/" + strings.Join(ve.InstanceLocation, "/")
}

// leaves lists the innermost validation errors, each as "at '/path': what is
// wrong", sorted so the same answer always gives the same message (the validator walks
// properties in map order). The innermost errors name the exact place and reason; their
// parents only repeat "some subschema failed". (For the chat model's answers, which it is
// told what is wrong with; never for a caller's schema.)
func leaves(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.Error()
			if rest, ok := strings.CutPrefix(msg, "at '':"); ok {
				msg = "at the top level:" + rest
			}
			out = append(out, truncate(msg, maxReasonLength))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}

var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// schemaName derives the response format's name (OpenAI: ^[a-zA-Z0-9_-]{1,64}$) from the title.
func schemaName(doc *object) string {
	t, _ := doc.str("title")
	t = strings.Trim(nameUnsafe.ReplaceAllString(t, "_"), "_")
	if len(t) > 64 {
		t = t[:64]
	}
	if t == "" {
		return "extraction"
	}
	return t
}

// truncate shortens s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
