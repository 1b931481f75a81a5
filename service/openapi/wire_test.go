package openapi_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/openapi"
)

// schema is what this test reads of a component schema: its members and which are required.
type schema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// TestWireTypesMatchTheDocument holds each wire type of package api to its schema in
// openapi.json, both ways: every JSON member of the type is a property of the schema, every
// property is a member of the type, and a member the type always sends (no omitempty) is required
// by the schema. The server's answers are checked against the document by the HTTP tests; this
// checks the types themselves, so a field added to one and not the other fails here, by name.
func TestWireTypesMatchTheDocument(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typ any
		// schemas are the component schemas the type is written for. A type that serves two
		// (ImageInfo: an image's and a document's) has the union of their members, and each of
		// its members is required by one of them at least.
		schemas []string
	}{
		{api.OCRRequest{}, []string{"OCRRequest"}},
		{api.ExtractRequest{}, []string{"ExtractRequest"}},
		{api.OCRResult{}, []string{"OCRResult"}},
		{api.DocumentResult{}, []string{"DocumentResult"}},
		{api.ImageInfo{}, []string{"ImageInfo", "DocumentInfo"}},
		{api.Region{}, []string{"Region"}},
		{api.Word{}, []string{"Word"}},
		{api.BoundingShape{}, []string{"BoundingShape"}},
		{api.Point{}, []string{"Point"}},
		{api.Page{}, []string{"Page"}},
		{api.PageError{}, []string{"PageError"}},
		{api.HiddenText{}, []string{"HiddenText"}},
		{api.BatchResult[any]{}, []string{"BatchResult"}},
		{api.ItemError{}, []string{"ItemError"}},
		{api.Error{}, []string{"Error400", "Error503"}},
		{api.Status{}, []string{"Health", "Ready"}},
		{api.Templates{}, []string{"Templates"}},
		{api.Template{}, []string{"Template"}},
	}
	for _, tt := range tests {
		typ := reflect.TypeOf(tt.typ)
		t.Run(typ.Name(), func(t *testing.T) {
			props := map[string]bool{}
			required := map[string]bool{}
			for _, name := range tt.schemas {
				s, ok := doc.Components.Schemas[name]
				if !ok {
					t.Fatalf("openapi.json has no components.schemas.%s", name)
				}
				for p := range s.Properties {
					props[p] = true
				}
				for _, r := range s.Required {
					required[r] = true
				}
			}
			members := jsonMembers(typ)
			for name, always := range members {
				switch {
				case !props[name]:
					t.Errorf("api.%s sends %q, which components.schemas.%s does not describe", typ.Name(), name, strings.Join(tt.schemas, "/"))
				case always && !required[name]:
					t.Errorf("api.%s always sends %q (no omitempty), which %s does not list as required", typ.Name(), name, strings.Join(tt.schemas, "/"))
				}
			}
			var missing []string
			for p := range props {
				if _, ok := members[p]; !ok {
					missing = append(missing, p)
				}
			}
			sort.Strings(missing)
			for _, p := range missing {
				t.Errorf("components.schemas.%s describes %q, which api.%s lacks", strings.Join(tt.schemas, "/"), p, typ.Name())
			}
		})
	}
}

// jsonMembers lists the JSON members of a struct type as encoding/json writes them (embedded
// structs flattened), each with whether it is always sent.
func jsonMembers(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for n, always := range jsonMembers(f.Type) {
				out[n] = always
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		o := strings.Split(opts, ",")
		out[name] = !slices.Contains(o, "omitempty") && !slices.Contains(o, "omitzero")
	}
	return out
}
