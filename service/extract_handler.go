package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/extract"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Extractor is what the HTTP layer needs from structured extraction.
type Extractor interface {
	Extract(ctx context.Context, s *extract.Schema, page *ocr.Result) (extract.Result, error)
}

// extractRequest is the body of /ocr-json: the image, and a template name or the caller's schema.
type extractRequest struct {
	Image    *imageField     `json:"image"`
	Template string          `json:"template"`
	Schema   json.RawMessage `json:"schema"`
}

// Headers with what an /ocr-json call cost, for callers tuning their use.
const (
	headerOCRTime      = "X-OCR-Time"
	headerChatTime     = "X-Chat-Time"
	headerChatAttempts = "X-Chat-Attempts"
)

// ocrJSON runs OCR on the image and has the chat model fill the schema. The schema and the chat
// configuration are checked before any OCR runs, so a request that cannot succeed fails fast. The
// OCR admission is given back before the chat call starts: a slow chat model must not hold the
// memory and slots that OCR requests wait for. Chat calls have their own gate.
func (s *Server) ocrJSON(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), s.opt.RequestTimeout)
	defer cancel()
	if s.extract == nil {
		return extract.ErrNotConfigured
	}
	leave, err := s.enter()
	if err != nil {
		return err
	}
	defer leave()

	if err := requireJSON(c.Get(fiber.HeaderContentType)); err != nil {
		return err
	}
	var req extractRequest
	if err := decodeBody(c.Body(), &req); err != nil {
		return err
	}
	schema, err := s.requestSchema(req)
	if err != nil {
		return err
	}
	if req.Image == nil {
		return badRequest("missing_image", `request body has no "image" field`)
	}
	img := req.Image.data

	ocrStart := time.Now()
	octx, release, err := s.admitImage(ctx, c, img)
	if err != nil {
		return err
	}
	page, err := s.runOCR(octx, img)
	release()
	leave()
	c.Set(headerOCRTime, seconds(time.Since(ocrStart)))
	if err != nil {
		return err
	}

	chatDone, err := s.admitChat(ctx)
	if err != nil {
		return err
	}
	defer chatDone()
	res, err := s.extract.Extract(ctx, schema, page)
	c.Set(headerChatTime, seconds(res.ChatTime))
	c.Set(headerChatAttempts, strconv.Itoa(res.Attempts))
	if s.metrics != nil && res.Attempts > 0 {
		s.metrics.Chat(res.ChatTime)
	}
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(res.Object)
}

// admitChat takes a chat slot (a no-op without a chat gate); 429 when the chat gate is full.
func (s *Server) admitChat(ctx context.Context) (func(), error) {
	if s.opt.ChatGate == nil {
		return func() {}, nil
	}
	release, err := s.opt.ChatGate.Acquire(ctx, 0)
	if err != nil {
		if errors.Is(err, admission.ErrOverloaded) {
			s.rejected("chat_overloaded")
			return nil, errChatOverloaded
		}
		return nil, err
	}
	return release, nil
}

// requestSchema picks the schema: the caller's own, or a template (invoice by default).
func (s *Server) requestSchema(req extractRequest) (*extract.Schema, error) {
	hasSchema := len(bytes.TrimSpace(req.Schema)) > 0 && string(bytes.TrimSpace(req.Schema)) != "null"
	switch {
	case hasSchema && req.Template != "":
		return nil, badRequest("schema_and_template", `send either "schema" or "template", not both`)
	case hasSchema:
		return extract.ParseSchema(req.Schema, s.opt.SchemaLimits)
	default:
		return extract.TemplateSchema(req.Template)
	}
}

// templates lists the built-in schemas.
func (s *Server) templates(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"default": extract.DefaultTemplate, "templates": extract.Templates()})
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
