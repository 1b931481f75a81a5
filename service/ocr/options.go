package ocr

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ocrgate/ocrgate/service/ctc"
	"github.com/ocrgate/ocrgate/service/dbnet"
	"github.com/ocrgate/ocrgate/service/imaging"
)

// Options are the pipeline's settings. The defaults are PaddleOCR's (PP-OCRv4 mobile), except
// where a comment says otherwise.
type Options struct {
	Limits imaging.Limits // refuse images larger than this before decoding them fully

	// Detection input size. The first pass scales the image so its long side is at most
	// DetLimitSide (PaddleOCR's det_limit_side_len, 960; never upscaled) and both sides are
	// multiples of 32. When the text that pass finds is smaller than DetMinTextHeight pixels (small
	// print on a large scan), a second pass runs on the part of the image that holds text, at the
	// scale that makes text DetTargetTextHeight pixels tall, capped at DetMaxPixels input pixels.
	DetLimitSide int
	// DetPreview lets the first pass read a huge JPEG through its free 1/8 preview (block means)
	// when that preview is at least 80 % of DetLimitSide on its long side (images from about
	// 6 000 px): nearly the same detector input, without reading every pixel of the page.
	DetPreview          bool
	DetMinTextHeight    float64
	DetTargetTextHeight float64
	DetMaxPixels        int
	// DetSmallTextHeight and DetMaxUpscale: when the first pass's median box is under
	// DetSmallTextHeight pixels of the image itself (small print scanned at a low resolution: a
	// 100-dpi form), the second pass may enlarge the image, up to DetMaxUpscale times its own
	// size (still capped at DetMaxPixels). DetMaxUpscale 1 never enlarges. An enlarged pass runs
	// in strips of at most the detector pixels Cost charges anyway (see strips.go), so allowing
	// it costs no image more memory.
	DetSmallTextHeight float64
	DetMaxUpscale      float64
	// DetTilePixels: detector inputs larger than this run as overlapping tiles of at most this
	// many pixels, stitched into one probability map (see tiles.go), so that no detector run, and
	// no arena, needs more memory than a first pass does. 0: one run whatever the size.
	DetTilePixels int
	// DetTileOverlap is how far, in detector pixels (a multiple of 32), a tile reads past its core
	// toward each neighbour.
	DetTileOverlap int
	DetNorm        imaging.Norm
	DB             dbnet.Options

	// CropRotateRatio: a box at least this many times taller than wide holds vertical text and is
	// turned 90° (read bottom to top) before recognition.
	CropRotateRatio float64
	// ReadColumns also reads every such box as a column of upright CJK characters, top to
	// bottom (see unrolled), and keeps that reading where it reads CJK and better.
	ReadColumns bool
	// CheckBoxes finds a form's check boxes from the page's pixels and answers each as a region
	// of its own, ☐ or ☑, reading the line beside it without it (see checkboxes.go).
	CheckBoxes bool

	// HalfMinTextHeight: a page decoded at half size (Limits.HalfPixels) is decoded again whole
	// when its first detection pass finds the median line (its box, in the file's pixels)
	// shorter than this, before anything else reads it. Half-size crops of such lines are
	// enlarged by more than a third to RecHeight, and sharp print then loses its spaces first:
	// on rendered test pages every size measuring 63 px or less did at half size and read
	// right whole, while 74 px read right either way. The five 600-dpi scans of sroie-dev
	// measure 97–110 px. 0: never.
	HalfMinTextHeight float64

	// Direction classifier (0°/180°).
	UseClassifier bool
	ClsThreshold  float32 // flip a crop when p(180°) ≥ this
	// ClsPageSample: classify the page's widest horizontal crops first, this many; when at most
	// one in six reads upside down the page is upright and no horizontal crop is classified or
	// turned (see classify). 0: classify and turn every crop on its own, as PaddleOCR does.
	ClsPageSample int
	ClsWidth      int
	ClsHeight     int
	ClsBatchSize  int
	ClsNorm       imaging.Norm
	RecHeight     int
	// RecWidthBuckets are the widths recognizer batches are padded to when RecWidthStep is 0,
	// ascending. A crop goes into the narrowest bucket it fits. Crops wider than the last are
	// squeezed to it whatever the step (which bounds memory for absurd boxes). Few fixed widths let
	// a Triton dynamic batcher merge crops of concurrent requests, which it can only do for equal
	// shapes.
	RecWidthBuckets []int
	// RecWidthStep, when positive, pads a recognizer batch only to its widest crop rounded up to a
	// multiple of this many pixels, instead of to a bucket. The recognizer's time follows the
	// columns it reads, padding included: on sroie-dev, steps of 8 px (one CTC time step) took
	// 14 % less recognizer time than the buckets, at word F1 (ci) 0.8491 against 0.8506.
	RecWidthStep int
	// RecSqueeze narrows a crop wider than RecSqueezeFrom pixels (at RecHeight, before the cap of
	// the last bucket) to this share of its width; 1 keeps every crop's aspect. The recognizer's
	// time follows the columns it reads, and PP-OCRv4's recognizer was trained on lines squeezed
	// into 320 px, so long lines read as well narrowed: on sroie-dev 0.85 from 192 px took
	// 11 % of the recognizer's columns away at word F1 (ci) 0.8483 → 0.8602 and char accuracy
	// (ci) 0.9614 → 0.9640. Short crops stay as they are: a squeezed two-character Chinese word
	// (网盘) lost a character, and they are few of the columns (24 % below 192 px).
	RecSqueeze     float64
	RecSqueezeFrom int
	// RecSqueezeRun: a squeezed crop whose reading has one character winning this many
	// recognizer timesteps in a row (or more) is read again at its natural width, and the
	// doubled characters that reading finds are put into the squeezed one (see
	// Pipeline.redouble): such a run is where greedy decoding may have collapsed a doubled
	// character. 2 would trust no squeezed reading that collapsed anything, but a character
	// wins two steps in 41 % of sroie-dev's squeezed columns, and reading those again cost
	// 13 % more CPU; three steps in a row are 1 % of them and catch the long collapses
	// ("7757***6336", "committe"), not a double collapsed within two steps. 0 never reads
	// again. Not a service setting.
	RecSqueezeRun int
	// RecDenseSteps: a line of letters read with fewer recognizer timesteps per character than
	// this, where some letter may stand for two (ctc.Result.Doubt), is read again at
	// RecDenseWidth timesteps per character, and the better-scoring reading is kept (see
	// Pipeline.redouble). Greedy decoding needs a blank step between the two letters of a
	// double, and small or narrow print leaves no room for it: on the double-letter set
	// (scripts/render_doubles.sh) this took the doubled letters read as one from 31 to 2 of
	// 5 528, for 10 of sroie-dev's 1 111 crops read again. 0 never reads again. Not service
	// settings.
	RecDenseSteps float64
	RecDenseWidth float64
	RecBatchSize  int
	// RecBatchPixels caps a recognizer batch's input (crops × RecHeight × bucket width): a batch
	// of a wide bucket holds fewer than RecBatchSize crops (never fewer than one), so a batch's
	// memory is the same bounded figure whatever the crops' widths, and Cost need not charge
	// every image for RecBatchSize crops of the widest bucket. 0: RecBatchSize crops always.
	RecBatchPixels int
	// BatchParallel is how many recognizer (and classifier) batches of one image may be in flight
	// at once (0 or 1: one at a time; the service's configuration defaults it to the core count).
	// The embedded runtime runs these models single-threaded, so this is what spreads them over the
	// cores; with Triton it overlaps transfers with inference. Above 1, stage timings
	// overlap (they are summed per batch), so per-stage shares no longer add up to the wall time.
	BatchParallel int
	// BatchPixelsInFlight caps the input pixels of the recognizer (or classifier) batches of one
	// image in flight together, whatever BatchParallel allows (a larger batch runs alone): the
	// runtime's working memory grows with them, and the request's cost must not grow with the
	// core count. 0: no cap.
	BatchPixelsInFlight int
	RecNorm             imaging.Norm
	CTC                 ctc.Options
	// ASCIIPunctuation reads fullwidth punctuation as ASCII in lines without CJK characters.
	ASCIIPunctuation bool
	// Lexicon, when set, corrects words the recognizer misspelled towards its words, choosing
	// only among the model's own runners-up (see Lexicon).
	Lexicon    *Lexicon
	MinScore   float32 // regions recognized with a lower score are dropped (the seed's 0.5)
	RowOverlap float64 // a box joins a row when its vertical overlap with the row is ≥ this share of its height

	// RuntimeMemory is what the model runtime allocates in this process per inference, for Cost;
	// left zero, New fills it in from the runtime (MemoryReporter). It is not a setting.
	RuntimeMemory RuntimeMemory
}

