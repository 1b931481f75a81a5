package imaging

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/ocrgate/ocrgate/service/work"
)

// pattern is a small opaque image with a gradient and some noise, so encoders produce real data.
func pattern(w, h int) *image.NRGBA {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(x * 255 / max(w-1, 1)), G: uint8(y * 255 / max(h-1, 1)),
				B: uint8(rng.IntN(256)), A: 255,
			})
		}
	}
	return img
}

func encode(t testing.TB, format string, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	case "gif":
		err = gif.Encode(&buf, img, nil)
	case "bmp":
		err = bmp.Encode(&buf, img)
	case "tiff":
		err = tiff.Encode(&buf, img, &tiff.Options{Compression: tiff.Deflate})
	default:
		t.Fatalf("no encoder for %q", format)
	}
	if err != nil {
		t.Fatalf("encoding %s: %v", format, err)
	}
	return buf.Bytes()
}

// pngHeader is a PNG signature and IHDR chunk (8-bit RGB) declaring w×h, with a correct CRC, and no
// pixel data: enough for DecodeConfig, which must refuse it before anything is allocated.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 0, 17)
	ihdr = append(ihdr, "IHDR"...)
	ihdr = binary.BigEndian.AppendUint32(ihdr, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // depth, colour type RGB, compression, filter, interlace
	b.Write(binary.BigEndian.AppendUint32(nil, 13))
	b.Write(ihdr)
	b.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(ihdr)))
	return b.Bytes()
}

func TestDecodeFormats(t *testing.T) {
	img := pattern(37, 23)
	tests := []struct {
		name       string
		data       []byte
		wantFormat string
		w, h       int
	}{
		{"png", encode(t, "png", img), "png", 37, 23},
		{"jpeg", encode(t, "jpeg", img), "jpeg", 37, 23},
		{"gif", encode(t, "gif", img), "gif", 37, 23},
		{"bmp", encode(t, "bmp", img), "bmp", 37, 23},
		{"tiff", encode(t, "tiff", img), "tiff", 37, 23},
		{"gray png", encode(t, "png", image.NewGray(image.Rect(0, 0, 5, 9))), "png", 5, 9},
		{"1x1 png", encode(t, "png", pattern(1, 1)), "png", 1, 1},
		{"1x1 jpeg", encode(t, "jpeg", pattern(1, 1)), "jpeg", 1, 1},
		// Decode sees bytes only: a client's file name (or media type) never reaches it, so a
		// WebP sent as scan.png and a PNG sent as photo.jpg are what they are.
		{"webp named .png", losslessWebP(951, 537, stripes), "webp", 951, 537},
		{"png named .jpg", encode(t, "png", pattern(720, 80)), "png", 720, 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode(tt.data, Limits{MaxPixels: 50_000_000, MaxSide: 10_000})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d.Format != tt.wantFormat {
				t.Errorf("format %q, want %q", d.Format, tt.wantFormat)
			}
			if d.Width != tt.w || d.Height != tt.h {
				t.Errorf("size %d×%d, want %d×%d", d.Width, d.Height, tt.w, tt.h)
			}
			if b := d.Image.Bounds(); b != image.Rect(0, 0, tt.w, tt.h) {
				t.Errorf("image bounds %v, want origin and the reported size", b)
			}
		})
	}
}

