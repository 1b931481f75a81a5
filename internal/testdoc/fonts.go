package testdoc

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// dejaVu is DejaVu Sans cut down to the characters the text-layer tests draw (Latin, Polish,
// Arabic with its presentation forms; see testdata/make-font.sh).
//
//go:embed testdata/dejavu-subset.ttf
var dejaVu []byte

// Embedding says how a Run's font is put in the PDF and what its text layer can say.
type Embedding int

const (
	// IdentityH is a Type0 font (CIDFontType2) whose two-byte codes are glyph ids, with a
	// ToUnicode map: what born-digital PDFs of any script are written with today.
	IdentityH Embedding = iota
	// NoUnicode is a simple TrueType font, symbolic, whose one-byte codes its own cmap maps to
	// glyphs in an order of the producer's making, with no ToUnicode map and no Encoding: a
	// text layer that says nothing true ("Phone" drawn with codes `"7+%-`).
	NoUnicode
	// IdentityHNoUnicode is IdentityH without its ToUnicode map: the codes are glyph ids, and
	// only the embedded font's own cmap and glyph names say what they draw.
	IdentityHNoUnicode
	// UnicodeCIDs is a Type0 font under Identity-H whose CIDs are the characters' Unicode,
	// mapped to glyphs by a CIDToGIDMap stream, with no ToUnicode map: what many invoicing
	// libraries write (the codes happen to be the text; nothing in the PDF says so).
	UnicodeCIDs
)

// Run is text drawn with the embedded DejaVu Sans.
type Run struct {
	// X, Y is the baseline's start in PDF user space (points, y up from the media box's
	// bottom-left corner); Angle turns the baseline counter-clockwise, in degrees.
	X, Y, Size, Angle float64
	// Text is the glyphs drawn, left to right along the baseline, each the font's glyph for the
	// rune (an Arabic line is given as presentation forms in visual order).
	Text string
	// Unicode is what the ToUnicode map says of each glyph of Text, rune for rune; empty: Text.
	Unicode string
	// Render is the text render mode (0: fill).
	Render int
	// Dup draws the run again this far to the right (points), as fake bold does; 0: once.
	Dup float64
}

// FontPage describes a page drawn with DejaVu Sans.
type FontPage struct {
	Width, Height float64 // media box
	Rotate        int     // the page's /Rotate
	Embedding     Embedding
	Runs          []Run
	// Content is more content drawn after the runs (Helvetica is /F2).
	Content string
}

