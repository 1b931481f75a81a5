package docfile_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestRotatedText: text the page shows turned (a /Rotate page, a baseline drawn at an angle,
// both at once) reads as pdftotext reads it: each line one line, its words in order, its box on
// its ink in the page as displayed, its first corner at the text's own top-left. Before, PDFium's
// character angle (clockwise) was taken as counter-clockwise: a /Rotate 90 landscape page read
// "T h is is m y se co n d p a g e", and a margin line turned 90° came out letter by letter.
func TestRotatedText(t *testing.T) {
	helvetica := func(rotate int, content string) []byte {
		return testdoc.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Rotate %d /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> /Contents 4 0 R >>", rotate),
			testdoc.Stream("", []byte(content)))
	}
	dejaVu := func(rotate int, runs ...testdoc.Run) []byte {
		data, err := testdoc.FontPDF(testdoc.FontPage{Width: 595, Height: 842, Rotate: rotate, Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	type line struct {
		text  string
		angle float64 // of the box's top edge as displayed, degrees (90: reads downwards)
	}
	for _, tt := range []struct {
		name  string
		data  []byte
		lines []line // in reading order
	}{
		{"a landscape page: /Rotate 90, text drawn turned 90° to read level",
			dejaVu(90, testdoc.Run{X: 100, Y: 72, Size: 18, Angle: 90, Text: "This is my second page"}),
			[]line{{"This is my second page", 0}}},
		{"a landscape page turned by the content's matrix",
			helvetica(90, "q 0 1 -1 0 595 0 cm BT /F1 18 Tf 72 500 Td (Landscape drawn by cm) Tj ET Q"),
			[]line{{"Landscape drawn by cm", 0}}},
		{"a margin line turned 90° on an upright page",
			dejaVu(0, testdoc.Run{X: 72, Y: 760, Size: 12, Text: "Body text of the paper"},
				testdoc.Run{X: 30, Y: 200, Size: 20, Angle: 90, Text: "arXiv:2101.00001v1 [cs.CL] 1 Jan 2021"}),
			[]line{{"Body text of the paper", 0}, {"arXiv:2101.00001v1 [cs.CL] 1 Jan 2021", -90}}},
		{"a label turned 270°",
			dejaVu(0, testdoc.Run{X: 560, Y: 700, Size: 16, Angle: 270, Text: "Copy for the customer"}),
			[]line{{"Copy for the customer", 90}}},
		{"text upside down",
			dejaVu(0, testdoc.Run{X: 400, Y: 400, Size: 16, Angle: 180, Text: "Upside down total 12.50"}),
			[]line{{"Upside down total 12.50", 180}}},
		{"a page shown upside down: /Rotate 180",
			helvetica(180, "BT /F1 16 Tf 72 700 Td (Shown upside down) Tj ET"),
			[]line{{"Shown upside down", 180}}},
		{"/Rotate 270 with text drawn at 270° to read level",
			dejaVu(270, testdoc.Run{X: 500, Y: 700, Size: 16, Angle: 270, Text: "Landscape the other way"}),
			[]line{{"Landscape the other way", 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := open(t, tt.data)
			ctx := ctxFor(t, time.Minute)
			p, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := doc.Render(ctx, p, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			lines := p.Lines(dec.Width, dec.Height)
			var got []string
			for _, l := range lines {
				got = append(got, l.Text)
			}
			if len(lines) != len(tt.lines) {
				t.Fatalf("lines %q, want %d", got, len(tt.lines))
			}
			for i, want := range tt.lines {
				l := lines[i]
				if l.Text != want.text {
					t.Errorf("line %d %q, want %q", i, l.Text, want.text)
				}
				if n := len(strings.Fields(want.text)); len(l.Words) != n {
					t.Errorf("line %d: %d words, want %d", i, len(l.Words), n)
				}
				if d := math.Mod(l.Quad.Angle()-want.angle+540, 360) - 180; math.Abs(d) > 1 {
					t.Errorf("line %d: top edge at %.1f°, want %.0f°", i, l.Quad.Angle(), want.angle)
				}
			}
			// A page of one line: its box is where its ink is on the page as displayed.
			if len(lines) == 1 {
				x0, y0, x1, y1 := lines[0].Quad.Bounds()
				ink := inkBounds(dec.Image, dec.Image.Bounds())
				if math.Abs(x0-float64(ink.Min.X)) > 3 || math.Abs(y0-float64(ink.Min.Y)) > 3 ||
					math.Abs(x1-float64(ink.Max.X)) > 3 || math.Abs(y1-float64(ink.Max.Y)) > 3 {
					t.Errorf("box (%.0f,%.0f)-(%.0f,%.0f), ink %v", x0, y0, x1, y1, ink)
				}
			}
		})
	}
}

// TestLayerRotation: a table on a /Rotate 90 page, its rows drawn across the page's own frame, runs
// down the page as displayed (the NICS background-checks table that pdfplumber keeps turned). Its
// layer answers the turn OCR would, 270, and laid out at that turn it reads row by row, as OCR of
// the page does; laid out as displayed, its columns came out as lines. A stamp up the margin of an
// upright page, or a landscape page whose text is drawn turned to read level, turns nothing.
func TestLayerRotation(t *testing.T) {
	page := func(rotate int, content string) []byte {
		return testdoc.Raw("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 842 595] /Rotate %d /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> /Contents 4 0 R >>", rotate),
			testdoc.Stream("", []byte(content)))
	}
	rows := [][]string{{"State", "Permit", "Handgun", "Long Gun"}, {"Alabama", "18,870", "23,022", "22,650"},
		{"Alaska", "209", "3,062", "3,209"}, {"Arizona", "2,303", "12,382", "9,041"}, {"Arkansas", "3,635", "7,004", "8,872"}}
	var table strings.Builder
	for r, row := range rows {
		for c, cell := range row {
			fmt.Fprintf(&table, "BT /F1 10 Tf %d %d Td (%s) Tj ET\n", 60+150*c, 500-14*r, cell)
		}
	}
	for _, tt := range []struct {
		name     string
		data     []byte
		rotation int
		text     string // laid out at that rotation
	}{
		{"a table on a /Rotate 90 page", page(90, table.String()), 270,
			"State Permit Handgun Long Gun\nAlabama 18,870 23,022 22,650\nAlaska 209 3,062 3,209\nArizona 2,303 12,382 9,041\nArkansas 3,635 7,004 8,872"},
		{"the same table upright", page(0, table.String()), 0,
			"State Permit Handgun Long Gun\nAlabama 18,870 23,022 22,650\nAlaska 209 3,062 3,209\nArizona 2,303 12,382 9,041\nArkansas 3,635 7,004 8,872"},
		{"a /Rotate 90 page drawn turned to read level",
			page(90, "q 0 1 -1 0 842 0 cm BT /F1 18 Tf 72 500 Td (Landscape drawn by cm) Tj ET Q"), 0, "Landscape drawn by cm"},
		{"a stamp up the margin of an upright page",
			page(0, table.String()+"q 0 1 -1 0 30 100 cm BT /F1 12 Tf 0 0 Td (arXiv:2101.00001v1) Tj ET Q"), 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := open(t, tt.data)
			ctx := ctxFor(t, time.Minute)
			p, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			w, h := int(p.Width), int(p.Height)
			tl, err := doc.TextLayer(ctx, p, w, h)
			if err != nil {
				t.Fatal(err)
			}
			if got := tl.Rotation(); got != tt.rotation {
				t.Errorf("rotation %d, want %d", got, tt.rotation)
			}
			res := &ocr.Result{Width: w, Height: h, Rotation: tl.Rotation()}
			for _, l := range tl.Lines {
				res.Regions = append(res.Regions, ocr.Region{Quad: l.Quad, Text: l.Text, Score: 1})
			}
			ocr.Arrange(res, ocr.DefaultOptions().RowOverlap)
			if tt.text != "" && res.Text != tt.text {
				t.Errorf("text laid out:\n%s\nwant\n%s", res.Text, tt.text)
			}
		})
	}
}
