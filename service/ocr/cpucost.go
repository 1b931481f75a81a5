package ocr

import (
	"time"

	"github.com/ocrgate/ocrgate/service/imaging"
)

// The pipeline's CPU cost model: the CPU time reading an image takes, estimated from its header
// before anything is decoded, so that a request whose CPU budget (package cpubudget) cannot hold
// the image is refused before it starts. What an image really costs depends on how much text it
// holds, which no header tells: the estimate is an envelope of what was measured, not a forecast
// of one page, and the work is charged as it is spent (its threads' CPU clocks), never at this
// estimate. BenchmarkImageCPU measures both.
//
//   - Decoding costs its pixels, by format: a baseline JPEG decoded at half size a quarter of
//     them; a progressive JPEG its pixels once per scan; PNG, GIF, BMP, TIFF and WebP the
//     slowest of their decoders' rates.
//   - Reading costs a fixed part (a first detection pass, which DetLimitSide bounds, and the
//     stages around it) and a part that grows with the page's area, up to that of an A4 page at
//     300 dpi: recognition reads each line scaled to RecHeight, so a page scanned at 600 dpi holds
//     no more to read than at 300, and a dense A4 page is the most text measured on a page.
//   - A page smaller than a second detection pass may be detected again enlarged (small print at
//     its own resolution, DetMaxUpscale): the detector's extra pixels, at what a 3-megapixel pass
//     over a 100-dpi form added (0.8 → 1.5 CPU-s a form on FUNSD's training forms, make
//     bench-forms).
const (
	cpuDetPerMP   = 250 * time.Millisecond
	cpuReadBase   = 300 * time.Millisecond
	cpuReadPerMP  = time.Second
	cpuReadMaxMP  = 9.0 // an A4 page at 300 dpi is 8.7 MP
	cpuJPEGPerMP  = 20 * time.Millisecond
	cpuScanPerMP  = 2 * time.Millisecond
	cpuOtherPerMP = 60 * time.Millisecond
)

// CPUCost estimates the CPU time reading an image with header h takes: decoding it, then
// detection and recognition (see the constants above).
func (o Options) CPUCost(h imaging.Header) time.Duration {
	w, ht := h.UprightSize()
	mp := float64(w) * float64(ht) / 1e6
	var decode float64
	switch {
	case h.Format == "jpeg" && h.Progressive:
		decode = mp * float64(max(1, h.Scans)) * float64(cpuScanPerMP)
	case h.Format == "jpeg" && h.Half:
		decode = mp / 4 * float64(cpuJPEGPerMP)
	case h.Format == "jpeg":
		decode = mp * float64(cpuJPEGPerMP)
	default:
		decode = mp * float64(cpuOtherPerMP)
	}
	rw, rh := h.ReadSize() // a TIFF page read smaller: decoded whole, read at its smaller size
	read := float64(cpuReadBase) + min(float64(rw)*float64(rh)/1e6, cpuReadMaxMP)*float64(cpuReadPerMP)
	if px := float64(rw) * float64(rh); o.DetMaxUpscale > 1 && px < float64(o.DetMaxPixels) {
		read += (min(float64(o.DetMaxPixels), px*o.DetMaxUpscale*o.DetMaxUpscale) - px) / 1e6 * float64(cpuDetPerMP)
	}
	return time.Duration(decode + read)
}

// CPUCost is Options.CPUCost with the pipeline's options.
func (p *Pipeline) CPUCost(h imaging.Header) time.Duration { return p.opt.CPUCost(h) }
