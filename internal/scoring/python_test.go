package scoring

// Cross-checks against the real Python scorer, shared/tools/ocr_score.py, run with python3.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/ocrgate/ocrgate/service/geom"
)

// scorerPy is the shared Python scorer, relative to this package's directory.
const scorerPy = "../../../shared/tools/ocr_score.py"

// python3 returns the path of python3 or fails the test saying it is required.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 not found on PATH (%v): it is part of the machine image and these tests compare against %s", err, scorerPy)
	}
	return p
}

// runPython runs python3 with args and returns its stdout, failing the test on any error.
func runPython(t *testing.T, args ...string) []byte {
	t.Helper()
	py := python3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// runScorer runs ocr_score.py MODE DATASET PRED --json -v EXTRA... and decodes its summary.
func runScorer(t *testing.T, mode, dataset, pred string, extra ...string) map[string]any {
	t.Helper()
	if _, err := os.Stat(scorerPy); err != nil {
		abs, _ := filepath.Abs(scorerPy)
		t.Fatalf("Python scorer missing: %s (%v)", abs, err)
	}
	out := runPython(t, append([]string{scorerPy, mode, dataset, pred, "--json", "-v"}, extra...)...)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("decoding scorer output: %v\n%s", err, out)
	}
	return m
}

// asMap turns v into the generic map encoding/json would decode its JSON into.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// compareNumbers checks that every key of got is in want with a number within 1e-9.
func compareNumbers(t *testing.T, what string, got map[string]any, want any) {
	t.Helper()
	w, ok := want.(map[string]any)
	if !ok {
		t.Errorf("%s: Python gave %v, not an object", what, want)
		return
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sub, ok := got[k].(map[string]any); ok {
			compareNumbers(t, what+"."+k, sub, w[k])
			continue
		}
		g, gok := got[k].(float64)
		p, pok := w[k].(float64)
		switch {
		case !gok || !pok:
			t.Errorf("%s.%s: Go %v, Python %v", what, k, got[k], w[k])
		case math.Abs(g-p) > 1e-9:
			t.Errorf("%s.%s: Go %.17g, Python %.17g", what, k, g, p)
		case g != p:
			t.Logf("%s.%s: Go %.17g, Python %.17g (within 1e-9, not bit-identical)", what, k, g, p)
		}
	}
}

// region is one region of the service's JSON response shape.
type region struct {
	Text          string `json:"text"`
	BoundingShape struct {
		Points []map[string]float64 `json:"points"`
	} `json:"bounding_shape"`
}

// writePredictions writes PRED/<id>.json in the service's shape for every id of preds.
func writePredictions(t *testing.T, dir string, preds map[string][]Line) {
	t.Helper()
	for id, lines := range preds {
		regions := make([]region, len(lines))
		for i, l := range lines {
			regions[i].Text = l.Text
			for _, p := range l.Quad {
				regions[i].BoundingShape.Points = append(regions[i].BoundingShape.Points, map[string]float64{"x": p.X, "y": p.Y})
			}
		}
		b, err := json.Marshal(map[string]any{"regions": regions})
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, id+".json", b)
	}
}

// scoreLikePython scores samples against preds as run_ocr does (a missing prediction is an empty
// one) and returns the summary object of `ocr_score.py ocr --json -v` without its non-numbers.
func scoreLikePython(t *testing.T, samples []Sample, preds map[string][]Line, thr float64) map[string]any {
	var total Counts
	var perImage []any
	malformed, missing := 0, 0
	macroDet, macroWord := 0.0, 0.0
	for _, s := range samples {
		p, ok := preds[s.ID]
		if !ok {
			missing++
		}
		c := ScoreImage(s.Lines, p, thr)
		total.Add(c)
		malformed += s.MalformedLines
		sum := c.Summary()
		macroDet += sum.DetHmean
		macroWord += sum.WordF1
		row := asMap(t, sum)
		for k, v := range asMap(t, c) {
			switch k {
			case "gt_lines", "pred_lines", "det_match", "gt_words", "pred_words", "word_correct":
				row[k] = v
			}
		}
		perImage = append(perImage, row)
	}
	m := asMap(t, total.Summary())
	m["counts"] = asMap(t, total)
	m["images"] = float64(len(samples))
	m["missing_predictions"] = float64(missing)
	m["malformed_gt_lines"] = float64(malformed)
	m["macro_det_hmean"] = macroDet / float64(len(samples))
	m["macro_word_f1"] = macroWord / float64(len(samples))
	m["per_image"] = perImage
	return m
}

