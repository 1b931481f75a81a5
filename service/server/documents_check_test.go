package server_test

import (
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestTextLayerChecked: a PDF's text layer is used only when OCR of a few of its lines agrees
// with it, and the page says which source it used and why. The pages are written by
// testdoc.FontPDF with an embedded subset of DejaVu Sans.
func TestTextLayerChecked(t *testing.T) {
	needModels(t) // the real recognizer reads the probes
	app := docApp(t, server.Options{}, nil, nil)
	page := func(e testdoc.Embedding, runs ...testdoc.Run) []byte {
		t.Helper()
		data, err := testdoc.FontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: e, Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name   string
		pdf    []byte
		source string
		reason string
		text   string // the page's text must hold it
		check  bool   // text_layer_check is answered
	}{
		// A simple TrueType font without a Unicode map: its layer says `"7+%-` where the page
		// shows "Phone". It used to be answered as text at confidence 1.
		{"TrueType without a Unicode map", page(testdoc.NoUnicode,
			testdoc.Run{X: 72, Y: 760, Size: 14, Text: "Phone"}, testdoc.Run{X: 72, Y: 730, Size: 14, Text: "Invoice number 2024-118 due 12 March"}),
			"ocr", "text_layer_disagrees", "Invoice number 2024-118", true},
		// An Identity-H font whose layer is exact: it used to be OCR'd into "Spoika", "Lod2".
		{"Identity-H, Polish", page(testdoc.IdentityH,
			testdoc.Run{X: 72, Y: 760, Size: 14, Text: "Spółka z o.o., ul. Piotrkowska 12, Łódź"}, testdoc.Run{X: 72, Y: 730, Size: 14, Text: "Faktura VAT nr 118/2024"}),
			"text-layer", "text_layer_agrees", "Spółka z o.o., ul. Piotrkowska 12, Łódź\nFaktura VAT nr 118/2024", true},
		// شكرا لكم 2024, drawn in visual order as presentation forms.
		{"Arabic", page(testdoc.IdentityH,
			testdoc.Run{X: 72, Y: 760, Size: 18, Text: "2024 \uFEE2\uFEDC\uFEDF \uFE8D\uFEAE\uFEDC\uFEB7", Unicode: "2024 \u0645\u0643\u0644 \u0627\u0631\u0643\u0634"}),
			"text-layer", "text_layer_script", "شكرا لكم 2024", true},
		// Fake bold: the line drawn twice, 0.4 pt apart.
		{"overprinted", page(testdoc.IdentityH, testdoc.Run{X: 72, Y: 760, Size: 14, Text: "TOTAL DUE 1,299.00", Dup: 0.4}),
			"text-layer", "text_layer_agrees", "TOTAL DUE 1,299.00", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := readDocument(t, app, tc.pdf, nil)
			if len(d.Pages) != 1 {
				t.Fatalf("%d pages", len(d.Pages))
			}
			p := d.Pages[0]
			if p.Source != tc.source || p.SourceReason != tc.reason || !strings.Contains(p.Text, tc.text) {
				t.Errorf("source %s (%s), text %q; want %s (%s) with %q", p.Source, p.SourceReason, p.Text, tc.source, tc.reason, tc.text)
			}
			if tc.source == "text-layer" && p.Text != tc.text {
				t.Errorf("text %q, want exactly %q", p.Text, tc.text)
			}
			if strings.Count(p.Text, "TOTAL") > 1 {
				t.Errorf("a line twice: %q", p.Text)
			}
			if p.Confidence == nil || *p.Confidence <= 0 || *p.Confidence > 1 {
				t.Errorf("confidence %v", p.Confidence)
			} else if tc.reason == "text_layer_agrees" && *p.Confidence < 0.7 {
				t.Errorf("an agreeing layer at confidence %.3f", *p.Confidence)
			}
			if (p.TextLayerCheck != nil) != tc.check {
				t.Errorf("text_layer_check %+v", p.TextLayerCheck)
			}
		})
	}

	// Pages of one document drawn with fonts that agreed on an earlier page are not probed again.
	t.Run("fonts known from an earlier page", func(t *testing.T) {
		var pages [][]testdoc.Text
		for i := range 3 {
			pages = append(pages, []testdoc.Text{{X: 72, Y: 100, Size: 14, Text: "Chapter one of the book"}, {X: 72, Y: 130, Size: 12, Text: "Page " + string(rune('1'+i))}})
		}
		pdf, _ := bornDigital(t, pages...)
		d := readDocument(t, app, pdf, nil)
		if len(d.Pages) != 3 {
			t.Fatalf("%d pages", len(d.Pages))
		}
		for i, p := range d.Pages {
			if p.Source != "text-layer" || p.SourceReason != "text_layer_agrees" {
				t.Errorf("page %d: %s (%s)", p.Page, p.Source, p.SourceReason)
			}
			if probed := p.TextLayerCheck != nil; probed != (i == 0) {
				t.Errorf("page %d: text_layer_check %+v", p.Page, p.TextLayerCheck)
			}
		}
	})

	// With the check off, a layer is taken by its structure, and says so.
	t.Run("check off", func(t *testing.T) {
		off := docApp(t, server.Options{}, nil, func(c *document.Config) { c.LayerCheck = 0 })
		d := readDocument(t, off, tests[0].pdf, nil)
		if p := d.Pages[0]; p.Source != "text-layer" || p.SourceReason != "text_layer_unchecked" || p.TextLayerCheck != nil {
			t.Errorf("source %s (%s), check %+v", p.Source, p.SourceReason, p.TextLayerCheck)
		}
	})
}

