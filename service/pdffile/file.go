package pdffile

import (
	"bytes"
	"compress/zlib"
	"io"
	"strconv"
	"unsafe"
)

// Limits bound what reading one file may cost.
const (
	maxSections    = 256      // cross-reference sections followed through /Prev
	maxObjects     = 8 << 20  // the highest object number a file may declare (its /Size)
	maxDecoded     = 64 << 20 // bytes the structure streams of one file may decompress to
	maxObjStmItems = 1 << 20  // objects one object stream may hold
	maxResolve     = 32       // references followed from one to the next
	maxTreeDepth   = 64       // levels of the page tree
)

// maxEntries is how many objects a file of n bytes may number: an object takes at least eight
// bytes of the file, even packed in an object stream ("1 0 " and "null" before compression is
// more, and compression does not pack an object's entry of the cross-reference into fewer).
func maxEntries(n int) int { return min(maxObjects, n/8+4096) }

// decodedLimit is how many bytes the structure streams of a file of n bytes may decompress to.
func decodedLimit(n int) int { return min(maxDecoded, 4*n+1<<20) }

// MemoryBound is the most reading a file of n bytes holds besides the file itself: its
// cross-reference entries (16 bytes each) and its decompressed structure streams (twice: a
// predictor undone copies one). Open refuses a
// file that would need more.
func MemoryBound(n int) int64 {
	return int64(maxEntries(n))*int64(unsafe.Sizeof(entry{})) + 2*int64(decodedLimit(n)) + 64<<10
}

// entry is where one object is: at an offset in the file, or the index-th object of object
// stream stm.
type entry struct {
	at    int64 // offset in the file, or the object stream's number
	gen   int32 // generation, or index in the object stream
	state uint8
}

const (
	unset = iota
	free
	inFile
	inStream
)

// File is a PDF's structure as its last cross-reference sections describe it.
type File struct {
	data    []byte
	xref    []entry // by object number
	decoded int     // bytes of structure streams decompressed so far
	Trailer Dict    // the newest trailer (of a table) or xref stream's dictionary
	// LastXRef is the offset of the newest cross-reference section (what an update's /Prev
	// names); XRefStream says whether that section is a stream (an update then writes one too).
	LastXRef   int64
	XRefStream bool
	// Size is the trailer's /Size: the first object number an update may use.
	Size    int
	objStms map[int]*objStm
	loading int // object streams being loaded (a stream's /Length may lie in another)
}

type objStm struct {
	data    []byte
	offsets []int // by index
}

// Open reads the cross-reference sections of data, newest first. An encrypted file is refused:
// an update would have to encrypt what it appends.
func Open(data []byte) (*File, error) {
	f := &File{data: data, objStms: map[int]*objStm{}}
	off, err := startXRef(data)
	if err != nil {
		return nil, err
	}
	f.LastXRef = off
	seen := map[int64]bool{}
	for i := 0; off >= 0; i++ {
		if i >= maxSections {
			return nil, unreadable("more than %d cross-reference sections", maxSections)
		}
		if seen[off] {
			return nil, unreadable("cross-reference sections loop")
		}
		seen[off] = true
		trailer, isStream, err := f.section(off)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			f.Trailer, f.XRefStream = trailer, isStream
		}
		// A hybrid file's table names a stream of the objects the table leaves out.
		if x, ok := Int(trailer["XRefStm"]); ok && !isStream {
			if !seen[x] {
				seen[x] = true
				if _, _, err := f.section(x); err != nil {
					return nil, err
				}
			}
		}
		off = -1
		if p, ok := Int(trailer["Prev"]); ok {
			off = p
		}
	}
	if _, ok := f.Trailer["Encrypt"]; ok {
		return nil, unreadable("the file is encrypted")
	}
	size, ok := Int(f.Trailer["Size"])
	if !ok || size <= 0 || size > maxObjects {
		return nil, unreadable("a trailer /Size out of range")
	}
	f.Size = int(size)
	if _, ok := f.Trailer["Root"].(Ref); !ok {
		return nil, unreadable("a trailer without /Root")
	}
	return f, nil
}

// startXRef is the offset the file's last "startxref" names.
func startXRef(data []byte) (int64, error) {
	tail := data[max(0, len(data)-2048):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return 0, unreadable("no startxref")
	}
	p := &parser{data: tail, pos: i + len("startxref")}
	off, err := strconv.ParseInt(p.keyword(), 10, 64)
	if err != nil || off <= 0 || off >= int64(len(data)) {
		return 0, unreadable("startxref out of range")
	}
	return off, nil
}

