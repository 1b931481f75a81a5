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
	// LayerF1 and OCRF1 are the word F1 of the same page read from its text layer unchecked
	// (mode unchecked) and by OCR (mode always); -1 where that mode was not run or did not
	// answer so. They say which source was the better one (crossJudge).
	LayerF1, OCRF1 float64
	// Probes, Agreed and Disagreed are the page's text_layer_check (0 where none was read);
	// Hidden the characters of its layer dropped as unseen (hidden_text).
	Probes, Agreed, Disagreed, Hidden int
}

// The flags' thresholds.
const (
	exactF1     = 0.99 // a text-layer page under this is agreed but wrong
	agreeingF1  = 0.7  // OCR this close to the reference (case folded) read the layer's text
	emptyRefMin = 10   // a reference of this many words is text an answer must not drop
	worseBy     = 0.02 // auto this far under the better source chose the worse one
)

// crossJudge gives each row of one page the F1 of its layer read unchecked and of its OCR.
func crossJudge(page []Row) {
	layer, ocr := -1.0, -1.0
	for _, r := range page {
		ok := r.HasRef && r.Status == 200 && r.Code == ""
		switch {
		case ok && r.Mode == "unchecked" && r.Source == "text-layer":
			layer = r.Score.F1
		case ok && r.Mode == "always" && r.Source == "ocr":
			ocr = r.Score.F1
		}
	}
	for i := range page {
		page[i].LayerF1, page[i].OCRF1 = layer, ocr
	}
}

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
	// The layer was right: read unchecked it is exact; where it was not read unchecked, OCR's
	// reading of the page is close to the reference, which is the layer's text.
	layerRight := r.LayerF1 >= exactF1 || (r.LayerF1 < 0 && r.Score.F1Fold >= agreeingF1)
	if r.HasRef && layerMode && r.Source == "ocr" && slices.Contains(reasonsWithLayer, r.Reason) && layerRight {
		f = append(f, "layer-thrown-away")
	}
	// The other source would have read the page better (by more than worseBy in word F1).
	if r.HasRef && r.Mode == "auto" && r.LayerF1 >= 0 && r.OCRF1 >= 0 && r.Score.F1 < max(r.LayerF1, r.OCRF1)-worseBy {
		f = append(f, "worse-source")
	}
	if r.HasRef && r.Score.Words == 0 && r.Score.RefWords >= emptyRefMin {
		f = append(f, "empty")
	}
	if len(r.Score.Merges) > 0 {
		f = append(f, "merged")
	}
	if len(r.Score.Doubled) > 0 {
		f = append(f, "doubled")
	}
	return f
}

// judge makes the row of page n of file answered in mode.
func judge(file string, n int, mode string, rep reply, ref []string, hasRef bool) Row {
	row := Row{File: file, Page: n, Mode: mode, Status: rep.Status, Code: rep.Answer.Code, HasRef: hasRef, CPU: rep.CPU, Wall: rep.Wall, Source: "none",
		LayerF1: -1, OCRF1: -1}
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
			if p.Check != nil {
				row.Probes, row.Agreed, row.Disagreed = p.Check.Probes, p.Check.Agreed, p.Check.Disagreed
			}
			if p.Hidden != nil {
				row.Hidden = p.Hidden.Characters
			}
		}
	}
	if hasRef {
		row.Score = compare(ref, lines)
	}
	return row
}

func printHeader(w io.Writer) {
	fmt.Fprintf(w, "%-44s %4s %-9s %3s %-10s %-22s %5s %5s %5s %5s %5s %6s %6s %6s %3s %4s %5s %6s %6s %s\n",
		"file", "page", "mode", "st", "source", "reason", "conf", "probe", "hid", "refW", "ansW", "F1", "F1ci", "char", "mrg", "lost", "extra", "CPU-s", "wall-s", "flags")
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
	probes := "-" // agreed of read
	if r.Probes > 0 {
		probes = fmt.Sprintf("%d/%d", r.Agreed, r.Probes)
	}
	fmt.Fprintf(w, "%-44s %4d %-9s %3d %-10s %-22s %5.3f %5s %5d %s %6s %6.2f %s\n",
		fileName(r.File, 44), r.Page, r.Mode, r.Status, r.Source, shorten(reason, 22), r.Confidence, probes, r.Hidden, score,
		seconds(r.CPU), r.Wall.Seconds(), strings.Join(r.Flags(), ","))
}

