package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBagF1(t *testing.T) {
	for _, c := range []struct {
		name      string
		want, got []string
		f1        float64
	}{
		{"both empty", nil, nil, 1},
		{"nothing answered", []string{"a"}, nil, 0},
		{"nothing expected", nil, []string{"a"}, 0},
		{"same", []string{"a", "b"}, []string{"b", "a"}, 1},
		{"one of two", []string{"a", "b"}, []string{"a"}, 2.0 / 3},
		{"a repeat counts once per copy", []string{"a", "a"}, []string{"a"}, 2.0 / 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := bagF1(c.want, c.got); math.Abs(got-c.f1) > 1e-9 {
				t.Errorf("bagF1 = %.4f, want %.4f", got, c.f1)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		name        string
		ref, answer []string
		f1, f1Fold  float64
		charAcc     float64 // at least
		lost, extra int
	}{
		{"exact", []string{"Invoice 117", "Total 12.00"}, []string{"Invoice 117", "Total 12.00"}, 1, 1, 1, 0, 0},
		{"lines in another order cost nothing", []string{"Invoice 117", "Total 12.00"}, []string{"Total 12.00", "Invoice 117"}, 1, 1, 1, 0, 0},
		{"a ligature is its letters", []string{"office affairs"}, []string{"o\ufb03ce a\ufb00airs"}, 1, 1, 1, 0, 0},
		{"case counts in F1 and characters", []string{"TOTAL due"}, []string{"Total due"}, 0.5, 1, 0.5, 1, 1},
		{"a lost line and an extra one", []string{"Department of the Treasury", "Total 12.00"}, []string{"Total 12.00", "completely different words"}, 4.0 / 11, 4.0 / 11, 0.3, 1, 1},
		{"nothing answered", []string{"Total 12.00"}, nil, 0, 0, 0, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := compare(c.ref, c.answer)
			if math.Abs(s.F1-c.f1) > 1e-9 || math.Abs(s.F1Fold-c.f1Fold) > 1e-9 {
				t.Errorf("F1 %.4f (ci %.4f), want %.4f (ci %.4f)", s.F1, s.F1Fold, c.f1, c.f1Fold)
			}
			if s.CharAcc < c.charAcc || s.CharAcc > 1 {
				t.Errorf("char accuracy %.4f, want %.4f or more", s.CharAcc, c.charAcc)
			}
			if len(s.Lost) != c.lost || len(s.Extra) != c.extra {
				t.Errorf("lost %q, extra %q; want %d and %d", s.Lost, s.Extra, c.lost, c.extra)
			}
		})
	}
}

func TestLineWords(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"Existing systems are ex-", "isting ones"}, "Existing systems are existing ones"},
		{[]string{"a semi-", "automatic way"}, "a semiautomatic way"},
		{[]string{"pages 12-", "14"}, "pages 12- 14"},                     // a range, not a word
		{[]string{"U.S.-", "Canada"}, "U.S.- Canada"},                     // not a letter before the hyphen... of a word
		{[]string{"the Anglo-", "Saxon kings"}, "the Anglo- Saxon kings"}, // a capital: a compound kept
		{[]string{"o\ufb03ce", "", "hy-", "", "phen"}, "office hyphen"},
	} {
		if got := strings.Join(lineWords(c.lines), " "); got != c.want {
			t.Errorf("lineWords(%q) = %q, want %q", c.lines, got, c.want)
		}
	}
}

func TestBagDiff(t *testing.T) {
	if got := bagDiff([]string{"a", "b", "a", "c"}, []string{"a", "c", "d"}); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("bagDiff = %q, want [b a]", got)
	}
}

func TestDistancesRepeatedLines(t *testing.T) {
	// A timetable's "11:50" twice in the reference is in an answer that holds it once only once.
	dist, _ := distances([]string{"11:50", "11:50"}, "11:50")
	if dist[0]+dist[1] == 0 {
		t.Errorf("distances %v: one answered line found for two", dist)
	}
}

