// Package jpegdec decodes baseline JPEG — what scanners and cameras write — faster than image/jpeg
// by splitting the work: one goroutine reads the Huffman-coded coefficients, which is inherently
// sequential, while the others run the inverse DCTs and write pixels, which is most of the work.
// Blocks whose only coefficient is DC (the blank paper that makes up most of a scanned page) skip
// the transform entirely.
//
// On the five 600-dpi A4 scans of the SROIE dev set (35 megapixels each) image/jpeg spends about
// 350 ms a page, which was the largest part of the pipeline's own time; see the package benchmark.
//
// Only what it decodes fast is accepted: sequential DCT with Huffman coding (SOF0 and SOF1), 8-bit
// samples, one grayscale or one interleaved Y/Cb/Cr scan, and the chroma layouts image.YCbCr
// represents. Everything else — progressive, arithmetic coding, 12-bit, CMYK, RGB, several scans —
// returns ErrUnsupported, and so does corrupt data: the caller then falls back to image/jpeg, whose
// broader support and error messages stay the reference. The output is the same *image.YCbCr or
// *image.Gray image/jpeg returns, pixel values within ±1 of it (both use an accurate integer DCT;
// they round differently).
package jpegdec

import (
	"errors"
	"fmt"
	"image"
	"runtime"
	"sync"

	"github.com/ocrgate/ocrgate/service/cpubudget"
	"github.com/ocrgate/ocrgate/service/work"
)

// ErrUnsupported wraps every reason Decode declines an input; the caller is expected to use
// image/jpeg instead.
var ErrUnsupported = errors.New("jpegdec: not decoded here")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

// JPEG markers used here (ITU T.81, table B.1).
const (
	markSOF0 = 0xC0 // baseline DCT
	markSOF1 = 0xC1 // extended sequential DCT (Huffman)
	markSOF2 = 0xC2 // progressive DCT (Huffman)
	markDHT  = 0xC4
	markRST0 = 0xD0
	markRST7 = 0xD7
	markSOI  = 0xD8
	markEOI  = 0xD9
	markSOS  = 0xDA
	markDQT  = 0xDB
	markDRI  = 0xDD
	markAP14 = 0xEE // Adobe: says whether three components are YCbCr or RGB
)

// zigzag[i] is the natural (row-major) index of the i-th coefficient in the order they are coded.
var zigzag = [64 + 16]uint8{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
	// Sixteen spare entries so that a corrupt run length that overshoots 63 indexes something
	// harmless instead of needing a bounds check in the hot loop; it is reported as corrupt.
	63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63,
}

type component struct {
	id     uint8
	h, v   int // sampling factors
	tq     int // quantization table
	td, ta int // DC and AC Huffman tables, from the scan header
}

// decoder holds what the headers said.
type decoder struct {
	data          []byte
	width, height int
	comps         []component
	quant         [4][64]int32 // natural order
	haveQuant     [4]bool
	dc, ac        [4]*huffTable
	restart       int // MCUs per restart interval; 0 for none
	adobe         bool
	adobeXform    uint8
	seenFrame     bool
	// want is the frame size the caller checked (image.DecodeConfig); zero when unchecked.
	want image.Point
	half bool // decode at half size (DecodeHalf)
}

// ErrFrameMismatch is returned when the frame header differs from the size the caller checked.
// It does not wrap ErrUnsupported: the caller must refuse the file, not hand it to another decoder.
var ErrFrameMismatch = errors.New("JPEG frame of another size than its header")

// Decode decodes a baseline JPEG. It returns *image.YCbCr for colour and *image.Gray for grayscale,
// with bounds starting at (0, 0), or an error wrapping ErrUnsupported. It does not check the image's
// size: callers that take uploads use DecodeSized with the size they checked.
func Decode(data []byte) (image.Image, error) {
	img, _, err := DecodePreview(data)
	return img, err
}

// DecodePreview is Decode that also returns the image at one eighth of its size, of the same type
// and chroma layout, ceil(w/8)×ceil(h/8) pixels. Each preview pixel is the mean of an 8×8 block,
// which is the block's DC coefficient: the decoder has it anyway, so the preview costs next to
// nothing, while shrinking a 35-megapixel scan by area averaging reads every pixel. It is what
// libjpeg's 1/8 scaled decoding produces.
func DecodePreview(data []byte) (img, preview image.Image, err error) {
	return DecodeSized(data, 0, 0)
}

