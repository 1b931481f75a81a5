package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
)

// imageField is the "image" member, decoded from base64 as the JSON is parsed: straight from the
// body's bytes into the image's, without the intermediate string (as large as the body) that
// unmarshaling into a string would allocate first. What a request holds before it is admitted is
// then its body and its image, about 1.75 times the body.
type imageField struct {
	data []byte
}

func (f *imageField) UnmarshalJSON(raw []byte) error {
	if len(raw) < 2 || raw[0] != '"' {
		return badRequest("invalid_image_field", `"image" must be a string holding base64 image data`)
	}
	// Base64 needs no escapes; a string with some (an encoder writing "\/", or "\n" in
	// line-wrapped base64) takes the general way.
	if bytes.IndexByte(raw, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badRequest("invalid_json", "request body is not valid JSON")
		}
		raw = []byte(`"` + s + `"`)
	}
	data, err := decodeBase64Image(raw[1 : len(raw)-1])
	f.data = data
	return err
}

// decodeBody parses a JSON object body into v. Every failure is a 400 with a message that says
// what to send; a non-string "image" is called out, as it is the usual mistake.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty_body", `request body is empty; send {"image": "<base64>"}`)
	}
	if err := json.Unmarshal(body, v); err != nil {
		var (
			ae *apiError
			te *json.UnmarshalTypeError
			se *json.SyntaxError
		)
		if errors.As(err, &ae) {
			return ae // the image field's own verdict
		}
		if errors.As(err, &te) && te.Field == "image" {
			return badRequest("invalid_image_field", `"image" must be a string holding base64 image data`)
		}
		if errors.As(err, &te) && te.Field == "template" {
			return badRequest("invalid_template_field", `"template" must be a string naming a built-in template`)
		}

		if errors.As(err, &te) {
			return badRequest("invalid_json", `request body must be a JSON object like {"image": "<base64>"}`)
		}
		// The parser's message quotes the offending byte; the offset says as much without
		// echoing the body.
		if errors.As(err, &se) {
			return badRequest("invalid_json", "request body is not valid JSON (at byte %d)", se.Offset)
		}
		return badRequest("invalid_json", "request body is not valid JSON")
	}
	return nil
}

// decodeBase64Image decodes the image field. It is lenient where clients differ and nothing is
// ambiguous: a data: URL prefix, line breaks and spaces (MIME-style wrapping), the URL-safe
// alphabet and missing padding are all accepted. The result is a fresh allocation of the decoded
// size.
func decodeBase64Image(s []byte) ([]byte, error) {
	if bytes.HasPrefix(s, []byte("data:")) {
		comma := bytes.IndexByte(s, ',')
		if comma < 0 || !bytes.HasSuffix(s[:comma], []byte(";base64")) {
			return nil, badRequest("invalid_base64", `"image" is a data: URL without ";base64,"`)
		}
		s = s[comma+1:]
	}
	if bytes.ContainsAny(s, " \t\r\n") {
		s = bytes.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	s = bytes.TrimRight(s, "=")
	if len(s) == 0 {
		return nil, badRequest("empty_image", `"image" is empty`)
	}
	enc := base64.RawStdEncoding
	if bytes.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	out := make([]byte, enc.DecodedLen(len(s)))
	n, err := enc.Decode(out, s)
	if err != nil {
		return nil, badRequest("invalid_base64", `"image" is not valid base64`)
	}
	return out[:n], nil
}
