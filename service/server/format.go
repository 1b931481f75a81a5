package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/export"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/tiffdec"
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

// writePDF writes an image's answer as a searchable PDF: one page the image's size at its
// resolution, the image as its picture, invisible text on every word. A JPEG stored upright is
// embedded as it was sent (not decoded, not re-encoded); any other image is decoded again, under
// an admission of its own as its OCR had, and embedded as compressed samples.
func (r *reading) writePDF(ctx context.Context, c *fiber.Ctx, data []byte, ans any) error {
	res, ok := ans.(api.OCRResult)
	if !ok {
		return fmt.Errorf("server: a searchable PDF of a %T", ans)
	}
	h, err := r.rec.Inspect(ctx, data)
	if err != nil {
		return err
	}
	var img export.PDFImage
	if h.Format == "jpeg" && h.Orientation <= 1 && export.EmbeddableJPEG(data) {
		img = export.PDFImage{JPEG: data, Width: h.Width, Height: h.Height}
	} else {
		h, lease, release, err := r.admitImage(ctx, data)
		if err != nil {
			return err
		}
		defer release()
		dec, err := imaging.DecodeHeader(ctx, data, h, lease)
		if err != nil {
			return err
		}
		img = export.SamplesOf(dec.Image)
		if h.Format == "tiff" {
			img.DPI = tiffDPI(ctx, data) * float64(img.Width) / float64(max(1, res.ImageInfo.Width))
		}
	}
	c.Set(fiber.HeaderContentType, export.PDF.ContentType())
	w := export.NewPDFWriter(c.Response().BodyWriter(), export.Software{Name: "ocrgate", Version: Version})
	if err := w.AddPage(export.PDFPage{Image: img, Answer: export.ImagePage(res)}); err != nil {
		return err
	}
	return w.Close()
}

// tiffDPI is a one-page TIFF's resolution in dots per inch (0 when it states none): its page is
// that size in the PDF. The file was read once already; its directory is read again, not its
// pixels.
func tiffDPI(ctx context.Context, data []byte) float64 {
	f, err := tiffdec.Open(ctx, data, tiffdec.Limits{FirstPage: true})
	if err != nil || len(f.Pages) == 0 {
		return 0
	}
	return f.Pages[0].DPI()
}