// DecodeSized is DecodePreview for a file whose header was checked at width×height (with
// image.DecodeConfig, which reads the same first frame header, since this package parses markers
// as image/jpeg does): a frame of any other size is refused with ErrFrameMismatch before any pixel
// memory is allocated. Zero width and height check nothing.
func DecodeSized(data []byte, width, height int) (img, preview image.Image, err error) {
	return (&decoder{data: data, want: image.Pt(width, height)}).run()
}

// DecodeHalf is DecodeSized at half the size: img is ceil(w/2)×ceil(h/2) pixels, each the mean of
// a 2×2 square of the full-size image (an edge pixel of an odd side averages the edge with the
// block padding beyond it, which encoders fill by repeating the edge). The means come from the
// coefficients directly (see transformBlockHalf), so the transform costs a third and the image a
// quarter of the memory: what a caller that would shrink a 600-dpi scan anyway should ask for. The
// preview is DecodeSized's, one eighth of the full size.
func DecodeHalf(data []byte, width, height int) (img, preview image.Image, err error) {
	return (&decoder{data: data, want: image.Pt(width, height), half: true}).run()
}

// run decodes. Corrupt input is an error; a panic here is a bug, raised to the caller's unit of
// work (see package work), which fails that image alone and reports it. The IDCT workers hand
// their panics to this goroutine (see decodeScan), and are gone by the time this returns either
// way.
func (d *decoder) run() (img, preview image.Image, err error) {
	return d.decode()
}

