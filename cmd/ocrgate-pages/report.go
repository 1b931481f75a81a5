package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Row is one page answered in one mode, compared with its reference.
type Row struct {
	File       string
	Page       int
	Mode       string
	Status     int
	Code       string // the error's code: the request's, or the page's
	Source     string // text-layer, ocr, mixed, none
	Reason     string
	Confidence float64
	HasRef     bool
	Score      Score
	CPU, Wall  time.Duration // CPU < 0: not known
}

// The flags' thresholds.
const (
	exactF1     = 0.99 // a text-layer page under this is agreed but wrong
	agreeingF1  = 0.7  // OCR this close to the reference (case folded) read the layer's text
	emptyRefMin = 10   // a reference of this many words is text an answer must not drop
)

// reasonsWithLayer are the source_reasons of a page OCR'd although it has a text layer.
var reasonsWithLayer = []string{"text_layer_disagrees", "text_layer_hidden", "text_layer_unmapped",
	"text_layer_too_large", "stray_text_over_image"}

// Flags are what is wrong with the row, by the rules in the command's doc comment.
func (r Row) Flags() []string {
	var f []string
	if r.Status != 200 || r.Code != "" {
		return []string{"error"}
	}
	layerMode := r.Mode != "always"
	if r.HasRef && layerMode && (r.Source == "text-layer" || r.Source == "mixed") && r.Score.F1 < exactF1 {
		f = append(f, "agreed-but-wrong")
	}
	if r.HasRef && layerMode && r.Source == "ocr" && slices.Contains(reasonsWithLayer, r.Reason) && r.Score.F1Fold >= agreeingF1 {
		f = append(f, "layer-thrown-away")
	}
	if r.HasRef && r.Score.Words == 0 && r.Score.RefWords >= emptyRefMin {
		f = append(f, "empty")
	}
	if len(r.Score.Merges) > 0 {
		f = append(f, "merged")
	}
	return f
}

// judge makes the row of page n of file answered in mode.
func judge(file string, n int, mode string, rep reply, ref []string, hasRef bool) Row {
	row := Row{File: file, Page: n, Mode: mode, Status: rep.Status, Code: rep.Answer.Code, HasRef: hasRef, CPU: rep.CPU, Wall: rep.Wall, Source: "none"}
	var lines []string
	if rep.Status == 200 {
		p, err := rep.Answer.page(n)
		switch {
		case err != nil:
			row.Code = "no_page"
		case p.Error != nil:
			row.Code = p.Error.Code
		default:
			row.Source, row.Reason, row.Confidence = p.source(), p.SourceReason, p.Confidence
			lines = p.lines()
		}
	}
	if hasRef {
		row.Score = compare(ref, lines)
	}
	return row
}

func printHeader(w io.Writer) {
	fmt.Fprintf(w, "%-34s %4s %-9s %3s %-10s %-22s %5s %5s %5s %6s %6s %6s %3s %4s %5s %6s %6s %s\n",
		"file", "page", "mode", "st", "source", "reason", "conf", "refW", "ansW", "F1", "F1ci", "char", "mrg", "lost", "extra", "CPU-s", "wall-s", "flags")
}

func printRow(w io.Writer, r Row) {
	reason := r.Reason
	if r.Code != "" {
		reason = r.Code
	}
	score := fmt.Sprintf("%5s %5s %6s %6s %6s %3s %4s %5s", "-", "-", "-", "-", "-", "-", "-", "-")
	if r.HasRef {
		s := r.Score
		score = fmt.Sprintf("%5d %5d %6.3f %6.3f %6.3f %3d %4d %5d", s.RefWords, s.Words, s.F1, s.F1Fold, s.CharAcc, s.MergedLines(), len(s.Lost), len(s.Extra))
	}
	fmt.Fprintf(w, "%-34s %4d %-9s %3d %-10s %-22s %5.3f %s %6s %6.2f %s\n",
		shorten(filepath.Base(r.File), 34), r.Page, r.Mode, r.Status, r.Source, shorten(reason, 22), r.Confidence, score,
		seconds(r.CPU), r.Wall.Seconds(), strings.Join(r.Flags(), ","))
}

// printLines prints the row's lost and extra lines.
func printLines(w io.Writer, r Row) {
	for _, l := range r.Score.Lost {
		fmt.Fprintf(w, "    lost  %q\n", l)
	}
	for _, l := range r.Score.Extra {
		fmt.Fprintf(w, "    extra %q\n", l)
	}
}

// printMerges lists every line merge found.
func printMerges(w io.Writer, rows []Row) {
	n := 0
	for _, r := range rows {
		n += len(r.Score.Merges)
	}
	fmt.Fprintf(w, "\nline merges: %d\n", n)
	for _, r := range rows {
		for _, m := range r.Score.Merges {
			fmt.Fprintf(w, "  %s p%d %s: %q = %q × %q\n", filepath.Base(r.File), r.Page, r.Mode, m.Token, m.A, m.B)
		}
	}
}

