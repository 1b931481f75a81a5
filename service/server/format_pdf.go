package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/export"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/pdfengine"
	"github.com/ocrgate/ocrgate/service/pdffile"
)

// errNotRewritable answers a PDF whose structure the searchable PDF's writer cannot read (see
// package pdffile): a file PDFium read only by repairing it, or an encrypted one. The message
// is fixed: nothing of the file is repeated.
var errNotRewritable = &apiError{status: fiber.StatusUnprocessableEntity, code: "pdf_not_rewritable",
	msg: `this PDF's structure cannot be updated in place (its cross-reference is damaged, or it is encrypted); ask for "json", "text", "hocr" or "alto"`}

// writeDocumentPDF writes a document's answer as a searchable PDF: a PDF sent in is kept byte
// for byte and gets an incremental update laying invisible text over the pages OCR read (see
// export.UpdatePDF).
func (r *reading) writeDocumentPDF(ctx context.Context, c *fiber.Ctx, data []byte, res api.DocumentResult) error {
	if res.ImageInfo.Format == "tiff" {
		return r.writeTIFFPDF(ctx, c, data, res)
	}
	ocrd := map[int]api.Page{} // by page index
	for _, p := range res.Pages {
		if p.Source == "ocr" && p.Error == nil && p.Page >= 1 {
			ocrd[p.Page-1] = p
		}
	}
	if len(ocrd) == 0 {
		// Nothing to lay over any page: the file itself is the searchable PDF.
		c.Set(fiber.HeaderContentType, export.PDF.ContentType())
		return c.Send(data)
	}
	// The structure read (bounded by pdffile.MemoryBound) and the output, which the response
	// holds whole, are admitted before either is made.
	release, err := r.admitWrite(ctx, int64(len(data))+pdffile.MemoryBound(len(data)))
	if err != nil {
		return err
	}
	defer release()
	f, pages, err := readStructure(data, res, ocrd)
	if err != nil {
		// A file PDFium read by repairing it is read from PDFium's own save of it: every
		// object in one new, correct cross-reference table. Its pages draw as PDFium drew them
		// for OCR, but its bytes are PDFium's, not the file's. That copy (at most savedLimit)
		// and its structure are admitted too.
		saved := savedLimit(len(data))
		release, err := r.admitWrite(ctx, saved+pdffile.MemoryBound(int(saved)))
		if err != nil {
			return err
		}
		defer release()
		var b bytes.Buffer
		if err := r.savedByPDFium(ctx, data, &b, saved); err != nil {
			return err
		}
		data = b.Bytes()
		if f, pages, err = readStructure(data, res, ocrd); err != nil {
			return err
		}
		r.s.logger(c).Info("searchable PDF written over PDFium's save of the document", "bytes", len(data))
	}
	c.Set(fiber.HeaderContentType, export.PDF.ContentType())
	return export.UpdatePDF(c.Response().BodyWriter(), data, f, pages, ocrd, export.Software{Name: "ocrgate", Version: Version})
}

// admitWrite admits memory that writing an answer holds, or refuses the request (413) when it is
// more than one request may hold.
func (r *reading) admitWrite(ctx context.Context, cost int64) (func(), error) {
	if max := r.s.opt.MaxRequestCost; max > 0 && cost > max {
		return nil, &apiError{status: fiber.StatusRequestEntityTooLarge, code: "answer_too_large",
			msg: "a searchable PDF of this document needs more memory than one request may use; ask for json, text, hocr or alto"}
	}
	return r.adm.Admit(ctx, cost)
}

// savedLimit is the most bytes PDFium's save of a PDF of n bytes may take: a rewrite adds little
// to a file (a new cross-reference, objects written out of their object streams).
func savedLimit(n int) int64 { return 2*int64(n) + 1<<20 }

// savedByPDFium writes PDFium's save of a PDF, rewritten whole, to w (at most limit bytes).
func (r *reading) savedByPDFium(ctx context.Context, data []byte, w io.Writer, limit int64) error {
	doc, err := r.s.opt.Documents.Open(ctx, data)
	if err != nil {
		return err
	}
	defer func() { _ = doc.Close() }()
	if err := doc.SavePDF(ctx, w, limit); err != nil {
		if errors.Is(err, pdfengine.ErrSaveTooLarge) {
			return errNotRewritable
		}
		return err
	}
	return nil
}

