package server

import (
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/export"
)

// answerFormat is the form /ocr answers in: the request's "format" member (or query parameter,
// or form field) when it sent one, otherwise what its Accept header asks for (see
// export.FromAccept), JSON when it asks for nothing in particular. An unknown "format" is a 400;
// an Accept header that names only types no format has is a 406. Neither message repeats what
// was sent.
func answerFormat(member json.RawMessage, accept string) (export.Format, error) {
	if present(member) {
		var name string
		if err := json.Unmarshal(member, &name); err == nil {
			if f, ok := export.Parse(name); ok {
				return f, nil
			}
		}
		return "", badRequest("invalid_format", `"format" must be one of %s`, export.Names())
	}
	f, ok := export.FromAccept(accept)
	if !ok {
		return "", &apiError{status: fiber.StatusNotAcceptable, code: "not_acceptable",
			msg: fmt.Sprintf(`the Accept header names no type /ocr answers in; send "format" (%s) or accept %s`, export.Names(), acceptableTypes())}
	}
	return f, nil
}

// acceptableTypes lists the media types of every format, for the 406's message.
func acceptableTypes() string {
	s := ""
	for i, f := range export.Formats {
		if i > 0 {
			s += ", "
		}
		s += f.ContentType()
	}
	return s
}

// writeAnswer writes one image's or document's answer (api.OCRResult or api.DocumentResult) in
// format f. JSON is written as it always was; the other formats are written from the same answer
// by package export, which is no longer than its JSON with words (what the answer is priced at).
func (s *Server) writeAnswer(c *fiber.Ctx, f export.Format, ans any) error {
	var pages []api.Page
	switch a := ans.(type) {
	case api.OCRResult:
		pages = []api.Page{export.ImagePage(a)}
	case api.DocumentResult:
		pages = a.Pages
	}
	if f == export.JSON || pages == nil {
		return c.JSON(ans)
	}
	c.Set(fiber.HeaderContentType, f.ContentType())
	return export.Write(c.Response().BodyWriter(), f, pages, export.Software{Name: "ocrgate", Version: Version})
}
