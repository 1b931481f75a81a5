package docfile_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestHiddenText: text no one sees is not page text. Each page shows hostile.VisibleLine and
// hides hostile.HiddenInstruction one way; the text layer keeps the one, drops the other and says
// why. Text that is merely unusual to look at (white on black, black on gray, small print) stays.
func TestHiddenText(t *testing.T) {
	for _, tt := range []struct {
		name                string
		before, hide, after string
		reason              string // "" when the text must be kept
	}{
		{"render mode 3 (invisible)", "", "3 Tr", "", "invisible_render_mode"},
		{"render mode 7 (clipping only)", "", "7 Tr", "", "invisible_render_mode"},
		{"below the page", "", "0 -900 Td", "", "outside_page"},
		{"right of the page", "", "1000 0 Td", "", "outside_page"},
		{"white on white", "", "1 g", "", "no_visible_mark"},
		{"covered by a white box drawn after it", "", "", "1 g 60 590 420 30 re f", "no_visible_mark"},
		{"gray on the same gray", "0.8 g 60 590 420 30 re f", "0.8 g", "", "no_visible_mark"},
		{"half a point tall", "", "/F1 0.5 Tf", "", "too_small"},
		{"white on a black box", "0 g 60 590 420 30 re f", "1 g", "", ""},
		{"black on a gray box", "0.8 g 60 590 420 30 re f", "0 g", "", ""},
		{"small print (5 pt)", "", "/F1 5 Tf", "", ""},
		// A timetable's times (pdf.js issue840): red (#CC2030) on a dark red cell (#702830),
		// 6 pt. Their grays differ by 23 of 255, their reds by 92.
		{"red on a dark red box", "0.44 0.16 0.19 rg 60 590 420 30 re f", "/F1 6 Tf 0.8 0.125 0.19 rg", "", ""},
		{"red on a green box as bright", "0.05 0.55 0.05 rg 60 590 420 30 re f", "0.8 0.125 0.19 rg", "", ""},
		{"red on the same red", "0.8 0.125 0.19 rg 60 590 420 30 re f", "0.8 0.125 0.19 rg", "", "no_visible_mark"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := hostile.PDFHiddenText(tt.before, tt.hide, tt.after)
			doc := open(t, data)
			ctx := ctxFor(t, time.Minute)
			page, err := doc.Page(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			c := page.RenderCost(scaleOf(t, page, docfile.Limits{}))
			tl, err := doc.TextLayer(ctx, page, c.Width, c.Height)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, l := range tl.Lines {
				texts = append(texts, l.Text)
			}
			all := strings.Join(texts, "\n")
			if !slices.Contains(texts, hostile.VisibleLine) {
				t.Errorf("the visible line is missing: %q", all)
			}
			hiddenChars := len(strings.ReplaceAll(hostile.HiddenInstruction, " ", ""))
			if tt.reason == "" {
				if !strings.Contains(all, "99999") || tl.Hidden.Chars() != 0 {
					t.Errorf("visible text dropped: %q, hidden %+v", all, tl.Hidden)
				}
				return
			}
			if strings.Contains(all, "SYSTEM") || strings.Contains(all, "99999") {
				t.Errorf("hidden text returned: %q", all)
			}
			if got := tl.Hidden.Reasons(); !slices.Equal(got, []string{tt.reason}) || tl.Hidden.Chars() < hiddenChars {
				t.Errorf("hidden %+v (%v); want %d characters for %s", tl.Hidden, got, hiddenChars, tt.reason)
			}
			if !page.TextUsable().Usable {
				t.Errorf("the page's visible text is not used: %s", page.TextUsable().Reason)
			}
		})
	}
}
