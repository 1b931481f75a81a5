package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// references gives a page's reference text: the lines of its transcript beside the file
// (FILE.txt, pages separated by form feeds, as pdftotext writes a whole document), else, for a
// PDF, what pdftotext reads of the page.
type references struct {
	pdftotext string // the program; "" when it is not installed
	layout    bool   // pdftotext -layout: lines as the page places them, columns side by side
	sidecars  map[string][]string
}

func newReferences(layout bool) *references {
	path, _ := exec.LookPath("pdftotext")
	return &references{pdftotext: path, layout: layout, sidecars: map[string][]string{}}
}

// lines returns page n's reference lines, and whether the file has a reference at all.
func (r *references) lines(ctx context.Context, file string, n int) ([]string, bool, error) {
	pages, ok := r.sidecars[file]
	if !ok {
		data, err := os.ReadFile(file + ".txt")
		switch {
		case err == nil:
			pages = strings.Split(string(data), "\f")
		case !os.IsNotExist(err):
			return nil, false, err
		}
		r.sidecars[file] = pages
	}
	if pages != nil {
		if n > len(pages) {
			return nil, true, nil
		}
		return splitLines(pages[n-1]), true, nil
	}
	if !isPDF(file) {
		return nil, false, nil
	}
	if r.pdftotext == "" {
		return nil, false, fmt.Errorf("no reference for %s: pdftotext is not installed (poppler-utils), and there is no %s.txt", file, filepath.Base(file))
	}
	args := []string{"-q", "-enc", "UTF-8", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n)}
	if r.layout {
		args = append(args, "-layout")
	}
	out, err := exec.CommandContext(ctx, r.pdftotext, append(args, file, "-")...).Output()
	if err != nil {
		return nil, false, fmt.Errorf("pdftotext %s page %d: %w", file, n, err)
	}
	return splitLines(string(out)), true, nil
}

// splitLines are a page's lines, the form feed that ends it and empty lines dropped.
func splitLines(page string) []string {
	var out []string
	for _, l := range strings.Split(strings.Trim(page, "\f"), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " \r\t"))
		}
	}
	return out
}

func isPDF(file string) bool { return strings.EqualFold(filepath.Ext(file), ".pdf") }

// documents lists the PDFs and TIFFs named: files as given, directories walked, in path order.
func documents(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, a)
			continue
		}
		err = filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".pdf", ".tif", ".tiff":
				if !d.IsDir() {
					out = append(out, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// pageSet is a selection such as "1-3,5" (empty: every page).
type pageSet [][2]int

func parsePages(s string) (pageSet, error) {
	var ps pageSet
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 1 || b < a {
			return nil, fmt.Errorf("pages %q: want numbers and ranges such as 1-3,5", s)
		}
		ps = append(ps, [2]int{a, b})
	}
	return ps, nil
}

// has reports whether page n is selected.
func (ps pageSet) has(n int) bool {
	if ps == nil {
		return true
	}
	for _, r := range ps {
		if n >= r[0] && n <= r[1] {
			return true
		}
	}
	return false
}
