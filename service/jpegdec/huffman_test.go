package jpegdec

import (
	"os"
	"path/filepath"
	"testing"
)

// dhtSegments returns the payloads of a JPEG's DHT segments.
func dhtSegments(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var segs [][]byte
	for i := 2; i+4 <= len(data) && data[i] == 0xFF; {
		marker := data[i+1]
		n := int(data[i+2])<<8 | int(data[i+3])
		if marker == markSOS || i+2+n > len(data) {
			break
		}
		if marker == markDHT {
			segs = append(segs, data[i+4:i+2+n])
		}
		i += 2 + n
	}
	if len(segs) == 0 {
		t.Fatal("no DHT segment")
	}
	return segs
}

// TestFastTable checks every entry of the combined lookup against the canonical decoding it
// replaces: for each fastBits-bit prefix with an entry, reading a symbol and its magnitude bits
// the slow way must consume the same bits and give the same run and value, and every prefix
// without one must be a code or a value that really does not fit, or a symbol left to the slow
// path (ZRL and the run-only codes). It runs on Go's encoder's standard tables and on the
// optimized tables of the sample files.
func TestFastTable(t *testing.T) {
	files := map[string][]byte{"go-color": encode(t, testPicture(64, 48, 3), 90)}
	for _, name := range []string{"s444.jpg", "q100_optimized.jpg", "gray_restart.jpg"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	tables := 0
	for name, data := range files {
		for _, seg := range dhtSegments(t, data) {
			var d decoder
			if err := d.parseHuffman(seg); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for class, set := range [][4]*huffTable{d.dc, d.ac} {
				for _, tab := range set {
					if tab == nil {
						continue
					}
					tables++
					checkFastTable(t, name, class == 0, tab)
				}
			}
		}
	}
	if tables < 4 {
		t.Fatalf("checked %d tables, want at least 4", tables)
	}
}

func checkFastTable(t *testing.T, name string, dc bool, tab *huffTable) {
	t.Helper()
	hits := 0
	for idx := range 1 << fastBits {
		// The prefix, then ones: a slow decode that needed bits past the prefix reads them.
		br := bitReader{acc: uint64(idx)<<(64-fastBits) | (1<<(64-fastBits) - 1), n: 64}
		sym, err := br.decode(tab)
		if err != nil {
			if tab.fast[idx] != 0 {
				t.Fatalf("%s: prefix %#x is no code but has fast entry %#x", name, idx, tab.fast[idx])
			}
			continue
		}
		r, s := int(sym>>4), sym&15
		v := br.receive(s)
		used := 64 - br.n
		e := tab.fast[idx]
		fits := used <= fastBits
		switch {
		case e == 0:
			leftToSlow := (s == 0 && r != 0) || (dc && r != 0)
			if fits && !leftToSlow {
				t.Fatalf("%s: prefix %#x (symbol %#x, %d bits) fits but has no fast entry", name, idx, sym, used)
			}
		case !fits:
			t.Fatalf("%s: prefix %#x needs %d bits but has fast entry %#x", name, idx, used, e)
		case uint(e&fastLenMask) != used:
			t.Fatalf("%s: prefix %#x: entry consumes %d bits, the code and its value %d", name, idx, e&fastLenMask, used)
		case s == 0 && r == 0:
			if e&fastEOB == 0 {
				t.Fatalf("%s: prefix %#x is end of block / zero difference but entry %#x lacks the flag", name, idx, e)
			}
			hits++
		default:
			if e&fastEOB != 0 || int(e>>fastRunShft)&15 != r || e>>fastValShft != v {
				t.Fatalf("%s: prefix %#x: entry %#x reads run %d value %d, want run %d value %d",
					name, idx, e, int(e>>fastRunShft)&15, e>>fastValShft, r, v)
			}
			hits++
		}
	}
	if hits == 0 {
		t.Fatalf("%s: a table without a single fast entry", name)
	}
}
