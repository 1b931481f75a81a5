package document

import (
	"context"
	"errors"
	"image"
	"math"
	"slices"
	"time"

	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/work"
)

// A survey reads every selected page of a document: 2 000 of them when they are read from their
// text layer. Its memory is fixed (the engine's instance, one page's facts, a strip of probes),
// its CPU time is not: 2 000 text pages are two minutes of it, pages built to be costly far more.
// So a survey is priced in CPU time as well (see price), and it takes turns: it holds its
// admission for a turn of CPU time (Config.Turn, turnCPU by default), then gives it back and
// queues again behind whatever came meanwhile, so that a long survey delays other requests' jobs
// by a turn, not by its length.

const (
	// turnCPU is the CPU time a survey spends between turns: a job that came while it ran waits
	// about this long (more on a busy machine), where it would otherwise wait for the whole
	// survey, or be refused.
	turnCPU = time.Second
	// turnOpens: a turn lasts at least this many times what opening the document cost, so that
	// opening it again after each turn adds at most an eighth to its survey.
	turnOpens = 8
)

// surveyor is one document's survey under way.
type surveyor struct {
	r   *Reader
	p   Pipeline
	adm Admitter
	req Request
	// cost is what the survey is admitted for; release gives that admission back (it changes at
	// every turn).
	cost    int64
	release func()
	doc     *docfile.Document // nil between turns, for a PDF
	cpu     *cpubudget.Budget // the request's; nil: no limit
	price   price

	res    *Result
	todo   []pending
	agreed map[string]float64 // fonts whose probes agreed on earlier pages (see checkLayer)

	opened   time.Duration // CPU time the last opening of the document took
	turnUsed time.Duration // CPU time used since the last turn
	// Of the page being read: the CPU time charged for its probes, and its hidden text.
	probes time.Duration
	hidden docfile.Hidden
}

// survey is the first job: open the document, check the selection, read every selected page's
// facts, answer the text-layer pages and price the others. It runs within the request's Timeout
// until the selection is known, then within the Deadline of its pages (none OCR'd).
//
// Each page is a unit of work ("document page"; see package work): a page whose reading panics
// fails alone. Its CPU time is measured on the thread that reads it (engine calls, text layer,
// layout; see cpubudget.Run), the recognizer's reading of its probes priced by its input (see
// probeCPU), and charged to the request's budget as it is spent.
//
// A TIFF, which holds no engine instance (its pages are decoded in Go, each priced on its own),
// stays open for the page jobs and is returned for the caller to close: its IFD chain is walked
// once per request, not once per page. A PDF is closed here (its instance is charged to this
// job alone), and each page job opens it again.
func (r *Reader) survey(ctx context.Context, p Pipeline, adm Admitter, format docfile.Format, req Request) (_ *Result, _ []pending, tiff *docfile.Document, err error) {
	s := &surveyor{r: r, p: p, adm: adm, req: req, cpu: cpubudget.From(ctx), agreed: map[string]float64{},
		cost: addCost(req.Held, r.engineCost(format), surveyBytes, r.checkCost(p, format))}
	opening, cancel := context.WithDeadline(ctx, req.Start.Add(req.Timeout))
	defer cancel()
	if s.release, err = r.admit(opening, adm, req, s.cost, 0, docfile.Cost{}); err != nil {
		return nil, nil, nil, err
	}
	// Deferred first, run last: the admission goes back once the document is closed.
	defer func() { s.release() }()
	if err := s.open(opening); err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		if err == nil && s.doc.Format() == docfile.FormatTIFF {
			tiff = s.doc
			return
		}
		if s.doc != nil {
			_ = s.doc.Close() // only read: closing frees the engine, there is nothing to save
		}
	}()
	sel, err := s.doc.Select(req.Pages)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := req.Budget.takePages(len(sel)); err != nil {
		return nil, nil, nil, err
	}
	if s.doc.Format() == docfile.FormatTIFF {
		// Every TIFF page needs OCR: a selection over the request's OCR page limit is refused
		// now, before any of its pages is read.
		if err := req.Budget.expectOCRPages(len(sel)); err != nil {
			return nil, nil, nil, err
		}
	}
	ctx, cancelSurvey := context.WithDeadline(ctx, r.Deadline(req, len(sel), 0))
	defer cancelSurvey()
	s.res = &Result{Format: s.doc.Format(), Pages: s.doc.NumPages(), Bytes: s.doc.Bytes(), Read: make([]Page, len(sel))}
	s.price = price{budget: s.cpu, pages: len(sel)}
	if err := s.price.start(); err != nil {
		return nil, nil, nil, err
	}
	for i, n := range sel {
		if err := ended(ctx); err != nil {
			return nil, nil, nil, err
		}
		// Another document of the request may have used up its CPU time or its answer already.
		if err := s.cpu.Charge(0); err != nil {
			return nil, nil, nil, err
		}
		if err := req.Budget.Exceeded(); err != nil {
			return nil, nil, nil, err
		}
		turned := s.turnUsed >= max(r.cfg.Turn, turnOpens*s.opened)
		if turned {
			if err := s.turn(ctx); err != nil {
				return nil, nil, nil, err
			}
		}
		s.probes, s.hidden = 0, docfile.Hidden{}
		used, err := cpubudget.Run(ctx, func(ctx context.Context) error {
			return work.Do(ctx, "document page", func() error {
				// The engine's calls are measured here, with the rest of the page: they must
				// not charge the budget a second time.
				return s.page(cpubudget.With(ctx, nil), i, n)
			})
		})
		s.turnUsed += used + s.probes
		if err != nil && !failPage(s.res, i, n, err, s.hidden) {
			return nil, nil, nil, err
		}
		if err := s.price.page(used+s.probes, turned); err != nil {
			return nil, nil, nil, err
		}
	}
	return s.res, s.todo, nil, nil
}

