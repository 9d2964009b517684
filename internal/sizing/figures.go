package sizing

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/beeburst/beeburst/internal/limits"
)

// Source says where a figure came from. The strings are the API's (v1alpha1.Source*).
type Source string

// Sources, in the order Best prefers them.
const (
	// SourceMeasured: a stage-2 probe measured it within the reuse window (fresh).
	SourceMeasured Source = "measured"
	// SourceSpec: spec.hardware documents it for every node.
	SourceSpec Source = "spec"
	// SourceLabel: the node's hardware.beeburst.io/* label documents it.
	SourceLabel Source = "label"
	// SourceDiscovered: read from the node (the interface's speed in sysfs; the file
	// system's size).
	SourceDiscovered Source = "discovered"
	// SourceMeasuredStale: measured, but longer ago than the reuse window. Used only when
	// nothing else gives the figure: the node may have changed since.
	SourceMeasuredStale Source = "measured-stale"
	// SourceUnknown: nothing gives it.
	SourceUnknown Source = "unknown"
)

// rank orders sources: lower is better. Fresh measurements first (stage 2: "from here on the
// measured figure is the limit"), then what people documented - the spec for this burst
// buffer before the node's label - then what the node says of itself (an interface's nominal
// speed is an upper bound, not a measurement), and a stale measurement last: it is evidence,
// but of a node that may have changed.
func (s Source) rank() int {
	switch s {
	case SourceMeasured:
		return 0
	case SourceSpec:
		return 1
	case SourceLabel:
		return 2
	case SourceDiscovered:
		return 3
	case SourceMeasuredStale:
		return 4
	}
	return 5
}

// Evidence is one figure of one node - a bandwidth in bytes per second or a capacity in bytes
// - with where it came from. As input, Source is measured, spec, label or discovered; Best
// classifies a measurement as fresh (measured) or stale (measured-stale).
type Evidence struct {
	Value        float64   `json:"value"`
	Source       Source    `json:"source"`
	MeasuredTime time.Time `json:"measuredTime,omitzero"`
	// Detail is how people wrote it, e.g. "1G 64b/66b" for a link; shown beside the value.
	Detail string `json:"detail,omitempty"`
	// Note says why this figure and not a better kind, when a better kind was missing, e.g.
	// "no fresh measurement (measured 3h ago, older than 1h); label used".
	Note string `json:"note,omitempty"`
}

// Known says whether the evidence has a value.
func (e Evidence) Known() bool { return e.Source != SourceUnknown && e.Source != "" && e.Value > 0 }

// unknownEvidence is a figure nothing gives.
var unknownEvidence = Evidence{Source: SourceUnknown}

// MarshalJSON writes the value as a whole number.
func (e Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence
	p := struct {
		plain
		Value *int64 `json:"value"`
	}{plain: plain(e)}
	if e.Known() {
		v := int64(math.Round(e.Value))
		p.Value = &v
	}
	return json.Marshal(p)
}

// Best picks the figure to use from what is known of one node's component: the best source
// by rank (ties: the newest measurement, then the order given). now and freshFor classify
// measurements: one older than freshFor (or from the future, or with no time) is stale. A
// value that is not a positive finite number counts as absent.
func Best(evs []Evidence, now time.Time, freshFor time.Duration) Evidence {
	best := unknownEvidence
	var staleMeasured *Evidence
	for i := range evs {
		e := evs[i]
		if !(e.Value > 0) || math.IsInf(e.Value, 0) {
			continue
		}
		if e.Source == SourceMeasured || e.Source == SourceMeasuredStale {
			if e.Source == SourceMeasured && isFresh(e.MeasuredTime, now, freshFor) {
				e.Source = SourceMeasured
			} else {
				e.Source = SourceMeasuredStale
			}
		}
		if !best.Known() || e.Source.rank() < best.Source.rank() ||
			(e.Source.rank() == best.Source.rank() && e.MeasuredTime.After(best.MeasuredTime)) {
			best = e
		}
		if e.Source == SourceMeasuredStale && (staleMeasured == nil || e.MeasuredTime.After(staleMeasured.MeasuredTime)) {
			staleMeasured = &evs[i]
		}
	}
	if best.Known() && best.Source != SourceMeasured {
		switch {
		case staleMeasured != nil && best.Source != SourceMeasuredStale:
			best.Note = fmt.Sprintf("measured %s, stale (older than %s): %s figure used", ago(staleMeasured.MeasuredTime, now),
				formatDuration(freshFor), best.Source)
		case best.Source == SourceMeasuredStale:
			best.Note = fmt.Sprintf("only a stale measurement (%s, older than %s) gives it", ago(best.MeasuredTime, now), formatDuration(freshFor))
		}
	}
	return best
}

func isFresh(t, now time.Time, freshFor time.Duration) bool {
	return !t.IsZero() && freshFor > 0 && !t.After(now) && now.Sub(t) < freshFor
}

// ago is "3h ago", "measured at an unknown time".
func ago(t, now time.Time) string {
	switch {
	case t.IsZero():
		return "an unknown time"
	case t.After(now):
		return "a time in the future"
	}
	return formatDuration(now.Sub(t).Round(time.Second)) + " ago"
}

// formatDuration is "1h", "90s", "2h30m": time.Duration's form without the zero units.
func formatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	s := d.String()
	for _, suf := range []string{"m0s", "h0m"} {
		if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
			s = s[:len(s)-len(suf)+1]
		}
	}
	return s
}

// describe is "150 MB/s (label)", "150 MB/s (measured 20m ago)", "unknown".
func (e Evidence) describe(now time.Time, bytes bool) string {
	if !e.Known() {
		return "unknown"
	}
	v := limits.FormatBytesPerSecond(e.Value)
	if bytes {
		v = limits.FormatCapacity(e.Value)
	}
	switch e.Source {
	case SourceMeasured, SourceMeasuredStale:
		return fmt.Sprintf("%s (%s %s)", v, e.Source, ago(e.MeasuredTime, now))
	}
	return fmt.Sprintf("%s (%s)", v, e.Source)
}

// percent is a ratio - 1 as a signed whole percent: 1.2 -> "+20%", 0.7 -> "-30%".
func percent(ratio float64) string {
	p := math.Round((ratio - 1) * 100)
	if p > 0 {
		return fmt.Sprintf("+%.0f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}
