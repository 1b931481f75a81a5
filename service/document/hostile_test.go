package document_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document"
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

// fullPageRects fills the whole page n times: trivial to parse, endless to render.
func fullPageRects(n int) []byte {
	return bytes.Repeat([]byte("0 0 595 842 re f\n"), n)
}

// nested is an array nested depth levels deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func hostileSet() []struct {
	name     string
	data     []byte
	deadline time.Duration
	// want lists the acceptable outcomes of opening, reading page 1 and rendering it: nil means
	// success is acceptable too (a bounded result); the deadline is acceptable where decoding is
	// legitimately slow (a loaded machine, the race detector).
	want []error
} {
	content := stream("", []byte("BT /F1 12 Tf 72 720 Td (HELLO) Tj ET"))
	font := "/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>"
	imagePage := func(dict string, data []byte) []byte {
		return onePage("0 0 595 842", "/XObject << /Im1 5 0 R >>",
			stream("", []byte("q 595 0 0 842 0 0 cm /Im1 Do Q")),
			stream(dict, data))
	}
	zeros := deflate(make([]byte, 64<<20)) // 64 MiB of zeros in ~64 KiB
	return []struct {
		name     string
		data     []byte
		deadline time.Duration
		want     []error
	}{
		{"page count in the millions", rawPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 5000000 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
			content,
		), 30 * time.Second, []error{nil, document.ErrTooManyPages, document.ErrCorrupt}},
		{"page tree with 20000 kids", rawPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids ["+strings.Repeat("3 0 R ", 20000)+"] /Count 20000 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
			content,
		), 30 * time.Second, []error{nil, document.ErrTooManyPages, document.ErrCorrupt}},
		{"page 300 inches wide", onePage("0 0 21600 842", font, content),
			30 * time.Second, []error{document.ErrTooLarge}},
		{"page 200 inches square", onePage("0 0 14400 14400", font, content),
			30 * time.Second, []error{nil}},
		{"page tree that contains itself", rawPDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
			content,
		), 30 * time.Second, []error{nil, document.ErrCorrupt}},
		{"resources that refer to themselves", onePage("0 0 595 842", "/Font 5 0 R /XObject 5 0 R", content,
			"<< /F1 5 0 R /Self 5 0 R >>"), 30 * time.Second, []error{nil, document.ErrCorrupt}},
		{"form that draws itself", onePage("0 0 595 842", "/XObject << /Fm1 5 0 R >>",
			stream("", []byte("/Fm1 Do")),
			stream("/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << /XObject << /Fm1 5 0 R >> >>", []byte("/Fm1 Do"))),
			30 * time.Second, []error{nil, document.ErrCorrupt}},
		{"arrays nested 100000 deep", onePage("0 0 595 842", "/Deep "+nested(100_000), content),
			30 * time.Second, []error{nil, document.ErrCorrupt}},
		{"image of 20000×20000 px from 64 KiB", imagePage(
			"/Type /XObject /Subtype /Image /Width 20000 /Height 20000 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
			zeros), 30 * time.Second, []error{document.ErrTooLarge}},
		{"image of 12000×12000 px from 64 KiB", imagePage(
			"/Type /XObject /Subtype /Image /Width 12000 /Height 12000 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
			zeros), 5 * time.Second, []error{nil, document.ErrCorrupt, context.DeadlineExceeded}},
		{"JBIG2 stream claiming 60000×60000", imagePage(
			"/Type /XObject /Subtype /Image /Width 60000 /Height 60000 /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode",
			jbig2Garbage(60000, 60000)), 30 * time.Second, []error{document.ErrTooLarge}},
		{"JBIG2 stream of garbage at 9000×9000", imagePage(
			"/Type /XObject /Subtype /Image /Width 9000 /Height 9000 /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode",
			jbig2Garbage(9000, 9000)), 10 * time.Second, []error{nil, document.ErrCorrupt, context.DeadlineExceeded}},
		{"JPX stream claiming 60000×60000", imagePage(
			"/Type /XObject /Subtype /Image /Width 60000 /Height 60000 /Filter /JPXDecode",
			jpxHeader(60000, 60000)), 30 * time.Second, []error{document.ErrTooLarge}},
		{"JPX stream whose codestream claims 60000×60000", imagePage(
			"/Type /XObject /Subtype /Image /Width 100 /Height 100 /Filter /JPXDecode",
			jpxHeader(60000, 60000)), 10 * time.Second, []error{nil, document.ErrCorrupt, context.DeadlineExceeded}},
		{"page that renders forever", onePage("0 0 595 842", "", stream("/Filter /FlateDecode", deflate(fullPageRects(400_000)))),
			2 * time.Second, []error{context.DeadlineExceeded}},
	}
}

