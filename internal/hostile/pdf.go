package hostile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// The PDFs below are built to cost a reader too much: a page count, a page size or an image that
// claims the impossible, object graphs that loop or nest without end, and content that takes
// forever to draw. Each is a few kilobytes.

// helloContent is a content stream drawing one word in Helvetica (resource /F1).
var helloContent = testdoc.Stream("", []byte("BT /F1 12 Tf 72 720 Td (HELLO) Tj ET"))

const helvetica = "/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>"

// PDFPageCount is a one-page PDF whose page tree claims count pages.
func PDFPageCount(count int) []byte {
	return testdoc.Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [3 0 R] /Count %d >>", count),
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
		helloContent,
	)
}

// PDFRepeatedKids is a page tree listing the same page kids times.
func PDFRepeatedKids(kids int) []byte {
	return testdoc.Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Repeat("3 0 R ", kids), kids),
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
		helloContent,
	)
}

// PDFPageSize is one page of w×h points (a point is 1/72 inch) with a word on it.
func PDFPageSize(w, h float64) []byte {
	return testdoc.OnePage(fmt.Sprintf("0 0 %g %g", w, h), helvetica, helloContent)
}

// PDFSelfTree is a page tree that lists itself among its kids.
func PDFSelfTree() []byte {
	return testdoc.Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
		helloContent,
	)
}

// PDFSelfResources is a page whose resources refer to themselves.
func PDFSelfResources() []byte {
	return testdoc.OnePage("0 0 595 842", "/Font 5 0 R /XObject 5 0 R", helloContent, "<< /F1 5 0 R /Self 5 0 R >>")
}

// PDFSelfForm is a page drawing a form that draws itself.
func PDFSelfForm() []byte {
	return testdoc.OnePage("0 0 595 842", "/XObject << /Fm1 5 0 R >>",
		testdoc.Stream("", []byte("/Fm1 Do")),
		testdoc.Stream("/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << /XObject << /Fm1 5 0 R >> >>", []byte("/Fm1 Do")))
}

// PDFNestedArrays is a page whose resources hold an array nested depth levels deep.
func PDFNestedArrays(depth int) []byte {
	return testdoc.OnePage("0 0 595 842", "/Deep "+strings.Repeat("[", depth)+strings.Repeat("]", depth), helloContent)
}

// pdfImagePage is an A4 page filled by the image XObject whose dictionary and data are given.
func pdfImagePage(dict string, data []byte) []byte {
	return testdoc.OnePage("0 0 595 842", "/XObject << /Im1 5 0 R >>",
		testdoc.Stream("", []byte("q 595 0 0 842 0 0 cm /Im1 Do Q")),
		testdoc.Stream(dict, data))
}

// PDFFlateImage is a page filled by a w×h RGB image whose data is 64 MiB of deflated zeros
// (about 64 KiB in the file): a decompression bomb when w×h×3 is large.
func PDFFlateImage(w, h int) []byte {
	return pdfImagePage(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode", w, h),
		testdoc.Deflate(make([]byte, 64<<20)))
}

// PDFJBIG2Image is a page filled by a w×h JBIG2 image whose stream declares a page of that size
// and then holds noise.
func PDFJBIG2Image(w, h uint32) []byte {
	return pdfImagePage(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode", w, h),
		jbig2Garbage(w, h))
}

// PDFJPXImage is a page filled by a JPEG 2000 image whose dictionary says w×h and whose
// codestream claims cw×ch, followed by nothing that decodes.
func PDFJPXImage(w, h, cw, ch uint32) []byte {
	return pdfImagePage(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /Filter /JPXDecode", w, h),
		jpxHeader(cw, ch))
}

// PDFEndlessPage is a page whose content fills the whole page rects times: trivial to parse,
// endless to render (400 000 rects take minutes).
func PDFEndlessPage(rects int) []byte {
	return testdoc.OnePage("0 0 595 842", "",
		testdoc.Stream("/Filter /FlateDecode", testdoc.Deflate(bytes.Repeat([]byte("0 0 595 842 re f\n"), rects))))
}

