package export

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/api"
)

func shape(x0, y0, x1, y1 int) api.BoundingShape {
	return api.BoundingShape{Type: "polygon", Points: []api.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}}
}

// samplePages are two pages as the service answers them: words with boxes, a block of two lines,
// a region outside every block, a region without words, a box sticking out of the page, text that
// XML must escape, a page turned 90°, and a page that could not be read.
func samplePages() []api.Page {
	w := func(t string, x0, y0, x1, y1 int, c float64) api.Word {
		return api.Word{Text: t, Confidence: c, BoundingShape: shape(x0, y0, x1, y1)}
	}
	return []api.Page{{
		Page: 1, Width: 600, Height: 400, Source: "ocr",
		Regions: []api.Region{
			{Text: "TOTAL 9.00", Confidence: 0.98, BoundingShape: shape(10, 10, 200, 40), Language: "unknown",
				Words: []api.Word{w("TOTAL", 10, 10, 100, 40, 0.99), w("9.00", 120, 10, 200, 40, 0.97)}},
			{Text: `<a & "b">`, Confidence: 0.9, BoundingShape: shape(10, 50, 300, 80), Language: "en",
				Words: []api.Word{w("<a", 10, 50, 60, 80, 0.9), w("&", 70, 50, 90, 80, 0.8), w(`"b">`, 100, 50, 300, 80, 0.91)}},
			{Text: "edge", Confidence: 0.7, BoundingShape: shape(580, 380, 610, 405)},
		},
		Blocks: []api.Block{{BoundingShape: shape(10, 10, 300, 80), Regions: []int{0, 1}}},
		Text:   "TOTAL 9.00\n<a & \"b\">\nedge",
	}, {
		Page: 3, Width: 300, Height: 500, Source: "text-layer", Rotation: 90,
		Regions: []api.Region{{Text: "上 下", Confidence: 1, BoundingShape: shape(20, 20, 60, 300),
			Words: []api.Word{w("上", 20, 200, 60, 300, 1), w("下", 20, 20, 60, 120, 1)}}},
		Blocks: []api.Block{{BoundingShape: shape(20, 20, 60, 300), Regions: []int{0}}},
		Text:   "上 下",
	}, {
		Page: 4, Width: 300, Height: 500, Source: "none", Error: &api.PageError{Code: "page_unreadable", Message: "x"},
	}}
}

func write(t *testing.T, f Format, pages []api.Page) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, f, pages, Software{Name: "ocrgate", Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestText(t *testing.T) {
	got := string(write(t, Text, samplePages()))
	want := "TOTAL 9.00\n<a & \"b\">\nedge\f上 下\f\n"
	if got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

// element is a parsed XML element with its children, for the structure checks.
type element struct {
	name     string
	attr     map[string]string
	children []*element
	text     string
}

func parseXML(t *testing.T, data []byte) *element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	root := &element{}
	stack := []*element{root}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &element{name: tk.Name.Local, attr: map[string]string{}}
			for _, a := range tk.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].text += string(tk)
		}
	}
	if len(root.children) != 1 {
		t.Fatalf("%d root elements", len(root.children))
	}
	return root.children[0]
}

func (e *element) walk(fn func(e, parent *element)) {
	for _, c := range e.children {
		fn(c, e)
		c.walk(fn)
	}
}

var bboxRe = regexp.MustCompile(`bbox (-?\d+) (-?\d+) (-?\d+) (-?\d+)`)

func hocrBox(t *testing.T, e *element) (box, bool) {
	m := bboxRe.FindStringSubmatch(e.attr["title"])
	if m == nil {
		return box{}, false
	}
	v := make([]int, 4)
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return box{v[0], v[1], v[2], v[3]}, true
}

func inside(b, outer box) bool {
	return b.x0 >= outer.x0 && b.y0 >= outer.y0 && b.x1 <= outer.x1 && b.y1 <= outer.y1 && !b.empty()
}

