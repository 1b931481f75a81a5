package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/document"
	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// readFields are the members of /ocr and /ocr-json bodies that say how to read what is sent:
// which pages of a document, whether its text layer may stand in for OCR, word boxes, and the
// pipeline's per-request options. They are kept raw until checked, so each can be refused with a
// message that names it (and nothing the caller sent).
type readFields struct {
	Pages   json.RawMessage `json:"pages"`
	OCR     json.RawMessage `json:"ocr"`
	Words   json.RawMessage `json:"words"`
	Options json.RawMessage `json:"options"`
	// Format is the answer's form (/ocr only; see answerFormat).
	Format json.RawMessage `json:"format"`
	Lang   json.RawMessage `json:"lang"`
	// flat: the members were made from query parameters or form fields (see flatParams), whose
	// options are named without "options.".
	flat bool
}

// ocrRequest is the body of /ocr: one image (or document), or several. Members it does not know
// are ignored, as they always were.
type ocrRequest struct {
	Image  *imageField `json:"image"`
	Images *imageList  `json:"images"`
	readFields
}

// readOptions is what readFields ask for, checked.
type readOptions struct {
	pages string
	mode  document.Mode
	words bool
	// pipeline is the request's own pipeline options; nil when it sent none.
	pipeline *ocr.Options
	// lang picks the recognizer ("": the default, ocr.DefaultLang).
	lang string
}

// The bounds of the per-request options: wide enough for any sensible use, narrow enough that no
// value makes the pipeline misbehave (the cost model still prices what they allow).
const (
	minDetLimitSide = 32
	maxDetLimitSide = 4000 // PaddleOCR's own max_side_limit
	maxUnclipRatio  = 5.0
)

// optionNames lists the per-request options, for the message that refuses an unknown one.
var optionNames = []string{"det_limit_side", "det_thresh", "det_box_thresh", "det_unclip_ratio", "min_score", "use_cls"}

// parseReadFields checks f and returns what it asks for; base is the pipeline's configured
// options, which the request's own override one by one.
func parseReadFields(f readFields, base ocr.Options) (readOptions, error) {
	var ro readOptions
	if present(f.Pages) {
		if err := json.Unmarshal(f.Pages, &ro.pages); err != nil {
			return ro, badRequest("invalid_pages", `"pages" must be a string of pages and ranges, such as "1-3,5"`)
		}
		// The syntax now (against one page, which allocates nothing: a page past it is not a
		// syntax error); whether the pages exist, once the document's page count is known.
		if _, err := docfile.ParsePages(ro.pages, 1, 0); err != nil && !pageMissing(err) {
			return ro, selectionError(err, syntaxOnly)
		}
	}
	if present(f.OCR) {
		var mode string
		_ = json.Unmarshal(f.OCR, &mode)
		switch mode {
		case "auto":
			ro.mode = document.Auto
		case "always":
			ro.mode = document.Always
		default:
			return ro, badRequest("invalid_ocr_mode", `"ocr" must be "auto" (a page's text layer, when it holds real text, stands in for OCR) or "always"`)
		}
	}
	if present(f.Words) {
		if err := json.Unmarshal(f.Words, &ro.words); err != nil {
			return ro, badRequest("invalid_words", `"words" must be true or false`)
		}
	}
	if present(f.Lang) {
		if err := json.Unmarshal(f.Lang, &ro.lang); err != nil || ro.lang == "" {
			return ro, badRequest("invalid_lang", `"lang" must be a language code such as "ja"`)
		}
	}
	if present(f.Options) {
		opt, err := parseOptions(f.Options, base, f.flat)
		if err != nil {
			return ro, err
		}
		ro.pipeline = &opt
	}
	return ro, nil
}

// present reports whether a member was sent with a value other than null.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// optionMembers reads the "options" object member by member, refusing the first name that is
// not an option before reading further: a body's worth of unknown members must not become a
// map of millions of entries.
func optionMembers(raw json.RawMessage) (map[string]json.RawMessage, error) {
	notObject := badRequest("invalid_option", `"options" must be an object such as {"min_score": 0.6}`)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, notObject
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return nil, notObject
		}
		if !slices.Contains(optionNames, name) {
			// The name sent is not repeated back: error bodies never carry the request's words.
			return nil, badRequest("invalid_option", `"options" holds an option it does not know; the options are %s`, strings.Join(optionNames, ", "))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notObject
		}
		members[name] = v
	}
	return members, nil
}