func TestNearest(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		want          int
	}{
		{"abc", "xxabcxx", 0},
		{"abc", "xxabxx", 1},
		{"Treasury", "the Treasnry dept", 1},
		{"abc", "", 3},
		{"", "abc", 0},
	} {
		if got := nearest([]rune(c.pattern), []rune(c.text)); got != c.want {
			t.Errorf("nearest(%q, %q) = %d, want %d", c.pattern, c.text, got, c.want)
		}
	}
}

// interleave deals a's and b's characters alternately, one each, the rest of the longer at the
// end: two lines sorted into one by x, as a text layer's glyphs of overlapping lines are.
func interleave(a, b string) string {
	ra, rb := []rune(a), []rune(b)
	var out []rune
	for i := 0; i < max(len(ra), len(rb)); i++ {
		if i < len(ra) {
			out = append(out, ra[i])
		}
		if i < len(rb) {
			out = append(out, rb[i])
		}
	}
	return string(out)
}

func TestFindMerges(t *testing.T) {
	for _, c := range []struct {
		name   string
		ref    []string
		answer []string
		want   []string // the merged tokens
	}{
		// The cases, as the service answered them from real pages.
		{"IRS 1040 header",
			[]string{"Form 1040", "Department of the Treasury—Internal Revenue Service", "U.S. Individual Income Tax Return", "2019"},
			[]string{"Form 1040 DUep.aSrt.meIntnofdthievTiredasuurayl—IIntnerncaloRemveneueTSearvixceReturn 2019"},
			[]string{"DUep.aSrt.meIntnofdthievTiredasuurayl—IIntnerncaloRemveneueTSearvixceReturn"}},
		{"French invoice, a third line's colon caught in between",
			[]string{"Montant du", "prélèvement", ":", "29.99 €"},
			[]string{"Montant du", "prélèvemen2t9:.99 €"},
			[]string{"prélèvemen2t9:.99"}},
		{"timetable", []string{"11:50", "12:50"}, []string{"1112::5050"}, []string{"1112::5050"}},
		// Further real merges, as answered from pdfplumber's issue-192 example and pdfminer's
		// f1040nr (page 1) against pdftotext's lines.
		{"a code over a reference", []string{"AAA/Aaabaaab 7728", "-AA-2076"}, []string{"AAA/Aaabaaab 77-2A8A-2076"}, []string{"77-2A8A-2076"}},
		{"a form's small print", []string{"Canada or Mexico, or", "the Republic of Korea"}, []string{"tChaenaRdeapuobrlicMeoxficKoo,reoar"},
			[]string{"tChaenaRdeapuobrlicMeoxficKoo,reoar"}},
		{"synthetic, alternate characters", []string{"Invoice number", "Customer name"}, []string{interleave("Invoice", "Customer")}, []string{interleave("Invoice", "Customer")}},
		{"synthetic, runs of two", []string{"abcdefgh", "stuvwxyz"}, []string{"abstcduvefwxghyz"}, []string{"abstcduvefwxghyz"}},
		{"synthetic, runs of three", []string{"Department", "Signature"}, []string{"DepSigartnatmenture"}, []string{"DepSigartnatmenture"}},
		{"synthetic, split by a space: fragments of words", []string{"Department", "Signature"}, []string{"DepSigartnatment ure"}, nil},

		// Not merges.
		{"in order", []string{"Department of the Treasury"}, []string{"Department of the Treasury"}, nil},
		{"two lines run together", []string{"Total:", "12.00"}, []string{"Total:12.00"}, nil},
		{"a label run into its value", []string{"Name", "John Smith"}, []string{"NameJohn Smith"}, nil},
		{"an OCR misreading", []string{"Department of the Treasury"}, []string{"Department of the Treasnry"}, nil},
		{"words of two lines interleaved whole", []string{"Name Date", "John Today"}, []string{"Name John Date Today"}, nil},
		{"lines in another order", []string{"Invoice 2024-117", "Total 1,937.50"}, []string{"Total 1,937.50", "Invoice 2024-117"}, nil},
		{"a dropped character", []string{"Individual Income Tax Return"}, []string{"Indvidual Income Tax Return"}, nil},
		{"a missing space", []string{"Form 1040 U.S. Individual"}, []string{"Form1040 U.S.Individual"}, nil},
		// OCR's readings that two fragments of a long reference could be dealt into, as the
		// Polish invoice of pdfminer's issue 625 and pdfplumber's issue 848 page 2 gave them:
		// fragments, not whole words.
		{"a misread accent", []string{"Warszawa, ul. Marszałkowska 1", "Wartość netto", "stocznia"}, []string{"Wartosc netto"}, nil},
		{"a word the reference lacks", []string{"update the data", "these days", "sergeants regained"}, []string{"deaths"}, nil},
		{"a doubled word is a doubling", []string{"Married filing", "resident"}, []string{"MMaarrrriieedd filing"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			merges, _ := findMerges(c.ref, c.answer)
			for _, m := range merges {
				got = append(got, m.Token)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("merges %q, want %q", got, c.want)
			}
		})
	}
}

