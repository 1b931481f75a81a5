// Package testdoc writes the documents the tests read: born-digital PDFs with known text at known
// positions (go-pdf/fpdf), scanned PDFs that wrap JPEGs as their pages the way a scanner does,
// PDFs assembled object by object (for what a PDF library would refuse to write), and multi-page
// TIFFs. Tests build what they read, so no sample document is downloaded or committed. Nothing in
// the service imports this package.
package testdoc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/tiff"
)

// Text is a string drawn on a born-digital page: baseline at (X, Y) points from the page's top-left
// corner, Helvetica at Size points.
type Text struct {
	X, Y, Size float64
	Text       string
}

// BornDigital writes a PDF with one A4 portrait page per entry of pages, each holding its strings,
// and returns it with the width fpdf measures for each string (in points), page by page.
func BornDigital(pages ...[]Text) ([]byte, [][]float64, error) {
	pdf := fpdf.New("P", "pt", "A4", "")
	widths := make([][]float64, len(pages))
	for i, strs := range pages {
		pdf.AddPage()
		for _, s := range strs {
			pdf.SetFont("Helvetica", "", s.Size)
			pdf.Text(s.X, s.Y, s.Text)
			widths[i] = append(widths[i], pdf.GetStringWidth(s.Text))
		}
	}
	data, err := output(pdf)
	return data, widths, err
}

// Encrypted writes a one-page PDF that needs the user password to be opened.
func Encrypted(userPassword string) ([]byte, error) {
	pdf := fpdf.New("P", "pt", "A4", "")
	pdf.SetProtection(0, userPassword, userPassword+"-owner")
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 12)
	pdf.Text(72, 72, "TOP SECRET")
	return output(pdf)
}

// ScanOptions shape a scanned PDF.
type ScanOptions struct {
	// DPI is the resolution the scans are placed at: each JPEG fills a page of its pixel size at
	// this resolution, as a scanner's PDF does.
	DPI float64
	// Mark draws a white half-point square over each scan's top-left corner: a vector object on
	// the page, so that the page is rendered instead of having its JPEG read from the file.
	Mark bool
	// After adds a born-digital A4 page holding these strings after the scans when not nil.
	After []Text
}

// Scanned wraps JPEGs as the pages of a PDF, one image filling each page.
func Scanned(jpegs [][]byte, opt ScanOptions) ([]byte, error) {
	if opt.DPI <= 0 {
		return nil, errors.New("testdoc: a scan needs its resolution")
	}
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 595, Ht: 842}})
	for i, data := range jpegs {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("testdoc: scan %d: %w", i, err)
		}
		w, h := float64(cfg.Width)*72/opt.DPI, float64(cfg.Height)*72/opt.DPI
		pdf.AddPageFormat("P", fpdf.SizeType{Wd: w, Ht: h})
		name := fmt.Sprintf("scan%d", i)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "JPG"}, bytes.NewReader(data))
		pdf.ImageOptions(name, 0, 0, w, h, false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
		if opt.Mark {
			pdf.SetFillColor(255, 255, 255)
			pdf.Rect(0, 0, 0.5, 0.5, "F")
		}
	}
	if opt.After != nil {
		pdf.AddPageFormat("P", fpdf.SizeType{Wd: 595, Ht: 842})
		for _, s := range opt.After {
			pdf.SetFont("Helvetica", "", s.Size)
			pdf.Text(s.X, s.Y, s.Text)
		}
	}
	return output(pdf)
}

func output(pdf *fpdf.Fpdf) ([]byte, error) {
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("testdoc: write PDF: %w", err)
	}
	return buf.Bytes(), nil
}

// Raw assembles a PDF from object bodies (object i+1 is objs[i]) with a correct cross-reference
// table, so that PDFium reads exactly what a test means and repairs nothing. The catalog must be
// object 1.
func Raw(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// Stream is a PDF stream object with the given dictionary entries around data.
func Stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// Deflate compresses data with zlib (PDF's FlateDecode).
func Deflate(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	// Into memory: zlib's writer fails only when the writer under it does.
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

// OnePage is a catalog, a page tree and one page of the given media box whose content is object 4
// and whose resources are res; more objects follow from object 5.
func OnePage(mediaBox, res, content string, more ...string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [%s] /Resources << %s >> /Contents 4 0 R >>", mediaBox, res),
		content,
	}
	return Raw(append(objs, more...)...)
}

// TIFF encodes images as a multi-page TIFF: each is encoded alone by x/image/tiff (one IFD) and the
// files are concatenated, each IFD's offsets moved by its file's position and the IFDs chained.
// The result is a standard multi-page TIFF (little-endian, as the encoder writes).
func TIFF(imgs ...image.Image) ([]byte, error) {
	var out []byte
	var prevNext int // position of the previous IFD's next-IFD field in out
	le := binary.LittleEndian
	for i, img := range imgs {
		var b bytes.Buffer
		if err := tiff.Encode(&b, img, &tiff.Options{Compression: tiff.Deflate}); err != nil {
			return nil, fmt.Errorf("testdoc: TIFF page %d: %w", i, err)
		}
		f := b.Bytes()
		base := 0
		if i == 0 {
			out = append(out, f...)
		} else {
			// Append everything after the header, shifted so that file offset o lands at
			// base+o with base = len(out)-8.
			base = len(out) - 8
			out = append(out, f[8:]...)
		}
		ifd := int(le.Uint32(f[4:]))
		n := int(le.Uint16(f[ifd:]))
		pos := base + ifd
		if i > 0 {
			// Rebase every offset-valued entry: values that do not fit in 4 bytes and the strip
			// offsets.
			for k := 0; k < n; k++ {
				e := out[pos+2+12*k:]
				tag, typ, count := le.Uint16(e), le.Uint16(e[2:]), le.Uint32(e[4:])
				size := map[uint16]uint32{1: 1, 2: 1, 3: 2, 4: 4, 5: 8}[typ] * count
				if size > 4 {
					le.PutUint32(e[8:], le.Uint32(e[8:])+uint32(base))
				}
				if tag == 273 { // StripOffsets
					if size <= 4 {
						le.PutUint32(e[8:], le.Uint32(e[8:])+uint32(base))
					} else {
						arr := out[le.Uint32(e[8:]):]
						for j := uint32(0); j < count; j++ {
							le.PutUint32(arr[4*j:], le.Uint32(arr[4*j:])+uint32(base))
						}
					}
				}
			}
			le.PutUint32(out[prevNext:], uint32(pos))
		}
		prevNext = pos + 2 + 12*n
	}
	return out, nil
}

// Picture is a JPEG drawn on a born-digital page: its top-left corner at (X, Y) points from the
// page's top-left corner, W × H points large.
type Picture struct {
	JPEG       []byte
	X, Y, W, H float64
}

// WithPictures writes a one-page A4 PDF whose pictures are drawn first, then its strings over
// them: a page of real text with images on it (a scanned notice pasted under a heading, a logo
// on an invoice, a letterhead's background).
func WithPictures(texts []Text, pictures []Picture) ([]byte, error) {
	pdf := fpdf.New("P", "pt", "A4", "")
	pdf.AddPage()
	for i, p := range pictures {
		name := fmt.Sprintf("picture%d", i)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "JPG"}, bytes.NewReader(p.JPEG))
		pdf.ImageOptions(name, p.X, p.Y, p.W, p.H, false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
	}
	for _, s := range texts {
		pdf.SetFont("Helvetica", "", s.Size)
		pdf.Text(s.X, s.Y, s.Text)
	}
	return output(pdf)
}
