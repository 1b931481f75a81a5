package pdfengine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/pdffile"
)

// TestSave: PDFium's save of a file whose cross-reference it repaired (every offset off by three
// bytes) is one a strict reader reads, with the same page; a save past its limit stops with
// ErrSaveTooLarge.
func TestSave(t *testing.T) {
	good := testdoc.OnePage("0 0 300 200", "", testdoc.Stream("", []byte("0 g 10 10 50 50 re f")))
	broken := append([]byte("\n\n\n"), good...)
	if _, err := pdffile.Open(broken); err == nil {
		t.Fatal("the strict reader reads the broken file: the test tests nothing")
	}
	d, err := testEngine(t).Open(t.Context(), broken, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	var out bytes.Buffer
	if err := d.Save(t.Context(), &out, false, 1<<20); err != nil {
		t.Fatal(err)
	}
	f, err := pdffile.Open(out.Bytes())
	if err != nil {
		t.Fatalf("PDFium's save is not read: %v", err)
	}
	pages, err := f.Pages(10)
	if err != nil || len(pages) != 1 || pages[0].Box != [4]float64{0, 0, 300, 200} {
		t.Fatalf("pages %+v, %v", pages, err)
	}
	if err := d.Save(t.Context(), &bytes.Buffer{}, false, 100); !errors.Is(err, ErrSaveTooLarge) {
		t.Errorf("a save past its limit: %v", err)
	}
}
