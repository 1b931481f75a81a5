package layout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// page builds a test page: named boxes (the names say where each belongs) and the reading order
// they must come out in.
type page struct {
	boxes []Box
	names []string
	want  []string // names in reading order
}

// add puts a box on the page and returns its name.
func (p *page) add(name string, x0, y0, x1, y1 float64) string {
	p.boxes = append(p.boxes, Box{X0: x0, Y0: y0, X1: x1, Y1: y1})
	p.names = append(p.names, name)
	return name
}

// column adds n lines of running text from y, pitch apart, between x0 and x1 (the last line of
// every paragraph of para lines short), and returns their names top to bottom.
func (p *page) column(prefix string, n int, x0, x1, y, pitch float64, para int) []string {
	var names []string
	for i := range n {
		end := x1
		if para > 0 && i%para == para-1 {
			end = x0 + (x1-x0)*0.4
		}
		names = append(names, p.add(fmt.Sprintf("%s%d", prefix, i), x0, y+float64(i)*pitch, end, y+float64(i)*pitch+12))
	}
	return names
}

// table adds rows of cells at the given x extents from y, pitch apart, and returns their names row
// by row.
func (p *page) table(prefix string, rows int, cols [][2]float64, y, pitch float64) []string {
	var names []string
	for r := range rows {
		for c, x := range cols {
			names = append(names, p.add(fmt.Sprintf("%s%d.%d", prefix, r, c), x[0], y+float64(r)*pitch, x[1], y+float64(r)*pitch+12))
		}
	}
	return names
}

// read lays the page out and returns the names in reading order and the blocks as names.
func (p *page) read() ([]string, [][]string) {
	// Shuffle the input deterministically: the layout must not depend on the order boxes come in.
	perm := make([]int, len(p.boxes))
	for i := range perm {
		perm[i] = (i*7 + 3) % len(p.boxes)
	}
	if !isPerm(perm) {
		for i := range perm {
			perm[i] = len(perm) - 1 - i
		}
	}
	boxes := make([]Box, len(perm))
	for i, j := range perm {
		boxes[i] = p.boxes[j]
	}
	var order []string
	var blocks [][]string
	for _, b := range Arrange(boxes, Options{RowOverlap: 0.5}) {
		var names []string
		for _, row := range b.Rows {
			for _, i := range row {
				names = append(names, p.names[perm[i]])
			}
		}
		order = append(order, names...)
		blocks = append(blocks, names)
	}
	return order, blocks
}

