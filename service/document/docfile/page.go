package docfile

import (
	"fmt"
	"math"
	"slices"
	"unicode"

	"github.com/klippa-app/go-pdfium/enums"

	"github.com/ocrgate/ocrgate/service/imaging"
	"github.com/ocrgate/ocrgate/service/pdfengine"
	"github.com/ocrgate/ocrgate/service/tiffdec"
)

// Page is what one page holds, read without rendering it.
type Page struct {
	Number int // 1-based
	// Width and Height are the page's size as displayed: points for a PDF, pixels for a raster
	// (TIFF) page.
	Width, Height float64
	// Raster is set for TIFF pages: they are pixels, drawn at their own size whatever the scale.
	Raster bool
	// DPI is a raster page's resolution in dots per inch as it is shown (0 when it states none).
	DPI float64
	// ImageCoverage is the share of the page's area under images, in [0, 1].
	ImageCoverage float64
	// ImageScale is the resolution, in pixels per point, at which the page's dominant image is
	// drawn pixel for pixel (0 when no image covers much of the page). A scan rendered at this
	// scale reproduces the scanned pixels.
	ImageScale float64
	// TextHeight is the median height of the text layer's characters (the font's box, ascent to
	// descent), in points; 0 without a text layer.
	TextHeight float64
	// Chars counts the text layer's characters that are not spaces; Unmapped those of them
	// whose font gives no Unicode text.
	Chars, Unmapped int
	// Hidden counts the characters of the text layer that are not page text, because no one
	// sees them; they are not in Chars, Lines or TextLayer.
	Hidden Hidden
	// InvisibleLayer is set for a page whose only text is invisible (render mode 3 or 7) over a
	// page image: an earlier OCR layer, a searchable PDF's (ours, OCRmyPDF's, a scanner's). That
	// text is the page's layer, but unproven: no one sees it, so nothing says it is what the
	// image shows. It is taken only when OCR of its probes, read from the page's pixels, agrees
	// with it (see TextLayer.Invisible); the page is OCR'd otherwise, and when the check is off.
	InvisibleLayer bool

	// rasterBytes is what decoding a TIFF page holds at its peak, and raster its whole plan
	// (tiffdec.Plan), which Render charges to the request's CPU budget.
	rasterBytes int64
	raster      tiffdec.Plan
	// shrink, when more than 1, is how many times smaller along each side the TIFF page is read
	// (see Document.Smaller), and readW × readH its upright size so read.
	shrink       int
	readW, readH int
	// textShare is the share of the page's area under its kept characters' boxes.
	textShare float64

	chars    []pdfengine.Char
	decision TextDecision
	// images are the page's images, in display points, clipped to the page (see Pictures).
	images []pdfengine.Rect
	// scan is set when the page is nothing but one JPEG filling it upright: its pixels can be
	// taken from the file as they are (see Document.Render).
	scan *scanImage
}

// scanImage locates a page's JPEG.
type scanImage struct {
	index         int // object index on the page
	width, height int
	// header is the JPEG's own header, read from the file during Document.Page: what decoding it
	// costs (a progressive JPEG holds its coefficients, 15 bytes a pixel at 4:4:4), priced as an
	// upload of the same file would be.
	header imaging.Header
}

// TextDecision says whether a page's text layer can stand in for OCR, and why.
type TextDecision struct {
	Usable bool
	Reason string // for people and logs
	Code   Reason // the same, as a stable code (for a usable layer: ReasonLayerUnchecked)
}

// Reason says why a page is read from its text layer or by OCR, as a stable code.
type Reason string

