package service

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// imageRequest is the body of /ocr (and the image part of /ocr-json).
type imageRequest struct {
	Image *string `json:"image"`
}

// imageFromRequest checks the content type, parses the JSON body and decodes its base64 image.
// The decoded bytes are a fresh allocation: nothing returned points into Fiber's request buffer,
// which is reused as soon as the handler returns.
func imageFromRequest(c *fiber.Ctx) ([]byte, error) {
	if err := requireJSON(c.Get(fiber.HeaderContentType)); err != nil {
		return nil, err
	}
	var req imageRequest
	if err := decodeBody(c.Body(), &req); err != nil {
		return nil, err
	}
	if req.Image == nil {
		return nil, badRequest("missing_image", `request body has no "image" field`)
	}
	return decodeBase64Image(*req.Image)
}

// decodeBody parses a JSON object body into v. Every failure is a 400 with a message that says
// what to send; a non-string "image" is called out, as it is the usual mistake.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty_body", `request body is empty; send {"image": "<base64>"}`)
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "image" {
			return badRequest("invalid_image_field", `"image" must be a string holding base64 image data`)
		}
		if errors.As(err, &te) && te.Field == "template" {
			return badRequest("invalid_template_field", `"template" must be a string naming a built-in template`)
		}
		if errors.As(err, &te) {
			return badRequest("invalid_json", `request body must be a JSON object like {"image": "<base64>"}`)
		}
		return badRequest("invalid_json", "request body is not valid JSON: %s", err.Error())
	}
	return nil
}

// requireJSON accepts application/json and any application/*+json, with parameters.
func requireJSON(ct string) error {
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == fiber.MIMEApplicationJSON || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))) {
		return nil
	}
	if ct == "" {
		ct = "none"
	}
	return &apiError{status: fiber.StatusUnsupportedMediaType, code: "unsupported_media_type",
		msg: "Content-Type must be application/json (got " + ct + ")"}
}

// decodeBase64Image decodes the image field. It is lenient where clients differ and nothing is
// ambiguous: a data: URL prefix, line breaks and spaces (MIME-style wrapping), the URL-safe
// alphabet and missing padding are all accepted.
func decodeBase64Image(s string) ([]byte, error) {
	if strings.HasPrefix(s, "data:") {
		comma := strings.IndexByte(s, ',')
		if comma < 0 || !strings.HasSuffix(s[:comma], ";base64") {
			return nil, badRequest("invalid_base64", `"image" is a data: URL without ";base64,"`)
		}
		s = s[comma+1:]
	}
	if strings.ContainsAny(s, " \t\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	s = strings.TrimRight(s, "=")
	if s == "" {
		return nil, badRequest("empty_image", `"image" is empty`)
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	out, err := enc.DecodeString(s)
	if err != nil {
		return nil, badRequest("invalid_base64", `"image" is not valid base64`)
	}
	return out, nil
}