func isPerm(p []int) bool {
	seen := make([]bool, len(p))
	for _, v := range p {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func TestArrangeReadingOrder(t *testing.T) {
	cases := []struct {
		name string
		page func() page
	}{
		{"two aligned columns", func() page {
			var p page
			p.want = append(p.column("L", 20, 50, 290, 100, 15, 5), p.column("R", 18, 315, 555, 100, 15, 6)...)
			return p
		}},
		{"two columns, lines at different heights", func() page {
			var p page
			p.want = append(p.column("L", 20, 50, 290, 100, 15, 0), p.column("R", 16, 315, 555, 107, 18, 4)...)
			return p
		}},
		{"three columns", func() page {
			var p page
			p.want = p.column("A", 25, 40, 200, 80, 15, 8)
			p.want = append(p.want, p.column("B", 25, 220, 380, 80, 15, 7)...)
			p.want = append(p.want, p.column("C", 12, 400, 560, 80, 15, 0)...)
			return p
		}},
		{"a header spanning two columns, a footer under them", func() page {
			var p page
			p.want = []string{p.add("title", 150, 40, 450, 62), p.add("subtitle", 50, 70, 555, 82)}
			p.want = append(p.want, p.column("L", 15, 50, 290, 100, 15, 5)...)
			p.want = append(p.want, p.column("R", 15, 315, 555, 100, 15, 0)...)
			p.want = append(p.want, p.add("footer", 50, 340, 555, 352))
			return p
		}},
		{"the right column starts a line higher", func() page {
			var p page
			p.want = []string{p.add("title", 150, 40, 450, 62)}
			left := p.column("L", 15, 50, 290, 100, 15, 0)
			right := p.column("R", 16, 315, 555, 85, 15, 0)
			p.want = append(append(p.want, left...), right...)
			return p
		}},
		{"a column beside a table", func() page {
			var p page
			p.want = p.column("T", 22, 50, 290, 100, 15, 6)
			p.want = append(p.want, p.table("tab", 8, [][2]float64{{315, 420}, {450, 490}, {510, 555}}, 100, 24)...)
			return p
		}},
		// A scanner's boxes are as tall as the line pitch (the detector's margin, a skew), so
		// nearly every row of the table overlaps a line of the column beside it: only where
		// the rows sit (on the column's lines or between them) tells a table read across from a
		// column beside a table. The geometry of the layout test page scanned at 150 dpi.
		{"a column beside a table, scanned", func() page {
			var p page
			for i := range 44 {
				y := 120 + 27*float64(i)
				end := 620.0
				if i%9 == 8 {
					end = 330
				}
				p.want = append(p.want, p.add(fmt.Sprintf("T%d", i), 100, y, end, y+32))
			}
			p.want = append(p.want, p.table("tab", 25, [][2]float64{{675, 800}, {935, 975}, {1050, 1130}}, 128, 41.5)...)
			for i := range p.boxes[44:] {
				p.boxes[44+i].Y1 += 16 // the table's boxes are 28 tall
			}
			return p
		}},
		// A scan's detector boxes reach past the ink, so a gutter of one text height between
		// justified columns is two thirds of one between their boxes (LinnSequencer's
		// brochure, scanned at 300 dpi: boxes 50 px tall, 36 px apart).
		{"two columns, a narrow gutter between the boxes", func() page {
			var p page
			p.want = append(p.column("L", 12, 50, 290, 100, 15, 0), p.column("R", 12, 298, 538, 100, 15, 4)...)
			return p
		}},
		// A heading under two columns, nearer to the text across the page under it than to the
		// column it sits under, is read with that text, after both columns.
		{"a heading under two columns leads the text across", func() page {
			var p page
			p.want = append(p.column("L", 12, 50, 290, 100, 15, 0), p.column("R", 10, 315, 555, 100, 15, 0)...)
			p.want = append(p.want, p.add("heading", 50, 293, 150, 307), p.add("across", 50, 308, 555, 320))
			return p
		}},
		// Three columns, and a worksheet across the first two lower down, with the third
		// running on beside it (the Instructions for Form 1040NR, page 16): the first two
		// columns are one strip beside the third, their rows cut by a gutter and on the
		// third's pitch. They are columns, not a table's cells read across.
		{"three columns, a box across the first two", func() page {
			var p page
			p.want = p.column("A", 30, 43, 208, 33, 10, 8)
			p.want = append(p.want, p.column("B", 30, 223, 388, 33, 10, 9)...)
			p.want = append(p.want, p.column("W", 12, 44, 390, 350, 10, 0)...)
			p.want = append(p.want, p.column("C", 45, 403, 570, 33, 10, 7)...)
			return p
		}},
		// A line turned on its side in the margin (arXiv's identifier, a filing stamp) runs past
		// every row of the columns beside it; it is read after them.
		{"a sideways line in the margin", func() page {
			var p page
			side := p.add("side", 10, 150, 24, 600)
			p.want = append(p.column("L", 30, 50, 290, 100, 15, 5), p.column("R", 30, 315, 555, 100, 15, 6)...)
			p.want = append(p.want, side)
			return p
		}},
		{"a table beside a column", func() page {
			var p page
			p.want = p.table("tab", 6, [][2]float64{{50, 150}, {200, 290}}, 100, 22)
			p.want = append(p.want, p.column("T", 22, 315, 555, 100, 15, 0)...)
			return p
		}},
		{"a table across the page keeps its rows", func() page {
			var p page
			p.want = []string{p.add("head", 50, 60, 300, 72)}
			p.want = append(p.want, p.table("tab", 10, [][2]float64{{50, 280}, {320, 380}, {420, 480}, {500, 555}}, 100, 15)...)
			return p
		}},
		{"a receipt: labels and amounts, items over two rows", func() page {
			var p page
			p.want = []string{
				p.add("shop", 150, 20, 350, 44), p.add("addr", 120, 50, 380, 62), p.add("tel", 170, 66, 330, 78),
				p.add("inv", 30, 100, 200, 112), p.add("invno", 300, 100, 470, 112),
				p.add("item1", 30, 130, 330, 142),
				p.add("qty1", 60, 146, 80, 158), p.add("price1", 250, 146, 300, 158), p.add("amt1", 420, 146, 470, 158),
				p.add("item2", 30, 162, 280, 174),
				p.add("qty2", 60, 178, 80, 190), p.add("price2", 250, 178, 300, 190), p.add("amt2", 420, 178, 470, 190),
				p.add("subtotal", 30, 210, 150, 222), p.add("subamt", 420, 210, 470, 222),
				p.add("total", 30, 226, 110, 238), p.add("totamt", 420, 226, 470, 238),
				p.add("cash", 30, 242, 100, 254), p.add("cashamt", 410, 242, 470, 254),
				p.add("thanks", 100, 290, 400, 302),
			}
			return p
		}},
		// Two of sroie-dev's receipts (their regions' boxes as the detector found them), whose
		// reading is row by row: a short line beside left-aligned address lines (474), and a
		// column of codes beside labels and amounts (624).
		{"a receipt's TAX INVOICE beside its address", func() page {
			var p page
			p.want = []string{
				p.add("shop", 50, 134, 517, 166), p.add("addr1", 49, 181, 507, 205), p.add("addr2", 49, 202, 249, 228),
				p.add("mobile", 48, 229, 435, 257), p.add("tel", 50, 260, 270, 284), p.add("gst", 49, 286, 326, 311),
				p.add("taxinvoice", 416, 299, 598, 326), p.add("owned", 39, 314, 144, 343), p.add("company", 38, 340, 382, 367),
				p.add("counter", 45, 397, 305, 421), p.add("item", 56, 460, 195, 483), p.add("desc1", 276, 458, 588, 487),
				p.add("desc2", 276, 485, 593, 514), p.add("desc3", 276, 512, 424, 542), p.add("qty", 82, 540, 211, 570),
				p.add("amount", 472, 544, 539, 569),
			}
			return p
		}},
		{"a receipt's tax codes beside its labels and amounts", func() page {
			var p page
			p.want = []string{
				p.add("rm", 395, 609, 442, 637), p.add("code", 477, 608, 545, 638),
				p.add("item", 42, 649, 363, 675),
				p.add("qty", 66, 686, 183, 708), p.add("x", 211, 690, 229, 705), p.add("price", 253, 685, 314, 706),
				p.add("amount", 370, 683, 443, 707), p.add("sr", 506, 682, 546, 708),
				p.add("subtotal", 153, 724, 250, 746), p.add("subamt", 370, 722, 443, 747),
				p.add("excl", 67, 767, 251, 790), p.add("exclamt", 380, 766, 443, 790),
				p.add("incl", 74, 804, 251, 826), p.add("inclamt", 370, 801, 443, 825),
				p.add("rounded", 55, 842, 252, 865), p.add("roundamt", 370, 839, 443, 863),
				p.add("payment", 145, 874, 251, 899), p.add("payamt", 369, 871, 444, 898),
			}
			return p
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.page()
			got, blocks := p.read()
			if !slices.Equal(got, p.want) {
				t.Errorf("reading order:\n got %s\nwant %s\nblocks %v", strings.Join(got, " "), strings.Join(p.want, " "), blocks)
			}
		})
	}
}

// TestArrangeBlocks checks how regions group: paragraphs split at a wider gap or a heading, a
// column never shares a block with its neighbour, and a receipt's evenly spaced rows stay one
// block.
func TestArrangeBlocks(t *testing.T) {
	t.Run("paragraphs and a heading", func(t *testing.T) {
		var p page
		p.add("h", 50, 40, 300, 64) // a heading, twice the text height
		for i := range 4 {
			p.add(fmt.Sprintf("a%d", i), 50, 75+float64(i)*15, 555, 87+float64(i)*15)
		}
		for i := range 3 { // after an empty line
			p.add(fmt.Sprintf("b%d", i), 50, 150+float64(i)*15, 555, 162+float64(i)*15)
		}
		_, blocks := p.read()
		want := [][]string{{"h"}, {"a0", "a1", "a2", "a3"}, {"b0", "b1", "b2"}}
		if fmt.Sprint(blocks) != fmt.Sprint(want) {
			t.Errorf("blocks %v, want %v", blocks, want)
		}
	})
	// A scanner's boxes of one paragraph vary in height (ascenders, descenders, the detector's
	// margin): a row boxed a third taller than usual after one boxed a little shorter is no
	// heading (LinnSequencer's brochure: 66 px after 42, the paragraph's usual height 50).
	t.Run("rows boxed taller or shorter stay one paragraph", func(t *testing.T) {
		var p page
		for i, h := range []float64{50, 42, 66, 42, 51, 48, 50} {
			y := 100 + float64(i)*60
			p.add(fmt.Sprintf("r%d", i), 50, y, 555, y+h)
		}
		_, blocks := p.read()
		if len(blocks) != 1 {
			t.Errorf("%d blocks, want 1: %v", len(blocks), blocks)
		}
	})
	t.Run("columns", func(t *testing.T) {
		var p page
		l := p.column("L", 6, 50, 290, 100, 15, 0)
		r := p.column("R", 6, 315, 555, 100, 15, 0)
		_, blocks := p.read()
		want := [][]string{l, r}
		if fmt.Sprint(blocks) != fmt.Sprint(want) {
			t.Errorf("blocks %v, want %v", blocks, want)
		}
	})
	t.Run("receipt rows", func(t *testing.T) {
		var p page
		for i := range 8 {
			y := 100 + float64(i)*16
			p.add(fmt.Sprintf("l%d", i), 30, y, 200, y+12)
			p.add(fmt.Sprintf("r%d", i), 400, y, 460, y+12)
		}
		_, blocks := p.read()
		if len(blocks) != 1 {
			t.Errorf("%d blocks, want 1: %v", len(blocks), blocks)
		}
	})
}

// TestArrangeBlockBoxes checks that every region is in exactly one block and that a block's box
// holds its regions.
func TestArrangeBlockBoxes(t *testing.T) {
	var p page
	p.add("title", 150, 40, 450, 62)
	p.column("L", 15, 50, 290, 100, 15, 5)
	p.column("R", 15, 315, 555, 100, 15, 0)
	p.table("tab", 5, [][2]float64{{50, 280}, {320, 380}}, 400, 15)
	blocks := Arrange(p.boxes, Options{RowOverlap: 0.5})
	seen := make([]int, len(p.boxes))
	for _, b := range blocks {
		for _, row := range b.Rows {
			for _, i := range row {
				seen[i]++
				r := p.boxes[i]
				if r.X0 < b.Box.X0 || r.Y0 < b.Box.Y0 || r.X1 > b.Box.X1 || r.Y1 > b.Box.Y1 {
					t.Errorf("region %s %v outside its block's box %v", p.names[i], r, b.Box)
				}
			}
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("region %s is in %d blocks", p.names[i], n)
		}
	}
	if Arrange(nil, Options{}) != nil {
		t.Error("no regions should give no blocks")
	}
}