// ended is nil while ctx runs; then why it ended: the CPU budget's *cpubudget.Error when that ran
// out (see cpubudget.Run), ctx.Err() otherwise.
func ended(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	var ce *cpubudget.Error
	if errors.As(context.Cause(ctx), &ce) {
		return ce
	}
	return ctx.Err()
}

// open opens the document, measuring what opening it costs (see turnOpens).
func (s *surveyor) open(ctx context.Context) error {
	m := cpubudget.StartMeter()
	doc, err := s.r.open(ctx, s.req.Data)
	s.opened = m.Stop()
	if err != nil {
		return err
	}
	s.doc = doc
	return nil
}

// turn gives the survey's admission back and waits for its turn again, behind the jobs that came
// meanwhile (Admitter: the service's Gate.Continue, first come first served, never refused). A
// PDF is closed first, since its engine instance is part of what the admission holds, and opened
// again once admitted: that also gives back whatever the instance had grown to.
func (s *surveyor) turn(ctx context.Context) error {
	if s.doc.Format() == docfile.FormatPDF {
		_ = s.doc.Close() // only read: closing frees the engine
		s.doc = nil
	}
	s.release()
	s.release = func() {}
	release, err := s.r.admit(ctx, s.adm, s.req, s.cost, 0, docfile.Cost{})
	if err != nil {
		return err
	}
	s.release, s.turnUsed = release, 0
	if s.doc == nil {
		return s.open(ctx)
	}
	return nil
}

// fail records err as page i's failure when it is the page's own (see failPage) and returns nil;
// any other error is returned, to end the survey.
func (s *surveyor) fail(i, n int, err error) error {
	if failPage(s.res, i, n, err, s.hidden) {
		return nil
	}
	return err
}

