package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// testLimits is a form of up to 4 files of 2 MiB together, with the fields /ocr-json takes.
func testLimits() FormLimits {
	return FormLimits{
		Body: 2<<20 + 1<<20, FileField: "file", Files: 2 << 20, MaxFiles: 4,
		Fields: map[string]int64{"pages": 1 << 10, "schema": 64 << 10, "words": 1 << 10},
	}
}

// part is a part of a form the tests write.
type part struct {
	name, filename, value string
}

// writeForm writes parts with mime/multipart's writer, as Go clients (and curl, and browsers,
// byte for byte the same framing) do.
func writeForm(t testing.TB, parts ...part) (boundary string, body []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		var pw io.Writer
		var err error
		if p.filename != "" {
			pw, err = w.CreateFormFile(p.name, p.filename)
		} else {
			pw, err = w.CreateFormField(p.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(pw, p.value)
	}
	w.Close()
	return w.Boundary(), b.Bytes()
}

// random is n bytes that look like nothing in particular.
func random(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestReadForm(t *testing.T) {
	big := string(random(700<<10, 1))
	// Content that holds what a boundary starts with, on a line of its own and split across
	// reads: only the whole delimiter ends a part.
	tricky := "a\r\n--\r\n-\r\n--X\r\n--" + strings.Repeat("\r", 100) + "\n--"
	parts := []part{
		{"pages", "", "1-3"},
		{"file", "a.jpg", big},
		{"file", "empty.png", ""},
		{"file", "b.bin", tricky},
		{"schema", "", `{"type":"object"}`},
		{"file", "c.pdf", "x"},
	}
	boundary, body := writeForm(t, parts...)
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return bytes.NewReader(body) },
		"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
		"halves":   func() io.Reader { return iotest.HalfReader(bytes.NewReader(body)) },
	}
	for name, r := range readers {
		for _, declared := range []int64{int64(len(body)), -1} {
			t.Run(fmt.Sprintf("%s, declared %d", name, declared), func(t *testing.T) {
				l := &ledger{}
				f, err := ReadForm(context.Background(), r(), declared, boundary, testLimits(), l)
				if err != nil {
					t.Fatal(err)
				}
				want := []string{big, "", tricky, "x"}
				if len(f.Files) != len(want) {
					t.Fatalf("%d files, want %d", len(f.Files), len(want))
				}
				for i := range want {
					if string(f.Files[i]) != want[i] {
						t.Errorf("file %d: %d bytes differ from the %d sent", i, len(f.Files[i]), len(want[i]))
					}
				}
				if string(f.Fields["pages"]) != "1-3" || string(f.Fields["schema"]) != `{"type":"object"}` || len(f.Fields) != 2 {
					t.Errorf("fields %q", f.Fields)
				}
				if f.Len() != int64(len(body)) {
					t.Errorf("Len %d, body %d", f.Len(), len(body))
				}
				// What the form holds is its content, one read buffer and at most trimSlack
				// of room per part.
				content := int64(len(big) + len(tricky) + 1 + 3 + 17)
				if l.held < content || l.held > content+formBuffer+6*trimSlack {
					t.Errorf("holds %d bytes for %d bytes of content", l.held, content)
				}
				f.Release()
				f.Release()
				if l.held != 0 {
					t.Errorf("released form still holds %d bytes", l.held)
				}
			})
		}
	}
}

func TestReadFormPreambleAndEpilogue(t *testing.T) {
	boundary, body := writeForm(t, part{"file", "a", "hello"})
	body = append([]byte("This is the preamble.\r\n"), body...)
	body = append(body, "and an epilogue"...)
	f, err := ReadForm(context.Background(), bytes.NewReader(body), int64(len(body)), boundary, testLimits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Files) != 1 || string(f.Files[0]) != "hello" {
		t.Errorf("files %q", f.Files)
	}
}

