package document_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/ocrgate/ocrgate/service/document"
)

// TestPicturesWithinOCRPageLimit: a text-layer page's pictures are read while the request's OCR
// page limit allows, and past it the page is answered from its layer alone: a document of three
// pages of a heading over a picture of print, under a limit of one page of OCR, is read whole
// (it is not refused as too many pages to OCR), every page from its layer.
func TestPicturesWithinOCRPageLimit(t *testing.T) {
	sheet := image.NewGray(image.Rect(0, 0, 600, 400))
	for y := range 400 {
		for x := range 600 {
			v := uint8(250)
			if y%24 >= 8 && y%24 < 16 && x%5 < 2 && x > 30 && x < 570 {
				v = 10
			}
			sheet.SetGray(x, y, color.Gray{Y: v})
		}
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, sheet, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	pdf := fpdf.New("P", "pt", "A4", "")
	pdf.RegisterImageOptionsReader("print", fpdf.ImageOptions{ImageType: "JPG"}, bytes.NewReader(jpg.Bytes()))
	for range 3 {
		pdf.AddPage()
		pdf.ImageOptions("print", 50, 120, 495, 330, false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
		pdf.SetFont("Helvetica", "", 10)
		pdf.Text(50, 80, "Federal Register / Rules and Regulations")
	}
	var data bytes.Buffer
	if err := pdf.Output(&data); err != nil {
		t.Fatal(err)
	}
	r := document.New(docs(t), config())
	budget := document.NewBudget(document.BudgetLimits{Pages: 10, OCRPages: 1}, nil)
	res, err := r.Read(t.Context(), pipeline(t), &recorder{}, document.Request{Data: data.Bytes(), Start: time.Now(), Timeout: time.Minute, Budget: budget})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	for _, pg := range res.Read {
		if pg.Err != nil || pg.Source != document.TextLayer {
			t.Errorf("page %d: source %s, error %v; want its layer", pg.Number, pg.Source, pg.Err)
		}
	}
}
