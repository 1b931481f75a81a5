package scoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sroieDev is the shared 20-receipt SROIE dev set, relative to this package's directory.
const sroieDev = "../../../shared/datasets/sroie-dev"

// loadSROIEDev loads sroieDev or fails the test with a message saying what is missing.
func loadSROIEDev(t *testing.T) []Sample {
	t.Helper()
	if st, err := os.Stat(filepath.Join(sroieDev, "box")); err != nil || !st.IsDir() {
		abs, _ := filepath.Abs(sroieDev)
		t.Fatalf("shared dataset missing: %s/box not found (%v); the shared/ checkout next to the repository is required", abs, err)
	}
	samples, err := LoadDataset(sroieDev)
	if err != nil {
		t.Fatalf("LoadDataset(%s): %v", sroieDev, err)
	}
	return samples
}

func TestLoadDatasetSROIEDev(t *testing.T) {
	samples := loadSROIEDev(t)
	// Box line counts from the dataset README.
	wantLines := map[string]int{
		"003": 60, "034": 107, "124": 58, "139": 49, "158": 31, "171": 51, "245": 52, "276": 55,
		"282": 76, "293": 44, "311": 92, "433": 63, "474": 53, "525": 105, "566": 52, "583": 22,
		"584": 24, "596": 54, "610": 53, "624": 45,
	}
	if len(samples) != 20 {
		t.Fatalf("got %d samples, want 20", len(samples))
	}
	byID := map[string]Sample{}
	total := 0
	for i, s := range samples {
		if i > 0 && samples[i-1].ID >= s.ID {
			t.Errorf("samples not sorted: %s before %s", samples[i-1].ID, s.ID)
		}
		byID[s.ID] = s
		total += len(s.Lines)
	}
	if total != 1146 {
		t.Errorf("got %d lines in total, want 1146", total)
	}
	for id, n := range wantLines {
		t.Run(id, func(t *testing.T) {
			s, ok := byID[id]
			if !ok {
				t.Fatalf("sample %s missing", id)
			}
			if len(s.Lines) != n || s.MalformedLines != 0 {
				t.Errorf("%d lines, %d malformed; want %d, 0", len(s.Lines), s.MalformedLines, n)
			}
			if s.ImagePath != filepath.Join(sroieDev, "img", id+".jpg") {
				t.Errorf("ImagePath = %q", s.ImagePath)
			}
			for _, f := range KeyFields {
				if s.Keys[f] == "" {
					t.Errorf("key %s empty", f)
				}
			}
			for _, l := range s.Lines {
				if strings.ContainsAny(l.Text, "\r\n") || l.Text == "" {
					t.Errorf("line text %q has a line break or is empty", l.Text)
				}
				if l.Quad[0].X != l.Quad[3].X || l.Quad[1].X != l.Quad[2].X || l.Quad[0].Y != l.Quad[1].Y || l.Quad[2].Y != l.Quad[3].Y {
					t.Errorf("box of %q is not an axis-aligned rectangle: %v", l.Text, l.Quad)
				}
			}
		})
	}

	t.Run("139 keeps commas in text", func(t *testing.T) {
		found := false
		for _, l := range byID["139"].Lines {
			if l.Text == "NO.2, JALAN TEMENGGUNG 19/9," {
				found = true
				if l.Quad != box(137, 357, 641, 399) {
					t.Errorf("quad = %v", l.Quad)
				}
			}
		}
		if !found {
			t.Errorf("sample 139 has no line %q", "NO.2, JALAN TEMENGGUNG 19/9,")
		}
	})
	t.Run("003 first line and keys", func(t *testing.T) {
		s := byID["003"]
		if l := s.Lines[0]; l.Text != "TAN WOON YANN" || l.Quad != box(96, 41, 353, 79) {
			t.Errorf("first line = %+v", l)
		}
		want := map[string]string{"company": "YONGFATT ENTERPRISE", "date": "25/12/2018",
			"address": "NO 122.124. JALAN DEDAP 13 81100 JOHOR BAHRU", "total": "80.90"}
		for k, v := range want {
			if s.Keys[k] != v {
				t.Errorf("Keys[%s] = %q, want %q", k, s.Keys[k], v)
			}
		}
	})
	t.Run("CRLF key file 583", func(t *testing.T) {
		if got := byID["583"].Keys["company"]; got != "DION REALTIES SDN BHD" {
			t.Errorf("company = %q", got)
		}
	})
}

