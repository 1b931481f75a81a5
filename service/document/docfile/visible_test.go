package docfile_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestHiddenText: text no one sees is not page text. Each page shows hostile.VisibleLine and
// hides hostile.HiddenInstruction one way; the text layer keeps the one, drops the other and says
// why. Text that is merely unusual to look at (white on black, black on gray, small print) stays.
func TestHiddenText(t *testing.T) {
	for _, tt := range []struct {
		name                string
		before, hide, after string
		reason              string // "" when the text must be kept
	}{
		{"render mode 3 (invisible)", "", "3 Tr", "", "invisible_render_mode"},
		{"render mode 7 (clipping only)", "", "7 Tr", "", "invisible_render_mode"},
		{"below the page", "", "0 -900 Td", "", "outside_page"},
		{"right of the page", "", "1000 0 Td", "", "outside_page"},
		{"white on white", "", "1 g", "", "no_visible_mark"},
		{"covered by a white box drawn after it", "", "", "1 g 60 590 420 30 re f", "no_visible_mark"},
		{"gray on the same gray", "0.8 g 60 590 420 30 re f", "0.8 g", "", "no_visible_mark"},
		{"half a point tall", "", "/F1 0.5 Tf", "", "too_small"},
		{"white on a black box", "0 g 60 590 420 30 re f", "1 g", "", ""},
		{"black on a gray box", "0.8 g 60 590 420 30 re f", "0 g", "", ""},
		{"small print (5 pt)", "", "/F1 5 Tf", "", ""},
		// A timetable's times (pdf.js issue840): red (#CC2030) on a dark red cell (#702830),
		// 6 pt. Their grays differ by 23 of 255, their reds by 92.
		{"red on a dark red box", "0.44 0.16 0.19 rg 60 590 420 30 re f", "/F1 6 Tf 0.8 0.125 0.19 rg", "", ""},
		{"red on a green box as bright", "0.05 0.55 0.05 rg 60 590 420 30 re f", "0.8 0.125 0.19 rg", "", ""},
		{"red on the same red", "0.8 0.125 0.19 rg 60 590 420 30 re f", "0.8 0.125 0.19 rg", "", "no_visible_mark"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := hostile.PDFHiddenText(tt.before, tt.hide, tt.after)
			doc := open(t, data)
			ctx := ctxFor(t, time.Minute)
			page, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			c := page.RenderCost(scaleOf(t, page, docfile.Limits{}))
			tl, err := doc.TextLayer(ctx, page, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, l := range tl.Lines {
				texts = append(texts, l.Text)
			}
			all := strings.Join(texts, "\n")
			if !slices.Contains(texts, hostile.VisibleLine) {
				t.Errorf("the visible line is missing: %q", all)
			}
			hiddenChars := len(strings.ReplaceAll(hostile.HiddenInstruction, " ", ""))
			if tt.reason == "" {
				if !strings.Contains(all, "99999") || tl.Hidden.Chars() != 0 {
					t.Errorf("visible text dropped: %q, hidden %+v", all, tl.Hidden)
				}
				return
			}
			if strings.Contains(all, "SYSTEM") || strings.Contains(all, "99999") {
				t.Errorf("hidden text returned: %q", all)
			}
			if got := tl.Hidden.Reasons(); !slices.Equal(got, []string{tt.reason}) || tl.Hidden.Chars() < hiddenChars {
				t.Errorf("hidden %+v (%v); want %d characters for %s", tl.Hidden, got, hiddenChars, tt.reason)
			}
			if !page.TextUsable().Usable {
				t.Errorf("the page's visible text is not used: %s", page.TextUsable().Reason)
			}
		})
	}
}

