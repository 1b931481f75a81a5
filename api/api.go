// Package api holds the wire types of ocrgate's HTTP API: the JSON that POST /ocr and
// POST /ocr-json take and answer, and the error body of every failure. They are written once, here:
// the server encodes its answers with them, the Go client (package client) decodes them, and a test
// holds every field to the OpenAPI document (service/openapi), so a field is added or changed in
// one place and the document's test names anything the change left behind.
//
// The package imports nothing of the service: a program that talks to ocrgate imports it (or the
// client, which re-exports these types) without linking the server.
package api

import (
	"encoding/json"
	"time"
)

// OCRRequest is the JSON body of POST /ocr: one image or document (Image), or several (Images),
// each base64 (standard alphabet, with or without a data: URL prefix).
type OCRRequest struct {
	Image  string   `json:"image,omitempty"`
	Images []string `json:"images,omitempty"`
	// Format is the answer's form: "json" (the default), "text", "hocr" or "alto". The formats
	// other than JSON answer a single image or document; errors are JSON whatever the format.
	Format string `json:"format,omitempty"`
	ReadFields
}

// ExtractRequest is the JSON body of POST /ocr-json: the image or document, and either a template
// name or a JSON Schema (neither: the service's default template, invoice).
type ExtractRequest struct {
	Image    string `json:"image"`
	Template string `json:"template,omitempty"`
	// Schema is a JSON Schema object, sent as it is.
	Schema json.RawMessage `json:"schema,omitempty"`
	ReadFields
}

// ReadFields say how to read what is sent; each is optional.
type ReadFields struct {
	// Pages selects a document's pages: "1-3,5" (1-based; default every page).
	Pages string `json:"pages,omitempty"`
	// OCR is "auto" (a page's text layer, when it holds real text, stands in for OCR; the default)
	// or "always".
	OCR string `json:"ocr,omitempty"`
	// Words asks for each region's words (Region.Words).
	Words bool `json:"words,omitempty"`
	// Lang picks the recognizer: "ch" (the default), or a language pack the server loaded:
	// "ja", "ko", "zh-Hant", "en".
	Lang string `json:"lang,omitempty"`
	// Options override the pipeline's settings for this request, by name: "det_limit_side",
	// "det_thresh", "det_box_thresh", "det_unclip_ratio", "min_score", "use_cls" (GET
	// /openapi.json gives their ranges). The service refuses an unknown name or a value out of
	// range with a 400.
	Options map[string]any `json:"options,omitempty"`
}

// OCRResult is the answer of POST /ocr for an image: every text region with its box, and the
// whole text in reading order.
type OCRResult struct {
	Version   string    `json:"version"`
	ImageInfo ImageInfo `json:"image_info"`
	// Rotation is how many degrees clockwise the image was turned to read upright (0, 90, 180 or
	// 270); the boxes are in the coordinates of the image as it was sent.
	Rotation int      `json:"rotation"`
	Regions  []Region `json:"regions"`
	// Blocks group the regions that read together (a paragraph, a column's lines, a table), in
	// reading order.
	Blocks []Block `json:"blocks"`
	// Text is every region's text in reading order, block by block: one line per row.
	Text string `json:"text"`
	// Warning, when present, says that the answer covers only part of the image: a damaged TIFF
	// whose pixels past the damage could not be decoded (they were read as white).
	Warning string `json:"warning,omitempty"`
	// ProcessingTime is the seconds the request took in the service.
	ProcessingTime float64 `json:"processing_time"`
}

// DocumentResult is the answer of POST /ocr for a document (a PDF or a multi-page TIFF): one
// entry per selected page, in document order, and the text of them all.
type DocumentResult struct {
	Version   string    `json:"version"`
	ImageInfo ImageInfo `json:"image_info"`
	Pages     []Page    `json:"pages"`
	// Text is every page's text in order, pages separated by a form feed ("\f").
	Text           string  `json:"text"`
	ProcessingTime float64 `json:"processing_time"`
}

// ImageInfo describes the file that was read: an image (Width, Height) or a document (Pages).
type ImageInfo struct {
	Width  int    `json:"width,omitempty"`  // images: pixels, after EXIF orientation
	Height int    `json:"height,omitempty"` // images: pixels, after EXIF orientation
	Bytes  int    `json:"bytes"`            // the size of the file
	Format string `json:"format"`           // jpeg, png, gif, bmp, tiff, webp; pdf or tiff for documents
	Pages  int    `json:"pages,omitempty"`  // documents: pages in the document, selected or not
}

