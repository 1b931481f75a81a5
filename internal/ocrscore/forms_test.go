package ocrscore

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ocrgate/ocrgate/service/geom"
)

func rect(x0, y0, x1, y1 float64) geom.Quad {
	return geom.Quad{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

func TestScoreBoxes(t *testing.T) {
	truth := []FormWord{
		{Text: "☐", Box: [4]float64{10, 10, 20, 20}},
		{Text: "☑", Box: [4]float64{10, 30, 20, 40}},
		{Text: "Yes", Box: [4]float64{25, 10, 45, 20}},
	}
	for _, tt := range []struct {
		name string
		pred []Line
		want BoxCounts
	}{
		{"both found", []Line{{Text: "☐", Quad: rect(10, 10, 20, 20)}, {Text: "☑", Quad: rect(11, 31, 20, 40)}}, BoxCounts{2, 2, 0}},
		// Marked or not, a box found is found: the scorer counts where boxes are.
		{"read empty where marked", []Line{{Text: "☐", Quad: rect(10, 30, 20, 40)}}, BoxCounts{2, 1, 0}},
		{"a box the truth has not", []Line{{Text: "☐", Quad: rect(60, 10, 70, 20)}}, BoxCounts{2, 0, 1}},
		// A line that holds a box and its label is no box.
		{"glued to its label", []Line{{Text: "☐ Yes", Quad: rect(10, 10, 45, 20)}}, BoxCounts{2, 0, 0}},
		// Overlapping a little is not finding.
		{"beside it", []Line{{Text: "☐", Quad: rect(18, 10, 28, 20)}}, BoxCounts{2, 0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ScoreForm(truth, tt.pred).Boxes; got != tt.want {
				t.Errorf("boxes %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestScoreForm(t *testing.T) {
	truth := []FormWord{
		{Text: "DATE:", Box: [4]float64{10, 10, 50, 20}},
		{Text: "7/ 24/ 90", Box: [4]float64{60, 10, 120, 20}}, // FUNSD splits some words at spaces
		{Text: "Signature", Box: [4]float64{10, 40, 80, 50}},
		{Text: "Fine", Box: [4]float64{10, 80, 40, 90}},
	}
	for _, tt := range []struct {
		name                               string
		pred                               []Line
		truthN, predN, right, missN, uncov int
		runsPred, runsRight                int // of the truth's 6 runs of letters and digits
	}{
		{"every word, case aside", []Line{
			{Text: "date: 7/ 24/ 90", Quad: rect(8, 8, 125, 22)},
			{Text: "SIGNATURE", Quad: rect(8, 38, 82, 52)},
			{Text: "Fine", Quad: rect(8, 78, 42, 92)},
		}, 6, 6, 6, 0, 0, 6, 6},
		{"a line never found", []Line{
			{Text: "DATE: 7/24/90", Quad: rect(8, 8, 125, 22)},
			{Text: "Signature", Quad: rect(8, 38, 82, 52)},
		}, 6, 3, 2, 1, 1, 5, 5}, // the date written whole still reads as its runs
		{"found but misread is not missed", []Line{
			{Text: "DATE: 7/ 24/ 90", Quad: rect(8, 8, 125, 22)},
			{Text: "Slgnature", Quad: rect(8, 38, 82, 52)},
			{Text: "Flne", Quad: rect(8, 78, 42, 92)},
		}, 6, 6, 4, 0, 0, 6, 4},
		{"a word beside the boxes, and one a third covered, are missed", []Line{
			{Text: "DATE: 7/ 24/ 90 Signature", Quad: rect(8, 8, 125, 22)},
			{Text: "ne", Quad: rect(30, 78, 60, 92)}, // a third of it inside the word's box
		}, 6, 6, 5, 2, 2, 6, 5},
		{"a box tight on the ink, inside the truth's looser box, finds the word", []Line{
			{Text: "DATE: 7/ 24/ 90", Quad: rect(8, 8, 125, 22)},
			{Text: "Signature", Quad: rect(8, 38, 82, 52)},
			{Text: "Fine", Quad: rect(14, 82, 30, 88)},
		}, 6, 6, 6, 0, 1, 6, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ScoreForm(truth, tt.pred)
			if c.TruthWords != tt.truthN || c.PredWords != tt.predN || c.Correct != tt.right || c.Missed != tt.missN || c.Uncovered != tt.uncov {
				t.Fatalf("counts %+v, want truth %d pred %d right %d missed %d uncovered %d", c, tt.truthN, tt.predN, tt.right, tt.missN, tt.uncov)
			}
			if r := c.Runs; r.Truth != 6 || r.Pred != tt.runsPred || r.Correct != tt.runsRight {
				t.Fatalf("runs %+v, want truth 6 pred %d right %d", r, tt.runsPred, tt.runsRight)
			}
			if want := 2 * float64(tt.right) / float64(tt.truthN+tt.predN); math.Abs(c.F1()-want) > 1e-12 {
				t.Fatalf("F1 %v, want %v", c.F1(), want)
			}
		})
	}
}

func TestReadFormTruth(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"images", "annotations"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ann := `{"form":[{"text":"NO. 5","words":[{"text":"NO.","box":[1,2,3,4]},{"text":"5","box":[5,2,7,4]}]},` +
		`{"text":"","words":[{"text":"","box":[9,9,12,12]}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "annotations", "a.json"), []byte(ann), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.png", "b.png"} { // b has no annotation: left out
		if err := os.WriteFile(filepath.Join(dir, "images", name), []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	forms, err := Forms(dir)
	if err != nil || len(forms) != 1 || forms[0].ID != "a" {
		t.Fatalf("forms %+v, %v", forms, err)
	}
	words, err := ReadFormTruth(forms[0].Annotation)
	if err != nil {
		t.Fatal(err)
	}
	if len(words) != 2 || words[0].Text != "NO." || words[1].Box != [4]float64{5, 2, 7, 4} {
		t.Fatalf("words %+v", words)
	}
	if _, err := Forms(t.TempDir()); err == nil {
		t.Fatal("an empty directory gave forms")
	}
}
