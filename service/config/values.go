package config

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// The value types bind a setting to its field in Config. Each is a flag.Value; the numeric ones
// also let a rule (rules.go) read, write and print them as numbers, so that one bound serves the
// check at start, the error message and the documentation.
type (
	bytesValue    int64
	stringValue   string
	intValue      int
	floatValue    float64
	float32Value  float32
	boolValue     bool
	durationValue time.Duration
	intListValue  []int
)

// numeric is a value a bound can be put on.
type numeric interface {
	Set(string) error
	String() string
	num() float64          // the value as a number (durations in seconds)
	format(float64) string // a number as this setting writes it
	step() float64         // the smallest change of value: 1 for whole numbers
	kind() string          // what the value is, for the documentation
}

func (v *bytesValue) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*v = bytesValue(n)
	return nil
}

// String writes a size with the largest binary unit that divides it (256MiB), so that defaults
// read as people write them and parse back to the same value.
func (v *bytesValue) String() string          { return formatBytes(int64(*v)) }
func (v *bytesValue) num() float64            { return float64(*v) }
func (v *bytesValue) format(f float64) string { return formatBytes(int64(f)) }
func (v *bytesValue) step() float64           { return 1 }
func (v *bytesValue) kind() string            { return "size" }

func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseBytes reads a size in bytes: a plain number, or one with a unit: KiB, MiB, GiB, TiB (and
// Ki, Mi, Gi, Ti, as Kubernetes writes them) are powers of 1024; kB, MB, GB, TB (and k, K, M,
// G, T) powers of 1000. "auto" is 0.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "auto") {
		return 0, nil
	}
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
	units := map[string]float64{
		"": 1, "B": 1,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
		"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
	}
	mult, ok := units[unit]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f < 0 || f*mult > 1<<62 {
		return 0, errors.New("not a size in bytes (e.g. 1073741824, 800MiB or 1GiB)")
	}
	return int64(f * mult), nil
}

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not an integer")
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string          { return strconv.Itoa(int(*v)) }
func (v *intValue) num() float64            { return float64(*v) }
func (v *intValue) format(f float64) string { return strconv.Itoa(int(f)) }
func (v *intValue) step() float64           { return 1 }
func (v *intValue) kind() string            { return "integer" }

func (v *intListValue) Set(s string) error {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return errors.New("not a comma-separated list of integers")
		}
		out = append(out, n)
	}
	*v = out
	return nil
}

func (v *intListValue) String() string {
	parts := make([]string, len(*v))
	for i, n := range *v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return errors.New("not a number")
	}
	*v = floatValue(f)
	return nil
}
func (v *floatValue) String() string          { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *floatValue) num() float64            { return float64(*v) }
func (v *floatValue) format(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
func (v *floatValue) step() float64           { return 1e-6 }
func (v *floatValue) kind() string            { return "number" }

func (v *float32Value) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
	if err != nil {
		return errors.New("not a number")
	}
	*v = float32Value(f)
	return nil
}
func (v *float32Value) String() string          { return strconv.FormatFloat(float64(*v), 'g', -1, 32) }
func (v *float32Value) num() float64            { return float64(*v) }
func (v *float32Value) format(f float64) string { return strconv.FormatFloat(f, 'g', -1, 32) }
func (v *float32Value) step() float64           { return 1e-4 }
func (v *float32Value) kind() string            { return "number" }

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a boolean (true/false)")
	}
	*v = boolValue(b)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a duration (e.g. 30s)")
	}
	*v = durationValue(d)
	return nil
}
func (v *durationValue) String() string { return time.Duration(*v).String() }
func (v *durationValue) num() float64   { return time.Duration(*v).Seconds() }
func (v *durationValue) format(f float64) string {
	return time.Duration(f * float64(time.Second)).String()
}
func (v *durationValue) step() float64 { return 1e-9 }
func (v *durationValue) kind() string  { return "duration" }
