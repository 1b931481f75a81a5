package pdfengine

import (
	"math"
	"slices"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"

	"github.com/ocrgate/ocrgate/service/fontmap"
)

// The limits and thresholds of recovering Unicode from a font's own tables.
const (
	// maxFontData bounds the font program read: a CJK font is a few megabytes.
	maxFontData = 32 << 20
	// maxFontsRead bounds the fonts one page reads, whatever the page holds.
	maxFontsRead = 16
	// widthTolerance: a character's advance matches its glyph's when their ratio is within this
	// share of the font's usual ratio.
	widthTolerance = 0.03
	// minWidthAgreement: the share of a font's characters whose advances must match their
	// glyphs' for a reading of the font's codes to be taken; maxOtherAgreement: the share the
	// other reading may reach (a font whose glyphs are all one width, monospace, fits both, and
	// says nothing of which is right).
	minWidthAgreement = 0.9
	maxOtherAgreement = 0.5
)

// unmappedChars are the characters of one page that PDFium gives no Unicode for, by font name
// (subset tag included; within one page a name is one font).
type unmappedChars map[string][]unmappedChar

type unmappedChar struct {
	index int // in the engine's text page
	char  int // in the page's Chars
}

func (u unmappedChars) add(font string, index, char int) {
	u[font] = append(u[font], unmappedChar{index: index, char: char})
}

// recover gives the unmapped characters of each embedded font their Unicode from the font's own
// tables, where the font shows how its codes are to be read, and marks them Recovered.
//
// PDFium gives a character of a font without a ToUnicode map its character code. What the code
// means depends on how the PDF's maker numbered the font, which PDFium does not tell: a CID font
// under Identity-H with an Identity CIDToGIDMap uses glyph indices (the font's character map,
// read backwards, or the glyph's name says which character each draws), while many makers use
// the character's Unicode as its CID and map CIDs to glyphs by a table of their own (the code is
// then the text, and the font's character map says which glyph it draws). Each reading is
// checked against the widths the PDF gives the characters: under the right one, each
// character's advance on the page is its glyph's advance in the font, at one scale for the whole
// font; under a wrong one, the glyphs' widths scatter. A font that fits neither reading, or both,
// is left unmapped (its layer is then not used). A font that is not embedded is not read: PDFium would
// give its substitute's tables.
func (u unmappedChars) recover(inst pdfium.Pdfium, tp references.FPDF_TEXTPAGE, chars []Char, handles *int) {
	read := 0
	for _, list := range u {
		if read >= maxFontsRead {
			return
		}
		read++
		m := readFontMap(inst, tp, list[0].index, handles)
		if m == nil {
			continue
		}
		asText := func(code rune) (rune, uint16, bool) {
			if !printable(code) {
				return 0, 0, false
			}
			g, ok := m.Glyph(code)
			return code, g, ok
		}
		asGlyph := func(code rune) (rune, uint16, bool) {
			if code < 0 || code > 0xffff {
				return 0, 0, false
			}
			r, ok := m.Rune(uint16(code))
			if ok && unicode.IsSpace(r) {
				return ' ', uint16(code), true // the font's space glyph: a space between words
			}
			return r, uint16(code), ok && printable(r)
		}
		text, glyph := widthAgreement(m, chars, list, asText), widthAgreement(m, chars, list, asGlyph)
		var best func(rune) (rune, uint16, bool)
		switch {
		case text >= minWidthAgreement && glyph <= maxOtherAgreement:
			best = asText
		case glyph >= minWidthAgreement && text <= maxOtherAgreement:
			best = asGlyph
		default:
			continue
		}
		for _, uc := range list {
			c := &chars[uc.char]
			if r, _, ok := best(c.Rune); ok {
				c.Rune, c.Unmapped, c.Recovered = r, false, true
			}
		}
	}
}

