package scoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ocrgate/ocrgate/service/geom"
)

// Sample is one image of an SROIE-layout dataset with its ground truth.
type Sample struct {
	ID        string // file stem shared by img/, box/ and key/
	ImagePath string // img/<ID>.jpg (or .jpeg, .png); "" when there is none
	// Lines are the ground-truth lines of box/<ID>.txt or box/<ID>.csv, in file order.
	Lines []Line
	// MalformedLines counts box lines skipped for having fewer than 8 numbers.
	MalformedLines int
	// Keys are the key fields of key/<ID>.json (company, date, address, total); nil when the
	// dataset has no key/ directory. JSON null values are left out, numbers and booleans are
	// rendered as Python's str() renders them.
	Keys map[string]string
}

// LoadDataset reads an SROIE-layout dataset: DATASET/box/<id>.txt or <id>.csv (.txt wins, as in
// the Python scorer), DATASET/key/<id>.json and the image DATASET/img/<id>.jpg. Box and key files
// are decoded like ocr_score.py does (UTF-8, UTF-8 with BOM, UTF-16 with BOM, cp1252, Latin-1).
// The samples are sorted by id. box/ must exist; key/ is optional, but when it exists its ids must
// be exactly the box ids (the Python scorer's ocr and keys modes would otherwise score different
// id sets). Key files must hold a JSON object of scalar values.
func LoadDataset(dir string) ([]Sample, error) {
	boxes, err := datasetFiles(filepath.Join(dir, "box"), ".txt", ".csv")
	if err != nil {
		return nil, err
	}
	keyDir := filepath.Join(dir, "key")
	var keys map[string]string
	if st, err := os.Stat(keyDir); err == nil && st.IsDir() {
		if keys, err = datasetFiles(keyDir, ".json"); err != nil {
			return nil, err
		}
		for id := range boxes {
			if _, ok := keys[id]; !ok {
				return nil, fmt.Errorf("scoring: %s has no key file %s.json", dir, id)
			}
		}
		for id := range keys {
			if _, ok := boxes[id]; !ok {
				return nil, fmt.Errorf("scoring: %s has no box file for key file %s.json", dir, id)
			}
		}
	}
	ids := make([]string, 0, len(boxes))
	for id := range boxes {
		ids = append(ids, id)
	}
	sort.Strings(ids) // byte order of UTF-8 = code point order, as Python's sorted()
	out := make([]Sample, 0, len(ids))
	for _, id := range ids {
		s := Sample{ID: id}
		for _, ext := range []string{".jpg", ".jpeg", ".png"} {
			p := filepath.Join(dir, "img", id+ext)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				s.ImagePath = p
				break
			}
		}
		data, err := os.ReadFile(boxes[id])
		if err != nil {
			return nil, fmt.Errorf("scoring: %w", err)
		}
		text, _ := decodeBytes(data)
		s.Lines, s.MalformedLines = parseBoxText(text)
		if keys != nil {
			if s.Keys, err = readKeyFile(keys[id]); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// datasetFiles maps id -> path for the files of dir named <id><ext>; an earlier ext wins a tie.
func datasetFiles(dir string, exts ...string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scoring: dataset directory: %w", err)
	}
	out := map[string]string{}
	for i := len(exts) - 1; i >= 0; i-- {
		for _, e := range entries {
			if name := e.Name(); !e.IsDir() && strings.HasSuffix(name, exts[i]) {
				out[strings.TrimSuffix(name, exts[i])] = filepath.Join(dir, name)
			}
		}
	}
	return out, nil
}

// parseBoxText is parse_box_text: one line per segment, "x1,y1,...,x4,y4,TEXT" split into at most
// 9 fields (the text keeps its commas); blank lines are ignored, and lines whose first 8 fields
// are not all numbers count as malformed.
func parseBoxText(text string) (lines []Line, malformed int) {
	for _, raw := range pySplitLines(text) {
		raw = strings.TrimLeft(raw, "\uFEFF")
		if pyStrip(raw) == "" {
			continue
		}
		parts := strings.SplitN(raw, ",", 9)
		if len(parts) < 8 {
			malformed++
			continue
		}
		var v [8]float64
		ok := true
		for i := range v {
			if v[i], ok = pyFloat(parts[i]); !ok {
				break
			}
		}
		if !ok {
			malformed++
			continue
		}
		var txt string
		if len(parts) > 8 {
			txt = strings.Trim(parts[8], "\r\n")
		}
		var q geom.Quad
		for i := range q {
			q[i] = geom.Point{X: v[2*i], Y: v[2*i+1]}
		}
		lines = append(lines, Line{Text: txt, Quad: q})
	}
	return lines, malformed
}

// readKeyFile reads a key JSON file into field -> value. A value that is not an object gives an
// empty map, as in Python.
func readKeyFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scoring: %w", err)
	}
	text, _ := decodeBytes(data)
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("scoring: %s: %w", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("scoring: %s: extra data after the JSON value", path)
	}
	out := map[string]string{}
	obj, _ := v.(map[string]any)
	for k, val := range obj {
		switch x := val.(type) {
		case nil:
		case string:
			out[k] = x
		case bool:
			out[k] = map[bool]string{true: "True", false: "False"}[x]
		case json.Number:
			out[k] = pyNumberString(string(x))
		default:
			return nil, fmt.Errorf("scoring: %s: field %q is not a string, number, boolean or null", path, k)
		}
	}
	return out, nil
}

// pyNumberString is str() of the number Python's json module makes of a JSON number literal: an
// int for a literal without fraction or exponent, else a float printed by repr.
func pyNumberString(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if strings.Trim(lit, "-0") == "" {
			return "0"
		}
		return lit
	}
	f, _ := strconv.ParseFloat(lit, 64) // valid JSON; out of range gives ±Inf
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
