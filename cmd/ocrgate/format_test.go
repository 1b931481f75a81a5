package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/internal/testenv"
)

// TestOCRCommandFormats: `ocrgate ocr --format F -o FILE` in-process and with --server writes
// the service's answer in that form; --format json is --json; bad uses are usage errors.
func TestOCRCommandFormats(t *testing.T) {
	testenv.Models(t)
	pdf, _, err := testdoc.BornDigital(
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TAX INVOICE 2024-0117"}},
		[]testdoc.Text{{X: 72, Y: 100, Size: 18, Text: "TOTAL 1299.00 NET"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	url := startService(t, testEnv)
	for _, tt := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"TAX INVOICE 2024-0117\fTOTAL 1299.00 NET\n"}},
		{"hocr", []string{`id="page_2"`, `>1299.00</span>`}},
		{"alto", []string{`<Page ID="page_1"`, `CONTENT="NET"`}},
		{"json", []string{`"text":"TAX INVOICE 2024-0117\fTOTAL 1299.00 NET"`}},
	} {
		for _, where := range [][]string{nil, {"--server", url}} {
			out := filepath.Join(dir, "out."+tt.format)
			args := append([]string{"ocr", "--format", tt.format, "-o", out}, where...)
			r := runOCRGate(testEnv, nil, append(args, file)...)
			got, _ := os.ReadFile(out)
			if r.code != exitOK || r.stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %s", args, r.code, r.stdout, r.stderr)
			}
			for _, s := range tt.want {
				if !strings.Contains(string(got), s) {
					t.Errorf("%v: the output lacks %q: %.300s", args, s, got)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"ocr", "--format", "docx", file},
		{"ocr", "--format", "alto", file, file},
	} {
		if r := runOCRGate(testEnv, nil, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, r.code, exitUsage)
		}
	}
}

// TestOCRCommandSearchablePDF: `ocrgate ocr --format pdf -o out.pdf receipt.jpg`, in-process and
// with --server, writes a PDF whose text layer pdftotext reads as the receipt's text.
func TestOCRCommandSearchablePDF(t *testing.T) {
	testenv.Models(t)
	url := startService(t, testEnv)
	for _, where := range [][]string{nil, {"--server", url}} {
		out := filepath.Join(t.TempDir(), "out.pdf")
		args := append([]string{"ocr", "--format", "pdf", "-o", out}, where...)
		if r := runOCRGate(testEnv, nil, append(args, receipt)...); r.code != exitOK {
			t.Fatalf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
		text, err := exec.Command("pdftotext", out, "-").Output()
		if err != nil {
			t.Fatalf("pdftotext (poppler-utils): %v", err)
		}
		if !strings.Contains(string(text), "JOHOR BAHRU") {
			t.Errorf("%v: pdftotext reads %.300q", args, text)
		}
	}
}
