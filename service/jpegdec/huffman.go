package jpegdec

import "encoding/binary"

// maxCoef bounds dequantized coefficients. The DCT of 8-bit samples stays within ±1024, and a
// non-zero quantized value is within half a quantization step of it, so ±2048 holds for any valid
// file; the rest is slack for encoders' rounding.
const maxCoef = 4096

// lookBits is how many bits the first-level Huffman lookup resolves; nearly all codes in real
// images are this short, and longer ones take the canonical-code walk.
const lookBits = 9

// fastBits is how many bits the combined lookup (huffTable.fast) resolves: a code and the
// magnitude bits that follow it. On the SROIE scans 11 bits resolve nearly every DC difference and
// AC coefficient of the blank and text blocks that make up a page; 12 bits (16 KiB tables) decoded
// them no faster.
const fastBits = 11

// Fields of a huffTable.fast entry. A zero entry means "take the slow path".
const (
	fastLenMask = 0xFF    // bits consumed: the code and its magnitude bits
	fastRunShft = 8       // AC: the run of zeros before the coefficient (4 bits)
	fastEOB     = 1 << 12 // AC: end of block
	fastValShft = 16      // the coefficient or DC difference, sign-extended (int16)
)

// huffTable is one decoding table (ITU T.81, annex C and F.2.2.3).
type huffTable struct {
	// lut is indexed by the next lookBits bits: length<<8 | symbol, or 0 for a longer code.
	lut [1 << lookBits]uint16
	// fast is indexed by the next fastBits bits. Where a code and the magnitude bits its symbol
	// announces fit in them, it holds the decoded result (see the fast* constants), so the
	// common symbols of the entropy decoder's inner loop cost one lookup and one shift instead
	// of a lookup, a second read for the bits and a sign extension. Entropy decoding is the one
	// sequential part of a decode, and on a 600-dpi scan its longest.
	fast [1 << fastBits]int32
	// For codes of length l: the largest code (-1 when none), and the index in vals of the first.
	maxCode [18]int32
	valPtr  [17]int32
	minCode [17]int32
	vals    []uint8
}

func newHuffTable(counts [17]int, vals []uint8) (*huffTable, error) {
	t := &huffTable{vals: append([]uint8(nil), vals...)}
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		t.valPtr[l], t.minCode[l] = k, code
		for range counts[l] {
			if code >= 1<<l {
				return nil, unsupported("Huffman table with too many codes of length %d", l)
			}
			if l <= lookBits {
				sym := uint16(l)<<8 | uint16(vals[k])
				lo := code << (lookBits - l)
				for i := range int32(1) << (lookBits - l) {
					t.lut[lo+i] = sym
				}
			}
			code++
			k++
		}
		t.maxCode[l] = code - 1
		if counts[l] == 0 {
			t.maxCode[l] = -1
		}
		code <<= 1
	}
	t.maxCode[17] = 1 << 30 // sentinel, never reached: lengths stop at 16
	t.fillFast(counts, vals)
	return t, nil
}

// fillFast builds t.fast. The same table serves DC and AC decoding; a symbol reads as a DC
// category (s = symbol, no run) or as an AC run/size pair, and each decoder picks the reading it
// needs from the entry: DC entries are built with the symbol's low four bits as the size, which
// is the whole symbol for every valid category (≤ 11), and a DC decoder refuses larger categories
// on the slow path anyway, since such symbols get no fast entry (their high nibble is not 0).
func (t *huffTable) fillFast(counts [17]int, vals []uint8) {
	code, k := 0, 0
	for l := 1; l <= 16; l++ {
		for range counts[l] {
			sym := vals[k]
			code, k = code+1, k+1
			if l > fastBits {
				continue
			}
			c := code - 1
			r, sz := int(sym>>4), int(sym&15)
			for i := range 1 << (fastBits - l) {
				idx := c<<(fastBits-l) | i
				var e int32
				switch {
				case sz == 0 && r == 0: // EOB for AC; a zero DC difference
					e = int32(l) | fastEOB
				case sz == 0:
					continue // ZRL and the run-only codes: the slow path handles them
				case l+sz <= fastBits:
					bits := idx >> (fastBits - l - sz) & (1<<sz - 1)
					v := bits
					if v < 1<<(sz-1) {
						v += -1<<sz + 1
					}
					e = int32(l+sz) | int32(r)<<fastRunShft | int32(v)<<fastValShft
				default:
					continue
				}
				t.fast[idx] = e
			}
		}
		code <<= 1
	}
}