// writeFile writes data to root/rel, creating directories.
func writeFile(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadDatasetLayout(t *testing.T) {
	t.Run("txt wins over csv, keys optional, image optional", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "box/a.csv", []byte("0,0,1,0,1,1,0,1,CSV\n"))
		writeFile(t, dir, "box/a.txt", []byte("0,0,1,0,1,1,0,1,TXT\n"))
		writeFile(t, dir, "box/b.csv", []byte("0,0,1,0,1,1,0,1,B\nbad\n"))
		writeFile(t, dir, "box/notes.md", []byte("ignored"))
		writeFile(t, dir, "img/a.jpg", []byte("not read"))
		s, err := LoadDataset(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 2 || s[0].ID != "a" || s[0].Lines[0].Text != "TXT" || s[1].MalformedLines != 1 {
			t.Fatalf("samples = %+v", s)
		}
		if s[0].ImagePath == "" || s[1].ImagePath != "" || s[0].Keys != nil {
			t.Errorf("samples = %+v", s)
		}
	})
	t.Run("key values as Python str()", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "box/a.txt", nil)
		writeFile(t, dir, "key/a.json", []byte("\xef\xbb\xbf{\"company\": null, \"date\": true, \"address\": 12, \"total\": 9.50}\r\n"))
		s, err := LoadDataset(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"date": "True", "address": "12", "total": "9.5"}
		if len(s) != 1 || len(s[0].Keys) != 3 || s[0].Keys["date"] != want["date"] ||
			s[0].Keys["address"] != want["address"] || s[0].Keys["total"] != want["total"] {
			t.Errorf("Keys = %q, want %q", s[0].Keys, want)
		}
	})
	errorCases := []struct {
		name  string
		files map[string]string
	}{
		{"no box dir", map[string]string{"key/a.json": "{}"}},
		{"key without box", map[string]string{"box/a.txt": "", "key/a.json": "{}", "key/b.json": "{}"}},
		{"box without key", map[string]string{"box/a.txt": "", "box/b.txt": "", "key/a.json": "{}"}},
		{"bad JSON", map[string]string{"box/a.txt": "", "key/a.json": "{"}},
		{"trailing JSON", map[string]string{"box/a.txt": "", "key/a.json": "{} {}"}},
		{"nested value", map[string]string{"box/a.txt": "", "key/a.json": `{"total": [1]}`}},
	}
	for _, tt := range errorCases {
		t.Run("error: "+tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for rel, data := range tt.files {
				writeFile(t, dir, rel, []byte(data))
			}
			if s, err := LoadDataset(dir); err == nil {
				t.Errorf("LoadDataset succeeded: %+v", s)
			}
		})
	}
}

