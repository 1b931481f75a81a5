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