func TestDecodeKeepsYCbCr(t *testing.T) {
	d, err := Decode(encode(t, "jpeg", pattern(40, 30)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Image.(*image.YCbCr); !ok {
		t.Errorf("a JPEG without orientation decoded to %T; want *image.YCbCr, unconverted", d.Image)
	}
}

// TestDecodeGIFFrameOffset checks that a first frame smaller than the GIF's screen is placed on it,
// so the image starts at (0, 0) as the pipeline's coordinates assume.
func TestDecodeGIFFrameOffset(t *testing.T) {
	pal := color.Palette{color.Black, color.White}
	frame := image.NewPaletted(image.Rect(4, 3, 8, 6), pal)
	var buf bytes.Buffer
	err := gif.EncodeAll(&buf, &gif.GIF{
		Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{ColorModel: pal, Width: 10, Height: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(buf.Bytes(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Image.Bounds() != image.Rect(0, 0, 10, 8) {
		t.Fatalf("bounds %v, want the 10×8 screen", d.Image.Bounds())
	}
	if _, _, _, a := d.Image.At(5, 4).RGBA(); a != 0xFFFF {
		t.Errorf("frame pixel not opaque: alpha %d", a)
	}
	if _, _, _, a := d.Image.At(0, 0).RGBA(); a != 0 {
		t.Errorf("screen outside the frame is not transparent: alpha %d", a)
	}
}

func TestDecodeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	random[0] = 0 // no format starts with a zero byte
	validPNG := encode(t, "png", pattern(64, 64))
	validJPEG := encode(t, "jpeg", pattern(64, 64))
	zeroWidth := pngHeader(0, 10)

	tests := []struct {
		name string
		data []byte
		lim  Limits
		want error
	}{
		{"empty", nil, Limits{}, ErrUnsupportedFormat},
		{"random bytes", random, Limits{}, ErrUnsupportedFormat},
		{"html", []byte("<!DOCTYPE html>\n<html><body><img src=x></body></html>"), Limits{}, ErrUnsupportedFormat},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"), Limits{}, ErrUnsupportedFormat},
		{"zip", []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00abcdefghijklmnopqrstuvwxyz"), Limits{}, ErrUnsupportedFormat},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`), Limits{}, ErrUnsupportedFormat},
		{"truncated png", validPNG[:len(validPNG)/2], Limits{}, ErrUndecodable},
		{"truncated jpeg", validJPEG[:len(validJPEG)/2], Limits{}, ErrUndecodable},
		{"png header only", validPNG[:40], Limits{}, ErrUndecodable},
		{"zero width png", zeroWidth, Limits{}, ErrUndecodable},
		{"60000x60000 png over side", pngHeader(60000, 60000), Limits{MaxPixels: 50_000_000, MaxSide: 10_000}, ErrTooLarge},
		{"60000x60000 png over pixels", pngHeader(60000, 60000), Limits{MaxPixels: 50_000_000}, ErrTooLarge},
		{"wide png over side", pngHeader(10_001, 1), Limits{MaxSide: 10_000}, ErrTooLarge},
		{"64x64 over pixel limit", validPNG, Limits{MaxPixels: 64*64 - 1}, ErrTooLarge},
		{"64x64 at pixel limit", validPNG, Limits{MaxPixels: 64 * 64, MaxSide: 64}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.data, tt.lim)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if err.Error() == tt.want.Error() {
				t.Errorf("error %q carries no detail", err)
			}
		})
	}
}

// TestDecodeBombIsCheap checks that a header claiming 60000×60000 is refused without allocating the
// 14 GB the image would need.
func TestDecodeBombIsCheap(t *testing.T) {
	data := pngHeader(60000, 60000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode(data, Limits{MaxPixels: 50_000_000, MaxSide: 10_000})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	const msg = "image is 60000×60000 px; the limit is 10000 px a side"
	if !bytes.Contains([]byte(err.Error()), []byte(msg)) {
		t.Errorf("error %q does not say %q", err, msg)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing the header allocated %d bytes", alloc)
	}
}

// TestSafelyRecovers checks that a third-party decoder's panic is a 422's error that carries none
// of the panic's words, and that the panic is reported.
func TestSafelyRecovers(t *testing.T) {
	var reported []*work.Panic
	ctx := work.WithReporter(context.Background(), func(p *work.Panic) { reported = append(reported, p) })
	err := safely(ctx, func() error { panic("index out of range [600] with length 600") })
	if !errors.Is(err, ErrUndecodable) {
		t.Fatalf("panic became %v, want ErrUndecodable", err)
	}
	if strings.Contains(err.Error(), "index") || strings.Contains(err.Error(), "600") {
		t.Errorf("the error %q quotes the panic", err)
	}
	if len(reported) != 1 || reported[0].Unit != "image decoder" {
		t.Errorf("reported %v, want the panic once", reported)
	}
}

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic, and whatever it accepts must be a
// non-empty image within the limits.
func FuzzDecode(f *testing.F) {
	for _, format := range []string{"png", "jpeg", "gif", "bmp", "tiff"} {
		data := encode(f, format, pattern(6, 4))
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(data[:min(len(data), 30)])
	}
	f.Add(exifJPEG(f, gradientQuadrants(false), []byte("II"), 6))
	f.Add(exifJPEG(f, gradientQuadrants(false), []byte("MM"), 3))
	f.Add(pngHeader(60000, 60000))
	f.Add(pngHeader(0, 5))
	f.Add([]byte("RIFF\x10\x00\x00\x00WEBPVP8 \x04\x00\x00\x00abcd"))
	f.Add([]byte("BM\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("II*\x00\x08\x00\x00\x00\xff\xff"))
	f.Add([]byte{})
	for _, h := range hostileCorpus {
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", h.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	lim := Limits{MaxPixels: 1 << 20, MaxSide: 4096, MaxScans: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data, lim)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedFormat) && !errors.Is(err, ErrUndecodable) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v wraps none of the package's errors", err)
			}
			return
		}
		b := d.Image.Bounds()
		if d.Width <= 0 || d.Height <= 0 || b.Dx() != d.Width || b.Dy() != d.Height || b.Min != (image.Point{}) {
			t.Fatalf("accepted image with size %d×%d and bounds %v", d.Width, d.Height, b)
		}
		if d.Width > lim.MaxSide || d.Height > lim.MaxSide || d.Width*d.Height > lim.MaxPixels {
			t.Fatalf("accepted %d×%d beyond the limits", d.Width, d.Height)
		}
	})
}

// TestDecodeHalfPolicy checks which images Limits.HalfPixels decodes at half size: baseline JPEGs
// from that many pixels, nothing else, and none when it is 0; the admitted cost (DecodeBytes) does
// not depend on it, since a JPEG the fast decoder declines is decoded whole.
func TestDecodeHalfPolicy(t *testing.T) {
	const w, h = 333, 77
	jpg := encode(t, "jpeg", pattern(w, h))
	progressive, err := os.ReadFile(filepath.Join("..", "jpegdec", "testdata", "progressive.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	pw, ph := 67, 45 // the fixture's size
	tests := []struct {
		name       string
		data       []byte
		halfPixels int
		w, h       int // of the file
		wantShrink int
	}{
		{"baseline at the threshold", jpg, w * h, w, h, 2},
		{"baseline above it", jpg, 1, w, h, 2},
		{"baseline below it", jpg, w*h + 1, w, h, 1},
		{"never", jpg, 0, w, h, 1},
		{"progressive", progressive, 1, pw, ph, 1},
		{"png", encode(t, "png", pattern(w, h)), 1, w, h, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := Limits{HalfPixels: tt.halfPixels}
			hd, err := Inspect(tt.data, lim)
			if err != nil {
				t.Fatal(err)
			}
			full, err := Inspect(tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if hd.Half != (tt.wantShrink == 2) || hd.DecodeBytes() != full.DecodeBytes() {
				t.Fatalf("Half %v, cost %d; want %v and the full decode's %d", hd.Half, hd.DecodeBytes(), tt.wantShrink == 2, full.DecodeBytes())
			}
			d, err := Decode(tt.data, lim)
			if err != nil {
				t.Fatal(err)
			}
			s := tt.wantShrink
			if d.Factor() != s || d.Width != (tt.w+s-1)/s || d.Height != (tt.h+s-1)/s || d.Image.Bounds().Size() != image.Pt(d.Width, d.Height) {
				t.Fatalf("factor %d, %d×%d (bounds %v); want %d, %d×%d", d.Factor(), d.Width, d.Height, d.Image.Bounds(), s, (tt.w+s-1)/s, (tt.h+s-1)/s)
			}
			if fw, fh := d.FullSize(); fw != tt.w || fh != tt.h {
				t.Fatalf("full size %d×%d, want %d×%d", fw, fh, tt.w, tt.h)
			}
			// Whole is the file decoded at full size, whichever way d was decoded, with d's
			// format; a shrunk one is decoded again, and gives up on an ended context.
			d.Format = "pdf"
			whole, err := d.Whole(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ref, err := Decode(tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if whole.Factor() != 1 || whole.Width != tt.w || whole.Height != tt.h || whole.Format != "pdf" || !samePixels(whole.Image, ref.Image) {
				t.Fatalf("Whole: factor %d, %d×%d, format %q, same pixels as a full decode %v", whole.Factor(), whole.Width, whole.Height, whole.Format, samePixels(whole.Image, ref.Image))
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := d.Whole(ctx); s > 1 && !errors.Is(err, context.Canceled) {
				t.Fatalf("Whole with a cancelled context: %v", err)
			}
		})
	}
}

// countingLease is a Lease that counts the holds taken on it and those still held.
type countingLease struct {
	mu          sync.Mutex
	holds, held int
}

func (l *countingLease) Hold() func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holds++
	l.held++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.held--
		})
	}
}

// TestDecodeHoldsItsLease: DecodeContext holds the lease it is given while it decodes, and Whole
// holds the same lease for its own decode of a shrunk image; both let go once done.
func TestDecodeHoldsItsLease(t *testing.T) {
	const w, h = 333, 77
	lease := &countingLease{}
	d, err := DecodeContext(context.Background(), encode(t, "jpeg", pattern(w, h)), Limits{HalfPixels: 1}, lease)
	if err != nil {
		t.Fatal(err)
	}
	if d.Factor() != 2 {
		t.Fatalf("factor %d: the image no longer decodes shrunk", d.Factor())
	}
	if _, err := d.Whole(context.Background()); err != nil {
		t.Fatal(err)
	}
	lease.mu.Lock()
	defer lease.mu.Unlock()
	if lease.holds != 2 || lease.held != 0 {
		t.Fatalf("%d holds, %d still held; want 2 and 0", lease.holds, lease.held)
	}
}

// samePixels reports whether a and b have the same bounds and colours.
func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.RGBAModel.Convert(a.At(x, y)) != color.RGBAModel.Convert(b.At(x, y)) {
				return false
			}
		}
	}
	return true
}
