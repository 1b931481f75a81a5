package docfile_test

import (
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// layerCase is a page of the text-layer set: what its layer must read, line by line, and what
// OCR of its probes must make of it.
type layerCase struct {
	name    string
	pdf     func(t *testing.T) []byte
	lines   []string
	trusted bool
	reason  docfile.Reason
}

func fontPDF(p testdoc.FontPage) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		t.Helper()
		data, err := testdoc.FontPDF(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
}

// layerSet is the text-layer test set. The DejaVu pages are written by testdoc.FontPDF (an
// embedded subset of DejaVu Sans, as a simple TrueType font without a Unicode map or as an
// Identity-H Type0 font with one); the Helvetica pages by fpdf, and one by hand, as TeX draws
// an accent over a dotless i.
var layerSet = []layerCase{
	{
		// "Phone" drawn with a symbolic TrueType font whose codes are `"7+%-`, no ToUnicode:
		// PDFium (and pdftotext) read the codes.
		name: "truetype-without-unicode",
		pdf: fontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.NoUnicode, Runs: []testdoc.Run{
			{X: 72, Y: 760, Size: 14, Text: "Phone"}, {X: 72, Y: 730, Size: 14, Text: "Invoice number 2024-118 due 12 March"}}}),
		lines:  []string{`"7+%-`, `#%$+&'-(%)*,-.(/0/12334(5)-(3/(6:.'7`},
		reason: docfile.ReasonLayerDisagrees,
	},
	{
		name: "identity-h-polish",
		pdf: fontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.IdentityH, Runs: []testdoc.Run{
			{X: 72, Y: 760, Size: 14, Text: "Spółka z o.o., ul. Piotrkowska 12, Łódź"}, {X: 72, Y: 730, Size: 14, Text: "Faktura VAT nr 118/2024"}}}),
		lines:   []string{"Spółka z o.o., ul. Piotrkowska 12, Łódź", "Faktura VAT nr 118/2024"},
		trusted: true, reason: docfile.ReasonLayerAgrees,
	},
	{
		// The Polish line again without a ToUnicode map, its codes glyph ids (Identity-H,
		// Identity CIDToGIDMap): the embedded font's cmap, read backwards, says what they draw.
		name: "identity-h-without-tounicode",
		pdf: fontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.IdentityHNoUnicode, Runs: []testdoc.Run{
			{X: 72, Y: 760, Size: 14, Text: "Spółka z o.o., ul. Piotrkowska 12, Łódź"}, {X: 72, Y: 730, Size: 14, Text: "Faktura VAT nr 118/2024"}}}),
		lines:   []string{"Spółka z o.o., ul. Piotrkowska 12, Łódź", "Faktura VAT nr 118/2024"},
		trusted: true, reason: docfile.ReasonLayerAgrees,
	},
	{
		// And with its CIDs the characters' Unicode, mapped to glyphs by a CIDToGIDMap stream,
		// as the real invoice this case stands for is written: the codes are the text.
		name: "unicode-cids-without-tounicode",
		pdf: fontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.UnicodeCIDs, Runs: []testdoc.Run{
			{X: 72, Y: 760, Size: 14, Text: "Spółka z o.o., ul. Piotrkowska 12, Łódź"}, {X: 72, Y: 730, Size: 14, Text: "Faktura VAT nr 118/2024"}}}),
		lines:   []string{"Spółka z o.o., ul. Piotrkowska 12, Łódź", "Faktura VAT nr 118/2024"},
		trusted: true, reason: docfile.ReasonLayerAgrees,
	},
	{
		// شكرا لكم 2024 drawn as a PDF draws it: in visual order, left to right, 2024 then
		// the words' presentation forms reversed.
		name: "arabic",
		pdf: fontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.IdentityH, Runs: []testdoc.Run{
			{X: 72, Y: 760, Size: 18, Text: "2024 \uFEE2\uFEDC\uFEDF \uFE8D\uFEAE\uFEDC\uFEB7", Unicode: "2024 \u0645\u0643\u0644 \u0627\u0631\u0643\u0634"}}}),
		lines:   []string{"شكرا لكم 2024"},
		trusted: true, reason: docfile.ReasonLayerScript,
	},
	{
		// The run drawn twice, 0.4 pt apart.
		name: "overprinted-run",
		pdf: fontPDF(testdoc.FontPage{Width: 595, Height: 842, Embedding: testdoc.IdentityH, Runs: []testdoc.Run{
			{X: 72, Y: 760, Size: 14, Text: "TOTAL DUE 1,299.00", Dup: 0.4}}}),
		lines:   []string{"TOTAL DUE 1,299.00"},
		trusted: true, reason: docfile.ReasonLayerAgrees,
	},
	{
		// Fake bold as producers write it: each character drawn twice, 0.3 pt apart; a line drawn
		// again 0.7 pt right and 0.2 pt down; a whole block drawn again after it; one word by
		// word over the line; and a line in fill-and-stroke mode (drawn once).
		name: "overprinted-lines",
		pdf: func(t *testing.T) []byte {
			pdf := newFpdf()
			pdf.AddPage()
			pdf.SetFont("Helvetica", "", 14)
			x := 72.0
			for _, r := range "TOTAL DUE 1,299.00" {
				pdf.Text(x, 80, string(r))
				pdf.Text(x+0.3, 80, string(r))
				x += pdf.GetStringWidth(string(r))
			}
			pdf.Text(72, 120, "AMOUNT PAID 1,299.00")
			pdf.Text(72.7, 120.2, "AMOUNT PAID 1,299.00")
			for _, d := range []float64{0, 0.5} {
				for i, l := range []string{"INVOICE 2024-118", "THANK YOU"} {
					pdf.Text(72+d, 160+float64(i)*30+d/2, l)
				}
			}
			pdf.Text(72, 240, "WORD BY WORD")
			pdf.Text(72.4, 240, "WORD")
			pdf.Text(72.4+pdf.GetStringWidth("WORD "), 240, "BY")
			pdf.Text(72.4+pdf.GetStringWidth("WORD BY "), 240, "WORD")
			pdf.SetTextRenderingMode(2)
			pdf.Text(72, 280, "BALANCE 0.00")
			return output(t, pdf)
		},
		lines:   []string{"TOTAL DUE 1,299.00", "AMOUNT PAID 1,299.00", "INVOICE 2024-118", "THANK YOU", "WORD BY WORD", "BALANCE 0.00"},
		trusted: true, reason: docfile.ReasonLayerAgrees,
	},
	{
		// "A naïve approach" as TeX's \"\i draws it: a spacing diaeresis (¨, 0xA8 in WinAnsi)
		// over a dotless ı, each a glyph of its own.
		name: "accent-over-dotless-i",
		pdf: func(*testing.T) []byte {
			return testdoc.OnePage("0 0 595 842",
				"/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [128 /dotlessi] >> >> >>",
				testdoc.Stream("", []byte("BT /F1 14 Tf 72 760 Td (A na) Tj ET BT /F1 14 Tf 100.4 760 Td (\250) Tj ET BT /F1 14 Tf 100.8 760 Td (\200ve approach) Tj ET")))
		},
		lines:   []string{"A na\u00efve approach"},
		trusted: true, reason: docfile.ReasonLayerAgrees,
	},
}