// jbig2Garbage is an embedded JBIG2 stream: a page information segment declaring a w×h page,
// then an immediate generic region segment whose data is noise.
func jbig2Garbage(w, h uint32) []byte {
	be := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	var b bytes.Buffer
	// Segment 0: page information (type 48), page 1, 19 bytes of data.
	b.Write(be(0))
	b.Write([]byte{48, 0x00, 1})
	b.Write(be(19))
	b.Write(be(w))
	b.Write(be(h))
	b.Write(be(0))
	b.Write(be(0))
	b.Write([]byte{0, 0, 0})
	// Segment 1: immediate generic region (type 38) covering the page, noise as its data.
	noise := bytes.Repeat([]byte{0x5A, 0xC3, 0x96, 0x0F, 0xF0, 0x69}, 4000)
	b.Write(be(1))
	b.Write([]byte{38, 0x00, 1})
	b.Write(be(uint32(18 + len(noise))))
	b.Write(be(w))
	b.Write(be(h))
	b.Write(be(0))
	b.Write(be(0))
	b.Write([]byte{0, 0})
	b.Write(noise)
	return b.Bytes()
}

// jpxHeader is the start of a JPEG 2000 codestream (SOC, SIZ) declaring a w×h three-component
// image, followed by nothing that decodes.
func jpxHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x2F, 0x00, 0x00})
	for _, v := range []uint32{w, h, 0, 0, w, h, 0, 0} {
		b.Write([]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	}
	b.Write([]byte{0x00, 0x03})
	for range 3 {
		b.Write([]byte{0x07, 0x01, 0x01})
	}
	b.Write(bytes.Repeat([]byte{0xFF, 0x52, 0x00, 0x0C}, 50))
	return b.Bytes()
}

// process opens data, reads page 1 and renders it at the scale OCR would use.
func process(ctx context.Context, r *document.Reader, data []byte) error {
	doc, err := r.Open(ctx, data)
	if err != nil {
		return err
	}
	defer doc.Close()
	page, err := doc.Page(ctx, 1)
	if err != nil {
		return err
	}
	_, err = doc.Render(ctx, page, page.Scale(document.DefaultScalePolicy(), r.Limits()))
	return err
}

// rss is the process's resident memory (Linux), or the Go heap where /proc is missing.
func rss() uint64 {
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		var size, res uint64
		if _, err := fmt.Sscan(string(data), &size, &res); err == nil {
			return res * uint64(os.Getpagesize())
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// memPeak samples resident memory while fn runs and returns the peak growth and fn's error.
// The engine's instance memory is outside the Go heap, so resident memory is what bounds it.
func memPeak(fn func() error) (uint64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	base := rss()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if m := rss(); m > base && m-base > peak.Load() {
				peak.Store(m - base)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	err := fn()
	close(done)
	wg.Wait()
	return peak.Load(), err
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
			grew, err := memPeak(func() error { return process(ctx, r, c.data) })
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
		var docs []*document.Document
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
// reports the deadline from then on, and the engine serves the next document.
func TestRenderAbandonedAtDeadline(t *testing.T) {
	r := testReader(t)
	data := onePage("0 0 595 842", "", stream("/Filter /FlateDecode", deflate(fullPageRects(400_000))))
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
	_, err = doc.Render(ctx, page, 2)
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
	var held []*document.Document
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
