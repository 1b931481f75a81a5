// Command ocrgate-pages reads documents page by page through an ocrgate service and compares
// every answered page with a reference text, to show where a page's text is exact and where it
// is not, and what each page costs.
//
// It sends every page of every PDF and TIFF under the directories named (one request a page,
// one at a time, in each mode asked: -modes auto,always), compares each answer with the page's
// reference (pdftotext -f N -l N, or FILE.txt beside the file, pages separated by form feeds) and
// prints a row a page, then a summary a mode:
//
//   - the source the service chose (text-layer, ocr, mixed where its regions say both), why
//     (source_reason) and its confidence;
//   - word F1 against the reference, case kept and case folded (bags of words, NFKC, so a
//     ligature counts as its letters), and char accuracy (how much of the reference's text the
//     answer holds, line by line);
//   - line merges: answered tokens that are two reference lines interleaved character by
//     character (the definition is at findMerges), and doubled tokens (a line drawn twice);
//   - the reference's lines the answer lost, and the answer's lines the reference lacks;
//   - the service's CPU time over the request (utime + stime from /proc/PID/stat before and
//     after; nothing else is in flight) and the wall time;
//   - flags: agreed-but-wrong (answered from the text layer with word F1 under 0.99),
//     layer-thrown-away (OCR'd for a reason of the layer's though the layer read unchecked is
//     exact; without the mode unchecked, though OCR's reading scores F1 (ci) 0.7 or more: the
//     layer pdftotext reads was the page's text), worse-source (the layer unchecked or OCR
//     under always reads the page better than auto did), empty (no text where the reference has
//     10 words or more), merged, doubled, error (a failed request or page).
//
// It starts the service itself (-bin, default bin/ocrgate, on a free loopback port), or talks to
// one already running (-server URL, and -pid PID for its CPU time). The mode unchecked is auto
// on a second service started with OCRGATE_TEXT_LAYER_CHECK=0, page by page beside the first:
// what the check of a text layer costs on real pages. The first file's first page is sent once in
// every mode before anything is measured (the models' first runs).
//
//	ocrgate-pages [-modes auto,always,unchecked] [-pages 1-3] [-max-pages N] [-out DIR] [-before FILE] DIR|FILE...
//	ocrgate-pages -report pages.tsv [-before FILE]
//	make pages CORPUS=DIR
//
// With -out it writes pages.tsv (the table), merges.tsv, lines.tsv (lost and extra lines) and
// every answer (answers/); -before reads an earlier pages.tsv and prints each page's change;
// -report prints a saved pages.tsv's table and summary again, sending nothing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	// SIGINT or SIGTERM ends the request in flight, so the services this command started are
	// stopped on the way out rather than left running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// modes: what each is sent as, and to which service.
var modes = map[string]struct {
	ocr       string
	unchecked bool
}{
	"auto":      {"auto", false},
	"always":    {"always", false},
	"unchecked": {"auto", true},
}

