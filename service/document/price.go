package document

import (
	"slices"
	"time"

	"github.com/ocrgate/ocrgate/service/cpubudget"
)

// A survey's CPU time is priced twice against the request's budget (see package cpubudget):
// before it starts, from its page count, and again as its first pages are read, from what they
// cost, so that a document that cannot be surveyed within the budget is refused after a page or
// two, not once the budget has been spent on it. What it really uses is charged as it goes, and
// stops it at the budget whatever the estimates said.
const (
	// pageFloor is about the least a page's survey costs: a page of one line read from its text
	// layer takes 1.35 ms on the development machine (BenchmarkSurvey). A survey's first
	// estimate is its pages times this: a budget that cannot afford even that is refused before
	// the first page.
	pageFloor = time.Millisecond
	// recognizerCPU is the recognizer's CPU time per pixel of its input (crops at its height),
	// what reading a text layer's probes is charged: 0.65 µs on the development machine's
	// embedded runtime, the Go work around it included (BenchmarkProbes, service/server).
	recognizerCPU = 650 * time.Nanosecond
	// projectWindow is how many of the latest pages the projection looks at.
	projectWindow = 16
)

// price is a survey's CPU pricing. The projection of what its remaining pages will cost is the
// lower median of what the latest pages cost (their CPU time on the survey's thread, and their
// probes), times the pages left. The lower median, not the mean: the first pages of a document
// cost more than the rest (the fonts are loaded, the layer's fonts checked once for the whole
// document), and a book must not be refused for its first page's price. A document whose every
// page is costly (each brings fonts of its own to check, or draws a 200 000-rectangle form) is
// priced at that cost from its second page on.
//
// The projection is made after pages 2, 4, 8, 16, … and after each turn (see turnCPU): a
// document refused for its price is refused within its first two pages or, when its pages grow
// costlier later on, within a turn of that.
type price struct {
	budget *cpubudget.Budget // nil: no limit, nothing priced
	pages  int               // selected
	read   int               // pages read so far
	next   int               // read count at which the next projection is due
	latest []time.Duration   // the latest pages' costs, oldest first
}

// start prices the whole survey before its first page: pages times pageFloor.
func (p *price) start() error {
	p.next = 2
	return p.budget.Plan(time.Duration(p.pages) * pageFloor)
}

// page records what the page just read cost and, when a projection is due (or a turn was just
// taken), refuses the rest of the survey when it will not fit what the budget has left.
func (p *price) page(cost time.Duration, turned bool) error {
	p.read++
	if p.budget == nil {
		return nil
	}
	if len(p.latest) == projectWindow {
		p.latest = append(p.latest[:0], p.latest[1:]...)
	}
	p.latest = append(p.latest, cost)
	due := p.read >= p.next
	if due {
		p.next *= 2
	}
	rest := p.pages - p.read
	if rest <= 0 || p.read < 2 || !due && !turned {
		return nil
	}
	return p.budget.Plan(time.Duration(rest) * lowerMedian(p.latest))
}

// lowerMedian is the lower of the two middle values of ds (the middle one when their number is
// odd).
func lowerMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
