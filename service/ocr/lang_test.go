package ocr_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	_ "image/png" // the rendered lines
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrscore"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// testLangs are the language packs the language tests load; `make test` fetches them
// (OCRGATE_LANGS in the Makefile's test target).
const testLangs = "ja,ko,zh-Hant,en"

var (
	langOnce   sync.Once
	langEngine *engine.Engine
	langErr    error
)

// langPipeline is the embedded engine with every language pack loaded. A pack that is missing
// fails the test in the full tier (it does not skip): make test fetches them.
func langPipeline(t testing.TB) *ocr.Pipeline {
	t.Helper()
	testenv.Models(t)
	langOnce.Do(func() {
		cfg, err := config.Load(nil, os.Getenv, os.Stderr)
		if err != nil {
			langErr = err
			return
		}
		cfg.Langs = testLangs
		packs, err := cfg.LoadedPacks()
		if err != nil {
			langErr = err
			return
		}
		for _, p := range packs {
			for _, f := range []string{p.Model, p.Dictionary} {
				if _, err := os.Stat(cfg.ModelPath(f)); err != nil {
					langErr = fmt.Errorf("language pack %s: %w; run OCRGATE_LANGS=%s make models (make test does)", p.Lang, err, testLangs)
					return
				}
			}
		}
		langEngine, langErr = engine.Embedded(cfg)
	})
	if langErr != nil {
		t.Fatal(langErr)
	}
	return langEngine.Pipeline
}

type langLine struct {
	name, text string
	png        []byte
}

