//go:build integration

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestBenchPrintsEachImage runs the benchmark command on two real receipts with the real models
// and checks the summary and the per-image table of -images: a row per image, a value per
// stage, and no image whose model time exceeds its wall time.
func TestBenchPrintsEachImage(t *testing.T) {
	ids := []string{"photo", "thermal"}
	dir := receipts(t, ids...)
	var out, errOut bytes.Buffer
	if code := Main([]string{"-dataset", dir, "-scorer", "none", "-warmup", "0", "-images"}, os.Getenv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"2 images", "images/s", "overhead ratio", "peak RSS"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	header, ok := rows["image"]
	if !ok || len(header) != 4+len(ocr.Stages()) {
		t.Fatalf("no per-image header with %d columns:\n%s", 4+len(ocr.Stages()), text)
	}
	for _, id := range ids {
		row, ok := rows[id]
		if !ok || len(row) != len(header) {
			t.Errorf("image %s: row %q, want %d columns", id, row, len(header))
			continue
		}
		ratio, err := strconv.ParseFloat(row[3], 64)
		if err != nil || ratio < 1 {
			t.Errorf("image %s: ratio %q, want a number of at least 1 (wall includes the model time)", id, row[3])
		}
		for i, v := range row[1:] {
			if i == 2 {
				continue // the ratio
			}
			if !strings.HasSuffix(v, "ms") {
				t.Errorf("image %s: column %s is %q, want milliseconds", id, header[i+1], v)
			}
		}
	}
}

// TestBenchConcurrency runs one round of -c 2 and checks that it reports both measurements and
// their ratios.
func TestBenchConcurrency(t *testing.T) {
	dir := receipts(t, "photo", "dense", "thermal")
	var out, errOut bytes.Buffer
	if code := Main([]string{"-dataset", dir, "-c", "2", "-rounds", "1"}, os.Getenv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"round 1: 1 client", "| 2 clients", "throughput ×", "p50 ×", "median: throughput ratio", "peak RSS"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestBenchScoresReadingOrder: an image with an order/<id>.txt is scored against it. The photo
// against its own segments top to bottom (its truth's order) scores high; against the same
// segments bottom to top, low.
func TestBenchScoresReadingOrder(t *testing.T) {
	dir := receipts(t, "photo", "thermal")
	data, err := os.ReadFile(filepath.Join(testenv.Receipts(t), "box", "photo.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n") {
		if f := strings.SplitN(l, ",", 9); len(f) == 9 {
			lines = append(lines, f[8])
		}
	}
	score := func() (float64, string) {
		var out, errOut bytes.Buffer
		if code := Main([]string{"-dataset", dir, "-scorer", "none", "-warmup", "0"}, os.Getenv, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, "reading order"); ok {
				f := strings.Fields(rest)
				// Only the photo has a transcript: "photo S | mean S over 1 images ...".
				if len(f) < 7 || f[0] != "photo" || f[2] != "|" || f[6] != "1" {
					t.Fatalf("reading order line %q", line)
				}
				v, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				return v, line
			}
		}
		t.Fatalf("no reading order in:\n%s", out.String())
		return 0, ""
	}
	if err := os.Mkdir(filepath.Join(dir, "order"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(lines []string) {
		if err := os.WriteFile(filepath.Join(dir, "order", "photo.txt"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(lines)
	down, line := score()
	t.Log(line)
	slices.Reverse(lines)
	write(lines)
	up, line := score()
	t.Log(line)
	if down < 0.9 || up > 0.5 {
		t.Errorf("reading order %.3f top to bottom (want 0.9 or more), %.3f bottom to top (want 0.5 or less)", down, up)
	}
}

// receipts makes a dataset directory of the images ids of testdata/receipts.
func receipts(t *testing.T, ids ...string) string {
	testenv.Models(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		data := testenv.Receipt(t, id)
		if err := os.WriteFile(filepath.Join(dir, "img", id+".jpg"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
