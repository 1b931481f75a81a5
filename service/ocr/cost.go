package ocr

import (
	"context"
	"math"

	"github.com/ocrgate/ocrgate/service/imaging"
)

// The pipeline's memory cost model. Admission control charges every request what it will hold
// at its peak, before any of it is allocated, so the figures here are estimates of an upper
// bound, validated against measurement by BenchmarkCostModel (each image in a fresh process:
// predicted cost against the growth of the peak RSS). Go memory is counted as what is live; the
// garbage the collector has not yet returned is the job of the Go memory limit, which the service
// sets from the same budget.

// RuntimeMemory describes the memory a model runtime allocates in this process per inference, on
// top of the Go input tensors the pipeline holds: for the embedded ONNX Runtime its activations
// and its own copy of the output; for Triton, the received message the output is copied from.
type RuntimeMemory struct {
	DetBase     int64 // bytes per detector run, whatever its size
	DetPerPixel int64 // bytes per detector input pixel (H×W)
	RecPerPixel int64 // bytes per recognizer input pixel (N×48×W)
	// Reserved means the runtime's working memory is reserved up front for every run that may be
	// in flight (ONNX Runtime's shared arena keeps it anyway; see memlimit.Plan.RuntimeReserve),
	// so Cost leaves it out and charges a request only for its Go memory.
	Reserved bool
	// RecOutPerPixel is the recognizer's output as the pipeline holds it in Go, per input pixel:
	// the prepared recognizer's seven values per timestep, or the exported graph's 6 625 class
	// probabilities, one timestep per 8 columns of a 48-pixel-high input.
	RecOutPerPixel int64
}

// MemoryReporter is a Runtime that says what it allocates in this process per inference. Each
// runtime adapter knows its own figures (service/onnxrt, service/tritonrt); the pipeline asks for
// them when it is built (New, With) and Cost charges them. A runtime that does not say (a test
// stand-in) is taken to allocate nothing in this process beyond the Go tensors Cost counts anyway.
type MemoryReporter interface {
	MemoryFigures() RuntimeMemory
}

// withRuntimeMemory fills opt.RuntimeMemory, when it is left zero, with what rt says it allocates
// per inference.
func withRuntimeMemory(rt Runtime, opt Options) Options {
	if r, ok := rt.(MemoryReporter); ok && opt.RuntimeMemory == (RuntimeMemory{}) {
		opt.RuntimeMemory = r.MemoryFigures()
	}
	return opt
}

// cropBytesEstimate is the memory of a page's crops (RGBA at recognizer height): at most 4.4 MB
// on every page of the SROIE dev set (26–112 regions); the estimate allows four times that. A
// page built to hold a thousand crops of the widest bucket could hold far more (1 000 × 48 ×
// 2 560 × 4 bytes); such pages do not occur in documents. The look for what the detector left out
// (see inkLines) holds at most 8.4 MB just before the crops are cut, and lets it go: the same
// allowance covers it.
const cropBytesEstimate = 16 << 20

// Cost estimates the most memory, in bytes, that running an image with header h through the
// pipeline holds at once: decoding it (the decoded pixels and the decoder's working memory, or the
// upright copy while it is made), then the upright image for as long as the model stages run,
// together with the larger of detection's and recognition's tensors (see ModelBytes).
func (o Options) Cost(h imaging.Header) int64 {
	w, ht := h.ReadSize() // a TIFF page read smaller is read at its smaller size
	return max(h.DecodeBytes(), h.ResidentBytes()+o.ModelBytes(w, ht))
}

// Cost is Options.Cost with the pipeline's options.
func (p *Pipeline) Cost(h imaging.Header) int64 { return p.opt.Cost(h) }

// Inspect reads an image's header and checks it against the pipeline's limits without decoding it
// (see imaging.InspectContext), within ctx; the header's cost is then Cost(h), and RunAdmitted
// decodes the image from it without reading the header again.
func (p *Pipeline) Inspect(ctx context.Context, data []byte) (imaging.Header, error) {
	return imaging.InspectContext(ctx, data, p.opt.Limits)
}

// ModelBytes estimates the memory the model stages hold for an upright image of width×height, on
// top of the image itself: the larger of
//
//   - detection: the detector's input (3 float32 a pixel) and output (1) at the largest size the
//     detection policy can pick for this image (the first pass's DetLimitSide, or a second pass of
//     up to DetMaxPixels), the DB post-processing's runs (bounded by 10 bytes a pixel of the map)
//     and the runtime's working memory for one run (a tile, when DetTilePixels splits the pass);
//   - recognition: the page's crops (see cropBytesEstimate), and the batches in flight (see
//     BatchPixelsInFlight), each at most the largest batch (see RecBatchPixels) of a bucket a
//     crop of this image can reach: input, output and the runtime's working memory.
//
// A rendered document page costs its own pixels plus ModelBytes of its size.
func (o Options) ModelBytes(width, height int) int64 {
	if width <= 0 || height <= 0 {
		return 0
	}
	return max(o.detectionBytes(width, height), o.recognitionBytes(width, height))
}

func (o Options) detectionBytes(w, h int) int64 {
	first, second := o.DetectionPixels(w, h)
	// The larger pass: its input (3 float32), its map (1) and the DB runs (10 at most) over the
	// whole pass; the runtime's share for one run, which tiling bounds (see DetTilePixels), with
	// the tile's own input and map. The passes run one after the other, and the first one's
	// memory is free when the second starts. (ONNX Runtime's arena keeps the first pass's blocks,
	// which a second pass of other shapes may not reuse: see ArenaSlack.)
	px := max(first, second)
	run, tileGo := px, int64(0)
	if o.DetTilePixels > 0 && px > int64(o.DetTilePixels) {
		run = int64(o.DetTilePixels)
		tileGo = run * (4*3 + 4)
	}
	rt := o.charged()
	return px*(4*3+4+10) + tileGo + run*rt.DetPerPixel + rt.DetBase
}