// compareOCR compares scoreLikePython's result with the Python scorer's JSON.
func compareOCR(t *testing.T, got, want map[string]any) {
	t.Helper()
	gotRows, _ := got["per_image"].([]any)
	wantRows, _ := want["per_image"].([]any)
	delete(got, "per_image")
	compareNumbers(t, "summary", got, want)
	if len(gotRows) != len(wantRows) {
		t.Fatalf("per_image: Go %d rows, Python %d", len(gotRows), len(wantRows))
	}
	for i := range gotRows {
		id := wantRows[i].(map[string]any)["id"]
		compareNumbers(t, fmt.Sprintf("per_image[%v]", id), gotRows[i].(map[string]any), wantRows[i])
	}
}

// perturb derives a prediction from ground-truth lines: texts altered (substitution, case,
// deletion, non-ASCII), boxes shifted a little or a lot, lines dropped, neighbours merged, a
// rotated box, and one extra region.
func perturb(gt []Line, seed int) []Line {
	var out []Line
	for i := 0; i < len(gt); i++ {
		l := gt[i]
		k := i + seed
		switch {
		case k%11 == 3: // dropped
			continue
		case k%7 == 0 && l.Text != "": // last character substituted
			r := []rune(l.Text)
			r[len(r)-1] = 'Z'
			l.Text = string(r)
		case k%13 == 4:
			l.Text = strings.ToLower(l.Text)
		case k%17 == 5 && i+1 < len(gt): // merged with the next line
			n := gt[i+1]
			x0, y0, _, _ := l.Quad.Bounds()
			_, _, x1, y1 := n.Quad.Bounds()
			l = Line{Text: l.Text + " " + n.Text, Quad: box(x0, y0, max(x1, l.Quad[2].X), max(y1, l.Quad[2].Y))}
			i++
		case k%19 == 6:
			l.Text = strings.ReplaceAll(l.Text, " ", "") // recogniser dropped the spaces
		case k%23 == 7:
			l.Text = "Straße\u00a0ﬁsh  " + l.Text // non-ASCII text and whitespace
		}
		switch {
		case k%5 == 1: // small fractional shift
			for j := range l.Quad {
				l.Quad[j].X += 3.25
				l.Quad[j].Y -= 1.5
			}
		case k%9 == 2: // large shift: half the height down
			_, y0, _, y1 := l.Quad.Bounds()
			for j := range l.Quad {
				l.Quad[j].Y += (y1 - y0) * 0.55
			}
		case k%29 == 8: // slightly rotated corners
			l.Quad[1].Y -= 4
			l.Quad[3].Y += 4
		}
		out = append(out, l)
	}
	return append(out, Line{Text: "EXTRA 1.00 THANK YOU", Quad: box(5, 5, 150.5, 30.25)})
}

// TestCrossCheckOCRSROIEDev writes predictions for a few sroie-dev images (others have no file,
// one has an empty region list) and checks that every number ocr_score.py reports equals ours.
func TestCrossCheckOCRSROIEDev(t *testing.T) {
	samples := loadSROIEDev(t)
	preds := map[string][]Line{}
	for i, s := range samples {
		switch s.ID {
		case "003", "139", "171", "433", "610", "624":
			preds[s.ID] = perturb(s.Lines, i)
		case "158":
			preds[s.ID] = []Line{}
		case "584": // perfect
			preds[s.ID] = s.Lines
		}
	}
	predDir := t.TempDir()
	writePredictions(t, predDir, preds)
	for _, thr := range []float64{0.5, 0.3, 0.7} {
		t.Run(fmt.Sprintf("iou=%v", thr), func(t *testing.T) {
			want := runScorer(t, "ocr", sroieDev, predDir, "--iou", strconv.FormatFloat(thr, 'g', -1, 64))
			got := scoreLikePython(t, samples, preds, thr)
			compareOCR(t, got, want)
			if t.Failed() {
				return
			}
			c := want["counts"].(map[string]any)
			t.Logf("gt_lines %v pred_lines %v det_match %v; det_hmean %.4f word_f1 %.4f char_acc_ci %.4f",
				c["gt_lines"], c["pred_lines"], c["det_match"], want["det_hmean"], want["word_f1"], want["char_acc_ci"])
		})
	}
}