// The reasons. A page read from its text layer has one of the first four; a page OCR'd one of
// the others.
const (
	// ReasonLayerAgrees: OCR of a sample of the layer's lines agrees with it (see Judge).
	ReasonLayerAgrees Reason = "text_layer_agrees"
	// ReasonLayerScript: the layer's text is in a script the recognizer does not read, and what
	// the layer shows is consistent (see Judge).
	ReasonLayerScript Reason = "text_layer_script"
	// ReasonLayerUnchecked: the layer was taken by its structure alone: the check is off, or the
	// layer has too little text to sample.
	ReasonLayerUnchecked Reason = "text_layer_unchecked"
	// ReasonLayerUndrawn: most of the layer's text is in a font the engine has no glyphs for (a
	// CJK font that is not embedded), so the page's drawing shows none of it and OCR can neither
	// read nor check it: the layer's own Unicode is the page's text, unchecked.
	ReasonLayerUndrawn Reason = "text_layer_undrawn"
	// ReasonLayerDisagrees: OCR of a sample of the layer's lines disagrees with it.
	ReasonLayerDisagrees Reason = "text_layer_disagrees"
	// ReasonNoLayer: the page has no text layer (a scan).
	ReasonNoLayer Reason = "no_text_layer"
	// ReasonLayerHidden: the page's text layer is text no one sees (an earlier OCR layer drawn
	// invisibly over a scan, white on white…).
	ReasonLayerHidden Reason = "text_layer_hidden"
	// ReasonLayerUnmapped: the layer's fonts give no Unicode for its characters.
	ReasonLayerUnmapped Reason = "text_layer_unmapped"
	// ReasonStrayText: a few stray characters over a page image (a page number on a scan).
	ReasonStrayText Reason = "stray_text_over_image"
	// ReasonLayerTooLarge: more characters than the text layer's limit.
	ReasonLayerTooLarge Reason = "text_layer_too_large"
	// ReasonRaster: a TIFF page, which has no text layer.
	ReasonRaster Reason = "raster_page"
	// ReasonOCRRequested: the request asked for OCR of every page.
	ReasonOCRRequested Reason = "ocr_requested"
)

// TextUsable reports whether the page's text layer is real text that can be returned instead of
// OCR (a born-digital page) and, either way, why. A scan, a page whose text does not map to
// Unicode, a page whose only text is a few stray characters (a stamp, a page number) over a
// full-page image, and a scan carrying an invisible OCR layer of unknown quality are not usable:
// they are OCR'd.
func (p *Page) TextUsable() TextDecision { return p.decision }

// The thresholds of the text-layer decision.
const (
	// pageImageCoverage: images covering this share of the page make it a page image (a scan).
	pageImageCoverage = 0.5
	// minCharsOverImage and minTextAreaOverImage: text over a page image counts only when there is
	// this much of it (characters, and share of the page area under their boxes); less is stray
	// characters (a stamp, a page number, a bates label).
	minCharsOverImage    = 100
	minTextAreaOverImage = 0.02
	// maxUnmappedShare: more characters than this without Unicode text make the layer garbage.
	maxUnmappedShare = 0.1
)

func newPDFPage(n int, f *pdfengine.PageFacts) *Page {
	p := &Page{Number: n, Width: f.Width, Height: f.Height}
	area := f.Width * f.Height
	page := pdfengine.Rect{X1: f.Width, Y1: f.Height}
	var covered float64
	var dominant pdfengine.Image
	var dominantArea float64
	for _, im := range f.Images {
		b := intersect(im.Bounds, page)
		a := (b.X1 - b.X0) * (b.Y1 - b.Y0)
		if b.Empty() {
			continue
		}
		covered += a
		p.images = append(p.images, b)
		if a > dominantArea {
			dominant, dominantArea = im, a
		}
	}
	p.ImageCoverage = math.Min(1, covered/area)
	if dominantArea >= 0.25*area && dominant.Width > 0 && dominant.Height > 0 {
		bw, bh := dominant.Bounds.X1-dominant.Bounds.X0, dominant.Bounds.Y1-dominant.Bounds.Y0
		p.ImageScale = math.Sqrt(float64(dominant.Width) * float64(dominant.Height) / (bw * bh))
	}

	// What no one sees is not page text: characters drawn invisibly, placed outside the page's
	// visible box, or too small to be read leave the layer here (Document.TextLayer drops the
	// ones the drawn page shows no mark of).
	p.chars, p.Hidden = visibleChars(f.Chars, page, false)
	p.count(page)
	p.decision = decide(p, f, p.textShare)
	if p.decision.Code == ReasonLayerHidden && p.Chars == 0 && p.Hidden.Invisible > 0 && p.ImageCoverage >= pageImageCoverage {
		// An earlier OCR layer over a scan: its invisible text is the layer, to be checked
		// against the pixels before it is taken (see InvisibleLayer).
		chars, hidden := visibleChars(f.Chars, page, true)
		q := *p
		q.chars, q.Hidden = chars, hidden
		q.count(page)
		if d := decide(&q, f, q.textShare); d.Usable {
			*p = q
			p.InvisibleLayer = true
			p.decision = TextDecision{Usable: true, Reason: "invisible text over a page image, taken if OCR of its probes agrees", Code: ReasonLayerUnchecked}
		}
	}
	p.scan = findScan(f)
	return p
}