// page reads page n, selected i-th: its facts, then its text layer, checked (see checkLayer),
// which answers the page when it is trusted; any other page is left for OCR, priced.
func (s *surveyor) page(ctx context.Context, i, n int) error {
	r, doc, req := s.r, s.doc, s.req
	var page *docfile.Page
	err := r.op(ctx, n, func(ctx context.Context) (err error) {
		page, err = doc.Page(ctx, n)
		return err
	})
	if err != nil {
		return s.fail(i, n, err)
	}
	s.hidden = page.Hidden
	scale, err := page.Scale(r.cfg.Scale, r.docs.Limits())
	if err != nil {
		return s.fail(i, n, err)
	}
	c := page.RenderCost(scale)
	reason := page.TextUsable().Code
	if req.Mode == Always {
		reason = docfile.ReasonOCRRequested
	}
	var disagreed *docfile.Check
	if req.Mode == Auto && page.TextUsable().Usable {
		var tl *docfile.TextLayer
		err := r.op(ctx, n, func(ctx context.Context) (err error) {
			tl, err = doc.TextLayer(ctx, page, c.Width, c.Height)
			return err
		})
		if err != nil {
			return s.fail(i, n, err)
		}
		s.hidden = tl.Hidden
		// A layer of which nothing is seen is not the page's text: the page is OCR'd. One that
		// OCR of its probes disagrees with is not either.
		reason = docfile.ReasonLayerHidden
		var check *docfile.Check
		if len(tl.Lines) > 0 {
			// The check is a unit of work of its own: a panic in it fails this page alone.
			err := work.Do(ctx, "text-layer check", func() (err error) {
				check, err = s.checkLayer(ctx, page, tl, c)
				if err != nil || !check.Trusted {
					return err
				}
				return s.readDoubted(ctx, page, tl, check, c)
			})
			if err != nil {
				return s.fail(i, n, err)
			}
			reason = check.Reason
		}
		if len(tl.Lines) > 0 && check.Trusted {
			s.res.Read[i] = textLayerPage(page.Number, tl, c.Width, c.Height, check, s.p.Options().RowOverlap)
			if err := req.Budget.addAnswer(answerBytes(s.res.Read[i].Result, req.Words)); err != nil {
				return err
			}
			// Pictures of text the layer lacks (a scanned notice under a heading of real text)
			// are read by OCR in a page job of their own, priced as an OCR'd page; the layer's
			// answer stands until then, and if they cannot be read.
			if tl.Rotation() == 0 {
				if pics := page.Pictures(tl, c.Width, c.Height); len(pics) > 0 {
					layer := s.res.Read[i]
					s.todo = append(s.todo, pending{slot: i, number: n, scale: scale, render: c, hidden: s.hidden,
						reason: check.Reason, layer: &layer, pictures: pics})
				}
			}
			return nil
		}
		if check != nil && check.Probes > 0 {
			disagreed = check
		}
	}
	t := pending{slot: i, number: n, scale: scale, render: c, hidden: s.hidden, reason: reason, check: disagreed}
	if !page.Raster {
		t.points = [2]float64{page.Width, page.Height}
	} else {
		t.raster = page
	}
	s.todo = append(s.todo, t)
	s.res.Read[i] = Page{Number: n, Width: c.Width, Height: c.Height, Source: OCR, Hidden: s.hidden, Reason: reason, Check: disagreed}
	return nil
}

// checkCost is what checking text layers adds to the survey: the recognizer on one strip of
// probes.
func (r *Reader) checkCost(p Pipeline, format docfile.Format) int64 {
	if r.cfg.LayerCheck <= 0 || format != docfile.FormatPDF {
		return 0
	}
	h := int64(r.probeRows() * (docfile.ProbeHeight + 1))
	return p.Options().ModelBytes(docfile.MaxProbeSide, int(h)) + 4*docfile.MaxProbeSide*h
}

// checkLayer reads up to LayerCheck probes of the page's text layer (a few words of a line each,
// one per font first) with the recognizer and judges the layer by them (see docfile.Judge). A
// layer that gives no probe (too little text), or every layer when the check is off, is taken
// by its structure alone: ReasonLayerUnchecked. A layer mostly in glyphs the engine did not draw
// is taken as its Unicode says, ReasonLayerUndrawn: the drawing shows nothing OCR could read.
//
// agreed holds the fonts that agreed on earlier pages of the document: a page drawn with these
// alone is not probed (see docfile.Known), and the fonts this page's probes agree on are added.
// A book pays for the check of its first page or two; a document whose every page brings fonts
// of its own pays on every page, within its CPU budget and its turns like any other page.
func (s *surveyor) checkLayer(ctx context.Context, page *docfile.Page, tl *docfile.TextLayer, c docfile.Cost) (*docfile.Check, error) {
	if tl.Invisible {
		return s.checkInvisible(ctx, page, tl, c)
	}
	if tl.MostlyUndrawn() {
		return &docfile.Check{Trusted: true, Reason: docfile.ReasonLayerUndrawn}, nil
	}
	if s.r.cfg.LayerCheck <= 0 {
		return &docfile.Check{Trusted: true, Reason: docfile.ReasonLayerUnchecked}, nil
	}
	if check, ok := docfile.Known(tl.Fonts(), s.agreed); ok {
		return &check, nil
	}
	probes := tl.Probes(s.r.cfg.LayerCheck)
	if len(probes) == 0 {
		return &docfile.Check{Trusted: true, Reason: docfile.ReasonLayerUnchecked}, nil
	}
	got, err := s.probe(ctx, page, probes, c)
	if err != nil {
		return nil, err
	}
	readings := make([]docfile.Reading, len(got))
	for i, g := range got {
		readings[i] = docfile.Reading{Text: g.Text, Score: g.Score}
	}
	check := docfile.Judge(probes, readings, s.p.Reads)
	if check.Trusted {
		for f, sim := range check.Fonts {
			s.agreed[f] = sim
		}
	}
	return &check, nil
}

