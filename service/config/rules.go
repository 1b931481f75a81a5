package config

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A rule is what a setting's value must satisfy. It wraps the setting's value in the table
// (settings.go), so the one row says what the setting binds, what it accepts and how to document
// it: Validate runs check, the usage text and docs/configuration.md print rule.
type rule interface {
	flag.Value
	check() error // nil when the value is acceptable; the error says what it must be
	rule() string // what is acceptable, for a person
}

// bounded is a numeric value within bounds; a bound is open when the value may not equal it.
type bounded struct {
	numeric
	lo, hi         float64 // ±Inf: no bound
	loOpen, hiOpen bool
}

// atLeast is lo ≤ v.
func atLeast(lo float64, v numeric) flag.Value { return &bounded{v, lo, math.Inf(1), false, false} }

// above is lo < v.
func above(lo float64, v numeric) flag.Value { return &bounded{v, lo, math.Inf(1), true, false} }

// within is lo ≤ v ≤ hi.
func within(lo, hi float64, v numeric) flag.Value { return &bounded{v, lo, hi, false, false} }

// fraction is 0 < v < 1.
func fraction(v numeric) flag.Value { return &bounded{v, 0, 1, true, true} }

// share is 0 < v ≤ 1.
func share(v numeric) flag.Value { return &bounded{v, 0, 1, true, false} }

func (b *bounded) check() error {
	x := b.num()
	low := x < b.lo || (b.loOpen && x == b.lo)
	high := x > b.hi || (b.hiOpen && x == b.hi)
	if low || high || math.IsNaN(x) {
		r := "must be " + b.rule()
		if r == "must be not negative" {
			r = "must not be negative"
		}
		return fmt.Errorf("%s, got %s", r, b.String())
	}
	return nil
}

func (b *bounded) rule() string {
	f := b.format
	switch {
	case math.IsInf(b.hi, 1) && b.loOpen && b.lo == 0:
		return "positive"
	case math.IsInf(b.hi, 1) && b.loOpen:
		return "above " + f(b.lo)
	case math.IsInf(b.hi, 1) && b.lo == 0:
		return "not negative"
	case math.IsInf(b.hi, 1):
		return "at least " + f(b.lo)
	case !b.loOpen && !b.hiOpen:
		return "from " + f(b.lo) + " to " + f(b.hi)
	case b.loOpen && b.hiOpen:
		return "above " + f(b.lo) + " and below " + f(b.hi)
	default:
		return "above " + f(b.lo) + " and at most " + f(b.hi)
	}
}

// outside and inside give a value just past and just at a bound, for the tests that hold the
// rules and the pipeline's own checks to each other.
func (b *bounded) outside() []float64 {
	var out []float64
	if !math.IsInf(b.lo, -1) {
		if b.loOpen {
			out = append(out, b.lo)
		} else {
			out = append(out, b.lo-b.step())
		}
	}
	if !math.IsInf(b.hi, 1) {
		if b.hiOpen {
			out = append(out, b.hi)
		} else {
			out = append(out, b.hi+b.step())
		}
	}
	return out
}

func (b *bounded) inside() []float64 {
	lo, hi := b.lo, b.hi
	if b.loOpen {
		lo += b.step()
	}
	if b.hiOpen {
		hi -= b.step()
	}
	out := []float64{lo}
	if !math.IsInf(hi, 1) {
		out = append(out, hi)
	}
	return out
}

// choice is a string value from a fixed set.
type choice struct {
	*stringValue
	choices []string
}

// oneOf is a string that must be one of choices.
func oneOf(v *string, choices ...string) flag.Value {
	return &choice{(*stringValue)(v), choices}
}

func (c *choice) check() error {
	if !slices.Contains(c.choices, c.String()) {
		return fmt.Errorf("must be one of %s, got %q", strings.Join(c.choices, ", "), c.String())
	}
	return nil
}

func (c *choice) rule() string {
	quoted := make([]string, len(c.choices))
	for i, ch := range c.choices {
		quoted[i] = "`" + ch + "`"
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// checked is a value with a rule of its own, for what a bound or a set cannot say.
type checked struct {
	flag.Value
	text string
	ok   func() error
}

// checkedBy wraps v with a rule described by text and checked by ok.
func checkedBy(v flag.Value, text string, ok func() error) flag.Value {
	return &checked{v, text, ok}
}

func (c *checked) check() error { return c.ok() }
func (c *checked) rule() string { return c.text }

// IsBoolFlag passes a boolean's flag syntax (-ui instead of -ui=true) through a rule.
func (c *checked) IsBoolFlag() bool {
	b, ok := c.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// shown is a value documented with another default than the one it holds when the docs are
// written: OCRGATE_HOME, which is ~/.ocrgate on a machine with a home directory.
type shown struct {
	flag.Value
	def string
}

func shownAs(def string, v flag.Value) flag.Value { return &shown{v, def} }

// unwrap returns the value a rule or a documented default wraps.
func unwrap(v flag.Value) flag.Value {
	for {
		switch w := v.(type) {
		case *bounded:
			v = w.numeric
		case *choice:
			return w.stringValue
		case *checked:
			v = w.Value
		case *shown:
			v = w.Value
		default:
			return v
		}
	}
}

// The wrappers' String methods answer "" for a zero wrapper: flag.PrintDefaults makes one to
// learn whether a default is the zero value.

func (b *bounded) String() string {
	if b.numeric == nil {
		return ""
	}
	return b.numeric.String()
}

func (c *choice) String() string {
	if c.stringValue == nil {
		return ""
	}
	return c.stringValue.String()
}

func (c *checked) String() string {
	if c.Value == nil {
		return ""
	}
	return c.Value.String()
}

func (s *shown) String() string {
	if s.Value == nil {
		return ""
	}
	return s.Value.String()
}
