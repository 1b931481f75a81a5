package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// FormReport is what a run over a FUNSD-layout directory measured: the words of each form
// against its word-level truth (ocrscore.ScoreForm), and the time.
type FormReport struct {
	Total   ocrscore.FormCounts
	PerForm []FormResult
	Wall    time.Duration
	CPU     time.Duration // user + system CPU time of the process over the run
}

// FormResult is one form's counts and time.
type FormResult struct {
	ID     string
	Counts ocrscore.FormCounts
	Wall   time.Duration
}

// RunForms reads every form of dir (images/<id>.png, annotations/<id>.json) with p, one at a
// time, and scores it; with outDir it also keeps each form's prediction (ocr_score.py's format).
func RunForms(ctx context.Context, p *ocr.Pipeline, dir, outDir string) (*FormReport, error) {
	forms, err := ocrscore.Forms(dir)
	if err != nil {
		return nil, err
	}
	rep := &FormReport{}
	cpu0 := processCPU()
	for _, f := range forms {
		truth, err := ocrscore.ReadFormTruth(f.Annotation)
		if err != nil {
			return nil, err
		}
		img, err := os.ReadFile(f.Image)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		res, err := p.Run(ctx, img)
		wall := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Image, err)
		}
		lines := make([]ocrscore.Line, len(res.Regions))
		for k, r := range res.Regions {
			lines[k] = ocrscore.Line{Text: r.Text, Quad: r.Quad, Score: r.Score}
		}
		if outDir != "" {
			if err := ocrscore.Write(outDir, f.ID, lines); err != nil {
				return nil, err
			}
		}
		c := ocrscore.ScoreForm(truth, lines)
		rep.Total.Add(c)
		rep.Wall += wall
		rep.PerForm = append(rep.PerForm, FormResult{ID: f.ID, Counts: c, Wall: wall})
	}
	rep.CPU = processCPU() - cpu0
	return rep, nil
}

// Print writes the summary; with perForm, one line per form first.
func (r *FormReport) Print(w io.Writer, perForm bool) {
	if perForm {
		fmt.Fprintf(w, "%-14s %6s %6s %6s %7s %7s %8s\n", "form", "truth", "pred", "right", "F1", "missed", "wall")
		for _, f := range r.PerForm {
			fmt.Fprintf(w, "%-14s %6d %6d %6d %7.4f %7.4f %6.0fms\n", f.ID, f.Counts.TruthWords, f.Counts.PredWords,
				f.Counts.Correct, f.Counts.F1(), f.Counts.MissedShare(), float64(f.Wall)/float64(time.Millisecond))
		}
		fmt.Fprintln(w)
	}
	t := r.Total
	fmt.Fprintf(w, "forms %d: truth words %d, predicted %d, right %d (case-insensitive)\n", len(r.PerForm), t.TruthWords, t.PredWords, t.Correct)
	fmt.Fprintf(w, "form score: word F1 (ci) %.4f | missed entirely %.4f (%d words; %d no box covers half of) | %.0f ms/form wall, %.2f CPU-s/form, GOMAXPROCS=%d\n",
		t.F1(), t.MissedShare(), t.Missed, t.Uncovered, r.Wall.Seconds()*1000/float64(max(len(r.PerForm), 1)),
		r.CPU.Seconds()/float64(max(len(r.PerForm), 1)), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "runs of letters and digits (FUNSD's word splits aside): F1 (ci) %.4f (truth %d, predicted %d, right %d)\n",
		t.Runs.F1(), t.Runs.Truth, t.Runs.Pred, t.Runs.Correct)
	fmt.Fprintf(w, "check boxes: %d of the truth's %d found; %d more where the truth has none\n", t.Boxes.Found, t.Boxes.Truth, t.Boxes.Extra)
}

// processCPU is the process's user + system CPU time so far (getrusage); 0 where unavailable.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
