// Package ocr is the OCR pipeline: decode → detect (pre-process → infer → DB post-process) →
// crop → classify 0°/180° → recognize (batch → infer → CTC) → reading order.
//
// Everything but tensor inference happens here, in Go; inference goes through the small [Runtime]
// interface so the same pipeline runs on the embedded ONNX Runtime or on a Triton server.
package ocr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/ctc"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/memlimit"
)

// Pipeline runs OCR on images. It holds no per-request state and is safe for concurrent use.
type Pipeline struct {
	rt      Runtime
	charset *ctc.Charset // the dictionary of rec
	opt     Options
	lang    string                  // what rec reads (DefaultLang, or a language pack's code)
	rec     Model                   // the recognizer this pipeline reads with
	langs   map[string]*ctc.Charset // every language loaded, by code, the default included
}

// New builds a pipeline over a runtime. The charset must match the recognizer's output classes.
// Options.RuntimeMemory, left zero, is what the runtime says it allocates (MemoryReporter). langs
// are the language packs the runtime also holds recognizers for (RecognizerFor each code); the
// pipeline reads with the default recognizer until Lang picks another.
func New(rt Runtime, charset *ctc.Charset, opt Options, langs ...Language) (*Pipeline, error) {
	if rt == nil || charset == nil {
		return nil, errors.New("ocr: runtime and charset are required")
	}
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("ocr: invalid options: %w", err)
	}
	byCode := map[string]*ctc.Charset{DefaultLang: charset}
	for _, l := range langs {
		if l.Charset == nil || l.Code == "" || strings.ContainsAny(l.Code, ", ") {
			return nil, fmt.Errorf("ocr: language %q needs a code and a charset", l.Code)
		}
		if _, dup := byCode[l.Code]; dup {
			return nil, fmt.Errorf("ocr: language %q given twice", l.Code)
		}
		byCode[l.Code] = l.Charset
	}
	return &Pipeline{rt: rt, charset: charset, opt: withRuntimeMemory(rt, opt), lang: DefaultLang, rec: Recognizer, langs: byCode}, nil
}

// Options returns the settings the pipeline runs with.
func (p *Pipeline) Options() Options { return p.opt }

// Region is one recognized piece of text: a detected box and what it says.
type Region struct {
	// Quad is the box in original-image pixels, clockwise from the top-left corner of the text
	// (for text read bottom to top or upside down, that corner is not the top-left of the image).
	Quad     geom.Quad
	Text     string
	Score    float32 // recognition confidence in [0,1]
	Vertical bool    // the box was taller than wide and was turned 90° to be read
	Flipped  bool    // the direction classifier turned the crop 180°
	// TopDown: the region is a column of upright CJK characters read top to bottom (vertical
	// text); Quad then starts at the column's top-right corner.
	TopDown bool
	Row     int // row index in reading order (0-based)
	Order   int // position in reading order (0-based)
	// Words are the region's words with their boxes, located from the recognizer's timesteps.
	Words []Word
	// Source is where a region of a page read partly from its text layer and partly by OCR
	// came from: "text-layer" or "ocr"; empty on a page read one way.
	Source string
}

// Result is the outcome of one image.
type Result struct {
	Format        string // detected image format ("jpeg", "png", …)
	Width, Height int    // of the image as sent, once its EXIF orientation is applied
	// Rotation is how far, in degrees clockwise (0, 90, 180 or 270), the image must be turned
	// for its text to read upright: 90 for a page lying on its left side, whose lines run bottom
	// to top. It is found from the detector's boxes (lines that run up the page) and the
	// direction classifier's votes on the widest lines, before anything is recognized; every
	// crop is then cut upright for it. A page of a line or two, too few to vote, takes it from
	// how its lines read (see readRotation) and is read again upright. Boxes stay in the
	// coordinates of the image as sent (Width × Height), each starting at its text's own
	// top-left corner.
	Rotation int
	Regions  []Region
	// Blocks group the regions into what is read together (columns, then paragraphs; a table),
	// in reading order (see Arrange).
	Blocks []Block
	// Text is every region's text in reading order, block by block (blocks separated by an empty
	// line): one line per row, regions of a row separated by a space.
	Text string
	// Warning says, for people, what of the image could not be decoded (imaging.Decoded.Damaged):
	// the answer covers only the rest.
	Warning string
	Timings Timings
	// InferenceWall is the wall time during which at least one model call was running. It equals
	// the sum of the inference stages when calls run one at a time, and is less when recognizer
	// batches overlap; end-to-end time minus this is what the pipeline itself added.
	InferenceWall time.Duration
}

// Stage names one step of the pipeline, for timing.
type Stage int

// The stages, in pipeline order.
const (
	StageDecode Stage = iota
	StageDetPre
	StageDetInfer
	StageDetPost
	StageCrop
	StageClsPre
	StageClsInfer
	StageRecPre
	StageRecInfer
	StageCTC
	StageOrder
	numStages
)

var stageNames = [numStages]string{"decode", "det_pre", "det_infer", "db_post", "crops", "cls_pre", "cls_infer", "rec_pre", "rec_infer", "ctc", "order"}

func (s Stage) String() string {
	if s < 0 || s >= numStages {
		return fmt.Sprintf("stage(%d)", int(s))
	}
	return stageNames[s]
}

// Stages lists every stage in pipeline order.
func Stages() []Stage {
	out := make([]Stage, numStages)
	for i := range out {
		out[i] = Stage(i)
	}
	return out
}

// Timings holds the time spent in each stage of one run. Inference stages hold runtime time only,
// so the rest is what the pipeline itself costs.
type Timings [numStages]time.Duration

// Inference is the time spent waiting on the model runtime.
func (t *Timings) Inference() time.Duration {
	return t[StageDetInfer] + t[StageClsInfer] + t[StageRecInfer]
}

// Total is the sum of all stages.
func (t *Timings) Total() time.Duration {
	var d time.Duration
	for _, v := range t {
		d += v
	}
	return d
}

// add adds o's times to t.
func (t *Timings) add(o *Timings) {
	for i := range t {
		t[i] += o[i]
	}
}

// track adds the time since start to stage s and returns now, for chaining.
func (t *Timings) track(s Stage, start time.Time) time.Time {
	now := time.Now()
	t[s] += now.Sub(start)
	return now
}

// Run decodes an image and recognizes its text. Errors from decoding wrap the imaging package's
// sentinels; errors from the runtime wrap ErrRuntime*; a cancelled or expired ctx yields ctx.Err().
// It is RunAdmitted with no admission to hold, for callers that admit nothing (tools, tests).
func (p *Pipeline) Run(ctx context.Context, data []byte) (*Result, error) {
	h, err := p.Inspect(ctx, data)
	if err != nil {
		return nil, err
	}
	return p.RunAdmitted(ctx, data, h, nil)
}

// RunAdmitted is Run for a job admitted under lease by the cost of h, the header Inspect read from
// data (which the decode is held to, and does not read again): decoding runs where the deadline
// can abandon it (a 50-megapixel progressive JPEG takes seconds inside image/jpeg), and holds
// lease until it really ends, so that its memory stays admitted that long.
func (p *Pipeline) RunAdmitted(ctx context.Context, data []byte, h imaging.Header, lease imaging.Lease) (*Result, error) {
	var tm Timings
	start := time.Now()
	dec, err := imaging.DecodeHeader(ctx, data, h, lease)
	if err != nil {
		return nil, err
	}
	tm.track(StageDecode, start)
	// The Go stages cannot be interrupted midway, so the deadline is checked between them (and
	// the runtime stops inference itself): an expired request stops at the next boundary.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	px := int64(dec.Width) * int64(dec.Height)
	// dec is not used past this call, so a page that detection decodes again whole (see detect)
	// does not keep its half-size pixels alive beside the whole ones.
	res, read, err := p.recognizeImage(ctx, dec, &tm)
	if max(px, read) >= memlimit.ReleasePixels {
		// The page is garbage from here on; hand it back now rather than when the Go runtime's
		// background scavenger gets to it.
		memlimit.Release()
	}
	if err != nil {
		return nil, err
	}
	res.Timings = tm
	return res, nil
}

// RunImage recognizes the text of an already decoded, upright image.
func (p *Pipeline) RunImage(ctx context.Context, dec imaging.Decoded) (*Result, error) {
	var tm Timings
	res, _, err := p.recognizeImage(ctx, dec, &tm)
	if err != nil {
		return nil, err
	}
	res.Timings = tm
	return res, nil
}

// recognizeImage runs detection and recognition on dec, and also returns how many pixels the
// image it read has (dec's, or the whole page's when detection decoded it again).
func (p *Pipeline) recognizeImage(ctx context.Context, dec imaging.Decoded, tm *Timings) (*Result, int64, error) {
	// This run's own view of the pipeline, whose runtime also clocks inference.
	clock := &inferClock{}
	run := *p
	run.rt = clockedRuntime{Runtime: p.rt, clock: clock}
	res, read, err := run.recognizeWith(ctx, dec, tm)
	if err != nil {
		return nil, read, err
	}
	res.InferenceWall = clock.total
	return res, read, nil
}

func (p *Pipeline) recognizeWith(ctx context.Context, dec imaging.Decoded, tm *Timings) (*Result, int64, error) {
	warning := dec.Damaged
	quads, dec, err := p.detect(ctx, dec, tm)
	if err != nil {
		return nil, 0, err
	}
	read := int64(dec.Width) * int64(dec.Height)
	if err := ctx.Err(); err != nil {
		return nil, read, err
	}
	pc, err := p.orient(ctx, dec.Image, quads, tm)
	if err != nil {
		return nil, read, err
	}
	// turns is how far the image the crops are cut from is turned from dec's (clockwise).
	turns := 0
	img := dec.Image
	if pc.rotation != 0 {
		// A page lying on its side or upside down is turned upright and detected again: the
		// detector, trained on upright text, found 0.81 of sroie-dev's lines turned 90° (det
		// hmean) against 0.92 upright. Only such pages pay for the second detection. The turned
		// copy takes the image's place (the same bytes for JPEG and gray pages), and its boxes
		// are turned back into the image's coordinates below.
		turns = pc.rotation
		up, err := p.turned(ctx, dec, turns, &pc, tm)
		if err != nil {
			return nil, read, err
		}
		if pc.rotation != 0 {
			// A sideways page whose turn was read the wrong way round reads upside down now:
			// the second look turns it the rest of the way.
			turns = (turns + pc.rotation) % 360
			if up, err = p.turned(ctx, up, pc.rotation, &pc, tm); err != nil {
				return nil, read, err
			}
		}
		img = up.Image
	}
	// What a third look still finds is left to the crops, which orient has turned for it.
	rotation := (turns + pc.rotation) % 360
	regions, err := p.recognize(ctx, img, pc, tm)
	if err != nil {
		return nil, read, err
	}
	if r := readRotation(regions); turns == 0 && pc.few && r != 0 {
		// A page of a line or two gave no page vote, and its lines all read turned the same
		// way: the page is turned so, and is read again upright, as a page the vote turned
		// (its boxes then found on the upright page, and its lines in their order).
		up, err := p.turned(ctx, dec, r, &pc, tm)
		if err != nil {
			return nil, read, err
		}
		again, err := p.recognize(ctx, up.Image, pc, tm)
		if err != nil {
			return nil, read, err
		}
		rotation = r
		if len(again) > 0 {
			turns, regions = r, again
			rotation = (r + pc.rotation) % 360
		}
	}
	if p.opt.ReadColumns {
		regions = stackColumns(regions)
	}
	if turns != 0 {
		W, H := float64(dec.Width), float64(dec.Height)
		for i := range regions {
			r := &regions[i]
			r.Quad = unturn(r.Quad, turns, W, H)
			for j := range r.Words {
				r.Words[j].Quad = unturn(r.Words[j].Quad, turns, W, H)
			}
		}
	}
	width, height := dec.FullSize()
	if f := float64(dec.Factor()); f > 1 {
		// Decoded shrunk: boxes go back to the file's pixels, as the API promises.
		W, H := float64(width), float64(height)
		for i := range regions {
			r := &regions[i]
			r.Quad = r.Quad.Scale(f, f, W, H)
			for j := range r.Words {
				r.Words[j].Quad = r.Words[j].Quad.Scale(f, f, W, H)
			}
		}
	}
	res := &Result{
		Format:   dec.Format,
		Width:    width,
		Height:   height,
		Rotation: claimed(rotation, regions),
		Regions:  regions,
		Warning:  warning,
	}
	start := time.Now()
	Arrange(res, p.opt.RowOverlap)
	tm.track(StageOrder, start)
	return res, read, nil
}

// claimed is the rotation a page answers: none where no text was read. A page turned by the
// shapes of its marks, whose lines then all read as nothing or score too low to keep, has no text
// to show the turn was right, and a client that turns the page by it turns a picture, or a blank
// page, for nothing.
func claimed(rotation int, regions []Region) int {
	for _, r := range regions {
		if strings.TrimSpace(r.Text) != "" {
			return rotation
		}
	}
	return 0
}

// readRotation is how far clockwise the page must turn for its lines to read upright, as the
// lines were read: 180 when every one was read turned 180° (Flipped), 90 when every one was a
// tall box read bottom to top, 270 when every one was read top to bottom; 0 when they read
// upright or disagree. A column of upright characters (TopDown) reads upright. A region of one
// character has no say: a lone "1" is a tall box, read turned, whichever way up the page is.
func readRotation(regions []Region) int {
	rotation := -1
	for _, r := range regions {
		if len(inkRunes(r.Text)) < 2 {
			continue
		}
		q := 0
		switch {
		case r.TopDown:
		case r.Vertical && r.Flipped:
			q = 270
		case r.Vertical:
			q = 90
		case r.Flipped:
			q = 180
		}
		if rotation >= 0 && q != rotation {
			return 0
		}
		rotation = q
	}
	return max(rotation, 0)
}

// turned turns dec clockwise by degrees, detects its boxes again and plans its crops into pc
// (whose rotation is then what the turned page says of itself).
func (p *Pipeline) turned(ctx context.Context, dec imaging.Decoded, degrees int, pc *pageCrops, tm *Timings) (imaging.Decoded, error) {
	start := time.Now()
	up := dec.Turned(degrees)
	tm.track(StageCrop, start)
	quads, up, err := p.detect(ctx, up, tm)
	if err != nil {
		return imaging.Decoded{}, err
	}
	if *pc, err = p.orient(ctx, up.Image, quads, tm); err != nil {
		return imaging.Decoded{}, err
	}
	return up, nil
}

// unturn maps q from the image turned rotation degrees clockwise back into the W×H image it was
// turned from, corner for corner.
func unturn(q geom.Quad, rotation int, W, H float64) geom.Quad {
	for i, pt := range q {
		switch rotation {
		case 90: // turned (x, y) came from (y, H-x)
			q[i] = geom.Point{X: pt.Y, Y: H - pt.X}
		case 180:
			q[i] = geom.Point{X: W - pt.X, Y: H - pt.Y}
		case 270: // turned (x, y) came from (W-y, x)
			q[i] = geom.Point{X: W - pt.Y, Y: pt.X}
		}
	}
	return q
}

// inferClock measures the wall time during which at least one model call is running.
type inferClock struct {
	mu     sync.Mutex
	active int
	since  time.Time
	total  time.Duration
}

// clockedRuntime runs calls on Runtime and records them on clock. It also charges what a call
// costs beyond the calling thread to the request's CPU budget (package cpubudget): the calling
// thread is charged by the Run it works under; a model run on a pool of threads (ThreadReporter)
// keeps the pool's other threads busy for about as long, which no meter of this process's
// goroutines sees.
type clockedRuntime struct {
	Runtime
	clock *inferClock
}

// inferCharged runs the call, and charges the pool's other threads: threads−1 times the CPU time
// the calling thread spent in it.
func (r clockedRuntime) inferCharged(ctx context.Context, m Model, in Tensor) (Tensor, error) {
	tr, ok := r.Runtime.(ThreadReporter)
	b := cpubudget.From(ctx)
	if !ok || b == nil || tr.Threads(m) <= 1 {
		return r.Runtime.Infer(ctx, m, in)
	}
	meter := cpubudget.StartMeter()
	out, err := r.Runtime.Infer(ctx, m, in)
	_ = b.Charge(time.Duration(tr.Threads(m)-1) * meter.Stop()) // past the budget: the Run watching stops the work
	return out, err
}

func (r clockedRuntime) Infer(ctx context.Context, m Model, in Tensor) (Tensor, error) {
	c := r.clock
	c.mu.Lock()
	if c.active == 0 {
		c.since = time.Now()
	}
	c.active++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.active--
		if c.active == 0 {
			c.total += time.Since(c.since)
		}
		c.mu.Unlock()
	}()
	return r.inferCharged(ctx, m, in)
}
