package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/intake"
)

// /ocr and /ocr-json take what they read in three kinds of body, each read into the one request
// value (apiRequest) that everything after reading works on:
//
//   - JSON: the file as base64 in "image" (or several in "images"), the options as members;
//   - the file itself, with its media type (image/*, application/pdf, application/octet-stream),
//     the options as query parameters;
//   - multipart/form-data: the file in a "file" part (several in several), the options as form
//     fields or query parameters, /ocr-json's schema in a "schema" field.
//
// Whatever the media type says, the file's format is told by its bytes, as for base64 ones.

// bodyKind is how a request's body carries what it sends.
type bodyKind int

const (
	jsonBody bodyKind = iota
	rawBody
	formBody
)

// endpoint is what the request decoder needs to know of the route it reads for.
type endpoint struct {
	path    string
	extract bool // /ocr-json: one file, a template or a schema
}

var (
	ocrEndpoint     = endpoint{path: "/ocr"}
	extractEndpoint = endpoint{path: "/ocr-json", extract: true}
)

// params lists the options an endpoint takes as query parameters or form fields, in the order
// its messages name them.
func (ep endpoint) params() []string {
	names := append([]string{"pages", "ocr", "words", "lang"}, optionNames...)
	if ep.extract {
		names = append(names, "template")
	} else {
		names = append(names, "format")
	}
	return names
}

// apiRequest is a request to /ocr or /ocr-json as it was sent, whatever its body's kind.
type apiRequest struct {
	kind bodyKind
	// images are the images or documents sent, in order. An entry of several may carry its own
	// error (empty, not base64), answered in its place.
	images []imageItem
	// batch: several were sent ("images", or more than one file part), each answered on its
	// own; for /ocr-json, that "images" was sent at all.
	batch bool
	// both: "image" and "images" were sent together.
	both     bool
	read     readFields
	template string
	schema   json.RawMessage
}

// missing is the error of a request that sent no image, in the words of its body's kind.
func (r *apiRequest) missing() error {
	switch r.kind {
	case formBody:
		return badRequest("missing_image", `the form has no "file" part; send the file as a part named "file"`)
	default:
		return badRequest("missing_image", `request body has no "image" field`)
	}
}

// notOne is /ocr-json's refusal of several images.
func (r *apiRequest) notOne() error {
	if r.kind == formBody {
		return badRequest("images_not_supported", `/ocr-json fills one object from one image or document: send one "file" part`)
	}
	return badRequest("images_not_supported", `/ocr-json fills one object from one image or document: send it in "image"`)
}

// readRequest reads the request for ep, whatever its body's kind. The cheap checks (media type,
// query parameters) come before the body is read; the body's read stops when ctx ends.
func (s *Server) readRequest(ctx context.Context, c *fiber.Ctx, ep endpoint) (*apiRequest, error) {
	kind, boundary, err := mediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return nil, err
	}
	flat := flatParams{}
	if kind == jsonBody {
		if c.Request().URI().QueryArgs().Len() > 0 {
			return nil, badRequest("invalid_parameter", "with a JSON body, send the options as members of the body, not as query parameters")
		}
	} else if err := flat.fromQuery(c, ep); err != nil {
		return nil, err
	}
	switch kind {
	case rawBody:
		body, err := s.body(ctx, c)
		if err != nil {
			return nil, err
		}
		if len(body) == 0 {
			return nil, badRequest("empty_body", "request body is empty; send the file's bytes, with its media type as Content-Type")
		}
		req := &apiRequest{kind: rawBody, images: []imageItem{{data: body}}}
		req.read, req.template = flat.fields()
		return req, nil
	case formBody:
		return s.readForm(ctx, c, ep, boundary, flat)
	}
	body, err := s.body(ctx, c)
	if err != nil {
		return nil, err
	}
	if ep.extract {
		var jr extractRequest
		if err := decodeBody(body, &jr); err != nil {
			return nil, err
		}
		req := &apiRequest{kind: jsonBody, batch: bool(jr.Images), read: jr.readFields, template: jr.Template, schema: jr.Schema}
		if jr.Image != nil {
			req.images = []imageItem{{data: jr.Image.data}}
		}
		return req, nil
	}
	var jr ocrRequest
	if err := decodeBody(body, &jr); err != nil {
		return nil, err
	}
	req := &apiRequest{kind: jsonBody, read: jr.readFields, both: jr.Image != nil && jr.Images != nil}
	switch {
	case jr.Images != nil:
		req.images, req.batch = *jr.Images, true
	case jr.Image != nil:
		req.images = []imageItem{{data: jr.Image.data}}
	}
	return req, nil
}

