package docfile_test

import (
	"context"
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
	src := newSources(ctx)
	for _, l := range readSet(t, "manifest.tsv") {
		file, page, ref, source := l.file, l.page, l.col[1], l.col[2]
		if ref == "corrupt" || ref == "unsupported" || source == "-" {
			continue
		}
		_, want := src.read(t, source)
		t.Run(l.col[0], func(t *testing.T) {
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
			if f1 := wordF1(want, got); f1 < 0.98 {
				t.Errorf("word F1 %.3f against %s: read %q", f1, source, res.Text)
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
	src := newSources(ctx)
	for _, l := range readSet(t, "oriented.tsv") {
		file, page, source := l.file, l.page, l.col[2]
		srcImg, want := src.read(t, source)
		t.Run(l.col[0], func(t *testing.T) {
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
			if f1 := wordF1(want, got); f1 < 0.98 || res.Rotation != 0 {
				t.Errorf("word F1 %.3f against %s, rotation %d: read %q", f1, source, res.Rotation, res.Text)
			}
		})
	}
}

// setLine is one line of a listing of the TIFF test set (manifest.tsv, oriented.tsv): its
// columns, and its first column's file and page ("file#page"; page 1 without the suffix).
type setLine struct {
	file string
	page int
	col  []string
}

func readSet(t *testing.T, name string) []setLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tiffSet, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []setLine
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		l := setLine{col: strings.Split(line, "\t"), page: 1}
		l.file = l.col[0]
		if name, p, ok := strings.Cut(l.file, "#"); ok {
			l.file = name
			l.page, _ = strconv.Atoi(p)
		}
		if len(l.col) < 3 {
			t.Fatalf("%s: line %q", name, line)
		}
		out = append(out, l)
	}
	return out
}

// sources decodes and OCRs each source page of the set once.
type sources struct {
	ctx   context.Context
	img   map[string]imaging.Decoded
	words map[string][]string
}

func newSources(ctx context.Context) *sources {
	return &sources{ctx: ctx, img: map[string]imaging.Decoded{}, words: map[string][]string{}}
}

// read returns source page name decoded, and the words its OCR reads (lower case).
func (s *sources) read(t *testing.T, name string) (imaging.Decoded, []string) {
	t.Helper()
	if w, ok := s.words[name]; ok {
		return s.img[name], w
	}
	data, err := os.ReadFile(filepath.Join(tiffSet, name))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := imaging.Decode(data, imaging.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline(t).RunImage(s.ctx, dec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s reads %q", name, res.Text)
	s.img[name], s.words[name] = dec, strings.Fields(strings.ToLower(res.Text))
	return dec, s.words[name]
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
