package onnxrt

import (
	"fmt"
	"strconv"
	"strings"
)

// shapeRule computes a model's output shape from its input shape, as the prepare step wrote it
// into the model's metadata: comma-separated dimensions, each an integer, "inK" (input dimension
// K) or "inK/D" (input dimension K divided by D). The PP-OCRv4 recognizer's is "in0,in3/8,6625":
// one time step per 8 pixels of width.
type shapeRule []shapeDim

type shapeDim struct {
	in    int   // input dimension, or -1 for a constant
	div   int64 // divisor of the input dimension
	value int64 // the constant
}

// parseShapeRule reads a rule for a model with inRank input and outRank output dimensions.
func parseShapeRule(s string, inRank, outRank int) (shapeRule, error) {
	parts := strings.Split(s, ",")
	if len(parts) != outRank {
		return nil, fmt.Errorf("%q has %d dimensions, the output has %d", s, len(parts), outRank)
	}
	rule := make(shapeRule, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		ref, ok := strings.CutPrefix(p, "in")
		if !ok {
			v, err := strconv.ParseInt(p, 10, 64)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("%q: dimension %d is %q, want a positive integer, inK or inK/D", s, i, p)
			}
			rule[i] = shapeDim{in: -1, value: v}
			continue
		}
		k, d, hasDiv := strings.Cut(ref, "/")
		in, err := strconv.Atoi(k)
		if err != nil || in < 0 || in >= inRank {
			return nil, fmt.Errorf("%q: dimension %d refers to input dimension %q of %d", s, i, k, inRank)
		}
		div := int64(1)
		if hasDiv {
			if div, err = strconv.ParseInt(d, 10, 64); err != nil || div <= 0 {
				return nil, fmt.Errorf("%q: dimension %d divides by %q", s, i, d)
			}
		}
		rule[i] = shapeDim{in: in, div: div}
	}
	return rule, nil
}

// apply returns the output shape for an input shape. It reports false when there is no rule or
// the rule does not divide the input evenly (the model may round differently there, so the
// output is left to ONNX Runtime).
func (r shapeRule) apply(in []int64) ([]int64, bool) {
	if r == nil {
		return nil, false
	}
	out := make([]int64, len(r))
	for i, d := range r {
		if d.in < 0 {
			out[i] = d.value
			continue
		}
		if d.in >= len(in) || in[d.in]%d.div != 0 {
			return nil, false
		}
		out[i] = in[d.in] / d.div
	}
	return out, true
}
