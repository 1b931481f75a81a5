package extract

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Template is a built-in schema, chosen by name in a request.
type Template struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// DefaultTemplate is the template used when a request names neither a template nor a schema.
const DefaultTemplate = "invoice"

// The built-in schemas. Every field is required and nullable, so callers always get the same
// keys, with null where the document has no value; that shape is also strict as written.
//
// invoice follows the seed's invoice model. receipt has the four key fields of SROIE task 3,
// all strings as SROIE annotates them: values as printed, not reformatted.
var templates = []Template{
	{
		Name:        "invoice",
		Description: "Invoice: number, date, line items (name, unit price, quantity, tax) and total amount.",
		Schema: json.RawMessage(`{
  "title": "Invoice",
  "type": "object",
  "properties": {
    "invoiceNumber": {
      "type": ["string", "null"],
      "description": "The invoice number or identifier exactly as printed (e.g. \"INV-2024-0017\")."
    },
    "invoiceDate": {
      "type": ["string", "null"],
      "description": "The date the invoice was issued, as printed on the document."
    },
    "invoiceItems": {
      "type": "array",
      "description": "The line items in document order, one per product or service; an empty array when the document lists none. Not subtotal, tax or total lines.",
      "items": {
        "type": "object",
        "properties": {
          "name": {
            "type": ["string", "null"],
            "description": "Name or description of the product or service."
          },
          "price": {
            "type": ["number", "null"],
            "description": "Unit price as a number, without currency symbol or thousands separators."
          },
          "number": {
            "type": ["number", "null"],
            "description": "Quantity: how many units were invoiced."
          },
          "tax": {
            "type": ["number", "null"],
            "description": "Tax amount charged on this line as a number (not a percentage); null when the line shows none."
          }
        },
        "required": ["name", "price", "number", "tax"],
        "additionalProperties": false
      }
    },
    "totalAmount": {
      "type": ["number", "null"],
      "description": "The total amount due including tax, as a number without currency symbol or thousands separators."
    }
  },
  "required": ["invoiceNumber", "invoiceDate", "invoiceItems", "totalAmount"],
  "additionalProperties": false
}`),
	},
	{
		Name:        "receipt",
		Description: "Receipt (the SROIE key fields): company, date, address and total, as printed.",
		Schema: json.RawMessage(`{
  "title": "Receipt",
  "type": "object",
  "properties": {
    "company": {
      "type": ["string", "null"],
      "description": "Name of the company or shop that issued the receipt, as printed (usually at the top), without registration numbers."
    },
    "date": {
      "type": ["string", "null"],
      "description": "Date of the purchase exactly as printed, e.g. \"25/12/2018\" or \"03-02-18\"; do not reformat it and leave out the time."
    },
    "address": {
      "type": ["string", "null"],
      "description": "Address of the company or shop as printed, its lines joined with single spaces; without phone, fax or email."
    },
    "total": {
      "type": ["string", "null"],
      "description": "The total amount paid, as printed but without currency symbol (e.g. \"80.90\"): the final amount after tax and rounding, not a subtotal, cash tendered or change."
    }
  },
  "required": ["company", "date", "address", "total"],
  "additionalProperties": false
}`),
	},
}

// Templates lists the built-in templates with their schemas, for GET /templates.
func Templates() []Template {
	out := make([]Template, len(templates))
	for i, t := range templates {
		t.Schema = append(json.RawMessage(nil), t.Schema...)
		out[i] = t
	}
	return out
}

var compiledTemplates = sync.OnceValues(func() (map[string]*Schema, error) {
	m := make(map[string]*Schema, len(templates))
	for _, t := range templates {
		s, err := parseSchema(t.Schema, Limits{}, t.Name)
		if err != nil {
			return nil, fmt.Errorf("extract: built-in template %s: %w", t.Name, err)
		}
		m[t.Name] = s
	}
	return m, nil
})

// TemplateSchema returns the compiled schema of a built-in template; "" means
// [DefaultTemplate]. An unknown name gives an error wrapping [ErrUnknownTemplate] that lists
// the known ones.
func TemplateSchema(name string) (*Schema, error) {
	if name == "" {
		name = DefaultTemplate
	}
	m, err := compiledTemplates()
	if err != nil {
		return nil, err
	}
	s, ok := m[name]
	if !ok {
		names := make([]string, len(templates))
		for i, t := range templates {
			names[i] = t.Name
		}
		// The name sent is not repeated back: error bodies never carry the request's words.
		return nil, fmt.Errorf("%w; the templates are %s (or send your own \"schema\")",
			ErrUnknownTemplate, strings.Join(names, ", "))
	}
	return s, nil
}