// Region is one detected text box.
type Region struct {
	RegionID      int           `json:"region_id"`
	Text          string        `json:"text"`
	Confidence    float64       `json:"confidence"` // recognition score in [0, 1]
	BoundingShape BoundingShape `json:"bounding_shape"`
	Direction     string        `json:"direction"` // horizontal, or vertical for boxes read turned 90°
	Language      string        `json:"language"`
	ReadingOrder  int           `json:"reading_order"` // 1-based
	Row           int           `json:"row"`           // 0-based
	// Source is set on a page read partly from its text layer and partly by OCR (lines of a
	// font whose text the check doubted, read again): "text-layer" or "ocr", where the region's
	// text came from. It is absent where the whole page was read one way (see Page.Source).
	Source string `json:"source,omitempty"`
	// Words are sent when the request asks for them ("words": true): an empty list for a region
	// whose words could not be located, a missing member when they were not asked for.
	Words []Word `json:"words,omitzero"`
}

// Block is a group of regions read together (a paragraph, a column's lines, a table): its box and
// its regions' region_id, consecutive and in reading order.
type Block struct {
	BoundingShape BoundingShape `json:"bounding_shape"`
	Regions       []int         `json:"regions"`
}

// Word is one word of a region: located from the recognizer's timesteps (OCR) or the glyph boxes
// of a PDF's text layer.
type Word struct {
	Text          string        `json:"text"`
	Confidence    float64       `json:"confidence"`
	BoundingShape BoundingShape `json:"bounding_shape"`
}

// BoundingShape is a box: four points in pixels of the image as it was sent, clockwise from the
// top-left corner of the text, and the angle of the text's top edge in degrees.
type BoundingShape struct {
	Type     string  `json:"type"` // "polygon"
	Rotation float64 `json:"rotation"`
	Points   []Point `json:"points"`
}

// Point is a pixel position.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Page is one page of a document.
type Page struct {
	Page int `json:"page"` // 1-based, in the document
	// Width and Height are the pixels of the space the page's boxes are in: the page drawn at the
	// resolution OCR wants (a text-layer page's too, as if it had been drawn).
	Width  int `json:"width"`
	Height int `json:"height"`
	// Source is "text-layer" (born-digital), "ocr" (scanned, or "ocr": "always"), or "none" (Error).
	Source string `json:"source"`
	// SourceReason says why the page was read from its text layer or by OCR, as a stable code
	// such as "text_layer_agrees", "text_layer_disagrees" or "no_text_layer"; Confidence how far
	// its text can be trusted. Neither is set for a page that could not be read.
	SourceReason string   `json:"source_reason,omitempty"`
	Confidence   *float64 `json:"confidence,omitempty"`
	// TextLayerCheck is what OCR of a few of the page's text-layer lines said of the layer, when
	// they were read.
	TextLayerCheck *TextLayerCheck `json:"text_layer_check,omitempty"`
	Rotation       int             `json:"rotation"` // as OCRResult.Rotation
	Regions        []Region        `json:"regions"`
	Blocks         []Block         `json:"blocks"`
	Text           string          `json:"text"`
	// HiddenText is set when the page's text layer held text no one sees (invisible, off the page,
	// too small, or leaving no mark), which was dropped from Regions and Text.
	HiddenText *HiddenText `json:"hidden_text,omitempty"`
	// Warning, when present, says that the page was read only in part: a damaged TIFF page whose
	// pixels past the damage could not be decoded (they were read as white).
	Warning string `json:"warning,omitempty"`
	// Error is set when the page could not be read (Source is then "none"); the document's other
	// pages were.
	Error *PageError `json:"error,omitempty"`
}

// TextLayerCheck is what OCR of a sample of a page's text-layer lines said of the layer: how many
// samples were read, how many agreed with the layer, disagreed, or were in a script OCR cannot
// read, and the layer's mean similarity to OCR's reading.
type TextLayerCheck struct {
	Probes     int     `json:"probes"`
	Agreed     int     `json:"agreed"`
	Disagreed  int     `json:"disagreed"`
	Unreadable int     `json:"unreadable"` // in a script the recognizer does not read
	Similarity float64 `json:"similarity"` // of the compared samples' readings to the layer, in [0, 1]
}

