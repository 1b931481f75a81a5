package receipts

import (
	"fmt"
	"image"
	"strings"
)

// Summary is what the README says of one written receipt.
type Summary struct {
	Receipt
	Size     image.Point
	Bytes    int
	Segments int
	SHA256   string
}

// README is testdata/receipts/README.md: what the folder holds, how it is made and regenerated,
// one row per receipt, and the files' SHA-256 (sums, one "sum  path" a line).
func README(rows []Summary, sums string) []byte {
	var b strings.Builder
	b.WriteString(`# testdata/receipts: receipts the project renders, with their ground truth

Written by ` + "`go run ./cmd/ocrgate-receipts`" + ` (` + "`make receipts`" + `) from the receipts described in
` + "`internal/receipts`" + ` (set.go); this README too. Nothing is downloaded and nothing is copied: the
shops, people and amounts are made up, the pixels are drawn by that package, and the truth is
known exactly because it put every line where it is. The files are committed, so the tests need
neither the command nor its fonts; run it again only to change the receipts (then look at the
images, run ` + "`make golden`" + ` and review the accuracy floors).

The folder is in SROIE's layout, so the project's scorer and ` + "`ocrgate bench`" + ` read it as a dataset
(` + "`make bench-accuracy DATASET=testdata/receipts`" + `):

    img/<id>.jpg    the receipt (baseline JPEG, 4:2:0, written by Go's image/jpeg)
    box/<id>.csv    one text segment a line: x1,y1,x2,y2,x3,y3,x4,y4,TEXT, corners clockwise
                    from the text's top-left in the image's pixels (TEXT may hold commas)
    key/<id>.json   the key fields: company, date, address, total

Tests reach it through ` + "`internal/testenv`" + ` (` + "`testenv.Receipts`" + `, ` + "`testenv.Receipt`" + `), never by a relative path.

| id | image | segments | why it is here |
| --- | --- | --- | --- |
`)
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %d×%d, %s bytes | %d | %s |\n", r.ID, r.Size.X, r.Size.Y, thousands(r.Bytes), r.Segments, r.Why)
	}
	b.WriteString(`
## How they are made

Each receipt is printed, worn and captured (see the package's documentation):

- **printed**: rows of cells laid out on a strip of paper in a printer's pixels, each cell one
  segment of the truth, its box the cell's ink measured from the drawn pixels plus 2 px. Fonts:
  the Go fonts (Regular, Bold, Mono, Mono Bold; part of ` + "`golang.org/x/image`" + `, BSD licence) and
  DejaVu Sans, Sans Mono and Serif (Debian's ` + "`fonts-dejavu-core`" + `, read from
  ` + "`/usr/share/fonts/truetype/dejavu`" + ` or ` + "`-fonts DIR`" + `). The images hold pictures of text set in
  those fonts, not the fonts.
- **worn**: a thermal printer's dots (no anti-aliasing), dots that did not print, faint columns
  of a worn print head, fading down the paper.
- **captured**: photographed (a slant, a curl across the paper, uneven light, a shadow, soft
  focus, sensor noise, a table behind it) or scanned (turned a little, the paper's edge shadow,
  scanner noise); every box's corners go through the same mapping as the pixels. Then JPEG.

Everything is seeded, so the same fonts give the same bytes. ` + "`.gitattributes`" + ` in ` + "`testdata/`" + `
keeps every file byte for byte (the CRLF line ends of one receipt's truth are on purpose).

SHA-256:

` + "```" + `
` + sums + `
` + "```" + `
`)
	return []byte(b.String())
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
