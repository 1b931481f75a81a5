package server_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/admission"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/server"
)

// TestHostileDocuments sends the hostile document set through POST /ocr to a service with a
// memory budget: every one is answered with a 4xx (or read, when it is harmless after all) and
// never a 5xx, within its deadline, without the process's memory growing past the budget (plus
// slack for the collector and the engine's code), and the service reads a good document
// afterwards, leaving no goroutine behind. A page built to draw forever is cut at the render time
// limit: 422.
func TestHostileDocuments(t *testing.T) {
	const (
		budget   = 700 << 20
		deadline = 30 * time.Second
		// memSlack covers what no admission counts: garbage the collector has not returned
		// yet, the request bodies, and the arena memory ONNX Runtime keeps between runs.
		memSlack = 400 << 20
	)
	gate := admission.New(admission.Options{Budget: budget, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, server.Options{Gate: gate, MaxRequestCost: budget, RequestTimeout: deadline}, nil,
		func(c *document.Config) { c.OpTimeout = 2 * time.Second })
	call(t, app, get("/ping")) // warm the app
	running := goleak.IgnoreCurrent()
	docs := hostile.PDFs()
	docs = append(docs, hostile.HostilePDF{Name: "TIFF whose second page claims 60000×60000", Data: hugeTIFFPage(t)})
	for _, d := range docs {
		t.Run(d.Name, func(t *testing.T) {
			var code int
			var body []byte
			start := time.Now()
			grew := uint64(memlimit.Growth(10*time.Millisecond, func() { code, body = call(t, app, readRequest(d.Data, nil)) }))
			took := time.Since(start)
			t.Logf("%d in %v, resident memory grew %d MiB: %.200s", code, took.Round(time.Millisecond), grew>>20, body)
			if code >= 500 {
				t.Errorf("status %d: %s", code, body)
			}
			if code != 200 {
				checkJSONError(t, code, body, code, "")
			}
			if took > deadline+10*time.Second {
				t.Errorf("answered after %v; the deadline is %v", took, deadline)
			}
			if grew > budget+memSlack {
				t.Errorf("resident memory grew by %d MiB; the budget is %d MiB", grew>>20, budget>>20)
			}
		})
	}
	if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
		t.Errorf("the gate holds %+v after the hostile set", s)
	}
	born, _ := bornDigital(t, invoice)
	if d := readDocument(t, app, born, nil); len(d.Pages) != 1 || d.Pages[0].Regions[0].Text != invoice[0].Text {
		t.Errorf("after the hostile set a good document reads %+v", d.Pages)
	}
	if code, _ := call(t, app, get("/ping")); code != 200 {
		t.Errorf("/ping: %d", code)
	}
	// Nothing a document started outlives it: killed renders, engine instances, page jobs.
	goleak.VerifyNone(t, running, fasthttpClock)
}

// hugeTIFFPage is a two-page TIFF whose second page's header claims 60000×60000 pixels.
func hugeTIFFPage(t testing.TB) []byte {
	t.Helper()
	data, err := testdoc.TIFF(image.NewGray(image.Rect(0, 0, 40, 30)), image.NewGray(image.Rect(0, 0, 40, 30)))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	ifd := le.Uint32(data[4:])
	n := uint32(le.Uint16(data[ifd:]))
	ifd = le.Uint32(data[ifd+2+12*n:]) // the second page's IFD
	n = uint32(le.Uint16(data[ifd:]))
	for k := range n {
		e := data[ifd+2+12*k:]
		if tag := le.Uint16(e); tag == 256 || tag == 257 { // ImageWidth, ImageLength
			if le.Uint16(e[2:]) == 3 {
				le.PutUint16(e[8:], 60000)
			} else {
				le.PutUint32(e[8:], 60000)
			}
		}
	}
	return data
}

// FuzzDocumentRequest drives the document entry point of the HTTP API: whatever bytes are sent
// as a document (seeded with good, broken and hostile PDFs and TIFFs, which the fuzzer mutates),
// /ocr answers within its deadline with a 200 or a 4xx, never a 5xx, and what it answers is
// what openapi.json describes.
func FuzzDocumentRequest(f *testing.F) {
	born, _ := bornDigital(f, letter)
	f.Add(born)
	f.Add(born[:len(born)/2])
	f.Add(scanned(f, [][]byte{smallJPEG(f)}, letter, false))
	f.Add(scanned(f, [][]byte{smallJPEG(f)}, nil, true))
	f.Add(hostile.PDFSelfForm())
	f.Add(hostile.PDFNestedArrays(1000))
	f.Add(hostile.PDFPageCount(1 << 30))
	f.Add(hostile.PDFJBIG2Image(64, 64))
	f.Add(hugeTIFFPage(f))
	if enc, err := testdoc.Encrypted("pw"); err == nil {
		f.Add(enc)
	}
	const deadline = 10 * time.Second
	f.Fuzz(func(t *testing.T, data []byte) {
		app := docApp(t, server.Options{RequestTimeout: deadline}, nil, func(c *document.Config) {
			c.OpTimeout, c.MaxTimeout = time.Second, deadline
		})
		start := time.Now()
		code, body := call(t, app, readRequest(data, map[string]any{"pages": "1-3"}))
		if code >= 500 {
			t.Fatalf("status %d: %s", code, body)
		}
		if took := time.Since(start); took > deadline+10*time.Second {
			t.Fatalf("answered after %v", took)
		}
	})
}

// smallJPEG is a 64×48 JPEG with a dark bar, to wrap as a scanned page.
func smallJPEG(t testing.TB) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for y := 20; y < 28; y++ {
		for x := 8; x < 56; x++ {
			img.Pix[y*64+x] = 0
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
