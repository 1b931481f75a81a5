package tiffdec

import (
	"errors"
	"fmt"
)

// A decoder for ITU-T T.4 (Group 3: modified Huffman 1D and modified READ 2D, lines led by EOL
// codes with or without fill bits) and T.6 (Group 4: modified modified READ), as TIFF uses them
// (compressions 2, 3, 4 and 32771), written from those recommendations. It writes each line as
// packed bits, black 1, which the photometric interpretation then reads (fax data is normally
// WhiteIsZero).

// trie is a binary decoding tree; leaves hold a value ≥ 0, or one of the marks below.
type trie struct {
	next [][2]int32 // child node per bit; 0: none
	leaf []int32
}

const (
	leafNone = -1 // an inner node, or no code
	leafEOL  = -2
)

func newTrie() *trie { return &trie{next: [][2]int32{{}}, leaf: []int32{leafNone}} }

func (t *trie) add(code string, v int32) {
	n := int32(0)
	for i := 0; i < len(code); i++ {
		b := code[i] - '0'
		if t.next[n][b] == 0 {
			t.next = append(t.next, [2]int32{})
			t.leaf = append(t.leaf, leafNone)
			t.next[n][b] = int32(len(t.next) - 1)
		}
		n = t.next[n][b]
	}
	if t.leaf[n] != leafNone || t.next[n] != [2]int32{} {
		panic("tiffdec: CCITT code table is not prefix-free at " + code)
	}
	t.leaf[n] = v
}

var whiteTrie, blackTrie, modeTrie = buildTries()

func buildTries() (white, black, mode *trie) {
	white, black, mode = newTrie(), newTrie(), newTrie()
	for i := range 64 {
		white.add(whiteTerm[i], int32(i))
		black.add(blackTerm[i], int32(i))
	}
	for i := range 27 {
		white.add(whiteMakeup[i], int32(64*(i+1)))
		black.add(blackMakeup[i], int32(64*(i+1)))
	}
	for i := range 13 {
		white.add(extMakeup[i], int32(1792+64*i))
		black.add(extMakeup[i], int32(1792+64*i))
	}
	white.add(codeEOL, leafEOL)
	black.add(codeEOL, leafEOL)
	for m, c := range modeCodes {
		mode.add(c, int32(m))
	}
	return
}

// bitReader reads bits most significant first.
type bitReader struct {
	src []byte
	pos int // in bits
}

func (r *bitReader) bit() (int, bool) {
	if r.pos>>3 >= len(r.src) {
		return 0, false
	}
	b := int(r.src[r.pos>>3]>>(7-r.pos&7)) & 1
	r.pos++
	return b, true
}

func (r *bitReader) align(bits int) { r.pos = (r.pos + bits - 1) / bits * bits }

// decode reads one code from t: its value, leafEOL, or ok false at the end of the data or on bits
// that are no code (bad true then).
func (r *bitReader) decode(t *trie) (v int32, ok bool) {
	n := int32(0)
	for {
		b, more := r.bit()
		if !more {
			return 0, false
		}
		n = t.next[n][b]
		if n == 0 {
			return leafNone, false
		}
		if t.leaf[n] != leafNone {
			return t.leaf[n], true
		}
	}
}

// ccittDecoder decodes the strips or tiles of one page.
type ccittDecoder struct {
	compression uint32
	t4          uint32
	width       int
	ref, cur    []int32 // changing elements of the reference and the coding line
	// limit is the most changing elements a line may have (see maxChanges); ref and cur hold
	// two more, and never grow.
	limit int
	// eols says whether the page's one-dimensional T.4 rows lead with EOLs: 0 until its first
	// strip with data is seen, then 1 (they do) or 2 (written without).
	eols int
	// damaged counts the lines of the last strip or tile read only as far as their damage (T.4
	// with EOLs, where the next line's EOL resynchronizes), and damage is the first one's error.
	damaged int
	damage  error
	// partial says that the last decode ended at a damaged line kept as far as it was read, in
	// dst after the lines it counted.
	partial bool
}

// maxChanges is the most changing elements a line of width pixels may have: libtiff's bound on
// its runs (twice the width rounded up to 32, and one), beyond which it refuses a line. A line
// without zero-length runs has at most width+1; zero-length runs (white 0, black 0: 18 bits that
// move nothing) are valid codes, and a decoder that kept every one would hold as many changes as
// the data has bits.
func maxChanges(width int) int { return 2 * ((width + 1 + 31) &^ 31) }

