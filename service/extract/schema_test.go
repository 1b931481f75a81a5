package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestParseSchema(t *testing.T) {
	// nested returns an object schema with the innermost property depth levels down.
	nested := func(depth int) string {
		s := `{"type":"string"}`
		for range depth - 1 {
			s = `{"type":"object","properties":{"a":` + s + `}}`
		}
		return s
	}
	manyProps := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	// refBomb: 20 definitions, each referring to the next twice: 2^20 copies once expanded.
	refBomb := func() string {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
		for i := range 20 {
			fmt.Fprintf(&b, `"d%d":{"type":"object","properties":{"l":{"$ref":"#/$defs/d%d"},"r":{"$ref":"#/$defs/d%d"}}},`, i, i+1, i+1)
		}
		b.WriteString(`"d20":{"type":"string","description":"leaf"}}}`)
		return b.String()
	}
	huge := `{"type":"object","properties":{"a":{"type":"string","description":"` + strings.Repeat("x", 70<<10) + `"}}}`

	tests := []struct {
		name       string
		schema     string
		wantMsg    string // "" for a good schema
		wantStrict bool
	}{
		{name: "invoice template", schema: string(templates[0].Schema), wantStrict: true},
		{name: "receipt template", schema: string(templates[1].Schema), wantStrict: true},
		{name: "unicode names and descriptions", wantStrict: true, schema: `{"type":"object","properties":{
			"社名":{"type":"string","description":"会社の名前"},
			"Größe":{"type":["number","null"],"description":"Größe in m² — ≥ 0"},
			"💶":{"type":"number"}},"required":["社名"]}`},
		{name: "local $defs and $ref (pydantic style)", wantStrict: true, schema: `{
			"$defs":{"Item":{"title":"Item","type":"object","properties":{"name":{"title":"Name","type":"string"},
				"price":{"anyOf":[{"type":"number"},{"type":"null"}],"default":null,"title":"Price"}},"required":["name"]}},
			"title":"Invoice","type":"object",
			"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/Item"}},
				"main":{"$ref":"#/$defs/Item","description":"the main item"}},
			"required":["items"]}`},
		{name: "draft-07 $schema and definitions", wantStrict: true, schema: `{"$schema":"http://json-schema.org/draft-07/schema#",
			"definitions":{"s":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/definitions/s"}}}`},
		{name: "free-form object is fine but not strict", schema: `{"type":"object","properties":{"meta":{"type":"object"}}}`},
		{name: "exactly the depth limit", schema: nested(10), wantStrict: true},
		{name: "exactly the property limit", schema: manyProps(200), wantStrict: true},

		{name: "empty", schema: ``, wantMsg: "empty"},
		{name: "malformed JSON", schema: `{"type":"object","properties":{`, wantMsg: "not valid JSON"},
		{name: "trailing data", schema: `{"type":"object","properties":{}} {}`, wantMsg: "not valid JSON"},
		{name: "duplicate keys", schema: `{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"number"}}}`, wantMsg: `not valid JSON (or repeats a key`},
		{name: "array at top level", schema: `[{"type":"object","properties":{}}]`, wantMsg: "not an array"},
		{name: "string at top level", schema: `"invoice"`, wantMsg: "not a string"},
		{name: "not an object schema", schema: `{"type":"string"}`, wantMsg: `"type": "object" with "properties"`},
		{name: "object without properties", schema: `{"type":"object"}`, wantMsg: `"type": "object" with "properties"`},
		{name: "huge", schema: huge, wantMsg: "bytes; the limit is 65536"},
		{name: "too deep", schema: nested(11), wantMsg: "nested too deeply"},
		{name: "deep JSON nesting", schema: strings.Repeat(`{"type":"object","properties":{"a":`, 40) + `{}` + strings.Repeat(`}}`, 40), wantMsg: "nested too deeply"},
		{name: "too many properties", schema: manyProps(201), wantMsg: "too many properties (the limit is 200"},
		{name: "unsupported keyword", schema: `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}}}`, wantMsg: `at /properties/<name>: unsupported keyword "oneOf"; use anyOf`},
		{name: "nullable keyword", schema: `{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`, wantMsg: `type array such as ["string", "null"]`},
		{name: "unknown keyword", schema: `{"type":"object","properties":{"a":{"type":"string"}},"x-extra":1}`, wantMsg: `at the top level: an unsupported keyword`},
		{name: "invalid regex", schema: `{"type":"object","properties":{"a":{"type":"string","pattern":"(?=lookahead)"}}}`, wantMsg: `not valid JSON Schema at /properties/<name>/pattern`},
		{name: "unknown type", schema: `{"type":"object","properties":{"a":{"type":"strnig"}}}`, wantMsg: "type must be one of"},
		{name: "not valid JSON Schema", schema: `{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, wantMsg: "not valid JSON Schema at /properties/<name>/minLength"},
		{name: "boolean subschema", schema: `{"type":"object","properties":{"a":true}}`, wantMsg: "at /properties/<name>: a schema must be a JSON object"},
		{name: "tuple items", schema: `{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`, wantMsg: "tuple"},
		{name: "remote $ref", schema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, wantMsg: "is not supported; only references to the schema's own $defs"},
		{name: "file $ref", schema: `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, wantMsg: "is not supported"},
		{name: "missing definition", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/Nope"}}}`, wantMsg: "names no definition"},
		{name: "recursive $ref", schema: `{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}}}`, wantMsg: "recursive"},
		{name: "$ref with siblings", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/s","maxLength":3}},"$defs":{"s":{"type":"string"}}}`, wantMsg: `"maxLength" beside $ref`},
		{name: "$ref bomb", schema: refBomb(), wantMsg: "too big once its $ref references are expanded"},
		{name: "nested $defs", schema: `{"type":"object","properties":{"a":{"type":"object","properties":{},"$defs":{}}}}`, wantMsg: "put $defs at the top level"},
		{name: "foreign $schema", schema: `{"$schema":"https://example.com/my-meta","type":"object","properties":{}}`, wantMsg: "json-schema.org"},
		{name: "unknown json-schema.org draft", schema: `{"$schema":"https://json-schema.org/draft/2099-01/schema","type":"object","properties":{}}`, wantMsg: "not a supported JSON Schema draft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema([]byte(tt.schema), Limits{})
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("ParseSchema: %v", err)
				}
				if s.Strict() != tt.wantStrict {
					t.Errorf("Strict = %v, want %v", s.Strict(), tt.wantStrict)
				}
				if !json.Valid(s.send) || !json.Valid([]byte(s.pretty)) {
					t.Errorf("schema to send is not JSON: %s", s.send)
				}
				if strings.Contains(string(s.send), "$ref") || strings.Contains(string(s.send), "$defs") {
					t.Errorf("references left in %s", s.send)
				}
				if s.Strict() {
					// The strict form must itself be a usable schema.
					if _, err := ParseSchema(s.send, Limits{}); err != nil {
						t.Errorf("strict form does not parse: %v\n%s", err, s.send)
					}
				}
				return
			}
			if !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("err = %v, want ErrInvalidSchema", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("message %q lacks %q", err, tt.wantMsg)
			}
			if len(err.Error()) > 600 {
				t.Errorf("message is %d bytes long", len(err.Error()))
			}
		})
	}
}

