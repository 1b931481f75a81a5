package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
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
