package docfile_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// FuzzDocument drives the document entry point the way the service will: open, count pages,
// read page 1 (text layer, decision, lines) and render it within a small pixel cap. Whatever the
// bytes, it must not panic, must finish within its deadline (plus slack), and every error must
// be one of the package's sentinels or the deadline.
func FuzzDocument(f *testing.F) {
	born, _ := bornDigital(f, bornDigitalPage)
	f.Add(born)
	f.Add(scannedPDF(f, [][]byte{smallJPEG(f)}, bornDigitalPage[:2]))
	f.Add(tiffPages(f, stripes(20, 10, 0), stripes(10, 20, 1)))
	f.Add(encryptedPDF(f))
	f.Add(onePage("0 0 14400 14400", "", stream("", []byte("BT ET"))))
	f.Add(onePage("0 0 595 842", "/XObject << /Fm1 5 0 R >>", stream("", []byte("/Fm1 Do")),
		stream("/Type /XObject /Subtype /Form /BBox [0 0 9 9] /Resources << /XObject << /Fm1 5 0 R >> >>", []byte("/Fm1 Do"))))
	f.Add(born[:len(born)/2])
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj"))
	f.Add([]byte("II*\x00\x08\x00\x00\x00\x00\x00"))
	f.Add(hostile.TIFFPaletteExtra(16, 8, true))
	f.Add(hostile.TIFFG3NoEOLStrips(6, 2, 64))
	f.Add(hostile.TIFFJPEGStrip(32, 16))

	r := testReader(f).WithLimits(docfile.Limits{MaxRenderPixels: 1_000_000, MaxPages: 5})
	sentinels := []error{docfile.ErrNotDocument, docfile.ErrEncrypted, docfile.ErrCorrupt, docfile.ErrDegenerate,
		docfile.ErrTooLarge, docfile.ErrTooManyPages, docfile.ErrBadSelection, docfile.ErrUnsupported,
		context.DeadlineExceeded}
	f.Fuzz(func(t *testing.T, data []byte) {
		const deadline = 3 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		start := time.Now()
		err := func() error {
			doc, err := r.Open(ctx, data)
			if err != nil {
				return err
			}
			defer doc.Close()
			if doc.NumPages() < 1 {
				t.Fatalf("opened with %d pages", doc.NumPages())
			}
			if _, err := doc.Select(""); err != nil && !errors.Is(err, docfile.ErrTooManyPages) {
				return err
			}
			page, err := doc.Page(ctx, 1)
			if err != nil {
				return err
			}
			s, err := page.Scale(docfile.DefaultScalePolicy(), r.Limits())
			if err != nil {
				return err
			}
			c := page.RenderCost(s)
			if !page.Raster && (c.Pixels > 1_000_000 || c.Width < 1 || c.Height < 1) {
				t.Fatalf("scale %v gives %d×%d px, over the cap", s, c.Width, c.Height)
			}
			_ = page.TextUsable()
			_ = page.Lines(c.Width, c.Height)
			dec, err := doc.Render(ctx, page, s, nil)
			if err != nil {
				return err
			}
			if b := dec.Image.Bounds(); !page.Raster && (b.Dx() != c.Width || b.Dy() != c.Height || dec.Width != c.Width || dec.Height != c.Height) {
				t.Fatalf("render %v, announced %d×%d", b, c.Width, c.Height)
			}
			return nil
		}()
		if took := time.Since(start); took > deadline+timeSlack {
			t.Fatalf("took %v past a %v deadline", took, deadline)
		}
		if err == nil {
			return
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("untyped error: %v", err)
	})
}

// smallJPEG is a 64×48 JPEG with a dark bar, to wrap as a scanned page.
func smallJPEG(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			c := color.RGBA{255, 255, 255, 255}
			if y > 20 && y < 28 && x > 8 && x < 56 {
				c = color.RGBA{0, 0, 0, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
