package service

import (
	"math"
	"time"

	"github.com/ocrgate/ocrgate/service/ocr"
)

// ocrResponse is the /ocr answer, compatible with the seed's "common OCR pipeline" result.
type ocrResponse struct {
	Version        string    `json:"version"`
	ImageInfo      imageInfo `json:"image_info"`
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

func newOCRResponse(res *ocr.Result, size int, elapsed time.Duration) ocrResponse {
	regions := make([]region, len(res.Regions))
	for i, r := range res.Regions {
		pts := make([]point, 4)
		for k, p := range r.Quad {
			pts[k] = point{X: int(math.Round(p.X)), Y: int(math.Round(p.Y))}
		}
		dir := "horizontal"
		if r.Vertical {
			dir = "vertical"
		}
		regions[i] = region{
			RegionID:   i,
			Text:       r.Text,
			Confidence: round(float64(r.Score), 4),
			BoundingShape: boundingShape{
				Type:     "polygon",
				Rotation: round(r.Quad.Angle(), 2),
				Points:   pts,
			},
			Direction:    dir,
			Language:     "unknown",
			ReadingOrder: r.Order + 1,
			Row:          r.Row,
		}
	}
	return ocrResponse{
		Version:        Version,
		ImageInfo:      imageInfo{Width: res.Width, Height: res.Height, Bytes: size, Format: res.Format},
		Regions:        regions,
		Text:           res.Text,
		ProcessingTime: round(elapsed.Seconds(), 4),
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
