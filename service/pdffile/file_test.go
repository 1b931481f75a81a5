package pdffile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// TestPages reads the page tree of a file whose attributes are inherited and whose objects are
// found through its cross-reference table.
func TestPages(t *testing.T) {
	data := testdoc.Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 400 300] /Rotate 90 /Resources 5 0 R >>",
		"<< /Type /Page /Parent 2 0 R /CropBox [380 290 20 10] >>",
		"<< /Type /Page /Parent 2 0 R /Rotate -90 /Resources << /Font << /F1 6 0 R >> >> >>",
		"<< /ProcSet [/PDF (a\\)b) <414>] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
	f, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := f.Pages(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 {
		t.Fatalf("%d pages", len(pages))
	}
	if p := pages[0]; p.Ref != (Ref{3, 0}) || p.Box != [4]float64{20, 10, 380, 290} || p.Rotate != 90 {
		t.Errorf("page 1: %+v", p)
	}
	var b bytes.Buffer
	Write(&b, pages[0].Resources)
	if b.String() != "<</ProcSet [/PDF <612962> <4140>]>>" {
		t.Errorf("page 1's inherited resources: %s", b.String())
	}
	if p := pages[1]; p.Box != [4]float64{0, 0, 400, 300} || p.Rotate != 270 || p.Resources["Font"] == nil {
		t.Errorf("page 2: %+v", p)
	}
}

// TestRefused: structures that cannot be read are errors wrapping ErrUnreadable, not guesses.
func TestRefused(t *testing.T) {
	good := testdoc.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Page /Parent 2 0 R >>")
	enc, err := testdoc.Encrypted("pw")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		pages bool
	}{
		{"no startxref", []byte("%PDF-1.7\n1 0 obj << >> endobj\n"), false},
		{"startxref past the end", bytes.Replace(good, []byte("startxref\n"), []byte("startxref\n9"), 1), false},
		{"offsets shifted (a file PDFium repairs)", append([]byte("  "), good...), false},
		{"encrypted", enc, false},
		{"a page tree too deep", deepTree(100), true},
		{"nested arrays", hostile.PDFNestedArrays(10000), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(tc.data)
			if err == nil {
				_, err = f.Pages(100)
			}
			if !errors.Is(err, ErrUnreadable) {
				t.Fatalf("err = %v, want ErrUnreadable", err)
			}
		})
	}
}

// deepTree is a page tree of depth nodes, one inside the other, over one page.
func deepTree(depth int) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>"}
	for i := range depth {
		objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", i+3))
	}
	objs = append(objs, "<< /Type /Page >>")
	return testdoc.Raw(objs...)
}

// TestNodesMetTwice: a page tree that lists itself, or a page twice, counts each node once, as
// PDFium does.
func TestNodesMetTwice(t *testing.T) {
	for _, data := range [][]byte{hostile.PDFSelfTree(), hostile.PDFRepeatedKids(200)} {
		f, err := Open(data)
		if err != nil {
			t.Fatal(err)
		}
		pages, err := f.Pages(100)
		if err != nil || len(pages) != 1 {
			t.Errorf("%d pages, %v", len(pages), err)
		}
	}
}

// TestUnpredict undoes each PNG predictor on rows of three bytes.
func TestUnpredict(t *testing.T) {
	rows := []byte{
		0, 1, 2, 3,
		1, 1, 1, 1, // Sub: 1 2 3
		2, 1, 1, 1, // Up: 2 3 4
		3, 2, 2, 2, // Average
		4, 0, 0, 0, // Paeth
	}
	got, err := unpredict(rows, Dict{"Predictor": int64(12), "Columns": int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 2, 3, 1, 2, 3, 2, 3, 4, 3, 5, 6, 3, 5, 6}
	if !bytes.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// FuzzOpen: no input makes the reader panic, loop or allocate without bound.
func FuzzOpen(f *testing.F) {
	f.Add(testdoc.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>"))
	f.Add([]byte("%PDF-1.5\n1 0 obj << /Type /XRef /Size 2 /W [1 2 1] /Length 4 >>\nstream\n\x01\x00\x09\x00\nendstream endobj\nstartxref\n9\n%%EOF"))
	for _, h := range hostile.PDFs() {
		if len(h.Data) < 1<<16 {
			f.Add(h.Data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Open(data)
		if err != nil {
			return
		}
		pages, err := file.Pages(64)
		if err != nil {
			return
		}
		for _, p := range pages {
			var b bytes.Buffer
			Write(&b, p.Dict)
			if !strings.HasPrefix(b.String(), "<<") {
				t.Fatal(fmt.Sprint(p.Dict))
			}
		}
	})
}