// printSummary prints, for each mode, what its pages came to.
func printSummary(w io.Writer, rows []Row, order []string) {
	for _, m := range order {
		var mine []Row
		for _, r := range rows {
			if r.Mode == m {
				mine = append(mine, r)
			}
		}
		fmt.Fprintf(w, "\nmode %s: %d pages\n", m, len(mine))
		if len(mine) == 0 {
			continue
		}
		bySource, flags := map[string]int{}, map[string]int{}
		for _, r := range mine {
			bySource[r.Source]++
			for _, f := range r.Flags() {
				flags[f]++
			}
		}
		fmt.Fprintf(w, "  source      %s\n", counts(bySource))
		fmt.Fprintf(w, "  flags       %s\n", counts(flags))
		for _, src := range []string{"", "text-layer", "ocr", "mixed"} {
			var f1, f1ci, char, cpu, wall []float64
			exact, merged, lines := 0, 0, 0
			for _, r := range mine {
				if src != "" && r.Source != src {
					continue
				}
				if r.HasRef && r.Status == 200 && r.Code == "" {
					f1, f1ci, char = append(f1, r.Score.F1), append(f1ci, r.Score.F1Fold), append(char, r.Score.CharAcc)
					if r.Score.F1 >= exactF1 {
						exact++
					}
					if l := r.Score.MergedLines(); l > 0 {
						merged, lines = merged+1, lines+l
					}
				}
				if r.CPU >= 0 {
					cpu = append(cpu, r.CPU.Seconds())
				}
				wall = append(wall, r.Wall.Seconds())
			}
			if len(wall) == 0 {
				continue
			}
			name := src
			if name == "" {
				name = "all"
			}
			fmt.Fprintf(w, "  %-11s %d pages, %d with a reference: word F1 mean %.3f (ci %.3f), char %.3f; F1 ≥ %.2f on %d; merges %d lines on %d pages; CPU-s mean %s median %s total %s; wall-s mean %.2f\n",
				name, len(wall), len(f1), mean(f1), mean(f1ci), mean(char), exactF1, exact, lines, merged, fsec(mean(cpu), len(cpu)), fsec(median(cpu), len(cpu)), fsec(sum(cpu), len(cpu)), mean(wall))
		}
	}
	printCheckCost(w, rows)
}

// printCheckCost compares the pages answered from their layer both checked (auto) and unchecked:
// what the check costs.
func printCheckCost(w io.Writer, rows []Row) {
	type key struct {
		file string
		page int
	}
	auto := map[key]Row{}
	for _, r := range rows {
		if r.Mode == "auto" {
			auto[key{r.File, r.Page}] = r
		}
	}
	var checked, unchecked []float64
	for _, r := range rows {
		a, ok := auto[key{r.File, r.Page}]
		if r.Mode != "unchecked" || !ok || a.Source != "text-layer" || r.Source != "text-layer" || a.CPU < 0 || r.CPU < 0 {
			continue
		}
		checked, unchecked = append(checked, a.CPU.Seconds()), append(unchecked, r.CPU.Seconds())
	}
	if len(checked) == 0 {
		return
	}
	fmt.Fprintf(w, "\nchecked against unchecked, %d pages answered from the text layer in both: CPU-s mean %.3f against %.3f (%.2f×), median %.3f against %.3f\n",
		len(checked), mean(checked), mean(unchecked), mean(checked)/mean(unchecked), median(checked), median(unchecked))
}

// printChanges prints each page's change against an earlier run's rows.
func printChanges(w io.Writer, before, after []Row) {
	type key struct {
		file string
		page int
		mode string
	}
	old := map[key]Row{}
	for _, r := range before {
		old[key{filepath.Base(r.File), r.Page, r.Mode}] = r
	}
	fmt.Fprintf(w, "\nbefore → after\n%-34s %4s %-9s %-23s %-15s %-15s %-9s %-13s %s\n", "file", "page", "mode", "source", "F1", "F1ci", "merges", "CPU-s", "flags")
	for _, r := range after {
		b, ok := old[key{filepath.Base(r.File), r.Page, r.Mode}]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-34s %4d %-9s %-23s %.3f → %.3f %.3f → %.3f %3d → %-3d %5s → %-5s %s → %s\n",
			shorten(filepath.Base(r.File), 34), r.Page, r.Mode, b.Source+" → "+r.Source, b.Score.F1, r.Score.F1, b.Score.F1Fold, r.Score.F1Fold,
			b.Score.MergedLines(), r.Score.MergedLines(), seconds(b.CPU), seconds(r.CPU), orNone(b.Flags()), orNone(r.Flags()))
	}
}

