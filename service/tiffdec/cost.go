package tiffdec

import (
	"math"
	"time"
)

// cpuRates are what one unit of a decode's work costs at most, in nanoseconds of CPU time: per
// byte read of the file (in), per byte decompressed (out), and per pixel written. They are the
// slowest rates BenchmarkDecodeCPU measured over reference pages (see cost_test.go), rounded up.
type cpuRates struct{ in, out float64 }

var compressionRates = map[uint32]cpuRates{
	compNone:     {in: 0, out: 1},
	compPackBits: {in: 2, out: 2},
	compLZW:      {in: 6, out: 3},
	compDeflate:  {in: 8, out: 3},
	compDeflateA: {in: 8, out: 3},
	compCCITTRLE: {in: 40, out: 4},
	compRLEW:     {in: 40, out: 4},
	compT4:       {in: 40, out: 4},
	compT6:       {in: 40, out: 4},
	compJPEG:     {in: 10, out: 20},
	compOJPEG:    {in: 10, out: 20},
}

const (
	nsPerPixel     = 4     // writing a pixel of the output (converting colour, palette)
	nsPerUpright   = 4     // a pixel of the upright copies callers make (imaging.Orient, Stretch)
	nsPerChunk     = 300   // a strip or tile: finding it, resetting the decompressor
	nsPerPage      = 50000 // the layout, the output's allocation
	cpuSafety      = 1.5   // on top of the slowest rates measured
	reverseNsPerIn = 1     // FillOrder 2: bit-reversing each byte read
)

// cpu estimates the CPU time of decoding the page (and upright more pixels of upright copies):
// what it reads, decompresses, writes and goes through, at the slowest rates measured, times
// cpuSafety.
func (l *layout) cpu(upright int64) time.Duration {
	rate := compressionRates[l.compression]
	px := float64(l.w) * float64(l.h)
	chunks := float64(l.across) * float64(l.down) * float64(l.planes)
	out := chunks * float64(l.chunkBytes)
	read := float64(l.readBytes)
	switch l.compression {
	case compJPEG:
		comps := float64(l.spp)
		if l.planar == 2 {
			comps = 1
		}
		out = chunks * comps * float64((l.cw+31)&^31) * float64((l.ch+31)&^31)
	case compOJPEG:
		read = float64(len(l.ojpeg))
		out = float64(l.spp) * float64(l.cw) * float64(l.ch)
	}
	ns := nsPerPage + nsPerChunk*chunks + rate.in*read + rate.out*out + nsPerPixel*px + nsPerUpright*float64(upright)
	if l.reverse {
		ns += reverseNsPerIn * read
	}
	ns *= cpuSafety
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
