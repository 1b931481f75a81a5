package fontmap

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"
)

var be = binary.BigEndian

// font assembles a TrueType font of the given tables (the directory's checksums are not
// checked and left zero).
func font(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for t := range tables {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	out := be.AppendUint32(nil, 0x00010000)
	out = be.AppendUint16(out, uint16(len(tags)))
	out = append(out, make([]byte, 6)...)
	off := 12 + 16*len(tags)
	var body []byte
	for _, t := range tags {
		out = append(out, t...)
		out = be.AppendUint32(out, 0)
		out = be.AppendUint32(out, uint32(off+len(body)))
		out = be.AppendUint32(out, uint32(len(tables[t])))
		body = append(body, tables[t]...)
		body = append(body, make([]byte, (4-len(body)%4)%4)...)
	}
	return append(out, body...)
}

// cmap is a cmap table of one subtable for platform and encoding.
func cmap(platform, encoding uint16, sub []byte) []byte {
	out := be.AppendUint16(nil, 0)
	out = be.AppendUint16(out, 1)
	out = be.AppendUint16(out, platform)
	out = be.AppendUint16(out, encoding)
	out = be.AppendUint32(out, 12)
	return append(out, sub...)
}

// format4 is a format 4 subtable with one segment per code (a delta to its glyph), plus the
// closing segment.
func format4(codes map[uint16]uint16) []byte {
	keys := make([]uint16, 0, len(codes))
	for c := range codes {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	seg := len(keys) + 1
	out := be.AppendUint16(nil, 4)
	out = be.AppendUint16(out, uint16(16+8*seg))
	out = be.AppendUint16(out, 0)
	out = be.AppendUint16(out, uint16(2*seg))
	out = append(out, make([]byte, 6)...) // search hints, unused
	for _, c := range keys {
		out = be.AppendUint16(out, c)
	}
	out = be.AppendUint16(out, 0xffff)
	out = be.AppendUint16(out, 0)
	for _, c := range keys {
		out = be.AppendUint16(out, c)
	}
	out = be.AppendUint16(out, 0xffff)
	for _, c := range keys {
		out = be.AppendUint16(out, codes[c]-c)
	}
	out = be.AppendUint16(out, 1)
	return append(out, make([]byte, 2*seg)...)
}

// format12 is a format 12 subtable of groups (start, end, first glyph).
func format12(groups ...[3]uint32) []byte {
	out := be.AppendUint16(nil, 12)
	out = be.AppendUint16(out, 0)
	out = be.AppendUint32(out, uint32(16+12*len(groups)))
	out = be.AppendUint32(out, 0)
	out = be.AppendUint32(out, uint32(len(groups)))
	for _, g := range groups {
		out = be.AppendUint32(out, g[0])
		out = be.AppendUint32(out, g[1])
		out = be.AppendUint32(out, g[2])
	}
	return out
}

// post is a format 2 post table naming glyphs 1.. with names (index 0 keeps .notdef, a
// standard name).
func post(names ...string) []byte {
	out := be.AppendUint32(nil, 0x00020000)
	out = append(out, make([]byte, 28)...)
	out = be.AppendUint16(out, uint16(len(names)+1))
	out = be.AppendUint16(out, 0)
	for i := range names {
		out = be.AppendUint16(out, uint16(258+i))
	}
	for _, n := range names {
		out = append(out, byte(len(n)))
		out = append(out, n...)
	}
	return out
}

// metrics is hhea and hmtx tables giving the glyphs these advances.
func metrics(adv ...uint16) (hhea, hmtx []byte) {
	hhea = make([]byte, 36)
	be.PutUint16(hhea[34:], uint16(len(adv)))
	for _, a := range adv {
		hmtx = be.AppendUint16(hmtx, a)
		hmtx = be.AppendUint16(hmtx, 0)
	}
	return hhea, hmtx
}

func TestParse(t *testing.T) {
	hhea, hmtx := metrics(500, 600, 700)
	tests := []struct {
		name   string
		tables map[string][]byte
		glyphs map[uint16]rune // wanted; others absent
		runes  map[rune]uint16
	}{
		{
			name: "format 4, Windows Unicode",
			tables: map[string][]byte{"cmap": cmap(3, 1, format4(map[uint16]uint16{'A': 1, 0x141: 2, 0xf041: 1})),
				"hhea": hhea, "hmtx": hmtx},
			// The private-use code that reaches glyph 1 gives way to A.
			glyphs: map[uint16]rune{1: 'A', 2: 'Ł'},
			runes:  map[rune]uint16{'A': 1, 'Ł': 2, 0xf041: 1},
		},
		{
			name:   "format 12, full Unicode",
			tables: map[string][]byte{"cmap": cmap(3, 10, format12([3]uint32{'a', 'c', 10}, [3]uint32{0x1f600, 0x1f600, 20}))},
			glyphs: map[uint16]rune{10: 'a', 11: 'b', 12: 'c', 20: 0x1f600},
			runes:  map[rune]uint16{'a': 10, 'b': 11, 'c': 12, 0x1f600: 20},
		},
		{
			name: "glyph names where the map has none",
			tables: map[string][]byte{"cmap": cmap(0, 3, format4(map[uint16]uint16{'x': 1})),
				"post": post("uni0078", "uni0141", "u1F600", "a.sc", "f_i", "seven", "Lslash")},
			// Glyph 1 keeps its mapped x; f_i is two letters; Lslash is not a name read here.
			glyphs: map[uint16]rune{1: 'x', 2: 'Ł', 3: 0x1f600, 4: 'a', 6: '7'},
			runes:  map[rune]uint16{'x': 1},
		},
		{
			// A symbol map's codes and a Mac map's bytes are the maker's, not text.
			name:   "symbol map and names",
			tables: map[string][]byte{"cmap": cmap(3, 0, format4(map[uint16]uint16{0xf022: 1})), "post": post("P")},
			glyphs: map[uint16]rune{1: 'P'},
			runes:  map[rune]uint16{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(font(tc.tables))
			if err != nil {
				t.Fatal(err)
			}
			if m.Len() != len(tc.glyphs) {
				t.Errorf("%d glyphs named, want %d: %v", m.Len(), len(tc.glyphs), m.glyphs)
			}
			for g, want := range tc.glyphs {
				if r, ok := m.Rune(g); !ok || r != want {
					t.Errorf("glyph %d: %U %v, want %U", g, r, ok, want)
				}
			}
			for r, want := range tc.runes {
				if g, ok := m.Glyph(r); !ok || g != want {
					t.Errorf("%U: glyph %d %v, want %d", r, g, ok, want)
				}
			}
			if len(m.runes) != len(tc.runes) {
				t.Errorf("map reaches %d characters, want %d", len(m.runes), len(tc.runes))
			}
		})
	}
}

func TestAdvance(t *testing.T) {
	hhea, hmtx := metrics(500, 600)
	m, err := Parse(font(map[string][]byte{"cmap": cmap(3, 1, format4(map[uint16]uint16{'A': 1})), "hhea": hhea, "hmtx": hmtx}))
	if err != nil {
		t.Fatal(err)
	}
	// Glyphs past the long metrics share the last one's advance.
	for g, want := range map[uint16]float64{0: 500, 1: 600, 7: 600} {
		if a, ok := m.Advance(g); !ok || a != want {
			t.Errorf("glyph %d: advance %g %v, want %g", g, a, ok, want)
		}
	}
	m, err = Parse(font(map[string][]byte{"cmap": cmap(3, 1, format4(map[uint16]uint16{'A': 1}))}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Advance(1); ok {
		t.Error("a font without hmtx gives an advance")
	}
}

func TestNotFont(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":        nil,
		"PDF":          []byte("%PDF-1.7\n%%EOF\n"),
		"no tables":    font(map[string][]byte{}),
		"symbols only": font(map[string][]byte{"cmap": cmap(3, 0, format4(map[uint16]uint16{0xf022: 1}))}),
		"mac only":     font(map[string][]byte{"cmap": cmap(1, 0, append([]byte{0, 0, 1, 6, 0, 0}, make([]byte, 256)...))}),
	} {
		if _, err := Parse(data); !errors.Is(err, ErrNotFont) {
			t.Errorf("%s: %v, want ErrNotFont", name, err)
		}
	}
}

// TestHostileRanges: a format 12 map claiming all of Unicode, many times over, is read within
// maxMappings.
func TestHostileRanges(t *testing.T) {
	groups := make([][3]uint32, 1000)
	for i := range groups {
		groups[i] = [3]uint32{0, 0x10ffff, 1}
	}
	start := time.Now()
	m, err := Parse(font(map[string][]byte{"cmap": cmap(3, 10, format12(groups...))}))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.runes) > maxMappings {
		t.Errorf("%d characters read", len(m.runes))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestNameRune(t *testing.T) {
	tests := []struct {
		name string
		want rune // 0: none
	}{
		{"uni0141", 'Ł'},
		{"uni0141.alt", 'Ł'},
		{"u1F600", 0x1f600},
		{"u0041", 'A'},
		{"uni00660069", 0}, // two characters
		{"uni004a", 0},     // lower-case hex is not a uni name
		{"uniD800", 0},     // a surrogate
		{"uni0007", 0},     // a control
		{"u110000", 0},     // past Unicode
		{"A", 'A'},
		{"z.sc", 'z'},
		{"seven", '7'},
		{"f_i", 0},
		{"Lslash", 0},
		{"", 0},
		{".notdef", 0},
	}
	for _, tc := range tests {
		r, ok := NameRune(tc.name)
		if ok != (tc.want != 0) || r != tc.want {
			t.Errorf("%q: %U %v, want %U", tc.name, r, ok, tc.want)
		}
	}
}

// FuzzParse: no input panics or runs long.
func FuzzParse(f *testing.F) {
	hhea, hmtx := metrics(500, 600)
	f.Add(font(map[string][]byte{"cmap": cmap(3, 1, format4(map[uint16]uint16{'A': 1, 'B': 2})), "post": post("uni0141"), "hhea": hhea, "hmtx": hmtx}))
	f.Add(font(map[string][]byte{"cmap": cmap(3, 10, format12([3]uint32{'a', 'z', 3}))}))
	f.Add([]byte("ttcf\x00\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x10"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err == nil && m.Len() == 0 {
			t.Error("a map of no glyphs")
		}
	})
}
