// Package framing guards an HTTP/1.1 server's connections. It reads each request's head before
// the server does and refuses the framings that two HTTP parsers can read differently — the root
// of request smuggling behind a proxy — and the malformed heads the server itself would answer in
// its own words:
//
//   - lines ended by a bare LF or a bare CR (fasthttp accepts a bare LF; a proxy may not),
//   - two Content-Length values that differ, or Content-Length together with Transfer-Encoding,
//   - any transfer coding but chunked, or a malformed chunk,
//   - header lines folded over several lines, without a colon, or with space before the colon,
//   - a request line that is not "METHOD target HTTP/1.x", or an unknown method,
//   - a head larger than the server reads.
//
// A refused head is never handed to the server whole: the server receives its first byte and then
// a read error, so it answers through its own error handler (which asks Rejection for the status)
// and closes the connection. What follows on that connection is never parsed.
//
// fasthttp, under Fiber, has no setting for any of this. Fiber exposes no hook between reading the
// head and acting on it, and by the time a handler runs, fasthttp has merged duplicate headers
// and read the body its own way; so the check sits where the bytes come in, as a net.Listener.
//
// The guard also drains: when the server closes a connection without reading a request's body
// (413 for a body over its limit), the client is usually still sending it, and closing a socket
// with unread data makes the kernel reset the connection, so a client that sends its whole body
// before reading (no "Expect: 100-continue": Python's http.client, urllib) sees a reset instead of
// the answer. On Close the guard first shuts its side for writing (the answer is already sent),
// then reads and drops the rest of the body, up to a bound in bytes and time.
package framing

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options bound what the guard reads.
type Options struct {
	// MaxHeadBytes is the largest request head (request line and headers) accepted; a larger one
	// is refused with 431. Use the server's read buffer size, which bounds its own head.
	MaxHeadBytes int
	// DrainBytes and DrainTimeout bound what Close reads of a body the server left unread.
	DrainBytes   int64
	DrainTimeout time.Duration
	// MaxBodyBytes refuses, with 413, a head that announces a longer body (0: no bound): the
	// server reads bodies as they come, and would otherwise wait for the body to start.
	MaxBodyBytes int64
	// FormOverhead is how much longer than MaxBodyBytes a multipart/form-data body may be: its
	// boundaries, part heads and fields, so that MaxBodyBytes of files fit in it.
	FormOverhead int64
	// BodyLimit, when set, is the body limit of a request whose method and path (the target
	// without its query) it knows, in place of MaxBodyBytes (FormOverhead still added for a
	// form); 0 for the others. A route that streams its bodies somewhere other than memory (a
	// job's document into the job store) takes bigger ones than the rest.
	BodyLimit func(method, path []byte) int64
	// MaxConns bounds the connections open at once (0: no bound). At the bound, a new connection
	// takes the place of one that waits idle for its next request (closing an idle keep-alive
	// connection is every server's right); when none is idle, it is answered Refusal and closed
	// without being handed to the server.
	MaxConns int
	// Refusal is the whole HTTP response written to a connection refused at MaxConns.
	Refusal []byte
}

// Error is a refused request head: the status and stable code to answer with, and a message for
// people. It deliberately does not implement net.Error (Fiber answers network errors with 502).
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return "framing: " + e.Msg }

func refuse(code, msg string) *Error { return &Error{Status: 400, Code: code, Msg: msg} }

// Rejection returns the framing error that made the guard refuse a request on c, or nil (also
// when c is not a guarded connection).
func Rejection(c net.Conn) *Error {
	if g, ok := c.(*conn); ok {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.rejected
	}
	return nil
}

// Listen wraps l so that every connection it accepts is guarded.
func Listen(l net.Listener, opt Options) net.Listener {
	if opt.MaxHeadBytes <= 0 {
		opt.MaxHeadBytes = 4096
	}
	return &listener{Listener: l, opt: opt, conns: map[*conn]struct{}{}}
}

type listener struct {
	net.Listener
	opt Options

	mu       sync.Mutex
	conns    map[*conn]struct{} // open and counted
	refusing atomic.Int64       // refusals being written
}

// maxRefusing bounds the refusals written at once; beyond, a connection is closed unanswered.
const maxRefusing = 64

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		g := &conn{Conn: c, opt: l.opt, l: l}
		if l.admit(g) {
			return g, nil
		}
		l.refuse(c)
	}
}

