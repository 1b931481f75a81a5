package docfile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/memlimit"
)

// TestHostileTIFFs: the TIFFs of issues 24 and 33, written by the test. A 1.2 MB chain of 50 000
// overlapping directories of 4095 entries (9.3 s a walk, walked three times a request, the
// first before admission) is refused at once: Detect reads at most a few directories, and Open's
// walk stops when the directories' entries overlap. A Deflate strip that inflates to 290 MB
// for a 1-bit page (1 075 MiB allocated before) decodes within its page and strip. Each is read
// within its deadline and within its resident-memory bound.
func TestHostileTIFFs(t *testing.T) {
	chain := hostile.TIFFOverlappingIFDs(50_000, 4095)
	if f := docfile.Detect(chain); f != docfile.FormatTIFF {
		t.Errorf("Detect: %q; a chain longer than Detect reads is a document, walked after admission", f)
	}
	r := testReader(t)
	for _, c := range []struct {
		name  string
		data  []byte
		want  error
		bound uint64
	}{
		{"50000 overlapping directories", chain, docfile.ErrCorrupt, 64 << 20},
		{"Deflate strip of 290 MB for a 7000×7000 1-bit page", hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20), nil, 49<<20 + 6<<20 + 64<<20},
		// Issue 33, M1: rows of 500 000 zero-length CCITT runs (resident memory grew 219 MiB a
		// request); they are refused, as libtiff refuses them, within the page's plan.
		{"CCITT rows of zero-length runs", hostile.TIFFCCITTZeroRuns(8, 500_000), docfile.ErrCorrupt, 64 << 20},
		// Issue 33, C1: G3 without EOLs in 10 000 one-row strips whose counts each claim the rest
		// of 4 MB (1 470 CPU-s by the probe): decoded from what each strip's row needs.
		{"G3 without EOLs over 10000 overlapping strips", hostile.TIFFG3NoEOLStrips(10_000, 1, 4<<20), nil, 64 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxFor(t, 30*time.Second)
			var err error
			grew := uint64(memlimit.Growth(10*time.Millisecond, func() { err = process(ctx, r, c.data) }))
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v; want %v", err, c.want)
			}
			bound := c.bound
			if raceDetector {
				// Still a fifth of the 1 075 MiB the bomb took before it was priced. Alone under
				// -race the 49 MiB page grew resident memory by 159 MiB.
				bound *= 2
			}
			if grew > bound {
				t.Errorf("resident memory grew by %d MiB; the bound is %d MiB", grew>>20, bound>>20)
			}
		})
	}
}

// TestTIFFPageEndsWithItsContext (issue 33, H2): reading a TIFF page's facts is cheap, and stops
// when its context has ended, so a survey of thousands of pages ends at its deadline, the client's
// hang-up or the shutdown. It ignored its context: the survey of a 2 000-page TIFF ran on for
// 960 CPU-s.
func TestTIFFPageEndsWithItsContext(t *testing.T) {
	doc := open(t, hostile.TIFFManyPages(3, 100))
	if _, err := doc.Page(ctxFor(t, time.Minute), 1); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := doc.Page(ended, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Page under a context that has ended: %v", err)
	}
}

// TestTIFFPageChargesCPU: drawing a TIFF page is priced against the request's CPU budget before
// it is decoded (a budget its estimate does not fit refuses it, nothing spent), and what the
// decode uses is charged.
func TestTIFFPageChargesCPU(t *testing.T) {
	doc := open(t, tiffPages(t, stripes(400, 300, 0), stripes(400, 300, 1)))
	ctx := ctxFor(t, time.Minute)
	page, err := doc.Page(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	none := cpubudget.New(time.Nanosecond)
	_, err = doc.Render(cpubudget.With(ctx, none), page, 1, nil)
	if !errors.Is(err, cpubudget.ErrExceeded) || none.Spent() != 0 {
		t.Fatalf("a budget of 1 ns: %v, %v spent; want it refused before the decode", err, none.Spent())
	}
	b := cpubudget.New(time.Minute)
	dec, err := doc.Render(cpubudget.With(ctx, b), page, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dec.Width != 400 || dec.Height != 300 || b.Spent() <= 0 || b.Planned() <= 0 {
		t.Errorf("decoded %d×%d; spent %v, planned %v", dec.Width, dec.Height, b.Spent(), b.Planned())
	}
}