// TestReadFormRefuses: every way a form can be malformed or over a bound is refused with its
// error, and holds nothing afterwards.
func TestReadFormRefuses(t *testing.T) {
	lim := testLimits()
	const b = "XyZ"
	head := func(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }
	file := head("--"+b, `Content-Disposition: form-data; name="file"; filename="x.jpg"`, "Content-Type: image/jpeg")
	tests := []struct {
		name     string
		boundary string
		body     string
		declared int64 // 0: the body's length
		err      error
	}{
		{"no boundary", "", file + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"boundary too long", strings.Repeat("b", 71), "", 0, ErrMalformed},
		{"boundary with a quote", `a"b`, "", 0, ErrMalformed},
		{"no boundary line", b, "just some bytes", 0, ErrMalformed},
		{"empty body", b, "", 0, ErrMalformed},
		{"no closing boundary", b, file + "abc", 0, ErrMalformed},
		{"closing boundary cut", b, file + "abc\r\n--" + b, 0, ErrMalformed},
		{"boundary line goes on", b, file + "abc\r\n--" + b + "junk\r\n", 0, ErrMalformed},
		{"bare LF in a head", b, "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"\n\r\nx\r\n--" + b + "--", 0, ErrMalformed},
		{"head without a name", b, head("--"+b, "Content-Disposition: form-data") + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"head without a disposition", b, head("--"+b, "Content-Type: text/plain") + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"attachment, not form-data", b, head("--"+b, `Content-Disposition: attachment; name="file"`) + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"folded head line", b, head("--"+b, `Content-Disposition: form-data;`, ` name="file"`) + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"head of 9 KiB", b, head("--"+b, `Content-Disposition: form-data; name="file"`, "X-Pad: "+strings.Repeat("p", 9<<10)) + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"head of 40 lines", b, head(append([]string{"--" + b, `Content-Disposition: form-data; name="file"`}, strings.Split(strings.Repeat("X-A: 1\n", 40), "\n")[:40]...)...) + "x\r\n--" + b + "--", 0, ErrMalformed},
		{"nested multipart", b, head("--"+b, `Content-Disposition: form-data; name="file"`, "Content-Type: multipart/mixed; boundary=inner") + "--inner\r\n\r\nx\r\n--inner--\r\n--" + b + "--", 0, ErrMalformed},
		{"base64 part", b, head("--"+b, `Content-Disposition: form-data; name="file"`, "Content-Transfer-Encoding: base64") + "eA==\r\n--" + b + "--", 0, ErrMalformed},
		{"unknown field", b, head("--"+b, `Content-Disposition: form-data; name="image"; filename="x.jpg"`) + "x\r\n--" + b + "--", 0, ErrUnknownField},
		{"field twice", b, head("--"+b, `Content-Disposition: form-data; name="pages"`) + "1\r\n" + head("--"+b, `Content-Disposition: form-data; name="pages"`) + "2\r\n--" + b + "--", 0, ErrRepeatedField},
		{"field too long", b, head("--"+b, `Content-Disposition: form-data; name="pages"`) + strings.Repeat("1,", 600) + "\r\n--" + b + "--", 0, &FieldTooLargeError{}},
		{"files over their bound", b, file + strings.Repeat("x", 2<<20+1) + "\r\n--" + b + "--", 0, ErrTooLarge},
		{"too many files", b, strings.Repeat(file+"x\r\n", 5) + "--" + b + "--", 0, ErrTooManyFiles},
		{"declared over the limit", b, file, lim.Body + 1, ErrTooLarge},
		{"cut short", b, file + "abc", 1000, ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			declared := tt.declared
			if declared == 0 {
				declared = int64(len(tt.body))
			}
			l := &ledger{}
			_, err := ReadForm(context.Background(), strings.NewReader(tt.body), declared, tt.boundary, lim, l)
			var fe *FieldTooLargeError
			switch {
			case errors.As(tt.err, &fe):
				if !errors.As(err, &fe) || fe.Name != "pages" || fe.Limit != 1<<10 {
					t.Fatalf("err %v, want a field too large", err)
				}
			case !errors.Is(err, tt.err):
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if l.held != 0 {
				t.Errorf("a refused form still holds %d bytes", l.held)
			}
		})
	}
}

// TestReadFormHoldsWhatArrived: a form announced at 3 MiB whose file stops after 300 KiB holds
// about that much, not what was announced.
func TestReadFormHoldsWhatArrived(t *testing.T) {
	l := &ledger{}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := ReadForm(context.Background(), pr, 3<<20, "b", testLimits(), l)
		done <- err
	}()
	io.WriteString(pw, "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n")
	pw.Write(make([]byte, 300<<10))
	pw.CloseWithError(errors.New("client gone"))
	if err := <-done; !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v", err)
	}
	if l.peak > 1<<20 {
		t.Errorf("300 KiB of a 3 MiB form held %d bytes at the peak", l.peak)
	}
	if l.held != 0 {
		t.Errorf("still holds %d bytes", l.held)
	}
}