func TestFindDoubled(t *testing.T) {
	for _, c := range []struct {
		ref, answer []string
		want        []string
	}{
		{[]string{"Married filing jointly", "resident alien"}, []string{"MMaarrrriieedd filing jointly", "rreessiiddeenntt alien"}, []string{"Married", "resident"}},
		{[]string{"Married", "Married"}, []string{"MMaarrrriieedd"}, []string{"Married"}},
		{[]string{"bookkeeper"}, []string{"bookkeeper"}, nil},    // doubled letters of its own
		{[]string{"Married"}, []string{"MMaarrrriieeddxx"}, nil}, // not in the reference once
	} {
		merges, doubled := findMerges(c.ref, c.answer)
		var got []string
		for _, m := range doubled {
			got = append(got, m.A)
		}
		if !slices.Equal(got, c.want) || len(merges) > 0 {
			t.Errorf("%q against %q: doubled %q, merges %v; want %q and none", c.answer, c.ref, got, merges, c.want)
		}
	}
}

func TestSqueezeWords(t *testing.T) {
	r, at := squeezeWords("ab c\n dﬁ")
	if string(r) != "abcdfi" {
		t.Fatalf("squeezed %q", string(r))
	}
	want := []boundary{wordStart, wordEnd, wordStart | wordEnd, wordStart, 0, wordEnd}
	if !slices.Equal(at, want) {
		t.Errorf("boundaries %v, want %v", at, want)
	}
}

func TestFindMergesNames(t *testing.T) {
	m, _ := findMerges([]string{"11:50", "12:50"}, []string{"1112::5050"})
	if len(m) != 1 || m[0].A != "11:50" || m[0].B != "12:50" {
		t.Fatalf("merges %+v, want 11:50 × 12:50", m)
	}
}

func TestParseStat(t *testing.T) {
	// Fields 14 and 15 (utime, stime) in clock ticks; a command name with spaces and a ')'.
	stat := "4242 (ocr gate) x) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 50 0 0 20 0 9 0 100 0 0"
	if got := parseStat(stat); got != 3*time.Second {
		t.Errorf("parseStat = %v, want 3s", got)
	}
	if got := parseStat("garbage"); got >= 0 {
		t.Errorf("parseStat(garbage) = %v, want < 0", got)
	}
}

func TestParsePages(t *testing.T) {
	ps, err := parsePages("1-3,5")
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]bool{1: true, 3: true, 4: false, 5: true, 6: false} {
		if ps.has(n) != want {
			t.Errorf("has(%d) = %v", n, !want)
		}
	}
	for _, bad := range []string{"0", "3-1", "a", "1-"} {
		if _, err := parsePages(bad); err == nil {
			t.Errorf("parsePages(%q): no error", bad)
		}
	}
	if all, _ := parsePages(""); !all.has(99) {
		t.Error("an empty selection leaves a page out")
	}
}