// visibleChars are the characters of a text layer that are page text, and the count of those
// that are not (see Hidden): invisible ones are kept when invisible is set.
func visibleChars(chars []pdfengine.Char, page pdfengine.Rect, invisible bool) ([]pdfengine.Char, Hidden) {
	var h Hidden
	kept := make([]pdfengine.Char, 0, len(chars))
	for _, c := range chars {
		if c.Generated || unicode.IsSpace(c.Rune) || c.Rune == 0 && !c.Unmapped {
			kept = append(kept, c)
			continue
		}
		switch {
		case c.Invisible && !invisible:
			h.Invisible++
		case offPage(c, page):
			h.OffPage++
		case tooSmall(c):
			h.TooSmall++
		default:
			kept = append(kept, c)
		}
	}
	return kept, h
}

// count sets the page's character counts, text height and share of the page under text from
// its kept characters.
func (p *Page) count(page pdfengine.Rect) {
	p.Chars, p.Unmapped, p.TextHeight = 0, 0, 0
	area := p.Width * p.Height
	kept := p.chars
	var heights []float64
	var textArea float64
	for _, c := range kept {
		if c.Generated || unicode.IsSpace(c.Rune) || c.Rune == 0 && !c.Unmapped {
			continue
		}
		p.Chars++
		if c.Unmapped || c.Rune == unicode.ReplacementChar || c.Rune == 0 || isPrivateUse(c.Rune) {
			p.Unmapped++
		}
		if !c.Loose.Empty() {
			heights = append(heights, c.Loose.Y1-c.Loose.Y0)
		}
		if b := intersect(c.Box, page); !b.Empty() {
			textArea += (b.X1 - b.X0) * (b.Y1 - b.Y0)
		}
	}
	if len(heights) > 0 {
		slices.Sort(heights)
		p.TextHeight = heights[len(heights)/2]
	}
	p.textShare = textArea / area
}

// findScan recognizes a page that is a scanner's JPEG and nothing else: one image drawn by the
// page itself, upright and unmirrored, filling the page (to a point), stored as a plain JPEG
// (DCTDecode alone) in RGB or gray, opaque, with no visible text, no vector graphics and no
// annotations over it. Rendering such a page reproduces the JPEG's pixels; reading the JPEG
// itself gives those pixels exactly, faster, without holding them twice.
func findScan(f *pdfengine.PageFacts) *scanImage {
	if len(f.Images) != 1 || f.ObjectsTruncated || !f.Upright || f.Paths > 0 || f.Annotations > 0 ||
		f.TextObjects > f.InvisibleText {
		return nil
	}
	im := f.Images[0]
	m := im.Matrix
	const tol = 1.0 // points
	if im.Index < 0 || len(im.Filters) != 1 || im.Filters[0] != "DCTDecode" || im.Transparent ||
		(im.ColorSpace != enums.FPDF_COLORSPACE_DEVICERGB && im.ColorSpace != enums.FPDF_COLORSPACE_DEVICEGRAY) ||
		math.Abs(m[1]) > 1e-6 || math.Abs(m[2]) > 1e-6 || m[0] <= 0 || m[3] <= 0 ||
		math.Abs(im.Bounds.X0) > tol || math.Abs(im.Bounds.Y0) > tol ||
		math.Abs(im.Bounds.X1-f.Width) > tol || math.Abs(im.Bounds.Y1-f.Height) > tol ||
		im.Width <= 0 || im.Height <= 0 {
		return nil
	}
	return &scanImage{index: im.Index, width: im.Width, height: im.Height}
}