// bitReader reads the entropy-coded segment most significant bit first, removing the stuffed zero
// after each 0xFF data byte. At a marker it stops and feeds zeros, which a valid stream never uses;
// overrun tells whether any were consumed.
type bitReader struct {
	data   []byte
	pos    int
	acc    uint64 // valid bits at the top
	n      uint   // how many
	padded uint   // zero bits appended at the end of the segment (part of n)
	marker bool   // pos is at a marker (or the end of data)
}

// fill tops acc up to at least 57 bits.
func (br *bitReader) fill() {
	// Most of the time the next eight bytes hold no 0xFF (neither a stuffed byte nor a marker):
	// they are appended in one go, as many whole bytes as fit.
	if !br.marker && br.pos+8 <= len(br.data) {
		w := binary.BigEndian.Uint64(br.data[br.pos:])
		// A byte of ^w is zero exactly where w has 0xFF; this is the classic has-zero-byte test.
		if (^w-0x0101010101010101)&w&0x8080808080808080 == 0 {
			nb := (64 - br.n) >> 3
			br.acc |= w >> (64 - 8*nb) << (64 - br.n - 8*nb)
			br.pos += int(nb)
			br.n += 8 * nb
			return
		}
	}
	for br.n <= 56 {
		var b byte
		if !br.marker {
			if br.pos >= len(br.data) {
				br.marker = true
			} else if b = br.data[br.pos]; b != 0xFF {
				br.pos++
			} else if br.pos+1 < len(br.data) && br.data[br.pos+1] == 0 {
				br.pos += 2
			} else {
				br.marker = true
			}
		}
		if br.marker {
			b = 0
			br.padded += 8
		}
		br.acc |= uint64(b) << (56 - br.n)
		br.n += 8
	}
}

// overrun reports whether decoding used bits past the end of the segment.
func (br *bitReader) overrun() bool { return br.n < br.padded }

// decode reads one Huffman-coded symbol.
func (br *bitReader) decode(t *huffTable) (uint8, error) {
	if br.n < 16 {
		br.fill()
	}
	if v := t.lut[br.acc>>(64-lookBits)]; v != 0 {
		l := uint(v >> 8)
		br.acc <<= l
		br.n -= l
		return uint8(v), nil
	}
	for l := uint(lookBits + 1); l <= 16; l++ {
		code := int32(br.acc >> (64 - l))
		if code <= t.maxCode[l] {
			br.acc <<= l
			br.n -= l
			return t.vals[t.valPtr[l]+code-t.minCode[l]], nil
		}
	}
	return 0, unsupported("bad Huffman code")
}

// receive reads s bits (s ≤ 16) and extends them to a signed value (ITU T.81, F.2.2.1).
func (br *bitReader) receive(s uint8) int32 {
	if br.n < uint(s) {
		br.fill()
	}
	return br.take(s)
}

// take is receive with the s bits already in acc. The sign extension is branchless: which way it
// goes is as random as the coefficients' signs, and a mispredicted branch per coefficient was a
// tenth of the entropy decoder's time on a 600-dpi scan.
func (br *bitReader) take(s uint8) int32 {
	v := int32(br.acc >> (64 - uint(s))) // 0 for s = 0: Go shifts by 64 to zero
	br.acc <<= s
	br.n -= uint(s)
	half := int32(1) << s >> 1
	return v + (v-half)>>31&(1-int32(1)<<s)
}