// TestDoubtedFontReadAgain: a page whose text layer is right but for one font costs that font's
// lines, not the page. "Phone" is drawn with a TrueType font without a Unicode map (its layer says
// `"7+%-`), the rest with Helvetica: the page is answered from its layer, the line in the bad
// font read again by OCR, each region saying where its text came from.
func TestDoubtedFontReadAgain(t *testing.T) {
	needModels(t) // the real recognizer reads the probes and the line
	app := docApp(t, server.Options{}, nil, nil)
	pdf, err := testdoc.FontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.NoUnicode,
		Runs: []testdoc.Run{{X: 72, Y: 760, Size: 14, Text: "Phone"}},
		Content: "BT /F2 14 Tf 72 700 Td (Invoice number 2024-118 due 12 March) Tj ET " +
			"BT /F2 14 Tf 72 670 Td (Delivery to the warehouse on the quay) Tj ET " +
			"BT /F2 14 Tf 72 640 Td (Payment within thirty days of receipt) Tj ET"})
	if err != nil {
		t.Fatal(err)
	}
	d := readDocument(t, app, pdf, nil)
	if len(d.Pages) != 1 {
		t.Fatalf("%d pages", len(d.Pages))
	}
	p := d.Pages[0]
	if p.Source != "text-layer" || p.SourceReason != "text_layer_agrees" {
		t.Fatalf("source %s (%s), text %q; want the text layer", p.Source, p.SourceReason, p.Text)
	}
	want := map[string]string{"Phone": "ocr", "Invoice number 2024-118 due 12 March": "text-layer",
		"Delivery to the warehouse on the quay": "text-layer", "Payment within thirty days of receipt": "text-layer"}
	if len(p.Regions) != len(want) {
		t.Fatalf("regions %+v, want %d", p.Regions, len(want))
	}
	for _, r := range p.Regions {
		if src, ok := want[r.Text]; !ok || r.Source != src {
			t.Errorf("region %q from %q; want one of %v", r.Text, r.Source, want)
		}
	}
}

// TestUnmappedCharacterReadAgain: a character the layer has no Unicode for is not passed off as
// the page's text. pdfminer's issue-00352 page read "There�s" (U+FFFD) and was answered
// text_layer_agrees: the probes compare only what the recognizer reads, and it reads no U+FFFD.
// Here the apostrophe of "There's" is mapped to U+FFFD by its font's ToUnicode map; the other
// lines are plain Helvetica. The line with U+FFFD is read by OCR, the rest answered from the
// layer.
func TestUnmappedCharacterReadAgain(t *testing.T) {
	needModels(t) // the real recognizer reads the probes and the line
	app := docApp(t, server.Options{}, nil, nil)
	pdf, err := testdoc.FontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.IdentityH,
		Runs: []testdoc.Run{{X: 72, Y: 610, Size: 14, Text: "There's a meeting on Thursday", Unicode: "There\uFFFDs a meeting on Thursday"}},
		Content: "BT /F2 14 Tf 72 700 Td (Invoice number 2024-118 due 12 March) Tj ET " +
			"BT /F2 14 Tf 72 670 Td (Delivery to the warehouse on the quay) Tj ET " +
			"BT /F2 14 Tf 72 640 Td (Payment within thirty days of receipt) Tj ET"})
	if err != nil {
		t.Fatal(err)
	}
	d := readDocument(t, app, pdf, nil)
	if len(d.Pages) != 1 {
		t.Fatalf("%d pages", len(d.Pages))
	}
	p := d.Pages[0]
	if strings.ContainsRune(p.Text, '\uFFFD') {
		t.Errorf("source %s (%s): text %q holds U+FFFD", p.Source, p.SourceReason, p.Text)
	}
	if p.Source != "text-layer" || p.SourceReason != "text_layer_agrees" {
		t.Fatalf("source %s (%s), text %q; want the text layer", p.Source, p.SourceReason, p.Text)
	}
	for _, r := range p.Regions {
		want := "text-layer"
		if strings.Contains(r.Text, "meeting") {
			want = "ocr"
		}
		if r.Source != want {
			t.Errorf("region %q from %q; want %s", r.Text, r.Source, want)
		}
	}
}