// langLines reads the rendered lines of one language (scripts/render_langs.sh).
func langLines(t testing.TB, lang string) []langLine {
	t.Helper()
	dir := filepath.Join("testdata", "langs")
	f, err := os.Open(filepath.Join(dir, lang+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var lines []langLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == "" {
			continue
		}
		name := fmt.Sprintf("%s-%02d.png", lang, len(lines))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, langLine{name: name, text: sc.Text(), png: data})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// degrade makes a scan of a rendered line: halved (the 40 px em of a 9.6 pt line at 300 dpi
// becomes 150 dpi), grey noise and a few specks, saved as JPEG at quality 60. Deterministic.
func degrade(t *testing.T, data []byte, seed uint64) []byte {
	t.Helper()
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := src.Bounds()
	w, h := b.Dx()/2, b.Dy()/2
	dst := image.NewGray(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(seed, 38))
	for y := range h {
		for x := range w {
			var sum int
			for _, d := range [4][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				sum += int(color.GrayModel.Convert(src.At(b.Min.X+2*x+d[0], b.Min.Y+2*y+d[1])).(color.Gray).Y)
			}
			v := float64(sum)/4 + rng.NormFloat64()*12
			if rng.IntN(400) == 0 {
				v = 40 // a speck
			}
			dst.SetGray(x, y, color.Gray{Y: uint8(min(255, max(0, v)))})
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// langScore is how one recognizer read one language's lines.
type langScore struct {
	lines, exact, chars, edits int
	misses                     []string
}

func (s langScore) charAccuracy() float64 { return 1 - float64(s.edits)/float64(s.chars) }

// readLines reads every line with p and scores it against its text. Spaces are left out of both
// sides: where a CJK line puts a space is typography, not text.
func readLines(t *testing.T, p *ocr.Pipeline, lines []langLine, degraded bool) langScore {
	t.Helper()
	var s langScore
	for i, l := range lines {
		data := l.png
		if degraded {
			data = degrade(t, data, uint64(i))
		}
		res, err := p.Run(context.Background(), data)
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		var got strings.Builder
		for _, r := range res.Regions {
			got.WriteString(r.Text)
		}
		want, read := noSpace(l.text), noSpace(got.String())
		_, edits := ocrscore.CompareLines([]string{want}, []string{read})
		if read == "" {
			edits = len([]rune(want))
		}
		s.lines++
		s.chars += len([]rune(want))
		s.edits += edits
		if edits == 0 {
			s.exact++
		} else if len(s.misses) < 4 {
			s.misses = append(s.misses, fmt.Sprintf("%q → %q", want, read))
		}
	}
	return s
}

func noSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// TestLanguages reads the rendered Japanese, Korean and Traditional Chinese lines, clean and
// degraded, with the language's own recognizer and with the default (ch) one, and holds the
// language's own to the accuracy it reaches (docs/languages.md quotes the figures; -v prints
// them).
func TestLanguages(t *testing.T) {
	p := langPipeline(t)
	// The floors: the lowest character accuracy each language's own recognizer may fall to,
	// clean and degraded: the 0.95 and 0.90, or a little under what it reads today where
	// that is more (docs/languages.md quotes the figures). Korean loses every thousands comma (its
	// dictionary has no comma); the degraded lines are read smoothed (see packSmoothFrom).
	floors := map[string][2]float64{"ja": {0.96, 0.94}, "ko": {0.95, 0.90}, "zh-Hant": {0.98, 0.91}}
	for _, lang := range []string{"ja", "ko", "zh-Hant"} {
		t.Run(lang, func(t *testing.T) {
			lines := langLines(t, lang)
			if len(lines) < 40 {
				t.Fatalf("%d %s lines, want 40 or more", len(lines), lang)
			}
			own, err := p.Lang(lang)
			if err != nil {
				t.Fatal(err)
			}
			for i, degraded := range []bool{false, true} {
				kind := map[bool]string{false: "clean", true: "degraded"}[degraded]
				mine := readLines(t, own, lines, degraded)
				def := readLines(t, p, lines, degraded)
				t.Logf("%s %s: lang=%s exact %d/%d chars %.4f | lang=ch exact %d/%d chars %.4f",
					lang, kind, lang, mine.exact, mine.lines, mine.charAccuracy(), def.exact, def.lines, def.charAccuracy())
				for _, m := range mine.misses {
					t.Logf("  %s", m)
				}
				if got := mine.charAccuracy(); got < floors[lang][i] {
					t.Errorf("%s %s: character accuracy %.4f with its own recognizer, below %.2f; first misses: %s",
						lang, kind, got, floors[lang][i], strings.Join(mine.misses, "; "))
				}
			}
		})
	}
}

// langPage is one page of the language page set (scripts/render_lang_pages.sh).
type langPage struct {
	name, lang string
	rows       []string
	png        []byte
}

func langPages(t testing.TB) []langPage {
	t.Helper()
	dir := filepath.Join("testdata", "langpages")
	data, err := os.ReadFile(filepath.Join(dir, "truth.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var pages []langPage
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("truth.tsv: %q", line)
		}
		img, err := os.ReadFile(filepath.Join(dir, f[0]))
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, r := range strings.Split(f[2], "|") {
			rows = append(rows, noSpace(r))
		}
		pages = append(pages, langPage{name: f[0], lang: f[1], rows: rows, png: img})
	}
	return pages
}

// pageScore reads a page with p and counts the characters of its rows and the edits that turn
// them into the page's lines as read, in reading order (a row missed or read twice costs its
// length and one).
func pageScore(t *testing.T, p *ocr.Pipeline, pg langPage, data []byte) (chars, edits int, diffs []string) {
	t.Helper()
	res, err := p.Run(context.Background(), data)
	if err != nil {
		t.Fatalf("%s: %v", pg.name, err)
	}
	var got []string
	for _, l := range strings.Split(res.Text, "\n") {
		if l = noSpace(l); l != "" {
			got = append(got, l)
		}
	}
	d, edits := ocrscore.CompareLines(pg.rows, got)
	for _, r := range pg.rows {
		chars += len([]rune(r))
	}
	for _, x := range d {
		diffs = append(diffs, x.String())
	}
	return chars, min(edits, chars), diffs
}

// TestLanguagePages reads the rendered receipts and invoices of each language (across, and in
// columns for Japanese and Traditional Chinese), clean and degraded as the lines are, with the
// language's own recognizer and the default one, and holds the language's own to a floor of
// character accuracy over its pages: what is read, in reading order, against the page's rows.
func TestLanguagePages(t *testing.T) {
	p := langPipeline(t)
	byLang := map[string][]langPage{}
	for _, pg := range langPages(t) {
		byLang[pg.lang] = append(byLang[pg.lang], pg)
	}
	// The floors: a little under what each language's own recognizer reads today, clean and
	// degraded (docs/languages.md quotes the figures). The default one reads each language's
	// pages worse; the test does not hold it to anything.
	floors := map[string][2]float64{"ja": {0.97, 0.94}, "ko": {0.93, 0.91}, "zh-Hant": {0.95, 0.92}}
	for _, lang := range []string{"ja", "ko", "zh-Hant"} {
		t.Run(lang, func(t *testing.T) {
			own, err := p.Lang(lang)
			if err != nil {
				t.Fatal(err)
			}
			for i, degraded := range []bool{false, true} {
				kind := map[bool]string{false: "clean", true: "degraded"}[degraded]
				var chars, edits, defChars, defEdits int
				for k, pg := range byLang[lang] {
					data := pg.png
					if degraded {
						data = degrade(t, data, uint64(k))
					}
					c, e, diffs := pageScore(t, own, pg, data)
					dc, de, _ := pageScore(t, p, pg, data)
					chars, edits, defChars, defEdits = chars+c, edits+e, defChars+dc, defEdits+de
					t.Logf("%s %s: lang=%s chars %.4f | lang=ch chars %.4f", pg.name, kind, lang, 1-float64(e)/float64(c), 1-float64(de)/float64(dc))
					for _, d := range diffs[:min(len(diffs), 6)] {
						t.Logf("  %s", d)
					}
				}
				acc := 1 - float64(edits)/float64(chars)
				t.Logf("%s pages %s: lang=%s chars %.4f | lang=ch chars %.4f", lang, kind, lang, acc, 1-float64(defEdits)/float64(defChars))
				if acc < floors[lang][i] {
					t.Errorf("%s pages %s: character accuracy %.4f with its own recognizer, below %.2f", lang, kind, acc, floors[lang][i])
				}
			}
		})
	}
}

// BenchmarkAutoByConfidence measures the lang=auto the issue proposed and docs/languages.md
// explains leaving out: each clean rendered page is read with every recognizer, and the one whose
// reading is the most confident (each region's score weighted by its characters) is the pick. It
// reports right-pages (picks that are the page's own language) beside pages; the log names each
// pick. A measurement, not a test: whether lang=auto is worth offering is a judgement made from
// its figure, and a run reads every page five times.
func BenchmarkAutoByConfidence(b *testing.B) {
	p := langPipeline(b)
	langs := []string{ocr.DefaultLang, "ja", "ko", "zh-Hant", "en"}
	pages := langPages(b)
	right := 0
	for b.Loop() {
		right = 0
		for _, pg := range pages {
			scores := map[string]float64{}
			pick := ""
			for _, lang := range langs {
				q, err := p.Lang(lang)
				if err != nil {
					b.Fatal(err)
				}
				res, err := q.Run(context.Background(), pg.png)
				if err != nil {
					b.Fatalf("%s: %v", pg.name, err)
				}
				var sum float64
				var n int
				for _, r := range res.Regions {
					c := len([]rune(noSpace(r.Text)))
					sum += float64(r.Score) * float64(c)
					n += c
				}
				if n > 0 {
					scores[lang] = sum / float64(n)
				}
				if pick == "" || scores[lang] > scores[pick] {
					pick = lang
				}
			}
			if pick == pg.lang {
				right++
			}
			b.Logf("%s: picks %s (%.4f), its own %s %.4f", pg.name, pick, scores[pick], pg.lang, scores[pg.lang])
		}
	}
	b.ReportMetric(float64(right), "right-pages")
	b.ReportMetric(float64(len(pages)), "pages")
}

// BenchmarkPackLines reads each language's clean rendered lines with its pack, whole pipeline,
// and reports the process's CPU time per line (cpu-ms/line: on a shared machine, steadier than
// the wall time). docs/languages.md compares the float packs with int8 ones this way
// (OCRGATE_HOME pointing at a model directory that holds the int8 file under the pack's name).
func BenchmarkPackLines(b *testing.B) {
	p := langPipeline(b)
	for _, lang := range []string{"ja", "ko", "zh-Hant"} {
		b.Run(lang, func(b *testing.B) {
			lines := langLines(b, lang)
			own, err := p.Lang(lang)
			if err != nil {
				b.Fatal(err)
			}
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			n := 0
			for b.Loop() {
				for _, l := range lines {
					if _, err := own.Run(context.Background(), l.png); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
			b.ReportMetric(float64(cpu)/1e6/float64(n), "cpu-ms/line")
		})
	}
}
