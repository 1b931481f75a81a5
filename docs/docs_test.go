package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pages are the documents the tests read: the README and every page here.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d pages in docs/", len(files))
	}
	return append([]string{filepath.Join("..", "README.md")}, files...)
}

// prose is a page without its fenced code blocks and inline code spans, where a "#" or "](" is
// not markdown.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, inlineCode.ReplaceAllString(line, "code"))
		}
	}
	return out
}

var (
	inlineCode = regexp.MustCompile("`[^`]*`")
	link       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// anchors are the fragment names GitHub gives a page's headings: lower case, letters, digits,
// spaces, hyphens and underscores kept, spaces turned into hyphens, repeats numbered -1, -2, ….
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := heading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestLinksResolve: every relative link in the README and the pages names a file or directory of
// the repository, and every anchor a heading of its page.
func TestLinksResolve(t *testing.T) {
	checked := 0
	for _, page := range pages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range prose(string(data)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue // not a file of the repository; no test reaches the network
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					if filepath.IsAbs(file) {
						t.Errorf("%s: link %q is absolute; write it relative to the page", page, target)
						continue
					}
					path = filepath.Join(filepath.Dir(page), file)
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s (line %d of its prose): link %q: no such file", page, n+1, target)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				text, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s: link %q: %v", page, target, err)
					continue
				}
				if !anchors(string(text))[anchor] {
					t.Errorf("%s: link %q: %s has no heading with the anchor #%s", page, target, path, anchor)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d links: the link pattern is broken", checked)
	}
}

// TestReadmeIsAFrontDoor: the README stays short; the reference lives in docs/.
func TestReadmeIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it at 250 or fewer and move the reference into docs/", n)
	}
}

// TestEveryErrorCodeIsInTheTour: each error code of the OpenAPI document (the reference) is in
// api.md's table, so a user reading the tour meets every code a client can get.
func TestEveryErrorCodeIsInTheTour(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "service", "openapi", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties struct {
					Code struct {
						Enum []string `json:"enum"`
					} `json:"code"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	api, err := os.ReadFile("api.md")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for name, s := range doc.Components.Schemas {
		if strings.HasPrefix(name, "Error") {
			codes = append(codes, s.Properties.Code.Enum...)
		}
	}
	sort.Strings(codes)
	if len(codes) < 40 {
		t.Fatalf("found only %d error codes in openapi.json", len(codes))
	}
	for _, code := range codes {
		if !strings.Contains(string(api), "`"+code+"`") {
			t.Errorf("error code %s is in openapi.json but not in docs/api.md", code)
		}
	}
}

// TestEveryMetricIsDescribed: each metric the service registers is in operating.md.
func TestEveryMetricIsDescribed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "service", "metrics", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	operating, err := os.ReadFile("operating.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`Name:\s*"(ocrgate_[a-z_]+)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			n++
			if !strings.Contains(string(operating), "`"+m[1]+"`") {
				t.Errorf("metric %s (%s) is not in docs/operating.md", m[1], f)
			}
		}
	}
	if n < 8 {
		t.Errorf("found only %d metrics in service/metrics", n)
	}
}

func TestAnchors(t *testing.T) {
	got := anchors("# ocrgate\n## `POST /ocr`\n### An image's answer\n```sh\n# CPU\n```\n## Kubernetes (Helm)\n## Notes\n## Notes\n## 网盘 line\n")
	for _, want := range []string{"ocrgate", "post-ocr", "an-images-answer", "kubernetes-helm", "notes", "notes-1", "网盘-line"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["cpu"] {
		t.Error("a comment in a code block became a heading")
	}
}
