package server_test

import (
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/server"
)

// minReadingOrder is the reading-order score (ocrscore.ReadingOrder) every layout test page must
// reach, from its text layer and from OCR of its render.
const minReadingOrder = 0.95

// layoutPDF writes the reading-order test pages as one born-digital PDF, a page each.
func layoutPDF(t testing.TB) ([]byte, []testdoc.LayoutPage) {
	t.Helper()
	pages := testdoc.LayoutPages()
	texts := make([][]testdoc.Text, len(pages))
	for i, p := range pages {
		texts[i] = p.Text
	}
	data, _ := bornDigital(t, texts...)
	return data, pages
}

// TestReadingOrderTextLayer reads the layout test pages (two columns, three columns, a column
// beside a table, a header spanning two columns) from their text layer: each page's text keeps
// the order its lines are read in (columns one after the other, a table row by row, the header
// first), and its blocks hold every region once, in order.
func TestReadingOrderTextLayer(t *testing.T) {
	data, pages := layoutPDF(t)
	app := docApp(t, server.Options{}, nil, nil)
	d := readDocument(t, app, data, nil)
	if len(d.Pages) != len(pages) {
		t.Fatalf("%d pages read, want %d", len(d.Pages), len(pages))
	}
	for i, p := range pages {
		got := d.Pages[i]
		if got.Source != "text-layer" {
			t.Errorf("%s: source %s", p.Name, got.Source)
		}
		score := ocrscore.ReadingOrder(strings.Join(p.Lines, "\n"), got.Text)
		t.Logf("%s: reading order %.3f (%d regions, %d blocks)", p.Name, score, len(got.Regions), len(got.Blocks))
		if score < minReadingOrder {
			t.Errorf("%s: reading order %.3f, want at least %.2f; text:\n%s", p.Name, score, minReadingOrder, got.Text)
		}
		checkBlocks(t, p.Name, got)
	}
}

// checkBlocks checks that a page's blocks cover its regions once each, in reading order, and
// that the page's text is the blocks' texts separated by an empty line.
func checkBlocks(t *testing.T, name string, p pageBody) {
	t.Helper()
	next := 0
	var texts []string
	for _, b := range p.Blocks {
		var lines []string
		row := -1
		for _, id := range b.Regions {
			if id != next {
				t.Errorf("%s: block regions %v: region %d, want %d next", name, b.Regions, id, next)
				return
			}
			r := p.Regions[id]
			if r.Row != row {
				lines = append(lines, r.Text)
				row = r.Row
			} else {
				lines[len(lines)-1] += " " + r.Text
			}
			next++
		}
		texts = append(texts, strings.Join(lines, "\n"))
	}
	if next != len(p.Regions) {
		t.Errorf("%s: the blocks hold %d of %d regions", name, next, len(p.Regions))
	}
	if got := strings.Join(texts, "\n\n"); got != p.Text {
		t.Errorf("%s: the text is not the blocks' texts:\n%q\nwant\n%q", name, p.Text, got)
	}
}