// TestReadFormFloodsCostTheirBound: forms made of many parts, or of parts that are all head,
// are refused at the bound they pass, having allocated little: the parts are not collected
// before the bounds are checked.
func TestReadFormFloodsCostTheirBound(t *testing.T) {
	lim := testLimits()
	lim.Body = 20 << 20
	lim.MaxFiles = 999 // the 1 000th file is refused: every one before it is read
	var heads strings.Builder
	for heads.Len() < 16<<20 {
		heads.WriteString("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 200)+"\r\n", 30) + "\r\n\r\n")
	}
	var names strings.Builder
	for i := 0; names.Len() < 16<<20; i++ {
		fmt.Fprintf(&names, "--b\r\nContent-Disposition: form-data; name=\"f%d\"\r\n\r\nx\r\n", i)
	}
	var files strings.Builder
	for i := 0; i < 1000; i++ {
		files.WriteString("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n\r\n")
	}
	var bytesFiles strings.Builder
	for i := 0; i < 1000; i++ {
		bytesFiles.WriteString("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n")
	}
	tests := []struct {
		name string
		body string
		err  error
	}{
		{"heads only", heads.String() + "--b--", ErrTooManyFiles},
		// Each file's buffer is the size of its content, not a first step of a large file's.
		{"1 000 one-byte files", bytesFiles.String() + "--b--", ErrTooManyFiles},
		{"1 000 unknown fields", names.String() + "--b--", ErrUnknownField},
		{"1 000 empty files", files.String() + "--b--", ErrTooManyFiles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			n := allocs(func() {
				_, err = ReadForm(context.Background(), strings.NewReader(tt.body), int64(len(tt.body)), "b", lim, &ledger{})
			})
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			t.Logf("%d MiB body: %d KiB allocated", len(tt.body)>>20, n>>10)
			if n > 1<<20 {
				t.Errorf("a %d MiB flood allocated %d KiB before it was refused", len(tt.body)>>20, n>>10)
			}
		})
	}
}

// allocs is the bytes fn allocates.
func allocs(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// TestReadFormLargeFile: a file as large as the files' bound is read with a buffer the size of
// the file, whether the body's length is known or not.
func TestReadFormLargeFile(t *testing.T) {
	lim := testLimits()
	data := random(int(lim.Files), 2)
	boundary, body := writeForm(t, part{"file", "big.tif", string(data)})
	for _, declared := range []int64{int64(len(body)), -1} {
		l := &ledger{}
		f, err := ReadForm(context.Background(), bytes.NewReader(body), declared, boundary, lim, l)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Files[0], data) {
			t.Fatal("file differs")
		}
		if c := cap(f.Files[0]); c > len(data)+trimSlack {
			t.Errorf("declared %d: a %d-byte file has a buffer of %d", declared, len(data), c)
		}
		if l.held > int64(len(data))+formBuffer+trimSlack {
			t.Errorf("declared %d: holds %d bytes for a %d-byte file", declared, l.held, len(data))
		}
		f.Release()
	}
}

// FuzzReadForm: whatever the body, ReadForm neither panics nor holds memory after a refusal,
// and a form it accepts is the form Go's own multipart reader finds in the same bytes.
func FuzzReadForm(f *testing.F) {
	boundary, body := writeForm(f, part{"pages", "", "2"}, part{"file", "a.png", "PNG\r\n--data"}, part{"file", "b", ""})
	f.Add(boundary, body)
	f.Add("b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--b--\r\n"))
	f.Add("b", []byte("preamble\r\n--b  \r\nContent-Disposition: form-data; name=\"words\"\r\n\r\ntrue\r\n--b--"))
	f.Fuzz(func(t *testing.T, boundary string, body []byte) {
		l := &ledger{}
		form, err := ReadForm(context.Background(), bytes.NewReader(body), int64(len(body)), boundary, testLimits(), l)
		if err != nil {
			if l.held != 0 {
				t.Fatalf("refused (%v) and still holds %d bytes", err, l.held)
			}
			return
		}
		defer form.Release()
		// Go's reader, on the same bytes: the same parts, in the same order.
		r := multipart.NewReader(bytes.NewReader(body), boundary)
		files := 0
		for {
			p, err := r.NextRawPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("accepted a form Go's reader refuses: %v", err)
			}
			data, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("accepted a form Go's reader cannot read: %v", err)
			}
			name := p.FormName()
			if name == "file" {
				if files >= len(form.Files) || !bytes.Equal(form.Files[files], data) {
					t.Fatalf("file %d differs from Go's reading", files)
				}
				files++
				continue
			}
			if got, ok := form.Fields[name]; !ok || !bytes.Equal(got, data) {
				t.Fatalf("field %q differs from Go's reading", name)
			}
		}
		if files != len(form.Files) {
			t.Fatalf("%d files, Go's reader finds %d", len(form.Files), files)
		}
	})
}