// FontPDF writes a one-page PDF of p.
func FontPDF(p FontPage) ([]byte, error) {
	f, err := sfnt.Parse(dejaVu)
	if err != nil {
		return nil, err
	}
	var buf sfnt.Buffer
	upem := float64(f.UnitsPerEm())
	type glyph struct {
		gid     sfnt.GlyphIndex
		unicode rune
		width   float64 // 1000ths of the em
	}
	var glyphs []glyph // in order of first use
	index := map[sfnt.GlyphIndex]int{}
	var content strings.Builder
	codes := make([][]int, len(p.Runs)) // glyph indices of each run
	for i, r := range p.Runs {
		uni := []rune(r.Unicode)
		text := []rune(r.Text)
		if len(uni) == 0 {
			uni = text
		}
		if len(uni) != len(text) {
			return nil, fmt.Errorf("testdoc: run %d: %d glyphs, %d unicode", i, len(text), len(uni))
		}
		for k, ch := range text {
			gid, err := f.GlyphIndex(&buf, ch)
			if err != nil || gid == 0 {
				return nil, fmt.Errorf("testdoc: no glyph for %U", ch)
			}
			j, ok := index[gid]
			if !ok {
				adv, err := f.GlyphAdvance(&buf, gid, fixed.I(int(upem)), font.HintingNone)
				if err != nil {
					return nil, err
				}
				j = len(glyphs)
				index[gid] = j
				glyphs = append(glyphs, glyph{gid: gid, unicode: uni[k], width: math.Round(float64(adv) / 64 * 1000 / upem)})
			} else if glyphs[j].unicode != uni[k] {
				return nil, fmt.Errorf("testdoc: glyph of %U is said to be both %U and %U", ch, glyphs[j].unicode, uni[k])
			}
			codes[i] = append(codes[i], j)
		}
	}
	// The codes: glyph ids for Identity-H; for NoUnicode one byte each, given in the order
	// glyphs are first used from a list that never gives a glyph its own character's code.
	const scramble = "\"7+%-#$&'()*,./0123456:;<=>?@[]^_{|}~89ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!"
	code := func(j int) string {
		switch p.Embedding {
		case IdentityH, IdentityHNoUnicode:
			return fmt.Sprintf("%04X", glyphs[j].gid)
		case UnicodeCIDs:
			return fmt.Sprintf("%04X", glyphs[j].unicode)
		}
		return fmt.Sprintf("%02X", scramble[j])
	}
	if p.Embedding == NoUnicode && len(glyphs) > len(scramble) {
		return nil, errors.New("testdoc: too many glyphs for a one-byte font")
	}
	for i, r := range p.Runs {
		var hex strings.Builder
		for _, j := range codes[i] {
			hex.WriteString(code(j))
		}
		s, c := math.Sincos(r.Angle * math.Pi / 180)
		draw := func(dx float64) {
			fmt.Fprintf(&content, "BT %d Tr /F1 %g Tf %.4f %.4f %.4f %.4f %.3f %.3f Tm <%s> Tj ET\n",
				r.Render, r.Size, c, s, -s, c, r.X+dx*c, r.Y+dx*s, hex.String())
		}
		draw(0)
		if r.Dup != 0 {
			draw(r.Dup)
		}
	}
	content.WriteString(p.Content)

	var fontObjs []string
	var fontRef string
	switch p.Embedding {
	case IdentityH:
		var w, cmap strings.Builder
		for _, g := range glyphs {
			fmt.Fprintf(&w, "%d [%g] ", g.gid, g.width)
		}
		for _, g := range glyphs {
			u := utf16be(g.unicode)
			fmt.Fprintf(&cmap, "<%04X> <%s>\n", g.gid, u)
		}
		toUnicode := fmt.Sprintf("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"+
			"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"+
			"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n%d beginbfchar\n%sendbfchar\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n",
			len(glyphs), cmap.String())
		// Objects 5..: Type0, CIDFont, descriptor, font file, ToUnicode.
		fontRef = "5 0 R"
		fontObjs = []string{
			"<< /Type /Font /Subtype /Type0 /BaseFont /AAAAAA+DejaVuSans /Encoding /Identity-H /DescendantFonts [6 0 R] /ToUnicode 9 0 R >>",
			fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /AAAAAA+DejaVuSans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 7 0 R /CIDToGIDMap /Identity /DW 600 /W [%s] >>", w.String()),
			descriptor(4, 8),
			Stream(fmt.Sprintf("/Length1 %d", len(dejaVu)), dejaVu),
			Stream("", []byte(toUnicode)),
		}
	case IdentityHNoUnicode:
		var w strings.Builder
		for _, g := range glyphs {
			fmt.Fprintf(&w, "%d [%g] ", g.gid, g.width)
		}
		fontRef = "5 0 R"
		fontObjs = []string{
			"<< /Type /Font /Subtype /Type0 /BaseFont /CCCCCC+DejaVuSans /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
			fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /CCCCCC+DejaVuSans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 7 0 R /CIDToGIDMap /Identity /DW 600 /W [%s] >>", w.String()),
			descriptor(4, 8),
			Stream(fmt.Sprintf("/Length1 %d", len(dejaVu)), dejaVu),
		}
	case UnicodeCIDs:
		var w strings.Builder
		var cidToGID []byte
		for _, g := range glyphs {
			if g.unicode > 0xffff {
				return nil, fmt.Errorf("testdoc: %U is not a two-byte CID", g.unicode)
			}
			fmt.Fprintf(&w, "%d [%g] ", g.unicode, g.width)
			if n := 2 * int(g.unicode+1); n > len(cidToGID) {
				cidToGID = append(cidToGID, make([]byte, n-len(cidToGID))...)
			}
			binary.BigEndian.PutUint16(cidToGID[2*g.unicode:], uint16(g.gid))
		}
		fontRef = "5 0 R"
		fontObjs = []string{
			"<< /Type /Font /Subtype /Type0 /BaseFont /DDDDDD+DejaVuSans /Encoding /Identity-H /DescendantFonts [6 0 R] >>",
			fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /DDDDDD+DejaVuSans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 7 0 R /CIDToGIDMap 9 0 R /DW 600 /W [%s] >>", w.String()),
			descriptor(4, 8),
			Stream(fmt.Sprintf("/Length1 %d", len(dejaVu)), dejaVu),
			Stream("", cidToGID),
		}
	case NoUnicode:
		// The font's own cmap maps each code (format 0, platform 1) and 0xF000 + code
		// (format 4, platform 3 encoding 0, the symbol cmap) to its glyph.
		var byCode [256]sfnt.GlyphIndex
		var widths [256]float64
		for j, g := range glyphs {
			byCode[scramble[j]] = g.gid
			widths[scramble[j]] = g.width
		}
		ttf, err := withSymbolCmap(dejaVu, byCode)
		if err != nil {
			return nil, err
		}
		var w strings.Builder
		for c := 32; c < 127; c++ {
			fmt.Fprintf(&w, "%g ", widths[c])
		}
		fontRef = "5 0 R"
		fontObjs = []string{
			fmt.Sprintf("<< /Type /Font /Subtype /TrueType /BaseFont /BBBBBB+DejaVuSans /FirstChar 32 /LastChar 126 /Widths [%s] /FontDescriptor 6 0 R >>", w.String()),
			descriptor(4, 7),
			Stream(fmt.Sprintf("/Length1 %d", len(ttf)), ttf),
		}
	}
	helv := 5 + len(fontObjs)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Rotate %d /Resources << /Font << /F1 %s /F2 %d 0 R >> >> /Contents 4 0 R >>",
			p.Width, p.Height, p.Rotate, fontRef, helv),
		Stream("", []byte(content.String())),
	}
	objs = append(objs, fontObjs...)
	objs = append(objs, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	return Raw(objs...), nil
}