// TestHOCR: the hOCR parses as XHTML (strict XML in the XHTML namespace); every element has its
// class and a bbox inside its page and its parent; words carry x_wconf; the words read back are
// the answer's, escaped text included; the turned page says its angle.
func TestHOCR(t *testing.T) {
	root := parseXML(t, write(t, HOCR, samplePages()))
	if root.name != "html" || root.attr["xmlns"] != "http://www.w3.org/1999/xhtml" {
		t.Fatalf("root %s xmlns %q", root.name, root.attr["xmlns"])
	}
	parentOf := map[string]string{"ocr_carea": "ocr_page", "ocr_line": "ocr_carea", "ocrx_word": "ocr_line"}
	count := map[string]int{}
	var words []string
	var boxes = map[*element]box{}
	root.walk(func(e, parent *element) {
		class := e.attr["class"]
		if class == "" {
			return
		}
		count[class]++
		b, ok := hocrBox(t, e)
		if !ok {
			t.Errorf("%s without a bbox: %q", class, e.attr["title"])
			return
		}
		boxes[e] = b
		if class == "ocr_page" {
			return
		}
		if want := parentOf[class]; parent.attr["class"] != want {
			t.Errorf("%s inside %q, want %s", class, parent.attr["class"], want)
		}
		if !inside(b, boxes[parent]) {
			t.Errorf("%s %q bbox %v not inside its %s's %v", class, e.attr["id"], b, parent.attr["class"], boxes[parent])
		}
		if class == "ocrx_word" {
			if !regexp.MustCompile(`; x_wconf \d+$`).MatchString(e.attr["title"]) {
				t.Errorf("word without x_wconf: %q", e.attr["title"])
			}
			words = append(words, e.text)
		}
	})
	want := map[string]int{"ocr_page": 3, "ocr_carea": 3, "ocr_line": 4, "ocrx_word": 8}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d %s, want %d", count[k], k, n)
		}
	}
	if got, want := strings.Join(words, " "), `TOTAL 9.00 <a & "b"> edge 上 下`; got != want {
		t.Errorf("words %q, want %q", got, want)
	}
	out := string(write(t, HOCR, samplePages()))
	for _, s := range []string{`title="bbox 0 0 300 500; ppageno 2; textangle 90; x_source text-layer"`, `lang="en"`, `x_wconf 97`} {
		if !strings.Contains(out, s) {
			t.Errorf("hOCR lacks %s", s)
		}
	}
}

// TestALTO checks the output against what the ALTO 4.4 schema requires of the elements it uses
// (the schema's own validation, with libxml2, is in docs/formats.md): the root in the v4
// namespace, Description with MeasurementUnit first, Layout of Pages with their required ID and
// PHYSICAL_IMG_NR, one PrintSpace, TextBlocks with IDs, TextLines of at least one String, Strings
// with CONTENT and WC in [0, 1] alternating with SP, and every box inside its parent's.
func TestALTO(t *testing.T) {
	root := parseXML(t, write(t, ALTO, samplePages()))
	if root.name != "alto" || root.attr["xmlns"] != "http://www.loc.gov/standards/alto/ns-v4#" {
		t.Fatalf("root %s xmlns %q", root.name, root.attr["xmlns"])
	}
	names := func(es []*element) string {
		var s []string
		for _, e := range es {
			s = append(s, e.name)
		}
		return strings.Join(s, " ")
	}
	if got := names(root.children); got != "Description Layout" {
		t.Fatalf("alto holds %q", got)
	}
	if d := root.children[0]; len(d.children) == 0 || d.children[0].name != "MeasurementUnit" || d.children[0].text != "pixel" {
		t.Errorf("Description does not start with MeasurementUnit pixel")
	}
	num := func(e *element, a string) int {
		v, err := strconv.Atoi(e.attr[a])
		if err != nil {
			t.Errorf("%s %s=%q: not a whole number", e.name, a, e.attr[a])
		}
		return v
	}
	altoBox := func(e *element) box {
		x, y := num(e, "HPOS"), num(e, "VPOS")
		return box{x, y, x + num(e, "WIDTH"), y + num(e, "HEIGHT")}
	}
	var words []string
	ids := map[string]bool{}
	root.walk(func(e, parent *element) {
		if id, ok := e.attr["ID"]; ok {
			if ids[id] {
				t.Errorf("ID %q twice", id)
			}
			ids[id] = true
		}
	})
	for _, page := range root.children[1].children {
		if page.name != "Page" || page.attr["ID"] == "" || page.attr["PHYSICAL_IMG_NR"] == "" {
			t.Fatalf("Layout holds %s %v", page.name, page.attr)
		}
		pb := box{0, 0, num(page, "WIDTH"), num(page, "HEIGHT")}
		if names(page.children) != "PrintSpace" {
			t.Fatalf("Page holds %q", names(page.children))
		}
		ps := page.children[0]
		if altoBox(ps) != pb {
			t.Errorf("PrintSpace %v, page %v", altoBox(ps), pb)
		}
		for _, tb := range ps.children {
			if tb.name != "TextBlock" || tb.attr["ID"] == "" || !inside(altoBox(tb), pb) {
				t.Errorf("%s %v in PrintSpace", tb.name, tb.attr)
			}
			for _, tl := range tb.children {
				if tl.name != "TextLine" || !inside(altoBox(tl), altoBox(tb)) {
					t.Errorf("%s %v in TextBlock %v", tl.name, tl.attr, tb.attr)
				}
				var seq []string
				for k, s := range tl.children {
					seq = append(seq, s.name)
					if want := []string{"String", "SP"}[k%2]; s.name != want {
						t.Errorf("TextLine holds %s where %s belongs", s.name, want)
					}
					if s.name == "String" {
						wc, err := strconv.ParseFloat(s.attr["WC"], 64)
						if err != nil || wc < 0 || wc > 1 {
							t.Errorf("String WC %q", s.attr["WC"])
						}
						if !inside(altoBox(s), altoBox(tl)) {
							t.Errorf("String %v outside its TextLine %v", altoBox(s), altoBox(tl))
						}
						words = append(words, s.attr["CONTENT"])
					}
				}
				if len(seq) == 0 || seq[len(seq)-1] != "String" {
					t.Errorf("TextLine %v holds %v", tl.attr, seq)
				}
			}
		}
	}
	if got, want := strings.Join(words, " "), `TOTAL 9.00 <a & "b"> edge 上 下`; got != want {
		t.Errorf("words %q, want %q", got, want)
	}
	if out := string(write(t, ALTO, samplePages())); !strings.Contains(out, `ROTATION="90"`) || !strings.Contains(out, `LANG="en"`) {
		t.Errorf("ALTO lacks the turned page's ROTATION or a line's LANG")
	}
}

