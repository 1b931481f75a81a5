package intake

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"sync"
)

// A multipart/form-data body (RFC 7578) is read part by part as its bytes arrive, straight from
// the connection: no part is spooled to a temporary file, and nothing is held that the budget has
// not admitted. mime/multipart is not used: its Reader admits part heads of up to 10 MiB and its
// ReadForm keeps up to 32 MiB per form in memory and the rest on disk, none of it through a
// budget. Here every dimension of a form has its own bound, checked as soon as it is passed:
//
//   - the body's bytes (FormLimits.Body), framing included;
//   - the files' bytes together (FormLimits.Files), and how many files (FormLimits.MaxFiles);
//   - each field's bytes (FormLimits.Fields), and each field at most once;
//   - each part's head: 8 KiB, 32 lines;
//   - the names of the parts: a name the caller did not list is refused at its head, before its
//     content is read.
//
// What a form holds is its files' and fields' bytes, each in a buffer that grows as they arrive
// (each growth admitted by the budget first) and is cut to its content when the part ends, plus
// one read buffer of 64 KiB.

// FormLimits bound a multipart form.
type FormLimits struct {
	// Body bounds the whole body, boundaries, part heads and fields included.
	Body int64
	// FileField is the name of the parts that carry files (any number of them, up to MaxFiles).
	FileField string
	// Files bounds the file parts' contents together; MaxFiles, how many there may be.
	Files    int64
	MaxFiles int
	// Fields are the names of the other parts the form may hold, each with the most bytes its
	// value may have. Each may come once.
	Fields map[string]int64
}

// Form is a multipart form read whole: its files in the order they came, and its fields.
type Form struct {
	Files   [][]byte
	Fields  map[string][]byte
	size    int64
	release func()
}

// Len is the body's length in bytes.
func (f *Form) Len() int64 { return f.size }

// Release gives the form's memory admission back. Calling it again does nothing.
func (f *Form) Release() {
	if f != nil && f.release != nil {
		f.release()
		f.release = nil
	}
}

// Errors of ReadForm, besides those of Read (ErrTooLarge when the body or the files together are
// over their bound, ErrIncomplete, ErrTimeout), the budget's refusal and ctx's errors.
var (
	// ErrMalformed: the body is not a multipart form as RFC 7578 writes one. The error's text
	// says what is wrong, in this package's words only.
	ErrMalformed = errors.New("malformed multipart body")
	// ErrUnknownField: a part's name is neither FormLimits.FileField nor one of Fields.
	ErrUnknownField = errors.New("intake: a form part has a name the form does not take")
	// ErrRepeatedField: a field (not a file) came twice.
	ErrRepeatedField = errors.New("intake: a form field came twice")
	// ErrTooManyFiles: more file parts than FormLimits.MaxFiles.
	ErrTooManyFiles = errors.New("intake: more files than the form takes")
)

// FieldTooLargeError is a field whose value is longer than its bound.
type FieldTooLargeError struct {
	Name  string // the field's name: one of FormLimits.Fields, never an unlisted one
	Limit int64
}

func (e *FieldTooLargeError) Error() string {
	return fmt.Sprintf("intake: form field %s is longer than %d bytes", e.Name, e.Limit)
}

func malformed(reason string) error { return fmt.Errorf("%w: %s", ErrMalformed, reason) }

// Bounds of a part's head, and of the read buffer.
const (
	maxPartHead  = 8 << 10
	maxPartLines = 32
	formBuffer   = 64 << 10
	// trimSlack is the unused capacity a part's buffer may keep when the part ends; more is
	// given back (the buffer is cut to its content).
	trimSlack = 64 << 10
)

