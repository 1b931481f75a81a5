//go:build integration

package ocr_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestVerticalText reads the vertical-text set (testdata/vertical, written by
// scripts/render_vertical.sh) through the real models: a page of Chinese columns in two faces
// reads right to left, column by column, each top to bottom, and answers rotation 0 (it stands
// upright, though its boxes have the shape of a page on its side); the same lines set across and
// turned on their side still answer the turn and read as lines; a vertical label, its
// characters boxed one by one or as one column, reads top to bottom as one line.
func TestVerticalText(t *testing.T) {
	p := pipeline(t)
	data, err := os.ReadFile(filepath.Join("testdata", "vertical", "truth.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("truth.tsv: %q", line)
		}
		name, want := f[0], strings.Split(f[1], "|")
		rotation, _ := strconv.Atoi(f[2])
		t.Run(name, func(t *testing.T) {
			img, err := os.ReadFile(filepath.Join("testdata", "vertical", name))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(context.Background(), img)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rotation != rotation {
				t.Errorf("rotation %d, want %d", res.Rotation, rotation)
			}
			var got []string
			for _, l := range strings.Split(res.Text, "\n") {
				if l = strings.Join(strings.Fields(l), ""); l != "" {
					got = append(got, l)
				}
			}
			t.Logf("rotation %d, read %q", res.Rotation, got)
			// Every line in order, each read with at least 85 % of its characters (the
			// recognizer misreads a character here and there: 着 as 看).
			if len(got) != len(want) {
				t.Fatalf("read %d lines %q, want %d %q", len(got), got, len(want), want)
			}
			for i := range want {
				if acc := charAccuracy(want[i], got[i]); acc < 0.85 {
					t.Errorf("line %d: read %q, want %q (characters %.2f)", i, got[i], want[i], acc)
				}
			}
			topDown := 0
			for _, r := range res.Regions {
				if r.TopDown {
					topDown++
				}
			}
			if columns := rotation == 0; columns != (topDown == len(want)) || (!columns && topDown > 0) {
				t.Errorf("%d regions of %d read top to bottom, want %d: %+v", topDown, len(res.Regions), map[bool]int{true: len(want)}[columns], res.Regions)
			}
		})
	}
}
