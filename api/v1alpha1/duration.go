package v1alpha1

import (
	"fmt"
	"time"
)

// Duration is a length of time in Go's notation: a sequence of decimal numbers, each with a
// unit (ns, us, ms, s, m, h), such as "90s", "10m" or "1h30m".
//
// It is a string, not metav1.Duration, on purpose (as Gateway API's Duration): metav1.Duration
// fails to decode a value that does not parse, and one stored BurstBuffer carrying such a
// value - written through a CRD from before the validation rules, or by anything else that
// writes to etcd - then fails every list of the manager's informer, so that no burst buffer
// in the cluster is reconciled any more. As a string it always decodes; Parse reads it where
// it is used, and a value that does not parse fails that one burst buffer with a condition
// that names the field. The API server refuses such values in the first place: every
// Duration field carries a CEL rule with its format and bounds.
//
// +kubebuilder:validation:MaxLength=32
type Duration string

// Parse reads the duration. An empty Duration is 0 (the field's default applies in the API
// server); a negative one is an error: no duration of this API may be negative.
func (d Duration) Parse() (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 90s, 10m or 1h30m", string(d))
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", string(d))
	}
	return v, nil
}
