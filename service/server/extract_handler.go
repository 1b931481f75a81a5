package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/extract"
)

// Extractor is what the HTTP layer needs from structured extraction: one object filled from the
// text of an image (one unnumbered page) or of a document's pages.
type Extractor interface {
	ExtractDocument(ctx context.Context, s *extract.Schema, pages []extract.Page) (extract.Result, error)
}

// extractRequest is the body of /ocr-json: the image (or document), a template name or the
// caller's schema, and how to read the document (pages, ocr, options; words changes nothing
// here).
type extractRequest struct {
	Image    *imageField     `json:"image"`
	Images   presence        `json:"images"`
	Template string          `json:"template"`
	Schema   json.RawMessage `json:"schema"`
	readFields
}

// Headers with what an /ocr-json call cost, for callers tuning their use.
const (
	headerOCRTime      = "X-OCR-Time"
	headerChatTime     = "X-Chat-Time"
	headerChatAttempts = "X-Chat-Attempts"
	// headerChatTextCut names the first page whose text the chat model did not get in full,
	// when a document's text is longer than OCRGATE_CHAT_MAX_TEXT.
	headerChatTextCut = "X-Chat-Text-Cut"
	// headerFailedPages lists the pages of a document that could not be read (comma-separated
	// numbers): the chat model got the others.
	headerFailedPages = "X-Failed-Pages"
)

// ocrJSON runs OCR on the image and has the chat model fill the schema. The schema and the chat
// configuration are checked before any OCR runs, so a request that cannot succeed fails fast. The
// OCR admission is given back before the chat call starts: a slow chat model must not hold the
// memory and slots that OCR requests wait for. Chat calls have their own gate.
func (s *Server) ocrJSON(c *fiber.Ctx) error {
	start := time.Now()
	ctx, cancel := s.requestContext(c)
	defer cancel()
	if s.extract == nil {
		return extract.ErrNotConfigured
	}
	// As for /ocr: refused before the body is read when saturated, a place in the gate taken
	// once the body is here.
	if err := s.full(); err != nil {
		return err
	}
	req, err := s.readRequest(ctx, c, extractEndpoint)
	if err != nil {
		return err
	}
	leave, err := s.enter()
	if err != nil {
		return err
	}
	defer leave()
	schema, err := s.requestSchema(req)
	if err != nil {
		return err
	}
	if req.batch {
		return req.notOne()
	}
	if len(req.images) == 0 {
		return req.missing()
	}
	r, err := s.newReading(req.read)
	if err != nil {
		return err
	}
	defer r.budget.Release()
	img := req.images[0].data

	pages, failed, err := r.pages(ctx, img, start)
	leave() // every OCR admission is back by now; the chat call has its own gate
	c.Set(headerOCRTime, seconds(time.Since(start)))
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		c.Set(headerFailedPages, failed)
	}
	// A document's chat call gets what is left of its deadline; an image's, its own.
	if len(pages) == 1 && pages[0].Number == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(s.opt.RequestTimeout))
		defer cancel()
	}

	chatDone, err := s.admitChat(ctx)
	if err != nil {
		return err
	}
	defer chatDone()
	res, err := s.extract.ExtractDocument(ctx, schema, pages)
	c.Set(headerChatTime, seconds(res.ChatTime))
	c.Set(headerChatAttempts, strconv.Itoa(res.Attempts))
	if res.CutAtPage > 0 {
		c.Set(headerChatTextCut, strconv.Itoa(res.CutAtPage))
	}
	if res.Attempts > 0 {
		s.metrics.Chat(res.ChatTime)
	}
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(res.Object)
}

// pages reads the image or document for the chat model: an image is one unnumbered page; a
// document's selected pages keep their numbers, for the page markers. A document's pages that
// could not be read are left out, and listed in failed ("2,5").
func (r *reading) pages(ctx context.Context, data []byte, start time.Time) (pages []extract.Page, failed string, err error) {
	if r.s.opt.Documents != nil && docfile.Detect(data) != "" {
		res, err := r.document(ctx, data, start)
		if err != nil {
			return nil, "", err
		}
		var bad []string
		for _, p := range res.Read {
			if p.Err != nil {
				bad = append(bad, strconv.Itoa(p.Number))
				continue
			}
			pages = append(pages, extract.Page{Number: p.Number, Result: p.Result})
		}
		return pages, strings.Join(bad, ","), nil
	}
	res, err := r.image(ctx, data, start)
	if err != nil {
		return nil, "", err
	}
	return []extract.Page{{Result: res}}, "", nil
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
func (s *Server) requestSchema(req *apiRequest) (*extract.Schema, error) {
	hasSchema := len(bytes.TrimSpace(req.schema)) > 0 && string(bytes.TrimSpace(req.schema)) != "null"
	switch {
	case hasSchema && req.template != "":
		return nil, badRequest("schema_and_template", `send either "schema" or "template", not both`)
	case hasSchema:
		return extract.ParseSchema(req.schema, s.opt.SchemaLimits)
	default:
		return extract.TemplateSchema(req.template)
	}
}

// templates lists the built-in schemas.
func (s *Server) templates(c *fiber.Ctx) error {
	ts := extract.Templates()
	body := api.Templates{Default: extract.DefaultTemplate, Templates: make([]api.Template, len(ts))}
	for i, t := range ts {
		body.Templates[i] = api.Template{Name: t.Name, Description: t.Description, Schema: t.Schema}
	}
	return c.JSON(body)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