// formsDB is PaddleOCR's DB post-processing with a box threshold of 0.5 for its 0.6: on scanned
// forms the detector's boxes around faint, broken or handwritten words score 0.5–0.6, and at 0.6
// a fifth of the words a form's truth has that no box covers are lost that way (docs/pipeline.md).
func formsDB() dbnet.Options {
	o := dbnet.DefaultOptions()
	o.BoxThreshold = 0.5
	return o
}

// DefaultOptions returns PaddleOCR's defaults plus ocrgate's detection size policy.
func DefaultOptions() Options {
	half := imaging.Norm{Mean: [3]float32{0.5, 0.5, 0.5}, Std: [3]float32{0.5, 0.5, 0.5}, BGR: true}
	return Options{
		Limits:              imaging.Limits{MaxPixels: 50_000_000, MaxSide: 10_000, MaxScans: 64, HalfPixels: 24_000_000},
		DetLimitSide:        960,
		DetPreview:          true,
		HalfMinTextHeight:   72,
		DetMinTextHeight:    14,
		DetTargetTextHeight: 24,
		DetMaxPixels:        3_000_000,
		// Print whose median box is under 18 px of the image (7–9 px letters: a 100-dpi form) is
		// looked at again enlarged up to 2 times; it costs no memory (strips.go). Receipts' print
		// is larger and reads worse enlarged: the repository's photo receipt (median 18 px) reads
		// 6 characters worse with the line at 19 (docs/pipeline.md).
		DetSmallTextHeight: 18,
		DetMaxUpscale:      2,
		DetTilePixels:      960 * 960,
		DetTileOverlap:     64,
		DetNorm: imaging.Norm{
			Mean: [3]float32{0.485, 0.456, 0.406},
			Std:  [3]float32{0.229, 0.224, 0.225},
			BGR:  true,
		},
		DB:                  formsDB(),
		CropRotateRatio:     1.5,
		ReadColumns:         true,
		CheckBoxes:          true,
		UseClassifier:       true,
		ClsThreshold:        0.9,
		ClsPageSample:       12,
		ClsWidth:            192,
		ClsHeight:           48,
		ClsBatchSize:        6,
		ClsNorm:             half,
		RecHeight:           48,
		RecWidthBuckets:     []int{64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 800, 960, 1280, 1920, 2560},
		RecWidthStep:        8,
		RecSqueeze:          0.85,
		RecSqueezeFrom:      192,
		RecSqueezeRun:       3,
		RecDenseSteps:       1.8,
		RecDenseWidth:       2.4,
		RecBatchSize:        6,
		RecBatchPixels:      6 * 48 * 960,
		BatchPixelsInFlight: 2 * 6 * 48 * 960,
		RecNorm:             half,
		CTC:                 ctc.DefaultOptions(),
		ASCIIPunctuation:    true,
		MinScore:            0.5,
		RowOverlap:          0.5,
	}
}