// TestTextLayerSet reads each page of the set's text layer, checks it against OCR of its probes
// with the real recognizer, and wants the right text and the right verdict.
func TestTextLayerSet(t *testing.T) {
	pl := pipeline(t)
	for _, tc := range layerSet {
		t.Run(tc.name, func(t *testing.T) {
			doc := open(t, tc.pdf(t))
			ctx := ctxFor(t, time.Minute)
			p, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !p.TextUsable().Usable {
				t.Fatalf("the layer's structure is refused: %+v", p.TextUsable())
			}
			c := p.RenderCost(scaleOf(t, p, docfile.Limits{}))
			tl, err := doc.TextLayer(ctx, p, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range tl.Lines {
				got = append(got, l.Text)
				if !norm.NFC.IsNormalString(l.Text) {
					t.Errorf("%q is not NFC", l.Text)
				}
			}
			if !equalStrings(got, tc.lines) {
				t.Errorf("lines\n got %q\nwant %q", got, tc.lines)
			}
			probes := tl.Probes(4)
			if len(probes) == 0 {
				t.Fatal("no probes")
			}
			strip, quads, err := doc.DrawProbes(ctx, p, probes, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			if h := strip.Bounds().Dy(); h > len(probes)*docfile.ProbeHeight+len(probes) {
				t.Errorf("a strip of %d probes is %d px tall", len(probes), h)
			}
			read, err := pl.ReadCrops(ctx, strip, quads)
			if err != nil {
				t.Fatal(err)
			}
			readings := make([]docfile.Reading, len(read))
			for i, r := range read {
				readings[i] = docfile.Reading{Text: r.Text, Score: r.Score}
				t.Logf("probe %q (%s): OCR reads %q at %.2f", probes[i].Text, probes[i].Font, r.Text, r.Score)
			}
			check := docfile.Judge(probes, readings, pl.Reads)
			if check.Trusted != tc.trusted || check.Reason != tc.reason {
				t.Errorf("check %+v, want trusted %v, %s", check, tc.trusted, tc.reason)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestJudge: the verdict on readings, without the recognizer.
func TestJudge(t *testing.T) {
	latin := func(r rune) bool { return r < 0x250 || r == ' ' }
	pr := func(font, text string) docfile.Probe { return docfile.Probe{Text: text, Font: font} }
	rd := func(text string, score float32) docfile.Reading { return docfile.Reading{Text: text, Score: score} }
	tests := []struct {
		name     string
		probes   []docfile.Probe
		readings []docfile.Reading
		trusted  bool
		reason   docfile.Reason
		doubted  []string // the fonts whose lines OCR reads again
	}{
		{"agrees despite a misread", []docfile.Probe{pr("A", "Invoice 2024-118")}, []docfile.Reading{rd("lnvoice 2024-1l8", 0.9)}, true, docfile.ReasonLayerAgrees, nil},
		{"accents aside", []docfile.Probe{pr("A", "Spółka Łódź")}, []docfile.Reading{rd("Spolka Lodz", 0.9)}, true, docfile.ReasonLayerAgrees, nil},
		{"codes, not letters", []docfile.Probe{pr("A", `"7+%-`)}, []docfile.Reading{rd("Phone", 0.95)}, false, docfile.ReasonLayerDisagrees, nil},
		{"nothing read", []docfile.Probe{pr("A", "Total due")}, []docfile.Reading{rd("", 0)}, false, docfile.ReasonLayerDisagrees, nil},
		// The page keeps font A's lines; B's are read again (see TextLayer.Doubted).
		{"one bad font of two", []docfile.Probe{pr("A", "Invoice"), pr("B", "#%$+&'-")}, []docfile.Reading{rd("Invoice", 0.9), rd("Amount", 0.9)}, true, docfile.ReasonLayerAgrees, []string{"B"}},
		{"every font bad", []docfile.Probe{pr("A", "#%$+&'-"), pr("B", "#%$+&'-")}, []docfile.Reading{rd("Invoice", 0.9), rd("Amount", 0.9)}, false, docfile.ReasonLayerDisagrees, nil},
		{"a bad line of a good font", []docfile.Probe{pr("A", "Invoice"), pr("A", "Total due"), pr("A", "Thanks")}, []docfile.Reading{rd("Invoice", 0.9), rd("Total due", 0.9), rd("~~", 0.2)}, true, docfile.ReasonLayerAgrees, nil},
		{"arabic, consistent", []docfile.Probe{pr("A", "شكرا لكم")}, []docfile.Reading{rd("", 0)}, true, docfile.ReasonLayerScript, nil},
		{"arabic over latin ink", []docfile.Probe{pr("A", "شكرا لكم")}, []docfile.Reading{rd("Phone number", 0.95)}, false, docfile.ReasonLayerDisagrees, nil},
		{"scripts mixed in a word", []docfile.Probe{pr("A", "шكرا")}, []docfile.Reading{rd("", 0)}, false, docfile.ReasonLayerDisagrees, nil},
		{"private use", []docfile.Probe{pr("A", "\uE001\uE002\uE003\uE004")}, []docfile.Reading{rd("Total", 0.9)}, false, docfile.ReasonLayerDisagrees, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := docfile.Judge(tc.probes, tc.readings, latin)
			if c.Trusted != tc.trusted || c.Reason != tc.reason || !equalStrings(c.Doubted, tc.doubted) {
				t.Errorf("%+v, want trusted %v, %s, doubted %q", c, tc.trusted, tc.reason, tc.doubted)
			}
		})
	}
}
