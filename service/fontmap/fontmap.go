// Package fontmap reads which Unicode character each glyph of an embedded TrueType or OpenType
// font draws, from the font's own tables: its character map (cmap) read backwards, and its glyph
// names (the post table) where the map has none.
//
// A PDF font without a ToUnicode map gives its text no Unicode of its own: the codes in the
// content are glyph numbers (Identity-H: character code = CID = glyph index) that only the font
// can name. The font embedded to draw them still carries the map its maker built from Unicode to
// glyphs, and usually the glyphs' names; reading them backwards recovers the text, as pdftotext
// does. Nothing here trusts the font: every offset is checked, and the work is bounded whatever
// the tables claim.
package fontmap

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrNotFont is returned for data that is not a TrueType or OpenType font, or one whose tables
// name no character for any glyph.
var ErrNotFont = errors.New("fontmap: not a TrueType or OpenType font with a character map or glyph names")

// maxMappings bounds the code-to-glyph pairs read from a character map: a hostile format 12 map
// can claim ranges of millions of codes. The Basic Multilingual Plane and then some.
const maxMappings = 1 << 17

// Map gives the Unicode character each glyph of one font draws.
type Map struct {
	glyphs map[uint16]rune // glyph → the character it draws
	runes  map[rune]uint16 // character → its glyph, as the character map says
	// advances are the glyphs' advance widths in font units (hmtx); a glyph past the last
	// has the last one's.
	advances []uint16
}

// Glyph returns the glyph the font's character map gives r, and whether it gives one.
func (m *Map) Glyph(r rune) (uint16, bool) {
	if m == nil {
		return 0, false
	}
	g, ok := m.runes[r]
	return g, ok
}

// Advance returns glyph gid's advance width in font units, and whether the font gives one.
func (m *Map) Advance(gid uint16) (float64, bool) {
	if m == nil || len(m.advances) == 0 {
		return 0, false
	}
	return float64(m.advances[min(int(gid), len(m.advances)-1)]), true
}

// Rune returns the character glyph gid draws, and whether the font names one.
func (m *Map) Rune(gid uint16) (rune, bool) {
	if m == nil {
		return 0, false
	}
	r, ok := m.glyphs[gid]
	return r, ok
}

// Len is the number of glyphs the font names a character for.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.glyphs)
}

// Parse reads a font's glyph-to-Unicode map from its cmap table (its Unicode subtables only: a
// Macintosh or symbol subtable maps byte codes of the font maker's choosing, which say nothing
// of the text) and, for glyphs the map does not reach, from the glyph names of its post table
// (uniXXXX, uXXXXX[X], and single letters and digits' names), and the glyphs' advance widths. A
// TrueType collection gives its first font.
func Parse(data []byte) (*Map, error) {
	tables, err := tableDirectory(data)
	if err != nil {
		return nil, err
	}
	m := &Map{glyphs: make(map[uint16]rune), runes: make(map[rune]uint16)}
	if t, ok := tables["cmap"]; ok {
		readCmap(t, m.glyphs, m.runes)
	}
	m.advances = advances(tables["hhea"], tables["hmtx"])
	if t, ok := tables["post"]; ok {
		for gid, name := range postNames(t) {
			if _, ok := m.glyphs[gid]; ok {
				continue
			}
			if r, ok := NameRune(name); ok {
				m.glyphs[gid] = r
			}
		}
	}
	if len(m.glyphs) == 0 {
		return nil, ErrNotFont
	}
	return m, nil
}

