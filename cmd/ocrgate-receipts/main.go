// Command ocrgate-receipts writes the receipts the tests read, testdata/receipts: each receipt's
// image and its ground truth in SROIE's layout (img/<id>.jpg, box/<id>.csv, key/<id>.json) and
// the folder's README, all rendered by internal/receipts. Nothing is downloaded: the text is made
// up there, and the fonts are the Go fonts (part of golang.org/x/image) and Debian's
// fonts-dejavu-core.
//
//	go run ./cmd/ocrgate-receipts            (make receipts)
//
// The output is committed, so the tests need neither this command nor the fonts; run it again
// only to change the receipts, then review the images, `make golden` and the accuracy floors.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"

	"github.com/ocrgate/ocrgate/internal/receipts"
)

func main() {
	out := flag.String("out", filepath.Join("testdata", "receipts"), "the dataset directory to write")
	fontDir := flag.String("fonts", receipts.DefaultFontDir, "the directory of DejaVu's .ttf files (Debian's fonts-dejavu-core)")
	flag.Parse()
	if err := run(*out, *fontDir); err != nil {
		fmt.Fprintln(os.Stderr, "ocrgate-receipts:", err)
		os.Exit(1)
	}
}

func run(out, fontDir string) error {
	fonts := receipts.NewFonts(fontDir)
	set := receipts.Set()
	// What the set no longer holds goes: the folder is this command's output only.
	for _, sub := range []string{"img", "box", "key"} {
		if err := os.RemoveAll(filepath.Join(out, sub)); err != nil {
			return err
		}
	}
	var rows []receipts.Summary
	for _, r := range set {
		rendered, err := receipts.Write(out, r, fonts)
		if err != nil {
			return err
		}
		s := receipts.Summary{Receipt: r, Segments: len(rendered.Boxes), Size: rendered.Image.Bounds().Size()}
		if s.Bytes, s.SHA256, err = fileSum(filepath.Join(out, "img", r.ID+".jpg")); err != nil {
			return err
		}
		rows = append(rows, s)
		fmt.Printf("%-8s %s, %d bytes, %d segments\n", r.ID, sizeText(s.Size), s.Bytes, s.Segments)
	}
	var sums []string
	for _, r := range set {
		for _, f := range []string{"img/" + r.ID + ".jpg", "box/" + r.ID + ".csv", "key/" + r.ID + ".json"} {
			_, sum, err := fileSum(filepath.Join(out, f))
			if err != nil {
				return err
			}
			sums = append(sums, sum+"  "+f)
		}
	}
	return os.WriteFile(filepath.Join(out, "README.md"), receipts.README(rows, strings.Join(sums, "\n")), 0o644)
}

func fileSum(path string) (int, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	return len(data), fmt.Sprintf("%x", sha256.Sum256(data)), nil
}

func sizeText(p image.Point) string { return fmt.Sprintf("%d×%d", p.X, p.Y) }