// PageError is why one page of a document could not be read: the code and message the same
// failure of a whole document answers with, such as "document_too_complex".
type PageError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// HiddenText says how much of a page's text layer was dropped as unseen, and why.
type HiddenText struct {
	Characters int `json:"characters"`
	// Reasons: "invisible_render_mode", "outside_page", "too_small", "no_visible_mark".
	Reasons []string `json:"reasons"`
}

// BatchResult is the answer of POST /ocr to an "images" array: one result per entry, in order,
// each an OCRResult, a DocumentResult or an ItemError. The server fills Results with those values
// (R is any); a client reads them raw (R is json.RawMessage) and tells them apart.
type BatchResult[R any] struct {
	Version        string  `json:"version"`
	Results        []R     `json:"results"`
	ProcessingTime float64 `json:"processing_time"`
}

// ItemError is the result of an "images" entry that failed: the error it would have answered alone.
type ItemError struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Status int    `json:"status"`
}

// Error is the body of every error answer. Code is stable (switch on it); Error is for people.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// Status is the body of GET /healthz ("ok") and GET /readyz ("ready"; an Error when not ready).
// GET /ping answers the text "pong".
type Status struct {
	Status string `json:"status"`
}

// Templates is the answer of GET /templates: the default template's name and every template.
type Templates struct {
	Default   string     `json:"default"`
	Templates []Template `json:"templates"`
}

// Template is one extraction template: a name, what it is for, and the JSON Schema it fills.
type Template struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Job is an asynchronous job (POST /jobs, GET /jobs/{id}): a document read page by page by every
// replica's workers.
type Job struct {
	ID string `json:"id"`
	// State is "queued", "running", "succeeded", "failed" or "canceled".
	State string   `json:"state"`
	Pages JobPages `json:"pages"`
	// Redeliveries counts the page tasks given to a worker again (their first one died or
	// failed); a page is counted once whatever its redeliveries.
	Redeliveries int        `json:"redeliveries"`
	Created      time.Time  `json:"created"`
	Started      *time.Time `json:"started,omitempty"`
	Finished     *time.Time `json:"finished,omitempty"`
	// Error says why a failed job failed as a whole (every page failed).
	Error *Error `json:"error,omitempty"`
	// Result is the answer, in /ocr's shape for the same document, once the job succeeded.
	Result *DocumentResult `json:"-"`
	// ImageResult is the answer of a job of a single image, in /ocr's shape for that image; on
	// the wire it is "result", as Result is for a document.
	ImageResult *OCRResult `json:"-"`
}

// jobWire is Job on the wire: its result is a document's answer or an image's.
type jobWire struct {
	jobFields
	Result json.RawMessage `json:"result,omitempty"`
}

type jobFields Job

// MarshalJSON writes the job with its result, a document's or an image's, as "result".
func (j Job) MarshalJSON() ([]byte, error) {
	w := jobWire{jobFields: jobFields(j)}
	var err error
	switch {
	case j.ImageResult != nil:
		w.Result, err = json.Marshal(j.ImageResult)
	case j.Result != nil:
		w.Result, err = json.Marshal(j.Result)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a job: a result with "pages" is a document's, any other an image's.
func (j *Job) UnmarshalJSON(data []byte) error {
	var w jobWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*j = Job(w.jobFields)
	if len(w.Result) == 0 || string(w.Result) == "null" {
		return nil
	}
	var probe struct {
		Pages json.RawMessage `json:"pages"`
	}
	if err := json.Unmarshal(w.Result, &probe); err != nil {
		return err
	}
	if probe.Pages != nil {
		j.Result = new(DocumentResult)
		return json.Unmarshal(w.Result, j.Result)
	}
	j.ImageResult = new(OCRResult)
	return json.Unmarshal(w.Result, j.ImageResult)
}

// JobPages counts a job's pages: those it reads, those answered, and those of them that failed.
type JobPages struct {
	Total  int `json:"total"`
	Done   int `json:"done"`
	Failed int `json:"failed"`
}