// tableDirectory returns the font's tables by tag, each slice checked to lie inside data.
func tableDirectory(data []byte) (map[string][]byte, error) {
	if len(data) < 12 {
		return nil, ErrNotFont
	}
	base := 0
	switch string(data[:4]) {
	case "ttcf":
		// A collection: the first font's directory.
		if len(data) < 16 || binary.BigEndian.Uint32(data[8:]) == 0 {
			return nil, ErrNotFont
		}
		base = int(binary.BigEndian.Uint32(data[12:]))
		if base < 0 || base > len(data)-12 {
			return nil, ErrNotFont
		}
	case "\x00\x01\x00\x00", "true", "OTTO", "typ1":
	default:
		return nil, ErrNotFont
	}
	n := int(binary.BigEndian.Uint16(data[base+4:]))
	if base+12+16*n > len(data) {
		return nil, ErrNotFont
	}
	tables := make(map[string][]byte, n)
	for i := range n {
		rec := data[base+12+16*i:]
		off, length := uint64(binary.BigEndian.Uint32(rec[8:])), uint64(binary.BigEndian.Uint32(rec[12:]))
		if off+length > uint64(len(data)) {
			continue // a table that runs past the data is not read
		}
		tables[string(rec[:4])] = data[off : off+length]
	}
	return tables, nil
}

// readCmap puts into glyphs the character of each glyph that the font's best character map
// reaches: a code that maps to a glyph names that glyph's character. Where several codes reach
// one glyph, the first in the map wins, except that a character in a private use area gives way
// to one that is not.
func readCmap(t []byte, glyphs map[uint16]rune, runes map[rune]uint16) {
	if len(t) < 4 {
		return
	}
	n := int(binary.BigEndian.Uint16(t[2:]))
	if 4+8*n > len(t) {
		return
	}
	// Subtables by preference: full Unicode, then BMP Unicode.
	best, bestRank := -1, 0
	for i := range n {
		rec := t[4+8*i:]
		platform, encoding := binary.BigEndian.Uint16(rec), binary.BigEndian.Uint16(rec[2:])
		off := int(binary.BigEndian.Uint32(rec[4:]))
		rank := 0
		switch {
		case platform == 3 && encoding == 10, platform == 0 && (encoding == 4 || encoding == 6):
			rank = 4
		case platform == 3 && encoding == 1, platform == 0:
			rank = 3
		}
		if rank > bestRank && off >= 0 && off < len(t) {
			best, bestRank = off, rank
		}
	}
	if best < 0 {
		return
	}
	// budget counts codes looked at, whether or not they reach a glyph.
	budget := maxMappings
	put := func(code uint32, gid uint16) {
		if gid == 0 {
			return
		}
		r := rune(code)
		if !utf8.ValidRune(r) || r < 0x20 || unicode.IsControl(r) || r >= 0xd800 && r <= 0xdfff {
			return
		}
		if _, ok := runes[r]; !ok {
			runes[r] = gid
		}
		if old, ok := glyphs[gid]; ok && (!privateUse(old) || privateUse(r)) {
			return
		}
		glyphs[gid] = r
	}
	s := t[best:]
	if len(s) < 2 {
		return
	}
	switch binary.BigEndian.Uint16(s) {
	case 0: // byte codes to glyphs
		if len(s) < 6+256 {
			return
		}
		for c := range 256 {
			put(uint32(c), uint16(s[6+c]))
		}
	case 4: // segments of the BMP
		if len(s) < 14 {
			return
		}
		segs := int(binary.BigEndian.Uint16(s[6:])) / 2
		end, start, delta, rangeOff := 14, 14+2*segs+2, 14+4*segs+2, 14+6*segs+2
		if rangeOff+2*segs > len(s) {
			return
		}
		for i := 0; i < segs && budget > 0; i++ {
			e := uint32(binary.BigEndian.Uint16(s[end+2*i:]))
			st := uint32(binary.BigEndian.Uint16(s[start+2*i:]))
			d := binary.BigEndian.Uint16(s[delta+2*i:])
			ro := int(binary.BigEndian.Uint16(s[rangeOff+2*i:]))
			for c := st; c <= e && c != 0xffff && budget > 0; c++ {
				budget--
				if ro == 0 {
					put(c, uint16(c)+d)
					continue
				}
				// The glyph index array is addressed from the range offset's own place.
				at := rangeOff + 2*i + ro + 2*int(c-st)
				if at+2 > len(s) {
					break
				}
				if g := binary.BigEndian.Uint16(s[at:]); g != 0 {
					put(c, g+d)
				}
			}
		}
	case 6: // a dense run of codes
		if len(s) < 10 {
			return
		}
		first, count := uint32(binary.BigEndian.Uint16(s[6:])), int(binary.BigEndian.Uint16(s[8:]))
		for i := 0; i < count && 10+2*i+2 <= len(s); i++ { // at most 65 535
			put(first+uint32(i), binary.BigEndian.Uint16(s[10+2*i:]))
		}
	case 12: // groups of consecutive codes, all of Unicode
		if len(s) < 16 {
			return
		}
		groups := int(binary.BigEndian.Uint32(s[12:]))
		for i := 0; i < groups && 16+12*i+12 <= len(s) && budget > 0; i++ {
			g := s[16+12*i:]
			st, e, gid := binary.BigEndian.Uint32(g), binary.BigEndian.Uint32(g[4:]), binary.BigEndian.Uint32(g[8:])
			for c := st; c <= e && c <= unicode.MaxRune && budget > 0; c++ {
				budget--
				if gg := gid + (c - st); gg <= 0xffff {
					put(c, uint16(gg))
				}
			}
		}
	}
}

