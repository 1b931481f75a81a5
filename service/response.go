package service

import (
	"math"
	"time"

	"github.com/ocrgate/ocrgate/service/dococr"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// ocrResponse is the /ocr answer, compatible with the seed's "common OCR pipeline" result.
type ocrResponse struct {
	Version        string    `json:"version"`
	ImageInfo      imageInfo `json:"image_info"`
	Rotation       int       `json:"rotation"` // degrees clockwise that make the image read upright
	Regions        []region  `json:"regions"`
	Text           string    `json:"text"`
	ProcessingTime float64   `json:"processing_time"`
}

type imageInfo struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int    `json:"bytes"`
	Format string `json:"format"`
}

type region struct {
	RegionID      int           `json:"region_id"`
	Text          string        `json:"text"`
	Confidence    float64       `json:"confidence"`
	BoundingShape boundingShape `json:"bounding_shape"`
	Direction     string        `json:"direction"`
	Language      string        `json:"language"`
	ReadingOrder  int           `json:"reading_order"`
	Row           int           `json:"row"`
	// Words are sent only when the request asks for them ("words": true).
	Words []word `json:"words,omitempty"`
}

// word is one word of a region: located from the recognizer's timesteps (OCR), or the text
// layer's glyph boxes.
type word struct {
	Text          string        `json:"text"`
	Confidence    float64       `json:"confidence"`
	BoundingShape boundingShape `json:"bounding_shape"`
}

type boundingShape struct {
	Type     string  `json:"type"`
	Rotation float64 `json:"rotation"`
	Points   []point `json:"points"`
}

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

func newOCRResponse(res *ocr.Result, size int, words bool, elapsed time.Duration) ocrResponse {
	return ocrResponse{
		Version:        Version,
		ImageInfo:      imageInfo{Width: res.Width, Height: res.Height, Bytes: size, Format: res.Format},
		Rotation:       res.Rotation,
		Regions:        newRegions(res.Regions, words),
		Text:           res.Text,
		ProcessingTime: round(elapsed.Seconds(), 4),
	}
}

func newRegions(rs []ocr.Region, words bool) []region {
	regions := make([]region, len(rs))
	for i, r := range rs {
		dir := "horizontal"
		if r.Vertical {
			dir = "vertical"
		}
		regions[i] = region{
			RegionID:      i,
			Text:          r.Text,
			Confidence:    round(float64(r.Score), 4),
			BoundingShape: newShape(r.Quad),
			Direction:     dir,
			Language:      "unknown",
			ReadingOrder:  r.Order + 1,
			Row:           r.Row,
		}
		if words {
			// An empty list, not a missing member, for a region whose words could not be
			// located: the caller asked, and there are none.
			regions[i].Words = make([]word, len(r.Words))
			for k, w := range r.Words {
				regions[i].Words[k] = word{Text: w.Text, Confidence: round(float64(w.Score), 4), BoundingShape: newShape(w.Quad)}
			}
		}
	}
	return regions
}

func newShape(q geom.Quad) boundingShape {
	pts := make([]point, 4)
	for k, p := range q {
		pts[k] = point{X: int(math.Round(p.X)), Y: int(math.Round(p.Y))}
	}
	return boundingShape{Type: "polygon", Rotation: round(q.Angle(), 2), Points: pts}
}

// documentResponse is the /ocr answer for a document (a PDF or a multi-page TIFF): one entry per
// selected page, and the text of them all.
type documentResponse struct {
	Version   string       `json:"version"`
	ImageInfo documentInfo `json:"image_info"`
	Pages     []pageBody   `json:"pages"`
	// Text is every page's text in order, pages separated by a form feed.
	Text           string  `json:"text"`
	ProcessingTime float64 `json:"processing_time"`
}

type documentInfo struct {
	Format string `json:"format"`
	Pages  int    `json:"pages"` // in the document, selected or not
	Bytes  int    `json:"bytes"`
}

