// Package scoring scores OCR output against SROIE-layout ground truth exactly as the shared Python
// scorer, shared/tools/ocr_score.py, does in its "ocr" and "keys" modes: line detection by greedy
// one-to-one IoU matching, SROIE task-2 word P/R/F1 (case-sensitive and case-folded), character
// accuracy over matched lines, and task-3 key-field accuracy and F1.
//
// It exists so that Go tests (the project's accuracy floor) and the benchmark command produce the
// same numbers as the Python scorer without shelling out to it; the package's tests cross-check
// every summary number against python3 running ocr_score.py on the sroie-dev data.
//
// Every rule of the Python scorer is reproduced, including its Python string semantics: tokens are
// split on Python whitespace (unicode.IsSpace plus U+001C..U+001F), lengths and edit distances
// count code points, and case folding is Python's full str.casefold (so "ß" folds to "ss", "ς" to
// "σ" and "ﬁ" to "fi", which strings.ToLower does not do).
//
// Differences from the Python scorer: the --nfkc option is not ported (it needs Unicode
// normalisation tables outside the standard library); prediction files are not parsed (callers
// pass predicted regions as []Line and key predictions as a map); LoadDataset rejects, where the
// Python scorer would go on, a dataset whose box/ and key/ ids differ and key files with arrays,
// objects or NaN/Infinity literals as values.
//
// Usage, per image: c.Add(ScoreImage(sample.Lines, predicted, DefaultIoU)); then c.Summary().
// Key fields: k.Add(ScoreKeys(sample.Keys, predictedKeys)); then k.Summary().
package scoring

import (
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/ocrgate/ocrgate/service/geom"
)

// DefaultIoU is the scorer's default IoU threshold (--iou 0.5) for a detection match.
const DefaultIoU = 0.5

// Line is one ground-truth line or one predicted region: its text and its corners. Only the
// axis-aligned bounding rectangle of the corners is used. A region whose corners enclose no area
// (the zero Quad, for one) never matches anything, like a region without geometry in Python, but
// still counts as a predicted line and its words still count.
type Line struct {
	Text string
	Quad geom.Quad
}

// Counts are the raw counts of one image, or the sums over many (see Add); the summary metrics
// are computed from them, so summing first and dividing afterwards gives micro-averages. The JSON
// names are those of the Python scorer's "counts" object.
type Counts struct {
	Images        int `json:"images"`          // images scored
	GTLines       int `json:"gt_lines"`        // ground-truth lines
	PredLines     int `json:"pred_lines"`      // predicted regions
	DetMatch      int `json:"det_match"`       // one-to-one IoU matches
	GTWords       int `json:"gt_words"`        // whitespace tokens in the ground truth
	PredWords     int `json:"pred_words"`      // whitespace tokens in the predictions
	WordCorrect   int `json:"word_correct"`    // size of the multiset intersection of the tokens
	WordCorrectCI int `json:"word_correct_ci"` // the same on case-folded tokens
	CharED        int `json:"char_ed"`         // summed edit distance over matched line pairs
	CharEDCI      int `json:"char_ed_ci"`      // the same on case-folded texts
	CharGT        int `json:"char_gt"`         // code points of the matched ground-truth lines
	CharGTAll     int `json:"char_gt_all"`     // code points of all ground-truth lines
	CharEDAll     int `json:"char_ed_all"`     // CharED plus the length of every unmatched GT line
	LineExact     int `json:"line_exact"`      // matched pairs whose texts are identical
}

// Add adds o to c field by field.
func (c *Counts) Add(o Counts) {
	c.Images += o.Images
	c.GTLines += o.GTLines
	c.PredLines += o.PredLines
	c.DetMatch += o.DetMatch
	c.GTWords += o.GTWords
	c.PredWords += o.PredWords
	c.WordCorrect += o.WordCorrect
	c.WordCorrectCI += o.WordCorrectCI
	c.CharED += o.CharED
	c.CharEDCI += o.CharEDCI
	c.CharGT += o.CharGT
	c.CharGTAll += o.CharGTAll
	c.CharEDAll += o.CharEDAll
	c.LineExact += o.LineExact
}