// tsvHeader names pages.tsv's columns; readRows reads them back.
var tsvHeader = []string{"file", "page", "mode", "status", "code", "source", "reason", "confidence", "ref_words", "words",
	"f1", "f1_ci", "char_acc", "merged_lines", "lost", "extra", "cpu_s", "wall_s", "reference", "flags"}

// writeResults writes pages.tsv, merges.tsv and lines.tsv into dir.
func writeResults(dir string, rows []Row) error {
	var pages, merges, lines strings.Builder
	pages.WriteString(strings.Join(tsvHeader, "\t") + "\n")
	merges.WriteString("file\tpage\tmode\tline\ttoken\ta\tb\n")
	lines.WriteString("file\tpage\tmode\tkind\tline\n")
	for _, r := range rows {
		cpu := ""
		if r.CPU >= 0 {
			cpu = strconv.FormatFloat(r.CPU.Seconds(), 'f', 3, 64)
		}
		s := r.Score
		ref := "no"
		if r.HasRef {
			ref = "yes"
		}
		fields := []string{r.File, strconv.Itoa(r.Page), r.Mode, strconv.Itoa(r.Status), r.Code, r.Source, r.Reason,
			f4(r.Confidence), strconv.Itoa(s.RefWords), strconv.Itoa(s.Words), f4(s.F1), f4(s.F1Fold), f4(s.CharAcc),
			strconv.Itoa(s.MergedLines()), strconv.Itoa(len(s.Lost)), strconv.Itoa(len(s.Extra)), cpu,
			strconv.FormatFloat(r.Wall.Seconds(), 'f', 3, 64), ref, strings.Join(r.Flags(), ",")}
		pages.WriteString(strings.Join(fields, "\t") + "\n")
		for _, m := range s.Merges {
			fmt.Fprintf(&merges, "%s\t%d\t%s\t%d\t%s\t%s\t%s\n", r.File, r.Page, r.Mode, m.Line, tsvSafe(m.Token), tsvSafe(m.A), tsvSafe(m.B))
		}
		for _, l := range s.Lost {
			fmt.Fprintf(&lines, "%s\t%d\t%s\tlost\t%s\n", r.File, r.Page, r.Mode, tsvSafe(l))
		}
		for _, l := range s.Extra {
			fmt.Fprintf(&lines, "%s\t%d\t%s\textra\t%s\n", r.File, r.Page, r.Mode, tsvSafe(l))
		}
	}
	for name, text := range map[string]string{"pages.tsv": pages.String(), "merges.tsv": merges.String(), "lines.tsv": lines.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readRows reads a pages.tsv back: the figures a later run is compared with (merges, lost and
// extra lines as counts).
func readRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 0; sc.Scan(); line++ {
		c := strings.Split(sc.Text(), "\t")
		if line == 0 {
			if !slices.Equal(c, tsvHeader) {
				return nil, fmt.Errorf("%s: not a pages.tsv of this command (its header differs)", path)
			}
			continue
		}
		if len(c) != len(tsvHeader) {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d", path, line+1, len(c), len(tsvHeader))
		}
		r := Row{File: c[0], Mode: c[2], Code: c[4], Source: c[5], Reason: c[6], CPU: -1}
		r.Page, _ = strconv.Atoi(c[1])
		r.Status, _ = strconv.Atoi(c[3])
		r.Confidence = atof(c[7])
		r.Score.RefWords, _ = strconv.Atoi(c[8])
		r.Score.Words, _ = strconv.Atoi(c[9])
		r.Score.F1, r.Score.F1Fold, r.Score.CharAcc = atof(c[10]), atof(c[11]), atof(c[12])
		merged, _ := strconv.Atoi(c[13])
		for i := range merged {
			r.Score.Merges = append(r.Score.Merges, Merge{Line: i})
		}
		lost, _ := strconv.Atoi(c[14])
		extra, _ := strconv.Atoi(c[15])
		r.Score.Lost, r.Score.Extra = make([]string, lost), make([]string, extra)
		if c[16] != "" {
			r.CPU = time.Duration(atof(c[16]) * float64(time.Second))
		}
		r.Wall = time.Duration(atof(c[17]) * float64(time.Second))
		r.HasRef = c[18] == "yes"
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func seconds(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64)
}

func fsec(v float64, n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func orNone(f []string) string {
	if len(f) == 0 {
		return "ok"
	}
	return strings.Join(f, ",")
}

func f4(v float64) string   { return strconv.FormatFloat(v, 'f', 4, 64) }
func atof(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

func tsvSafe(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return sum(v) / float64(len(v))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