// mediaType tells the body's kind from its Content-Type, and a form's boundary.
func mediaType(ct string) (bodyKind, string, error) {
	mt, params, err := mime.ParseMediaType(ct)
	switch {
	case err != nil:
	case mt == fiber.MIMEApplicationJSON || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return jsonBody, "", nil
	case mt == fiber.MIMEMultipartForm:
		if !intake.ValidBoundary(params["boundary"]) {
			return 0, "", badRequest("invalid_multipart", "multipart/form-data needs a boundary parameter of 1 to 70 characters")
		}
		return formBody, params["boundary"], nil
	case strings.HasPrefix(mt, "image/"), mt == "application/pdf", mt == fiber.MIMEOctetStream:
		return rawBody, "", nil
	}
	// The header's value is not quoted back: error bodies never carry what the request carried.
	msg := "Content-Type must be application/json, multipart/form-data, or the file's own media type (image/*, application/pdf or application/octet-stream)"
	if ct == "" {
		msg += "; the request has none"
	}
	return 0, "", &apiError{status: fiber.StatusUnsupportedMediaType, code: "unsupported_media_type", msg: msg}
}

// flatParams are the options sent as query parameters or form fields: text by name.
type flatParams map[string]string

// add records one option, refusing an option sent twice (in the query, the form, or both).
func (p flatParams) add(name, value string) error {
	if _, ok := p[name]; ok {
		return badRequest("invalid_parameter", "the option %q is sent more than once", name)
	}
	p[name] = value
	return nil
}

// unknownParam refuses a query parameter or form field that ep does not take. Its name is not
// repeated back: error bodies never carry the request's words.
func unknownParam(ep endpoint, form bool) error {
	what := "a query parameter"
	names := ep.params()
	if form {
		what = "a form part"
		names = append([]string{"file"}, names...)
		if ep.extract {
			names = append(names, "schema")
		}
	}
	return badRequest("invalid_parameter", "%s has a name %s does not take; it takes %s", what, ep.path, strings.Join(names, ", "))
}

// fromQuery adds the request's query parameters.
func (p flatParams) fromQuery(c *fiber.Ctx, ep endpoint) error {
	var err error
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
		name := string(k)
		switch {
		case err != nil:
		case name == "schema" && ep.extract:
			err = badRequest("invalid_parameter", `a schema is not taken as a query parameter; send it as a form field "schema" beside a "file" part, or in a JSON body`)
		case !slices.Contains(ep.params(), name):
			err = unknownParam(ep, false)
		default:
			err = p.add(name, string(v))
		}
	})
	return err
}

// fields turns the options into the read members of a JSON body, so that one check reads both
// (parseReadFields); a value of the wrong type is refused there, with the option's own message.
func (p flatParams) fields() (readFields, string) {
	f := readFields{flat: true}
	text := func(v string) json.RawMessage { b, _ := json.Marshal(v); return b }
	if v, ok := p["pages"]; ok {
		f.Pages = text(v)
	}
	if v, ok := p["ocr"]; ok {
		f.OCR = text(v)
	}
	if v, ok := p["words"]; ok {
		f.Words = literal(v)
	}
	if v, ok := p["format"]; ok {
		f.Format = text(v)
	}
	if v, ok := p["lang"]; ok {
		f.Lang = text(v)
	}
	opts := map[string]json.RawMessage{}
	for _, name := range optionNames {
		if v, ok := p[name]; ok {
			opts[name] = literal(v)
		}
	}
	if len(opts) > 0 {
		f.Options, _ = json.Marshal(opts)
	}
	return f, p["template"]
}

