package onnxrt

import "github.com/ocrgate/ocrgate/service/ocr"

// Memory is what ONNX Runtime 1.30 (CPU, default arena) adds per inference for the prepared
// PP-OCRv4 models (int8 recognizer, compact output), measured by BenchmarkRunMemory as the
// peak-RSS growth of runs in a fresh process, less the Go output: detector 14 MiB at 320×320,
// 94 MiB at 960×704, 150 MiB at 960×960, 443 MiB at 1728×1728 (144–171 bytes a pixel);
// recognizer batches of 6 at 64, 320, 960 and 2 560 px wide 4, 22, 100 and 193 MiB (211–378
// bytes a pixel; ten int8 convolutions), two batches at once 7, 46, 152 and 356 MiB. The figures
// are upper envelopes of those measurements.
var Memory = ocr.RuntimeMemory{DetBase: 30 << 20, DetPerPixel: 161, RecPerPixel: 391, RecOutPerPixel: 1}

// MemoryFigures says what the runtime allocates in this process per inference, for the
// pipeline's cost model (ocr.MemoryReporter): Memory. With one arena for every model
// (ArenaShared) the arena keeps at most what the runs in flight together asked of it, which the
// memory plan reserves up front (memlimit.Plan.RuntimeReserve), so requests then pay only for
// their Go memory.
func (r *Runtime) MemoryFigures() ocr.RuntimeMemory {
	m := Memory
	m.Reserved = r.arena == ArenaShared
	return m
}

// Threads is how many threads a run of model m keeps busy (ocr.ThreadReporter): its session's
// intra-op threads, the calling one included; 1 for a single-threaded session (the recognizer's
// and the classifier's), whose run is all on the calling thread.
func (r *Runtime) Threads(m ocr.Model) int {
	if mod, ok := r.models[m]; ok {
		return max(1, mod.threads)
	}
	return 1
}
