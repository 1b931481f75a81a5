package ocr

import "fmt"

// With returns a pipeline on the same runtime and charset that runs with other options: a
// request's own detection size limit or thresholds, say. p is not changed, and the two share
// nothing that either changes, so both may run at once. Options that cannot work give an error.
func (p *Pipeline) With(opt Options) (*Pipeline, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("ocr: invalid options: %w", err)
	}
	q := *p
	q.opt = withRuntimeMemory(p.rt, opt)
	return &q, nil
}
