//go:build integration

package ocr_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderedLine is one line of the rendered-line set: a PNG and the text drawn in it.
type renderedLine struct {
	file, text string
}

// renderedLines reads testdata/lines/lines.tsv (written with the PNGs by scripts/render_lines.sh).
func renderedLines(t *testing.T) []renderedLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lines", "lines.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []renderedLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		file, text, ok := strings.Cut(sc.Text(), "\t")
		if !ok || file == "file" {
			continue
		}
		out = append(out, renderedLine{file: file, text: text})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRenderedLines reads every line of the rendered-line set through the real models: receipt
// words, amounts, card numbers and IDs with runs of repeated digits, letters and asterisks, in
// eight fonts of Debian's and several sizes, 150 to 1 200 px wide, plus the 1 017 × 50 px line
// that lost its middle in detection and the card-number line the direction classifier turned
// upside down. Nothing may be lost: every line reads with at least minLineChars of its
// characters (spaces count), and at least minExactLines of the lines read exactly (runs of
// spaces compared as one).
//
// The issue asks for 90 % and 95 %; the floors are above them. What is left below exact is a
// dropped word space in small print, where neither the model nor the pixels say enough
// ("INVOICENO:", "NO:0000118833"), one asterisk of twelve, and "3 X 4.50" for "3 x 4.50".
func TestRenderedLines(t *testing.T) {
	p := pipeline(t)
	lines := renderedLines(t)
	if len(lines) < 100 {
		t.Fatalf("%d rendered lines, want the whole set", len(lines))
	}
	exact := 0
	for _, l := range lines {
		data, err := os.ReadFile(filepath.Join("testdata", "lines", l.file))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background(), data)
		if err != nil {
			t.Fatalf("%s: %v", l.file, err)
		}
		got := strings.Join(strings.Fields(res.Text), " ")
		want := strings.Join(strings.Fields(l.text), " ")
		if got == want {
			exact++
			continue
		}
		acc := charAccuracy(want, got)
		t.Logf("%s: read %q, want %q (characters %.2f)", l.file, got, want, acc)
		if acc < minLineChars {
			t.Errorf("%s: read %q, want %q: %.0f %% of the characters, want at least %.0f %%", l.file, got, want, 100*acc, 100*minLineChars)
		}
	}
	share := float64(exact) / float64(len(lines))
	t.Logf("%d of %d lines read exactly (%.1f %%)", exact, len(lines), 100*share)
	if share < minExactLines {
		t.Errorf("%d of %d lines read exactly (%.1f %%), want at least %.0f %%", exact, len(lines), 100*share, 100*minExactLines)
	}
}

// The floors of TestRenderedLines: what the pipeline reads today, above the targets
// (95 % exact, 90 % of every line's characters): 148 of the 152 lines exactly (97.4 %), none under
// 11 of 12 characters, so that a change that loses a line or characters fails.
const (
	minLineChars  = 0.91
	minExactLines = 0.97
)

// charAccuracy is 1 − (edit distance between want and got) / (characters in want), at least 0.
func charAccuracy(want, got string) float64 {
	a, b := []rune(want), []rune(got)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return max(0, 1-float64(prev[len(b)])/float64(len(a)))
}