// ValidBoundary reports whether b can be a multipart boundary (RFC 2046 5.1.1): 1 to 70
// characters from its set, not ending in a space.
func ValidBoundary(b string) bool {
	if len(b) == 0 || len(b) > 70 || b[len(b)-1] == ' ' {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("'()+_,-./:=? ", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ReadForm reads a multipart/form-data body with the given boundary from r: declared bytes, or up
// to EOF when declared is negative (a chunked body). It refuses a declared length over lim.Body
// before reading anything, and everything else at the first byte that breaks a bound; see the
// package's notes above for what it holds.
func ReadForm(ctx context.Context, r io.Reader, declared int64, boundary string, lim FormLimits, budget Budget) (*Form, error) {
	if declared > lim.Body {
		return nil, ErrTooLarge
	}
	if !ValidBoundary(boundary) {
		return nil, malformed("the boundary is missing or is not a valid boundary")
	}
	fr := &formReader{
		ctx:    ctx,
		budget: budget,
		lim:    lim,
		in:     &countingReader{ctx: ctx, r: r, declared: declared, limit: lim.Body},
		delim:  []byte("\r\n--" + boundary),
		form:   &Form{Fields: map[string][]byte{}},
	}
	form, err := fr.read()
	if err != nil {
		fr.held.release()
		return nil, err
	}
	form.size = fr.in.n
	form.release = sync.OnceFunc(fr.held.release)
	return form, nil
}

// formReader is the state of one ReadForm.
type formReader struct {
	ctx    context.Context
	budget Budget
	lim    FormLimits
	in     *countingReader
	br     *bufio.Reader
	delim  []byte // CRLF, "--", the boundary: what ends a part's content
	form   *Form
	files  int64 // the file parts' bytes so far
	held   admitted
}

func (fr *formReader) read() (*Form, error) {
	// The read buffer is admitted like everything else, but no larger than the body needs.
	size := int64(formBuffer)
	if fr.in.declared >= 0 {
		size = max(min(size, fr.in.declared), 16+int64(len(fr.delim)))
	}
	if err := fr.held.acquire(fr.ctx, fr.budget, size); err != nil {
		return nil, err
	}
	fr.br = bufio.NewReaderSize(fr.in, int(size))

	// The first boundary may open the body, or follow a preamble that is skipped.
	dash := fr.delim[2:]
	head, err := fr.br.Peek(len(dash))
	switch {
	case err == nil && bytes.Equal(head, dash):
		_, _ = fr.br.Discard(len(dash))
	case err != nil && err != io.EOF:
		return nil, err
	default:
		if err := fr.content(nil, -1); err != nil {
			if errors.Is(err, ErrMalformed) {
				return nil, malformed("it holds no boundary line")
			}
			return nil, err
		}
	}
	for {
		last, err := fr.afterBoundary()
		if err != nil {
			return nil, err
		}
		if last {
			break
		}
		if err := fr.part(); err != nil {
			return nil, err
		}
	}
	// The closing boundary ends the body, or its line, after which comes an epilogue that is
	// read (to the body's end, so that the connection can serve its next request) and dropped.
	line, err := fr.br.ReadSlice('\n')
	switch {
	case errors.Is(err, io.EOF) && len(bytes.Trim(line, " \t")) == 0:
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull):
		return nil, err
	case err != nil || !bytes.HasSuffix(line, []byte("\r\n")) || len(bytes.Trim(line[:len(line)-2], " \t")) != 0:
		return nil, malformed("the closing boundary line goes on after the boundary")
	}
	if _, err := io.Copy(io.Discard, fr.br); err != nil {
		return nil, err
	}
	return fr.form, nil
}

// afterBoundary reads what follows a boundary: "--" for the last one, or optional white space
// and CRLF before a part's head.
func (fr *formReader) afterBoundary() (last bool, err error) {
	two, err := fr.br.Peek(2)
	if err != nil {
		return false, fr.ended(err)
	}
	if two[0] == '-' && two[1] == '-' {
		_, _ = fr.br.Discard(2)
		return true, nil
	}
	line, err := fr.br.ReadSlice('\n')
	if err != nil {
		return false, fr.ended(err)
	}
	if !bytes.HasSuffix(line, []byte("\r\n")) || len(bytes.Trim(line[:len(line)-2], " \t")) != 0 {
		return false, malformed("a boundary line goes on after the boundary")
	}
	return false, nil
}

// ended is the error for a body that ends (or fails) where more of the form was due.
func (fr *formReader) ended(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
		return malformed("it ends before its closing boundary")
	}
	return err
}

// part reads one part: its head, then its content into a file or a field.
func (fr *formReader) part() error {
	name, isFile, err := fr.head()
	if err != nil {
		return err
	}
	var bound int64
	switch {
	case isFile:
		if len(fr.form.Files) >= fr.lim.MaxFiles {
			return ErrTooManyFiles
		}
		bound = fr.lim.Files - fr.files
	default:
		if _, seen := fr.form.Fields[name]; seen {
			return ErrRepeatedField
		}
		bound = fr.lim.Fields[name]
	}
	buf := &partBuffer{fr: fr, bound: bound}
	if err := fr.content(buf, bound); err != nil {
		buf.held.release()
		if errors.Is(err, errOverBound) {
			if isFile {
				return ErrTooLarge
			}
			return &FieldTooLargeError{Name: name, Limit: bound}
		}
		return err
	}
	data, err := buf.done()
	if err != nil {
		return err
	}
	if isFile {
		fr.files += int64(len(data))
		fr.form.Files = append(fr.form.Files, data)
	} else {
		fr.form.Fields[name] = data
	}
	return nil
}

// head reads a part's head and returns the part's name, and whether it is a file part. A name
// the form does not take is refused here, before the part's content is read.
func (fr *formReader) head() (name string, isFile bool, err error) {
	var size, lines int
	var disposition, ctype, encoding string
	var seen bool
	for {
		line, err := fr.br.ReadSlice('\n')
		size += len(line)
		lines++
		if size > maxPartHead || lines > maxPartLines || errors.Is(err, bufio.ErrBufferFull) {
			return "", false, malformed(fmt.Sprintf("a part's head is longer than %d KiB or %d lines", maxPartHead>>10, maxPartLines))
		}
		if err != nil {
			return "", false, fr.ended(err)
		}
		if !bytes.HasSuffix(line, []byte("\r\n")) {
			return "", false, malformed("a line of a part's head does not end with CRLF")
		}
		line = line[:len(line)-2]
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !headerLine(line, colon) {
			return "", false, malformed("a line of a part's head is not a header")
		}
		// Only the headers read here become strings: a flood of others costs nothing.
		key, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(key, []byte("Content-Disposition")):
			if seen {
				return "", false, malformed("a part has two Content-Disposition headers")
			}
			disposition, seen = string(value), true
		case bytes.EqualFold(key, []byte("Content-Type")):
			ctype = string(value)
		case bytes.EqualFold(key, []byte("Content-Transfer-Encoding")):
			encoding = string(value)
		}
	}
	kind, params, err := mime.ParseMediaType(disposition)
	if err != nil || kind != "form-data" || params["name"] == "" {
		return "", false, malformed(`a part has no Content-Disposition "form-data" with a name`)
	}
	if ctype != "" {
		if mt, _, err := mime.ParseMediaType(ctype); err == nil && strings.HasPrefix(mt, "multipart/") {
			return "", false, malformed("a part is itself multipart; send each file as a part of its own")
		}
	}
	switch strings.ToLower(encoding) {
	case "", "binary", "8bit", "7bit":
	default:
		return "", false, malformed("a part has a Content-Transfer-Encoding other than binary; send its bytes as they are")
	}
	name = params["name"]
	if name == fr.lim.FileField {
		return name, true, nil
	}
	if _, ok := fr.lim.Fields[name]; !ok {
		return "", false, ErrUnknownField
	}
	return name, false, nil
}