func (d *decoder) decode() (image.Image, image.Image, error) {
	if len(d.data) < 4 || d.data[0] != 0xFF || d.data[1] != markSOI {
		return nil, nil, unsupported("missing SOI marker")
	}
	pos := 2
	for {
		m, next, ok := nextMarker(d.data, pos)
		if !ok {
			return nil, nil, unsupported("the data ends before a scan")
		}
		pos = next
		switch {
		case m == markEOI:
			return nil, nil, unsupported("no image data before EOI")
		case isRST(m):
			continue // a restart marker out of place: image/jpeg ignores it
		}
		if pos+2 > len(d.data) {
			return nil, nil, unsupported("truncated marker segment")
		}
		n := int(d.data[pos])<<8 | int(d.data[pos+1])
		if n < 2 || pos+n > len(d.data) {
			return nil, nil, unsupported("marker %#x segment length %d runs past the data", m, n)
		}
		seg := d.data[pos+2 : pos+n]
		pos += n
		var err error
		switch {
		case m == markSOF0 || m == markSOF1:
			err = d.parseFrame(seg)
		case m == markDHT:
			err = d.parseHuffman(seg)
		case m == markDQT:
			err = d.parseQuant(seg)
		case m == markDRI:
			if len(seg) != 2 {
				return nil, nil, unsupported("bad DRI length")
			}
			d.restart = int(seg[0])<<8 | int(seg[1])
		case m == markAP14:
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				d.adobe, d.adobeXform = true, seg[11]
			}
		case m == markSOS:
			return d.scan(seg, pos)
		case skippable(m):
			// Application data and comments.
		default:
			// Progressive, lossless, arithmetic-coded and hierarchical frames, DNL, and markers
			// image/jpeg does not know (0x00 after fill bytes among them).
			return nil, nil, unsupported("marker %#x", m)
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

func (d *decoder) parseFrame(seg []byte) error {
	if d.seenFrame {
		return fmt.Errorf("%w: a second frame header", ErrFrameMismatch)
	}
	d.seenFrame = true
	if len(seg) < 6 {
		return unsupported("short frame header")
	}
	if seg[0] != 8 {
		return unsupported("%d-bit samples", seg[0])
	}
	d.height = int(seg[1])<<8 | int(seg[2])
	d.width = int(seg[3])<<8 | int(seg[4])
	if d.want != (image.Point{}) && (d.width != d.want.X || d.height != d.want.Y) {
		return fmt.Errorf("%w: the frame is %d×%d, the header said %d×%d", ErrFrameMismatch, d.width, d.height, d.want.X, d.want.Y)
	}
	nc := int(seg[5])
	if d.width == 0 || d.height == 0 {
		return unsupported("image is %d×%d", d.width, d.height)
	}
	if nc != 1 && nc != 3 {
		return unsupported("%d components", nc)
	}
	if len(seg) != 6+3*nc {
		return unsupported("bad frame header length")
	}
	d.comps = make([]component, nc)
	for i := range d.comps {
		c := &d.comps[i]
		c.id = seg[6+3*i]
		c.h, c.v = int(seg[7+3*i]>>4), int(seg[7+3*i]&15)
		c.tq = int(seg[8+3*i])
		// Factors of 3 are legal but so rare that image/jpeg refuses them too, even for gray.
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.h == 3 || c.v == 3 || c.tq > 3 {
			return unsupported("component sampling %d×%d, quantization table %d", c.h, c.v, c.tq)
		}
		for j := range i {
			if d.comps[j].id == c.id {
				return unsupported("duplicate component id")
			}
		}
	}
	if nc == 1 {
		d.comps[0].h, d.comps[0].v = 1, 1 // a single component's MCU is one block whatever it says
		return nil
	}
	if d.comps[1].h != 1 || d.comps[1].v != 1 || d.comps[2].h != 1 || d.comps[2].v != 1 {
		return unsupported("chroma sampling other than 1×1")
	}
	if _, ok := subsampleRatio(d.comps[0].h, d.comps[0].v); !ok {
		return unsupported("luma sampling %d×%d", d.comps[0].h, d.comps[0].v)
	}
	return nil
}

// subsampleRatio maps luma sampling factors (chroma 1×1) to image.YCbCr's ratio.
func subsampleRatio(h, v int) (image.YCbCrSubsampleRatio, bool) {
	switch [2]int{h, v} {
	case [2]int{1, 1}:
		return image.YCbCrSubsampleRatio444, true
	case [2]int{2, 1}:
		return image.YCbCrSubsampleRatio422, true
	case [2]int{2, 2}:
		return image.YCbCrSubsampleRatio420, true
	case [2]int{1, 2}:
		return image.YCbCrSubsampleRatio440, true
	case [2]int{4, 1}:
		return image.YCbCrSubsampleRatio411, true
	case [2]int{4, 2}:
		return image.YCbCrSubsampleRatio410, true
	}
	return 0, false
}

func (d *decoder) parseQuant(seg []byte) error {
	for len(seg) > 0 {
		pq, tq := seg[0]>>4, int(seg[0]&15)
		if tq > 3 {
			return unsupported("quantization table %d", tq)
		}
		seg = seg[1:]
		q := &d.quant[tq]
		switch pq {
		case 0:
			if len(seg) < 64 {
				return unsupported("short quantization table")
			}
			for i := range 64 {
				q[zigzag[i]] = int32(seg[i])
			}
			seg = seg[64:]
		case 1:
			if len(seg) < 128 {
				return unsupported("short quantization table")
			}
			for i := range 64 {
				q[zigzag[i]] = int32(seg[2*i])<<8 | int32(seg[2*i+1])
			}
			seg = seg[128:]
		default:
			return unsupported("quantization precision %d", pq)
		}
		d.haveQuant[tq] = true
	}
	return nil
}

func (d *decoder) parseHuffman(seg []byte) error {
	for len(seg) > 0 {
		if len(seg) < 17 {
			return unsupported("short Huffman table")
		}
		class, th := seg[0]>>4, int(seg[0]&15)
		if class > 1 || th > 3 {
			return unsupported("Huffman table class %d id %d", class, th)
		}
		var counts [17]int
		total := 0
		for l := 1; l <= 16; l++ {
			counts[l] = int(seg[l])
			total += counts[l]
		}
		if total == 0 || total > 256 || len(seg) < 17+total {
			return unsupported("bad Huffman table")
		}
		t, err := newHuffTable(counts, seg[17:17+total])
		if err != nil {
			return err
		}
		if class == 0 {
			d.dc[th] = t
		} else {
			d.ac[th] = t
		}
		seg = seg[17+total:]
	}
	return nil
}

// scan decodes the one scan this package supports, whose header is seg and whose entropy-coded
// data starts at pos.
func (d *decoder) scan(seg []byte, pos int) (image.Image, image.Image, error) {
	if !d.seenFrame {
		return nil, nil, unsupported("scan before frame header")
	}
	if len(seg) < 1 {
		return nil, nil, unsupported("short scan header")
	}
	ns := int(seg[0])
	if ns != len(d.comps) {
		return nil, nil, unsupported("%d of %d components in the first scan", ns, len(d.comps))
	}
	if len(seg) != 4+2*ns {
		return nil, nil, unsupported("bad scan header length")
	}
	for i := range ns {
		id, tables := seg[1+2*i], seg[2+2*i]
		c := &d.comps[i]
		if c.id != id {
			return nil, nil, unsupported("scan components out of frame order")
		}
		c.td, c.ta = int(tables>>4), int(tables&15)
		if c.td > 3 || c.ta > 3 || d.dc[c.td] == nil || d.ac[c.ta] == nil {
			return nil, nil, unsupported("scan refers to a missing Huffman table")
		}
		if !d.haveQuant[c.tq] {
			return nil, nil, unsupported("frame refers to a missing quantization table")
		}
	}
	if ss, se, a := seg[1+2*ns], seg[2+2*ns], seg[3+2*ns]; ss != 0 || se != 63 || a != 0 {
		return nil, nil, unsupported("spectral selection in a sequential scan")
	}
	if len(d.comps) == 3 {
		// Three components are YCbCr unless an Adobe marker or the component ids say RGB.
		if d.adobe && d.adobeXform != 1 {
			return nil, nil, unsupported("Adobe colour transform %d", d.adobeXform)
		}
		if !d.adobe && d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B' {
			return nil, nil, unsupported("RGB components")
		}
	}
	img, preview, end, err := d.decodeScan(pos)
	if err != nil {
		return nil, nil, err
	}
	if err := d.trailer(end); err != nil {
		return nil, nil, err
	}
	return img, preview, nil
}

// trailer checks what follows the scan: the end of the image, possibly after stray restart markers
// or extraneous bytes, which image/jpeg skips the same way (see nextMarker). Another scan, a DNL
// marker or anything else means a layout this package leaves to image/jpeg.
func (d *decoder) trailer(pos int) error {
	for {
		m, next, ok := nextMarker(d.data, pos)
		if !ok {
			return unsupported("missing EOI marker")
		}
		pos = next
		switch {
		case m == markEOI:
			return nil
		case isRST(m):
			continue
		default:
			return unsupported("marker %#x after the scan", m)
		}
	}
}

// layout is where the blocks of one MCU row land.
type layout struct {
	mcusX, mcusY int
	blocksPerMCU int
	// For each block of an MCU, in coding order: its component and its block offset in the MCU.
	comp   []int
	bx, by []int
	planes [3][]uint8
	stride [3]int
	// The preview: one sample per block.
	pvPlanes [3][]uint8
	pvStride [3]int
}

func (d *decoder) newImage() (image.Image, image.Image, layout) {
	var l layout
	hmax, vmax := d.comps[0].h, d.comps[0].v
	l.mcusX = (d.width + 8*hmax - 1) / (8 * hmax)
	l.mcusY = (d.height + 8*vmax - 1) / (8 * vmax)
	for ci, c := range d.comps {
		for v := range c.v {
			for h := range c.h {
				l.comp = append(l.comp, ci)
				l.bx = append(l.bx, h)
				l.by = append(l.by, v)
			}
		}
	}
	l.blocksPerMCU = len(l.comp)
	bs := 8 // pixels a block's side decodes to
	visible := image.Rect(0, 0, d.width, d.height)
	if d.half {
		bs = 4
		visible = image.Rect(0, 0, (d.width+1)/2, (d.height+1)/2)
	}
	full := image.Rect(0, 0, bs*hmax*l.mcusX, bs*vmax*l.mcusY)
	pvFull := image.Rect(0, 0, hmax*l.mcusX, vmax*l.mcusY)
	pvVisible := image.Rect(0, 0, (d.width+7)/8, (d.height+7)/8)
	if len(d.comps) == 1 {
		g := image.NewGray(full)
		l.planes[0], l.stride[0] = g.Pix, g.Stride
		pv := image.NewGray(pvFull)
		l.pvPlanes[0], l.pvStride[0] = pv.Pix, pv.Stride
		return g.SubImage(visible), pv.SubImage(pvVisible), l
	}
	ratio, _ := subsampleRatio(hmax, vmax)
	y := image.NewYCbCr(full, ratio)
	l.planes = [3][]uint8{y.Y, y.Cb, y.Cr}
	l.stride = [3]int{y.YStride, y.CStride, y.CStride}
	pv := image.NewYCbCr(pvFull, ratio)
	l.pvPlanes = [3][]uint8{pv.Y, pv.Cb, pv.Cr}
	l.pvStride = [3]int{pv.YStride, pv.CStride, pv.CStride}
	return y.SubImage(visible), pv.SubImage(pvVisible), l
}

// chunk is a run of MCU rows of coefficients on its way from the entropy decoder to an IDCT worker.
type chunk struct {
	row0, rows int     // first MCU row and how many
	coef       []int16 // 64 per block, natural order, not yet dequantized
	last       []uint8 // per block: zigzag index of the last non-zero coefficient
}

// Fault injection for tests (nil otherwise): called by a transform worker before each chunk, and
// by the entropy decoder before it hands a chunk over. A panic in either must neither crash the
// process nor leave a goroutine behind.
var testHookTransform, testHookEntropy func()

// parallelMinBlocks is the image size (in 8×8 blocks) from which decoding is split over goroutines;
// below it the hand-off costs more than it saves. 5 000 blocks is a 0.3-megapixel 4:2:0 photo.
// The 15 sroie-dev receipts (0.4–1.7 megapixels) decoded in 39 ms together, best of seven each,
// against 43 ms with the split from 20 000 blocks.
const parallelMinBlocks = 5_000

func (d *decoder) decodeScan(pos int) (image.Image, image.Image, int, error) {
	img, preview, l := d.newImage()
	totalBlocks := l.mcusX * l.mcusY * l.blocksPerMCU
	rowBlocks := l.mcusX * l.blocksPerMCU
	// A chunk holds enough MCU rows for about 4 000 blocks: large enough to amortize the hand-off,
	// small enough that the few chunks in flight cost little memory.
	rowsPer := max(1, 4000/rowBlocks)

	var quant [3]*[64]int32
	for i, c := range d.comps {
		quant[i] = &d.quant[c.tq]
	}
	transform, bs := transformBlock, 8
	if d.half {
		transform, bs = transformBlockHalf, 4
	}
	// What each block of an MCU needs, worked out once: its plane, where it sits in its MCU (in
	// pixels, and in preview samples) and its quantization table.
	type slot struct {
		plane, pv            []uint8
		stride, pvStride     int
		x0, y0, pvX0, pvY0   int // offset in the MCU
		mcuW, mcuH, pvW, pvH int // the MCU's size in this plane
		q                    *[64]int32
	}
	slots := make([]slot, l.blocksPerMCU)
	for b := range slots {
		ci := l.comp[b]
		cf := d.comps[ci]
		slots[b] = slot{
			plane: l.planes[ci], pv: l.pvPlanes[ci], stride: l.stride[ci], pvStride: l.pvStride[ci],
			x0: bs * l.bx[b], y0: bs * l.by[b], pvX0: l.bx[b], pvY0: l.by[b],
			mcuW: bs * cf.h, mcuH: bs * cf.v, pvW: cf.h, pvH: cf.v,
			q: quant[ci],
		}
	}
	idct := func(c *chunk) {
		for r := range c.rows {
			my := c.row0 + r
			k := r * l.mcusX * l.blocksPerMCU
			for mx := range l.mcusX {
				for b := range slots {
					sl := &slots[b]
					blk := (*[64]int16)(c.coef[64*k : 64*k+64])
					last := c.last[k]
					dc := int(blk[0]) * int(sl.q[0])
					sl.pv[(my*sl.pvH+sl.pvY0)*sl.pvStride+mx*sl.pvW+sl.pvX0] = clampByte(descale(dc, 3) + 128)
					transform(sl.plane[(my*sl.mcuH+sl.y0)*sl.stride+mx*sl.mcuW+sl.x0:], sl.stride, blk[:], sl.q, last)
					// Hand the block back zeroed, as the entropy decoder expects it. Here it is
					// still in cache, and most blocks of a page hold only their mean.
					if last == 0 {
						blk[0] = 0
					} else {
						clear(blk[:])
					}
					k++
				}
			}
		}
	}

	workers := min(runtime.GOMAXPROCS(0), 4)
	if totalBlocks < parallelMinBlocks || workers < 2 {
		c := &chunk{coef: make([]int16, 64*rowBlocks*rowsPer), last: make([]uint8, rowBlocks*rowsPer)}
		end, err := d.entropyDecode(pos, l, rowsPer, func() *chunk { return c }, idct)
		if err != nil {
			return nil, nil, 0, err
		}
		return img, preview, end, nil
	}

	// Entropy decoding stays on this goroutine; workers transform. Chunks circulate through free,
	// which bounds the memory in flight and makes the decoder wait when the workers fall behind.
	free := make(chan *chunk, 2*workers)
	for range cap(free) {
		free <- &chunk{coef: make([]int16, 64*rowBlocks*rowsPer), last: make([]uint8, rowBlocks*rowsPer)}
	}
	todo := make(chan *chunk, 2*workers)
	var (
		wg      sync.WaitGroup
		carrier work.Carrier
		// The workers' CPU time is the decode's: charged to the budget it runs under.
		charged = cpubudget.Inherit()
	)
	for range workers {
		wg.Go(func() {
			charged(func() {
				for c := range todo {
					// A panic in a worker would end the process (no caller's recover reaches another
					// goroutine), and a worker that died would leave the decoder waiting for its
					// chunk forever. So each chunk is transformed under its own recovery, the chunk
					// goes back to free whatever happened, and the first panic is raised again on
					// the decoder's goroutine once the workers are gone (a bug here fails the unit
					// of work that decodes, see package work).
					func() {
						defer carrier.Recover()
						if testHookTransform != nil {
							testHookTransform()
						}
						idct(c)
					}()
					free <- c
				}
			})
		})
	}
	// However this function ends (an error, or a panic on this goroutine that the caller
	// recovers), the workers see todo closed and exit, and this returns only once they have:
	// nothing is left running on the image's memory.
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			close(todo)
			wg.Wait()
		}
	}
	defer stop()
	end, err := d.entropyDecode(pos, l, rowsPer, func() *chunk { return <-free }, func(c *chunk) {
		if testHookEntropy != nil {
			testHookEntropy()
		}
		todo <- c
	})
	stop() // every chunk transformed, and the workers' panic, if any, kept
	carrier.Raise()
	if err != nil {
		return nil, nil, 0, err
	}
	return img, preview, end, nil
}

