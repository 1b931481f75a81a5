package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/client"
	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// TestOCRAs: a document in each format, sent as bytes and as a file: the text is the JSON
// answer's, hOCR and ALTO hold its words; an unknown format is the service's 400.
func TestOCRAs(t *testing.T) {
	pdf, _, err := testdoc.BornDigital([]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, live(t), client.WithAPIKey(apiKey))
	for _, tt := range []struct {
		format string
		want   []string
	}{
		{client.FormatText, []string{"TAX INVOICE 2024-0117\n"}},
		{client.FormatHOCR, []string{`class="ocr_page"`, `>TAX</span> <span class="ocrx_word"`, `>2024-0117</span>`}},
		{client.FormatALTO, []string{`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"`, `CONTENT="INVOICE"`}},
		{client.FormatJSON, []string{`"text":"TAX INVOICE 2024-0117"`}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			fromBytes, err := c.OCRAs(t.Context(), pdf, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			fromFile, err := c.OCRFileAs(t.Context(), path, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(string(fromBytes), s) || !strings.Contains(string(fromFile), s) {
					t.Errorf("%s answer lacks %q: %.400s", tt.format, s, fromBytes)
				}
			}
		})
	}
	// A searchable PDF of an image: a PDF that holds the JPEG as it was sent.
	jpg := readReceipt(t)
	out, err := c.OCRAs(t.Context(), jpg, client.FormatPDF)
	if err != nil || !strings.HasPrefix(string(out), "%PDF-") || !strings.Contains(string(out), string(jpg)) {
		t.Errorf("a searchable PDF: %v, %.20q", err, out)
	}
	_, err = c.OCRAs(t.Context(), pdf, "docx")
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "invalid_format" {
		t.Errorf("an unknown format: %v", err)
	}
}
