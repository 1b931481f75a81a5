package server

import (
	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/openapi"
	"github.com/ocrgate/ocrgate/service/ui"
)

// page serves the demo page at GET / and its script and stylesheet under /ui/. The page is public
// (it holds nothing secret); the API calls it makes need the key like any other client's.
func (s *Server) page(c *fiber.Ctx) error {
	name := ui.Index
	if c.Path() != "/" {
		name = c.Params("file")
	}
	f, ok := ui.Lookup(name)
	if !ok {
		return fiber.ErrNotFound
	}
	c.Set(fiber.HeaderCacheControl, "no-cache") // revalidate with the ETag: cheap, never stale
	c.Set(fiber.HeaderETag, f.ETag)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if name == ui.Index {
		c.Set(fiber.HeaderContentSecurityPolicy, ui.ContentSecurityPolicy)
		c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	}
	if c.Get(fiber.HeaderIfNoneMatch) == f.ETag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, f.ContentType)
	return c.Send(f.Body)
}

// openAPI serves the OpenAPI document. Like the page it is public: it describes the API, it does
// not grant access to it.
func (s *Server) openAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(openapi.Document)
}