// entropyDecode reads every MCU, filling chunks obtained from get and handing full ones to put. It
// returns the offset where the entropy-coded data ended.
func (d *decoder) entropyDecode(pos int, l layout, rowsPer int, get func() *chunk, put func(*chunk)) (int, error) {
	br := bitReader{data: d.data, pos: pos}
	var pred [3]int32
	var dcT, acT [4]*huffTable
	var qT [4]*[64]int32
	for b := range l.blocksPerMCU {
		c := d.comps[l.comp[b]]
		dcT[l.comp[b]], acT[l.comp[b]], qT[l.comp[b]] = d.dc[c.td], d.ac[c.ta], &d.quant[c.tq]
	}
	mcu := 0
	nextRST := 0
	for row0 := 0; row0 < l.mcusY; row0 += rowsPer {
		c := get()
		c.row0, c.rows = row0, min(rowsPer, l.mcusY-row0)
		k := 0
		for range c.rows * l.mcusX {
			if d.restart > 0 && mcu > 0 && mcu%d.restart == 0 {
				if err := br.restart(nextRST); err != nil {
					return 0, err
				}
				nextRST = (nextRST + 1) & 7
				pred = [3]int32{}
			}
			// Garbage decodes as some code or other; running out of data is what ends it, and
			// it is checked often so that a truncated upload fails fast.
			if br.overrun() {
				return 0, unsupported("entropy-coded data ends early")
			}
			mcu++
			for b := range l.blocksPerMCU {
				ci := l.comp[b]
				last, err := br.block((*[64]int16)(c.coef[64*k:64*k+64]), &pred[ci], dcT[ci], acT[ci], qT[ci])
				if err != nil {
					return 0, err
				}
				c.last[k] = last
				k++
			}
		}
		if br.overrun() {
			return 0, unsupported("entropy-coded data ends early")
		}
		put(c)
	}
	return br.pos, nil
}