// parseOptions applies the "options" object to base. Every member must be a known option with a
// value in its range; the message names the option (as a member of "options", or by itself when
// flat: a query parameter or form field).
func parseOptions(raw json.RawMessage, base ocr.Options, flat bool) (ocr.Options, error) {
	members, err := optionMembers(raw)
	if err != nil {
		return base, err
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	slices.Sort(names)
	opt := base
	for _, name := range names {
		v := members[name]
		bad := func(want string) error {
			if flat {
				return badRequest("invalid_option", `%q must be %s`, name, want)
			}
			return badRequest("invalid_option", `"options.%s" must be %s`, name, want)
		}
		var f float64
		number := json.Unmarshal(v, &f) == nil
		switch name {
		case "det_limit_side":
			var n int
			if json.Unmarshal(v, &n) != nil || n < minDetLimitSide || n > maxDetLimitSide {
				return base, bad(fmt.Sprintf("a whole number of pixels from %d to %d", minDetLimitSide, maxDetLimitSide))
			}
			opt.DetLimitSide = n
		case "det_thresh":
			if !number || f <= 0 || f >= 1 {
				return base, bad("a number between 0 and 1 (exclusive)")
			}
			opt.DB.Threshold = float32(f)
		case "det_box_thresh":
			if !number || f < 0 || f > 1 {
				return base, bad("a number from 0 to 1")
			}
			opt.DB.BoxThreshold = float32(f)
		case "det_unclip_ratio":
			if !number || f <= 0 || f > maxUnclipRatio {
				return base, bad(fmt.Sprintf("a number above 0 and at most %g", maxUnclipRatio))
			}
			opt.DB.UnclipRatio = f
		case "min_score":
			if !number || f < 0 || f > 1 {
				return base, bad("a number from 0 to 1")
			}
			opt.MinScore = float32(f)
		case "use_cls":
			if json.Unmarshal(v, &opt.UseClassifier) != nil {
				return base, bad("true or false")
			}
		default:
			// The name sent is not repeated back: error bodies never carry the request's words.
			return base, badRequest("invalid_option", `"options" holds an option it does not know; the options are %s`, strings.Join(optionNames, ", "))
		}
	}
	if err := opt.Validate(); err != nil {
		return base, badRequest("invalid_option", `the options do not work together: %v`, err)
	}
	return opt, nil
}

// imageList is the "images" member: each entry decoded from base64 as it is parsed, a bad entry
// remembered for its own place in the answer instead of failing the request.
type imageList []imageItem

type imageItem struct {
	data []byte
	err  error
}

func (l *imageList) UnmarshalJSON(raw []byte) error {
	if len(raw) == 0 || raw[0] != '[' {
		return badRequest("invalid_images_field", `"images" must be an array of base64 strings`)
	}
	// Entries are counted before any is decoded: each costs a result and, when bad, an error,
	// so a body of millions of empty strings would otherwise cost many times its size.
	if n := arrayLen(raw); n > maxImagesParsed {
		return &apiError{status: fiber.StatusRequestEntityTooLarge, code: "too_many_images",
			msg: fmt.Sprintf(`"images" holds more than %d entries; send fewer per request`, maxImagesParsed)}
	}
	var items []imageItem
	if err := json.Unmarshal(raw, &items); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return ae
		}
		return badRequest("invalid_json", "request body is not valid JSON")
	}
	*l = items
	return nil
}

// maxImagesParsed bounds the entries of an "images" array that are decoded at all; the
// configured limit (Options.MaxImages, at most this) refuses beyond it with the same code.
const maxImagesParsed = 1000

// arrayLen counts the entries of the JSON array raw (valid or not) without decoding them: the
// commas at its top level, outside strings, plus one.
func arrayLen(raw []byte) int {
	n, depth, inString, escaped, empty := 0, 0, false, false, true
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			depth++
		case b == ']' || b == '}':
			depth--
		case b == ',' && depth == 1:
			n++
		}
		if depth >= 1 && b != '[' && b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			empty = false
		}
	}
	if empty {
		return 0
	}
	return n + 1
}

// UnmarshalJSON decodes one entry. An entry that is not a string makes the request malformed
// (400); one whose content is bad (base64, and later its format) is answered in its own place.
func (it *imageItem) UnmarshalJSON(raw []byte) error {
	if len(raw) == 0 || raw[0] != '"' {
		return badRequest("invalid_images_field", `"images" must be an array of base64 strings`)
	}
	var f imageField
	if err := f.UnmarshalJSON(raw); err != nil {
		it.err = err
		return nil
	}
	it.data = f.data
	return nil
}

// presence records whether a member was sent, without keeping (or copying) its value.
type presence bool

func (p *presence) UnmarshalJSON(raw []byte) error {
	*p = presence(present(raw))
	return nil
}

// What a page selection was checked against, for selectionError.
type selectionTarget int

const (
	syntaxOnly selectionTarget = iota // before the document is known: no page count to state
	anImage
	aDocument
)

// selectionError is the 400 for a page selection that is malformed or that the document (or a
// single image) cannot satisfy; it states the page count once it is known. The selection itself
// is not quoted back.
func selectionError(err error, target selectionTarget) *apiError {
	var se *docfile.SelectionError
	if !errors.As(err, &se) {
		return badRequest("invalid_pages", `invalid "pages": write pages and ranges such as "1-3,5" or "4-"`)
	}
	pages := se.Pages
	if target == syntaxOnly {
		pages = 0
	}
	reason := se.Reason
	switch {
	case pageMissing(err):
		reason = "it names a page the document does not have"
	case strings.Contains(reason, "not a page number"), strings.Contains(reason, "missing page number"), strings.Contains(reason, "empty item"):
		reason = `write pages and ranges such as "1-3,5" or "4-"`
	}
	msg := fmt.Sprintf(`invalid "pages": %s`, reason)
	switch {
	case target == anImage:
		msg += "; an image has 1 page"
	case pages == 1:
		msg += "; the document has 1 page"
	case pages > 0:
		msg += fmt.Sprintf("; the document has %d pages", pages)
	}
	return badRequest("invalid_pages", "%s", msg)
}

// pageMissing reports whether a selection error is only that a page number is past the end (or
// a range ends there), not that the selection is malformed.
func pageMissing(err error) bool {
	var se *docfile.SelectionError
	return errors.As(err, &se) && strings.Contains(se.Reason, "does not exist")
}
