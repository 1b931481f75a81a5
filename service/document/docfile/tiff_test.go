package docfile_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/service/imaging"
)

// tiffSet is the TIFF reader's test set (made with libtiff's tools; see its README).
const tiffSet = "../../tiffdec/testdata"

// TestTIFFPagesReadLikeTheirSources: every good page of the TIFF test set (every compression and
// layout the reader reads) OCRs through the real pipeline to the words of the PNG page it was
// made from: word F1 at least 0.98 against the PNG's own OCR.
func TestTIFFPagesReadLikeTheirSources(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the models")
	}
	ctx := ctxFor(t, 10*time.Minute)
	f, err := os.Open(filepath.Join(tiffSet, "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sources := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		file, ref, src := col[0], col[1], col[2]
		if ref == "corrupt" || ref == "unsupported" || src == "-" {
			continue
		}
		page := 1
		if name, p, ok := strings.Cut(file, "#"); ok {
			file = name
			page, _ = strconv.Atoi(p)
		}
		if sources[src] == nil {
			data, err := os.ReadFile(filepath.Join(tiffSet, src))
			if err != nil {
				t.Fatal(err)
			}
			dec, err := imaging.Decode(data, imaging.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := pipeline(t).RunImage(ctx, dec)
			if err != nil {
				t.Fatal(err)
			}
			sources[src] = strings.Fields(strings.ToLower(res.Text))
			t.Logf("%s reads %q", src, res.Text)
		}
		t.Run(sc.Text()[:strings.IndexByte(sc.Text(), '\t')], func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(tiffSet, file))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := testReader(t).Open(ctx, data)
			if err != nil {
				t.Fatal(err)
			}
			defer doc.Close()
			res, _ := ocrPage(ctx, t, doc, page)
			got := strings.Fields(strings.ToLower(res.Text))
			if f1 := wordF1(sources[src], got); f1 < 0.98 {
				t.Errorf("word F1 %.3f against %s: read %q", f1, src, res.Text)
			}
		})
	}
}

// TestTIFFOrientedPagesReadUpright: every page of the Orientation set (pages stored turned or
// mirrored, with the tag that says so, and a fax at standard resolution; see
// service/tiffdec/testdata/oriented.sh) has its source page's size, draws as that page, and OCRs
// to its words, found upright (rotation 0). A mirrored page could not be read otherwise: no turn
// of its pixels makes its letters read; the fax read as stored gives "8031/" for 80317.
func TestTIFFOrientedPagesReadUpright(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the models")
	}
	ctx := ctxFor(t, 10*time.Minute)
	f, err := os.Open(filepath.Join(tiffSet, "oriented.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sources := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		file, src := col[0], col[2]
		page := 1
		if name, p, ok := strings.Cut(file, "#"); ok {
			file = name
			page, _ = strconv.Atoi(p)
		}
		srcData, err := os.ReadFile(filepath.Join(tiffSet, src))
		if err != nil {
			t.Fatal(err)
		}
		srcImg, err := imaging.Decode(srcData, imaging.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if sources[src] == nil {
			res, err := pipeline(t).RunImage(ctx, srcImg)
			if err != nil {
				t.Fatal(err)
			}
			sources[src] = strings.Fields(strings.ToLower(res.Text))
		}
		t.Run(col[0], func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(tiffSet, file))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := testReader(t).Open(ctx, data)
			if err != nil {
				t.Fatal(err)
			}
			defer doc.Close()
			res, p := ocrPage(ctx, t, doc, page)
			if int(p.Width) != srcImg.Width || int(p.Height) != srcImg.Height {
				t.Errorf("page %g×%g, its source %d×%d", p.Width, p.Height, srcImg.Width, srcImg.Height)
			}
			got := strings.Fields(strings.ToLower(res.Text))
			if strings.HasPrefix(file, "fax-") {
				// A standard-resolution fax has lost half its rows: its letters may read
				// T as I, but its figures must read exactly.
				for _, want := range []string{"80317", "14/05/2025", "7757 0041 6336", "1,000.00"} {
					if !strings.Contains(res.Text, want) {
						t.Errorf("%q not read: %q", want, res.Text)
					}
				}
				return
			}
			if f1 := wordF1(sources[src], got); f1 < 0.98 || res.Rotation != 0 {
				t.Errorf("word F1 %.3f against %s, rotation %d: read %q", f1, src, res.Rotation, res.Text)
			}
		})
	}
}

// wordF1 is the F1 score of the words got against want, as multisets.
func wordF1(want, got []string) float64 {
	if len(want)+len(got) == 0 {
		return 1
	}
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	match := 0
	for _, g := range got {
		if count[g] > 0 {
			count[g]--
			match++
		}
	}
	return 2 * float64(match) / float64(len(want)+len(got))
}