type pageBody struct {
	Page int `json:"page"`
	// Width and Height are the pixels of the space the page's boxes are in: its render for OCR
	// (a text-layer page's too, as if it had been rendered).
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Source string `json:"source"`
	// SourceReason says why the page was read from its text layer or by OCR (document.Reason);
	// Confidence how far its text can be trusted (dococr.Page.Confidence). Neither is set for a
	// page that could not be read.
	SourceReason string   `json:"source_reason,omitempty"`
	Confidence   *float64 `json:"confidence,omitempty"`
	// TextLayerCheck is what OCR of a few of the page's text-layer lines said of the layer,
	// when they were read.
	TextLayerCheck *layerCheck `json:"text_layer_check,omitempty"`
	Rotation       int         `json:"rotation"` // as ocrResponse's
	Regions        []region    `json:"regions"`
	Text           string      `json:"text"`
	// HiddenText is set when the page's text layer held text no one sees, which was dropped.
	HiddenText *hiddenText `json:"hidden_text,omitempty"`
	// Error is set when the page could not be read (its source is then "none"): the code and
	// message the same failure of a whole request would answer.
	Error *pageError `json:"error,omitempty"`
}

// layerCheck is document.Check as the answer shows it.
type layerCheck struct {
	Probes     int     `json:"probes"`
	Agreed     int     `json:"agreed"`
	Disagreed  int     `json:"disagreed"`
	Unreadable int     `json:"unreadable"`
	Similarity float64 `json:"similarity"`
}

func newLayerCheck(c *document.Check) *layerCheck {
	if c == nil {
		return nil
	}
	return &layerCheck{Probes: c.Probes, Agreed: c.Agreed, Disagreed: c.Disagreed, Unreadable: c.Unreadable, Similarity: round(c.Similarity, 4)}
}

// pageError is why one page of a document could not be read.
type pageError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// hiddenText says how much of a page's text layer was dropped as invisible, and why.
type hiddenText struct {
	Characters int      `json:"characters"`
	Reasons    []string `json:"reasons"`
}

func newHiddenText(h document.Hidden) *hiddenText {
	if h.Chars() == 0 {
		return nil
	}
	return &hiddenText{Characters: h.Chars(), Reasons: h.Reasons()}
}

func newDocumentResponse(res *dococr.Result, words bool, elapsed time.Duration) documentResponse {
	pages := make([]pageBody, len(res.Read))
	for i, p := range res.Read {
		pages[i] = pageBody{Page: p.Number, Width: p.Width, Height: p.Height, Source: string(p.Source),
			Rotation: p.Result.Rotation, Regions: newRegions(p.Result.Regions, words), Text: p.Result.Text, HiddenText: newHiddenText(p.Hidden)}
		if p.Err != nil {
			ae := classify(p.Err)
			pages[i].Error = &pageError{Code: ae.code, Message: ae.msg}
		} else {
			conf := round(p.Confidence, 4) // as regions' confidences
			pages[i].SourceReason, pages[i].Confidence = string(p.Reason), &conf
			pages[i].TextLayerCheck = newLayerCheck(p.Check)
		}
	}
	return documentResponse{
		Version:        Version,
		ImageInfo:      documentInfo{Format: string(res.Format), Pages: res.Pages, Bytes: res.Bytes},
		Pages:          pages,
		Text:           res.Text,
		ProcessingTime: round(elapsed.Seconds(), 4),
	}
}

// batchResponse is the /ocr answer to an "images" array: one result per entry, in order.
type batchResponse struct {
	Version string `json:"version"`
	// Results hold an ocrResponse, a documentResponse or an itemErrorBody each.
	Results        []any   `json:"results"`
	ProcessingTime float64 `json:"processing_time"`
}

// itemErrorBody is the result of an entry that failed: the error it would have been alone.
type itemErrorBody struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Status int    `json:"status"`
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
