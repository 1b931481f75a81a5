// Package ocrscore connects ocrgate to the project's one accuracy scorer, ocr_score.py: it writes
// OCR results as the scorer's prediction files, runs the scorer on them and reads its JSON summary
// back. There is deliberately no Go scorer of SROIE's lines beside it: two scorers drift apart,
// and the Python one is what every receipt figure in the docs is measured with. Forms with
// word-level truth (FUNSD's layout) are scored in Go (forms.go), counted the way ocr_score.py
// counts words.
//
// The scorer travels with the repository (ocr_score.py in this directory, embedded in the
// binaries that use this package, run with python3 on the PATH), so the accuracy tests run on a
// lone clone; it is a copy of the team's shared/tools/ocr_score.py, and `make bench-accuracy`
// says when the two differ. The accuracy tests (build tag integration) and the benchmark command
// use it; the service does not.
package ocrscore

import (
	"bytes"
	"context"
	_ "embed" // the scorer
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Line is one recognized region as the scorer reads it.
type Line struct {
	Text  string
	Quad  geom.Quad
	Score float32 // recognition confidence; informative, the scorer ignores it
}

// prediction is one region in the scorer's plain-list format ([{"text", "points"}]).
type prediction struct {
	Text   string       `json:"text"`
	Points [][2]float64 `json:"points"`
	Score  float32      `json:"score"`
}

// Write stores lines as dir/<id>.json in the scorer's plain-list format, coordinates rounded to a
// tenth of a pixel (finer digits only make the files differ between runs, not the scores).
func Write(dir, id string, lines []Line) error {
	preds := make([]prediction, len(lines))
	for i, l := range lines {
		preds[i] = prediction{Text: l.Text, Score: l.Score, Points: make([][2]float64, 0, len(l.Quad))}
		for _, p := range l.Quad {
			preds[i].Points = append(preds[i].Points, [2]float64{math.Round(p.X*10) / 10, math.Round(p.Y*10) / 10})
		}
	}
	data, err := json.Marshal(preds)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, id+".json"), data, 0o644)
}

// Image is one image of an SROIE-layout dataset (DATASET/img/<ID>.<ext>).
type Image struct {
	ID   string // the file stem shared by img/, box/ and key/
	Path string
}

// Images lists DATASET/img, sorted by ID.
func Images(dataset string) ([]Image, error) {
	entries, err := os.ReadDir(filepath.Join(dataset, "img"))
	if err != nil {
		return nil, err
	}
	var images []Image
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		images = append(images, Image{
			ID:   strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())),
			Path: filepath.Join(dataset, "img", e.Name()),
		})
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("ocrscore: no images in %s", filepath.Join(dataset, "img"))
	}
	slices.SortFunc(images, func(a, b Image) int { return strings.Compare(a.ID, b.ID) })
	return images, nil
}

// ErrNotFound reports that python3 is missing.
var ErrNotFound = errors.New("ocrscore: not found")

// Script is ocr_score.py, the scorer, as the repository carries it.
//
//go:embed ocr_score.py
var Script []byte

// Options adjust a scorer run.
type Options struct {
	// Script is the path of a scorer to run instead of the embedded one (Script).
	Script string
	// OnlyPredicted scores only the images that have a prediction file (--only-predicted);
	// otherwise a missing file counts as an empty prediction.
	OnlyPredicted bool
}

// Summary is the scorer's JSON summary (ocr_score.py ocr --json -v), the fields ocrgate reads.
type Summary struct {
	Images             int     `json:"images"`
	MissingPredictions int     `json:"missing_predictions"`
	MalformedGTLines   int     `json:"malformed_gt_lines"`
	DetPrecision       float64 `json:"det_precision"`
	DetRecall          float64 `json:"det_recall"`
	DetHmean           float64 `json:"det_hmean"`
	WordF1             float64 `json:"word_f1"`
	WordCIPrecision    float64 `json:"word_ci_precision"`
	WordCIRecall       float64 `json:"word_ci_recall"`
	WordCIF1           float64 `json:"word_ci_f1"`
	CharAcc            float64 `json:"char_acc"`
	CharAccCI          float64 `json:"char_acc_ci"`
	LineExact          float64 `json:"line_exact"`
	PerImage           []struct {
		ID        string  `json:"id"`
		DetHmean  float64 `json:"det_hmean"`
		WordCIF1  float64 `json:"word_ci_f1"`
		CharAccCI float64 `json:"char_acc_ci"`
	} `json:"per_image"`
}

// String is the one-line form the tests log and the benchmark prints.
func (s *Summary) String() string {
	return fmt.Sprintf("det P %.4f R %.4f H %.4f | word_ci P %.4f R %.4f F1 %.4f | char_acc_ci %.4f | word F1 %.4f char_acc %.4f",
		s.DetPrecision, s.DetRecall, s.DetHmean, s.WordCIPrecision, s.WordCIRecall, s.WordCIF1, s.CharAccCI, s.WordF1, s.CharAcc)
}

// Score runs `python3 ocr_score.py ocr DATASET PRED_DIR --json -v` and returns its summary. It
// fails when python3 is missing, when the scorer fails, or when it read malformed ground truth
// (the numbers would then not be the ones the docs quote).
func Score(ctx context.Context, dataset, predDir string, opt Options) (*Summary, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("%w: python3 is not on PATH; the scorer needs it (`make python` installs it)", ErrNotFound)
	}
	// The embedded scorer is read from standard input ("python3 - ARGS").
	script := "-"
	if opt.Script != "" {
		script = opt.Script
	}
	args := []string{script, "ocr", dataset, predDir, "--json", "-v"}
	if opt.OnlyPredicted {
		args = append(args, "--only-predicted")
	}
	cmd := exec.CommandContext(ctx, python, args...)
	if opt.Script == "" {
		cmd.Stdin = bytes.NewReader(Script)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ocrscore: %s %s: %w\n%s", python, strings.Join(args, " "), err, stderr.Bytes())
	}
	var s Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		return nil, fmt.Errorf("ocrscore: read the scorer's JSON: %w", err)
	}
	if s.Images == 0 {
		return nil, fmt.Errorf("ocrscore: the scorer scored no image of %s", dataset)
	}
	if s.MalformedGTLines > 0 {
		return nil, fmt.Errorf("ocrscore: %d malformed ground-truth lines in %s", s.MalformedGTLines, dataset)
	}
	return &s, nil
}
