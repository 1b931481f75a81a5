package docfile_test

import (
	"bytes"
	"image"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/document/docfile"
)

// TestReadThrough opens one PDF twice, copied into the engine and read through a reader over its
// bytes (Limits.ReadThrough): the page count, the text layer and the rendered pixels are the same.
func TestReadThrough(t *testing.T) {
	data, _ := bornDigital(t, bornDigitalPage, bornDigitalPage[:2])
	copied := open(t, data)
	through, err := testReader(t).WithLimits(docfile.Limits{ReadThrough: 1}).Open(ctxFor(t, time.Minute), data)
	if err != nil {
		t.Fatalf("open through a reader: %v", err)
	}
	t.Cleanup(func() { through.Close() })
	if copied.NumPages() != 2 || through.NumPages() != copied.NumPages() {
		t.Fatalf("pages: copied %d, through a reader %d; want 2", copied.NumPages(), through.NumPages())
	}
	ctx := ctxFor(t, time.Minute)
	for n := 1; n <= 2; n++ {
		var texts [2]string
		var pix [2][]byte
		for i, doc := range []*docfile.Document{copied, through} {
			page, err := doc.Page(ctx, n)
			if err != nil {
				t.Fatalf("page %d (%d): %v", n, i, err)
			}
			scale := scaleOf(t, page, docfile.Limits{})
			cost := page.RenderCost(scale)
			for _, l := range page.Lines(cost.Width, cost.Height) {
				texts[i] += l.Text + "\n"
			}
			dec, err := doc.Render(ctx, page, scale, nil)
			if err != nil {
				t.Fatalf("render page %d (%d): %v", n, i, err)
			}
			pix[i] = pixels(dec.Image)
		}
		if texts[0] == "" || texts[0] != texts[1] {
			t.Errorf("page %d: text copied %q, through a reader %q", n, texts[0], texts[1])
		}
		if !bytes.Equal(pix[0], pix[1]) {
			t.Errorf("page %d: the renders differ", n)
		}
	}
}

// pixels is an image's RGBA bytes, row by row.
func pixels(img image.Image) []byte {
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy()*4)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			out = append(out, byte(r>>8), byte(g>>8), byte(bl>>8), byte(a>>8))
		}
	}
	return out
}