// block decodes one 8×8 block's coefficients into coef (natural order, zeroed by the caller) and
// returns the zigzag index of the last one coded (a run of zeros before the end of block included).
//
// A coefficient whose dequantized value lies outside ±maxCoef cannot come from 8-bit samples and is
// refused: no two decoders agree on what such blocks look like.
//
// Before each symbol the reader holds at least 32 bits: a code (at most 16) and the magnitude bits
// it announces (at most 15 in a valid stream; 16 bits are left in any case) need no refill between
// them.
func (br *bitReader) block(coef *[64]int16, pred *int32, dc, ac *huffTable, q *[64]int32) (uint8, error) {
	if br.n < 32 {
		br.fill()
	}
	if e := dc.fast[br.acc>>(64-fastBits)]; e != 0 && (e>>fastRunShft)&15 == 0 {
		l := uint(e & fastLenMask)
		br.acc <<= l
		br.n -= l
		*pred += e >> fastValShft
	} else {
		s, err := br.decode(dc)
		if err != nil {
			return 0, err
		}
		if s > 11 {
			return 0, unsupported("DC difference category %d", s)
		}
		*pred += br.take(s)
	}
	if v := *pred * q[0]; uint32(v+maxCoef) > 2*maxCoef {
		return 0, unsupported("DC coefficient %d out of range", v)
	}
	coef[0] = int16(*pred)
	k := 1
	for k < 64 {
		if br.n < 32 {
			br.fill()
		}
		var v int32
		if e := ac.fast[br.acc>>(64-fastBits)]; e != 0 {
			// One lookup: the code, the run and the coefficient's bits (see huffTable.fast).
			l := uint(e & fastLenMask)
			br.acc <<= l
			br.n -= l
			if e&fastEOB != 0 {
				break
			}
			k += int(e>>fastRunShft) & 15
			v = e >> fastValShft
		} else {
			rs, err := br.decode(ac)
			if err != nil {
				return 0, err
			}
			r, s := int(rs>>4), rs&15
			if s == 0 {
				if r == 0 {
					break // end of block
				}
				if r != 15 {
					// Run-length-only codes other than EOB and ZRL exist in progressive JPEG
					// only; decoders disagree on them in a baseline scan, so leave the file to
					// image/jpeg.
					return 0, unsupported("AC symbol %#x in a sequential scan", rs)
				}
				k += 16
				continue
			}
			k += r
			v = br.take(s)
		}
		// A run past the last coefficient (k up to 78) reads one of zigzag's spare entries,
		// which stand for 63, and is refused once the loop ends.
		z := zigzag[k] & 63
		if d := v * q[z]; uint32(d+maxCoef) > 2*maxCoef {
			return 0, unsupported("AC coefficient %d out of range", d)
		}
		coef[z] = int16(v)
		k++
	}
	if k > 64 {
		return 0, unsupported("coefficient index past 63")
	}
	return uint8(k - 1), nil
}

// restart consumes the RSTn marker expected after a restart interval, dropping the bits left in
// the current byte.
func (br *bitReader) restart(n int) error {
	if br.overrun() {
		return unsupported("restart interval ends early")
	}
	br.acc, br.n, br.padded = 0, 0, 0
	// The reader stopped at the marker, or a few bytes before it if it had not needed them yet.
	// Bytes in between can only be fill: a valid stream pads the last byte with ones, not whole
	// bytes, so anything else is corrupt.
	if br.pos < len(br.data) && br.data[br.pos] != 0xFF {
		return unsupported("data where restart marker %d was expected", n)
	}
	for br.pos < len(br.data) && br.data[br.pos] == 0xFF {
		br.pos++
	}
	if br.pos >= len(br.data) || br.data[br.pos] != markRST0+byte(n) {
		return unsupported("missing restart marker %d", n)
	}
	br.pos++
	br.marker = false
	return nil
}