// Validate reports settings that cannot work.
func (o Options) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(o.HalfMinTextHeight >= 0, "half-size minimum text height must not be negative")
	check(o.Limits.MaxPixels >= 0 && o.Limits.MaxSide >= 0 && o.Limits.MaxScans >= 0 && o.Limits.HalfPixels >= 0, "image limits must not be negative")
	check(o.DetLimitSide >= 32, "detection limit side must be at least 32, got %d", o.DetLimitSide)
	check(o.DetMaxPixels >= 32*32, "detection pixel cap must be at least 1024, got %d", o.DetMaxPixels)
	check(o.DetTilePixels == 0 || o.DetTilePixels >= 4*(32+2*o.DetTileOverlap)*(32+2*o.DetTileOverlap),
		"detection tile pixels must be 0 or at least four times a tile of one 32-pixel core and its overlaps, got %d", o.DetTilePixels)
	check(o.DetTileOverlap >= 0 && o.DetTileOverlap%32 == 0, "detection tile overlap must be a non-negative multiple of 32, got %d", o.DetTileOverlap)
	check(o.DetTargetTextHeight > 0, "detection target text height must be positive")
	check(o.DetMaxUpscale >= 1 && o.DetMaxUpscale <= 4, "detection upscale must be in [1,4], got %v", o.DetMaxUpscale)
	check(o.DetSmallTextHeight >= 0, "detection small-text height must not be negative, got %v", o.DetSmallTextHeight)
	check(o.DB.Threshold > 0 && o.DB.Threshold < 1, "DB threshold must be in (0,1), got %v", o.DB.Threshold)
	check(o.DB.BoxThreshold >= 0 && o.DB.BoxThreshold <= 1, "DB box threshold must be in [0,1], got %v", o.DB.BoxThreshold)
	check(o.DB.UnclipRatio > 0, "DB unclip ratio must be positive, got %v", o.DB.UnclipRatio)
	check(o.DB.MaxCandidates > 0, "DB max candidates must be positive, got %d", o.DB.MaxCandidates)
	check(o.CropRotateRatio > 0, "crop rotate ratio must be positive")
	check(o.ClsWidth > 0 && o.ClsBatchSize > 0, "classifier width and batch size must be positive")
	check(o.ClsPageSample >= 0, "classifier page sample must not be negative, got %d", o.ClsPageSample)
	check(o.ClsHeight == o.RecHeight, "classifier height (%d) must equal recognizer height (%d): both read the same crops", o.ClsHeight, o.RecHeight)
	check(o.RecHeight > 0 && o.RecBatchSize > 0, "recognizer height and batch size must be positive")
	check(o.RecBatchPixels >= 0, "recognizer batch pixels must not be negative, got %d", o.RecBatchPixels)
	check(o.BatchPixelsInFlight >= 0, "batch pixels in flight must not be negative, got %d", o.BatchPixelsInFlight)
	check(o.BatchParallel >= 0, "batches in flight must not be negative, got %d", o.BatchParallel)
	check(len(o.RecWidthBuckets) > 0 && slices.IsSorted(o.RecWidthBuckets) && o.RecWidthBuckets[0] >= 8,
		"recognizer width buckets must be ascending and at least 8 px, got %v", o.RecWidthBuckets)
	check(o.RecWidthStep >= 0, "recognizer width step must not be negative, got %d", o.RecWidthStep)
	// Above 1 a crop would outgrow the widths Cost charges for.
	check(o.RecSqueeze > 0 && o.RecSqueeze <= 1, "recognizer squeeze must be in (0,1], got %v", o.RecSqueeze)
	check(o.RecSqueezeFrom >= 0, "recognizer squeeze width must not be negative, got %d", o.RecSqueezeFrom)
	check(o.RecSqueezeRun == 0 || o.RecSqueezeRun >= 2, "recognizer squeeze run must be 0 or at least 2, got %d", o.RecSqueezeRun)
	check(o.RecDenseSteps == 0 || o.RecDenseSteps > 0 && o.RecDenseWidth > o.RecDenseSteps,
		"recognizer dense lines: steps per character must be 0 or positive and below the width read again, got %v and %v", o.RecDenseSteps, o.RecDenseWidth)
	check(o.MinScore >= 0 && o.MinScore <= 1, "minimum score must be in [0,1], got %v", o.MinScore)
	check(o.RowOverlap > 0 && o.RowOverlap <= 1, "row overlap must be in (0,1], got %v", o.RowOverlap)
	return errors.Join(errs...)
}
