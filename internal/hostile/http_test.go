package hostile

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"strings"
	"testing"
	"time"
)

func TestMultipartFlood(t *testing.T) {
	ct, body := MultipartFlood(1000)
	_, params, err := mime.ParseMediaType(ct)
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	n := 0
	for {
		_, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1000 {
		t.Fatalf("%d parts, want 1000", n)
	}
}

// TestForms: the hand-built forms are what they say, read by mime/multipart: so many parts, or
// an error where the form is broken.
func TestForms(t *testing.T) {
	parts := func(body []byte) (int, error) {
		r := multipart.NewReader(bytes.NewReader(body), "b")
		for n := 0; ; n++ {
			p, err := r.NextPart()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			if _, err := io.Copy(io.Discard, p); err != nil {
				return n, err
			}
		}
	}
	if ct := FormContentType; ct != "multipart/form-data; boundary=b" {
		t.Fatalf("content type %q", ct)
	}
	for _, tt := range []struct {
		name   string
		body   []byte
		parts  int // at least
		broken bool
	}{
		{"file flood", MultipartFileFlood(1 << 20), 10000, false},
		{"head flood", MultipartHeadFlood(1 << 20), 140, false},
		{"nested", MultipartNested(1000), 1, false},
		{"unterminated", MultipartUnterminated(1000), 0, true},
	} {
		n, err := parts(tt.body)
		if tt.broken != (err != nil) || n < tt.parts || len(tt.body) < 1000 {
			t.Errorf("%s: %d parts, %v (%d bytes)", tt.name, n, err, len(tt.body))
		}
	}
}

// TestHeadOnly: the attack sends a head and nothing of its body, and ends with its context.
func TestHeadOnly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(time.Second))
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	HeadOnly(ctx, ln.Addr().String(), "/ocr", 20<<20)
	head := <-got
	if !strings.HasSuffix(head, "Content-Length: 20971520\r\n\r\n") {
		t.Fatalf("sent %q", head)
	}
}

// TestSlowUploadHearsAnEarlyAnswer: a server that answers after the head, without reading the
// body, is heard at once, long before the body would have been sent.
func TestSlowUploadHearsAnEarlyAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		head := make([]byte, 0, 512)
		buf := make([]byte, 1)
		for !strings.HasSuffix(string(head), "\r\n\r\n") {
			if _, err := c.Read(buf); err != nil {
				return
			}
			head = append(head, buf[0])
		}
		io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy")
		io.Copy(io.Discard, c)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	status, body, err := SlowUpload(ctx, ln.Addr().String(), "/ocr", 1<<20, 100, 1, 50*time.Millisecond)
	if err != nil || status != 503 || string(body) != "busy" {
		t.Fatalf("got %d %q, %v", status, body, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the answer was heard after %v", took)
	}
}