func decide(p *Page, f *pdfengine.PageFacts, textShare float64) TextDecision {
	overImage := p.ImageCoverage >= pageImageCoverage
	switch {
	case f.CharsTruncated:
		return TextDecision{Reason: "the text layer is larger than the character limit", Code: ReasonLayerTooLarge}
	case p.Chars == 0 && p.Hidden.Invisible > 0 && overImage:
		return TextDecision{Reason: "invisible text over a page image (an earlier OCR layer)", Code: ReasonLayerHidden}
	case p.Chars == 0 && p.Hidden.Chars() > 0:
		return TextDecision{Reason: "no visible text layer", Code: ReasonLayerHidden}
	case p.Chars == 0:
		return TextDecision{Reason: "no text layer", Code: ReasonNoLayer}
	case float64(p.Unmapped) > maxUnmappedShare*float64(p.Chars):
		return TextDecision{Reason: "the text layer's fonts do not map to Unicode", Code: ReasonLayerUnmapped}
	case overImage && (p.Chars < minCharsOverImage || textShare < minTextAreaOverImage):
		return TextDecision{Reason: "a few stray characters over a page image", Code: ReasonStrayText}
	}
	return TextDecision{Usable: true, Reason: "born-digital text", Code: ReasonLayerUnchecked}
}

func isPrivateUse(r rune) bool {
	return r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000
}

func intersect(a, b pdfengine.Rect) pdfengine.Rect {
	return pdfengine.Rect{X0: math.Max(a.X0, b.X0), Y0: math.Max(a.Y0, b.Y0), X1: math.Min(a.X1, b.X1), Y1: math.Min(a.Y1, b.Y1)}
}

// ScalePolicy is how Page.Scale picks a PDF page's render resolution for OCR.
type ScalePolicy struct {
	// TextPixels is the height, in pixels, the page's text should have: the OCR pipeline's
	// detection target (24 px). Used for pages with a text layer (whose text is then known).
	TextPixels float64
	// Default is the scale of a page that says nothing about its text (vector drawings,
	// outlined text): 200 dpi.
	Default float64
	// Min and Max bound every scale but a scan's own: a scan is rendered at its resolution (more
	// pixels add nothing, fewer lose detail), within the pixel caps only.
	Min, Max float64
	// MaxPixels and MaxSide cap the render (0: the Reader's limits). A scan whose own size is
	// within them (and within Limits.Raster) is read from the file at that size.
	MaxPixels, MaxSide int
}

// DefaultScalePolicy suits the OCR pipeline's detection size policy (text about 24 px tall) with
// the Reader's render caps.
func DefaultScalePolicy() ScalePolicy {
	return ScalePolicy{TextPixels: 24, Default: 200.0 / 72, Min: 100.0 / 72, Max: 600.0 / 72}
}

// maxFitSteps bounds the steps that shrink a scale until its rounded render fits the caps. The
// caps are applied in closed form first, so rounding is all that is left: a step or two.
const maxFitSteps = 64

// Scale returns the render resolution, in pixels per point, that OCR wants for this page: a scan
// at its own resolution, a page with known text so that the text is TextPixels tall, anything
// else at the default; then capped by the pixel limits. Raster pages always give 1.
//
// A page that would be drawn less than a pixel wide or tall (a page box a hundredth of a point
// thin) cannot be read at any scale the caps allow: Scale refuses it with ErrDegenerate, at once.
func (p *Page) Scale(pol ScalePolicy, lim Limits) (float64, error) {
	if p.Raster {
		return 1, nil
	}
	lim = lim.withDefaults()
	maxPixels, maxSide := pol.MaxPixels, pol.MaxSide
	if maxPixels <= 0 || maxPixels > lim.MaxRenderPixels {
		maxPixels = lim.MaxRenderPixels
	}
	if maxSide <= 0 || maxSide > lim.MaxRenderSide {
		maxSide = lim.MaxRenderSide
	}
	if p.scan != nil && checkRaster(p.scan.width, p.scan.height, lim.Raster) == nil &&
		(pol.MaxPixels <= 0 || p.scan.width <= pol.MaxPixels/p.scan.height) &&
		(pol.MaxSide <= 0 || max(p.scan.width, p.scan.height) <= pol.MaxSide) {
		// The scan's own pixels, read from the file: bounded like an uploaded image, not like a
		// render.
		return p.ImageScale, nil
	}
	if !(p.Width > 0 && p.Height > 0) || math.IsInf(p.Width*p.Height, 0) {
		return 0, p.degenerate(0)
	}
	var s float64
	switch {
	case p.ImageCoverage >= pageImageCoverage && p.ImageScale > 0:
		s = p.ImageScale
	case p.TextHeight > 0 && pol.TextPixels > 0:
		s = clamp(pol.TextPixels/p.TextHeight, pol.Min, pol.Max)
	default:
		s = clamp(pol.Default, pol.Min, pol.Max)
	}
	// The caps: pixels, then each side (rounding in RenderCost must stay within them).
	if capS := math.Sqrt(float64(maxPixels) / (p.Width * p.Height)); s > capS {
		s = capS
	}
	if capS := float64(maxSide) / math.Max(p.Width, p.Height); s > capS {
		s = capS
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return 0, p.degenerate(s)
	}
	for range maxFitSteps {
		// A side under a pixel stays under one at every smaller scale: no step can help.
		if math.Round(p.Width*s) < 1 || math.Round(p.Height*s) < 1 {
			return 0, p.degenerate(s)
		}
		c := p.RenderCost(s)
		if c.Pixels <= int64(maxPixels) && c.Width <= maxSide && c.Height <= maxSide {
			return s, nil
		}
		s *= 0.999
	}
	return 0, p.degenerate(s)
}