// section reads the cross-reference section at off, keeping the entries no newer section set,
// and returns its trailer.
func (f *File) section(off int64) (Dict, bool, error) {
	if off < 0 || off >= int64(len(f.data)) {
		return nil, false, unreadable("a cross-reference offset out of range")
	}
	p := &parser{data: f.data, pos: int(off)}
	p.skipSpace()
	if bytes.HasPrefix(f.data[p.pos:], []byte("xref")) {
		p.pos += 4
		t, err := f.table(p)
		return t, false, err
	}
	num, gen, obj, err := f.objectAt(int(off))
	if err != nil {
		return nil, false, err
	}
	_, _ = num, gen
	s, ok := obj.(*Stream)
	if !ok || s.Dict["Type"] != Name("XRef") {
		return nil, false, unreadable("startxref names neither a table nor an xref stream")
	}
	return s.Dict, true, f.xrefStream(s)
}

func (f *File) table(p *parser) (Dict, error) {
	for sub := 0; ; sub++ {
		if sub > maxObjects {
			return nil, unreadable("too many subsections")
		}
		save := p.pos
		kw := p.keyword()
		if kw == "trailer" {
			o, err := p.object(0)
			if err != nil {
				return nil, err
			}
			d, ok := o.(Dict)
			if !ok {
				return nil, unreadable("a trailer that is not a dictionary")
			}
			return d, nil
		}
		first, err1 := strconv.Atoi(kw)
		count, err2 := strconv.Atoi(p.keyword())
		if err1 != nil || err2 != nil || first < 0 || count < 0 || first > maxObjects || count > maxObjects-first {
			p.pos = save
			return nil, unreadable("a bad cross-reference subsection at %d", save)
		}
		p.skipSpace()
		// Entries are 20 bytes each; some writers end a line with one byte less, so they are
		// read as three tokens rather than by fixed width.
		for i := range count {
			o, err := strconv.ParseInt(p.keyword(), 10, 64)
			g, err2 := strconv.Atoi(p.keyword())
			t := p.keyword()
			if err != nil || err2 != nil || (t != "n" && t != "f") {
				return nil, unreadable("a bad cross-reference entry")
			}
			if t == "f" {
				if err := f.set(first+i, entry{state: free}); err != nil {
					return nil, err
				}
				continue
			}
			if o <= 0 || o >= int64(len(f.data)) || g < 0 || g > 65535 {
				return nil, unreadable("an object offset out of range")
			}
			if err := f.set(first+i, entry{at: o, gen: int32(g), state: inFile}); err != nil {
				return nil, err
			}
		}
	}
}