// literal is an option's text as JSON: as it is when it is a number, true or false, and as a
// string otherwise.
func literal(v string) json.RawMessage {
	if v == "true" || v == "false" || v != "" && (v[0] == '-' || '0' <= v[0] && v[0] <= '9') && json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// Bounds of a form beyond its files.
const (
	// formOverhead is what a form may hold besides its files: boundaries, part heads and fields.
	// A form's body may be this much longer than MaxBodyBytes, so that MaxBodyBytes of files
	// fit.
	formOverhead = 1 << 20
	// maxFieldBytes bounds a form field other than "schema".
	maxFieldBytes = 4 << 10
)

// readForm reads a multipart form for ep into the request, with the options in flat (from the
// query) and in its fields.
func (s *Server) readForm(ctx context.Context, c *fiber.Ctx, ep endpoint, boundary string, flat flatParams) (*apiRequest, error) {
	schemaMax := int64(s.opt.SchemaLimits.MaxBytes)
	if schemaMax <= 0 {
		schemaMax = extract.DefaultMaxSchemaBytes
	}
	lim := intake.FormLimits{
		Body:      int64(s.opt.MaxBodyBytes) + formOverhead,
		FileField: "file",
		Files:     int64(s.opt.MaxBodyBytes),
		MaxFiles:  maxImagesParsed,
		Fields:    map[string]int64{},
	}
	if s.opt.MaxImages > 0 {
		lim.MaxFiles = s.opt.MaxImages
	}
	if ep.extract {
		lim.MaxFiles = 1
		lim.Fields["schema"] = schemaMax
	}
	for _, name := range ep.params() {
		lim.Fields[name] = maxFieldBytes
	}
	form, err := s.form(ctx, c, boundary, lim)
	var tooLarge *intake.FieldTooLargeError
	switch {
	case errors.Is(err, intake.ErrUnknownField):
		return nil, unknownParam(ep, true)
	case errors.Is(err, intake.ErrRepeatedField):
		return nil, badRequest("invalid_parameter", "a form field comes more than once")
	case errors.Is(err, intake.ErrTooManyFiles) && ep.extract:
		return nil, (&apiRequest{kind: formBody}).notOne()
	case errors.Is(err, intake.ErrTooManyFiles):
		return nil, &apiError{status: fiber.StatusRequestEntityTooLarge, code: "too_many_images",
			msg: fmt.Sprintf(`the form holds more than %d "file" parts; send fewer per request`, lim.MaxFiles)}
	case errors.As(err, &tooLarge) && tooLarge.Name == "schema":
		return nil, &apiError{status: fiber.StatusUnprocessableEntity, code: "invalid_schema",
			msg: fmt.Sprintf("invalid schema: the schema is longer than %d bytes, the limit", tooLarge.Limit)}
	case errors.As(err, &tooLarge):
		return nil, badRequest("invalid_parameter", "the form field %q is longer than %d bytes", tooLarge.Name, tooLarge.Limit)
	case err != nil:
		return nil, err
	}
	for name, v := range form.Fields {
		if name == "schema" {
			continue
		}
		if err := flat.add(name, string(v)); err != nil {
			return nil, err
		}
	}
	req := &apiRequest{kind: formBody, schema: form.Fields["schema"], batch: len(form.Files) > 1}
	req.read, req.template = flat.fields()
	for _, f := range form.Files {
		it := imageItem{data: f}
		if len(f) == 0 {
			it.err = badRequest("empty_image", `a "file" part is empty`)
		}
		req.images = append(req.images, it)
	}
	if len(req.images) == 1 && req.images[0].err != nil {
		return nil, req.images[0].err
	}
	return req, nil
}