func TestParseSchemaLimits(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"},"c":{"type":"string"}}}}}`)
	for _, tt := range []struct {
		lim     Limits
		wantMsg string
	}{
		{Limits{}, ""},
		{Limits{MaxBytes: 50}, "bytes; the limit is 50"},
		{Limits{MaxDepth: 2}, "nested too deeply"},
		{Limits{MaxProperties: 2}, "too many properties"},
	} {
		_, err := ParseSchema(schema, tt.lim)
		if tt.wantMsg == "" && err != nil || tt.wantMsg != "" && (err == nil || !strings.Contains(err.Error(), tt.wantMsg)) {
			t.Errorf("%+v: err = %v, want %q", tt.lim, err, tt.wantMsg)
		}
	}
}

func TestStrictSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		strict bool
		want   string // the schema sent; the input itself when not strict
	}{
		{
			name:   "optional property becomes required and nullable",
			schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			strict: true,
			want:   `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]}},"required":["a","b"],"additionalProperties":false}`,
		},
		{
			name:   "already nullable stays as it is; key order kept",
			schema: `{"properties":{"z":{"type":["string","null"]},"a":{"type":"string"}},"type":"object","required":["a"],"additionalProperties":false}`,
			strict: true,
			want:   `{"properties":{"z":{"type":["string","null"]},"a":{"type":"string"}},"type":"object","required":["z","a"],"additionalProperties":false}`,
		},
		{
			name:   "optional enum gets null in type and enum",
			schema: `{"type":"object","properties":{"c":{"type":"string","enum":["EUR","USD"]}}}`,
			strict: true,
			want:   `{"type":"object","properties":{"c":{"type":["string","null"],"enum":["EUR","USD",null]}},"required":["c"],"additionalProperties":false}`,
		},
		{
			name:   "optional const is wrapped in anyOf",
			schema: `{"type":"object","properties":{"k":{"type":"string","const":"x"}}}`,
			strict: true,
			want:   `{"type":"object","properties":{"k":{"anyOf":[{"type":"string","const":"x"},{"type":"null"}]}},"required":["k"],"additionalProperties":false}`,
		},
		{
			name:   "optional anyOf gets a null branch",
			schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`,
			strict: true,
			want:   `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"null"}]}},"required":["v"],"additionalProperties":false}`,
		},
		{
			name:   "nested objects in arrays, annotations dropped",
			schema: `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"string","default":"?","examples":["a"]}},"required":["n"]}}},"required":["items"],"$comment":"c"}`,
			strict: true,
			want:   `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}`,
		},
		{
			name:   "strict formats and number bounds pass",
			schema: `{"type":"object","properties":{"d":{"type":"string","format":"date"},"t":{"type":"number","minimum":0,"multipleOf":0.01}},"required":["d","t"]}`,
			strict: true,
			want:   `{"type":"object","properties":{"d":{"type":"string","format":"date"},"t":{"type":"number","minimum":0,"multipleOf":0.01}},"required":["d","t"],"additionalProperties":false}`,
		},
		{name: "minLength", schema: `{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`},
		{name: "uniqueItems", schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"uniqueItems":true}}}`},
		{name: "additionalProperties true", schema: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`},
		{name: "additionalProperties schema", schema: `{"type":"object","properties":{},"additionalProperties":{"type":"number"}}`},
		{name: "free-form object", schema: `{"type":"object","properties":{"meta":{"type":"object"}}}`},
		{name: "array without items", schema: `{"type":"object","properties":{"a":{"type":"array"}}}`},
		{name: "two types", schema: `{"type":"object","properties":{"a":{"type":["string","number"]}}}`},
		{name: "no type", schema: `{"type":"object","properties":{"a":{"description":"anything"}}}`},
		{name: "format outside strict's list", schema: `{"type":"object","properties":{"u":{"type":"string","format":"uri"}}}`},
		{name: "required but undeclared", schema: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema([]byte(tt.schema), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Strict() != tt.strict {
				t.Errorf("Strict = %v, want %v", s.Strict(), tt.strict)
			}
			want := tt.want
			if !tt.strict {
				want = tt.schema
			}
			if string(s.send) != want {
				t.Errorf("sent\n%s\nwant\n%s", s.send, want)
			}
		})
	}
}

func TestCheckAnswer(t *testing.T) {
	s, err := ParseSchema([]byte(`{"type":"object","properties":{
		"a":{"type":"string"},
		"b":{"type":["string","null"]},
		"c":{"type":"string"},
		"rows":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"string"}},"required":["y"]}},
		"opt":{"anyOf":[{"type":"object","properties":{"z":{"type":"integer"}}},{"type":"null"}]},
		"d":{"type":"string","format":"date"}
	},"required":["c"]}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		content    string
		want       string   // the object returned
		wantJSON   bool     // false: not read as JSON
		wantReason []string // substrings of the reasons
	}{
		{name: "optional nulls dropped, allowed nulls kept", content: `{"a":null,"b":null,"c":"x","rows":[{"x":null,"y":"1"}],"opt":{"z":null},"d":null}`,
			want: `{"b":null,"c":"x","rows":[{"y":"1"}],"opt":{}}`},
		{name: "key order and number text kept", content: `{"c":"x","rows":[{"y":"1","x":12345678901234567890.120}],"a":"<&>"}`,
			want: `{"c":"x","rows":[{"y":"1","x":12345678901234567890.120}],"a":"<&>"}`},
		{name: "fenced", content: "```json\n{\"c\":\"x\"}\n```", want: `{"c":"x"}`},
		{name: "fence without info string", content: "```\n{\"c\":\"x\"}\n```", want: `{"c":"x"}`},
		{name: "think block first", content: "<think>the user wants {c}</think>\n{\"c\":\"x\"}", want: `{"c":"x"}`},
		{name: "braces inside strings", content: `{"c":"a } b { c"}`, want: `{"c":"a } b { c"}`},
		{name: "required null", content: `{"c":null}`, wantJSON: true, wantReason: []string{"at '/c'", "got null, want string"}},
		{name: "wrong types", content: `{"c":"x","a":1,"rows":[{"y":2}]}`, wantJSON: true, wantReason: []string{"at '/a'", "at '/rows/0/y'"}},
		{name: "format asserted", content: `{"c":"x","d":"25/12/2018"}`, wantJSON: true, wantReason: []string{"at '/d'", "date"}},
		{name: "array", content: `[{"c":"x"}]`, wantReason: []string{"not an object"}},
		{name: "prose", content: `Sorry, no JSON here.`, wantReason: []string{"invalid character"}},
		{name: "truncated", content: `{"c":"x","rows":[`, wantReason: []string{"unexpected EOF"}},
		{name: "two objects", content: `{"c":"x"} {"c":"y"}`, wantReason: []string{"unexpected data after"}},
		{name: "empty", content: "  \n", wantReason: []string{"empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := s.check(tt.content)
			if tt.want != "" {
				if bad != nil {
					t.Fatalf("unusable: %+v", bad)
				}
				if string(got) != tt.want {
					t.Errorf("object = %s, want %s", got, tt.want)
				}
				return
			}
			if bad == nil {
				t.Fatalf("accepted %s", got)
			}
			if bad.notJSON == tt.wantJSON {
				t.Errorf("notJSON = %v", bad.notJSON)
			}
			all := strings.Join(bad.reasons, "\n")
			for _, want := range tt.wantReason {
				if !strings.Contains(all, want) {
					t.Errorf("reasons %q lack %q", all, want)
				}
			}
		})
	}
}

