package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
)

// OCRFile reads the text of the image or document in the file at path, as OCR does, sending
// the file itself as the request's body (with its media type, options as query parameters)
// rather than as base64 JSON: the file is streamed from disk, never held in memory whole, and
// the service's body limit is the file's size. A retry reads the file again.
func (c *Client) OCRFile(ctx context.Context, path string, opts ...CallOption) (*OCRResult, error) {
	cl := newCall(opts)
	body, err := filePayload(path, cl, false)
	if err != nil {
		return nil, err
	}
	raw, hdr, err := c.do(ctx, http.MethodPost, "/ocr", body, cl)
	if err != nil {
		return nil, err
	}
	return ocrResult(raw, hdr)
}

// ExtractFile is Extract on the file at path, streamed as OCRFile streams it: the file itself
// as the body, or, with a Schema, a multipart/form-data body of the file and the schema.
func (c *Client) ExtractFile(ctx context.Context, path string, opts ...CallOption) (*Extraction, error) {
	cl := newCall(opts)
	if cl.template != "" && len(cl.schema) > 0 {
		return nil, errTemplateAndSchema
	}
	if len(cl.schema) > 0 && !json.Valid(cl.schema) {
		return nil, fmt.Errorf("ocrgate: schema is not JSON")
	}
	body, err := filePayload(path, cl, true)
	if err != nil {
		return nil, err
	}
	raw, hdr, err := c.do(ctx, http.MethodPost, "/ocr-json", body, cl)
	if err != nil {
		return nil, err
	}
	return extraction(raw, hdr), nil
}

// filePayload sends the file at path: the file as the body, the call's options as query
// parameters; with a schema (extract), a form of the file and a "schema" field, whose framing is
// written around the file so that its length is known and the file is still streamed.
func filePayload(path string, cl *call, extract bool) (payload, error) {
	f, err := os.Open(path)
	if err != nil {
		return payload{}, fmt.Errorf("ocrgate: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	st, err := f.Stat()
	if err != nil {
		return payload{}, fmt.Errorf("ocrgate: %w", err)
	}
	if !st.Mode().IsRegular() {
		return payload{}, fmt.Errorf("ocrgate: %s is not a regular file", path)
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return payload{}, fmt.Errorf("ocrgate: %w", err)
	}
	ctype := sniff(head[:n])
	size := st.Size()
	q := cl.query(extract)
	openFile := func() (io.ReadCloser, error) { return os.Open(path) }
	if !extract || len(cl.schema) == 0 {
		return payload{open: openFile, size: size, ctype: ctype, query: q}, nil
	}
	// The form: its head (the file part's head) and tail (the schema field, the closing
	// boundary) written by mime/multipart, the file's bytes streamed between them.
	var before, after bytes.Buffer
	out := &switching{w: &before}
	w := multipart.NewWriter(out)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": filepath.Base(path)}))
	h.Set("Content-Type", ctype)
	if _, err := w.CreatePart(h); err != nil {
		return payload{}, err
	}
	out.w = &after
	if err := w.WriteField("schema", string(cl.schema)); err != nil {
		return payload{}, err
	}
	if err := w.Close(); err != nil {
		return payload{}, err
	}
	open := func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return readCloser{io.MultiReader(bytes.NewReader(before.Bytes()), f, bytes.NewReader(after.Bytes())), f}, nil
	}
	return payload{open: open, size: int64(before.Len()) + size + int64(after.Len()), ctype: w.FormDataContentType(), query: q}, nil
}

// query is the call's options as the query parameters the service takes beside a file.
func (cl *call) query(extract bool) url.Values {
	q := url.Values{}
	if cl.read.Pages != "" {
		q.Set("pages", cl.read.Pages)
	}
	if cl.read.OCR != "" {
		q.Set("ocr", cl.read.OCR)
	}
	if cl.read.Words {
		q.Set("words", "true")
	}
	if cl.read.Lang != "" {
		q.Set("lang", cl.read.Lang)
	}
	for name, v := range cl.read.Options {
		if s, ok := v.(string); ok {
			q.Set(name, s)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		q.Set(name, string(b))
	}
	if extract && cl.template != "" {
		q.Set("template", cl.template)
	}
	return q
}

// sniff is the media type of a file from its first bytes (what the service reads it by in any
// case): Go's content sniffing, and TIFF, which it does not know.
func sniff(head []byte) string {
	if bytes.HasPrefix(head, []byte("II*\x00")) || bytes.HasPrefix(head, []byte("MM\x00*")) {
		return "image/tiff"
	}
	switch ct, _, _ := mime.ParseMediaType(http.DetectContentType(head)); ct {
	case "application/pdf", "image/jpeg", "image/png", "image/gif", "image/bmp", "image/webp", "image/x-icon":
		return ct
	}
	return "application/octet-stream"
}

// switching writes to w, which can be changed between writes.
type switching struct{ w io.Writer }

func (s *switching) Write(p []byte) (int, error) { return s.w.Write(p) }

type readCloser struct {
	io.Reader
	io.Closer
}