// TestCrossCheckKeysSROIEDev checks the keys mode on sroie-dev with varied key predictions.
func TestCrossCheckKeysSROIEDev(t *testing.T) {
	samples := loadSROIEDev(t)
	predDir := t.TempDir()
	preds := map[string]map[string]string{}
	for i, s := range samples {
		p := map[string]string{}
		for f, v := range s.Keys {
			p[f] = v
		}
		switch i % 6 {
		case 0: // exact copy
		case 1: // case and spacing differ
			p["company"] = "  " + strings.ToLower(p["company"]) + "\t"
			p["address"] = strings.ReplaceAll(p["address"], " ", "   ")
		case 2: // wrong total, missing date
			p["total"] += "0"
			delete(p, "date")
		case 3: // no prediction file
			continue
		case 4: // empty values
			p["address"], p["company"] = "", " "
		case 5: // title case: case-sensitive F1 drops, folded does not
			p["company"] = strings.ToUpper(p["company"][:1]) + strings.ToLower(p["company"][1:])
		}
		preds[s.ID] = p
		obj := map[string]any{}
		for f, v := range p {
			obj[f] = v
		}
		if i%6 == 2 {
			obj["date"] = nil // null is an empty prediction in Python, a missing entry in Go
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, predDir, s.ID+".json", b)
	}
	want := runScorer(t, "keys", sroieDev, predDir)
	var total KeyCounts
	for _, s := range samples {
		total.Add(ScoreKeys(s.Keys, preds[s.ID]))
	}
	got := asMap(t, total.Summary())
	compareNumbers(t, "keys", got, want)
	if want["missing_predictions"].(float64) != float64(len(samples)-len(preds)) {
		t.Errorf("missing_predictions = %v", want["missing_predictions"])
	}
	t.Logf("task3_f1 %.4f (case-sensitive %.4f)", want["task3_f1"], want["task3_f1_case_sensitive"])
}