// Main runs the command with its own flags.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ocrgate-pages", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", filepath.Join("bin", "ocrgate"), "ocrgate binary to start (serve), unless -server is given")
	server := fs.String("server", "", "URL of a running ocrgate to send the pages to instead")
	pid := fs.Int("pid", 0, "with -server: the service's process, whose CPU time is read from /proc (0: no CPU figures)")
	modeList := fs.String("modes", "auto", "modes, in the order each page is sent: auto, always (ocr=always), unchecked (auto on a second service with OCRGATE_TEXT_LAYER_CHECK=0)")
	pagesFlag := fs.String("pages", "", "pages of each file, e.g. 1-3,5 (default: every page)")
	maxPages := fs.Int("max-pages", 0, "at most this many pages a file (0: no limit)")
	layout := fs.Bool("layout", false, "reference from pdftotext -layout (lines as placed, columns side by side)")
	out := fs.String("out", "", "write pages.tsv, merges.tsv, lines.tsv and the answers here")
	before := fs.String("before", "", "an earlier pages.tsv: print each page's change against it")
	timeout := fs.Duration("timeout", 5*time.Minute, "the longest one request may take")
	verbose := fs.Bool("v", false, "also print each page's lost and extra lines")
	report := fs.String("report", "", "a saved pages.tsv: print its table and summary (and -before's changes) and send nothing")
	rescore := fs.String("rescore", "", "the -out DIR of an earlier run (or DIR,DIR… of several, such as auto in one and always in another): compare the saved answers with the references again (this command's comparisons as they are now), send nothing")
	var env []string
	fs.Func("env", "KEY=VALUE for the services this command starts (repeatable)", func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("want KEY=VALUE")
		}
		env = append(env, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "ocrgate-pages:", err)
		return code
	}
	var earlier []Row
	if *before != "" {
		var err error
		if earlier, err = readRows(*before); err != nil {
			return fail(2, err)
		}
	}
	if *report != "" || *rescore != "" {
		var rows []Row
		var err error
		if *report != "" {
			rows, err = readRows(*report)
		} else {
			rows, err = rescoreRun(ctx, strings.Split(*rescore, ","), newReferences(*layout))
		}
		if err != nil {
			return fail(2, err)
		}
		printReport(stdout, rows, earlier)
		if *rescore != "" {
			printMerges(stdout, rows)
		}
		if *out != "" {
			if err := writeResults(*out, rows); err != nil {
				return fail(1, err)
			}
		}
		return 0
	}
	if fs.NArg() == 0 {
		return fail(2, errors.New("name the directories or files to read"))
	}
	sel, err := parsePages(*pagesFlag)
	if err != nil {
		return fail(2, err)
	}
	var order []string
	for _, m := range strings.Split(*modeList, ",") {
		m = strings.TrimSpace(m)
		if _, ok := modes[m]; !ok || slices.Contains(order, m) {
			return fail(2, fmt.Errorf("-modes %q: each of auto, always, unchecked at most once", *modeList))
		}
		order = append(order, m)
	}
	if *server != "" && slices.Contains(order, "unchecked") {
		return fail(2, errors.New("the mode unchecked starts a second service: it needs -bin, not -server"))
	}
	files, err := documents(fs.Args())
	if err != nil {
		return fail(2, err)
	}
	if len(files) == 0 {
		return fail(2, errors.New("no PDF or TIFF found"))
	}

	var checked, unchecked *service
	if *server != "" {
		checked = &service{base: strings.TrimRight(*server, "/"), pid: *pid, client: httpClient()}
	} else {
		if checked, err = startService(ctx, *bin, env, stderr); err != nil {
			return fail(1, err)
		}
		defer checked.stop()
		if slices.Contains(order, "unchecked") {
			if unchecked, err = startService(ctx, *bin, append(slices.Clone(env), "OCRGATE_TEXT_LAYER_CHECK=0"), stderr); err != nil {
				return fail(1, err)
			}
			defer unchecked.stop()
		}
	}
	run := &runner{
		ctx: ctx, checked: checked, unchecked: unchecked, modes: order, timeout: *timeout,
		refs: newReferences(*layout), sel: sel, maxPages: *maxPages, out: *out, stdout: stdout, stderr: stderr, verbose: *verbose,
	}
	if *out != "" {
		if err := os.MkdirAll(filepath.Join(*out, "answers"), 0o755); err != nil {
			return fail(1, err)
		}
	}
	run.warmUp(files[0])
	printHeader(stdout)
	var runErr error
	for _, f := range files {
		if runErr = run.file(f); runErr != nil {
			break // the pages read so far are still summed up and written
		}
	}
	printMerges(stdout, run.rows)
	printSummary(stdout, run.rows, order)
	if earlier != nil {
		printChanges(stdout, earlier, run.rows)
	}
	if *out != "" {
		if err := writeResults(*out, run.rows); err != nil {
			return fail(1, err)
		}
	}
	if runErr != nil {
		return fail(1, runErr)
	}
	return 0
}

// answerPath is where -out keeps the answer to page n of file in mode.
func answerPath(dir, file string, n int, mode string) string {
	return filepath.Join(dir, "answers", fmt.Sprintf("%s.p%d.%s.json", filepath.Base(file), n, mode))
}

