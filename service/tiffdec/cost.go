package tiffdec

import (
	"math"
	"time"
)

// The CPU cost model behind Plan.CPU: what one unit of a decode's work costs, in nanoseconds of
// CPU time, summed over the page and multiplied by cpuSafety. Each rate is the slowest that
// BenchmarkDecodeCPU measured for its kind of work over its reference pages (real scans in the
// layouts scanners and fax servers write, made by testdata/bench.sh, and this package's test set),
// rounded up. It is conservative on purpose: a request whose estimate does not fit its CPU budget
// is refused before it starts, and one that underestimates is stopped when its budget is really
// spent. docs/documents.md has the estimate against what pages really cost.
type cpuRates struct {
	in    float64 // a byte read of the file (a strip's or tile's compressed bytes)
	out   float64 // a byte decompressed (JPEG: a sample decoded, in whole MCUs)
	chunk float64 // a strip or tile: finding it, resetting its decompressor (Deflate: its header; JPEG: a stream's setup)
}

var compressionRates = map[uint32]cpuRates{
	compNone:     {in: 0, out: 0.25, chunk: 1000},
	compPackBits: {in: 1, out: 1.5, chunk: 1000},
	compLZW:      {in: 3, out: 4, chunk: 1000},
	compDeflate:  {in: 3, out: 4, chunk: 10000},
	compDeflateA: {in: 3, out: 4, chunk: 10000},
	compCCITTRLE: {in: 80, out: 6, chunk: 1000},
	compRLEW:     {in: 60, out: 6, chunk: 1000},
	compT4:       {in: 60, out: 6, chunk: 1000},
	compT6:       {in: 60, out: 6, chunk: 1000},
	compJPEG:     {in: 15, out: 4, chunk: 150000},
	compOJPEG:    {in: 15, out: 4, chunk: 150000},
}

const (
	nsPerPage       = 100000 // the layout, the decompressors' state
	nsPerImageByte  = 1      // a byte of the decoded page: allocated, zeroed, faulted in
	nsPerPredicted  = 4      // a byte of horizontal differencing undone
	nsPer16Bit      = 3      // a byte of 16-bit samples reduced to 8 bits
	nsPerReversed   = 2      // a byte read bit-reversed (FillOrder 2)
	nsPerPlanePixel = 2      // a pixel assembled plane by plane (planar configuration 2)
	nsPerUpright    = 6      // a pixel of the upright copies callers make (imaging.Orient, Stretch)
	nsPerFolded     = 2      // a byte of a page row folded into a smaller page (DecodePage shrunk)
	cpuSafety       = 1.5
)

// nsPerPixel is what writing a pixel of the output costs: a byte of eight bilevel pixels
// through a table, gray and palette samples through a map, colour converted.
func (l *layout) nsPerPixel() float64 {
	switch {
	case l.compression == compJPEG || l.compression == compOJPEG:
		if l.out == outGray || l.out == outPaletted {
			return 2
		}
		return 25 // chroma upsampled, YCbCr or RGB converted to RGBA
	case l.out == outGray || l.out == outPaletted:
		switch l.bps {
		case 1:
			return 1
		case 8:
			return 1
		}
		return 3
	case l.photometric == photoYCbCr:
		return 60
	case l.photometric == photoSeparated:
		return 12
	}
	return 10
}

// cpu estimates the CPU time of decoding the page shrink times smaller (1: at its own size), and
// of upright more pixels of upright copies.
func (l *layout) cpu(upright int64, shrink int) time.Duration {
	rate := compressionRates[l.compression]
	px := float64(l.w) * float64(l.h)
	chunks := float64(l.across) * float64(l.down) * float64(l.planes)
	read, out := float64(l.readBytes), chunks*float64(l.chunkBytes)
	switch l.compression {
	case compJPEG:
		comps := float64(l.spp)
		if l.planar == 2 {
			comps = 1
		}
		out = chunks * comps * float64((l.cw+31)&^31) * float64((l.ch+31)&^31)
	case compOJPEG:
		read, out = float64(len(l.ojpeg)), float64(l.spp)*float64(l.cw)*float64(l.ch)
	}
	image := px
	if l.out == outRGBA || l.out == outNRGBA {
		image *= 4
	}
	ns := nsPerPage + rate.chunk*chunks + rate.in*read + rate.out*out + l.nsPerPixel()*px + nsPerImageByte*image +
		nsPerUpright*float64(upright)
	if l.predictor == 2 {
		ns += nsPerPredicted * out
	}
	if l.bps == 16 {
		ns += nsPer16Bit * out
	}
	if l.reverse {
		ns += nsPerReversed * read
	}
	if l.planar == 2 {
		ns += nsPerPlanePixel * px
	}
	if shrink > 1 {
		folded := px
		if l.out != outGray {
			folded *= 4
		}
		ns += nsPerFolded * folded
	}
	ns *= cpuSafety
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