// Summary holds the metrics of the Python scorer's ocr summary, under the same JSON names.
type Summary struct {
	DetPrecision    float64 `json:"det_precision"`
	DetRecall       float64 `json:"det_recall"`
	DetHmean        float64 `json:"det_hmean"`
	WordPrecision   float64 `json:"word_precision"`
	WordRecall      float64 `json:"word_recall"`
	WordF1          float64 `json:"word_f1"`
	WordCIPrecision float64 `json:"word_ci_precision"`
	WordCIRecall    float64 `json:"word_ci_recall"`
	WordCIF1        float64 `json:"word_ci_f1"`
	CharAcc         float64 `json:"char_acc"`     // 1 - CharED/CharGT; 1 with no matches; may be < 0
	CharAccCI       float64 `json:"char_acc_ci"`  // 1 - CharEDCI/CharGT
	CharAccAll      float64 `json:"char_acc_all"` // 1 - CharEDAll/CharGTAll
	LineExact       float64 `json:"line_exact"`   // LineExact/DetMatch; 0 with no matches
}

// Summary computes the metrics from c (summarize in Python).
func (c Counts) Summary() Summary {
	dp, dr, dh := prf(c.DetMatch, c.PredLines, c.GTLines)
	wp, wr, wf := prf(c.WordCorrect, c.PredWords, c.GTWords)
	cp, cr, cf := prf(c.WordCorrectCI, c.PredWords, c.GTWords)
	return Summary{
		DetPrecision: dp, DetRecall: dr, DetHmean: dh,
		WordPrecision: wp, WordRecall: wr, WordF1: wf,
		WordCIPrecision: cp, WordCIRecall: cr, WordCIF1: cf,
		CharAcc:    1.0 - ratio(c.CharED, c.CharGT, 0.0),
		CharAccCI:  1.0 - ratio(c.CharEDCI, c.CharGT, 0.0),
		CharAccAll: 1.0 - ratio(c.CharEDAll, c.CharGTAll, 0.0),
		LineExact:  ratio(c.LineExact, c.DetMatch, 0.0),
	}
}

// ScoreImage returns the counts of one image (score_image in Python): gt are the ground-truth
// lines, pred the predicted regions, iouThreshold the minimum IoU of a match (DefaultIoU).
func ScoreImage(gt, pred []Line, iouThreshold float64) Counts {
	gtTexts := make([]string, len(gt))
	gtRects := make([]rect, len(gt))
	for i, l := range gt {
		gtTexts[i], gtRects[i] = validText(l.Text), quadRect(l.Quad)
	}
	prTexts := make([]string, len(pred))
	prRects := make([]rect, len(pred))
	for i, l := range pred {
		prTexts[i], prRects[i] = validText(l.Text), quadRect(l.Quad)
	}
	m := greedyMatch(gtRects, prRects, iouThreshold)
	c := Counts{Images: 1, GTLines: len(gt), PredLines: len(pred), DetMatch: len(m)}

	var gtTok, prTok []string
	for _, s := range gtTexts {
		gtTok = append(gtTok, pyFields(s)...)
	}
	for _, s := range prTexts {
		prTok = append(prTok, pyFields(s)...)
	}
	c.GTWords, c.PredWords = len(gtTok), len(prTok)
	c.WordCorrect = multisetIntersection(gtTok, prTok, false)
	c.WordCorrectCI = multisetIntersection(gtTok, prTok, true)

	matched := make([]bool, len(gt))
	for _, p := range m {
		gs, ps := squash(gtTexts[p.gi]), squash(prTexts[p.pi])
		c.CharED += levenshtein(gs, ps)
		c.CharEDCI += levenshtein(casefold(gs), casefold(ps))
		c.CharGT += utf8.RuneCountInString(gs)
		if gs == ps {
			c.LineExact++
		}
		matched[p.gi] = true
	}
	c.CharEDAll = c.CharED
	for i, t := range gtTexts {
		n := utf8.RuneCountInString(squash(t))
		c.CharGTAll += n
		if !matched[i] {
			c.CharEDAll += n
		}
	}
	return c
}

