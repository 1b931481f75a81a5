package docfile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/memlimit"
)

// The hostile set: documents built to cost too much. Each must come back within the caller's
// deadline (with generous slack: the race detector and a shared machine slow everything) with a
// typed error or a bounded result, and keep the process's resident memory within a bound while it
// runs.

const (
	// memSlack is how much resident memory may grow while a hostile document is processed: the
	// engine instance's memory cap (512 MiB) plus a render and its copy at the render cap (2×64
	// MB) plus slack for the collector's lag.
	memSlack = 900 << 20
	// timeSlack is how late after its deadline a hostile operation may return.
	timeSlack = 10 * time.Second
)

func hostileSet() []struct {
	name     string
	data     []byte
	deadline time.Duration
	// want lists the acceptable outcomes of opening, reading page 1 and rendering it: nil means
	// success is acceptable too (a bounded result); the deadline is acceptable where decoding is
	// legitimately slow (a loaded machine, the race detector).
	want []error
} {
	return []struct {
		name     string
		data     []byte
		deadline time.Duration
		want     []error
	}{
		{"page count in the millions", hostile.PDFPageCount(5_000_000), 30 * time.Second, []error{nil, docfile.ErrTooManyPages, docfile.ErrCorrupt}},
		{"page tree with 20000 kids", hostile.PDFRepeatedKids(20_000), 30 * time.Second, []error{nil, docfile.ErrTooManyPages, docfile.ErrCorrupt}},
		{"page 300 inches wide", hostile.PDFPageSize(21_600, 842),
			30 * time.Second, []error{docfile.ErrTooLarge}},
		{"page 200 inches square", hostile.PDFPageSize(14_400, 14_400),
			30 * time.Second, []error{nil}},
		{"page tree that contains itself", hostile.PDFSelfTree(), 30 * time.Second, []error{nil, docfile.ErrCorrupt}},
		{"resources that refer to themselves", hostile.PDFSelfResources(), 30 * time.Second, []error{nil, docfile.ErrCorrupt}},
		{"form that draws itself", hostile.PDFSelfForm(),
			30 * time.Second, []error{nil, docfile.ErrCorrupt}},
		{"arrays nested 100000 deep", hostile.PDFNestedArrays(100_000),
			30 * time.Second, []error{nil, docfile.ErrCorrupt}},
		{"image of 20000×20000 px from 64 KiB", hostile.PDFFlateImage(20_000, 20_000), 30 * time.Second, []error{docfile.ErrTooLarge}},
		{"image of 12000×12000 px from 64 KiB", hostile.PDFFlateImage(12_000, 12_000), 5 * time.Second, []error{nil, docfile.ErrCorrupt, context.DeadlineExceeded}},
		{"JBIG2 stream claiming 60000×60000", hostile.PDFJBIG2Image(60_000, 60_000), 30 * time.Second, []error{docfile.ErrTooLarge}},
		{"JBIG2 stream of garbage at 9000×9000", hostile.PDFJBIG2Image(9_000, 9_000), 10 * time.Second, []error{nil, docfile.ErrCorrupt, context.DeadlineExceeded}},
		{"JPX stream claiming 60000×60000", hostile.PDFJPXImage(60_000, 60_000, 60_000, 60_000), 30 * time.Second, []error{docfile.ErrTooLarge}},
		{"JPX stream whose codestream claims 60000×60000", hostile.PDFJPXImage(100, 100, 60_000, 60_000), 10 * time.Second, []error{nil, docfile.ErrCorrupt, context.DeadlineExceeded}},
		{"page that renders forever", hostile.PDFEndlessPage(400_000),
			2 * time.Second, []error{context.DeadlineExceeded}},
	}
}

// process opens data, reads page 1 and renders it at the scale OCR would use.
func process(ctx context.Context, r *docfile.Reader, data []byte) error {
	doc, err := r.Open(ctx, data)
	if err != nil {
		return err
	}
	defer doc.Close()
	page, err := doc.Page(ctx, 1)
	if err != nil {
		return err
	}
	s, err := page.Scale(docfile.DefaultScalePolicy(), r.Limits())
	if err != nil {
		return err
	}
	_, err = doc.Render(ctx, page, s, nil)
	return err
}

