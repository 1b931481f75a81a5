package export

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"io"
	"math"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/ocrgate/ocrgate/api"
)

// PDFImage is the picture of one page of a searchable PDF, as the PDF embeds it: a JPEG file as
// it is (DCTDecode: not decoded, not re-encoded), or 8-bit samples that the writer compresses.
type PDFImage struct {
	// JPEG is a baseline or progressive JPEG file of Width×Height pixels, stored upright (no EXIF
	// orientation to apply), of 1 (gray) or 3 (YCbCr/RGB) components.
	JPEG []byte
	// Samples are Width×Height pixels, Components (1: gray, 3: RGB) bytes each, row by row; used
	// when JPEG is nil. With Bilevel, they are one bit a pixel instead (1: white), each row
	// starting on a byte, as a fax page is.
	Samples    []byte
	Components int
	Bilevel    bool
	Width      int
	Height     int
	// DPI is the image's resolution, which sets the page's size (a pixel is 72/DPI points); 0:
	// the JFIF density of a JPEG, or 72.
	DPI float64
}

// PDFPage is one page of a searchable PDF: its picture and the answer that read it, whose boxes
// are in the picture's pixels.
type PDFPage struct {
	Image  PDFImage
	Answer api.Page
}

// Object numbers of the parts every searchable PDF has; a page's objects follow (pageObjects each).
const (
	objCatalog = iota + 1
	objPages
	objFont      // the Type0 font every word is set in
	objCIDFont   // its descendant
	objFontDesc  // its descriptor
	objToUnicode // its map from codes to text
	objFirstPage
	pageObjects = 3 // the page, its content stream, its image
)

// glyphAscent and glyphDescent are the font's ascent and descent in thousandths of the font
// size: a word's box spans one em, its baseline a fifth of it above the box's bottom.
const (
	glyphAscent  = 800
	glyphDescent = -200
)

// PDFWriter writes a searchable PDF page by page: each page's picture fills the page and every
// word of its answer is laid over it in invisible text (render mode 3), on its word box, so that
// a viewer finds, selects and copies it there. It holds one page at a time, and the set of
// characters seen so far (for the font's ToUnicode map, written at the end).
//
// The words are set in one font that has no glyphs at all: a Type0 font (Identity-H, two-byte
// codes) over a CID font every code of which is one em wide, with a ToUnicode map from each code
// to its character, so that copy and paste gives the recognized text in any script. The font is
// not embedded: no glyph is ever drawn (render mode 3), and text extraction needs only the map.
type PDFWriter struct {
	w       *countWriter
	offsets []int64 // by object number
	pages   int
	glyphs
	err error
	sw  Software
}

// glyphs gives every character of a document a two-byte code of the glyphless font.
type glyphs struct {
	codes map[rune]uint16
	runes []rune // by code - 1
}

// NewPDFWriter starts a searchable PDF on w.
func NewPDFWriter(w io.Writer, sw Software) *PDFWriter {
	p := &PDFWriter{w: &countWriter{w: bufio.NewWriterSize(w, 64<<10)}, glyphs: glyphs{codes: map[rune]uint16{}}, sw: sw}
	p.offsets = make([]int64, objFirstPage)
	p.w.str("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return p
}

// AddPage writes one page.
func (p *PDFWriter) AddPage(pg PDFPage) error {
	if p.err != nil {
		return p.err
	}
	img := pg.Image
	if img.Width <= 0 || img.Height <= 0 {
		return fmt.Errorf("export: a page image of %d×%d pixels", img.Width, img.Height)
	}
	dpi := img.DPI
	if dpi <= 0 && img.JPEG != nil {
		dpi = jfifDPI(img.JPEG)
	}
	if dpi <= 0 {
		dpi = 72
	}
	scale := 72 / dpi // points a pixel
	wPt, hPt := float64(img.Width)*scale, float64(img.Height)*scale
	page := objFirstPage + p.pages*pageObjects
	p.pages++

	var content bytes.Buffer
	fmt.Fprintf(&content, "q %s 0 0 %s 0 0 cm /Im0 Do Q\n", num(wPt), num(hPt))
	// The answer's boxes are in its page's pixels: the picture's, unless the two differ (a page
	// read smaller than it is stored).
	sx, sy := wPt/float64(max(1, pg.Answer.Width)), hPt/float64(max(1, pg.Answer.Height))
	if pg.Answer.Width == 0 || pg.Answer.Height == 0 {
		sx, sy = scale, scale
	}
	p.textLayer(&content, "F1", p.pageWords(pg.Answer), func(q api.Point) (float64, float64) {
		return float64(q.X) * sx, hPt - float64(q.Y)*sy
	})

	p.begin(page)
	p.w.printf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Contents %d 0 R /Resources << /XObject << /Im0 %d 0 R >> /Font << /F1 %d 0 R >> >> >>\nendobj\n",
		objPages, num(wPt), num(hPt), page+1, page+2, objFont)
	p.stream(page+1, "", deflate(content.Bytes()))
	if img.JPEG != nil {
		cs := "/DeviceRGB"
		if jpegComponents(img.JPEG) == 1 {
			cs = "/DeviceGray"
		}
		p.stream(page+2, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8 /Filter /DCTDecode ",
			img.Width, img.Height, cs), img.JPEG)
	} else {
		cs, bits, size := "/DeviceRGB", 8, img.Width*img.Height*img.Components
		if img.Components == 1 {
			cs = "/DeviceGray"
		}
		if img.Bilevel {
			cs, bits, size = "/DeviceGray", 1, (img.Width+7)/8*img.Height
		}
		if len(img.Samples) != size {
			return fmt.Errorf("export: %d bytes of samples for %d×%d×%d", len(img.Samples), img.Width, img.Height, img.Components)
		}
		p.stream(page+2, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent %d /Filter /FlateDecode ",
			img.Width, img.Height, cs, bits), deflate(img.Samples))
	}
	return p.w.err
}