// advances reads the glyphs' advance widths: hhea says how many long metrics hmtx holds; the
// glyphs after them share the last one's width.
func advances(hhea, hmtx []byte) []uint16 {
	if len(hhea) < 36 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(hhea[34:]))
	n = min(n, len(hmtx)/4)
	out := make([]uint16, n)
	for i := range n {
		out[i] = binary.BigEndian.Uint16(hmtx[4*i:])
	}
	return out
}

func privateUse(r rune) bool {
	return r >= 0xe000 && r <= 0xf8ff || r >= 0xf0000
}

// postNames returns the names a post table of format 2 gives glyphs beyond the standard
// Macintosh set (which are the ones a font's maker named: uni0141, Lslash). The standard set's
// glyphs are the ones a character map reaches in practice.
func postNames(t []byte) map[uint16]string {
	if len(t) < 34 || binary.BigEndian.Uint32(t) != 0x00020000 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(t[32:]))
	if 34+2*n > len(t) {
		return nil
	}
	// The Pascal strings after the index array, in order: index 258 is the first.
	var custom []string
	for p := 34 + 2*n; p < len(t); {
		l := int(t[p])
		if p+1+l > len(t) {
			break
		}
		custom = append(custom, string(t[p+1:p+1+l]))
		p += 1 + l
	}
	names := make(map[uint16]string)
	for gid := range n {
		idx := int(binary.BigEndian.Uint16(t[34+2*gid:]))
		if idx >= 258 && idx-258 < len(custom) {
			names[uint16(gid)] = custom[idx-258]
		}
	}
	return names
}

// digitNames are the glyph names of the digits, in order.
var digitNames = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

// NameRune returns the character a glyph name stands for under the Adobe Glyph List's naming
// rules, as far as a name alone says it: anything from the first period on is a variant's
// suffix (a.sc is a); uniXXXX names one BMP character, uXXXX to uXXXXXX any (four to six hex
// digits); a single letter or a digit's English name is itself. Names of ligatures (f_i) and of
// several characters (uni00660069) name no single character and give false.
func NameRune(name string) (rune, bool) {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	hex := func(s string) (rune, bool) {
		v, err := strconv.ParseUint(s, 16, 32)
		// The AGL's rules take upper-case hex digits only.
		if err != nil || strings.ToUpper(s) != s {
			return 0, false
		}
		r := rune(v)
		if !utf8.ValidRune(r) || r >= 0xd800 && r <= 0xdfff || unicode.IsControl(r) {
			return 0, false
		}
		return r, true
	}
	switch {
	case strings.HasPrefix(name, "uni") && len(name) == 7:
		return hex(name[3:])
	case strings.HasPrefix(name, "u") && len(name) >= 5 && len(name) <= 7:
		return hex(name[1:])
	case len(name) == 1 && (name[0] >= 'A' && name[0] <= 'Z' || name[0] >= 'a' && name[0] <= 'z'):
		return rune(name[0]), true
	}
	for i, d := range digitNames {
		if name == d {
			return rune('0' + i), true
		}
	}
	return 0, false
}