// admit counts c among the open connections when there is room, making room by closing an idle
// one at the bound.
func (l *listener) admit(c *conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opt.MaxConns > 0 && len(l.conns) >= l.opt.MaxConns {
		var idle *conn
		for o := range l.conns {
			if o.idle.Load() {
				idle = o
				break
			}
		}
		if idle == nil {
			return false
		}

		delete(l.conns, idle)
		// The server's read on it ends with an error, before any byte of a request: it
		// closes the connection without an answer, as for a client that went away.
		_ = idle.Conn.Close()
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *listener) forget(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// Open returns the connections open now (counted against MaxConns).
func Open(ln net.Listener) int {
	if l, ok := ln.(*listener); ok {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.conns)
	}
	return 0
}

// refuse answers a connection over the bound with Refusal and closes it, reading what the
// client sends for a moment so that its request's bytes do not make the kernel reset the
// connection before the client reads the answer.
func (l *listener) refuse(c net.Conn) {
	if len(l.opt.Refusal) == 0 || l.refusing.Add(1) > maxRefusing {
		if len(l.opt.Refusal) > 0 {
			l.refusing.Add(-1)
		}
		_ = c.Close()
		return
	}
	go func() {
		defer l.refusing.Add(-1)
		defer func() { _ = c.Close() }()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(l.opt.Refusal); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		var sink [4096]byte
		for n := 0; n < 64<<10; {
			m, err := c.Read(sink[:])
			n += m
			if err != nil {
				return
			}
		}
	}()
}

// What the guard expects next on a connection.
const (
	inHead      = iota // a request head
	inBody             // a fixed-length body: left bytes to go
	inChunkSize        // a chunk-size line
	inChunkData        // chunk data: left bytes to go, then CRLF
	inChunkCRLF        // the CRLF after chunk data
	inTrailer          // trailer fields after the last chunk, up to an empty line
)

type conn struct {
	net.Conn
	opt Options
	l   *listener

	// idle: the server waits for the first byte of a request, and none is buffered.
	idle atomic.Bool
	// overLimit: the head was refused for the length of its body, which Close drains.
	overLimit bool

	// The read deadline the server last set, restored when a watch ends (see Watch).
	deadline time.Time

	raw   []byte // received, not yet checked
	out   []byte // checked, not yet handed to the server
	state int
	left  int64 // bytes of body or chunk data to go
	// firstOut: the first byte of the current head has been handed over already (the server
	// waits for one byte before it starts its read timeout).
	firstOut bool

	readErr  error // sticky: the network's error, or the rejection
	received int64 // bytes read from the network

	// What other goroutines may look at: the rejection (the server's error handler), and
	// whether a body is being read (Close, which the server may call from another goroutine
	// when it shuts idle connections down).
	mu       sync.Mutex
	rejected *Error
	midBody  atomic.Bool
}

func (c *conn) Read(p []byte) (int, error) {
	defer func() { c.midBody.Store(c.state != inHead && (c.readErr == nil || c.overLimit)) }()
	if c.state == inBody && len(c.out) == 0 && len(c.raw) == 0 && c.readErr == nil && len(p) > 0 {
		// The bulk of a large body goes straight to the server's buffer.
		n, err := c.Conn.Read(p[:min(int64(len(p)), c.left)])
		c.received += int64(n)
		c.left -= int64(n)
		if c.left == 0 {
			c.state = inHead
		}
		if n == 0 && err != nil {
			c.readErr = err
		}
		return n, err
	}
	for len(c.out) == 0 {
		if c.readErr != nil {
			return 0, c.readErr
		}
		if err := c.advance(); err != nil {
			var fe *Error
			if errors.As(err, &fe) {
				c.mu.Lock()
				c.rejected = fe
				c.mu.Unlock()
			}
			c.readErr = err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// fill reads more from the network into raw.
func (c *conn) fill() error {
	if cap(c.raw)-len(c.raw) < 4096 {
		c.raw = append(make([]byte, 0, len(c.raw)+4096), c.raw...)
	}
	n, err := c.Conn.Read(c.raw[len(c.raw):cap(c.raw)])
	c.raw = c.raw[:len(c.raw)+n]
	c.received += int64(n)
	if n > 0 {
		return nil
	}
	return err
}

// advance checks the next piece of input and moves it to out, reading from the network when it
// needs more. It returns a network error, or an *Error for a refused framing.
func (c *conn) advance() error {
	switch c.state {
	case inHead:
		for {
			// RFC 9112 2.2: empty lines before a request line are ignored (some clients
			// send a CRLF after a body).
			for !c.firstOut && len(c.raw) >= 2 && c.raw[0] == '\r' && c.raw[1] == '\n' {
				c.raw = c.raw[2:]
			}
			if len(c.raw) == 1 && c.raw[0] == '\r' && !c.firstOut {
				if err := c.fill(); err != nil {
					return err
				}
				continue
			}
			if len(c.raw) > 0 && !c.firstOut {
				// The first byte alone completes nothing; handing it over lets the server
				// start its read timeout, and lets it see a refused head's error as an error
				// in the middle of a request rather than a closed idle connection.
				c.out = append(c.out, c.raw[0])
				c.firstOut = true
				return nil
			}
			end, err := c.headEnd()
			if err != nil {
				return err
			}
			if end > 0 {
				return c.head(end)
			}
			if len(c.raw) >= c.opt.MaxHeadBytes {
				return &Error{Status: 431, Code: "header_too_large", Msg: "request headers are larger than the server accepts"}
			}
			c.idle.Store(len(c.raw) == 0 && !c.firstOut)
			err = c.fill()
			c.idle.Store(false)
			if err != nil {
				return err
			}
		}
	case inBody, inChunkData:
		if len(c.raw) == 0 {
			if err := c.fill(); err != nil {
				return err
			}
		}
		n := int(min(int64(len(c.raw)), c.left))
		c.pass(n)
		c.left -= int64(n)
		if c.left == 0 {
			c.state = map[int]int{inBody: inHead, inChunkData: inChunkCRLF}[c.state]
		}
		return nil
	case inChunkCRLF:
		for len(c.raw) < 2 {
			if err := c.fill(); err != nil {
				return err
			}
		}
		if c.raw[0] != '\r' || c.raw[1] != '\n' {
			return refuse("bad_chunk", "chunk data is not followed by CRLF")
		}
		c.pass(2)
		c.state = inChunkSize
		return nil
	case inChunkSize, inTrailer:
		for {
			i := bytes.IndexByte(c.raw, '\n')
			if i >= 0 {
				return c.chunkLine(i)
			}
			if len(c.raw) > c.opt.MaxHeadBytes {
				return refuse("bad_chunk", "chunk line too long")
			}
			if err := c.fill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// pass moves n checked bytes from raw to out.
func (c *conn) pass(n int) {
	c.out = append(c.out, c.raw[:n]...)
	c.raw = c.raw[n:]
	if len(c.raw) == 0 {
		c.raw = nil // let the buffer go between requests
	}
}

// headEnd returns the length of the head in raw (through its empty line), 0 when it is not
// complete yet, or an error for a bare CR or LF, or a NUL.
func (c *conn) headEnd() (int, error) {
	for i := 0; i < len(c.raw); i++ {
		switch c.raw[i] {
		case '\n':
			if i == 0 || c.raw[i-1] != '\r' {
				return 0, refuse("bare_lf", "a line of the request head ends with LF alone; HTTP needs CRLF")
			}
			if i >= 3 && c.raw[i-2] == '\n' && c.raw[i-3] == '\r' {
				return i + 1, nil
			}
		case '\r':
			if i+1 < len(c.raw) && c.raw[i+1] != '\n' {
				return 0, refuse("bare_cr", "the request head holds a CR that is not followed by LF")
			}
		case 0:
			return 0, refuse("bad_request", "the request head holds a NUL byte")
		}
	}
	return 0, nil
}

// methods the server knows. Fiber answers others in plain text, outside its error handler.
var methods = map[string]bool{
	"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true,
}

// head checks a complete head of n bytes, hands it over and sets up its body's framing.
func (c *conn) head(n int) error {
	lines := bytes.Split(c.raw[:n-4], []byte("\r\n"))
	parts := bytes.Split(lines[0], []byte(" "))
	if len(parts) != 3 || len(parts[1]) == 0 || !visible(parts[1]) ||
		!bytes.Equal(parts[2], []byte("HTTP/1.1")) && !bytes.Equal(parts[2], []byte("HTTP/1.0")) {
		return refuse("bad_request_line", `the request line is not "METHOD target HTTP/1.1"`)
	}
	if !methods[string(parts[0])] {
		return &Error{Status: 405, Code: "method_not_allowed", Msg: "unknown method"}
	}
	var (
		length      = int64(-1)
		chunked, te bool
		form        bool
		http10      = parts[2][len(parts[2])-1] == '0'
	)
	for _, line := range lines[1:] {
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			return refuse("folded_header", "a header is folded over several lines")
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !token(line[:colon]) {
			return refuse("bad_header", "a header line has no name, or space before its colon")
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		for _, b := range value {
			if b < 0x20 && b != '\t' || b == 0x7F {
				return refuse("bad_header", "a header value holds a control character")
			}
		}
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			// A list of equal values is one value (RFC 9110 8.6); different ones are not.
			for _, v := range bytes.Split(value, []byte(",")) {
				n, err := strconv.ParseInt(string(bytes.Trim(v, " \t")), 10, 64)
				if err != nil || n < 0 || len(bytes.Trim(v, " \t")) > 18 || !digits(bytes.Trim(v, " \t")) {
					return refuse("bad_content_length", "Content-Length is not a number")
				}
				if length >= 0 && n != length {
					return refuse("conflicting_content_length", "the request has Content-Length values that differ")
				}
				length = n
			}
		case bytes.EqualFold(name, []byte("Content-Type")):
			form = len(value) >= len("multipart/form-data") && bytes.EqualFold(value[:len("multipart/form-data")], []byte("multipart/form-data"))
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if te || !bytes.EqualFold(value, []byte("chunked")) {
				return &Error{Status: 400, Code: "unsupported_transfer_encoding", Msg: "the only transfer coding accepted is chunked"}
			}
			te, chunked = true, true
		}
	}
	switch {
	case te && length >= 0:
		return refuse("content_length_with_chunked", "the request has both Content-Length and Transfer-Encoding")
	case te && http10:
		return refuse("unsupported_transfer_encoding", "HTTP/1.0 has no transfer codings")
	}
	// The head's first byte is out already.
	c.raw = c.raw[1:]
	c.pass(n - 1)
	c.firstOut = false
	switch {
	case chunked:
		c.state = inChunkSize
	case length > 0:
		c.state, c.left = inBody, length
	}
	limit := c.opt.MaxBodyBytes
	if c.opt.BodyLimit != nil {
		path, _, _ := bytes.Cut(parts[1], []byte("?"))
		if l := c.opt.BodyLimit(parts[0], path); l > 0 {
			limit = l
		}
	}
	if limit > 0 && form {
		limit += c.opt.FormOverhead
	}
	if limit > 0 && length > limit {
		// The head is handed over whole (so the server knows the request it answers); the
		// body is not.
		c.overLimit = true
		return &Error{Status: 413, Code: "body_too_large", Msg: "request body is larger than the server accepts"}
	}
	return nil
}

// chunkLine checks a chunk-size line, or a trailer line, ending with the LF at raw[i].
func (c *conn) chunkLine(i int) error {
	if i == 0 || c.raw[i-1] != '\r' {
		return refuse("bad_chunk", "a chunk line ends with LF alone")
	}
	line := c.raw[:i-1]
	if bytes.IndexByte(line, '\r') >= 0 {
		return refuse("bad_chunk", "a chunk line holds a bare CR")
	}
	if c.state == inTrailer {
		if len(line) > 0 && (bytes.IndexByte(line, ':') <= 0 || line[0] == ' ' || line[0] == '\t') {
			return refuse("bad_chunk", "a trailer line is not a header")
		}
		c.pass(i + 1)
		if len(line) == 0 {
			c.state = inHead
		}
		return nil
	}
	size := line
	if semi := bytes.IndexByte(line, ';'); semi >= 0 {
		size = line[:semi]
	}
	if len(size) == 0 || len(size) > 15 {
		return refuse("bad_chunk", "a chunk size is not a hexadecimal number")
	}
	n, err := strconv.ParseInt(string(size), 16, 64)
	if err != nil || n < 0 {
		return refuse("bad_chunk", "a chunk size is not a hexadecimal number")
	}
	c.pass(i + 1)
	if n == 0 {
		c.state = inTrailer
	} else {
		c.state, c.left = inChunkData, n
	}
	return nil
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// token reports whether b is an RFC 9110 token (a header name or a method).
func token(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7F || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return len(b) > 0
}

// visible reports whether b holds only visible ASCII (a request target).
func visible(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7F {
			return false
		}
	}
	return true
}

// SetReadDeadline records the server's deadline (a watch puts it back when it ends).
func (c *conn) SetReadDeadline(t time.Time) error {
	c.deadline = t
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline records the server's read deadline, as SetReadDeadline.
func (c *conn) SetDeadline(t time.Time) error {
	c.deadline = t
	return c.Conn.SetDeadline(t)
}

// ErrClientGone is what the server reads on a connection whose client a watch saw close it.
var ErrClientGone = errors.New("framing: the client closed the connection")

// Watch watches a guarded connection for its client going away while the server works on a
// request it has read whole (its head and all of its body): fasthttp reads nothing while a
// handler runs, so without this a client that hangs up is noticed only when the answer is
// written. The watch reads ahead into the guard's own buffer, which the server reads from next,
// so a pipelined request's bytes are kept for it, not consumed; it stops at the first byte of
// one, as a client that sends its next request has not gone (what net/http does too).
//
// gone is closed when the client closes or resets the connection. stop ends the watch and must
// be called before the server reads the connection again (before the handler returns); it puts
// the server's read deadline back. For a connection that is not guarded, or whose request is
// not read whole, gone is nil and stop does nothing.
func Watch(nc net.Conn) (gone <-chan struct{}, stop func()) {
	c, ok := nc.(*conn)
	if !ok || c.state != inHead || c.readErr != nil || len(c.raw) > 0 {
		return nil, func() {}
	}
	ch := make(chan struct{})
	done := make(chan struct{})
	var stopping atomic.Bool
	// The server's deadline bounds reading a request, not the work on it.
	_ = c.Conn.SetReadDeadline(time.Time{})
	go func() {
		defer close(done)
		if err := c.fill(); err != nil {
			if stopping.Load() {
				return // stop's own deadline
			}
			if errors.Is(err, io.EOF) || !isTimeout(err) {
				c.readErr = ErrClientGone
				close(ch)
			}
		}
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			stopping.Store(true)
			_ = c.Conn.SetReadDeadline(time.Now())
			<-done
			_ = c.Conn.SetReadDeadline(c.deadline)
		})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Close drains what the client is still sending of a body the server did not read (when it is
// no more than DrainBytes; for up to DrainTimeout), after shutting the connection for writing so
// the client has the whole answer, then closes. Without that, the unread bytes make the kernel
// answer the client with a reset, which discards the answer it has not read yet.
func (c *conn) Close() error {
	if c.l != nil {
		c.l.forget(c)
	}
	// midBody is only ever true while the server's own goroutine, the one closing after its
	// answer, is the reader; idle connections closed from elsewhere are never mid-body.
	if c.opt.DrainBytes > 0 && c.midBody.Load() && (c.state != inBody || c.left-int64(len(c.raw)) <= c.opt.DrainBytes) {
		if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.opt.DrainTimeout))
		start := c.received
		if c.state == inBody {
			c.drainBody(start)
		}
		for c.state != inHead && c.received-start <= c.opt.DrainBytes {
			c.out = nil
			if err := c.advance(); err != nil {
				break
			}
		}
	}
	return c.Conn.Close()
}

// drainBody reads and drops what is left of a body of known length into one scratch buffer: a
// drained body costs no allocation per read, as advance's copies would.
func (c *conn) drainBody(start int64) {
	n := int(min(int64(len(c.raw)), c.left))
	c.raw, c.out = c.raw[n:], nil
	c.left -= int64(n)
	scratch := make([]byte, 32<<10)
	for c.left > 0 && c.received-start <= c.opt.DrainBytes {
		n, err := c.Conn.Read(scratch[:min(int64(len(scratch)), c.left)])
		c.received += int64(n)
		c.left -= int64(n)
		if err != nil {
			return
		}
	}
	if c.left == 0 {
		c.state = inHead
	}
}
