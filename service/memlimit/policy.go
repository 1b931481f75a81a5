package memlimit

import (
	"os"
	"runtime/debug"
	"sync"
)

// The process's memory policy, in one place: how eagerly the Go collector runs (TuneGC), the soft
// limit it runs under (Plan.Apply), and when memory the heap has freed goes back to the operating
// system at once instead of when the runtime's background scavenger gets to it (Release, at the
// thresholds ReleaseScratch and ReleasePixels). The packages that act on the Go runtime's memory
// call these rather than runtime/debug.

// gcPercent is the Go garbage collector's heap goal ocrgate runs with unless GOGC is set: the
// next collection when the heap has grown by a quarter of what is live, not doubled. What is live
// is mostly one decoded page per request (139 MB for a 35-megapixel scan), pointer-free and so
// nearly free to mark, which makes frequent collections cheap while the default goal let the heap
// reach twice the page. Measured over sroie-dev (`ocrgate bench`, peak RSS): GOGC 100 493 MiB,
// 50 446–498, 25 460–466, at the same CPU time.
const gcPercent = 25

var gcOnce sync.Once

// TuneGC applies gcPercent once per process, unless the GOGC environment variable says otherwise.
func TuneGC() {
	gcOnce.Do(func() {
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(gcPercent)
		}
	})
}

// Apply sets the Go runtime's soft memory limit to the plan's GoLimit; when that is 0 (the
// environment sets GOMEMLIMIT, which the runtime has already applied) it leaves the limit alone.
func (p Plan) Apply() {
	if p.GoLimit > 0 {
		debug.SetMemoryLimit(p.GoLimit)
	}
}

// Release hands the memory the Go heap has freed back to the operating system now, at the price of
// a forced collection. The Go runtime keeps freed pages for reuse and returns them slowly, while
// what runs next is mostly ONNX Runtime (or the PDF engine), whose C allocations cannot reuse them.
// Callers release after large, rare allocations only: past ReleaseScratch or ReleasePixels, and
// after one-off work such as compiling the PDF engine.
func Release() { debug.FreeOSMemory() }

// ReleaseScratch is the decoder scratch (imaging.Header's scratch bytes) from which a decode
// hands its freed memory back to the operating system before the image is returned: measured, a
// 6000×6000 progressive JPEG's 138 MiB of coefficients stayed resident through detection and put
// the request's peak 150 MiB above its cost. A forced collection is a few milliseconds beside
// decoding such an image, and ordinary photos, whose scratch is a few megabytes, never pay it.
const ReleaseScratch = 64 << 20

// ReleasePixels is the image size from which a request hands its decoded image's memory back to
// the operating system as soon as it is done with it: after a burst of large scans RSS stayed
// 150 MiB above the receipts-only figure; the forced collection this takes is a few milliseconds
// beside the seconds such an image costs, and photos never pay it.
const ReleasePixels = 16_000_000
