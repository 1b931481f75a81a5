package server_test

import (
	"testing"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// BenchmarkProbes measures what the recognizer costs reading the probes of a text layer's check:
// four probes of a page of 11-point lines, drawn as the survey draws them, read by the real
// models. It reports the process's CPU time per pixel of the recognizer's input (crops at its
// height of 48 px): what the document reader charges a request for its probes
// (recognizerCPU, service/document).
//
//	go test -run x -bench Probes -benchtime 40x ./service/server/
func BenchmarkProbes(b *testing.B) {
	needModels(b)
	var texts []testdoc.Text
	for i := range 40 {
		texts = append(texts, testdoc.Text{X: 56, Y: 60 + float64(i)*18, Size: 11, Text: "Invoice item number and its description, priced"})
	}
	data, _ := bornDigital(b, texts)
	docs := documentReader(b)
	doc, err := docs.Open(b.Context(), data)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = doc.Close() }()
	page, err := doc.Page(b.Context(), 1)
	if err != nil {
		b.Fatal(err)
	}
	scale, err := page.Scale(docfile.DefaultScalePolicy(), docs.Limits())
	if err != nil {
		b.Fatal(err)
	}
	c := page.RenderCost(scale)
	tl, err := doc.TextLayer(b.Context(), page, c.Width, c.Height)
	if err != nil {
		b.Fatal(err)
	}
	strip, quads, err := doc.DrawProbes(b.Context(), page, tl.Probes(4), c.Width, c.Height)
	if err != nil {
		b.Fatal(err)
	}
	var px float64
	for _, q := range quads {
		px += docfile.ProbeHeight * docfile.ProbeHeight * q.Width() / q.Height()
	}
	p := embeddedEngine(b).Pipeline
	if _, err := p.ReadCrops(b.Context(), strip, quads); err != nil { // the sessions warm
		b.Fatal(err)
	}
	start := cpuTime()
	for b.Loop() {
		if _, err := p.ReadCrops(b.Context(), strip, quads); err != nil {
			b.Fatal(err)
		}
	}
	used := cpuTime() - start
	b.ReportMetric(float64(used.Microseconds())/float64(b.N)/px, "CPU-µs/px")
	b.ReportMetric(float64(used.Milliseconds())/float64(b.N), "CPU-ms/read")
	b.ReportMetric(px, "px/read")
}
