package tiffdec

import (
	"context"
	"errors"
	"image"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
)

// FuzzDecode opens a TIFF, plans and decodes its first pages within small limits. Whatever the
// bytes, the reader returns a page or an error: no panic (nothing here recovers one: the fuzzer
// sees it as the bug it is), a page of the size its plan gave, and only the errors this package
// documents. Seeds: the test set's small files, a G3 page without EOLs as TestG3WithoutEOL writes
// one, and the hostile generators.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.tif"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 16<<10 { // small seeds mutate faster; every layout has one
			f.Add(data)
		}
	}
	fax := image.NewGray(image.Rect(0, 0, 96, 40))
	src := readPNG(f, filepath.Join("testdata", "src-fax.png"))
	for y := range 40 {
		for x := range 96 {
			if r, _, _, _ := src.At(src.Bounds().Min.X+20+x, src.Bounds().Min.Y+20+y).RGBA(); r >= 0x8000 {
				fax.Pix[y*fax.Stride+x] = 255
			}
		}
	}
	f.Add(g3NoEOLTIFF(fax, 16, 1))
	f.Add(hostile.TIFFOverlappingIFDs(20, 41))
	f.Add(hostile.TIFFDeflateBomb(64, 64, 8, 1<<16))
	f.Add(chain(5, 3, false))
	f.Add(hostile.TIFFG3NoEOLStrips(4, 2, 64))
	f.Add(hostile.TIFFCCITTZeroRuns(2, 8))
	f.Add(hostile.TIFFPaletteExtra(8, 4, true))
	f.Add(hostile.TIFFCMYKAlpha(8, 4, true))
	f.Add(hostile.TIFFManyPages(3, 4))
	f.Add(hostile.TIFFJPEGStrip(64, 32))
	f.Add(hostile.TIFFYCbCrSubsampled(16, 8, 4, 1, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()

		file, err := Open(ctx, data, Limits{MaxPages: 4})
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrCorrupt) &&
				!errors.Is(err, ErrTooManyPages) && ctx.Err() == nil {
				t.Fatalf("Open: an error of no documented kind: %v", err)
			}
			return
		}
		for i := range file.Pages {
			p := &file.Pages[i]
			plan, err := p.Plan()
			if err != nil || p.Width > 1024 || p.Height > 1024 || plan.Bytes() > 8<<20 {
				continue
			}
			img, err := file.Decode(ctx, p)
			if err != nil {
				var pe *PageError
				if (!errors.As(err, &pe) || pe.Page != p.Number) && ctx.Err() == nil {
					t.Fatalf("page %d: an error of no documented kind: %v", p.Number, err)
				}
				continue
			}
			if b := img.Bounds(); b.Dx() != plan.Width || b.Dy() != plan.Height {
				t.Fatalf("page %d decoded %v; its plan says %d×%d", p.Number, b, plan.Width, plan.Height)
			}
		}
	})
}