// checkInvisible judges an invisible layer over a page image (an earlier OCR layer: see
// docfile.Page.InvisibleLayer) by OCR of its probes alone, and strictly: every probe compared
// must agree (one that disagrees, or one in a script OCR cannot read, and the page is OCR'd). No
// check (it is off, or the layer gives no probe) is no proof, and the page is OCR'd
// (ReasonLayerHidden); fonts that agreed on earlier pages prove nothing of this page's text,
// and are neither asked nor told.
func (s *surveyor) checkInvisible(ctx context.Context, page *docfile.Page, tl *docfile.TextLayer, c docfile.Cost) (*docfile.Check, error) {
	hidden := &docfile.Check{Reason: docfile.ReasonLayerHidden}
	if s.r.cfg.LayerCheck <= 0 {
		return hidden, nil
	}
	probes := tl.Probes(s.r.cfg.LayerCheck)
	if len(probes) == 0 {
		return hidden, nil
	}
	got, err := s.probe(ctx, page, probes, c)
	if err != nil {
		return nil, err
	}
	readings := make([]docfile.Reading, len(got))
	for i, g := range got {
		readings[i] = docfile.Reading{Text: g.Text, Score: g.Score}
	}
	check := docfile.Judge(probes, readings, s.p.Reads)
	switch {
	case check.Disagreed > 0:
		// A probe the pixels do not bear out: the layer is not taken, even in part.
		check.Trusted, check.Reason, check.Fonts, check.Doubted = false, docfile.ReasonLayerDisagrees, nil, nil
	case check.Reason != docfile.ReasonLayerAgrees:
		// Taken for a script OCR cannot read: not proven.
		check.Trusted, check.Reason, check.Fonts = false, docfile.ReasonLayerHidden, nil
	}
	return &check, nil
}

// The lines of a trusted layer OCR reads again (see docfile.TextLayer.Doubted) hold at most
// maxDoubted of its characters and number at most maxDoubtedLines: a layer more of which is in
// doubt is not the page's text, and the page is OCR'd whole.
const (
	maxDoubted      = 0.25
	maxDoubtedLines = 32
)

// readDoubted has OCR read again, line by line, the lines of a trusted layer that its check
// doubts (a font whose probes disagreed: ornaments, a code font, a wrong map) or that are garbled,
// in place of the layer's text; the rest of the layer stands. Where those lines are too many, the
// check no longer trusts the layer. A line OCR reads nothing in (an ornament row) is dropped.
func (s *surveyor) readDoubted(ctx context.Context, page *docfile.Page, tl *docfile.TextLayer, check *docfile.Check, c docfile.Cost) error {
	idx, share := tl.Doubted(*check)
	if len(idx) == 0 {
		return nil
	}
	if share > maxDoubted || len(idx) > maxDoubtedLines {
		check.Trusted, check.Reason, check.Fonts = false, docfile.ReasonLayerDisagrees, nil
		return nil
	}
	probes := make([]docfile.Probe, len(idx))
	for k, i := range idx {
		probes[k] = docfile.LineProbe(tl.Lines[i])
	}
	got, err := s.probe(ctx, page, probes, c)
	if err != nil {
		return err
	}
	for k, i := range idx {
		var rd ocr.Reading
		if k < len(got) {
			rd = got[k]
		}
		tl.Lines[i].ReadAs(rd.Text, rd.Score)
	}
	kept := tl.Lines[:0]
	for _, l := range tl.Lines {
		if l.Text != "" {
			kept = append(kept, l)
		}
	}
	tl.Lines = kept
	return nil
}

