package hostile

import (
	"fmt"

	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// The PDFs below attack the document layer: page geometry, the text layer and the pricing of
// what a page holds. Each is a few hundred bytes to a few kilobytes.

// PDFThinPage is one page whose media box is w×h points with a word on it: at 14400×0.01 a page
// thinner than any pixel the render limits allow.
func PDFThinPage(w, h float64) []byte {
	return PDFPageSize(w, h)
}

// PDFTinyCropBox is an ordinary A4 page with a word on it whose crop box, the part that is shown,
// is side×side points.
func PDFTinyCropBox(side float64) []byte {
	return testdoc.Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /CropBox [0 0 %g %g] /Resources << %s >> /Contents 4 0 R >>",
			side, side, helvetica),
		helloContent,
	)
}
