package sizing

import (
	"fmt"
	"math"
	"strings"

	"github.com/beeburst/beeburst/internal/limits"
)

// SameSpeed is the band within which two figures are "about as fast": 10%, above the noise
// of one short run on each.
const SameSpeed = 0.10

// CompareInput is the same workload measured on the burst buffer and on other storage.
type CompareInput struct {
	// With names the other storage for sentences, e.g. "claim results" or "the node-local
	// disk /scratch".
	With string
	// Pattern is what ran (empty: LargeSequential, the ideal workload).
	Pattern Pattern
	// Workload says how it ran, e.g. "2 nodes x 4 processes".
	Workload string
	// BurstBuffer and Other are bytes per second by operation; a missing operation was not
	// measured there.
	BurstBuffer map[limits.Operation]float64
	Other       map[limits.Operation]float64
}

// Compared is one operation side by side.
type Compared struct {
	Operation   limits.Operation `json:"operation"`
	BurstBuffer limits.Figure    `json:"burstBufferBytesPerSecond"`
	Other       limits.Figure    `json:"otherBytesPerSecond"`
	// Ratio is BurstBuffer / Other; NaN (null in JSON) when either is missing.
	Ratio   limits.Ratio `json:"ratio"`
	Verdict string       `json:"verdict"`
}

// RatioPerMille is the ratio in thousandths for the API; nil when unknown.
func (c Compared) RatioPerMille() *int32 {
	r := float64(c.Ratio)
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
		return nil
	}
	v := int32(math.Min(math.Round(r*1000), math.MaxInt32))
	return &v
}

// Comparison is the burst buffer beside other storage.
type Comparison struct {
	With       string     `json:"with"`
	Workload   string     `json:"workload,omitempty"`
	Operations []Compared `json:"operations"`
	Message    string     `json:"message"`
}

// Compare puts the figures side by side, operation by operation (write, then read), with a
// verdict in words: "the burst buffer is 3.4x faster than claim results for large sequential
// writes", "... 2.1x slower than ...", or "about as fast as" within SameSpeed.
func Compare(in CompareInput) Comparison {
	c := Comparison{With: in.With, Workload: in.Workload}
	what := in.Pattern.describe()
	var verdicts []string
	for _, op := range limits.Operations {
		bb, hasBB := in.BurstBuffer[op]
		ot, hasOt := in.Other[op]
		if !hasBB && !hasOt {
			continue
		}
		co := Compared{Operation: op, BurstBuffer: fig(bb, hasBB), Other: fig(ot, hasOt), Ratio: limits.Ratio(math.NaN())}
		noun := fmt.Sprintf("%s %ss", what, op)
		switch {
		case !co.BurstBuffer.Known():
			co.Verdict = fmt.Sprintf("%s: not measured on the burst buffer", noun)
		case !co.Other.Known():
			co.Verdict = fmt.Sprintf("%s: not measured on %s", noun, in.With)
		default:
			r := bb / ot
			co.Ratio = limits.Ratio(r)
			switch {
			case r >= 1+SameSpeed:
				co.Verdict = fmt.Sprintf("the burst buffer is %s faster than %s for %s (%s against %s)", times(r), in.With, noun,
					co.BurstBuffer, co.Other)
			case r <= 1/(1+SameSpeed):
				co.Verdict = fmt.Sprintf("the burst buffer is %s slower than %s for %s (%s against %s)", times(1/r), in.With, noun,
					co.BurstBuffer, co.Other)
			default:
				co.Verdict = fmt.Sprintf("the burst buffer is about as fast as %s for %s (%s against %s, within %.0f%%)", in.With, noun,
					co.BurstBuffer, co.Other, SameSpeed*100)
			}
		}
		c.Operations = append(c.Operations, co)
		verdicts = append(verdicts, co.Verdict)
	}
	if len(verdicts) == 0 {
		c.Message = fmt.Sprintf("nothing measured to compare with %s", in.With)
		return c
	}
	c.Message = strings.Join(verdicts, "; ")
	return c
}

func fig(v float64, ok bool) limits.Figure {
	if !ok || !(v > 0) || math.IsInf(v, 0) {
		return limits.Unknown
	}
	return limits.Bytes(v)
}

// times is a ratio for sentences: "3.4x" below 10, "12x" from there.
func times(r float64) string {
	if r >= 9.95 {
		return fmt.Sprintf("%.0fx", r)
	}
	return fmt.Sprintf("%.1fx", r)
}
