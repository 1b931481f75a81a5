// Package tiffpages reads multi-page TIFF files page by page.
//
// golang.org/x/image/tiff decodes the first image file directory (IFD) of a file and nothing
// else. A TIFF's pages are a chain of IFDs, each pointing at the next, so this package walks that
// chain itself (TIFF 6.0, section 2: an 8-byte header whose last four bytes locate the first IFD;
// each IFD is a 2-byte entry count, 12-byte entries and the 4-byte offset of the next IFD, 0 at
// the end), reads every page's size from its IFD before any pixel is decoded, and decodes page N
// by handing the decoder a view of the file whose header points at IFD N (strip and tile offsets
// are absolute, so nothing else needs to move). Nothing in the file is trusted: every offset is
// checked against the length, a chain that loops is refused, and the number of pages is capped.
package tiffpages

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"

	"golang.org/x/image/tiff"
)

// The errors this package wraps.
var (
	// ErrFormat means the bytes are not a classic TIFF (BigTIFF included: the decoder cannot read it).
	ErrFormat = errors.New("not a TIFF")
	// ErrCorrupt means the IFD chain or a page is broken.
	ErrCorrupt = errors.New("corrupt TIFF")
	// ErrTooManyPages means the chain holds more pages than the caller allows.
	ErrTooManyPages = errors.New("too many TIFF pages")
)

// Tags read from each IFD.
const (
	tagNewSubfileType = 254
	tagImageWidth     = 256
	tagImageLength    = 257
)

// TIFF field types that can hold a size.
const (
	typeShort = 3
	typeLong  = 4
)

// Page is one page of a TIFF: where its IFD is and how large it says it is.
type Page struct {
	IFD           uint32 // offset of the page's IFD in the file
	Width, Height int
}

// IsTIFF reports whether data starts with a classic TIFF header ("II*\0" or "MM\0*").
func IsTIFF(data []byte) bool {
	_, ok := byteOrder(data)
	return ok
}

func byteOrder(data []byte) (binary.ByteOrder, bool) {
	if len(data) < 8 {
		return nil, false
	}
	switch string(data[:4]) {
	case "II*\x00":
		return binary.LittleEndian, true
	case "MM\x00*":
		return binary.BigEndian, true
	}
	return nil, false
}

// Pages walks the IFD chain and returns the pages in file order, skipping reduced-resolution
// images (thumbnails, NewSubfileType bit 0). It fails with ErrTooManyPages beyond maxPages pages
// (0: no limit other than the file's length, since every IFD takes at least 18 bytes).
func Pages(data []byte, maxPages int) ([]Page, error) {
	bo, ok := byteOrder(data)
	if !ok {
		if len(data) >= 4 && (string(data[:4]) == "II+\x00" || string(data[:4]) == "MM\x00+") {
			return nil, fmt.Errorf("%w: BigTIFF is not supported", ErrFormat)
		}
		return nil, ErrFormat
	}
	var pages []Page
	seen := map[uint32]bool{}
	off := bo.Uint32(data[4:8])
	for off != 0 {
		if seen[off] {
			return nil, fmt.Errorf("%w: the IFD chain loops back to offset %d", ErrCorrupt, off)
		}
		seen[off] = true
		if off < 8 || uint64(off)+2 > uint64(len(data)) {
			return nil, fmt.Errorf("%w: IFD offset %d is outside the %d-byte file", ErrCorrupt, off, len(data))
		}
		n := uint64(bo.Uint16(data[off:]))
		end := uint64(off) + 2 + 12*n
		if end+4 > uint64(len(data)) {
			return nil, fmt.Errorf("%w: the IFD at %d runs past the end of the file", ErrCorrupt, off)
		}
		p := Page{IFD: off}
		thumbnail := false
		for i := uint64(0); i < n; i++ {
			e := data[uint64(off)+2+12*i:]
			tag, typ, count := bo.Uint16(e), bo.Uint16(e[2:]), bo.Uint32(e[4:])
			if count != 1 {
				continue
			}
			var v uint32
			switch typ {
			case typeShort:
				v = uint32(bo.Uint16(e[8:]))
			case typeLong:
				v = bo.Uint32(e[8:])
			default:
				continue
			}
			switch tag {
			case tagImageWidth:
				p.Width = int(v)
			case tagImageLength:
				p.Height = int(v)
			case tagNewSubfileType:
				thumbnail = v&1 != 0
			}
		}
		if !thumbnail {
			if p.Width <= 0 || p.Height <= 0 {
				return nil, fmt.Errorf("%w: page %d has no size", ErrCorrupt, len(pages)+1)
			}
			if maxPages > 0 && len(pages) == maxPages {
				return nil, fmt.Errorf("%w: more than %d", ErrTooManyPages, maxPages)
			}
			pages = append(pages, p)
		}
		off = bo.Uint32(data[end:])
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("%w: no pages", ErrCorrupt)
	}
	return pages, nil
}

// Decode decodes one page. The caller checks p's size against its limits first: the decoder
// allocates the whole page. A panic in the decoder is returned as ErrCorrupt.
func Decode(data []byte, p Page) (img image.Image, err error) {
	bo, ok := byteOrder(data)
	if !ok {
		return nil, ErrFormat
	}
	v := &view{data: data}
	copy(v.head[:], data[:8])
	bo.PutUint32(v.head[4:], p.IFD)
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("%w: the decoder failed: %v", ErrCorrupt, r)
		}
	}()
	cfg, err := tiff.DecodeConfig(v.section())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if cfg.Width != p.Width || cfg.Height != p.Height {
		return nil, fmt.Errorf("%w: the page is %d×%d in its IFD but %d×%d to the decoder", ErrCorrupt, p.Width, p.Height, cfg.Width, cfg.Height)
	}
	img, err = tiff.Decode(v.section())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return img, nil
}

// view is the file with its header's first-IFD offset replaced, without copying the file.
type view struct {
	data []byte
	head [8]byte
}

// ReadAt reads from the file, serving the first 8 bytes from the patched header.
func (v *view) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(v.data)) {
		return 0, io.EOF
	}
	n := copy(p, v.data[off:])
	if off < 8 {
		copy(p, v.head[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// section gives the decoder a fresh reader over the view; it implements io.ReaderAt, which the
// decoder uses as it is instead of reading the file into memory.
func (v *view) section() *io.SectionReader {
	return io.NewSectionReader(v, 0, int64(len(v.data)))
}