// TestSelftestCases ports the hand-made cases of ocr_score.py --selftest: a one-image dataset
// whose box file is UTF-8 with BOM and CRLF and has commas in a transcript.
func TestSelftestCases(t *testing.T) {
	dir := t.TempDir()
	rows := []string{"10,10,200,10,200,30,10,30,NO 12, JALAN 3/4,",
		"10,40,120,40,120,60,10,60,TOTAL",
		"150,40,200,40,200,60,150,60,9.00"}
	writeFile(t, dir, "box/r1.txt", []byte("\xef\xbb\xbf"+strings.Join(rows, "\r\n")))
	writeFile(t, dir, "key/r1.json", []byte(`{"company": "ABC SDN BHD", "date": "01/02/2018", "address": "NO 12, JALAN 3/4,", "total": "9.00"}`))
	load := func() Sample {
		s, err := LoadDataset(dir)
		if err != nil || len(s) != 1 {
			t.Fatalf("LoadDataset = %+v, %v", s, err)
		}
		return s[0]
	}
	sample := load()
	if sample.MalformedLines != 0 || len(sample.Lines) != 3 || sample.Lines[0].Text != "NO 12, JALAN 3/4," {
		t.Fatalf("BOM+CRLF GT with comma in text: %+v", sample)
	}
	perfect := []Line{
		{"NO 12, JALAN 3/4,", box(10, 10, 200, 30)},
		{"TOTAL", box(10, 40, 120, 60)},
		{"9.00", box(150, 40, 200, 60)},
	}
	edit := func(i int, text string, q *[4]float64) []Line {
		p := append([]Line(nil), perfect...)
		if text != "" {
			p[i].Text = text
		}
		if q != nil {
			p[i].Quad = box(q[0], q[1], q[2], q[3])
		}
		return p
	}
	near := func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
	tests := []struct {
		name string
		pred []Line
		thr  float64
		ok   func(c Counts, s Summary) bool
	}{
		{"perfect: det/word/char all 1.0", perfect, 0.5, func(c Counts, s Summary) bool {
			return s.DetHmean == 1 && s.WordF1 == 1 && s.CharAcc == 1 && s.WordCIF1 == 1 && s.LineExact == 1 && c.GTWords == 6
		}},
		{"empty prediction: recall 0", nil, 0.5, func(c Counts, s Summary) bool {
			return s.DetRecall == 0 && s.WordRecall == 0 && s.CharAccAll == 0
		}},
		{"one-char error: char_acc = 1 - 1/26, word P = R = 5/6", edit(2, "9.08", nil), 0.5, func(c Counts, s Summary) bool {
			return near(s.CharAcc, 1-1.0/26) && near(s.WordPrecision, 5.0/6) && near(s.WordRecall, 5.0/6) && s.DetHmean == 1
		}},
		{"case: cs word recall 4/6, ci recall 1; char_acc_ci 1", edit(0, "no 12, jalan 3/4,", nil), 0.5, func(c Counts, s Summary) bool {
			return near(s.WordRecall, 4.0/6) && s.WordCIRecall == 1 && s.CharAcc < 1 && s.CharAccCI == 1
		}},
		{"IoU below threshold: unmatched but words still count", edit(2, "", &[4]float64{175, 40, 225, 60}), 0.5, func(c Counts, s Summary) bool {
			return c.DetMatch == 2 && s.WordF1 == 1
		}},
		{"--iou 0.3 matches it", edit(2, "", &[4]float64{175, 40, 225, 60}), 0.3, func(c Counts, s Summary) bool {
			return c.DetMatch == 3
		}},
		{"duplicate box: one-to-one, precision 3/4", append(edit(0, "", nil), Line{"TOTAL", box(10, 40, 118, 60)}), 0.5, func(c Counts, s Summary) bool {
			return c.DetMatch == 3 && near(s.DetPrecision, 0.75) && near(s.WordPrecision, 6.0/7)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ScoreImage(sample.Lines, tt.pred, tt.thr)
			if s := c.Summary(); !tt.ok(c, s) {
				t.Errorf("counts %+v\nsummary %+v", c, s)
			}
		})
	}
	t.Run("keys: normalised match, empty pred, wrong total", func(t *testing.T) {
		s := ScoreKeys(sample.Keys, map[string]string{"company": " abc  sdn bhd", "date": "01/02/2018", "address": "", "total": "9.0"}).Summary()
		f := s.Fields
		if f["company"].Correct != 1 || f["date"].Correct != 1 || f["address"].Correct != 0 || f["total"].Correct != 0 ||
			!near(s.OverallAccuracy, 0.5) || !near(s.Task3Precision, 2.0/3) || !near(s.Task3Recall, 0.5) ||
			!(s.Task3F1CaseSensitive < s.Task3F1) {
			t.Errorf("summary = %+v", s)
		}
	})
	t.Run("keys: perfect = 1.0", func(t *testing.T) {
		if s := ScoreKeys(sample.Keys, sample.Keys).Summary(); s.Task3F1 != 1 || s.ImagesAllFieldsCorrect != 1 {
			t.Errorf("summary = %+v", s)
		}
	})
	t.Run("box/<id>.csv accepted", func(t *testing.T) {
		if err := os.Rename(filepath.Join(dir, "box/r1.txt"), filepath.Join(dir, "box/r1.csv")); err != nil {
			t.Fatal(err)
		}
		s := load()
		if c := ScoreImage(s.Lines, perfect, DefaultIoU); c.Images != 1 || c.Summary().DetHmean != 1 {
			t.Errorf("counts = %+v", c)
		}
	})
}