// degenerate is the error of a page that cannot be drawn at scale s (pixels per point).
func (p *Page) degenerate(s float64) error {
	return fmt.Errorf("%w: page %d is %.3g×%.3g pt, under a pixel on a side when drawn at %.3g px/pt within the render limits",
		ErrDegenerate, p.Number, p.Width, p.Height, s)
}

func clamp(v, lo, hi float64) float64 {
	if lo > 0 && v < lo {
		v = lo
	}
	if hi > 0 && v > hi {
		v = hi
	}
	return v
}

// Cost is what rendering a page takes, known before it happens.
type Cost struct {
	Width, Height int   // of the render, pixels
	Pixels        int64 // Width × Height
	// Bytes is the memory the render holds at its peak: the bitmap inside the PDF engine and
	// its RGBA copy in Go (a TIFF page: the decoded page, at most 8 bytes a pixel; a scan's
	// JPEG read from the file: what its header says decoding it holds, as for an upload).
	Bytes int64
}

// RenderCost returns the size and memory of a render at scale (pixels per point; ignored for
// raster pages). A scanned page at its scan's resolution costs the scan's size.
func (p *Page) RenderCost(scale float64) Cost {
	if p.scan != nil && scale == p.ImageScale {
		// The JPEG decoded in Go, priced by its header as an upload is: its pixels and the
		// decoder's working memory at their peak.
		px := int64(p.scan.width) * int64(p.scan.height)
		return Cost{Width: p.scan.width, Height: p.scan.height, Pixels: px, Bytes: p.scan.header.DecodeBytes()}
	}
	if p.Raster {
		w, h := int(p.Width), int(p.Height)
		if p.shrink > 1 {
			w, h = p.readW, p.readH
		}
		px := int64(w) * int64(h)
		return Cost{Width: w, Height: h, Pixels: px, Bytes: p.rasterBytes}
	}
	return DrawnCost(p.Width, p.Height, scale)
}

// DrawnCost is the size and memory of a page of width × height points drawn by the engine at
// scale (pixels per point): what RenderCost gives every page that is not a raster, nor a scan
// read at its own resolution.
func DrawnCost(width, height, scale float64) Cost {
	// Rounded, not ceiled: a scan's page size is written with a few decimals, and its render at
	// the scan's own resolution must come out at the scan's pixel size, not one more.
	fw, fh := math.Round(width*scale), math.Round(height*scale)
	if !(fw >= 1) || !(fh >= 1) || fw > math.MaxInt32 || fh > math.MaxInt32 {
		return Cost{Width: math.MaxInt32, Height: math.MaxInt32, Pixels: math.MaxInt64, Bytes: math.MaxInt64}
	}
	w, h := int(fw), int(fh)
	px := int64(w) * int64(h)
	return Cost{Width: w, Height: h, Pixels: px, Bytes: 8 * px}
}