// pdfWord is a word to place: its text and its box's corners, clockwise from the top-left corner
// of the text (so a turned word's box is turned too).
type pdfWord struct {
	text string
	pts  []api.Point
	// space: another word of the line follows. A space is set after this one, past its box, so
	// that text extraction breaks the words there however close they stand (pdftotext joins
	// words whose gap is under a tenth of the font size).
	space bool
}

// pageWords are the words of a page's answer in reading order (each region's words, or its
// whole text on its box when its words are not known), their characters given codes.
func (p *glyphs) pageWords(a api.Page) []pdfWord {
	var out []pdfWord
	p.code(' ')
	add := func(text string, s api.BoundingShape) {
		text = strings.TrimSpace(text)
		if text == "" || len(s.Points) != 4 {
			return
		}
		for _, r := range text {
			p.code(r)
		}
		out = append(out, pdfWord{text: text, pts: s.Points})
	}
	for _, r := range a.Regions {
		first := len(out)
		if len(r.Words) == 0 {
			add(r.Text, r.BoundingShape)
		}
		for _, w := range r.Words {
			add(w.Text, w.BoundingShape)
		}
		for i := first; i < len(out)-1; i++ {
			out[i].space = true
		}
	}
	return out
}

// code gives r a code when it has none (past 65 534 characters, the rest share code 0).
func (p *glyphs) code(r rune) {
	if _, ok := p.codes[r]; !ok && len(p.runes) < math.MaxUint16-1 {
		p.runes = append(p.runes, r)
		p.codes[r] = uint16(len(p.runes))
	}
}

// textLayer writes words as one text object of invisible text in font (a resource name), each
// word's corners placed in user space by at.
func (p *glyphs) textLayer(b *bytes.Buffer, font string, words []pdfWord, at func(api.Point) (float64, float64)) {
	if len(words) == 0 {
		return
	}
	fmt.Fprintf(b, "BT 3 Tr /%s 1 Tf\n", font)
	for _, wd := range words {
		p.placeWord(b, wd, at)
	}
	b.WriteString("ET\n")
}