// headerLine reports whether line is "name: value" with a token for a name and no control
// character but tab in its value.
func headerLine(line []byte, colon int) bool {
	for _, c := range line[:colon] {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	for _, c := range line[colon+1:] {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// errOverBound: a part's content is longer than its bound.
var errOverBound = errors.New("intake: part over its bound")

// content reads a part's content, up to the next boundary (which it consumes), into buf; with a
// nil buf it skips it (a preamble). A content longer than bound is errOverBound.
func (fr *formReader) content(buf *partBuffer, bound int64) error {
	keep := len(fr.delim) - 1 // what may be the start of a boundary split across two reads
	dash := fr.delim[2:]
	if buf != nil {
		// A part may have no content at all: its head's last CRLF is then its boundary's.
		if start, err := fr.br.Peek(len(dash)); err == nil && bytes.Equal(start, dash) {
			_, _ = fr.br.Discard(len(dash))
			return nil
		}
	}
	var n int64
	for {
		window, err := fr.br.Peek(fr.br.Size())
		i := bytes.Index(window, fr.delim)
		if buf == nil {
			// A preamble that holds the boundary elsewhere than on a line of its own after
			// CRLF is read differently by parsers that take a bare LF for a line's end.
			if j := bytes.Index(window, dash); j >= 0 && (i < 0 || j < i+2) {
				return malformed("its preamble holds the boundary")
			}
		}
		if i >= 0 {
			if buf != nil {
				if bound >= 0 && n+int64(i) > bound {
					return errOverBound
				}
				if err := buf.write(window[:i], true); err != nil {
					return err
				}
			}
			_, _ = fr.br.Discard(i + len(fr.delim))
			return nil
		}
		if err != nil {
			return fr.ended(err)
		}
		take := len(window) - keep
		if buf != nil {
			if bound >= 0 && n+int64(take) > bound {
				return errOverBound
			}
			if err := buf.write(window[:take], false); err != nil {
				return err
			}
		}
		n += int64(take)
		_, _ = fr.br.Discard(take)
	}
}

// partBuffer holds a part's content in a buffer that grows as it arrives, each growth admitted
// first, and is cut to its content when the part ends.
type partBuffer struct {
	fr    *formReader
	bound int64 // the content's most bytes
	data  []byte
	held  admitted
}

// write appends p, growing the buffer (doubling, up to the bound and to what is left of the
// body) when it is full. last says p ends the part: the buffer then grows to the content's
// size and no more, so a part that arrives whole (any small one) costs its own size, not a
// large file's first step.
func (b *partBuffer) write(p []byte, last bool) error {
	if need := int64(len(b.data) + len(p)); need > int64(cap(b.data)) {
		size := max(need, min(2*int64(cap(b.data)), b.bound), min(firstStep, b.bound))
		if left := b.fr.in.left(b.fr.br.Buffered()); left >= 0 {
			size = max(need, min(size, int64(len(b.data))+left))
		}
		if last {
			size = need
		}
		if err := b.held.acquire(b.fr.ctx, b.fr.budget, size-int64(cap(b.data))); err != nil {
			return err
		}
		grown := make([]byte, len(b.data), size)
		copy(grown, b.data)
		b.data = grown
	}
	b.data = append(b.data, p...)
	return nil
}

// done ends the part: a buffer with much unused room is cut to its content (its admission given
// back and taken again for the content), and the buffer's admission joins the form's.
func (b *partBuffer) done() ([]byte, error) {
	if cap(b.data)-len(b.data) > trimSlack {
		b.held.release()
		if err := b.held.acquire(b.fr.ctx, b.fr.budget, int64(len(b.data))); err != nil {
			b.held.release()
			return nil, err
		}
		b.data = bytes.Clone(b.data)
	}
	if b.data == nil {
		b.data = []byte{}
	}
	b.fr.held = append(b.fr.held, b.held...)
	return b.data, nil
}

// countingReader reads a body up to its end: it counts what it reads, refuses more than limit
// (ErrTooLarge) and classifies its source's errors as Read does.
type countingReader struct {
	ctx      context.Context
	r        io.Reader
	declared int64 // -1: unknown (chunked)
	limit    int64
	n        int64
	empty    int
	err      error // the first error other than EOF, returned from then on
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	switch {
	case c.n > c.limit:
		c.err = ErrTooLarge
	case n == 0 && err == nil:
		if c.empty++; c.empty > 100 {
			c.err = ErrIncomplete
		}
	case err == io.EOF:
		if c.declared >= 0 && c.n < c.declared {
			c.err = ErrIncomplete
		}
	case err != nil && c.ctx.Err() != nil:
		c.err = c.ctx.Err() // the read was stopped for ctx (see Read)
	case err != nil:
		c.err = readError(err)
	}
	if c.err != nil {
		return n, c.err
	}
	return n, err
}

// left is how many bytes of the body are still to come, counting buffered bytes read but not
// used yet; -1 when the length is unknown.
func (c *countingReader) left(buffered int) int64 {
	if c.declared < 0 {
		return -1
	}
	return c.declared - c.n + int64(buffered)
}

// admitted is the releases of a set of admissions.
type admitted []func()

func (a *admitted) acquire(ctx context.Context, budget Budget, n int64) error {
	if budget == nil || n <= 0 {
		return nil
	}
	release, err := budget.Acquire(ctx, n)
	if err != nil {
		return err
	}
	*a = append(*a, release)
	return nil
}

func (a *admitted) release() {
	for _, r := range *a {
		r()
	}
	*a = nil
}
