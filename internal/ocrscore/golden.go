package ocrscore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Golden text: each receipt's recognized lines, one region per line in reading order, stored in
// testdata so that a change in what the pipeline reads names the receipt and the line. ONNX Runtime
// picks kernels by instruction set, so another CPU may flip a character here and there; the
// comparison therefore aligns the lines, measures each changed line's edit distance and allows a
// small budget of edits per receipt, while still reporting every line that differs.

// ReadGolden reads a golden file: one line of text per region. A missing file is an error that
// says how to create it.
func ReadGolden(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (create the golden files with `make golden`)", err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// WriteGolden writes lines as a golden file, creating its directory. Line breaks inside a line
// (never produced by the recognizer) are written as spaces so that one region stays one line.
func WriteGolden(path string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.ReplaceAll(l, "\n", " "))
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// LineDiff is one difference between golden and recognized lines.
type LineDiff struct {
	WantLine, GotLine int    // 1-based line numbers; 0 where the line is missing on that side
	Want, Got         string // the lines' text
	Edits             int    // characters inserted, deleted or replaced to turn Want into Got
}

func (d LineDiff) String() string {
	switch {
	case d.GotLine == 0:
		return fmt.Sprintf("line %d %q: missing (%d edits)", d.WantLine, d.Want, d.Edits)
	case d.WantLine == 0:
		return fmt.Sprintf("new line %d %q (%d edits)", d.GotLine, d.Got, d.Edits)
	}
	return fmt.Sprintf("line %d %q → %q (%d edits)", d.WantLine, d.Want, d.Got, d.Edits)
}

// CompareLines aligns got with want (the golden lines) at the least total number of character
// edits and returns every line that differs with the total. A missing or extra line costs its
// length plus one, so one dropped region costs more than a flipped character.
func CompareLines(want, got []string) (diffs []LineDiff, edits int) {
	n, m := len(want), len(got)
	gap := func(s string) int { return utf8.RuneCountInString(s) + 1 }
	// cost[i][j]: fewest edits turning want[i:] into got[j:].
	cost := make([][]int, n+1)
	for i := range cost {
		cost[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		cost[i][m] = cost[i+1][m] + gap(want[i])
	}
	for j := m - 1; j >= 0; j-- {
		cost[n][j] = cost[n][j+1] + gap(got[j])
	}
	sub := make([][]int, n)
	for i := n - 1; i >= 0; i-- {
		sub[i] = make([]int, m)
		for j := m - 1; j >= 0; j-- {
			sub[i][j] = editDistance(want[i], got[j])
			cost[i][j] = min(cost[i+1][j+1]+sub[i][j], cost[i+1][j]+gap(want[i]), cost[i][j+1]+gap(got[j]))
		}
	}
	for i, j := 0, 0; i < n || j < m; {
		switch {
		case i < n && j < m && cost[i][j] == cost[i+1][j+1]+sub[i][j]:
			if sub[i][j] > 0 {
				diffs = append(diffs, LineDiff{WantLine: i + 1, GotLine: j + 1, Want: want[i], Got: got[j], Edits: sub[i][j]})
			}
			i, j = i+1, j+1
		case i < n && (j == m || cost[i][j] == cost[i+1][j]+gap(want[i])):
			diffs = append(diffs, LineDiff{WantLine: i + 1, Want: want[i], Edits: gap(want[i])})
			i++
		default:
			diffs = append(diffs, LineDiff{GotLine: j + 1, Got: got[j], Edits: gap(got[j])})
			j++
		}
	}
	return diffs, cost[0][0]
}

// editDistance is the Levenshtein distance between a and b, in characters (runes).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j-1]+c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
