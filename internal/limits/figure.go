package limits

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// figureState tells whether a figure is known. The zero value is unknown, so an input
// figure nobody filled in is "not a known limit", never a zero bandwidth.
type figureState uint8

const (
	stateUnknown figureState = iota
	stateKnown
	stateNotApplicable
)

// Figure is a bandwidth in bytes per second that may be unknown (not given, so not a known
// limit) or not applicable (the term does not limit in this configuration, e.g. the network
// of private node-local scratch). The zero Figure is unknown.
type Figure struct {
	v     float64
	state figureState
}

// Bytes is a known figure of b bytes per second.
func Bytes(b float64) Figure { return Figure{v: b, state: stateKnown} }

// Unknown is a figure nobody gave.
var Unknown = Figure{}

// NotApplicable is a term that does not limit in this configuration.
var NotApplicable = Figure{state: stateNotApplicable}

// Known says whether the figure has a value.
func (f Figure) Known() bool { return f.state == stateKnown }

// NotApplicable says whether the term does not apply.
func (f Figure) NotApplicable() bool { return f.state == stateNotApplicable }

// Value is the figure in bytes per second, 0 when not known.
func (f Figure) Value() float64 {
	if !f.Known() {
		return 0
	}
	return f.v
}

// Int64 is the figure rounded to whole bytes per second; ok is false when it is not known.
func (f Figure) Int64() (v int64, ok bool) {
	if !f.Known() {
		return 0, false
	}
	return roundInt64(f.v), true
}

// Int64Ptr is the rounded figure, nil when not known: the shape of optional API fields.
func (f Figure) Int64Ptr() *int64 {
	v, ok := f.Int64()
	if !ok {
		return nil
	}
	return &v
}

// String is the figure for humans: "60.606 GB/s", "unknown" or "n/a".
func (f Figure) String() string {
	switch f.state {
	case stateKnown:
		return FormatBytesPerSecond(f.v)
	case stateNotApplicable:
		return "n/a"
	default:
		return "unknown"
	}
}

// MarshalJSON writes whole bytes per second, or null when the figure is not known.
func (f Figure) MarshalJSON() ([]byte, error) {
	v, ok := f.Int64()
	if !ok {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, v, 10), nil
}

// UnmarshalJSON reads a number of bytes per second, or null (unknown).
func (f *Figure) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*f = Unknown
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("bandwidth figure: %w", err)
	}
	*f = Bytes(v)
	return nil
}

func roundInt64(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(v))
}

// minFigure is the smallest known figure of fs, unknown when none is known.
func minFigure(fs ...Figure) Figure {
	out := Unknown
	for _, f := range fs {
		if f.Known() && (!out.Known() || f.v < out.v) {
			out = f
		}
	}
	return out
}

// Ratio is a dimensionless ratio such as the efficiency eta. JSON carries it rounded to four
// decimals (0.8406); Go code sees the exact value.
type Ratio float64

// MarshalJSON writes the ratio rounded to four decimals.
func (r Ratio) MarshalJSON() ([]byte, error) {
	f := float64(r)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, math.Round(f*1e4)/1e4, 'f', -1, 64), nil
}

// EfficiencyPerMille is eta in thousandths, rounded half up: the integer the API carries
// (status.limits.sweep.*.efficiencyPerMille), since the API has no floats.
func EfficiencyPerMille(eta float64) int32 {
	if math.IsNaN(eta) || eta <= 0 {
		return 0
	}
	pm := math.Floor(eta*1000 + 0.5)
	if pm > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(pm)
}

// The byte formatters. Every byte count and rate the operator writes for humans goes
// through formatScaled: decimal prefixes for bandwidths and transferred bytes, binary ones
// for capacities (as Kubernetes quantities write them).

// FormatBytesPerSecond is a decimal bandwidth for humans with up to three decimals:
// "60.606 GB/s", "378.788 MB/s", "12 GB/s".
func FormatBytesPerSecond(v float64) string {
	return formatScaled(v, decimalScales, 3, 3, 3, true, "B/s")
}

// FormatBytesPerSecondFixed is like FormatBytesPerSecond with exactly decimals decimals,
// e.g. "1.20 GB/s" for printer columns.
func FormatBytesPerSecondFixed(v float64, decimals int) string {
	return formatScaled(v, decimalScales, 3, decimals, decimals, false, "B/s")
}

// FormatBitsPerSecond is a signalling rate for humans: "100 Gbit/s", "12.5 Gbit/s".
func FormatBitsPerSecond(v float64) string {
	return formatScaled(v, decimalScales, 3, 3, 3, true, "bit/s")
}

// FormatBytes is an amount of data moved, with one decimal and a decimal prefix: "4.0 MB",
// "2.5 GB"; whole bytes below 1 kB ("512 B").
func FormatBytes(v float64) string {
	return formatScaled(v, decimalScales, 12, 1, 0, false, "B")
}

// FormatCapacity is a capacity in binary units with up to two decimals, as Kubernetes
// quantities write them: "3.5 GiB", "1 TiB", "512 B".
func FormatCapacity(v float64) string {
	return formatScaled(v, binaryScales, 2, 2, 0, true, "B")
}

type unitScale struct {
	factor float64
	prefix string
}

var (
	decimalScales = []unitScale{{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}
	binaryScales  = []unitScale{{1 << 60, "Ei"}, {1 << 50, "Pi"}, {1 << 40, "Ti"}, {1 << 30, "Gi"}, {1 << 20, "Mi"}, {1 << 10, "Ki"}}
)

// formatScaled writes v in the largest of scales that leaves at least 1 once rounded to
// roundDecimals (so that 999.9996e9 prints as 1 TB/s, not 1000 GB/s), with decimals
// decimals (bareDecimals in the bare unit, when no scale fits), trailing zeros trimmed when
// trim is set.
func formatScaled(v float64, scales []unitScale, roundDecimals, decimals, bareDecimals int, trim bool, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "invalid"
	}
	value, prefix, d := v, "", bareDecimals
	a, r := math.Abs(v), math.Pow10(roundDecimals)
	for _, u := range scales {
		if math.Round(a/u.factor*r)/r >= 1 {
			value, prefix, d = v/u.factor, u.prefix, decimals
			break
		}
	}
	s := strconv.FormatFloat(value, 'f', d, 64)
	if trim {
		s = trimZeros(s)
	}
	return s + " " + prefix + unit
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// formatCount is a float count for formulas: "5", "1.333".
func formatCount(v float64) string {
	return trimZeros(strconv.FormatFloat(v, 'f', 3, 64))
}