func TestFlags(t *testing.T) {
	exact := Score{RefWords: 100, Words: 100, F1: 1, F1Fold: 1}
	wrong := Score{RefWords: 100, Words: 100, F1: 0.95, F1Fold: 0.95}
	poor := Score{RefWords: 100, Words: 100, F1: 0.5, F1Fold: 0.5}
	// row is a page answered in mode from source for reason, neither other source measured.
	row := func(mode, source, reason string, s Score) Row {
		return Row{Status: 200, Mode: mode, Source: source, Reason: reason, HasRef: true, Score: s, LayerF1: -1, OCRF1: -1}
	}
	with := func(r Row, layer, ocr float64) Row { r.LayerF1, r.OCRF1 = layer, ocr; return r }
	for _, c := range []struct {
		name string
		row  Row
		want string
	}{
		{"layer exact", row("auto", "text-layer", "text_layer_agrees", exact), ""},
		{"layer agreed but wrong", row("auto", "text-layer", "text_layer_agrees", wrong), "agreed-but-wrong"},
		{"always: OCR's errors are not the layer's", row("always", "ocr", "ocr_requested", wrong), ""},
		{"layer thrown away, OCR close to the reference", row("auto", "ocr", "text_layer_disagrees", wrong), "layer-thrown-away"},
		{"layer thrown away, the layer exact unchecked", with(row("auto", "ocr", "text_layer_disagrees", poor), 1, 0.5), "layer-thrown-away,worse-source"},
		{"layer rightly thrown away", with(row("auto", "ocr", "text_layer_disagrees", wrong), 0.3, 0.95), ""},
		{"the worse source chosen", with(row("auto", "text-layer", "text_layer_agrees", wrong), 0.95, 0.99), "agreed-but-wrong,worse-source"},
		{"scanned page", row("auto", "ocr", "no_text_layer", wrong), ""},
		{"empty", row("auto", "text-layer", "text_layer_agrees", Score{RefWords: 40}), "agreed-but-wrong,empty"},
		{"merged", row("auto", "mixed", "text_layer_agrees", Score{F1: 1, Merges: []Merge{{}}}), "merged"},
		{"error", Row{Status: 422, Code: "unreadable_document", HasRef: true}, "error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Join(c.row.Flags(), ","); got != c.want {
				t.Errorf("flags %q, want %q", got, c.want)
			}
		})
	}
}

func TestCrossJudge(t *testing.T) {
	page := []Row{
		{Mode: "auto", Status: 200, HasRef: true, Source: "ocr", Score: Score{F1: 0.8}},
		{Mode: "always", Status: 200, HasRef: true, Source: "ocr", Score: Score{F1: 0.85}},
		{Mode: "unchecked", Status: 200, HasRef: true, Source: "text-layer", Score: Score{F1: 1}},
	}
	crossJudge(page)
	for _, r := range page {
		if r.LayerF1 != 1 || r.OCRF1 != 0.85 {
			t.Errorf("%s: layer %.2f, OCR %.2f; want 1 and 0.85", r.Mode, r.LayerF1, r.OCRF1)
		}
	}
	alone := []Row{{Mode: "auto", Status: 200, HasRef: true, Source: "text-layer"}}
	crossJudge(alone)
	if alone[0].LayerF1 != -1 || alone[0].OCRF1 != -1 {
		t.Errorf("auto alone: layer %.2f, OCR %.2f; want -1 for both", alone[0].LayerF1, alone[0].OCRF1)
	}
}

func TestPagesTSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := []Row{
		{File: "a.pdf", Page: 1, Mode: "auto", Status: 200, Source: "text-layer", Reason: "text_layer_agrees", Confidence: 0.98, HasRef: true,
			Score: Score{RefWords: 10, Words: 9, F1: 0.9, F1Fold: 0.95, CharAcc: 0.97, Lost: []string{"x"}, Merges: []Merge{{Line: 3}, {Line: 3}, {Line: 5}}, Doubled: []Merge{{}}},
			CPU:   250 * time.Millisecond, Wall: time.Second, LayerF1: 0.9, OCRF1: -1},
		{File: "b.tif", Page: 2, Mode: "always", Status: 422, Code: "unreadable_document", CPU: -1, LayerF1: -1, OCRF1: -1},
	}
	if err := writeResults(dir, rows); err != nil {
		t.Fatal(err)
	}
	got, err := readRows(filepath.Join(dir, "pages.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows read back, want %d", len(got), len(rows))
	}
	for i := range rows {
		if a, b := strings.Join(rows[i].fields(), "|"), strings.Join(got[i].fields(), "|"); a != b {
			t.Errorf("row %d read back as\n%s\nwant\n%s", i, b, a)
		}
	}

	// A table of the command's first version: no layer_f1 nor ocr_f1.
	old := "file\tpage\tmode\tstatus\tcode\tsource\treason\tconfidence\tref_words\twords\tf1\tf1_ci\tchar_acc\tmerged_lines\tlost\textra\tcpu_s\twall_s\treference\tflags\n" +
		"a.pdf\t1\tauto\t200\t\ttext-layer\ttext_layer_agrees\t0.9820\t974\t921\t0.9450\t0.9450\t0.9660\t3\t9\t8\t0.350\t0.650\tyes\tagreed-but-wrong,merged\n"
	path := filepath.Join(dir, "old.tsv")
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = readRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := got[0]; r.Score.F1 != 0.945 || r.Score.MergedLines() != 3 || r.LayerF1 != -1 || r.CPU != 350*time.Millisecond ||
		strings.Join(r.Flags(), ",") != "agreed-but-wrong,merged" {
		t.Errorf("old table read as %+v", r)
	}
}

func TestFileName(t *testing.T) {
	for _, c := range []struct {
		path string
		n    int
		want string
	}{
		{"/x/short.pdf", 20, "short.pdf"},
		{"/x/jsvine__tests_pdfs_federal-register-2020-17221.pdf", 20, "jsvine…020-17221.pdf"},
	} {
		got := fileName(c.path, c.n)
		if got != c.want || len([]rune(got)) > c.n {
			t.Errorf("fileName(%q, %d) = %q, want %q", c.path, c.n, got, c.want)
		}
	}
}

