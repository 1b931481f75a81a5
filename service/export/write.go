package export

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ocrgate/ocrgate/api"
)

// Software names the program that wrote an answer, in hOCR's ocr-system and ALTO's
// processingSoftware.
type Software struct {
	Name    string
	Version string
}

// Write writes pages in format f (Text, HOCR or ALTO) to w, page by page through a small buffer:
// what it holds besides the pages is that buffer. Each format is no longer than the JSON answer
// of the same pages with their words (TestNoLargerThanJSON), which is what the service prices an
// answer at before it is written, so a request asking for one costs no more than one asking for
// JSON with words.
func Write(w io.Writer, f Format, pages []api.Page, sw Software) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	o := out{bw}
	switch f {
	case Text:
		writeText(o, pages)
	case HOCR:
		writeHOCR(o, pages, sw)
	case ALTO:
		writeALTO(o, pages, sw)
	default:
		return fmt.Errorf("export: no writer for format %q", f)
	}
	return bw.Flush()
}

// writeText writes each page's text in reading order, pages separated by a form feed, as
// `ocrgate ocr` prints a document, and a final newline.
func writeText(w out, pages []api.Page) {
	for i, p := range pages {
		if i > 0 {
			w.str("\f")
		}
		w.str(p.Text)
	}
	w.str("\n")
}

// out writes to a bufio.Writer, whose first error sticks and is returned by its Flush: the
// writers check it once, at the end (see Write).
type out struct{ b *bufio.Writer }

func (o out) str(s string)                   { _, _ = o.b.WriteString(s) }
func (o out) printf(format string, a ...any) { _, _ = fmt.Fprintf(o.b, format, a...) }

// esc writes s escaped for XML text or a double-quoted attribute (quotes and line breaks
// included); characters XML cannot hold become U+FFFD.
func (o out) esc(s string) { _ = xml.EscapeText(o.b, []byte(s)) }

// percent is a confidence in [0, 1] as a whole percentage (hOCR's x_wconf).
func percent(c float64) int {
	return int(math.Round(max(0, min(1, c)) * 100))
}

func writeHOCR(w out, pages []api.Page, sw Software) {
	w.str(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<title></title>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8"/>
<meta name="ocr-system" content="`)
	w.esc(strings.TrimSpace(sw.Name + " " + sw.Version))
	w.str(`"/>
<meta name="ocr-capabilities" content="ocr_page ocr_carea ocr_line ocrx_word"/>
</head>
<body>
`)
	for i, p := range pages {
		n := p.Page
		if n == 0 {
			n = i + 1
		}
		w.printf(`<div class="ocr_page" id="page_%d" title="bbox 0 0 %d %d; ppageno %d`, n, p.Width, p.Height, n-1)
		if p.Rotation != 0 {
			// The text is turned on the page by the angle the page was turned to be read
			// (counter-clockwise, as hOCR measures it).
			w.printf("; textangle %d", p.Rotation)
		}
		if p.Source != "" {
			w.printf("; x_source %s", p.Source)
		}
		w.str("\">\n")
		for b, bl := range layout(p) {
			w.printf(`<div class="ocr_carea" id="block_%d_%d" title="bbox %d %d %d %d">`+"\n", n, b+1, bl.box.x0, bl.box.y0, bl.box.x1, bl.box.y1)
			for _, l := range bl.lines {
				w.printf(`<span class="ocr_line" id="line_%d_%d" title="bbox %d %d %d %d`, n, l.id+1, l.box.x0, l.box.y0, l.box.x1, l.box.y1)
				if p.Rotation != 0 {
					w.printf("; textangle %d", p.Rotation)
				}
				w.str(`"`)
				if l.lang != "" {
					w.str(` lang="`)
					w.esc(l.lang)
					w.str(`"`)
				}
				w.str(">")
				for k, wd := range l.words {
					if k > 0 {
						w.str(" ")
					}
					w.printf(`<span class="ocrx_word" id="word_%d_%d_%d" title="bbox %d %d %d %d; x_wconf %d">`,
						n, l.id+1, k+1, wd.box.x0, wd.box.y0, wd.box.x1, wd.box.y1, percent(wd.conf))
					w.esc(wd.text)
					w.str("</span>")
				}
				w.str("</span>\n")
			}
			w.str("</div>\n")
		}
		w.str("</div>\n")
	}
	w.str("</body>\n</html>\n")
}

func writeALTO(w out, pages []api.Page, sw Software) {
	w.str(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.loc.gov/standards/alto/ns-v4# http://www.loc.gov/standards/alto/v4/alto-4-4.xsd">
<Description>
<MeasurementUnit>pixel</MeasurementUnit>
<OCRProcessing ID="ocr_processing"><ocrProcessingStep><processingSoftware><softwareName>`)
	w.esc(sw.Name)
	w.str(`</softwareName><softwareVersion>`)
	w.esc(sw.Version)
	w.str("</softwareVersion></processingSoftware></ocrProcessingStep></OCRProcessing>\n</Description>\n<Layout>\n")
	for i, p := range pages {
		n := p.Page
		if n == 0 {
			n = i + 1
		}
		w.printf(`<Page ID="page_%d" PHYSICAL_IMG_NR="%d" WIDTH="%d" HEIGHT="%d"`, n, n, p.Width, p.Height)
		if p.Rotation != 0 {
			w.printf(` ROTATION="%d"`, p.Rotation)
		}
		w.printf(">\n<PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"%d\" HEIGHT=\"%d\">\n", p.Width, p.Height)
		for b, bl := range layout(p) {
			w.printf(`<TextBlock ID="block_%d_%d" %s>`+"\n", n, b+1, altoBox(bl.box))
			for _, l := range bl.lines {
				w.printf(`<TextLine ID="line_%d_%d" %s`, n, l.id+1, altoBox(l.box))
				if l.lang != "" {
					w.str(` LANG="`)
					w.esc(l.lang)
					w.str(`"`)
				}
				w.str(">")
				for k, wd := range l.words {
					if k > 0 {
						// The gap between the two words.
						prev := l.words[k-1].box
						gap := max(0, wd.box.x0-prev.x1)
						w.printf(`<SP HPOS="%d" VPOS="%d" WIDTH="%d"/>`, min(prev.x1, wd.box.x0), prev.y0, gap)
					}
					w.printf(`<String ID="string_%d_%d_%d" %s WC="%.2f" CONTENT="`, n, l.id+1, k+1, altoBox(wd.box), max(0, min(1, wd.conf)))
					w.esc(wd.text)
					w.str(`"/>`)
				}
				w.str("</TextLine>\n")
			}
			w.str("</TextBlock>\n")
		}
		w.str("</PrintSpace>\n</Page>\n")
	}
	w.str("</Layout>\n</alto>\n")
}

func altoBox(b box) string {
	return fmt.Sprintf(`HPOS="%d" VPOS="%d" WIDTH="%d" HEIGHT="%d"`, b.x0, b.y0, b.x1-b.x0, b.y1-b.y0)
}
