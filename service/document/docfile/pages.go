package docfile

import (
	"fmt"
	"strconv"
	"strings"
)

// SelectionError is a page selection the document cannot satisfy. It matches ErrBadSelection and
// carries the document's page count, which the caller's answer should state.
type SelectionError struct {
	Spec   string // the selection, or the offending part of it
	Pages  int    // pages in the document
	Reason string
}

func (e *SelectionError) Error() string {
	return fmt.Sprintf("invalid page selection %q: %s; the document has %d page%s", e.Spec, e.Reason, e.Pages, plural(e.Pages))
}

// Is makes errors.Is(err, ErrBadSelection) hold.
func (e *SelectionError) Is(target error) bool { return target == ErrBadSelection }

// PageCountError is a document or a selection with more pages than allowed. It matches
// ErrTooManyPages.
type PageCountError struct {
	Pages    int  // pages in the document, or selected
	Limit    int  // the most allowed
	Selected bool // the count is of a selection, not of the whole document
	AtLeast  bool // Pages is a lower bound: counting stopped at the limit
	// Request: the count is of every document a request sent together (an "images" array).
	Request bool
	// OCR: the count is of pages that need OCR (pages read from their text layer not counted).
	OCR bool
	// Requested: those pages are OCR'd because the request asked for OCR of every page
	// (ocr=always), not for want of a usable text layer.
	Requested bool
}

func (e *PageCountError) Error() string {
	what := "the document has"
	switch {
	case e.Request && e.OCR && e.Requested:
		return fmt.Sprintf("the request asks for OCR of %d pages (ocr=always); the limit is %d per request", e.Pages, e.Limit)
	case e.Request && e.OCR:
		return fmt.Sprintf("the request's documents hold %d pages that need OCR (they have no usable text layer); the limit is %d per request", e.Pages, e.Limit)
	case e.Request:
		return fmt.Sprintf("the request's documents select %d pages together; the limit is %d per request", e.Pages, e.Limit)
	case e.Selected:
		what = "the selection holds"
	}
	at := ""
	if e.AtLeast {
		at = "more than "
		return fmt.Sprintf("%s %s%d pages; the limit is %d", what, at, e.Limit, e.Limit)
	}
	return fmt.Sprintf("%s %d pages; the limit is %d", what, e.Pages, e.Limit)
}

// Is makes errors.Is(err, ErrTooManyPages) hold.
func (e *PageCountError) Is(target error) bool { return target == ErrTooManyPages }

// maxSpecLen bounds the selection string; real selections are a few characters.
const maxSpecLen = 1024

// ParsePages parses a page selection against a document of count pages and returns the selected
// page numbers (1-based), ascending, each once. The selection is a comma-separated list of pages
// ("5") and inclusive ranges ("1-3", or "4-" for page 4 to the end); spaces are ignored. An empty
// selection selects every page. Numbers outside 1..count, reversed ranges and anything else
// malformed give a *SelectionError; more than max pages (max > 0) a *PageCountError.
//
// Ranges are checked before they are expanded, so "1-999999999" costs nothing.
func ParsePages(spec string, count, max int) ([]int, error) {
	bad := func(part, reason string) error {
		return &SelectionError{Spec: part, Pages: count, Reason: reason}
	}
	if len(spec) > maxSpecLen {
		return nil, bad(spec[:32]+"…", fmt.Sprintf("longer than %d characters", maxSpecLen))
	}
	spec = strings.ReplaceAll(spec, " ", "")
	if spec == "" {
		if max > 0 && count > max {
			return nil, &PageCountError{Pages: count, Limit: max}
		}
		all := make([]int, count)
		for i := range all {
			all[i] = i + 1
		}
		return all, nil
	}
	selected := make([]bool, count+1)
	n := 0
	for _, part := range strings.Split(spec, ",") {
		if part == "" {
			return nil, bad(spec, "empty item")
		}
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := pageNumber(lo)
		if err != nil {
			return nil, bad(part, err.Error())
		}
		last := first
		if isRange {
			if hi == "" {
				last = count
			} else if last, err = pageNumber(hi); err != nil {
				return nil, bad(part, err.Error())
			}
		}
		switch {
		case first > count:
			return nil, bad(part, fmt.Sprintf("page %d does not exist", first))
		case last > count:
			return nil, bad(part, fmt.Sprintf("page %d does not exist", last))
		case last < first:
			return nil, bad(part, "the range runs backwards")
		}
		for p := first; p <= last; p++ {
			if !selected[p] {
				selected[p] = true
				n++
			}
		}
	}
	if max > 0 && n > max {
		return nil, &PageCountError{Pages: n, Limit: max, Selected: true}
	}
	out := make([]int, 0, n)
	for p, ok := range selected {
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// pageNumber parses one page number: decimal digits, at least 1.
func pageNumber(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing page number")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q is not a page number", s)
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v > 1<<30 {
		return 0, fmt.Errorf("%q is not a page number", s)
	}
	if v < 1 {
		return 0, fmt.Errorf("pages are numbered from 1")
	}
	return v, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