// charged is the runtime memory Cost charges requests for: none of the working memory when it is
// reserved.
func (o Options) charged() RuntimeMemory {
	rt := o.RuntimeMemory
	if rt.Reserved {
		rt.DetBase, rt.DetPerPixel, rt.RecPerPixel = 0, 0, 0
	}
	return rt
}

// ArenaSlack is what ONNX Runtime's default CPU arena can hold beyond Cost for an upright image of
// width×height: the first detection pass's working memory, which the arena keeps while a second
// pass allocates its own (0 when there can be no second pass).
func (o Options) ArenaSlack(width, height int) int64 {
	first, second := o.DetectionPixels(width, height)
	if second == 0 && o.DetMaxUpscale <= 1 {
		return 0
	}
	return first * o.RuntimeMemory.DetPerPixel
}

// DetectionPixels returns the detector input sizes, in pixels, of the first pass and of the
// largest second pass the detection policy can pick for an upright image of w×h at up to its
// own resolution (0 when there is none). These are what Cost charges. An enlarged second pass
// (DetMaxUpscale) is not charged more: it runs in strips of at most the larger of the two (see
// stripPlan), so the request holds no more detection memory than it would without it.
func (o Options) DetectionPixels(w, h int) (first, second int64) {
	scale := math.Min(1, float64(o.DetLimitSide)/float64(max(w, h)))
	first = int64(detSize(w, scale)) * int64(detSize(h, scale))
	if scale < 1 {
		// A second pass scales the part of the page that holds text to at most DetMaxPixels,
		// never above full size; each side rounds to a multiple of 32 (10 % covers that).
		second = int64(min(float64(o.DetMaxPixels), float64(w)*float64(h))) * 11 / 10
	}
	return first, second
}

func (o Options) recognitionBytes(w, h int) int64 {
	// A crop is RecHeight tall and as wide as its box's aspect ratio makes it. Boxes are at least
	// MinSize+2 detector pixels thick after unclipping, and the detector enlarges the image at
	// most DetMaxUpscale times, so no box is thinner than that share of it in the image either:
	// the widest crop is bounded by the image. (That bound reaches the widest bucket for any
	// image with a side over a few hundred pixels; RecBatchPixels is what keeps a wide bucket's
	// batch as cheap as a narrow one's.)
	widest := float64(o.RecHeight) * float64(max(w, h)) * math.Max(1, o.DetMaxUpscale) / (o.DB.MinSize + 2)
	var px int64
	for _, b := range o.recWidths() {
		px = max(px, o.recBatchPixels(b))
		if float64(b) >= widest {
			break
		}
	}
	// Input (3 float32), output, the runtime's share, for every batch in flight.
	rt := o.charged()
	return cropBytesEstimate + o.pixelsInFlight(px)*(4*3+rt.RecOutPerPixel+rt.RecPerPixel)
}

// pixelsInFlight bounds the input pixels of one image's batches in flight together when the
// largest of them holds px (see BatchPixelsInFlight and Pipeline.inFlight).
func (o Options) pixelsInFlight(px int64) int64 {
	all := int64(max(1, o.BatchParallel)) * px
	if o.BatchPixelsInFlight <= 0 {
		return all
	}
	return min(all, max(int64(o.BatchPixelsInFlight), px))
}

// recWidths are the widths a recognizer batch can have, ascending: the multiples of RecWidthStep up
// to the last width bucket (and that bucket), or with no step the buckets.
func (o Options) recWidths() []int {
	widest := o.RecWidthBuckets[len(o.RecWidthBuckets)-1]
	if o.RecWidthStep <= 0 {
		return o.RecWidthBuckets
	}
	var ws []int
	for w := o.RecWidthStep; w < widest; w += o.RecWidthStep {
		ws = append(ws, w)
	}
	return append(ws, widest)
}

// recBatchCrops is how many crops a recognizer batch of the bucket width holds (see
// RecBatchPixels).
func (o Options) recBatchCrops(width int) int {
	n := o.RecBatchSize
	if o.RecBatchPixels > 0 {
		n = min(n, o.RecBatchPixels/(o.RecHeight*width))
	}
	return max(1, n)
}

// recBatchPixels is the input size, in pixels, of a full recognizer batch of the bucket width.
func (o Options) recBatchPixels(width int) int64 {
	return int64(o.recBatchCrops(width)) * int64(o.RecHeight) * int64(width)
}

// RuntimeWork is the most memory the model runtime allocates in this process for one request
// (outside the Go heap, for the embedded ONNX Runtime): one detector run at the largest input the
// detection policy and tiling allow, or the recognizer batches of one image in flight.
func (o Options) RuntimeWork() int64 {
	rt := o.RuntimeMemory
	detPx := max(int64(o.DetLimitSide)*int64(o.DetLimitSide), int64(o.DetMaxPixels)*11/10)
	if o.DetTilePixels > 0 {
		detPx = min(detPx, max(int64(o.DetTilePixels), int64(o.DetLimitSide)*int64(o.DetLimitSide)))
	}
	var recPx int64
	for _, b := range o.recWidths() {
		recPx = max(recPx, o.recBatchPixels(b))
	}
	return max(rt.DetBase+detPx*rt.DetPerPixel, o.pixelsInFlight(recPx)*rt.RecPerPixel)
}
