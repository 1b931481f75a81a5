package receipts

import (
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The fonts a receipt may name. The Go fonts come with golang.org/x/image, a dependency of the
// module, so they are always there; the DejaVu fonts are Debian's fonts-dejavu-core package,
// read from a directory (DefaultFontDir) only when a receipt uses them.
const (
	GoRegular      = "Go Regular"
	GoBold         = "Go Bold"
	GoMono         = "Go Mono"
	GoMonoBold     = "Go Mono Bold"
	DejaVuSans     = "DejaVu Sans"
	DejaVuSansBold = "DejaVu Sans Bold"
	DejaVuMono     = "DejaVu Sans Mono"
	DejaVuMonoBold = "DejaVu Sans Mono Bold"
	DejaVuSerif    = "DejaVu Serif"
	DejaVuSerifB   = "DejaVu Serif Bold"
)

// DefaultFontDir is where Debian's fonts-dejavu-core installs its fonts.
const DefaultFontDir = "/usr/share/fonts/truetype/dejavu"

var goFonts = map[string][]byte{
	GoRegular: goregular.TTF, GoBold: gobold.TTF, GoMono: gomono.TTF, GoMonoBold: gomonobold.TTF,
}

var dejaVuFiles = map[string]string{
	DejaVuSans: "DejaVuSans.ttf", DejaVuSansBold: "DejaVuSans-Bold.ttf",
	DejaVuMono: "DejaVuSansMono.ttf", DejaVuMonoBold: "DejaVuSansMono-Bold.ttf",
	DejaVuSerif: "DejaVuSerif.ttf", DejaVuSerifB: "DejaVuSerif-Bold.ttf",
}

// Fonts loads the fonts receipts name, each once.
type Fonts struct {
	Dir    string // where the DejaVu files are
	parsed map[string]*opentype.Font
}

// NewFonts reads DejaVu fonts from dir when a receipt asks for one.
func NewFonts(dir string) *Fonts { return &Fonts{Dir: dir, parsed: map[string]*opentype.Font{}} }

func (f *Fonts) face(name string, size float64) (font.Face, error) {
	ft, ok := f.parsed[name]
	if !ok {
		data, ok := goFonts[name]
		if !ok {
			file, known := dejaVuFiles[name]
			if !known {
				return nil, fmt.Errorf("no font %q", name)
			}
			var err error
			if data, err = os.ReadFile(filepath.Join(f.Dir, file)); err != nil {
				return nil, fmt.Errorf("%w (apt-get install fonts-dejavu-core, or give the directory of DejaVu's .ttf files)", err)
			}
		}
		var err error
		if ft, err = opentype.Parse(data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f.parsed[name] = ft
	}
	face, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, err
	}
	return unkerned{face}, nil
}

// unkerned sets type without kerning, as receipt printers do: their fonts are bitmaps on a grid
// of dots, and no pair of letters moves closer (a kerned "Te" at receipt sizes puts the T's bar
// over the e, which no till prints).
type unkerned struct{ font.Face }

func (unkerned) Kern(rune, rune) fixed.Int26_6 { return 0 }

// Style is how a cell's text is set: a font at a size in paper pixels, optionally printed twice
// as tall (a receipt printer's double-height mode).
type Style struct {
	Font string
	Size float64
	Tall bool
}

// Align says which edge of a cell its X is.
type Align int

const (
	Left Align = iota
	Right
	Center
)

// Cell is one run of text on a row: one segment of the ground truth.
type Cell struct {
	Text  string
	Align Align
	X     float64 // the aligned edge (or centre), as a share of the printable width
	Style int     // index into Page.Styles
}

// Row is a printed line: its cells share a baseline. Rule draws a thin line across the paper
// instead (not text, so not in the truth). Space adds that many line heights before the row.
type Row struct {
	Cells []Cell
	Rule  bool
	Space float64
}

// Page is what is printed: the paper's width in pixels, its margins, its styles and rows.
type Page struct {
	Width   int
	Margin  int     // left and right, and top and bottom
	Leading float64 // a row's height as a share of its tallest style's size
	Styles  []Style
	Rows    []Row
}

// Paper is a printed page: its ink coverage (0 none, 255 full) and the truth boxes in its pixels.
type Paper struct {
	Ink   *image.Alpha
	Boxes []paperBox
}

// paperBox is a segment's rectangle on the paper, as x0, y0, x1, y1.
type paperBox struct {
	Rect [4]float64
	Text string
}

func (b paperBox) corners() [4][2]float64 {
	r := b.Rect
	return [4][2]float64{{r[0], r[1]}, {r[2], r[1]}, {r[2], r[3]}, {r[0], r[3]}}
}

// boxMargin is how far a truth box reaches past its ink, in paper pixels: annotators draw boxes a
// little larger than the ink, and so do detectors.
const boxMargin = 2

// Print lays the rows out on the paper and draws them.
func Print(p Page, fonts *Fonts) (*Paper, error) {
	faces := make([]font.Face, len(p.Styles))
	for i, s := range p.Styles {
		f, err := fonts.face(s.Font, s.Size)
		if err != nil {
			return nil, err
		}
		faces[i] = f
	}
	printable := float64(p.Width - 2*p.Margin)
	type placed struct {
		cell     Cell
		x        float64 // the text's left edge
		baseline float64
	}
	var cells []placed
	var rules []float64
	y := float64(p.Margin)
	for _, row := range p.Rows {
		height := 0.0
		for _, c := range row.Cells {
			s := p.Styles[c.Style]
			height = max(height, s.Size*stretch(s))
		}
		if height == 0 {
			height = p.Styles[0].Size
		}
		lead := height * p.Leading
		y += row.Space * lead
		if row.Rule {
			rules = append(rules, y+lead/2)
			y += lead
			continue
		}
		baseline := y + height*0.8 // ascent of a size-height face, about
		for _, c := range row.Cells {
			w := float64(font.MeasureString(faces[c.Style], c.Text)) / 64
			edge := float64(p.Margin) + c.X*printable
			x := edge
			switch c.Align {
			case Right:
				x = edge - w
			case Center:
				x = edge - w/2
			}
			if x < float64(p.Margin)-0.5 || x+w > float64(p.Width-p.Margin)+0.5 {
				return nil, fmt.Errorf("%q (%.0f px wide at %.0f) does not fit the printable width %d–%d", c.Text, w, x, p.Margin, p.Width-p.Margin)
			}
			cells = append(cells, placed{c, x, baseline})
		}
		y += lead
	}
	height := int(math.Ceil(y)) + p.Margin
	paper := &Paper{Ink: image.NewAlpha(image.Rect(0, 0, p.Width, height))}
	for _, ry := range rules {
		for x := p.Margin; x < p.Width-p.Margin; x++ {
			paper.Ink.Pix[int(ry)*paper.Ink.Stride+x] = 200
		}
	}
	for _, c := range cells {
		ink, err := drawCell(paper.Ink, faces[c.cell.Style], p.Styles[c.cell.Style], c.cell.Text, c.x, c.baseline)
		if err != nil {
			return nil, err
		}
		paper.Boxes = append(paper.Boxes, paperBox{
			Rect: [4]float64{float64(ink.Min.X) - boxMargin, float64(ink.Min.Y) - boxMargin, float64(ink.Max.X) + boxMargin, float64(ink.Max.Y) + boxMargin},
			Text: c.cell.Text,
		})
	}
	return paper, nil
}

func stretch(s Style) float64 {
	if s.Tall {
		return 2
	}
	return 1
}

// drawCell draws text with its left edge at x on the baseline, into ink, and returns the
// rectangle its ink covers (coverage of a third or more), measured from the pixels drawn.
func drawCell(ink *image.Alpha, face font.Face, s Style, text string, x, baseline float64) (image.Rectangle, error) {
	if strings.TrimSpace(text) != text || text == "" {
		return image.Rectangle{}, fmt.Errorf("cell %q: a segment's text has no outer spaces", text)
	}
	bounds, _ := font.BoundString(face, text)
	// A mask of the text alone, then placed (stretched for a tall cell): the ink of this cell, and
	// nothing of its neighbours', decides its box. The mask's origin is at whole paper pixels
	// (ox, oy) and the pen at (x, baseline) in paper pixels.
	ox := int(math.Floor(x+float64(bounds.Min.X)/64)) - 2
	oy := int(math.Floor(baseline+float64(bounds.Min.Y)/64)) - 2
	w := (bounds.Max.X - bounds.Min.X).Ceil() + 5
	h := (bounds.Max.Y - bounds.Min.Y).Ceil() + 5
	mask := image.NewAlpha(image.Rect(0, 0, w, h))
	dotY := baseline - float64(oy)
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face,
		Dot: fixed.Point26_6{X: fixed.Int26_6(math.Round((x - float64(ox)) * 64)), Y: fixed.Int26_6(math.Round(dotY * 64))}}
	d.DrawString(text)
	sy := stretch(s)
	top := int(math.Floor(baseline - dotY*sy))
	bottom := int(math.Ceil(baseline + (float64(h)-dotY)*sy))
	ink0 := image.Rectangle{Min: image.Pt(math.MaxInt32, math.MaxInt32)}
	hasInk := false
	for ty := max(top, 0); ty < min(bottom, ink.Rect.Dy()); ty++ {
		my := int(math.Floor(dotY + (float64(ty)+0.5-baseline)/sy))
		if my < 0 || my >= h {
			continue
		}
		for mx := range w {
			a := mask.Pix[my*mask.Stride+mx]
			tx := ox + mx
			if a == 0 || tx < 0 || tx >= ink.Rect.Dx() {
				continue
			}
			i := ty*ink.Stride + tx
			ink.Pix[i] = max(ink.Pix[i], a)
			if a >= 85 {
				hasInk = true
				ink0.Min.X, ink0.Min.Y = min(ink0.Min.X, tx), min(ink0.Min.Y, ty)
				ink0.Max.X, ink0.Max.Y = max(ink0.Max.X, tx+1), max(ink0.Max.Y, ty+1)
			}
		}
	}
	if !hasInk {
		return image.Rectangle{}, errors.New("cell " + text + " drew no ink on the paper")
	}
	return ink0, nil
}
