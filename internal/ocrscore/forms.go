package ocrscore

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/ocrgate/ocrgate/service/geom"
)

// The form scorer reads FUNSD's layout (images/<id>.png, annotations/<id>.json with word-level
// truth) rather than SROIE's line-level one. It is in Go, beside ocr_score.py rather than in it,
// because ocr_score.py is a copy of the team's shared scorer and stays identical to it; its word
// F1 is counted the way ocr_score.py counts word_ci (a multiset of whitespace-split words per
// image, case folded), so the two figures mean the same thing on different truth.

// FormWord is one word of a form's truth: its text and its axis-aligned box in page pixels.
type FormWord struct {
	Text string
	Box  [4]float64 // x0, y0, x1, y1
}

// funsdFile is the part of a FUNSD annotation the scorer reads.
type funsdFile struct {
	Form []struct {
		Words []struct {
			Text string     `json:"text"`
			Box  [4]float64 `json:"box"`
		} `json:"words"`
	} `json:"form"`
}

// ReadFormTruth reads a FUNSD annotation file's words, empty ones left out (FUNSD marks some
// check boxes and strokes as words without text).
func ReadFormTruth(path string) ([]FormWord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f funsdFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("ocrscore: %s: %w", path, err)
	}
	var words []FormWord
	for _, e := range f.Form {
		for _, w := range e.Words {
			if strings.TrimSpace(w.Text) == "" {
				continue
			}
			words = append(words, FormWord{Text: w.Text, Box: w.Box})
		}
	}
	return words, nil
}

// Form is one form of a FUNSD-layout directory.
type Form struct {
	ID         string
	Image      string // DIR/images/<id>.png
	Annotation string // DIR/annotations/<id>.json
}

// Forms lists the forms of a FUNSD-layout directory (images/ and annotations/), sorted by ID;
// an image without an annotation is left out.
func Forms(dir string) ([]Form, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "images", "*.png"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var forms []Form
	for _, p := range paths {
		id := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		ann := filepath.Join(dir, "annotations", id+".json")
		if _, err := os.Stat(ann); err != nil {
			continue
		}
		forms = append(forms, Form{ID: id, Image: p, Annotation: ann})
	}
	if len(forms) == 0 {
		return nil, fmt.Errorf("ocrscore: no forms (images/<id>.png with annotations/<id>.json) in %s", dir)
	}
	return forms, nil
}

// FormCounts are one form's (or a sum of forms') word counts.
type FormCounts struct {
	TruthWords int // whitespace-split words of the truth
	PredWords  int // whitespace-split words of the prediction
	Correct    int // multiset intersection, case folded
	// Missed counts truth words that no predicted region finds: no region's box holds half of
	// the word's box, nor lies half inside it. They were never found, as against found and
	// misread. A box drawn tight on a lone digit's ink finds it inside the looser box FUNSD's
	// annotators drew around it.
	Missed int
	// Uncovered counts the words no region's box holds half of, the first rule alone: it
	// counts such a digit as missed (103 of the 407 words it counted on the training split).
	Uncovered int
	// Runs counts the same again over runs of letters and digits (see Runs): the truth's words
	// split where FUNSD's annotators split them ("9 /3 /80", "$47 .22", "Non- menthol") meet a
	// reading that writes them as a reader does ("9/3/80") there.
	Runs RunCounts
	// Boxes counts the form's check boxes (truth words ☐, ☑ or ☒) against the regions that read
	// as one (☐ or ☑).
	Boxes BoxCounts
}

// BoxCounts are check box counts: the truth's boxes, those a region reading as a box overlaps
// (intersection over union above boxIoU), and the regions reading as a box that overlap none.
// FUNSD leaves some boxes out of its truth (a blank date box beside "SEPT 21"), so Extra holds
// real boxes as well as squares taken for boxes.
type BoxCounts struct{ Truth, Found, Extra int }

// boxIoU is how much a region must overlap a truth box to have found it.
const boxIoU = 0.3

// checkBoxMarks are what a check box reads as, in FUNSD's truth and in ocrgate's regions.
const checkBoxMarks = "☐☑☒"

// RunCounts are the counts of runs of letters and digits, case folded.
type RunCounts struct{ Truth, Pred, Correct int }

// F1 is 2PR/(P+R) over the runs.
func (r RunCounts) F1() float64 {
	if r.Truth == 0 && r.Pred == 0 {
		return 1
	}
	return 2 * float64(r.Correct) / float64(r.Truth+r.Pred)
}