// descriptor is a font descriptor object for DejaVu Sans with the given flags (4: symbolic)
// whose font file is object file.
func descriptor(flags, file int) string {
	return fmt.Sprintf("<< /Type /FontDescriptor /FontName /DejaVuSans /Flags %d /FontBBox [-1021 -463 1793 1232] /ItalicAngle 0 /Ascent 928 /Descent -236 /CapHeight 729 /StemV 80 /FontFile2 %d 0 R >>", flags, file)
}

func utf16be(r rune) string {
	if r < 0x10000 {
		return fmt.Sprintf("%04X", r)
	}
	r -= 0x10000
	return fmt.Sprintf("%04X%04X", 0xD800+(r>>10), 0xDC00+(r&0x3FF))
}

// withSymbolCmap returns the TrueType font ttf with its cmap table replaced by one that maps
// one-byte codes to glyphs: a (1, 0) format 0 subtable, and a (3, 0) format 4 subtable over
// 0xF000 + code. The other tables are copied as they are; the table directory is rewritten.
func withSymbolCmap(ttf []byte, byCode [256]sfnt.GlyphIndex) ([]byte, error) {
	be := binary.BigEndian
	if len(ttf) < 12 {
		return nil, errors.New("testdoc: short font")
	}
	n := int(be.Uint16(ttf[4:]))
	type table struct {
		tag  string
		data []byte
	}
	var tables []table
	for i := range n {
		e := ttf[12+16*i:]
		off, length := be.Uint32(e[8:]), be.Uint32(e[12:])
		if int(off)+int(length) > len(ttf) {
			return nil, errors.New("testdoc: bad font table")
		}
		tag := string(e[:4])
		if tag == "cmap" {
			continue
		}
		tables = append(tables, table{tag, ttf[off : off+length]})
	}
	// The new cmap.
	var f0 []byte
	f0 = be.AppendUint16(f0, 0)
	f0 = be.AppendUint16(f0, 262)
	f0 = be.AppendUint16(f0, 0)
	for c := range 256 {
		f0 = append(f0, byte(min(byCode[c], 255)))
	}
	// Format 0 holds glyph ids up to 255 only; the format 4 subtable holds any.
	var codes []int
	for c := range 256 {
		if byCode[c] != 0 {
			codes = append(codes, c)
		}
	}
	seg := len(codes) + 1
	var f4 []byte
	f4 = be.AppendUint16(f4, 4)
	f4 = be.AppendUint16(f4, uint16(16+8*seg))
	f4 = be.AppendUint16(f4, 0)
	f4 = be.AppendUint16(f4, uint16(2*seg))
	pow := 1
	for pow*2 <= seg {
		pow *= 2
	}
	f4 = be.AppendUint16(f4, uint16(2*pow))
	f4 = be.AppendUint16(f4, uint16(math.Log2(float64(pow))))
	f4 = be.AppendUint16(f4, uint16(2*seg-2*pow))
	for _, c := range codes {
		f4 = be.AppendUint16(f4, uint16(0xF000+c))
	}
	f4 = be.AppendUint16(f4, 0xFFFF)
	f4 = be.AppendUint16(f4, 0)
	for _, c := range codes {
		f4 = be.AppendUint16(f4, uint16(0xF000+c))
	}
	f4 = be.AppendUint16(f4, 0xFFFF)
	for _, c := range codes {
		f4 = be.AppendUint16(f4, uint16(int(byCode[c])-(0xF000+c)))
	}
	f4 = be.AppendUint16(f4, 1)
	for range seg {
		f4 = be.AppendUint16(f4, 0)
	}
	var cmap []byte
	cmap = be.AppendUint16(cmap, 0)
	cmap = be.AppendUint16(cmap, 2)
	cmap = be.AppendUint16(cmap, 1)
	cmap = be.AppendUint16(cmap, 0)
	cmap = be.AppendUint32(cmap, 20)
	cmap = be.AppendUint16(cmap, 3)
	cmap = be.AppendUint16(cmap, 0)
	cmap = be.AppendUint32(cmap, uint32(20+len(f0)))
	cmap = append(cmap, f0...)
	cmap = append(cmap, f4...)
	tables = append(tables, table{"cmap", cmap})
	slices.SortFunc(tables, func(a, b table) int { return strings.Compare(a.tag, b.tag) })

	out := slices.Clone(ttf[:12])
	be.PutUint16(out[4:], uint16(len(tables)))
	off := 12 + 16*len(tables)
	var body []byte
	for _, t := range tables {
		sum := uint32(0)
		padded := append(slices.Clone(t.data), make([]byte, (4-len(t.data)%4)%4)...)
		for i := 0; i < len(padded); i += 4 {
			sum += be.Uint32(padded[i:])
		}
		out = append(out, t.tag...)
		out = be.AppendUint32(out, sum)
		out = be.AppendUint32(out, uint32(off+len(body)))
		out = be.AppendUint32(out, uint32(len(t.data)))
		body = append(body, padded...)
	}
	return append(out, body...), nil
}