// widthAgreement is the share of the characters in list whose advance on the page, in units of
// their font box's height, is their glyph's advance (as read gives the glyph) at the scale most
// of them share. A character read gives no glyph counts against it; glyphs without width (marks)
// are not counted.
func widthAgreement(m *fontmap.Map, chars []Char, list []unmappedChar, read func(rune) (rune, uint16, bool)) float64 {
	ratios := make([]float64, 0, len(list))
	counted := 0
	for _, uc := range list {
		c := chars[uc.char]
		along, across := c.Loose.X1-c.Loose.X0, c.Loose.Y1-c.Loose.Y0
		if math.Abs(math.Sin(c.Angle)) > math.Abs(math.Cos(c.Angle)) {
			along, across = across, along
		}
		_, g, ok := read(c.Rune)
		if !ok {
			counted++
			continue
		}
		adv, ok := m.Advance(g)
		if !ok || adv == 0 || along <= 0 || across <= 0 {
			continue
		}
		counted++
		ratios = append(ratios, along/across/adv)
	}
	if counted == 0 || len(ratios) == 0 {
		return 0
	}
	sorted := slices.Clone(ratios)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	agree := 0
	for _, r := range ratios {
		if math.Abs(r-med) <= widthTolerance*med {
			agree++
		}
	}
	return float64(agree) / float64(counted)
}

// printable reports whether r is a character a text layer can give: assigned, not a control,
// not in a private use area.
func printable(r rune) bool {
	return r > 0x20 && r <= unicode.MaxRune && !unicode.IsControl(r) && !unicode.Is(unicode.Co, r) &&
		(r < 0xd800 || r > 0xdfff) && unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// readFontMap reads the tables of the font character index of tp is drawn with, or nil.
func readFontMap(inst pdfium.Pdfium, tp references.FPDF_TEXTPAGE, index int, handles *int) *fontmap.Map {
	o, err := inst.FPDFText_GetTextObject(&requests.FPDFText_GetTextObject{TextPage: tp, Index: index})
	if err != nil {
		return nil
	}
	*handles++
	font, err := inst.FPDFTextObj_GetFont(&requests.FPDFTextObj_GetFont{PageObject: o.TextObject})
	if err != nil {
		return nil
	}
	*handles++
	emb, err := inst.FPDFFont_GetIsEmbedded(&requests.FPDFFont_GetIsEmbedded{Font: font.Font})
	if err != nil || !emb.IsEmbedded {
		return nil
	}
	data, err := inst.FPDFFont_GetFontData(&requests.FPDFFont_GetFontData{Font: font.Font})
	if err != nil || len(data.FontData) > maxFontData {
		return nil
	}
	m, err := fontmap.Parse(data.FontData)
	if err != nil {
		return nil
	}
	return m
}

// undrawnInk: a glyph whose ink is thinner than this share of its font box, across and along
// together, was drawn as nothing: PDFium gives a glyph without an outline an ink box a
// hundredth of a point thick. A rule or a dash drawn as a glyph is 4% of its box thick and more.
const undrawnInk = 0.01

// sliver reports whether ink box b is a sliver of font box f (see undrawnInk).
func sliver(b, f Rect) bool {
	if f.Empty() || b.X1 < b.X0 || b.Y1 < b.Y0 || b == (Rect{}) {
		return false
	}
	return math.Min(b.X1-b.X0, b.Y1-b.Y0) < undrawnInk*math.Max(f.X1-f.X0, f.Y1-f.Y0)
}

// fontsNotEmbedded remembers, for one page, whether each font (by name) is not embedded.
type fontsNotEmbedded map[string]bool

// ask reports whether the font character index of tp is drawn with is not embedded.
func (f fontsNotEmbedded) ask(inst pdfium.Pdfium, tp references.FPDF_TEXTPAGE, index int, handles *int) bool {
	fi, err := inst.FPDFText_GetFontInfo(&requests.FPDFText_GetFontInfo{TextPage: tp, Index: index})
	if err != nil {
		return false
	}
	if v, ok := f[fi.FontName]; ok {
		return v
	}
	v := false
	if o, err := inst.FPDFText_GetTextObject(&requests.FPDFText_GetTextObject{TextPage: tp, Index: index}); err == nil {
		*handles++
		if font, err := inst.FPDFTextObj_GetFont(&requests.FPDFTextObj_GetFont{PageObject: o.TextObject}); err == nil {
			*handles++
			if emb, err := inst.FPDFFont_GetIsEmbedded(&requests.FPDFFont_GetIsEmbedded{Font: font.Font}); err == nil {
				v = !emb.IsEmbedded
			}
		}
	}
	f[fi.FontName] = v
	return v
}