func TestMainReport(t *testing.T) {
	// A page OCR'd because one probe disagreed, whose layer read unchecked was exact.
	table := "file\tpage\tmode\tstatus\tcode\tsource\treason\tconfidence\tref_words\twords\tf1\tf1_ci\tchar_acc\tmerged_lines\tlost\textra\tcpu_s\twall_s\treference\tflags\n" +
		"x/book.pdf\t3\tauto\t200\t\tocr\ttext_layer_disagrees\t0.9800\t300\t298\t0.8100\t0.8200\t0.9500\t0\t2\t2\t1.090\t2.000\tyes\t\n" +
		"x/book.pdf\t3\tunchecked\t200\t\ttext-layer\ttext_layer_unchecked\t1.0000\t300\t300\t1.0000\t1.0000\t1.0000\t0\t0\t0\t0.170\t0.200\tyes\t\n"
	path := filepath.Join(t.TempDir(), "pages.tsv")
	if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	if code := Main(t.Context(), []string{"-report", path}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"book.pdf", "layer-thrown-away 1", "mode unchecked: 1 pages"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if code := Main(t.Context(), nil, &out, &errs); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
}

func TestByPage(t *testing.T) {
	keys := []struct {
		f string
		p int
	}{{"a", 1}, {"a", 2}, {"b", 1}, {"a", 1}, {"b", 1}}
	got := byPage(len(keys), func(i int) (string, int) { return keys[i].f, keys[i].p })
	want := [][]int{{0, 3}, {1}, {2, 4}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("byPage = %v, want %v", got, want)
	}
}

func TestRescore(t *testing.T) {
	// A saved run: one page answered in auto from its layer with two lines merged, and its
	// reference beside the document (doc.pdf.txt, as pdftotext writes a document).
	dir, docs := t.TempDir(), t.TempDir()
	doc := filepath.Join(docs, "doc.pdf")
	for name, text := range map[string]string{
		doc:          "",
		doc + ".txt": "Timetable\n11:50\n12:50\n\fPage two\n",
		filepath.Join(dir, "pages.tsv"): "file\tpage\tmode\tstatus\tf1\tcpu_s\twall_s\n" +
			doc + "\t1\tauto\t200\t1.0000\t0.250\t0.300\n",
		answerPath(dir, doc, 1, "auto"): `{"image_info":{"pages":2},"pages":[{"page":1,"source":"text-layer",` +
			`"source_reason":"text_layer_agrees","confidence":0.98,"regions":[{"text":"Timetable"},{"text":"1112::5050"}],` +
			`"text_layer_check":{"probes":4,"agreed":3,"disagreed":1},"hidden_text":{"characters":625,"reasons":["no_visible_mark"]}}]}`,
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The same page under always, in a run of its own.
	always := t.TempDir()
	if err := os.MkdirAll(filepath.Join(always, "answers"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		filepath.Join(always, "pages.tsv"): "file\tpage\tmode\tstatus\tf1\n" + doc + "\t1\talways\t200\t1.0000\n",
		answerPath(always, doc, 1, "always"): `{"image_info":{"pages":2},"pages":[{"page":1,"source":"ocr",` +
			`"source_reason":"ocr_requested","regions":[{"text":"Timetable"},{"text":"11:50"},{"text":"12:50"}]}]}`,
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := rescoreRun(t.Context(), []string{dir, always}, newReferences(false))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	r := rows[0]
	if r.Source != "text-layer" || r.Confidence != 0.98 || r.CPU != 250*time.Millisecond || r.Score.MergedLines() != 1 || r.OCRF1 != 1 ||
		r.Probes != 4 || r.Agreed != 3 || r.Disagreed != 1 || r.Hidden != 625 ||
		strings.Join(r.Flags(), ",") != "agreed-but-wrong,merged" {
		t.Errorf("rescored as %+v, flags %v", r, r.Flags())
	}
	if r := rows[1]; r.Mode != "always" || r.Score.F1 != 1 || len(r.Flags()) > 0 {
		t.Errorf("always rescored as %+v, flags %v", r, r.Flags())
	}
}

func TestPrintChanges(t *testing.T) {
	before := []Row{{File: "/old/f1040.pdf", Page: 1, Mode: "auto", Status: 200, Source: "text-layer", HasRef: true, CPU: 260 * time.Millisecond,
		Score: Score{F1: 0.945, F1Fold: 0.945, Merges: []Merge{{Line: 0}, {Line: 4}, {Line: 9}}}, LayerF1: -1, OCRF1: -1}}
	after := []Row{{File: "/new/f1040.pdf", Page: 1, Mode: "auto", Status: 200, Source: "mixed", HasRef: true, CPU: 310 * time.Millisecond,
		Score: Score{F1: 0.995, F1Fold: 0.995}, LayerF1: -1, OCRF1: -1}}
	// A page that did not change but for its CPU time is counted, not listed.
	steady := Row{File: "/old/book.pdf", Page: 2, Mode: "auto", Status: 200, Source: "text-layer", HasRef: true, CPU: 100 * time.Millisecond,
		Score: Score{F1: 1, F1Fold: 1}, LayerF1: -1, OCRF1: -1}
	before = append(before, steady)
	steady.CPU = 120 * time.Millisecond
	after = append(after, steady)
	var out strings.Builder
	printChanges(&out, before, after)
	if strings.Contains(out.String(), "book.pdf") {
		t.Errorf("an unchanged page listed:\n%s", out.String())
	}
	for _, want := range []string{"text-layer → mixed", "0.945 → 0.995", "3 → 0", "0.26 → 0.31", "agreed-but-wrong,merged → ok",
		"1 pages unchanged", "total 0.36 → 0.43"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("changes lack %q:\n%s", want, out.String())
		}
	}
}