// rescoreRun judges earlier runs' saved answers (each dir's answers, listed by its pages.tsv)
// again against the references; the CPU and wall times are the runs'. The rows of one page
// from several runs (auto in one, always in another) are judged together, in the order of the
// page's first appearance.
func rescoreRun(ctx context.Context, dirs []string, refs *references) ([]Row, error) {
	type saved struct {
		Row
		dir string
	}
	var all []saved
	for _, dir := range dirs {
		rows, err := readRows(filepath.Join(dir, "pages.tsv"))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			all = append(all, saved{r, dir})
		}
	}
	var rows []Row
	for _, page := range byPage(len(all), func(i int) (string, int) { return all[i].File, all[i].Page }) {
		first := all[page[0]]
		ref, hasRef, err := refs.lines(ctx, first.File, first.Page)
		if err != nil {
			hasRef = false // as the run did: the row says the page had no reference
		}
		for _, i := range page {
			s := all[i]
			rep := reply{Status: s.Status, CPU: s.CPU, Wall: s.Wall}
			if rep.Raw, err = os.ReadFile(answerPath(s.dir, s.File, s.Page, s.Mode)); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(rep.Raw, &rep.Answer); err != nil {
				return nil, fmt.Errorf("%s page %d %s: %w", s.File, s.Page, s.Mode, err)
			}
			rows = append(rows, judge(s.File, s.Page, s.Mode, rep, ref, hasRef))
		}
		crossJudge(rows[len(rows)-len(page):])
	}
	return rows, nil
}

// byPage groups the indices 0…n-1 by the page key gives each, in the order of each page's first
// index.
func byPage(n int, key func(int) (string, int)) [][]int {
	type page struct {
		file string
		n    int
	}
	at := map[page]int{}
	var out [][]int
	for i := range n {
		f, p := key(i)
		k, ok := at[page{f, p}]
		if !ok {
			k = len(out)
			at[page{f, p}] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// runner sends the pages and keeps their rows.
type runner struct {
	ctx                context.Context
	checked, unchecked *service
	modes              []string
	timeout            time.Duration
	refs               *references
	sel                pageSet
	maxPages           int
	out                string
	stdout, stderr     io.Writer
	verbose            bool
	rows               []Row
}

// warmUp sends a file's first page once in every mode, unmeasured: the first runs of the models
// and of the PDF engine cost more than any later one.
func (r *runner) warmUp(file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		return
	}
	for _, m := range r.modes {
		ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
		_, _ = r.serviceFor(m).send(ctx, file, data, 1, modes[m].ocr) // a failure shows in the measured run
		cancel()
	}
}

func (r *runner) serviceFor(mode string) *service {
	if modes[mode].unchecked {
		return r.unchecked
	}
	return r.checked
}

// file sends the selected pages of one file, each in every mode, and prints their rows.
func (r *runner) file(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	first := 1
	if r.sel != nil {
		first = r.sel[0][0]
		for _, s := range r.sel {
			first = min(first, s[0])
		}
	}
	total, sent := 0, 0
	for n := first; total == 0 || n <= total; n++ {
		if !r.sel.has(n) {
			continue
		}
		if r.maxPages > 0 && sent >= r.maxPages {
			break
		}
		sent++
		ref, hasRef, err := r.refs.lines(r.ctx, file, n)
		if err != nil {
			fmt.Fprintln(r.stderr, "ocrgate-pages:", err)
		}
		var page []Row
		for _, m := range r.modes {
			ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
			rep, err := r.serviceFor(m).send(ctx, file, data, n, modes[m].ocr)
			cancel()
			if err != nil && rep.Status == 0 {
				return err // the service is gone, or the request could not be made
			}
			row := judge(file, n, m, rep, ref, hasRef)
			if total == 0 {
				total = max(rep.Answer.ImageInfo.Pages, 1)
				if rep.Status != 200 {
					total = n // a document refused whole: no page count to go on
				}
			}
			if r.out != "" {
				if err := os.WriteFile(answerPath(r.out, file, n, m), rep.Raw, 0o644); err != nil {
					return err
				}
			}
			page = append(page, row)
		}
		crossJudge(page)
		for _, row := range page {
			printRow(r.stdout, row)
			if r.verbose {
				printLines(r.stdout, row)
			}
		}
		r.rows = append(r.rows, page...)
	}
	return nil
}