// Runs splits text into its runs of letters and digits, case folded: punctuation and spaces
// separate, and count for nothing.
func Runs(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Add sums counts.
func (c *FormCounts) Add(o FormCounts) {
	c.TruthWords += o.TruthWords
	c.PredWords += o.PredWords
	c.Correct += o.Correct
	c.Missed += o.Missed
	c.Uncovered += o.Uncovered
	c.Runs.Truth += o.Runs.Truth
	c.Runs.Pred += o.Runs.Pred
	c.Runs.Correct += o.Runs.Correct
	c.Boxes.Truth += o.Boxes.Truth
	c.Boxes.Found += o.Boxes.Found
	c.Boxes.Extra += o.Boxes.Extra
}

// F1 is the case-insensitive word F1: 2PR/(P+R) of Correct over PredWords and TruthWords.
func (c FormCounts) F1() float64 {
	if c.TruthWords == 0 && c.PredWords == 0 {
		return 1
	}
	return 2 * float64(c.Correct) / float64(c.TruthWords+c.PredWords)
}

// MissedShare is the share of truth words missed entirely.
func (c FormCounts) MissedShare() float64 {
	if c.TruthWords == 0 {
		return 0
	}
	return float64(c.Missed) / float64(c.TruthWords)
}

// ScoreForm counts one form's words: truth against the predicted lines.
func ScoreForm(truth []FormWord, pred []Line) FormCounts {
	var c FormCounts
	var want, got, wantRuns, gotRuns []string
	for _, w := range truth {
		toks := strings.Fields(strings.ToLower(w.Text))
		want = append(want, toks...)
		wantRuns = append(wantRuns, Runs(w.Text)...)
		if cover, inside := found(w.Box, pred); !cover {
			c.Uncovered += len(toks)
			if !inside {
				c.Missed += len(toks)
			}
		}
	}
	for _, l := range pred {
		got = append(got, strings.Fields(strings.ToLower(l.Text))...)
		gotRuns = append(gotRuns, Runs(l.Text)...)
	}
	c.TruthWords, c.PredWords = len(want), len(got)
	c.Correct = SharedWords(want, got)
	c.Runs = RunCounts{Truth: len(wantRuns), Pred: len(gotRuns), Correct: SharedWords(wantRuns, gotRuns)}
	c.Boxes = scoreBoxes(truth, pred)
	return c
}

// scoreBoxes counts a form's check boxes (see BoxCounts).
func scoreBoxes(truth []FormWord, pred []Line) BoxCounts {
	var want, got [][4]float64
	for _, w := range truth {
		if strings.ContainsAny(w.Text, checkBoxMarks) {
			want = append(want, w.Box)
		}
	}
	for _, l := range pred {
		if t := strings.TrimSpace(l.Text); t != "" && strings.Trim(t, checkBoxMarks) == "" {
			got = append(got, bounds(l.Quad))
		}
	}
	c := BoxCounts{Truth: len(want)}
	for _, b := range want {
		if slices.ContainsFunc(got, func(r [4]float64) bool { return iou(b, r) > boxIoU }) {
			c.Found++
		}
	}
	for _, r := range got {
		if !slices.ContainsFunc(want, func(b [4]float64) bool { return iou(b, r) > boxIoU }) {
			c.Extra++
		}
	}
	return c
}

// iou is the intersection over union of two boxes.
func iou(a, b [4]float64) float64 {
	w := math.Min(a[2], b[2]) - math.Max(a[0], b[0])
	h := math.Min(a[3], b[3]) - math.Max(a[1], b[1])
	if w <= 0 || h <= 0 {
		return 0
	}
	i := w * h
	return i / ((a[2]-a[0])*(a[3]-a[1]) + (b[2]-b[0])*(b[3]-b[1]) - i)
}

// found reports whether some predicted region's bounding box holds at least half of box
// (cover), and whether some other lies at least half inside box (inside): a box tight on the
// ink of a word that the truth boxes loosely.
func found(box [4]float64, pred []Line) (cover, inside bool) {
	area := (box[2] - box[0]) * (box[3] - box[1])
	if area <= 0 {
		return false, false
	}
	for _, l := range pred {
		if strings.TrimSpace(l.Text) == "" {
			continue
		}
		r := bounds(l.Quad)
		w := math.Min(box[2], r[2]) - math.Max(box[0], r[0])
		h := math.Min(box[3], r[3]) - math.Max(box[1], r[1])
		if w <= 0 || h <= 0 {
			continue
		}
		if w*h >= area/2 {
			return true, true
		}
		if w*h >= (r[2]-r[0])*(r[3]-r[1])/2 {
			inside = true
		}
	}
	return false, inside
}

// bounds is a quad's axis-aligned bounding box.
func bounds(q geom.Quad) [4]float64 {
	r := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range q {
		r[0], r[1] = math.Min(r[0], p.X), math.Min(r[1], p.Y)
		r[2], r[3] = math.Max(r[2], p.X), math.Max(r[3], p.Y)
	}
	return r
}
