package hostile

import (
	"fmt"
	"strings"

	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// The PDFs below attack a document's survey: the pass that reads every selected page's facts and
// text layer before anything is drawn for OCR. Each is small, because its pages share their
// content: a page tree that lists one page object a thousand times is a thousand pages to a
// reader (PDFium reads it so), for six bytes each.

// repeatedPage is a PDF of pages pages that are all one page object (object 3), whose resources
// are res (Helvetica as /F1 when empty) and whose content, deflated, is content; more objects
// follow from object 5.
func repeatedPage(pages int, res, content string, more ...string) []byte {
	if res == "" {
		res = helvetica
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Repeat("3 0 R ", pages), pages),
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << %s >> /Contents 4 0 R >>", res),
		testdoc.Stream("/Filter /FlateDecode", testdoc.Deflate([]byte(content))),
	}
	return testdoc.Raw(append(objs, more...)...)
}

// textLines is content showing lines lines of a short sentence in 10 pt Helvetica (/F1), one
// under the other from the top of an A4 page.
func textLines(lines int) string {
	var b strings.Builder
	b.WriteString("BT /F1 10 Tf 12 TL 56 800 Td\n")
	for i := range lines {
		fmt.Fprintf(&b, "(Line %d of the page, set in ten point type.) '\n", i+1)
	}
	b.WriteString("ET\n")
	return b.String()
}

// PDFManyObjects is a PDF of pages pages, each a line of text over a grid of objects small
// squares (page objects of their own): tens of kilobytes for 2 000 pages of 20 000 objects each.
// Reading a page's facts walks its objects; a reader that keeps something per object it has
// looked at, for as long as the document is open, grows with the document.
func PDFManyObjects(pages, objects int) []byte {
	var b strings.Builder
	b.WriteString(textLines(1))
	b.WriteString("0.8 g\n")
	for i := range objects {
		fmt.Fprintf(&b, "%d %d 1 1 re f\n", 20+(i%500), 40+(i/500)%700)
	}
	return repeatedPage(pages, "", b.String())
}

// PDFTextBook is a PDF of pages pages of lines lines of text each, all one font: the survey reads
// every page from its text layer; only the first page's font needs checking. 2 000 pages of 40
// lines are 13 KB.
func PDFTextBook(pages, lines int) []byte {
	return repeatedPage(pages, "", textLines(lines))
}

// PDFNewFonts is a PDF of pages pages of lines lines of text, each page drawn in fonts fonts that
// no other page uses (the standard Helvetica, under a name of its own per page and font, as a
// subset's tag makes a name): a text layer is checked font by font, so every page is probed by
// OCR, where a book pays for its first page only. 2 000 pages of 4 fonts and 12 lines are 1.3 MB.
func PDFNewFonts(pages, fonts, lines int) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	for p := range pages {
		page, content := 3+2*p, 4+2*p
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		var res, text strings.Builder
		text.WriteString("BT 12 TL 56 800 Td\n")
		for f := range fonts {
			fmt.Fprintf(&res, "/F%d << /Type /Font /Subtype /Type1 /BaseFont /%s+Helvetica >> ", f, subsetTag(p*fonts+f))
		}
		for l := range lines {
			fmt.Fprintf(&text, "/F%d 10 Tf (Page %d, line %d, in a font of its own.) '\n", l%fonts, p+1, l+1)
		}
		text.WriteString("ET\n")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << %s>> >> /Contents %d 0 R >>", res.String(), content),
			testdoc.Stream("/Filter /FlateDecode", testdoc.Deflate([]byte(text.String()))))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)
	return testdoc.Raw(objs...)
}

// subsetTag is the six capital letters a subset font's name starts with, one tag per n.
func subsetTag(n int) string {
	tag := make([]byte, 6)
	for i := range tag {
		tag[5-i] = byte('A' + n%26)
		n /= 26
	}
	return string(tag)
}

// PDFFormPages is a PDF of pages pages, each a few lines of text over one form XObject of rects
// filled rectangles: every page parses the whole form again, and drawing it (the survey draws a
// page at 72 dpi to see which text is visible) fills every rectangle. 2 000 pages of 200 000
// rectangles are 490 KB.
func PDFFormPages(pages, rects int) []byte {
	var form strings.Builder
	for i := range rects {
		fmt.Fprintf(&form, "%d %d 2 2 re f\n", 20+(i*7)%550, 40+(i/79)%760)
	}
	return repeatedPage(pages, helvetica+" /XObject << /Fm1 5 0 R >>", "q 0.9 g /Fm1 Do Q\n"+textLines(3),
		testdoc.Stream("/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Filter /FlateDecode", testdoc.Deflate([]byte(form.String()))))
}

// PDFShortLines is one page of lines lines of one letter each, in a 2.5-point font (small, but
// above what the text layer drops as unreadable), in cols columns far enough apart that a gutter
// separates them: every letter is a line, and a region, of the text layer, every row of the page
// a band across its gutters, and laying the page out orders them all. The page is as tall as its
// rows need (2.7 points each); 33 000 lines in 8 columns, about as many as a text layer of 100 000
// characters holds (PDFium adds a space or a line break after each), are a 3 KB file and a page
// 11 000 points (153 inches) tall.
func PDFShortLines(lines, cols int) []byte {
	const pitchX, pitchY = 90.0, 2.7
	cols = max(1, cols)
	rows := (lines + cols - 1) / cols
	height := 20 + float64(rows)*pitchY
	var b strings.Builder
	fmt.Fprintf(&b, "BT /F1 2.5 Tf 20 %.1f Td\n", height-10)
	for i := range lines {
		b.WriteString("(x) Tj ")
		if i%cols == cols-1 {
			fmt.Fprintf(&b, "%.1f %.1f Td\n", -pitchX*float64(cols-1), -pitchY)
		} else {
			fmt.Fprintf(&b, "%.1f 0 Td ", pitchX)
		}
	}
	b.WriteString("ET")
	return testdoc.OnePage(fmt.Sprintf("0 0 %.0f %.0f", 40+pitchX*float64(cols), height), helvetica,
		testdoc.Stream("/Filter /FlateDecode", testdoc.Deflate([]byte(b.String()))))
}