// placeWord sets one word so that its glyphs, n ems wide and one em tall, fill its box. The
// text runs along the nearest right angle to the box's top edge, over the rectangle around the
// box: text set a degree off the horizontal makes viewers and pdftotext split a word where its
// baseline drifts, while a turned page's words must run turned. The text matrix's first column
// is a glyph's advance along the text, its second the font size up from the baseline, which lies
// a fifth of the height above the text's bottom edge. at turns a pixel of the answer into user
// space (points, y up).
func (p *glyphs) placeWord(b *bytes.Buffer, w pdfWord, at func(api.Point) (float64, float64)) {
	xMin, yMin, xMax, yMax := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, q := range w.pts {
		x, y := at(q)
		xMin, yMin, xMax, yMax = math.Min(xMin, x), math.Min(yMin, y), math.Max(xMax, x), math.Max(yMax, y)
	}
	x0, y0 := at(w.pts[0])
	x1, y1 := at(w.pts[1])
	dx, dy := x1-x0, y1-y0
	quarter := (int(math.Round(math.Atan2(dy, dx)/(math.Pi/2))) + 4) % 4
	var ux, uy, along, up, x, y float64 // direction of the text, its length and height, its start
	switch quarter {
	case 0: // left to right
		ux, uy, along, up, x, y = 1, 0, xMax-xMin, yMax-yMin, xMin, yMin
	case 1: // bottom to top
		ux, uy, along, up, x, y = 0, 1, yMax-yMin, xMax-xMin, xMax, yMin
	case 2: // upside down
		ux, uy, along, up, x, y = -1, 0, xMax-xMin, yMax-yMin, xMax, yMax
	default: // top to bottom
		ux, uy, along, up, x, y = 0, -1, yMax-yMin, xMax-xMin, xMin, yMax
	}
	if along < 0.01 || up < 0.01 {
		return
	}
	vx, vy := -uy, ux // up from the baseline
	adv := along / float64(len([]rune(w.text)))
	base := -float64(glyphDescent) / 1000 * up
	fmt.Fprintf(b, "%s %s %s %s %s %s Tm <", num(ux*adv), num(uy*adv), num(vx*up), num(vy*up), num(x+vx*base), num(y+vy*base))
	for _, r := range w.text {
		fmt.Fprintf(b, "%04X", p.codes[r])
	}
	if w.space {
		fmt.Fprintf(b, "%04X", p.codes[' '])
	}
	b.WriteString("> Tj\n")
}

// Close writes the font, the page tree, the catalog and the cross-reference table.
func (p *PDFWriter) Close() error {
	if p.err != nil {
		return p.err
	}
	font, cid, desc := fontDicts(objCIDFont, objFontDesc, objToUnicode)
	p.begin(objFont)
	p.w.printf("%s\nendobj\n", font)
	p.begin(objCIDFont)
	p.w.printf("%s\nendobj\n", cid)
	p.begin(objFontDesc)
	p.w.printf("%s\nendobj\n", desc)
	p.stream(objToUnicode, "", deflate(p.toUnicode()))
	p.begin(objPages)
	p.w.str("<< /Type /Pages /Kids [")
	for i := range p.pages {
		p.w.printf("%d 0 R ", objFirstPage+i*pageObjects)
	}
	p.w.printf("] /Count %d >>\nendobj\n", p.pages)
	p.begin(objCatalog)
	p.w.printf("<< /Type /Catalog /Pages %d 0 R >>\nendobj\n", objPages)
	xref := p.w.n
	p.w.printf("xref\n0 %d\n0000000000 65535 f \n", len(p.offsets))
	for _, off := range p.offsets[1:] {
		p.w.printf("%010d 00000 n \n", off)
	}
	p.w.printf("trailer\n<< /Size %d /Root %d 0 R /Info << /Producer (%s) >> >>\nstartxref\n%d\n%%%%EOF\n",
		len(p.offsets), objCatalog, pdfString(strings.TrimSpace(p.sw.Name+" "+p.sw.Version)), xref)
	if p.w.err != nil {
		return p.w.err
	}
	return p.w.w.Flush()
}

// fontDicts are the dictionaries of the glyphless font (a Type0 font), its CID font and its
// descriptor, which refer to each other and to the ToUnicode map by the object numbers given.
func fontDicts(cid, desc, toUnicode int) (font, cidFont, descriptor string) {
	font = fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /GlyphLess /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>", cid, toUnicode)
	cidFont = fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /GlyphLess /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW 1000 /CIDToGIDMap /Identity >>", desc)
	descriptor = fmt.Sprintf("<< /Type /FontDescriptor /FontName /GlyphLess /Flags 4 /FontBBox [0 %d 1000 %d] /ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV 80 >>",
		glyphDescent, glyphAscent, glyphAscent, glyphDescent, glyphAscent)
	return font, cidFont, descriptor
}