// multisetIntersection is the size of Counter(a) & Counter(b), optionally on case-folded tokens.
func multisetIntersection(a, b []string, fold bool) int {
	count := make(map[string]int, len(a))
	for _, t := range a {
		if fold {
			t = casefold(t)
		}
		count[t]++
	}
	n := 0
	for _, t := range b {
		if fold {
			t = casefold(t)
		}
		if count[t] > 0 {
			count[t]--
			n++
		}
	}
	return n
}

// rect is an axis-aligned rectangle (x0, y0, x1, y1).
type rect [4]float64

// quadRect is points_to_rect: the bounding rectangle of the corners, with Python's min/max (the
// first value is kept unless a later one compares smaller/larger, which matters only for NaN).
func quadRect(q geom.Quad) rect {
	r := rect{q[0].X, q[0].Y, q[0].X, q[0].Y}
	for _, p := range q[1:] {
		r = rect{pyMin(r[0], p.X), pyMin(r[1], p.Y), pyMax(r[2], p.X), pyMax(r[3], p.Y)}
	}
	return r
}

// iou is the intersection over union of two rectangles; 0 when they do not overlap or the union
// is not positive. The explicit float64 conversions keep the compiler from fusing multiply-adds,
// so the result is bit-identical to Python's on every architecture.
func iou(a, b rect) float64 {
	iw := pyMin(a[2], b[2]) - pyMax(a[0], b[0])
	ih := pyMin(a[3], b[3]) - pyMax(a[1], b[1])
	if iw <= 0 || ih <= 0 {
		return 0.0
	}
	inter := float64(iw * ih)
	areaA := float64((a[2] - a[0]) * (a[3] - a[1]))
	areaB := float64((b[2] - b[0]) * (b[3] - b[1]))
	union := float64(areaA+areaB) - inter
	if union > 0 {
		return inter / union
	}
	return 0.0
}

// pyMin is Python's min(a, b): b only if b < a (Go's min returns NaN if either is NaN).
func pyMin(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

// pyMax is Python's max(a, b): b only if b > a.
func pyMax(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

// pair is one detection match: ground-truth index, prediction index and their IoU.
type pair struct {
	gi, pi int
	iou    float64
}

// greedyMatch is greedy_match: every pair with IoU >= thr (and > 0), sorted as Python sorts the
// tuples (-iou, gi, pi), taken in order when neither side is used yet.
func greedyMatch(gt, pred []rect, thr float64) []pair {
	var pairs []pair
	for gi, g := range gt {
		for pi, p := range pred {
			if v := iou(g, p); v >= thr && v > 0 {
				pairs = append(pairs, pair{gi, pi, v})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := cmp.Compare(b.iou, a.iou); c != 0 {
			return c
		}
		if c := cmp.Compare(a.gi, b.gi); c != 0 {
			return c
		}
		return cmp.Compare(a.pi, b.pi)
	})
	usedG := make([]bool, len(gt))
	usedP := make([]bool, len(pred))
	var out []pair
	for _, p := range pairs {
		if usedG[p.gi] || usedP[p.pi] {
			continue
		}
		usedG[p.gi], usedP[p.pi] = true, true
		out = append(out, p)
	}
	return out
}

// levenshtein is the edit distance (insert, delete, substitute; unit costs) over code points.
func levenshtein(a, b string) int {
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i, ca := range ra {
		cur[0] = i + 1
		for j, cb := range rb {
			sub := prev[j]
			if ca != cb {
				sub++
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// prf is precision, recall and their harmonic mean with the scorer's empty-case conventions:
// nothing expected and nothing predicted scores 1; no predictions give P = R = 0; predictions
// without any ground truth give precision 0 and recall 1.
func prf(correct, nPred, nGT int) (p, r, f float64) {
	if nPred == 0 && nGT == 0 {
		return 1.0, 1.0, 1.0
	}
	if nPred != 0 {
		p = float64(correct) / float64(nPred)
	}
	r = 1.0
	if nGT != 0 {
		r = float64(correct) / float64(nGT)
	}
	if p+r > 0 {
		f = float64(2*p*r) / float64(p+r)
	}
	return p, r, f
}

// ratio is num/den, or empty when den is 0.
func ratio(num, den int, empty float64) float64 {
	if den == 0 {
		return empty
	}
	return float64(num) / float64(den)
}
