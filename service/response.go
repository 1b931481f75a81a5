package service

import (
	"math"
	"time"

	"github.com/ocrgate/ocrgate/service/dococr"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// ocrResponse is the /ocr answer, compatible with the seed's "common OCR pipeline" result.
type ocrResponse struct {
	Version        string    `json:"version"`
	ImageInfo      imageInfo `json:"image_info"`
	Rotation       int       `json:"rotation"` // degrees clockwise that make the image read upright
	Regions        []region  `json:"regions"`
	Blocks         []block   `json:"blocks"`
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

// block is a group of regions read together (a paragraph, a column's lines, a table): its box
// and its regions' region_id, consecutive and in reading order.
type block struct {
	BoundingShape boundingShape `json:"bounding_shape"`
	Regions       []int         `json:"regions"`
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
		Blocks:         newBlocks(res.Blocks),
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

func newBlocks(bs []ocr.Block) []block {
	blocks := make([]block, len(bs))
	for i, b := range bs {
		blocks[i] = block{BoundingShape: newShape(b.Quad), Regions: b.Regions}
	}
	return blocks
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
	Width    int      `json:"width"`
	Height   int      `json:"height"`
	Source   string   `json:"source"`
	Rotation int      `json:"rotation"` // as ocrResponse's
	Regions  []region `json:"regions"`
	Blocks   []block  `json:"blocks"`
	Text     string   `json:"text"`
}

func newDocumentResponse(res *dococr.Result, words bool, elapsed time.Duration) documentResponse {
	pages := make([]pageBody, len(res.Read))
	for i, p := range res.Read {
		pages[i] = pageBody{Page: p.Number, Width: p.Width, Height: p.Height, Source: string(p.Source),
			Rotation: p.Result.Rotation, Regions: newRegions(p.Result.Regions, words), Blocks: newBlocks(p.Result.Blocks),
			Text: p.Result.Text}
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
