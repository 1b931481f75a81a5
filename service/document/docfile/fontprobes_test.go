package docfile_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestProbesEveryMeaningfulFont: every font that carries a meaningful share of the page (2 % of
// its characters, or a whole line of its own) is probed, past the 4 probes asked for: a fifth and
// a sixth font of a form are judged, not taken on the others' word. A page of twelve fonts gets a
// probe of each, at most maxFontProbes (12).
func TestProbesEveryMeaningfulFont(t *testing.T) {
	type run struct {
		family, style string
		lines         int
	}
	for _, tt := range []struct {
		name  string
		runs  []run
		fonts int // probes, one a font
	}{
		{"six fonts", []run{{"Helvetica", "", 30}, {"Times", "", 4}, {"Courier", "", 3}, {"Helvetica", "B", 2}, {"Times", "I", 1}, {"Courier", "B", 1}}, 6},
		{"twelve fonts and more lines", []run{
			{"Helvetica", "", 6}, {"Helvetica", "B", 5}, {"Helvetica", "I", 5}, {"Helvetica", "BI", 4},
			{"Times", "", 4}, {"Times", "B", 4}, {"Times", "I", 3}, {"Times", "BI", 3},
			{"Courier", "", 3}, {"Courier", "B", 2}, {"Courier", "I", 2}, {"Courier", "BI", 2}}, 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pdf := newFpdf()
			pdf.AddPage()
			y := 50.0
			for _, r := range tt.runs {
				pdf.SetFont(r.family, r.style, 9)
				for i := range r.lines {
					pdf.Text(60, y, fmt.Sprintf("Line %d of the %s %s run reads plainly", i+1, r.family, r.style))
					y += 11
				}
			}
			doc := open(t, output(t, pdf))
			ctx := ctxFor(t, time.Minute)
			p, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			c := p.RenderCost(scaleOf(t, p, docfile.Limits{}))
			tl, err := doc.TextLayer(ctx, p, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			probes := tl.Probes(4)
			var fonts []string
			for _, pr := range probes {
				if !slices.Contains(fonts, pr.Font) {
					fonts = append(fonts, pr.Font)
				}
			}
			if len(probes) != tt.fonts || len(fonts) != tt.fonts {
				t.Errorf("%d probes of %d fonts %q, want one of each of %d", len(probes), len(fonts), fonts, tt.fonts)
			}
		})
	}
}