func newCCITT(l *layout) *ccittDecoder {
	n := maxChanges(l.cw)
	return &ccittDecoder{compression: l.compression, t4: l.t4, width: l.cw, limit: n,
		ref: make([]int32, 0, n+2), cur: make([]int32, 0, n+2)}
}

var errTooManyChanges = corrupt("a CCITT line of more changes than it has room for")

// change adds a changing element to the coding line.
func (d *ccittDecoder) change(a int32) error {
	if len(d.cur) >= d.limit {
		return errTooManyChanges
	}
	d.cur = append(d.cur, a)
	return nil
}

// decode fills dst, rows lines of rowBytes each, from src (cut to what rows lines can be coded
// in: see layout.readCap), looking at the decode's context every few hundred KiB of work. It
// returns how many lines it wrote whole before the data ended or went wrong (all of them when it
// did not). A line whose codes go wrong is kept as far as it was read, the rest of it white, as
// libtiff keeps it: after the lines counted when the strip ends there (d.partial), counted in
// d.damaged when a T.4 line with EOLs goes on to the next line, whose EOL resynchronizes.
func (d *ccittDecoder) decode(dst, src []byte, rows, rowBytes int, pc *pace) (int, error) {
	d.damaged, d.damage, d.partial = 0, nil, false
	r := &bitReader{src: src}
	defer func() { pc.read += int64((r.pos + 7) / 8) }()
	w := int32(d.width)
	if d.compression == compT4 && d.t4&1 == 0 && d.eols == 0 && len(src) > 0 {
		// One-dimensional T.4 written without EOLs (libtiff writes it, and reads it since
		// 4.7.1): rows follow each other bit after bit. EOL's eleven zeros cannot occur inside
		// coded rows, so data whose first row's worth of bits holds none is such data; a page's
		// strips are all written one way.
		look := &bitReader{src: src[:min(len(src), 8*rowBytes+96)]}
		d.eols = 2
		if syncEOL(look) {
			d.eols = 1
		}
		pc.read += int64((look.pos + 7) / 8)
	}
	noEOL := d.eols == 2
	d.ref = append(d.ref[:0], w, w) // an all-white line before the first
	last := 0
	for y := range rows {
		if err := pc.add(rowBytes + (r.pos-last)/8); err != nil {
			return y, err
		}
		last = r.pos
		var err error
		switch d.compression {
		case compCCITTRLE, compRLEW:
			err = d.line1D(r)
			if d.compression == compRLEW {
				r.align(16)
			} else {
				r.align(8)
			}
		case compT4:
			if noEOL {
				err = d.line1D(r) // no EOL to resynchronize at: a damaged line fails the strip
				break
			}
			if !syncEOL(r) {
				return y, corrupt("T.4 data ends at line %d of %d", y+1, rows)
			}
			twoD := false
			if d.t4&1 != 0 {
				b, ok := r.bit()
				if !ok {
					return y, corrupt("T.4 data ends at line %d of %d", y+1, rows)
				}
				twoD = b == 0
			}
			if twoD {
				err = d.line2D(r)
			} else {
				err = d.line1D(r)
			}
			if err != nil && !errorsIsUnsupported(err) {
				// As libtiff: a damaged line is kept as far as it was read; the next line's
				// EOL resynchronizes.
				d.finish()
				if d.damaged++; d.damage == nil {
					d.damage = fmt.Errorf("line %d: %w", y+1, err)
				}
				err = nil
			}
		case compT6:
			err = d.line2D(r)
		}
		if err != nil {
			if errorsIsUnsupported(err) {
				return y, fmt.Errorf("line %d: %w", y+1, err)
			}
			// As libtiff: the damaged line is kept as far as it was read (the rest of it
			// white), and the strip ends there, as nothing resynchronizes after it.
			d.finish()
			d.fill(dst[y*rowBytes : (y+1)*rowBytes])
			d.partial = true
			return y, fmt.Errorf("line %d: %w", y+1, err)
		}
		d.fill(dst[y*rowBytes : (y+1)*rowBytes])
		d.ref, d.cur = d.cur, d.ref
		d.ref = append(d.ref, w, w)
	}
	return rows, nil
}

func errorsIsUnsupported(err error) bool { return errors.Is(err, errUncompressedMode) }

var errUncompressedMode = unsupported("CCITT uncompressed mode")

// syncEOL finds the next EOL (eleven or more 0 bits, fill, then a 1) and reads past it.
func syncEOL(r *bitReader) bool {
	zeros := 0
	for {
		b, ok := r.bit()
		if !ok {
			return false
		}
		if b == 0 {
			zeros++
			continue
		}
		if zeros >= 11 {
			return true
		}
		zeros = 0
	}
}

