package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/ocrgate/ocrgate/api"
)

// The forms /ocr answers in besides JSON (see OCRAs).
const (
	FormatJSON = "json"
	FormatText = "text" // the text in reading order, pages separated by a form feed
	FormatHOCR = "hocr" // hOCR 1.2 (XHTML)
	FormatALTO = "alto" // ALTO 4.4 XML
	FormatPDF  = "pdf"  // a searchable PDF: the pages as sent, invisible text on their words
)

// OCRAs reads image as OCR does and returns the answer in format (FormatText, FormatHOCR,
// FormatALTO, FormatPDF or FormatJSON): its bytes as the service sent them. A failure is an *Error, in
// JSON whatever the format.
func (c *Client) OCRAs(ctx context.Context, image []byte, format string, opts ...CallOption) ([]byte, error) {
	cl := newCall(opts)
	body, err := json.Marshal(api.OCRRequest{Image: base64.StdEncoding.EncodeToString(image), Format: format, ReadFields: cl.read})
	if err != nil {
		return nil, err
	}
	raw, _, err := c.do(ctx, http.MethodPost, "/ocr", jsonPayload(body), cl)
	return raw, err
}

// OCRFileAs is OCRAs on the file at path, streamed from disk as OCRFile streams it.
func (c *Client) OCRFileAs(ctx context.Context, path, format string, opts ...CallOption) ([]byte, error) {
	cl := newCall(opts)
	body, err := filePayload(path, cl, false)
	if err != nil {
		return nil, err
	}
	body.query.Set("format", format)
	raw, _, err := c.do(ctx, http.MethodPost, "/ocr", body, cl)
	return raw, err
}