// printReport prints saved rows as a run prints them: the table, then the summary of each mode
// in the order the table has them, then the changes against earlier rows, if any.
func printReport(w io.Writer, rows, earlier []Row) {
	var order []string
	printHeader(w)
	for _, r := range rows {
		printRow(w, r)
		if !slices.Contains(order, r.Mode) {
			order = append(order, r.Mode)
		}
	}
	printSummary(w, rows, order)
	if earlier != nil {
		printChanges(w, earlier, rows)
	}
}

// printLines prints the row's lost and extra lines, and its first lost and extra words.
func printLines(w io.Writer, r Row) {
	const most = 20
	if l := r.Score.WordsLost; len(l) > 0 {
		fmt.Fprintf(w, "    words lost  %d: %s\n", len(l), strings.Join(l[:min(len(l), most)], " "))
	}
	if l := r.Score.WordsExtra; len(l) > 0 {
		fmt.Fprintf(w, "    words extra %d: %s\n", len(l), strings.Join(l[:min(len(l), most)], " "))
	}
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
	n = 0
	for _, r := range rows {
		n += len(r.Score.Doubled)
	}
	fmt.Fprintf(w, "doubled tokens (a line drawn twice, kept twice): %d\n", n)
	for _, r := range rows {
		for _, m := range r.Score.Doubled {
			fmt.Fprintf(w, "  %s p%d %s: %q = %q twice\n", filepath.Base(r.File), r.Page, r.Mode, m.Token, m.A)
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
			scores := ""
			if len(f1) > 0 {
				scores = fmt.Sprintf(": word F1 mean %.3f (ci %.3f), char %.3f; F1 ≥ %.2f on %d; merges %d lines on %d pages",
					mean(f1), mean(f1ci), mean(char), exactF1, exact, lines, merged)
			}
			fmt.Fprintf(w, "  %-11s %d pages, %d with a reference%s; CPU-s mean %s median %s total %s; wall-s mean %.2f\n",
				name, len(wall), len(f1), scores, fsec(mean(cpu), len(cpu)), fsec(median(cpu), len(cpu)), fsec(sum(cpu), len(cpu)), mean(wall))
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
	fmt.Fprintf(w, "\nbefore → after, the pages whose source, word F1 (by %.3f or more), merges or flags changed\n%-44s %4s %-9s %-23s %-15s %-15s %-9s %-13s %s\n",
		changedF1, "file", "page", "mode", "source", "F1", "F1ci", "merges", "CPU-s", "flags")
	var same, cpuBefore, cpuAfter []float64
	for _, r := range after {
		b, ok := old[key{filepath.Base(r.File), r.Page, r.Mode}]
		if !ok {
			continue
		}
		if b.CPU >= 0 && r.CPU >= 0 {
			cpuBefore, cpuAfter = append(cpuBefore, b.CPU.Seconds()), append(cpuAfter, r.CPU.Seconds())
		}
		if b.Source == r.Source && math.Abs(b.Score.F1-r.Score.F1) < changedF1 && b.Score.MergedLines() == r.Score.MergedLines() &&
			slices.Equal(b.Flags(), r.Flags()) {
			same = append(same, 1)
			continue
		}
		fmt.Fprintf(w, "%-44s %4d %-9s %-23s %.3f → %.3f %.3f → %.3f %3d → %-3d %5s → %-5s %s → %s\n",
			fileName(r.File, 44), r.Page, r.Mode, b.Source+" → "+r.Source, b.Score.F1, r.Score.F1, b.Score.F1Fold, r.Score.F1Fold,
			b.Score.MergedLines(), r.Score.MergedLines(), seconds(b.CPU), seconds(r.CPU), orNone(b.Flags()), orNone(r.Flags()))
	}
	if len(cpuAfter) == 0 {
		fmt.Fprintf(w, "%d pages unchanged; no page with CPU figures in both (pages are matched by file name, page and mode)\n", len(same))
		return
	}
	fmt.Fprintf(w, "%d pages unchanged; CPU-s of the %d pages in both, before → after: total %.2f → %.2f, median %.3f → %.3f\n",
		len(same), len(cpuAfter), sum(cpuBefore), sum(cpuAfter), median(cpuBefore), median(cpuAfter))
}

// changedF1 is the change of word F1 that printChanges shows.
const changedF1 = 0.005

// tsvHeader names pages.tsv's columns; readRows reads them back by name.
var tsvHeader = []string{"file", "page", "mode", "status", "code", "source", "reason", "confidence", "ref_words", "words",
	"f1", "f1_ci", "char_acc", "merged_lines", "doubled", "lost", "extra", "cpu_s", "wall_s", "reference", "layer_f1", "ocr_f1", "probes", "probes_agreed", "probes_disagreed", "hidden_chars", "flags"}

// writeResults writes pages.tsv, merges.tsv and lines.tsv into dir.
func writeResults(dir string, rows []Row) error {
	var pages, merges, lines strings.Builder
	pages.WriteString(strings.Join(tsvHeader, "\t") + "\n")
	merges.WriteString("file\tpage\tmode\tkind\tline\ttoken\ta\tb\n")
	lines.WriteString("file\tpage\tmode\tkind\tline\n")
	for _, r := range rows {
		pages.WriteString(strings.Join(r.fields(), "\t") + "\n")
		for _, m := range r.Score.Merges {
			fmt.Fprintf(&merges, "%s\t%d\t%s\tmerge\t%d\t%s\t%s\t%s\n", r.File, r.Page, r.Mode, m.Line, tsvSafe(m.Token), tsvSafe(m.A), tsvSafe(m.B))
		}
		for _, m := range r.Score.Doubled {
			fmt.Fprintf(&merges, "%s\t%d\t%s\tdoubled\t%d\t%s\t%s\t%s\n", r.File, r.Page, r.Mode, m.Line, tsvSafe(m.Token), tsvSafe(m.A), tsvSafe(m.B))
		}
		for _, l := range r.Score.Lost {
			fmt.Fprintf(&lines, "%s\t%d\t%s\tlost\t%s\n", r.File, r.Page, r.Mode, tsvSafe(l))
		}
		for _, l := range r.Score.Extra {
			fmt.Fprintf(&lines, "%s\t%d\t%s\textra\t%s\n", r.File, r.Page, r.Mode, tsvSafe(l))
		}
		if l := r.Score.WordsLost; len(l) > 0 {
			fmt.Fprintf(&lines, "%s\t%d\t%s\twords-lost\t%s\n", r.File, r.Page, r.Mode, tsvSafe(strings.Join(l, " ")))
		}
		if l := r.Score.WordsExtra; len(l) > 0 {
			fmt.Fprintf(&lines, "%s\t%d\t%s\twords-extra\t%s\n", r.File, r.Page, r.Mode, tsvSafe(strings.Join(l, " ")))
		}
	}
	for name, text := range map[string]string{"pages.tsv": pages.String(), "merges.tsv": merges.String(), "lines.tsv": lines.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fields are the row's columns of pages.tsv, in tsvHeader's order.
func (r Row) fields() []string {
	opt := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return f4(v)
	}
	ref := "no"
	if r.HasRef {
		ref = "yes"
	}
	s := r.Score
	return []string{tsvSafe(r.File), strconv.Itoa(r.Page), r.Mode, strconv.Itoa(r.Status), r.Code, r.Source, r.Reason,
		f4(r.Confidence), strconv.Itoa(s.RefWords), strconv.Itoa(s.Words), f4(s.F1), f4(s.F1Fold), f4(s.CharAcc),
		strconv.Itoa(s.MergedLines()), strconv.Itoa(len(s.Doubled)), strconv.Itoa(len(s.Lost)), strconv.Itoa(len(s.Extra)),
		opt(r.CPU.Seconds(), r.CPU >= 0), strconv.FormatFloat(r.Wall.Seconds(), 'f', 3, 64), ref,
		opt(r.LayerF1, r.LayerF1 >= 0), opt(r.OCRF1, r.OCRF1 >= 0), strconv.Itoa(r.Probes), strconv.Itoa(r.Agreed),
		strconv.Itoa(r.Disagreed), strconv.Itoa(r.Hidden), strings.Join(r.Flags(), ",")}
}

// readRows reads a pages.tsv back: the figures a later run is compared with (merges, lost and
// extra lines as counts). Columns are found by name, so a table of an earlier version of this
// command, with fewer columns, reads as well; a column it lacks reads as not measured.
func readRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	col := map[string]int{}
	for line := 0; sc.Scan(); line++ {
		c := strings.Split(sc.Text(), "\t")
		if line == 0 {
			for i, name := range c {
				col[name] = i
			}
			for _, name := range []string{"file", "page", "mode", "f1"} {
				if _, ok := col[name]; !ok {
					return nil, fmt.Errorf("%s: not a pages.tsv of this command (no column %s)", path, name)
				}
			}
			continue
		}
		if len(c) != len(col) {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d", path, line+1, len(c), len(col))
		}
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return c[i]
			}
			return ""
		}
		num := func(name string) float64 {
			v, err := strconv.ParseFloat(get(name), 64)
			if err != nil {
				return -1
			}
			return v
		}
		count := func(name string) int { return max(int(num(name)), 0) }
		r := Row{File: get("file"), Mode: get("mode"), Code: get("code"), Source: get("source"), Reason: get("reason"),
			Page: count("page"), Status: count("status"), Confidence: max(num("confidence"), 0), HasRef: get("reference") == "yes",
			LayerF1: num("layer_f1"), OCRF1: num("ocr_f1"), CPU: -1,
			Probes: count("probes"), Agreed: count("probes_agreed"), Disagreed: count("probes_disagreed"), Hidden: count("hidden_chars")}
		r.Score = Score{RefWords: count("ref_words"), Words: count("words"), F1: max(num("f1"), 0), F1Fold: max(num("f1_ci"), 0),
			CharAcc: max(num("char_acc"), 0), Lost: make([]string, count("lost")), Extra: make([]string, count("extra")),
			Doubled: make([]Merge, count("doubled"))}
		for i := range count("merged_lines") {
			r.Score.Merges = append(r.Score.Merges, Merge{Line: i})
		}
		if v := num("cpu_s"); v >= 0 {
			r.CPU = time.Duration(v * float64(time.Second))
		}
		r.Wall = time.Duration(max(num("wall_s"), 0) * float64(time.Second))
		rows = append(rows, r)
	}
	if _, ok := col["layer_f1"]; !ok {
		// A table written before these columns: the page's other modes are in it.
		for _, page := range byPage(len(rows), func(i int) (string, int) { return rows[i].File, rows[i].Page }) {
			group := make([]Row, len(page))
			for k, i := range page {
				group[k] = rows[i]
			}
			crossJudge(group)
			for k, i := range page {
				rows[i] = group[k]
			}
		}
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

// fileName is a file's base name in at most n characters: where it is longer, its start and its
// end (where corpora put a document's own name) with an ellipsis between.
func fileName(path string, n int) string {
	r := []rune(filepath.Base(path))
	if len(r) <= n {
		return string(r)
	}
	head := n / 3
	return string(r[:head]) + "…" + string(r[len(r)-(n-head-1):])
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

func f4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

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