// PDFEndlessShading is a page whose content is one operator: paint a function-based shading over
// the whole page, the function a PostScript calculator program of ops steps that the renderer
// runs for every pixel. A few hundred bytes, read in milliseconds, and endless to draw: 20 steps
// take over 20 s at twice the page's size, where PDFEndlessPage must be hundreds of kilobytes
// of operators, seconds to read, for the same.
func PDFEndlessShading(ops int) []byte {
	fn := "{ " + strings.Repeat("dup mul dup sqrt add 0.5 mul ", ops) + "dup dup }"
	return testdoc.OnePage("0 0 595 842", "/Shading << /S 6 0 R >>",
		testdoc.Stream("", []byte("/S sh\n")),
		testdoc.Stream("/FunctionType 4 /Domain [0 1 0 1] /Range [0 1 0 1 0 1]", []byte(fn)),
		"<< /ShadingType 1 /ColorSpace /DeviceRGB /Domain [0 1 0 1] /Matrix [595 0 0 842 0 0] /Function 5 0 R >>")
}

// jbig2Garbage is an embedded JBIG2 stream: a page information segment declaring a w×h page,
// then an immediate generic region segment whose data is noise.
func jbig2Garbage(w, h uint32) []byte {
	be := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	var b bytes.Buffer
	// Segment 0: page information (type 48), page 1, 19 bytes of data.
	b.Write(be(0))
	b.Write([]byte{48, 0x00, 1})
	b.Write(be(19))
	b.Write(be(w))
	b.Write(be(h))
	b.Write(be(0))
	b.Write(be(0))
	b.Write([]byte{0, 0, 0})
	// Segment 1: immediate generic region (type 38) covering the page, noise as its data.
	noise := bytes.Repeat([]byte{0x5A, 0xC3, 0x96, 0x0F, 0xF0, 0x69}, 4000)
	b.Write(be(1))
	b.Write([]byte{38, 0x00, 1})
	b.Write(be(uint32(18 + len(noise))))
	b.Write(be(w))
	b.Write(be(h))
	b.Write(be(0))
	b.Write(be(0))
	b.Write([]byte{0, 0})
	b.Write(noise)
	return b.Bytes()
}

// jpxHeader is the start of a JPEG 2000 codestream (SOC, SIZ) declaring a w×h three-component
// image, followed by nothing that decodes.
func jpxHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x2F, 0x00, 0x00})
	for _, v := range []uint32{w, h, 0, 0, w, h, 0, 0} {
		b.Write([]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	}
	b.Write([]byte{0x00, 0x03})
	for range 3 {
		b.Write([]byte{0x07, 0x01, 0x01})
	}
	b.Write(bytes.Repeat([]byte{0xFF, 0x52, 0x00, 0x0C}, 50))
	return b.Bytes()
}

// HostilePDF is one document of the hostile set.
type HostilePDF struct {
	Name string
	Data []byte
}

// PDFs is the hostile document set: everything above, at the sizes that hurt.
func PDFs() []HostilePDF {
	return []HostilePDF{
		{"page count in the millions", PDFPageCount(5_000_000)},
		{"page tree with 20000 kids", PDFRepeatedKids(20_000)},
		{"page 300 inches wide", PDFPageSize(21_600, 842)},
		{"page 200 inches square", PDFPageSize(14_400, 14_400)},
		{"page tree that contains itself", PDFSelfTree()},
		{"resources that refer to themselves", PDFSelfResources()},
		{"form that draws itself", PDFSelfForm()},
		{"arrays nested 100000 deep", PDFNestedArrays(100_000)},
		{"image of 20000×20000 px from 64 KiB", PDFFlateImage(20_000, 20_000)},
		{"image of 12000×12000 px from 64 KiB", PDFFlateImage(12_000, 12_000)},
		{"JBIG2 stream claiming 60000×60000", PDFJBIG2Image(60_000, 60_000)},
		{"JBIG2 stream of garbage at 9000×9000", PDFJBIG2Image(9_000, 9_000)},
		{"JPX stream claiming 60000×60000", PDFJPXImage(60_000, 60_000, 60_000, 60_000)},
		{"JPX stream whose codestream claims 60000×60000", PDFJPXImage(100, 100, 60_000, 60_000)},
		{"page that renders forever", PDFEndlessPage(400_000)},
		{"shading that renders forever", PDFEndlessShading(50)},
	}
}
