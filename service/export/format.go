// Package export writes an OCR answer in the forms a document workflow keeps instead of JSON:
// plain text, hOCR, ALTO XML, and a searchable PDF of an image (PDFWriter). The writers are fed the answer the service already builds (the
// api types: pages, blocks, regions, words with their boxes and confidences, rotation, source), so
// that every format says exactly what the JSON says, and they write to an io.Writer as they go.
package export

import (
	"mime"
	"slices"
	"strconv"
	"strings"
)

// Format is an answer's form, as a request names it.
type Format string

// The formats /ocr answers in.
const (
	JSON Format = "json" // the default: api.OCRResult or api.DocumentResult
	Text Format = "text" // the text in reading order, pages separated by a form feed
	HOCR Format = "hocr" // hOCR 1.2 (XHTML)
	ALTO Format = "alto" // ALTO 4.4 XML, in pixels
	PDF  Format = "pdf"  // a searchable PDF: the picture with invisible text on its words (PDFWriter)
)

// Formats lists every format, for the message that refuses an unknown one.
var Formats = []Format{JSON, Text, HOCR, ALTO, PDF}

// Names is Formats as one comma-separated list.
func Names() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Parse returns the format a request names; false for a name it does not know.
func Parse(name string) (Format, bool) {
	f := Format(strings.ToLower(strings.TrimSpace(name)))
	return f, slices.Contains(Formats, f)
}

// ContentType is the media type an answer in f is sent with. hOCR and ALTO have no registered
// types; these are the ones the tools that read them recognize, and the ones Accept picks them by.
func (f Format) ContentType() string {
	switch f {
	case Text:
		return "text/plain; charset=utf-8"
	case HOCR:
		return "text/vnd.hocr+html; charset=utf-8"
	case ALTO:
		return "application/alto+xml; charset=utf-8"
	case PDF:
		return "application/pdf"
	}
	return "application/json"
}

// mediaTypes are the types of an Accept header that pick a format. Generic types a browser sends
// with every navigation (text/html, application/xml, */*) pick none: a form posted from a page
// must keep getting JSON, not hOCR.
var mediaTypes = map[string]Format{
	"application/json":         JSON,
	"text/plain":               Text,
	"text/vnd.hocr+html":       HOCR,
	"application/alto+xml":     ALTO,
	"application/vnd.alto+xml": ALTO,
	"application/pdf":          PDF,
}

// FromAccept picks the format an Accept header asks for: its most preferred media type that
// names one (ties in the header's order). An empty header, or one that accepts anything (*/*,
// application/*), is JSON. ok is false when the header names only types no format has: the
// answer is then 406 Not Acceptable.
func FromAccept(header string) (f Format, ok bool) {
	if strings.TrimSpace(header) == "" {
		return JSON, true
	}
	best, bestQ := Format(""), -1.0
	wildcard := false
	for _, part := range strings.Split(header, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				q = x
			}
		}
		if q <= 0 {
			continue
		}
		if mt == "*/*" || mt == "application/*" {
			wildcard = true
			continue
		}
		if g, ok := mediaTypes[mt]; ok && q > bestQ {
			best, bestQ = g, q
		}
	}
	switch {
	case best != "":
		return best, true
	case wildcard:
		return JSON, true
	}
	return "", false
}