func TestCheckAnswerBoundsReasons(t *testing.T) {
	props := make([]string, 30)
	vals := make([]string, 30)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"number"}`, i)
		vals[i] = fmt.Sprintf(`"p%d":"%s"`, i, strings.Repeat("v", 1000))
	}
	s, err := ParseSchema([]byte(`{"type":"object","properties":{`+strings.Join(props, ",")+`}}`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, bad := s.check(`{` + strings.Join(vals, ",") + `}`)
	if bad == nil || len(bad.reasons) != maxReasons || bad.more != 20 {
		t.Fatalf("bad = %+v", bad)
	}
	prompt := reaskPrompt(bad)
	if len(prompt) > 5000 || !strings.Contains(prompt, "and 20 more") {
		t.Errorf("re-ask is %d bytes:\n%s", len(prompt), prompt)
	}
	if msg := bad.err(3).Error(); !strings.Contains(msg, "(and 29 more)") || len(msg) > 500 {
		t.Errorf("error = %q", msg)
	}
}

func TestTemplates(t *testing.T) {
	list := Templates()
	if len(list) != 2 || list[0].Name != "invoice" || list[1].Name != "receipt" {
		t.Fatalf("Templates = %+v", list)
	}
	list[0].Schema[0] = 'X' // callers get copies
	if templates[0].Schema[0] != '{' {
		t.Error("Templates returned the package's own schema bytes")
	}
	wantFields := map[string][]string{
		"invoice": {"invoiceNumber", "invoiceDate", "invoiceItems", "totalAmount", `"name"`, `"price"`, `"number"`, `"tax"`},
		"receipt": {"company", "date", "address", "total"},
	}
	for _, tmpl := range Templates() {
		s, err := TemplateSchema(tmpl.Name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != tmpl.Name || !s.Strict() || tmpl.Description == "" {
			t.Errorf("%s: name %q strict %v", tmpl.Name, s.Name(), s.Strict())
		}
		for _, f := range wantFields[tmpl.Name] {
			if !strings.Contains(string(tmpl.Schema), f) {
				t.Errorf("%s lacks %s", tmpl.Name, f)
			}
		}
		// Every field has a description, for the model.
		var doc struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tmpl.Schema, &doc); err != nil {
			t.Fatal(err)
		}
		for name, p := range doc.Properties {
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tmpl.Name, name)
			}
		}
		// The strict form of a template is the template: written that way on purpose.
		if !jsonEqual(t, s.send, tmpl.Schema) {
			t.Errorf("%s: strict form differs from the template:\n%s", tmpl.Name, s.send)
		}
	}
	if s, err := TemplateSchema(""); err != nil || s.Name() != DefaultTemplate {
		t.Errorf(`TemplateSchema("") = %v, %v`, s, err)
	}
	_, err := TemplateSchema("passport")
	if !errors.Is(err, ErrUnknownTemplate) || !strings.Contains(err.Error(), "invoice, receipt") || strings.Contains(err.Error(), "passport") {
		t.Errorf("unknown template: %v", err)
	}
}

// TestSchemaConcurrentUse: one compiled schema serves many requests at once (run with -race).
func TestSchemaConcurrentUse(t *testing.T) {
	s, err := TemplateSchema("invoice")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			content := fmt.Sprintf(`{"invoiceNumber":"INV-%d","invoiceDate":null,"invoiceItems":[{"name":"a","price":1,"number":%d,"tax":null}],"totalAmount":1}`, i, i)
			if i%2 == 1 {
				content = `{"invoiceNumber":1}`
			}
			obj, bad := s.check(content)
			if (bad == nil) != (i%2 == 0) || bad == nil && !json.Valid(obj) {
				t.Errorf("goroutine %d: %s, %+v", i, obj, bad)
			}
		})
	}
	wg.Wait()
}