// TestCrossCheckEdgeDataset runs both scorers on a made-up dataset with every box-file encoding
// the Python scorer accepts, malformed and odd lines, NaN/inf coordinates, Unicode whitespace and
// case folding, IoU ties, and key files with non-string values.
func TestCrossCheckEdgeDataset(t *testing.T) {
	ds, predDir := t.TempDir(), t.TempDir()
	utf16le := func(s string) []byte {
		b := []byte{0xFF, 0xFE}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	utf16be := func(s string) []byte {
		b := []byte{0xFE, 0xFF}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u>>8), byte(u))
		}
		return b
	}
	boxes := map[string][]byte{
		"a.txt": []byte("\xef\xbb\xbf10,10,200,10,200,30,10,30,NO 12, JALAN 3/4,\r\n\r\n10,40,120,40,120,60,10,60,TOTAL\r\n" +
			"150,40,200,40,200,60,150,60,9.00\r\njunk line\r\n1,2,3,4,5,6,7\r\n 1_0 , 50 ,90,50,90,70,10,70,  STRASSE   ﬁsh \r\n"),
		"b.csv": []byte("10,10,100,10,100,30,10,30,CAF\xc9 \x805.00\n10,40,100,40,100,60,10,60,\x93QUOTED\x94\n"),
		"c.txt": utf16le("0,0,50,0,50,20,0,20,ΣΊΣΥΦΟΣ ς\n0,30,50,30,50,50,0,50,İSTANBUL\u2028 0,60,50,60,50,80,0,80,A\u3000B\n"),
		"d.txt": []byte("0,0,10,0,10,10,0,10,\x81\x8d \xff\n"),
		"e.txt": []byte("0,0,10,0,10,10,0,10,TXT WINS\n"),
		"e.csv": []byte("0,0,10,0,10,10,0,10,CSV LOSES\n"),
		"f.csv": utf16be("0,0,10,0,10,10,0,10,BIG ENDIAN\n"),
		"g.txt": []byte("nan,0,10,0,10,10,0,10,NAN FIRST\n0,0,10,0,10,10,nan,10,NAN LAST\n0,0,inf,0,inf,10,0,10,INF\n" +
			"0,0,10,0,10,10,0,10,SAME\n0,0,10,0,10,10,0,10,SAME\x1cSPLIT\v0,0,1e1,0,1E1,10,0,1_0,E\fX\n"),
		"h.txt": []byte(""),
		"i.txt": []byte("5,5,5,5,5,5,5,5,POINT\n0,0,10,0,10,10,0,10,Ꭰꭰ K µ\n"),
	}
	keys := map[string]string{
		"a": `{"company": "ABC SDN BHD", "date": "01/02/2018", "address": "NO 12, JALAN 3/4,", "total": "9.00"}`,
		"b": `{"company": "CAFÉ", "total": 9.5, "date": null}`,
		"c": `{"company": "Straße", "address": "  A   B  ", "total": 100}`,
		"d": `[1, 2]`,
		"e": `{"total": 1e16, "date": true, "company": ""}`,
		"f": `{}`,
		"g": `{"company": "X", "date": "1", "address": "2", "total": "3"}`,
		"h": `{"total": -0.0, "company": "-0"}`,
		"i": `{"company": "ꭰ", "total": "0.00001"}`,
	}
	for name, b := range boxes {
		writeFile(t, ds, "box/"+name, b)
	}
	for id, k := range keys {
		b := []byte(k)
		if id == "c" {
			b = utf16le(k)
		}
		writeFile(t, ds, "key/"+id+".json", b)
	}
	samples, err := LoadDataset(ds)
	if err != nil {
		t.Fatal(err)
	}
	q := func(x0, y0, x1, y1 float64) geom.Quad { return box(x0, y0, x1, y1) }
	preds := map[string][]Line{
		"a": {{"NO 12, JALAN 3/4,", q(10, 10, 200, 30)}, {"TOTAL", q(10, 40, 118, 60)}, {"TOTAL", q(10, 40, 120, 60)},
			{"9.08", q(175, 40, 225, 60)}, {"strasse FISH", q(10.5, 50, 90, 70.5)}},
		"b": {{"CAFÉ €5.00", q(10, 10, 100, 30)}, {"“QUOTED”", geom.Quad{}}},
		"c": {{"σίσυφοσ σ", q(0, 0, 50, 20)}, {"i̇stanbul", q(0, 30, 50, 50)}, {"A B", q(0, 60, 50, 80)}},
		"d": {{"\u0081\u008d ÿ", q(0, 0, 10, 10)}},
		"e": {{"TXT WINS", q(0, 0, 10, 10)}},
		"f": {},
		"g": {{"SAME", q(0, 0, 10, 10)}, {"SAME SPLIT", q(0, 0, 10, 10)}, {"X", q(0, 0, 10, 10)}, {"NAN", q(0, 0, 10, 10)}},
		"h": {{"NOTHING EXPECTED", q(0, 0, 10, 10)}},
		"i": {{"POINT", q(5, 5, 5, 5)}, {"ᏸꭰ k μ", q(0, 0, 10, 10)}},
	}
	writePredictions(t, predDir, preds)
	for _, thr := range []float64{0.5, 0.3} {
		t.Run(fmt.Sprintf("ocr iou=%v", thr), func(t *testing.T) {
			want := runScorer(t, "ocr", ds, predDir, "--iou", strconv.FormatFloat(thr, 'g', -1, 64))
			compareOCR(t, scoreLikePython(t, samples, preds, thr), want)
			if enc := fmt.Sprint(want["gt_encodings"]); !strings.Contains(enc, "utf-16:2") || !strings.Contains(enc, "cp1252:1") ||
				!strings.Contains(enc, "latin-1:1") || !strings.Contains(enc, "utf-8-sig:1") {
				t.Errorf("the dataset does not exercise every encoding: %s", enc)
			}
		})
	}
	t.Run("keys", func(t *testing.T) {
		keyPreds := map[string]map[string]string{
			"a": {"company": " abc  sdn bhd", "date": "01/02/2018", "address": "", "total": "9.0"},
			"b": {"company": "café", "total": "9.5"},
			"c": {"company": "STRASSE", "address": "a b", "total": "100"},
			"e": {"total": "1E+16", "date": "true"},
			"g": {"company": "X", "date": "1", "address": "2", "total": "3"},
			"h": {"total": "-0.0", "company": "-0"},
			"i": {"company": "Ꭰ", "total": "1e-05"},
		}
		for id, p := range keyPreds {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, predDir, "keys/"+id+".json", b)
		}
		want := runScorer(t, "keys", ds, filepath.Join(predDir, "keys"))
		var total KeyCounts
		for _, s := range samples {
			total.Add(ScoreKeys(s.Keys, keyPreds[s.ID]))
		}
		compareNumbers(t, "keys", asMap(t, total.Summary()), want)
	})
}

// TestCasefoldMatchesPython compares casefold with Python's str.casefold on every code point.
func TestCasefoldMatchesPython(t *testing.T) {
	out := runPython(t, "-c", `import json, sys
d = {}
for c in range(0x110000):
    if 0xD800 <= c <= 0xDFFF:
        continue
    f = chr(c).casefold()
    if f != chr(c):
        d[c] = f
json.dump(d, sys.stdout)`)
	var want map[string]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	folds := make(map[rune]string, len(want))
	for k, v := range want {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatal(err)
		}
		folds[rune(n)] = v
	}
	bad := 0
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		exp, ok := folds[r]
		if !ok {
			exp = string(r)
		}
		if got := casefold(string(r)); got != exp {
			if bad++; bad <= 20 {
				t.Errorf("casefold(U+%04X) = %+q, Python %+q", r, got, exp)
			}
		}
	}
	if bad > 20 {
		t.Errorf("... %d code points differ in all", bad)
	}
}

