package export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/pdffile"
)

// UpdatePDF writes a PDF sent in, made searchable, to w: the file's own bytes unchanged, then an
// incremental update (ISO 32000-1, 7.5.6) that adds an invisible text layer to the pages OCR read.
// Each such page gets a new version whose /Contents is ["q", its own streams…, "Q" and the
// words] and whose /Resources is its own (inherited ones resolved) plus the glyphless font; every
// other page, and every other object, stays as it was, byte for byte. The update ends with a
// cross-reference section of the kind the file's last one is (a table or a stream) whose /Prev is
// that one.
//
// layers holds the answers of the pages to lay text over, by index in pages (0-based); their boxes
// are in pixels of the page as drawn for OCR (turned by its /Rotate, its crop box scaled to the
// answer's Width × Height).
func UpdatePDF(w io.Writer, data []byte, f *pdffile.File, pages []pdffile.Page, layers map[int]api.Page, sw Software) error {
	g := &glyphs{codes: map[rune]uint16{}}
	type layer struct {
		index int
		words []pdfWord
	}
	var todo []layer
	for i, a := range layers {
		if i < 0 || i >= len(pages) {
			return fmt.Errorf("export: a layer for page %d of %d", i+1, len(pages))
		}
		if ws := g.pageWords(a); len(ws) > 0 {
			todo = append(todo, layer{i, ws})
		}
	}
	if len(todo) == 0 {
		_, err := w.Write(data)
		return err
	}
	sort.Slice(todo, func(a, b int) bool { return todo[a].index < todo[b].index })

	cw := &countWriter{w: bufioWriter(w)}
	cw.write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' && data[len(data)-1] != '\r' {
		cw.str("\n")
	}
	next := f.Size
	alloc := func() int { next++; return next - 1 }
	offsets := map[int]int64{} // by object number; generation 0 unless in gens
	gens := map[int]int{}
	begin := func(n, gen int) {
		offsets[n], gens[n] = cw.n, gen
		cw.printf("%d %d obj\n", n, gen)
	}
	stream := func(n int, dict string, raw []byte) {
		begin(n, 0)
		cw.printf("<< %s/Length %d >>\nstream\n", dict, len(raw))
		cw.write(raw)
		cw.str("\nendstream\nendobj\n")
	}
	font, cid, desc, tu := alloc(), alloc(), alloc(), alloc()
	open := alloc() // "q": the page's own content runs in a graphics state of its own
	stream(open, "", []byte("q\n"))
	for _, l := range todo {
		pg := pages[l.index]
		ans := layers[l.index]
		fontName := freeName(pg.Resources)
		var content bytes.Buffer
		content.WriteString("Q\n")
		g.textLayer(&content, fontName, l.words, userSpace(pg, ans))
		words := alloc()
		stream(words, "/Filter /FlateDecode ", deflate(content.Bytes()))

		d := pdffile.Dict{}
		for k, v := range pg.Dict {
			d[k] = v
		}
		contents := pdffile.Array{pdffile.Ref{Num: open}}
		switch c := pg.Dict["Contents"].(type) {
		case pdffile.Ref:
			// A reference to an array of streams is kept as the array's entries.
			o, err := f.Get(c)
			if err != nil {
				return err
			}
			if a, ok := o.(pdffile.Array); ok {
				contents = append(contents, a...)
			} else {
				contents = append(contents, c)
			}
		case pdffile.Array:
			contents = append(contents, c...)
		}
		d["Contents"] = append(contents, pdffile.Ref{Num: words})
		res := pdffile.Dict{}
		for k, v := range pg.Resources {
			res[k] = v
		}
		fonts := pdffile.Dict{}
		if fd, err := f.GetDict(pg.Resources["Font"]); err != nil {
			return err
		} else {
			for k, v := range fd {
				fonts[k] = v
			}
		}
		fonts[pdffile.Name(fontName)] = pdffile.Ref{Num: font}
		res["Font"] = fonts
		d["Resources"] = res
		var b bytes.Buffer
		pdffile.Write(&b, d)
		begin(pg.Ref.Num, pg.Ref.Gen)
		cw.write(b.Bytes())
		cw.str("\nendobj\n")
	}
	fd, cd, dd := fontDicts(cid, desc, tu)
	begin(font, 0)
	cw.printf("%s\nendobj\n", fd)
	begin(cid, 0)
	cw.printf("%s\nendobj\n", cd)
	begin(desc, 0)
	cw.printf("%s\nendobj\n", dd)
	stream(tu, "/Filter /FlateDecode ", deflate(g.toUnicode()))

	trailer := pdffile.Dict{"Size": int64(next), "Root": f.Trailer["Root"], "Prev": f.LastXRef}
	for _, k := range []pdffile.Name{"Info", "ID"} {
		if v, ok := f.Trailer[k]; ok {
			trailer[k] = v
		}
	}
	if f.XRefStream {
		xn := alloc()
		offsets[xn], gens[xn] = cw.n, 0
		trailer["Size"] = int64(next)
		writeXRefStream(cw, xn, offsets, gens, trailer)
	} else {
		xref := cw.n
		writeXRefTable(cw, offsets, gens)
		var b bytes.Buffer
		pdffile.Write(&b, trailer)
		cw.printf("trailer\n%s\nstartxref\n%d\n%%%%EOF\n", b.Bytes(), xref)
	}
	if cw.err != nil {
		return cw.err
	}
	return cw.w.Flush()
}

