//go:build integration

package service_test

import (
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/service"
)

// TestReadingOrderOCR reads the layout test pages as scans: each page rendered (the document's
// "ocr": "always") and read by the real models. Columns come one after the other, the table row
// by row, the header first, as from the text layer.
func TestReadingOrderOCR(t *testing.T) {
	needModels(t)
	data, pages := layoutPDF(t)
	app := docApp(t, service.Options{}, nil, nil)
	d := readDocument(t, app, data, map[string]any{"ocr": "always"})
	if len(d.Pages) != len(pages) {
		t.Fatalf("%d pages read, want %d", len(d.Pages), len(pages))
	}
	for i, p := range pages {
		got := d.Pages[i]
		if got.Source != "ocr" {
			t.Errorf("%s: source %s", p.Name, got.Source)
		}
		want := strings.Join(p.Lines, "\n")
		score := ocrscore.ReadingOrder(want, got.Text)
		t.Logf("%s: reading order %.3f (%d regions, %d blocks)", p.Name, score, len(got.Regions), len(got.Blocks))
		if score < minReadingOrder {
			t.Errorf("%s: reading order %.3f, want at least %.2f; text:\n%s", p.Name, score, minReadingOrder, got.Text)
		}
		checkBlocks(t, p.Name, got)
	}
}
