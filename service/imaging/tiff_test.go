package imaging

import (
	"runtime"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
)

// TestTIFFDeflateBombPriced: a 295 KB TIFF whose one Deflate strip inflates to 290 MB, for a
// 7000×7000 1-bit page, is priced at what its decode holds (the 49 MB gray page and the 6 MB
// strip) and decoding allocates no more than that. x/image/tiff allowed such a strip up to 8
// bytes a pixel in a doubling buffer: 1 075 MiB allocated for it.
func TestTIFFDeflateBombPriced(t *testing.T) {
	data := hostile.TIFFDeflateBomb(7000, 7000, 1, 290<<20)
	h, err := Inspect(data, Limits{MaxPixels: 50_000_000, MaxSide: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	px := int64(7000 * 7000)
	strip := int64(7000/8) * 7000
	if h.PixelBytes != px || h.WorkBytes < strip || h.WorkBytes > strip+1<<20 {
		t.Fatalf("priced at %d + %d bytes; the page is %d and its strip %d", h.PixelBytes, h.WorkBytes, px, strip)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dec, err := decodeChecked(data, h)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(after.TotalAlloc - before.TotalAlloc); got > h.DecodeBytes()+1<<20 {
		t.Errorf("decoding allocated %d MiB; it was priced at %d MiB", got>>20, h.DecodeBytes()>>20)
	}
	if dec.Width != 7000 || dec.Height != 7000 {
		t.Errorf("decoded %d×%d", dec.Width, dec.Height)
	}
}