// TestNoLargerThanJSON: each format of a dense page (many short words, coordinates of five
// digits) is no longer than the JSON answer of the same page with its words, which is what the
// service prices an answer at.
func TestNoLargerThanJSON(t *testing.T) {
	p := api.Page{Page: 12345, Width: 20000, Height: 20000, Source: "ocr"}
	for r := 0; r < 200; r++ {
		reg := api.Region{RegionID: r, Text: "", Confidence: 0.9876, Language: "unknown", ReadingOrder: r + 1, Row: r,
			BoundingShape: shape(10000, 10000+r*10, 19999, 10009+r*10), Direction: "horizontal"}
		for k := 0; k < 40; k++ {
			x := 10000 + k*200
			reg.Words = append(reg.Words, api.Word{Text: "&", Confidence: 0.9876, BoundingShape: shape(x, 10000+r*10, x+150, 10009+r*10)})
			reg.Text += "& "
		}
		p.Regions = append(p.Regions, reg)
		p.Blocks = append(p.Blocks, api.Block{BoundingShape: reg.BoundingShape, Regions: []int{r}})
		p.Text += reg.Text + "\n"
	}
	js, err := json.Marshal(api.DocumentResult{Pages: []api.Page{p}, Text: p.Text})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{Text, HOCR, ALTO} {
		if n := len(write(t, f, []api.Page{p})); n > len(js) {
			t.Errorf("%s: %d bytes, the JSON %d", f, n, len(js))
		}
	}
}

func TestFromAccept(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   Format
		ok     bool
	}{
		{"", JSON, true},
		{"*/*", JSON, true},
		{"application/json", JSON, true},
		{"text/plain", Text, true},
		{"text/vnd.hocr+html", HOCR, true},
		{"application/alto+xml", ALTO, true},
		{"application/pdf", PDF, true},
		{"text/plain;q=0.5, application/alto+xml", ALTO, true},
		{"text/plain, application/json;q=0.9", Text, true},
		// A browser's navigation: nothing specific, anything accepted.
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", JSON, true},
		{"image/png", "", false},
		{"text/plain;q=0, image/png", "", false},
		{"garbage;;", "", false},
	} {
		t.Run(tt.header, func(t *testing.T) {
			got, ok := FromAccept(tt.header)
			if got != tt.want || ok != tt.ok {
				t.Errorf("FromAccept(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, name := range []string{"json", "text", "hocr", "ALTO"} {
		if _, ok := Parse(name); !ok {
			t.Errorf("Parse(%q) refused", name)
		}
	}
	for _, name := range []string{"", "pdf2", "xml", "docx"} {
		if f, ok := Parse(name); ok {
			t.Errorf("Parse(%q) = %q", name, f)
		}
	}
	if got := fmt.Sprint(Names()); got != "json, text, hocr, alto, pdf" {
		t.Errorf("Names() = %q", got)
	}
}