// TestPythonStringClassesMatch compares isPySpace and isPyLineBreak with Python's str.isspace and
// str.splitlines on every code point.
func TestPythonStringClassesMatch(t *testing.T) {
	out := runPython(t, "-c", `import json, sys
sp = [c for c in range(0x110000) if chr(c).isspace()]
lb = [c for c in range(0x110000) if 0xD800 > c or c > 0xDFFF if len(("a" + chr(c) + "b").splitlines()) > 1]
json.dump([sp, lb], sys.stdout)`)
	var want [2][]rune
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, f := range []func(rune) bool{isPySpace, isPyLineBreak} {
		var got []rune
		for r := rune(0); r <= 0x10FFFF; r++ {
			if f(r) {
				got = append(got, r)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Errorf("class %d: Go %U, Python %U", i, got, want[i])
		}
	}
}

// TestPyFloatMatchesPython compares pyFloat with Python's float() on tricky coordinate strings.
func TestPyFloatMatchesPython(t *testing.T) {
	inputs := []string{"12", " 12 ", "+1.5", "-3", ".5", "5.", "1.e3", "1_000", "1e1_0", "1E-2", "inf",
		"-Infinity", "+iNf", "nan", "-NaN", "1e400", "-1e400", "1e-400", "١٢", "１２.５", "𝟙𝟚", "", ".", "1__0",
		"_1", "1_", "1_.5", "1._5", "1e", "e1", "--1", "0x10", "1 2", "infinit", "1,5", "0b1", "1e+", "+",
		"\u00a01\u2003", "0.1", "123456789012345678901234567890", "4.9e-324", "2.5e-324", "1.7976931348623157e308",
		"1.7976931348623159e308", "0000.5000", "1_2.3_4e5_6", "١_٢", "İnf", "ınf", "１_２"}
	b, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	out := runPython(t, "-c", `import json, sys
res = []
for s in json.loads(sys.argv[1]):
    try:
        res.append(repr(float(s.strip())))
    except ValueError:
        res.append(None)
json.dump(res, sys.stdout)`, string(b))
	var want []*string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			got, ok := pyFloat(in)
			if want[i] == nil {
				if ok {
					t.Errorf("pyFloat = %v, Python raises ValueError", got)
				}
				return
			}
			w, err := strconv.ParseFloat(*want[i], 64)
			if err != nil && !strings.Contains(*want[i], "inf") {
				t.Fatalf("parsing Python's %q: %v", *want[i], err)
			}
			if !ok || (got != w && !(math.IsNaN(got) && math.IsNaN(w))) {
				t.Errorf("pyFloat = %v, %v; Python %s", got, ok, *want[i])
			}
		})
	}
}

// TestDecodeBytesMatchesPython compares decodeBytes with decode_bytes of ocr_score.py.
func TestDecodeBytesMatchesPython(t *testing.T) {
	inputs := [][]byte{[]byte("ABC"), []byte("\xef\xbb\xbfABC"), []byte("CAF\xc9"), []byte("\xff\xfex\x00"),
		[]byte("\xfe\xff\x00x"), []byte("\xff\xfeA"), []byte("\xff\xfe\x00\xd8"), []byte("\xff\xfe\x00\xdc\x00\xd8"),
		[]byte("\xff\xfe\x3d\xd8\x00\xde"), []byte("\x81\x8d"), []byte("\xef\xbb\xbf\xef\xbb\xbfX"),
		[]byte("\xed\xa0\x80"), []byte("\xc0\xaf"), []byte("\xf4\x90\x80\x80"), []byte("\xfe\xff"), {}}
	for c := 0x80; c <= 0xFF; c++ {
		inputs = append(inputs, []byte{byte(c), 'A'})
	}
	hexes := make([]string, len(inputs))
	for i, in := range inputs {
		hexes[i] = fmt.Sprintf("%x", in)
	}
	b, _ := json.Marshal(hexes)
	out := runPython(t, "-c", `import json, sys
sys.path.insert(0, sys.argv[2])
from ocr_score import decode_bytes
json.dump([decode_bytes(bytes.fromhex(h)) for h in json.loads(sys.argv[1])], sys.stdout)`,
		string(b), filepath.Dir(scorerPy))
	var want [][2]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		text, enc := decodeBytes(in)
		if text != want[i][0] || enc != want[i][1] {
			t.Errorf("decodeBytes(%q) = (%+q, %s), Python (%+q, %s)", in, text, enc, want[i][0], want[i][1])
		}
	}
}
