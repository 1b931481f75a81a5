package tiffdec

import (
	"bufio"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// manifestEntry is one line of testdata/manifest.tsv (written by testdata/make.sh).
type manifestEntry struct {
	file   string
	page   int    // 1-based
	ref    string // reference PNG, "corrupt" or "unsupported"
	source string // the PNG the page was made from ("-": a crop, for pixels only)
	tol    int    // largest difference of a channel from libtiff's pixels (lossy: see below)
}

func readManifest(t testing.TB) []manifestEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []manifestEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 4 {
			t.Fatalf("manifest line %q", sc.Text())
		}
		e := manifestEntry{file: parts[0], page: 1, ref: parts[1], source: parts[2]}
		if name, p, ok := strings.Cut(e.file, "#"); ok {
			e.file = name
			e.page, _ = strconv.Atoi(p)
		}
		e.tol, _ = strconv.Atoi(parts[3])
		out = append(out, e)
	}
	return out
}

// overWhite is what a pixel shows on white paper, 8 bits a channel.
func overWhite(c color.Color) [3]int {
	r, g, b, a := c.RGBA() // premultiplied, 16 bits
	w := 0xffff - a
	return [3]int{int((r + w) >> 8), int((g + w) >> 8), int((b + w) >> 8)}
}

func readPNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestMatchesLibtiff decodes every page of the test set and compares it with the pixels libtiff
// gives (tiff2rgba): exactly for lossless pages (16-bit samples within 1, as libtiff rounds them
// to 8 bits by its own table), within a few levels for JPEG pages (image/jpeg's and libjpeg's
// inverse DCTs and colour conversions round differently; chroma is upsampled as libjpeg does). The corrupt page fails alone with a
// *PageError naming it; valid files this package does not read are ErrUnsupported, not corrupt.
func TestMatchesLibtiff(t *testing.T) {
	for _, e := range readManifest(t) {
		t.Run(e.file+"#"+strconv.Itoa(e.page), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", e.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(context.Background(), data, Limits{})
			if e.ref == "unsupported" && err != nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("Open: %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := &f.Pages[e.page-1]
			plan, perr := p.Plan()
			img, err := f.Decode(context.Background(), p)
			var pe *PageError
			switch e.ref {
			case "unsupported":
				if !errors.Is(perr, ErrUnsupported) || !errors.Is(err, ErrUnsupported) || errors.Is(err, ErrCorrupt) {
					t.Fatalf("Plan: %v; Decode: %v; want ErrUnsupported", perr, err)
				}
				if !errors.As(err, &pe) || pe.Page != e.page {
					t.Fatalf("Decode: %v, want a *PageError for page %d", err, e.page)
				}
				return
			case "corrupt":
				if !errors.As(err, &pe) || pe.Page != e.page || !errors.Is(pe.Kind(), ErrCorrupt) {
					t.Fatalf("Decode: %v, want a *PageError for page %d wrapping ErrCorrupt", err, e.page)
				}
				t.Log(err)
				return
			}
			if perr != nil || err != nil {
				t.Fatalf("Plan: %v; Decode: %v", perr, err)
			}
			if b := img.Bounds(); b.Dx() != plan.Width || b.Dy() != plan.Height {
				t.Fatalf("decoded %v, plan says %d×%d", b, plan.Width, plan.Height)
			}
			ref := readPNG(t, filepath.Join("testdata", e.ref))
			if img.Bounds() != ref.Bounds() {
				t.Fatalf("decoded %v, libtiff %v", img.Bounds(), ref.Bounds())
			}
			var sum, n, worst int
			for y := 0; y < ref.Bounds().Dy(); y++ {
				for x := 0; x < ref.Bounds().Dx(); x++ {
					a, b := overWhite(img.At(x, y)), overWhite(ref.At(x, y))
					for c := range 3 {
						d := max(a[c]-b[c], b[c]-a[c])
						sum += d
						n++
						worst = max(worst, d)
					}
				}
			}
			mean := float64(sum) / float64(n)
			t.Logf("mean difference %.3f, largest %d", mean, worst)
			if worst > e.tol {
				t.Errorf("a channel differs from libtiff's by %d (mean %.3f); at most %d allowed", worst, mean, e.tol)
			}
			if mean > 0.5 {
				t.Errorf("the page differs from libtiff's by %.3f on average; at most 0.5 allowed", mean)
			}
		})
	}
}