// freeName is a font resource name the page's resources do not use yet.
func freeName(res pdffile.Dict) string {
	fonts, _ := res["Font"].(pdffile.Dict)
	for i := 0; ; i++ {
		n := fmt.Sprintf("OCRGlyphLess%d", i)
		if _, used := fonts[pdffile.Name(n)]; !used {
			return n
		}
	}
}

// userSpace turns a pixel of a page's answer into the page's user space: the answer's pixels
// cover the page's visible box as displayed (turned clockwise by /Rotate), so a pixel is scaled to
// display points, turned back and moved to the box's origin.
func userSpace(pg pdffile.Page, a api.Page) func(api.Point) (float64, float64) {
	x0, y0, x1, y1 := pg.Box[0], pg.Box[1], pg.Box[2], pg.Box[3]
	dw, dh := x1-x0, y1-y0
	if pg.Rotate == 90 || pg.Rotate == 270 {
		dw, dh = dh, dw
	}
	sx, sy := dw/float64(max(1, a.Width)), dh/float64(max(1, a.Height))
	return func(q api.Point) (float64, float64) {
		dx, dy := float64(q.X)*sx, float64(q.Y)*sy
		switch pg.Rotate {
		case 90:
			return x0 + dy, y0 + dx
		case 180:
			return x1 - dx, y0 + dy
		case 270:
			return x1 - dy, y1 - dx
		}
		return x0 + dx, y1 - dy
	}
}

// writeXRefTable writes a cross-reference table of the objects written, in runs of consecutive
// numbers.
func writeXRefTable(cw *countWriter, offsets map[int]int64, gens map[int]int) {
	nums := sortedKeys(offsets)
	cw.str("xref\n")
	for i := 0; i < len(nums); {
		j := i + 1
		for j < len(nums) && nums[j] == nums[j-1]+1 {
			j++
		}
		cw.printf("%d %d\n", nums[i], j-i)
		for _, n := range nums[i:j] {
			cw.printf("%010d %05d n \n", offsets[n], gens[n])
		}
		i = j
	}
}

// writeXRefStream writes object xn, a cross-reference stream of the objects written (itself
// included), whose dictionary is trailer's entries.
func writeXRefStream(cw *countWriter, xn int, offsets map[int]int64, gens map[int]int, trailer pdffile.Dict) {
	nums := sortedKeys(offsets)
	var index pdffile.Array
	var rows bytes.Buffer
	for i := 0; i < len(nums); {
		j := i + 1
		for j < len(nums) && nums[j] == nums[j-1]+1 {
			j++
		}
		index = append(index, int64(nums[i]), int64(j-i))
		for _, n := range nums[i:j] {
			o, g := offsets[n], gens[n]
			rows.Write([]byte{1, byte(o >> 32), byte(o >> 24), byte(o >> 16), byte(o >> 8), byte(o), byte(g >> 8), byte(g)})
		}
		i = j
	}
	d := pdffile.Dict{"Type": pdffile.Name("XRef"), "W": pdffile.Array{int64(1), int64(5), int64(2)}, "Index": index}
	for k, v := range trailer {
		d[k] = v
	}
	raw := deflate(rows.Bytes())
	d["Filter"] = pdffile.Name("FlateDecode")
	d["Length"] = int64(len(raw))
	var b bytes.Buffer
	pdffile.Write(&b, d)
	start := offsets[xn]
	cw.printf("%d 0 obj\n%s\nstream\n", xn, b.Bytes())
	cw.write(raw)
	cw.printf("\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", start)
}

func sortedKeys(m map[int]int64) []int {
	nums := make([]int, 0, len(m))
	for n := range m {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	return nums
}

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }
