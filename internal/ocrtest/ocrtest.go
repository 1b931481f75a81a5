// Package ocrtest is a stand-in for the PP-OCR models, for the fast test tier (go test -short): a
// Runtime that answers the pipeline's three model calls from the pixels it is given, closely
// enough to the real networks that the real pipeline code — resizing, DB post-processing, crops,
// batching, CTC decoding, reading order, and the HTTP service on top — produces real regions with
// known text, in milliseconds and without ONNX Runtime or model files.
//
// The convention between a test page and the runtime: text is drawn as solid gray blocks (Page);
// the detector marks dark pixels as text; the recognizer reads the gray level of the ink in each
// crop and answers the word of that level from Words, through a small test charset (Charset). The
// classifier always says 0°. Like the real runtimes, it honours the context, checks input shapes,
// and wraps its failures in the ocr package's errors; Fail injects failures.
//
// The full test tier runs the real models; nothing in the service imports this package.
package ocrtest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/ocrgate/ocrgate/service/ctc"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// Alphabet is the test charset's characters, in dictionary order (class 1 is 'A'). The space is
// the charset's last class, as in PaddleOCR's dictionaries.
const Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:-/()"

// Charset is the CTC charset the runtime's recognizer outputs are meant for.
func Charset() *ctc.Charset {
	cs, err := ctc.LoadCharset(strings.NewReader(strings.Join(strings.Split(Alphabet, ""), "\n")))
	if err != nil {
		panic(err) // the alphabet is a constant
	}
	return cs
}

// Words are the texts the recognizer answers: a crop whose ink has gray level Ink(k) reads as
// Words[k]. Every character is in Alphabet or a space.
var Words = []string{
	"TOTAL 9.00",
	"CASH 10.00",
	"CHANGE 1.00",
	"THANK YOU",
	"INVOICE NO: 2024-1121",
	"JOHOR BAHRU",
	"ITEM (2) 4.50",
	"DATE 25/12/2018",
	"GST 0.54",
	"ROUNDING 0.01",
	"QTY 3",
	"SUBTOTAL 8.46",
}

// inkStep is the gray-level step between words. The darkest level is 0; every level stays well
// below the detector's threshold (about 100 of 255), and the recognizer tells levels apart.
const inkStep = 8

// Ink is the gray level that makes a block read as Words[k].
func Ink(k int) color.Gray { return color.Gray{Y: uint8(k * inkStep)} }

// Block is one line of "text" on a test page: a solid rectangle that reads as Words[Word].
type Block struct {
	Rect image.Rectangle
	Word int
}

// Page draws blocks on a white w×h page.
func Page(w, h int, blocks ...Block) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for _, b := range blocks {
		draw.Draw(img, b.Rect, &image.Uniform{Ink(b.Word)}, image.Point{}, draw.Src)
	}
	return img
}

// PNG encodes img (lossless, so the ink levels survive).
func PNG(img image.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // in-memory encoding of a valid image does not fail
	}
	return buf.Bytes()
}

// Receipt is a small page of four lines, two of them on one row, and the text it reads as in
// reading order (one line per row, a row's regions joined by a space).
func Receipt() (img *image.Gray, blocks []Block, text string) {
	blocks = []Block{
		{image.Rect(60, 40, 420, 76), 4},    // INVOICE NO: 2024-1121
		{image.Rect(60, 120, 260, 150), 6},  // ITEM (2) 4.50, left of
		{image.Rect(320, 120, 520, 150), 2}, // CHANGE 1.00 on the same row
		{image.Rect(60, 200, 300, 232), 0},  // TOTAL 9.00
	}
	return Page(600, 280, blocks...), blocks, "INVOICE NO: 2024-1121\nITEM (2) 4.50 CHANGE 1.00\nTOTAL 9.00"
}

// Runtime is a fake ocr.Runtime; the zero value is ready to use and safe for concurrent use.
type Runtime struct {
	// Fail, when set, is asked before every call; a non-nil error is returned as the call's
	// failure (wrap it in ocr.ErrRuntimeUnavailable, ocr.ErrRuntimeFailed, … as a runtime would).
	Fail func(m ocr.Model) error
	// Delay makes every call take this long, or end early with the context's error.
	Delay time.Duration

	mu    sync.Mutex
	calls map[ocr.Model]int
}

// Calls reports how many times model m was run.
func (r *Runtime) Calls(m ocr.Model) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[m]
}

// Infer runs model m on in, as the real models would on a test page.
func (r *Runtime) Infer(ctx context.Context, m ocr.Model, in ocr.Tensor) (ocr.Tensor, error) {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[ocr.Model]int{}
	}
	r.calls[m]++
	r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return ocr.Tensor{}, err
	}
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ocr.Tensor{}, ctx.Err()
		}
	}
	if r.Fail != nil {
		if err := r.Fail(m); err != nil {
			return ocr.Tensor{}, fmt.Errorf("%s: %w", m, err)
		}
	}
	if len(in.Shape) != 4 || in.Shape[1] != 3 || int64(len(in.Data)) != in.Shape[0]*3*in.Shape[2]*in.Shape[3] {
		return ocr.Tensor{}, fmt.Errorf("%s: input shape %v with %d values: %w", m, in.Shape, len(in.Data), ocr.ErrRuntimeFailed)
	}
	n, h, w := int(in.Shape[0]), int(in.Shape[2]), int(in.Shape[3])
	switch m {
	case ocr.Detector:
		return detect(in, n, h, w), nil
	case ocr.Classifier:
		out := ocr.Tensor{Shape: []int64{int64(n), 2}, Data: make([]float32, 2*n)}
		for i := range n {
			out.Data[2*i] = 1 // 0°, sure
		}
		return out, nil
	case ocr.Recognizer:
		if h != 48 {
			return ocr.Tensor{}, fmt.Errorf("%s: height %d, the recognizer reads 48: %w", m, h, ocr.ErrRuntimeFailed)
		}
		return recognize(in, n, w), nil
	}
	return ocr.Tensor{}, fmt.Errorf("%s: %w", m, ocr.ErrModelMissing)
}

// detect marks a pixel as text (probability 1) where the first input channel is below zero: the
// pixel is darker than the normalization's mean, about 100 of 255 for ImageNet's.
func detect(in ocr.Tensor, n, h, w int) ocr.Tensor {
	out := ocr.Tensor{Shape: []int64{int64(n), 1, int64(h), int64(w)}, Data: make([]float32, n*h*w)}
	for i := range n {
		plane := in.Data[i*3*h*w : i*3*h*w+h*w]
		for k, v := range plane {
			if v < 0 {
				out.Data[i*h*w+k] = 1
			}
		}
	}
	return out
}

// recognize reads each crop's darkest value (the recognizer's input is (v/255-0.5)/0.5, so -1 is
// black; padding is 0) as an ink level and spells Words[level] over the timesteps from the second
// one, a blank between repeated characters as a CTC model needs; a word longer than the crop's
// timesteps is cut, as a real recognizer would run out of width. A crop without ink reads as
// nothing.
func recognize(in ocr.Tensor, n, w int) ocr.Tensor {
	cs := charset()
	classes := cs.classes
	steps := w / 8 // PP-OCRv4's recognizer downsamples width by 8
	out := ocr.Tensor{Shape: []int64{int64(n), int64(steps), int64(classes)}, Data: make([]float32, n*steps*classes)}
	plane := 48 * w
	for i := range n {
		darkest := float32(math.Inf(1))
		for _, v := range in.Data[i*3*plane : i*3*plane+plane] {
			darkest = min(darkest, v)
		}
		word := ""
		if level := float64(darkest+1) * 127.5; level < 100 {
			if k := int(math.Round(level / inkStep)); k < len(Words) {
				word = Words[k]
			}
		}
		row := out.Data[i*steps*classes : (i+1)*steps*classes]
		for t := range steps {
			row[t*classes] = 1 // blank
		}
		t, prev := 1, rune(-1)
		for _, c := range word {
			if c == prev {
				t++ // a blank between repeated characters, or CTC collapses them
			}
			if t >= steps {
				break
			}
			p := row[t*classes : (t+1)*classes]
			p[0], p[cs.index[c]] = 0.02, 0.98
			t, prev = t+1, c
		}
	}
	return out
}

// testCharset is the class layout of Charset: 0 blank, Alphabet, then the space.
type testCharset struct {
	classes int
	index   map[rune]int
}

var charset = sync.OnceValue(func() testCharset {
	cs := testCharset{index: map[rune]int{}}
	for i, c := range []rune(Alphabet) {
		cs.index[c] = i + 1
	}
	cs.index[' '] = len([]rune(Alphabet)) + 1
	cs.classes = len([]rune(Alphabet)) + 2
	return cs
})
