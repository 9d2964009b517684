package v1alpha1

import (
	"testing"
	"time"
)

func TestDurationParse(t *testing.T) {
	for in, want := range map[Duration]time.Duration{"": 0, "0": 0, "0s": 0, "90s": 90 * time.Second, "1h30m": 90 * time.Minute, "1.5h": 90 * time.Minute} {
		if got, err := in.Parse(); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, bad := range []Duration{"forever", "yesterday", "-5m", "1d", "10 minutes"} {
		if _, err := bad.Parse(); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