func (f *File) xrefStream(s *Stream) error {
	data, err := f.decode(s)
	if err != nil {
		return err
	}
	w, _ := s.Dict["W"].(Array)
	if len(w) != 3 {
		return unreadable("an xref stream's /W is not three widths")
	}
	var widths [3]int
	for i, o := range w {
		v, ok := Int(o)
		if !ok || v < 0 || v > 8 {
			return unreadable("an xref stream width out of range")
		}
		widths[i] = int(v)
	}
	size, ok := Int(s.Dict["Size"])
	if !ok || size < 0 || size > maxObjects {
		return unreadable("an xref stream's /Size out of range")
	}
	index := Array{int64(0), size}
	if a, ok := s.Dict["Index"].(Array); ok {
		index = a
	}
	if len(index)%2 != 0 {
		return unreadable("an xref stream's /Index is odd")
	}
	rec := widths[0] + widths[1] + widths[2]
	if rec == 0 {
		return unreadable("an xref stream of empty entries")
	}
	pos := 0
	field := func(i int) int64 {
		var v int64
		for range widths[i] {
			v = v<<8 | int64(data[pos])
			pos++
		}
		return v
	}
	for k := 0; k < len(index); k += 2 {
		first, ok1 := Int(index[k])
		count, ok2 := Int(index[k+1])
		if !ok1 || !ok2 || first < 0 || count < 0 || first > maxObjects || count > maxObjects-first {
			return unreadable("an xref stream's /Index out of range")
		}
		for i := range count {
			if pos+rec > len(data) {
				return unreadable("an xref stream shorter than its /Index")
			}
			typ := int64(1)
			if widths[0] > 0 {
				typ = field(0)
			}
			a, b := field(1), field(2)
			e := entry{state: free} // type 0, and types unknown: null references (ISO 32000-1, 7.5.8.3)
			switch typ {
			case 1:
				if a <= 0 || a >= int64(len(f.data)) || b > 65535 {
					return unreadable("an object offset out of range")
				}
				e = entry{at: a, gen: int32(b), state: inFile}
			case 2:
				if a <= 0 || a > maxObjects || b < 0 || b > maxObjStmItems {
					return unreadable("an object stream entry out of range")
				}
				e = entry{at: a, gen: int32(b), state: inStream}
			}
			if err := f.set(int(first+i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// set records where object n is, unless a newer section did.
func (f *File) set(n int, e entry) error {
	if n >= maxEntries(len(f.data)) {
		return unreadable("more objects than a file of its size holds")
	}
	if n >= len(f.xref) {
		f.xref = append(f.xref, make([]entry, n+1-len(f.xref))...)
	}
	if f.xref[n].state == unset {
		f.xref[n] = e
	}
	return nil
}

// lookup is where object n is (state unset when no section says).
func (f *File) lookup(n int) entry {
	if n < 0 || n >= len(f.xref) {
		return entry{}
	}
	return f.xref[n]
}

// objectAt parses "num gen obj … endobj" at off; a stream's data is sliced by its /Length.
func (f *File) objectAt(off int) (int, int, Object, error) {
	p := &parser{data: f.data, pos: off}
	num, err1 := strconv.Atoi(p.keyword())
	gen, err2 := strconv.Atoi(p.keyword())
	if err1 != nil || err2 != nil || p.keyword() != "obj" {
		return 0, 0, nil, unreadable("no object at offset %d", off)
	}
	o, err := p.object(0)
	if err != nil {
		return 0, 0, nil, err
	}
	d, isDict := o.(Dict)
	if !isDict {
		return num, gen, o, nil
	}
	start := p.streamStart()
	if start < 0 {
		return num, gen, o, nil
	}
	length, ok := Int(d["Length"])
	if r, isRef := d["Length"].(Ref); isRef {
		lo, err := f.resolveDirect(r)
		if err != nil {
			return 0, 0, nil, err
		}
		length, ok = Int(lo)
	}
	if !ok || length < 0 || int64(start)+length > int64(len(f.data)) {
		return 0, 0, nil, unreadable("a stream's /Length out of range")
	}
	end := start + int(length)
	q := &parser{data: f.data, pos: end}
	if q.keyword() != "endstream" {
		return 0, 0, nil, unreadable("a stream's /Length does not reach endstream")
	}
	return num, gen, &Stream{Dict: d, Raw: f.data[start:end]}, nil
}

// resolveDirect reads object r where it must be a plain (non-stream) object in the file: a
// stream's /Length, which the object stream machinery cannot be asked for while reading a stream.
func (f *File) resolveDirect(r Ref) (Object, error) {
	e := f.lookup(r.Num)
	switch e.state {
	case unset, free:
		return nil, nil
	case inStream:
		return f.inObjStm(e)
	}
	p := &parser{data: f.data, pos: int(e.at)}
	_, err1 := strconv.Atoi(p.keyword())
	_, err2 := strconv.Atoi(p.keyword())
	if err1 != nil || err2 != nil || p.keyword() != "obj" {
		return nil, unreadable("no object at offset %d", e.at)
	}
	return p.object(0)
}

// Resolve returns object r (null for a free or missing one, as PDF says).
func (f *File) Resolve(r Ref) (Object, error) {
	e := f.lookup(r.Num)
	switch e.state {
	case unset, free:
		return nil, nil
	case inStream:
		return f.inObjStm(e)
	}
	num, gen, o, err := f.objectAt(int(e.at))
	if err != nil {
		return nil, err
	}
	if num != r.Num || gen != r.Gen {
		return nil, unreadable("object %d %d is not where the cross-reference says", r.Num, r.Gen)
	}
	return o, nil
}

// Get returns o, or the object it refers to (following references up to maxResolve deep).
func (f *File) Get(o Object) (Object, error) {
	for range maxResolve {
		r, ok := o.(Ref)
		if !ok {
			return o, nil
		}
		var err error
		if o, err = f.Resolve(r); err != nil {
			return nil, err
		}
	}
	return nil, unreadable("references chain deeper than %d", maxResolve)
}

// GetDict returns o resolved as a dictionary (a stream's dictionary too); nil when it is not one.
func (f *File) GetDict(o Object) (Dict, error) {
	o, err := f.Get(o)
	if err != nil {
		return nil, err
	}
	switch v := o.(type) {
	case Dict:
		return v, nil
	case *Stream:
		return v.Dict, nil
	}
	return nil, nil
}

func (f *File) inObjStm(e entry) (Object, error) {
	s, ok := f.objStms[int(e.at)]
	if !ok {
		var err error
		if s, err = f.loadObjStm(int(e.at)); err != nil {
			return nil, err
		}
		f.objStms[int(e.at)] = s
	}
	if int(e.gen) >= len(s.offsets) {
		return nil, unreadable("an object stream holds fewer objects than referred to")
	}
	p := &parser{data: s.data, pos: s.offsets[e.gen]}
	return p.object(0)
}

func (f *File) loadObjStm(num int) (*objStm, error) {
	if f.loading >= 2 {
		return nil, unreadable("object streams whose lengths lie in object streams")
	}
	f.loading++
	defer func() { f.loading-- }()
	e := f.lookup(num)
	if e.state != inFile {
		return nil, unreadable("an object stream that is not in the file")
	}
	_, _, o, err := f.objectAt(int(e.at))
	if err != nil {
		return nil, err
	}
	st, ok := o.(*Stream)
	if !ok || st.Dict["Type"] != Name("ObjStm") {
		return nil, unreadable("an object stream that is not one")
	}
	data, err := f.decode(st)
	if err != nil {
		return nil, err
	}
	n, ok1 := Int(st.Dict["N"])
	first, ok2 := Int(st.Dict["First"])
	if !ok1 || !ok2 || n < 0 || n > maxObjStmItems || first < 0 || first > int64(len(data)) {
		return nil, unreadable("an object stream's /N or /First out of range")
	}
	p := &parser{data: data[:first]}
	s := &objStm{data: data, offsets: make([]int, 0, min(n, 4096))}
	for range n {
		_, err1 := strconv.Atoi(p.keyword())
		o, err2 := strconv.Atoi(p.keyword())
		if err1 != nil || err2 != nil || o < 0 || int64(o) > int64(len(data))-first {
			return nil, unreadable("an object stream's header is bad")
		}
		s.offsets = append(s.offsets, int(first)+o)
	}
	return s, nil
}

// decode returns a cross-reference or object stream's data: stored as is, or Flate-compressed
// with or without a PNG or TIFF predictor, at most maxDecoded bytes.
func (f *File) decode(s *Stream) ([]byte, error) {
	filter, err := f.Get(s.Dict["Filter"])
	if err != nil {
		return nil, err
	}
	if a, ok := filter.(Array); ok && len(a) == 1 {
		filter = a[0]
	}
	if filter == nil {
		return s.Raw, nil
	}
	if filter != Name("FlateDecode") && filter != Name("Fl") {
		return nil, unreadable("a structure stream with a filter other than Flate")
	}
	z, err := zlib.NewReader(bytes.NewReader(s.Raw))
	if err != nil {
		return nil, unreadable("a structure stream's Flate data is bad")
	}
	left := decodedLimit(len(f.data)) - f.decoded
	data, err := io.ReadAll(io.LimitReader(z, int64(left)+1))
	if err != nil && len(data) == 0 {
		return nil, unreadable("a structure stream's Flate data is bad")
	}
	if len(data) > left {
		return nil, unreadable("structure streams larger than %d bytes", decodedLimit(len(f.data)))
	}
	f.decoded += len(data)
	parms, _ := f.GetDict(s.Dict["DecodeParms"])
	if a, ok := s.Dict["DecodeParms"].(Array); ok && len(a) == 1 {
		parms, _ = f.GetDict(a[0])
	}
	return unpredict(data, parms)
}

// unpredict undoes a PNG predictor (≥ 10) on rows of /Columns bytes; predictor 1 (none) leaves
// data as it is; the TIFF predictor (2) is refused (no writer uses it for structure streams).
func unpredict(data []byte, parms Dict) ([]byte, error) {
	pred, _ := Int(parms["Predictor"])
	if pred <= 1 {
		return data, nil
	}
	if pred < 10 {
		return nil, unreadable("a structure stream with predictor %d", pred)
	}
	cols := int64(1)
	if c, ok := Int(parms["Columns"]); ok {
		cols = c
	}
	colors, bpc := int64(1), int64(8)
	if c, ok := Int(parms["Colors"]); ok {
		colors = c
	}
	if b, ok := Int(parms["BitsPerComponent"]); ok {
		bpc = b
	}
	if cols <= 0 || cols > 1<<16 || colors <= 0 || colors > 32 || (bpc != 8 && bpc != 16 && bpc != 1 && bpc != 2 && bpc != 4) {
		return nil, unreadable("a predictor's parameters out of range")
	}
	bpp := int(max(1, colors*bpc/8))
	row := int((cols*colors*bpc + 7) / 8)
	out := make([]byte, 0, len(data))
	prev := make([]byte, row)
	cur := make([]byte, row)
	for i := 0; i+row+1 <= len(data); i += row + 1 {
		t := data[i]
		copy(cur, data[i+1:i+1+row])
		for x := range row {
			var a, c int
			if x >= bpp {
				a = int(cur[x-bpp])
				c = int(prev[x-bpp])
			}
			b := int(prev[x])
			switch t {
			case 0:
			case 1:
				cur[x] += byte(a)
			case 2:
				cur[x] += byte(b)
			case 3:
				cur[x] += byte((a + b) / 2)
			case 4:
				pa, pb, pc := abs(b-c), abs(a-c), abs(a+b-2*c)
				pr := c
				if pa <= pb && pa <= pc {
					pr = a
				} else if pb <= pc {
					pr = b
				}
				cur[x] += byte(pr)
			default:
				return nil, unreadable("a bad PNG predictor row")
			}
		}
		out = append(out, cur...)
		prev, cur = cur, prev
	}
	return out, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