// toUnicode is the CMap from each code to its character (UTF-16BE), in blocks of at most 100
// entries as the CMap format requires.
func (p *glyphs) toUnicode() []byte {
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n/CMapName /GlyphLess-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	codes := make([]int, len(p.runes))
	for i := range codes {
		codes[i] = i + 1
	}
	sort.Ints(codes)
	for i := 0; i < len(codes); i += 100 {
		block := codes[i:min(i+100, len(codes))]
		fmt.Fprintf(&b, "%d beginbfchar\n", len(block))
		for _, c := range block {
			fmt.Fprintf(&b, "<%04X> <", c)
			for _, u := range utf16.Encode([]rune{p.runes[c-1]}) {
				fmt.Fprintf(&b, "%04X", u)
			}
			b.WriteString(">\n")
		}
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.Bytes()
}

// begin starts object n, noting where it starts.
func (p *PDFWriter) begin(n int) {
	for len(p.offsets) <= n {
		p.offsets = append(p.offsets, 0)
	}
	p.offsets[n] = p.w.n
	p.w.printf("%d 0 obj\n", n)
}

// stream writes object n: a stream of data whose dictionary holds dict (and a FlateDecode filter
// when dict names none).
func (p *PDFWriter) stream(n int, dict string, data []byte) {
	p.begin(n)
	if dict == "" {
		dict = "/Filter /FlateDecode "
	}
	p.w.printf("<< %s/Length %d >>\nstream\n", dict, len(data))
	p.w.write(data)
	p.w.str("\nendstream\nendobj\n")
}

func deflate(data []byte) []byte {
	var b bytes.Buffer
	z, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	_, _ = z.Write(data)
	_ = z.Close()
	return b.Bytes()
}

// num is a number as a PDF content stream writes it: at most three decimals, no exponent.
func num(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// pdfString is s as a PDF literal string of printable ASCII.
func pdfString(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '(' || r == ')' || r == '\\' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// jfifDPI is the resolution a JPEG's JFIF header states, 0 when it states none in dots per inch
// or centimetre.
func jfifDPI(j []byte) float64 {
	if len(j) < 18 || j[0] != 0xFF || j[1] != 0xD8 || j[2] != 0xFF || j[3] != 0xE0 || string(j[6:11]) != "JFIF\x00" {
		return 0
	}
	x := float64(int(j[14])<<8 | int(j[15]))
	switch j[13] {
	case 1:
		return x
	case 2:
		return x * 2.54
	}
	return 0
}

// jpegComponents is the number of components of a JPEG's frame (0 when no frame header is found).
func jpegComponents(j []byte) int {
	for i := 2; i+9 < len(j); {
		if j[i] != 0xFF {
			return 0
		}
		m := j[i+1]
		if m == 0xFF {
			i++
			continue
		}
		l := int(j[i+2])<<8 | int(j[i+3])
		if m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC {
			return int(j[i+9])
		}
		i += 2 + l
	}
	return 0
}

// countWriter counts what it writes and keeps the first error.
type countWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}
func (c *countWriter) str(s string)                   { c.write([]byte(s)) }
func (c *countWriter) printf(format string, a ...any) { c.str(fmt.Sprintf(format, a...)) }

// EmbeddableJPEG reports whether a JPEG file can be a page's picture as it is: a frame of 1 or 3
// components (a CMYK or YCCK JPEG, whose colours PDF readers invert differently, is not).
func EmbeddableJPEG(j []byte) bool {
	n := jpegComponents(j)
	return n == 1 || n == 3
}

// bilevel reports whether every pixel of g is black or white (a fax, a binarized scan).
func bilevel(g *image.Gray) bool {
	b := g.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for _, v := range g.Pix[g.PixOffset(b.Min.X, y) : g.PixOffset(b.Min.X, y)+b.Dx()] {
			if v != 0 && v != 0xff {
				return false
			}
		}
	}
	return true
}

// packBits is a black-and-white picture at one bit a pixel, rows starting on a byte.
func packBits(g *image.Gray) PDFImage {
	b := g.Bounds()
	w, h := b.Dx(), b.Dy()
	stride := (w + 7) / 8
	s := make([]byte, stride*h)
	for y := range h {
		row := g.Pix[g.PixOffset(b.Min.X, b.Min.Y+y):]
		out := s[y*stride:]
		for x := range w {
			if row[x] != 0 {
				out[x>>3] |= 0x80 >> (x & 7)
			}
		}
	}
	return PDFImage{Samples: s, Components: 1, Bilevel: true, Width: w, Height: h}
}

// SamplesOf is a decoded picture as a page's samples: gray stays gray (at one bit a pixel when it
// is black and white), anything else is RGB (transparency dropped: the page is white underneath).
func SamplesOf(img image.Image) PDFImage {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if g, ok := img.(*image.Gray); ok {
		if bilevel(g) {
			return packBits(g)
		}
		s := make([]byte, 0, w*h)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			s = append(s, g.Pix[g.PixOffset(b.Min.X, y):g.PixOffset(b.Min.X, y)+w]...)
		}
		return PDFImage{Samples: s, Components: 1, Width: w, Height: h}
	}
	s := make([]byte, 0, w*h*3)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			// Over white: what a viewer shows of a transparent pixel.
			white := 0xffff - a
			s = append(s, byte((r+white)>>8), byte((g+white)>>8), byte((bl+white)>>8))
		}
	}
	return PDFImage{Samples: s, Components: 3, Width: w, Height: h}
}
