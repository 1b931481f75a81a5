// Package receipts renders the receipts the tests read (testdata/receipts) and writes them with
// their ground truth in SROIE's layout, so that the project's scorer and ocrgate bench read the
// folder as a dataset. The repository holds only what its own scripts write or its own people
// made; real receipts are fetched material, for benchmarks over ../shared/datasets only. These are
// ours: their text is made up here, their pixels are drawn here, and their truth is known exactly
// because this package put every line where it is.
//
// A receipt is made in three steps, each with its own coordinates:
//
//  1. Print: the rows of text are laid out on a strip of paper, in paper pixels (a printer's dots),
//     one box per cell of text (what SROIE calls a text segment: what a detector finds as one
//     line). The box is the cell's ink, measured from the drawn pixels, with a small margin.
//  2. Wear: what a printer and a pocket do to the paper — thermal dots, missing dots, faint
//     columns of a worn print head, fading — changes pixels only, never where the text is.
//  3. Capture: the paper is photographed or scanned into the output image through one mapping
//     (a perspective, a curl, a rotation), with the light, blur, noise and JPEG compression of
//     the capture. Each box's corners go through the same mapping, so the truth is exact in the
//     output's pixels.
//
// Everything is deterministic: the noise comes from seeded generators, so the same fonts give the
// same bytes. The images are committed, so the tests depend neither on this package's output
// being reproducible elsewhere nor on the fonts being installed; go run ./cmd/ocrgate-receipts
// writes them again.
package receipts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Key is a receipt's key fields, SROIE's key/<id>.json.
type Key struct {
	Company string `json:"company"`
	Date    string `json:"date"`
	Address string `json:"address"`
	Total   string `json:"total"`
}

// Receipt is everything about one receipt: what is printed, how the paper wears, how it is
// captured, and how its truth files are written.
type Receipt struct {
	ID   string
	Why  string // what the tests use it for (the README's table)
	Key  Key
	Page Page
	Wear Wear
	Shot Capture
	// Quality is the JPEG quality of img/<id>.jpg.
	Quality int
	// CRLF ends the lines of the box and key files with CRLF instead of LF, as some of SROIE's
	// files do: the readers of those files must take either.
	CRLF bool
}

// Quad is four corners, clockwise from the top-left of the text, in an image's pixels.
type Quad [4][2]float64

// Box is one text segment of the ground truth: its corners and its text.
type Box struct {
	Quad Quad
	Text string
}

// Rendered is a receipt as its files hold it.
type Rendered struct {
	Image image.Image
	Boxes []Box
}

// Render prints, wears and captures r with the fonts of fonts.
func Render(r Receipt, fonts *Fonts) (*Rendered, error) {
	paper, err := Print(r.Page, fonts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.ID, err)
	}
	r.Wear.apply(paper)
	img, m := r.Shot.capture(paper)
	boxes := make([]Box, len(paper.Boxes))
	for i, b := range paper.Boxes {
		var q Quad
		for k, p := range b.corners() {
			x, y := m.forward(p[0], p[1])
			q[k] = [2]float64{x, y}
		}
		boxes[i] = Box{Quad: q, Text: b.Text}
	}
	return &Rendered{Image: img, Boxes: boxes}, nil
}

// Write renders r and writes img/<id>.jpg, box/<id>.csv and key/<id>.json under dir.
func Write(dir string, r Receipt, fonts *Fonts) (*Rendered, error) {
	out, err := Render(r, fonts)
	if err != nil {
		return nil, err
	}
	var img bytes.Buffer
	if err := jpeg.Encode(&img, out.Image, &jpeg.Options{Quality: r.Quality}); err != nil {
		return nil, err
	}
	key, err := KeyFile(r.Key, r.CRLF)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		filepath.Join("img", r.ID+".jpg"):  img.Bytes(),
		filepath.Join("box", r.ID+".csv"):  BoxFile(out.Boxes, r.CRLF),
		filepath.Join("key", r.ID+".json"): key,
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BoxFile is SROIE's box file: one segment a line, x1,y1,x2,y2,x3,y3,x4,y4,TEXT, the corners
// rounded to whole pixels and the text as printed (it may hold commas: a reader splits off the
// first eight fields only).
func BoxFile(boxes []Box, crlf bool) []byte {
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	var b strings.Builder
	for _, box := range boxes {
		for _, p := range box.Quad {
			fmt.Fprintf(&b, "%d,%d,", int(math.Round(p[0])), int(math.Round(p[1])))
		}
		b.WriteString(box.Text)
		b.WriteString(eol)
	}
	return []byte(b.String())
}

// KeyFile is SROIE's key file: the four fields as an indented JSON object.
func KeyFile(k Key, crlf bool) ([]byte, error) {
	data, err := json.MarshalIndent(k, "", "    ")
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	if crlf {
		data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	}
	return data, nil
}