// readStructure reads a PDF's cross-reference and page tree, and checks them against what PDFium
// read: the same number of pages, and each page to lay words over (ocrd, by index) of the shape
// PDFium drew. A file whose structure differs (PDFium repaired it) is refused rather than
// updated at the wrong objects.
func readStructure(data []byte, res api.DocumentResult, ocrd map[int]api.Page) (*pdffile.File, []pdffile.Page, error) {
	f, err := pdffile.Open(data)
	if err != nil {
		return nil, nil, errNotRewritable
	}
	pages, err := f.Pages(res.ImageInfo.Pages)
	if err != nil || len(pages) != res.ImageInfo.Pages {
		return nil, nil, errNotRewritable
	}
	for i, p := range ocrd {
		if i >= len(pages) || !sameShape(pages[i], p) {
			return nil, nil, errNotRewritable
		}
	}
	return f, pages, nil
}

// sameShape reports whether a page of the page tree has the shape of the page PDFium drew: its
// visible box, turned by /Rotate, has the answer's proportions within 1 % and a pixel of
// rounding (a page whose box PDFium read otherwise would get its words in the wrong places).
func sameShape(pg pdffile.Page, a api.Page) bool {
	w, h := pg.Box[2]-pg.Box[0], pg.Box[3]-pg.Box[1]
	if pg.Rotate == 90 || pg.Rotate == 270 {
		w, h = h, w
	}
	if a.Width <= 0 || a.Height <= 0 {
		return false
	}
	sx, sy := w/float64(a.Width), h/float64(a.Height)
	return math.Abs(sx/sy-1) <= 0.01+1/float64(min(a.Width, a.Height))
}

// errPageNotRead answers a TIFF asked for as a searchable PDF one of whose pages could not be
// read: the PDF would lack the page (its JSON answer says which and why).
var errPageNotRead = &apiError{status: fiber.StatusUnprocessableEntity, code: "page_not_read",
	msg: `a page of this document could not be read, so a searchable PDF of it would lack that page; ask for "json" to see which and why`}

// writeTIFFPDF writes a multi-page TIFF's answer as a searchable PDF: one page per TIFF page
// read, at its resolution, its pixels Flate-compressed and its words over them (see
// export.PDFWriter). Pages are decoded again one at a time, each admitted as its OCR was (its
// decode, and its samples and their compressed copy), and written before the next is decoded:
// a 50-page TIFF never holds more than one page's pixels.
func (r *reading) writeTIFFPDF(ctx context.Context, c *fiber.Ctx, data []byte, res api.DocumentResult) error {
	for _, p := range res.Pages {
		if p.Error != nil {
			return errPageNotRead
		}
	}
	doc, err := r.s.opt.Documents.Open(ctx, data)
	if err != nil {
		return err
	}
	defer func() { _ = doc.Close() }()
	c.Set(fiber.HeaderContentType, export.PDF.ContentType())
	w := export.NewPDFWriter(c.Response().BodyWriter(), export.Software{Name: "ocrgate", Version: Version})
	for _, a := range res.Pages {
		pg, err := doc.Page(ctx, a.Page)
		if err != nil {
			return err
		}
		if err := r.tiffPage(ctx, doc, pg, a, w); err != nil {
			return err
		}
	}
	return w.Close()
}

// tiffPage decodes one TIFF page (smaller, as its OCR did, when it is too large to hold whole)
// and writes it with its answer.
func (r *reading) tiffPage(ctx context.Context, doc *docfile.Document, pg *docfile.Page, a api.Page, w *export.PDFWriter) error {
	cost := func(p *docfile.Page) int64 {
		rc := p.RenderCost(1)
		return rc.Bytes + 2*3*rc.Pixels // the decode, its RGB samples, their compressed copy
	}
	shrink := 1
	if max := r.s.opt.MaxRequestCost; max > 0 {
		for k := 2; cost(pg) > max && k <= imaging.MaxShrink; k++ {
			s, ok := doc.Smaller(pg, k)
			if !ok {
				break
			}
			pg, shrink = s, k
		}
	}
	release, err := r.admitWrite(ctx, cost(pg))
	if err != nil {
		return err
	}
	defer release()
	dec, err := doc.Render(ctx, pg, 1, nil)
	if err != nil {
		return err
	}
	img := export.SamplesOf(dec.Image)
	img.DPI = pg.DPI / float64(shrink)
	return w.AddPage(export.PDFPage{Image: img, Answer: a})
}
