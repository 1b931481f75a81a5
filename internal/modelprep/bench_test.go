package modelprep_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ocrgate/ocrgate/internal/modelprep"
)

// benchShapes are inputs of the sizes the pipeline sends each model on receipts: a detector input
// of a typical receipt (long side 960), recognizer batches of six crops across the common width
// buckets, a classifier batch.
var benchShapes = map[string][]ort.Shape{
	"det": {ort.NewShape(1, 3, 960, 448), ort.NewShape(1, 3, 960, 608)},
	"rec": {ort.NewShape(6, 3, 48, 96), ort.NewShape(6, 3, 48, 160), ort.NewShape(6, 3, 48, 256), ort.NewShape(6, 3, 48, 448)},
	"cls": {ort.NewShape(6, 3, 48, 192)},
}

// benchThreads are the intra-op threads the service gives each model: the detector all cores,
// the recognizer and classifier one each (their batches run side by side).
var benchThreads = map[string]int{"det": runtime.NumCPU(), "rec": 1, "cls": 1}

// BenchmarkModels times each model as fetched, as prepared and (the recognizer) its int8 variant
// on the same inputs, alternating them call by call so machine load hits all alike, and reports
// milliseconds per pass over the shapes and the speed-ups over the fetched model:
//
//	go test -run x -bench Models -benchtime 10x ./internal/modelprep/
func BenchmarkModels(b *testing.B) {
	initORT(b)
	for _, m := range modelprep.Models {
		b.Run(m.Name, func(b *testing.B) {
			src := source(b, m)
			prepared, _, err := m.Prepare(src)
			if err != nil {
				b.Fatal(err)
			}
			sessions := []*ort.DynamicAdvancedSession{newBenchSession(b, src, benchThreads[m.Name]), newBenchSession(b, prepared, benchThreads[m.Name])}
			if len(m.Int8) > 0 {
				q, err := m.PrepareInt8(prepared)
				if err != nil {
					b.Fatal(err)
				}
				sessions = append(sessions, newBenchSession(b, q, benchThreads[m.Name]))
			}
			for _, s := range sessions {
				defer s.Destroy()
			}
			rng := rand.New(rand.NewPCG(5, 6))
			var inputs []*ort.Tensor[float32]
			for _, shape := range benchShapes[m.Name] {
				data := make([]float32, shape.FlattenedSize())
				for i := range data {
					data[i] = rng.Float32()*2 - 1
				}
				x, err := ort.NewTensor(shape, data)
				if err != nil {
					b.Fatal(err)
				}
				defer x.Destroy()
				inputs = append(inputs, x)
			}
			run := func(s *ort.DynamicAdvancedSession, x *ort.Tensor[float32]) time.Duration {
				out := []ort.Value{nil}
				start := time.Now()
				if err := s.Run([]ort.Value{x}, out); err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				out[0].Destroy()
				return d
			}
			for _, x := range inputs { // warm all (first runs plan memory)
				for _, s := range sessions {
					run(s, x)
				}
			}
			total := make([]time.Duration, len(sessions))
			n := 0
			for b.Loop() {
				for i, x := range inputs {
					for k := range sessions {
						v := (k + i + n) % len(sessions)
						total[v] += run(sessions[v], x)
					}
				}
				n++
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(max(n, 1)) }
			b.ReportMetric(ms(total[0]), "original-ms")
			b.ReportMetric(ms(total[1]), "prepared-ms")
			b.ReportMetric(float64(total[0])/float64(total[1]), "speedup")
			if len(total) > 2 {
				b.ReportMetric(ms(total[2]), "int8-ms")
				b.ReportMetric(float64(total[0])/float64(total[2]), "int8-speedup")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

func newBenchSession(b *testing.B, model []byte, threads int) *ort.DynamicAdvancedSession {
	b.Helper()
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
	if err != nil {
		b.Fatal(err)
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		b.Fatal(err)
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(threads); err != nil {
		b.Fatal(err)
	}
	if err := so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		b.Fatal(err)
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{ins[0].Name}, []string{outs[0].Name}, so)
	if err != nil {
		b.Fatal(err)
	}
	return s
}
