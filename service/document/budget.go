package document

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// ErrAnswerTooLarge means a request's answer would be larger than its Budget allows. The
// wrapping *AnswerError says how large.
var ErrAnswerTooLarge = errors.New("the answer is too large")

// AnswerError is a request whose answer grew past Budget's AnswerBytes. It matches
// ErrAnswerTooLarge.
type AnswerError struct {
	Limit int64 // bytes
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("the answer would be larger than %d MiB, the limit per request; select fewer pages with \"pages\"", e.Limit>>20)
}

// Is makes errors.Is(err, ErrAnswerTooLarge) hold.
func (e *AnswerError) Is(target error) bool { return target == ErrAnswerTooLarge }

// BudgetLimits bound what one request may read across every document it sends (an "images"
// array's entries share them). Zero fields are no bound.
type BudgetLimits struct {
	// Pages bounds the pages the request's documents may read together (a *PageCountError
	// beyond), text-layer pages included, as each document's selection does for itself.
	Pages int
	// OCRPages bounds the pages among them that need OCR, known once each document has been
	// surveyed.
	OCRPages int
	// AnswerBytes bounds the answer: the regions, words and texts of every page read, as the
	// service writes them (JSON), estimated as each page is read.
	AnswerBytes int64
}

// Budget is what one request may read, shared by every document it sends, and the memory its
// answer holds until the answer is written. A document's pages produce regions and text that
// outlive the jobs that made them (a text-layer page costs the survey little to read but may hold
// 100 000 characters); the Budget prices them as they are made, refuses a request whose answer
// grows past AnswerBytes, and charges what it has let through to the service's memory
// admission until Release. It is safe for concurrent use.
type Budget struct {
	lim    BudgetLimits
	charge func(bytes int64) (release func())

	mu       sync.Mutex
	pages    int   // pages taken
	ocrPages int   // of them, pages that need OCR
	answer   int64 // bytes of answer admitted
	charged  int64 // bytes charged through charge
	releases []func()
	over     error
}

// answerChunk is how much answer memory is charged at once: the admission is told in steps, not
// page by page.
const answerChunk = 1 << 20

// answerMemory is how many bytes of memory a byte of the answer holds at its peak: the regions in
// Go, and their JSON as it is written.
const answerMemory = 2

// NewBudget returns a request's budget. charge (nil: nothing is charged) adds memory the answer
// holds to the service's admission at once, without waiting: the request holds it while it is
// not running a job (waiting for it would deadlock against the request's own next job), and
// AnswerBytes bounds it.
func NewBudget(lim BudgetLimits, charge func(bytes int64) (release func())) *Budget {
	return &Budget{lim: lim, charge: charge}
}

// Release gives back the memory charged for the answer: call it once the answer is written.
func (b *Budget) Release() {
	b.mu.Lock()
	rs := b.releases
	b.releases, b.charged = nil, 0
	b.mu.Unlock()
	for _, r := range rs {
		r()
	}
}

// Exceeded returns the error of a request that asked for more than its bounds allow (pages, or
// the answer's size), nil otherwise. Once exceeded, a budget refuses everything.
func (b *Budget) Exceeded() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

// takePages takes n more pages, or refuses them (and everything later) with a *PageCountError
// that counts the request's pages.
func (b *Budget) takePages(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over != nil {
		return b.over
	}
	if b.lim.Pages > 0 && b.pages+n > b.lim.Pages {
		b.over = &docfile.PageCountError{Pages: b.pages + n, Limit: b.lim.Pages, Selected: true, Request: true}
		return b.over
	}
	b.pages += n
	return nil
}

// takeOCRPages takes n more pages that need OCR, or refuses them (and everything later) with a
// *PageCountError that counts the request's OCR pages; requested says the request asked for OCR
// of every page (ocr=always), which the refusal says rather than blaming their text layers.
func (b *Budget) takeOCRPages(n int, requested bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fitOCRPages(n); err != nil {
		var pc *docfile.PageCountError
		if requested && errors.As(err, &pc) && pc.OCR {
			pc.Requested = true
		}
		return err
	}
	b.ocrPages += n
	return nil
}

// spareOCRPages takes up to n more pages that need OCR, as many as the request's OCR page limit
// still allows, and returns how many it took; it refuses nothing (pages whose OCR only adds to a
// text-layer answer: see docfile.Page.Pictures).
func (b *Budget) spareOCRPages(n int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over != nil {
		return 0
	}
	if b.lim.OCRPages > 0 {
		n = max(0, min(n, b.lim.OCRPages-b.ocrPages))
	}
	b.ocrPages += n
	return n
}

// expectOCRPages refuses, as takeOCRPages would (and everything later), n more pages that need
// OCR, without taking them yet: a document all of whose pages need OCR (a TIFF) is refused as
// soon as its selection is known, before any page is read.
func (b *Budget) expectOCRPages(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fitOCRPages(n)
}

func (b *Budget) fitOCRPages(n int) error {
	if b.over != nil {
		return b.over
	}
	if b.lim.OCRPages > 0 && b.ocrPages+n > b.lim.OCRPages {
		b.over = &docfile.PageCountError{Pages: b.ocrPages + n, Limit: b.lim.OCRPages, Selected: true, Request: true, OCR: true}
		return b.over
	}
	return nil
}

// addAnswer admits n more bytes of answer, or refuses them (and every later addition) with an
// *AnswerError when they would take the answer past its bound.
func (b *Budget) addAnswer(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over != nil {
		return b.over
	}
	if b.lim.AnswerBytes > 0 && b.answer+n > b.lim.AnswerBytes {
		b.over = &AnswerError{Limit: b.lim.AnswerBytes}
		return b.over
	}
	b.answer += n
	if b.charge != nil {
		for want := answerMemory * b.answer; b.charged < want; b.charged += answerChunk {
			b.releases = append(b.releases, b.charge(answerChunk))
		}
	}
	return nil
}

// The size of a page's answer, as the service writes it (JSON): what a region, a word and the
// page cost besides their texts: their JSON with five-digit coordinates, a negative rotation and
// three-digit counters (see TestAnswerSizeEstimate in the service).
const (
	regionBytes = 290
	wordBytes   = 185
	pageBytes   = 400
)

// answerBytes estimates a page's answer: every region with its box, its words when they are
// sent, and its text three times (the region's, the page's and the document's).
func answerBytes(res *ocr.Result, words bool) int64 {
	n := int64(pageBytes)
	if res == nil {
		return n
	}
	for _, r := range res.Regions {
		n += regionBytes + 3*jsonLen(r.Text)
		if words {
			for _, w := range r.Words {
				n += wordBytes + jsonLen(w.Text)
			}
		}
	}
	return n
}

// jsonLen bounds the length of s as a JSON string: a control character or a quote takes up to six
// bytes.
func jsonLen(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			n += 5
		}
	}
	return n
}
