package server

import (
	"math"
	"time"

	"github.com/ocrgate/ocrgate/api"
	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/geom"
	"github.com/ocrgate/ocrgate/service/ocr"
)

func newOCRResponse(res *ocr.Result, size int, words bool, elapsed time.Duration) api.OCRResult {
	return api.OCRResult{
		Version:        Version,
		ImageInfo:      api.ImageInfo{Width: res.Width, Height: res.Height, Bytes: size, Format: res.Format},
		Rotation:       res.Rotation,
		Regions:        newRegions(res.Regions, words),
		Blocks:         newBlocks(res.Blocks),
		Text:           res.Text,
		Warning:        res.Warning,
		ProcessingTime: round(elapsed.Seconds(), 4),
	}
}

func newRegions(rs []ocr.Region, words bool) []api.Region {
	regions := make([]api.Region, len(rs))
	for i, r := range rs {
		dir := "horizontal"
		if r.Vertical {
			dir = "vertical"
		}
		regions[i] = api.Region{
			RegionID:      i,
			Text:          r.Text,
			Confidence:    round(float64(r.Score), 4),
			BoundingShape: newShape(r.Quad),
			Direction:     dir,
			Language:      "unknown",
			ReadingOrder:  r.Order + 1,
			Row:           r.Row,
			Source:        r.Source,
		}
		if words {
			// An empty list, not a missing member, for a region whose words could not be
			// located: the caller asked, and there are none.
			regions[i].Words = make([]api.Word, len(r.Words))
			for k, w := range r.Words {
				regions[i].Words[k] = api.Word{Text: w.Text, Confidence: round(float64(w.Score), 4), BoundingShape: newShape(w.Quad)}
			}
		}
	}
	return regions
}

func newBlocks(bs []ocr.Block) []api.Block {
	blocks := make([]api.Block, len(bs))
	for i, b := range bs {
		blocks[i] = api.Block{BoundingShape: newShape(b.Quad), Regions: b.Regions}
	}
	return blocks
}

func newShape(q geom.Quad) api.BoundingShape {
	pts := make([]api.Point, 4)
	for k, p := range q {
		pts[k] = api.Point{X: int(math.Round(p.X)), Y: int(math.Round(p.Y))}
	}
	return api.BoundingShape{Type: "polygon", Rotation: round(q.Angle(), 2), Points: pts}
}

// newLayerCheck is a page's text-layer check as the answer shows it.
func newLayerCheck(c *docfile.Check) *api.TextLayerCheck {
	if c == nil {
		return nil
	}
	return &api.TextLayerCheck{Probes: c.Probes, Agreed: c.Agreed, Disagreed: c.Disagreed, Unreadable: c.Unreadable, Similarity: round(c.Similarity, 4)}
}

func newHiddenText(h docfile.Hidden) *api.HiddenText {
	if h.Chars() == 0 {
		return nil
	}
	return &api.HiddenText{Characters: h.Chars(), Reasons: h.Reasons()}
}

func newDocumentResponse(res *document.Result, words bool, elapsed time.Duration) api.DocumentResult {
	pages := make([]api.Page, len(res.Read))
	for i, p := range res.Read {
		pages[i] = api.Page{Page: p.Number, Width: p.Width, Height: p.Height, Source: string(p.Source),
			Rotation: p.Result.Rotation, Regions: newRegions(p.Result.Regions, words),
			Blocks: newBlocks(p.Result.Blocks), Text: p.Result.Text, HiddenText: newHiddenText(p.Hidden),
			Warning: p.Result.Warning}
		if p.Err != nil {
			ae := classify(p.Err)
			pages[i].Error = &api.PageError{Code: ae.code, Message: ae.msg}
		} else {
			conf := round(p.Confidence, 4) // as regions' confidences
			pages[i].SourceReason, pages[i].Confidence = string(p.Reason), &conf
			pages[i].TextLayerCheck = newLayerCheck(p.Check)
		}
	}
	return api.DocumentResult{
		Version:        Version,
		ImageInfo:      api.ImageInfo{Format: string(res.Format), Pages: res.Pages, Bytes: res.Bytes},
		Pages:          pages,
		Text:           res.Text,
		ProcessingTime: round(elapsed.Seconds(), 4),
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