func TestHostilePDFs(t *testing.T) {
	r := testReader(t)
	if err := r.Ready(ctxFor(t, 2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, c := range hostileSet() {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxFor(t, c.deadline)
			start := time.Now()
			var err error
			grew := uint64(memlimit.Growth(20*time.Millisecond, func() { err = process(ctx, r, c.data) }))
			took := time.Since(start)
			t.Logf("%v after %v, memory grew %d MiB", err, took.Round(time.Millisecond), grew>>20)
			ok := false
			for _, w := range c.want {
				if w == nil && err == nil || w != nil && errors.Is(err, w) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("error %v; want one of %v", err, c.want)
			}
			if took > c.deadline+timeSlack {
				t.Errorf("took %v; the deadline was %v", took, c.deadline)
			}
			if grew > memSlack {
				t.Errorf("resident memory grew by %d MiB; the bound is %d MiB", grew>>20, memSlack>>20)
			}
		})
	}
	// Nothing above may have kept an engine instance: every one of them can be taken at once.
	t.Run("no instance leaked", func(t *testing.T) {
		ctx := ctxFor(t, 30*time.Second)
		data, _ := bornDigital(t, bornDigitalPage)
		var docs []*docfile.Document
		for i := range 2 { // the default number of instances
			doc, err := r.Open(ctx, data)
			if err != nil {
				t.Fatalf("open %d: %v (an instance leaked?)", i, err)
			}
			docs = append(docs, doc)
		}
		for _, d := range docs {
			d.Close()
		}
	})
}

// TestRenderAbandonedAtDeadline: a render killed at the deadline returns in time, the document
// reports the deadline from then on, and the engine serves the next document. The page is one
// that is read in milliseconds and drawn for ever (PDFEndlessShading), so that only its drawing
// meets the deadline.
func TestRenderAbandonedAtDeadline(t *testing.T) {
	r := testReader(t)
	data := hostile.PDFEndlessShading(50)
	doc, err := r.Open(ctxFor(t, time.Minute), data)
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	page, err := doc.Page(ctxFor(t, time.Minute), 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = doc.Render(ctx, page, 2, nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 500*time.Millisecond+timeSlack {
		t.Fatalf("render: %v after %v", err, time.Since(start))
	}
	// The same document on a fresh context: reopened on a new instance, it renders a small
	// version of the page quickly enough? Not necessarily; what must hold is that it answers.
	if _, err := doc.Page(ctxFor(t, time.Minute), 1); err != nil {
		t.Errorf("page after an abandoned render: %v", err)
	}
	good, _ := bornDigital(t, bornDigitalPage)
	if err := process(ctxFor(t, time.Minute), r, good); err != nil {
		t.Errorf("the next document: %v", err)
	}
}

// TestOpenWaitsForAnInstance: with every instance held, Open waits and gives up at its deadline.
func TestOpenWaitsForAnInstance(t *testing.T) {
	r := testReader(t)
	data, _ := bornDigital(t, bornDigitalPage)
	var held []*docfile.Document
	for range 2 {
		held = append(held, open(t, data))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if doc, err := r.Open(ctx, data); !errors.Is(err, context.DeadlineExceeded) {
		if doc != nil {
			doc.Close()
		}
		t.Fatalf("open with every instance held: %v", err)
	}
	held[0].Close()
	doc, err := r.Open(ctxFor(t, 30*time.Second), data)
	if err != nil {
		t.Fatalf("open after one was released: %v", err)
	}
	doc.Close()
	for _, d := range held {
		d.Close()
	}
}

// TestStackedTextStoppedByCPU: a page of 4 000 page-sized glyphs drawn at one place costs the
// engine a minute of CPU to draw for the visibility check of its text layer; the check stops at
// the document's CPU limit with ErrTooComplex, and the engine serves the next document.
func TestStackedTextStoppedByCPU(t *testing.T) {
	r := testReader(t).WithLimits(docfile.Limits{OpCPU: 2 * time.Second})
	doc, err := r.Open(ctxFor(t, time.Minute), hostile.PDFStackedText(4_000))
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	ctx := ctxFor(t, 5*time.Minute)
	page, err := doc.Page(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := page.RenderCost(scaleOf(t, page, r.Limits()))
	start := time.Now()
	_, err = doc.TextLayer(ctx, page, c.Width, c.Height)
	t.Logf("%v after %v", err, time.Since(start))
	if !errors.Is(err, docfile.ErrTooComplex) {
		t.Errorf("error %v; want ErrTooComplex", err)
	}
	good, _ := bornDigital(t, bornDigitalPage)
	if err := process(ctxFor(t, time.Minute), r, good); err != nil {
		t.Errorf("the next document: %v", err)
	}
}