// TestUndrawnFontKept: text in a CID font that is not embedded and that the engine has no
// glyphs for (Ryumin-Light, as pdfminer's jo.pdf draws its Japanese poem) leaves no mark on the
// drawing, yet a reader's viewer shows it and pdftotext reads it: it is kept, as its Unicode
// says, counted as undrawn rather than hidden, and gives no probe (OCR of a blank crop would
// judge nothing). The Helvetica line beside it is checked as usual.
func TestUndrawnFontKept(t *testing.T) {
	const kana = "あいうえおかきくけこ"
	var hex strings.Builder
	for _, r := range kana {
		fmt.Fprintf(&hex, "%04X", r)
	}
	for _, tt := range []struct {
		name    string
		more    string // content after the kana
		mostly  bool
		probes  int
		visible string
	}{
		{"kana alone", "", true, 0, ""},
		{"kana beside a drawn line", "BT /F2 14 Tf 72 600 Td (Invoice number 2024-118 due 12 March) Tj ET BT /F2 14 Tf 72 560 Td (Total amount due 1,299.00 EUR) Tj ET", false, 2, "Invoice number 2024-118 due 12 March"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := testdoc.OnePage("0 0 595 842",
				"/Font << /F1 5 0 R /F2 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>",
				testdoc.Stream("", []byte("BT /F1 24 Tf 72 700 Td <"+hex.String()+"> Tj ET "+tt.more)),
				"<< /Type /Font /Subtype /Type0 /BaseFont /Ryumin-Light-UniJIS-UCS2-H /Encoding /UniJIS-UCS2-H /DescendantFonts [6 0 R] >>",
				"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Ryumin-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 >>",
				"<< /Type /FontDescriptor /FontName /Ryumin-Light /Flags 6 /FontBBox [-170 -331 1024 903] /ItalicAngle 0 /Ascent 723 /Descent -241 /CapHeight 709 /StemV 69 >>")
			doc := open(t, data)
			ctx := ctxFor(t, time.Minute)
			page, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			c := page.RenderCost(scaleOf(t, page, docfile.Limits{}))
			tl, err := doc.TextLayer(ctx, page, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, l := range tl.Lines {
				texts = append(texts, l.Text)
			}
			if !slices.Contains(texts, kana) || tl.Hidden.Chars() != 0 || tl.Undrawn != len([]rune(kana)) {
				t.Errorf("lines %q, hidden %+v, undrawn %d; want %q kept, %d undrawn", texts, tl.Hidden, tl.Undrawn, kana, len([]rune(kana)))
			}
			if tl.MostlyUndrawn() != tt.mostly {
				t.Errorf("mostly undrawn: %v, want %v", tl.MostlyUndrawn(), tt.mostly)
			}
			probes := tl.Probes(4)
			if len(probes) != tt.probes || tt.probes > 0 && probes[0].Text == kana {
				t.Errorf("probes %+v, want %d, none of the kana", probes, tt.probes)
			}
			if tt.visible != "" && !slices.Contains(texts, tt.visible) {
				t.Errorf("the drawn line is missing: %q", texts)
			}
		})
	}
}

// TestBlankGlyphsHidden: text drawn with blank glyphs of an embedded font (DejaVu's space glyph,
// which a ToUnicode map calls X) shows nothing, as undrawn text does, but it is drawn: it is
// hidden text, dropped, not kept as undrawn.
func TestBlankGlyphsHidden(t *testing.T) {
	data, err := testdoc.FontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.IdentityH, Runs: []testdoc.Run{
		{X: 72, Y: 760, Size: 14, Text: "Invoice-2024-118"},
		{X: 72, Y: 700, Size: 14, Text: "        ", Unicode: "XXXXXXXX"}}})
	if err != nil {
		t.Fatal(err)
	}
	doc := open(t, data)
	ctx := ctxFor(t, time.Minute)
	page, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := page.RenderCost(scaleOf(t, page, docfile.Limits{}))
	tl, err := doc.TextLayer(ctx, page, c.Width, c.Height)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, l := range tl.Lines {
		texts = append(texts, l.Text)
	}
	if !slices.Equal(texts, []string{"Invoice-2024-118"}) || tl.Undrawn != 0 || tl.Hidden.NoMark != 8 {
		t.Errorf("lines %q, hidden %+v, undrawn %d; want the X's dropped as no_visible_mark", texts, tl.Hidden, tl.Undrawn)
	}
}
