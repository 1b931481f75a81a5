package ocr_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/memlimit"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/onnxrt"
)

// atRestEmbedded is an upper figure of what the service holds at rest with the embedded runtime
// and the prepared models: 154 MiB measured at start (the msg=memory line) with ONNX Runtime 1.30,
// and up to 40 MiB more with the PDF engine compiled.
const atRestEmbedded = 200 << 20

// TestReceiptsFitTheDefaultBudget guards the cost model against charging ordinary documents for
// what they cannot need: under the default plan (no container limit, so 1 GiB) every receipt the
// repository renders (testdata/receipts), its 600-dpi A4 scan included, must be admitted rather
// than refused with a 413, and its cost must
// not grow with the core count (recognition batches in flight are bounded by pixels, not cores).
func TestReceiptsFitTheDefaultBudget(t *testing.T) {
	var paths []string
	for _, id := range testenv.ReceiptIDs {
		paths = append(paths, testenv.ReceiptPath(t, id))
	}
	plan := memlimit.Derive(memlimit.Inputs{AtRest: atRestEmbedded})
	// With the shared arena (the default), the runtime's memory is reserved for two runs and
	// receipts pay for their Go memory only: two of them must fit the budget at once.
	shared := ocr.DefaultOptions()
	shared.RuntimeMemory = onnxrt.Memory
	shared.RuntimeMemory.Reserved = true
	shared.BatchParallel = 2
	reserved := memlimit.Derive(memlimit.Inputs{AtRest: atRestEmbedded, RuntimeWork: shared.RuntimeWork(), Runs: 2, Reserved: true})
	if reserved.Runs != 2 {
		t.Fatalf("the default 1 GiB holds the runtime's memory for %d runs, want 2", reserved.Runs)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := imaging.Inspect(data, shared.Limits)
		if err != nil {
			t.Fatal(err)
		}
		if cost := shared.Cost(h); cost > reserved.Budget/2 {
			t.Errorf("shared arena: %s (%d×%d) costs %d MiB; half the budget is %d MiB", filepath.Base(path), h.Width, h.Height, cost>>20, reserved.Budget>>21)
		}
	}
	costs := map[string]int64{}
	for _, cores := range []int{1, 2, 4, 16, 64} {
		opt := ocr.DefaultOptions()
		opt.RuntimeMemory = onnxrt.Memory
		opt.BatchParallel = cores
		for _, path := range paths {
			name := filepath.Base(path)
			t.Run(fmt.Sprintf("%d cores/%s", cores, name), func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				h, err := imaging.Inspect(data, opt.Limits)
				if err != nil {
					t.Fatal(err)
				}
				cost := opt.Cost(h)
				if cost > plan.MaxRequest {
					t.Errorf("%d×%d receipt costs %d MiB; the default plan refuses more than %d MiB", h.Width, h.Height, cost>>20, plan.MaxRequest>>20)
				}
				if cores >= 2 {
					if two, ok := costs[name]; ok && cost != two {
						t.Errorf("%d×%d receipt costs %d MiB on %d cores, %d MiB on 2", h.Width, h.Height, cost>>20, cores, two>>20)
					}
					costs[name] = cost
				}
			})
		}
	}
}

// TestCostBoundsWideBatches checks that the recognizer's share of the cost is the same bounded
// figure for an image whose crops may reach the widest bucket as for one that reaches 960 px
// (RecBatchPixels), and that it stops growing with the batches in flight past
// BatchPixelsInFlight.
func TestCostBoundsWideBatches(t *testing.T) {
	opt := ocr.DefaultOptions()
	opt.RuntimeMemory = onnxrt.Memory
	perPx := int64(4*3) + opt.RuntimeMemory.RecOutPerPixel + opt.RuntimeMemory.RecPerPixel
	for _, tt := range []struct {
		name          string
		parallel      int
		width, height int
		wantRecPixels int64 // the batches in flight the cost must allow for
	}{
		// Crops of a 60 px image are at most 48 × 60 / (MinSize+2) = 576 px wide.
		{"one batch, narrow image", 1, 60, 20, 6 * 48 * 576},
		{"one batch, narrow image, width buckets", 1, 60, 20, 6 * 48 * 640},
		{"one batch, reaching the widest bucket", 1, 1000, 1400, 6 * 48 * 960},
		{"two in flight", 2, 1000, 1400, 2 * 6 * 48 * 960},
		{"sixteen allowed, two in flight by pixels", 16, 1000, 1400, 2 * 6 * 48 * 960},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := opt
			o.BatchParallel = tt.parallel
			if strings.HasSuffix(tt.name, "width buckets") {
				o.RecWidthStep = 0 // the next bucket up: 640
			}
			// A tall thin image: detection is small, so ModelBytes is recognition's.
			got := o.ModelBytes(tt.width, tt.height)
			want := int64(16<<20) + tt.wantRecPixels*perPx
			if got < want || (got > want && got != o.ModelBytes(tt.width, tt.height)) {
				t.Errorf("ModelBytes(%d, %d) = %d MiB, want at least %d MiB", tt.width, tt.height, got>>20, want>>20)
			}
		})
	}
}