// readProbes has the recognizer read the probes drawn in strip, priced at its estimate (see
// probeCPU): planned before, charged after. The recognizer runs its batches on goroutines of its
// own, whose threads the survey's thread clock does not see; it is run on a goroutine of its own
// too, for which the survey's thread waits without computing, so that none of it is counted
// twice. A panic in it is raised again here, in the check's unit.
// probe draws the probes of page (whose render is c) into one strip, under the engine's
// operation limits, and reads them: one reading a probe, in order. A strip holds at most
// probeRows probes, the strip the survey's memory plan holds (see checkCost): more probes (a
// page's every meaningful font, the doubted lines read again) are drawn and read a strip at a
// time.
func (s *surveyor) probe(ctx context.Context, page *docfile.Page, probes []docfile.Probe, c docfile.Cost) ([]ocr.Reading, error) {
	rows := s.r.probeRows()
	out := make([]ocr.Reading, 0, len(probes))
	for start := 0; start < len(probes); start += rows {
		batch := probes[start:min(start+rows, len(probes))]
		var strip *image.RGBA
		var quads []geom.Quad
		err := s.r.op(ctx, page.Number, func(ctx context.Context) (err error) {
			strip, quads, err = s.doc.DrawProbes(ctx, page, batch, c.Width, c.Height)
			return err
		})
		if err != nil {
			return nil, err
		}
		got, err := s.readProbes(ctx, strip, quads)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// probeRows is how many probes one strip holds: the survey's memory plan is for a strip of this
// many (see checkCost).
func (r *Reader) probeRows() int { return max(1, r.cfg.LayerCheck) }

func (s *surveyor) readProbes(ctx context.Context, strip image.Image, quads []geom.Quad) ([]ocr.Reading, error) {
	est := probeCPU(quads)
	if err := s.cpu.Plan(est); err != nil {
		return nil, err
	}
	var (
		got   []ocr.Reading
		err   error
		carry work.Carrier
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer carry.Recover()
		got, err = s.p.ReadCrops(ctx, strip, quads)
	}()
	<-done
	carry.Raise()
	s.probes += est
	if cerr := s.cpu.Charge(est); cerr != nil && err == nil {
		err = cerr
	}
	return got, err
}

// probeCPU is what the recognizer's reading of probes in quads costs in CPU time: each crop is
// read at the recognizer's height (docfile.ProbeHeight), its width in proportion, at
// recognizerCPU a pixel.
func probeCPU(quads []geom.Quad) time.Duration {
	var px float64
	for _, q := range quads {
		if h := q.Height(); h > 0 {
			px += docfile.ProbeHeight * docfile.ProbeHeight * math.Min(q.Width()/h, docfile.MaxProbeSide/docfile.ProbeHeight)
		}
	}
	return time.Duration(px * float64(recognizerCPU))
}

// textLayerPage turns a page's visible text-layer lines, in a w×h pixel space over the page, into
// a page result shaped like the pipeline's, laid out in blocks and reading order as OCR regions
// are (ocr.Arrange, with the pipeline's row overlap). Its confidence, and every region's and
// word's, is the similarity OCR's reading of its probes had to the layer (of its fonts' probes on
// an earlier page, when it inherited their verdict); 1 where none was compared.
func textLayerPage(number int, tl *docfile.TextLayer, w, h int, check *docfile.Check, rowOverlap float64) Page {
	lines := tl.Lines
	conf := 1.0
	if check.Agreed > 0 || check.Inherited {
		conf = check.Similarity
	}
	score := float32(conf)
	mixed := slices.ContainsFunc(lines, func(l docfile.Line) bool { return l.ByOCR })
	// Laid out, and answered, at the turn most of its text reads at, as OCR of the page would.
	res := &ocr.Result{Format: "pdf", Width: w, Height: h, Rotation: tl.Rotation(), Regions: make([]ocr.Region, len(lines))}
	for i, l := range lines {
		sc, src := score, ""
		if mixed {
			src = string(TextLayer)
		}
		if l.ByOCR {
			sc, src = l.Score, string(OCR)
		}
		words := make([]ocr.Word, len(l.Words))
		for k, wd := range l.Words {
			words[k] = ocr.Word{Text: wd.Text, Score: sc, Quad: wd.Quad}
		}
		res.Regions[i] = ocr.Region{Quad: l.Quad, Text: l.Text, Score: sc, Vertical: vertical(l.Quad), Words: words, Source: src}
	}
	ocr.Arrange(res, rowOverlap)
	var shown *docfile.Check
	if check.Probes > 0 {
		shown = check
	}
	return Page{Number: number, Width: w, Height: h, Source: TextLayer, Reason: check.Reason, Confidence: conf, Check: shown,
		Result: res, Hidden: tl.Hidden}
}

// vertical reports whether a line's text runs up or down the page.
func vertical(q geom.Quad) bool {
	a := math.Abs(math.Mod(q.Angle(), 180))
	return a > 45 && a < 135
}