// run reads one run length of the given colour: make-up codes, then a terminating code.
func (d *ccittDecoder) run(r *bitReader, black bool) (int32, error) {
	t := whiteTrie
	if black {
		t = blackTrie
	}
	var total int32
	for {
		v, ok := r.decode(t)
		switch {
		case !ok && v == leafNone:
			return 0, corrupt("a bad CCITT code")
		case !ok:
			return 0, corrupt("CCITT data ends inside a line")
		case v == leafEOL:
			return 0, corrupt("an EOL inside a line")
		}
		total += v
		if total > int32(d.width)+2560 {
			// Make-up codes past the line's end: no writer codes a run longer than its line
			// (and one more make-up code), and bounding the run bounds the bits a line reads.
			return 0, corrupt("a CCITT run longer than its line")
		}
		if v < 64 {
			return total, nil
		}
	}
}

// line1D decodes a modified Huffman line into d.cur.
func (d *ccittDecoder) line1D(r *bitReader) error {
	d.cur = d.cur[:0]
	w := int32(d.width)
	var a0 int32
	black := false
	for a0 < w {
		n, err := d.run(r, black)
		if err != nil {
			return err
		}
		a0 = min(a0+n, w)
		if err := d.change(a0); err != nil {
			return err
		}
		black = !black
	}
	return nil
}

// line2D decodes a modified READ line against d.ref into d.cur.
func (d *ccittDecoder) line2D(r *bitReader) error {
	d.cur = d.cur[:0]
	w := int32(d.width)
	a0 := int32(-1)
	black := false
	j := 0 // index in ref of b1
	for a0 < w {
		// b1: the first changing element of the reference line right of a0 whose colour is the
		// opposite of a0's (elements at even indexes change to black).
		j = max(0, j-2)
		for j < len(d.ref)-2 && d.ref[j] <= a0 {
			j++
		}
		if (j&1 == 1) != black {
			j++
		}
		j = min(j, len(d.ref)-2)
		b1, b2 := d.ref[j], d.ref[j+1]
		m, ok := r.decode(modeTrie)
		if !ok {
			if m == leafNone {
				return corrupt("a bad CCITT mode code")
			}
			return corrupt("CCITT data ends inside a line")
		}
		switch m {
		case modePass:
			a0 = b2
		case modeHorizontal:
			start := max(a0, 0)
			n1, err := d.run(r, black)
			if err != nil {
				return err
			}
			n2, err := d.run(r, !black)
			if err != nil {
				return err
			}
			a1 := min(start+n1, w)
			a2 := min(a1+n2, w)
			if err := d.change(a1); err != nil {
				return err
			}
			if err := d.change(a2); err != nil {
				return err
			}
			a0 = a2
		case modeV0, modeVR1, modeVR2, modeVR3, modeVL1, modeVL2, modeVL3:
			a1 := b1 + [...]int32{modeV0: 0, modeVR1: 1, modeVR2: 2, modeVR3: 3, modeVL1: -1, modeVL2: -2, modeVL3: -3}[m]
			if a1 < max(a0, 0) || a1 > w {
				return corrupt("a CCITT vertical code off the line")
			}
			if err := d.change(a1); err != nil {
				return err
			}
			a0 = a1
			black = !black
		case modeExtension:
			return errUncompressedMode
		case modeEOL:
			return corrupt("an EOL inside a line")
		}
	}
	return nil
}

// finish ends a damaged line: changes kept in order and within the line.
func (d *ccittDecoder) finish() {
	w := int32(d.width)
	last := int32(0)
	for i, c := range d.cur {
		c = min(max(c, last), w)
		d.cur[i], last = c, c
	}
}

// fill writes the coding line as bits: black 1.
func (d *ccittDecoder) fill(row []byte) {
	clear(row)
	w := int32(d.width)
	for i := 0; i < len(d.cur); i += 2 {
		from := d.cur[i]
		to := w
		if i+1 < len(d.cur) {
			to = d.cur[i+1]
		}
		from, to = max(from, 0), min(to, w)
		for x := from; x < to; {
			if x&7 == 0 && to-x >= 8 {
				n := (to - x) >> 3
				for k := x >> 3; k < x>>3+n; k++ {
					row[k] = 0xFF
				}
				x += n << 3
				continue
			}
			row[x>>3] |= 0x80 >> (x & 7)
			x++
		}
	}
}
