package ocrscore

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/geom"
)

func TestCompareLines(t *testing.T) {
	tests := []struct {
		name      string
		want, got []string
		edits     int
		diffs     []LineDiff
	}{
		{"same", []string{"TOTAL", "9.00"}, []string{"TOTAL", "9.00"}, 0, nil},
		{"both empty", nil, nil, 0, nil},
		{"one character flips", []string{"TOTAL", "9.00", "CASH"}, []string{"TOTAL", "9.08", "CASH"}, 1,
			[]LineDiff{{WantLine: 2, GotLine: 2, Want: "9.00", Got: "9.08", Edits: 1}}},
		{"line dropped, the rest aligned", []string{"A", "BB", "CCC"}, []string{"A", "CCC"}, 3,
			[]LineDiff{{WantLine: 2, Want: "BB", Edits: 3}}},
		{"line added", []string{"A", "CCC"}, []string{"A", "X", "CCC"}, 2,
			[]LineDiff{{GotLine: 2, Got: "X", Edits: 2}}},
		{"two lines change", []string{"SUBTOTAL 8.00", "TAX 1.00"}, []string{"SUBT0TAL 8.00", "TAX 1,00"}, 2,
			[]LineDiff{
				{WantLine: 1, GotLine: 1, Want: "SUBTOTAL 8.00", Got: "SUBT0TAL 8.00", Edits: 1},
				{WantLine: 2, GotLine: 2, Want: "TAX 1.00", Got: "TAX 1,00", Edits: 1},
			}},
		{"characters, not bytes", []string{"金额 9.00"}, []string{"全额 9.00"}, 1,
			[]LineDiff{{WantLine: 1, GotLine: 1, Want: "金额 9.00", Got: "全额 9.00", Edits: 1}}},
		{"all new", nil, []string{"AB"}, 3, []LineDiff{{GotLine: 1, Got: "AB", Edits: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, edits := CompareLines(tt.want, tt.got)
			if edits != tt.edits || !slices.Equal(diffs, tt.diffs) {
				t.Errorf("CompareLines = %v, %d edits; want %v, %d", diffs, edits, tt.diffs, tt.edits)
			}
			sum := 0
			for _, d := range diffs {
				sum += d.Edits
			}
			if sum != edits {
				t.Errorf("line edits add up to %d, total %d", sum, edits)
			}
		})
	}
}

func TestLineDiffNamesTheLine(t *testing.T) {
	for _, tt := range []struct {
		d    LineDiff
		want string
	}{
		{LineDiff{WantLine: 2, GotLine: 2, Want: "9.00", Got: "9.08", Edits: 1}, `line 2 "9.00" → "9.08" (1 edits)`},
		{LineDiff{WantLine: 3, Want: "CASH", Edits: 5}, `line 3 "CASH": missing (5 edits)`},
		{LineDiff{GotLine: 4, Got: "X", Edits: 2}, `new line 4 "X" (2 edits)`},
	} {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestGoldenRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "003.txt")
	lines := []string{"TAN WOON YANN", "", "TOTAL 9.00", "two\nlines"}
	if err := WriteGolden(path, lines); err != nil {
		t.Fatal(err)
	}
	got, err := ReadGolden(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TAN WOON YANN", "", "TOTAL 9.00", "two lines"}
	if !slices.Equal(got, want) {
		t.Errorf("read back %q, want %q", got, want)
	}
	if err := WriteGolden(path, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadGolden(path); err != nil || len(got) != 0 {
		t.Errorf("empty golden read back as %q, %v", got, err)
	}
	if _, err := ReadGolden(filepath.Join(t.TempDir(), "none.txt")); err == nil || !strings.Contains(err.Error(), "make golden") {
		t.Errorf("missing golden: error %v, want one naming make golden", err)
	}
}

func TestImages(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"img/b.jpg", "img/a.png", "img/.hidden", "box/a.txt"} {
		writeFile(t, filepath.Join(dir, f), "x")
	}
	got, err := Images(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Image{{"a", filepath.Join(dir, "img", "a.png")}, {"b", filepath.Join(dir, "img", "b.jpg")}}
	if !slices.Equal(got, want) {
		t.Errorf("Images = %v, want %v", got, want)
	}
	if _, err := Images(t.TempDir()); err == nil {
		t.Error("no error for a dataset without img/")
	}
}

// TestScore writes predictions for a two-receipt dataset and has the real scorer (the embedded
// ocr_score.py) read them: one receipt read perfectly, one with a wrong word and a missed line.
func TestScore(t *testing.T) {
	testenv.Command(t, "python3", "`make python` installs it")
	dataset, pred := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dataset, "img", "r1.jpg"), "not read")
	writeFile(t, filepath.Join(dataset, "img", "r2.jpg"), "not read")
	writeFile(t, filepath.Join(dataset, "box", "r1.txt"), "10,10,110,10,110,30,10,30,TOTAL 9.00\n")
	writeFile(t, filepath.Join(dataset, "box", "r2.txt"), "10,10,110,10,110,30,10,30,CASH 10.00\n10,50,110,50,110,70,10,70,CHANGE 1.00\n")
	box := geom.Quad{{X: 10, Y: 10}, {X: 110, Y: 10}, {X: 110, Y: 30}, {X: 10, Y: 30}}
	if err := Write(pred, "r1", []Line{{Text: "TOTAL 9.00", Quad: box, Score: 0.99}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(pred, "r2", []Line{{Text: "CASH 10.0O", Quad: box}}); err != nil {
		t.Fatal(err)
	}
	s, err := Score(t.Context(), dataset, pred, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 3 GT lines, 2 predicted, 2 matched; 6 GT words, 4 predicted, 3 right.
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if s.Images != 2 || !near(s.DetPrecision, 1) || !near(s.DetRecall, 2.0/3) || !near(s.WordCIPrecision, 3.0/4) || !near(s.WordCIRecall, 3.0/6) {
		t.Errorf("summary %s (images %d)", s, s.Images)
	}
	if len(s.PerImage) != 2 || s.PerImage[0].ID != "r1" || !near(s.PerImage[0].WordCIF1, 1) {
		t.Errorf("per image %+v", s.PerImage)
	}

	// Only the images with predictions, when asked.
	if err := os.Remove(filepath.Join(pred, "r2.json")); err != nil {
		t.Fatal(err)
	}
	s, err = Score(t.Context(), dataset, pred, Options{OnlyPredicted: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Images != 1 || !near(s.DetHmean, 1) || !near(s.WordCIF1, 1) {
		t.Errorf("only predicted: %s (images %d)", s, s.Images)
	}

	// A scorer that fails is an error with its output.
	if _, err := Score(t.Context(), filepath.Join(dataset, "none"), pred, Options{}); err == nil {
		t.Error("no error for a dataset that does not exist")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadingOrder(t *testing.T) {
	var left, right []string
	for i := range 12 {
		left = append(left, fmt.Sprintf("l%da l%db five l%dc", i, i, i))
		right = append(right, fmt.Sprintf("r%da r%db r%dc", i, i, i))
	}
	want := strings.Join(append(slices.Clone(left), right...), "\n")
	var across []string
	for i := range left {
		across = append(across, left[i], right[i])
	}
	for _, c := range []struct {
		name   string
		got    string
		lo, hi float64
	}{
		{"in order", want, 1, 1},
		{"in order, words misread", strings.ReplaceAll(want, "five", "fivc"), 1, 1},
		{"columns read across", strings.Join(across, "\n"), 0.45, 0.62},
		{"backwards", backwards(want), 0, 0.2},
		{"nothing shared", "x y z", 1, 1},
	} {
		got := ReadingOrder(want, c.got)
		if got < c.lo || got > c.hi {
			t.Errorf("%s: %.3f, want %.2f–%.2f", c.name, got, c.lo, c.hi)
		}
	}
}

func backwards(s string) string {
	w := strings.Fields(s)
	slices.Reverse(w)
	return strings.Join(w, " ")
}
