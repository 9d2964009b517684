package controllers

import (
	"testing"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

// TestDoubtedDeviceLimit: only a sweep above a device-bound limit of the first round sends the
// devices back to be measured; links and servers are not probed again, and there is no third
// round.
func TestDoubtedDeviceLimit(t *testing.T) {
	bound := func(b string) *v1alpha1.OperationLimit {
		return &v1alpha1.OperationLimit{LimitBytesPerSecond: 1, Bottleneck: b}
	}
	exceeds := func(op limits.Operation) limits.Sweep {
		return limits.Sweep{Warnings: []limits.Warning{{Reason: limits.WarningBelowExpectation, Operation: limits.Write},
			{Reason: limits.WarningExceedsLimit, Operation: op}}}
	}
	tests := []struct {
		name string
		comp *v1alpha1.ComponentLimits
		an   limits.Sweep
		want bool
	}{
		{"no stage 2", nil, exceeds(limits.Write), false},
		{"write above a device-bound write limit", &v1alpha1.ComponentLimits{Write: bound("devices"), Read: bound("network")}, exceeds(limits.Write), true},
		{"read above a network-bound read limit", &v1alpha1.ComponentLimits{Write: bound("devices"), Read: bound("network")}, exceeds(limits.Read), false},
		{"read above a device-bound read limit", &v1alpha1.ComponentLimits{Write: bound("servers"), Read: bound("devices")}, exceeds(limits.Read), true},
		{"already the second round", &v1alpha1.ComponentLimits{Write: bound("devices"), DeviceProbeRound: 2}, exceeds(limits.Write), false},
		{"nothing above its limit", &v1alpha1.ComponentLimits{Write: bound("devices")}, limits.Sweep{}, false},
		{"no limit for the operation", &v1alpha1.ComponentLimits{Write: bound("devices")}, exceeds(limits.Read), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, limit := doubtedDeviceLimit(tt.comp, tt.an)
			if got := limit != nil; got != tt.want {
				t.Fatalf("got %v (%+v), want %v", got, w, tt.want)
			}
			if limit != nil && w.Reason != limits.WarningExceedsLimit {
				t.Errorf("warning %+v is not the ExceedsLimit one", w)
			}
		})
	}
}

func TestDeviceProbeRound(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{}
	if got := deviceProbeRound(bb); got != 1 {
		t.Errorf("no status.limits: round %d, want 1", got)
	}
	bb.Status.Limits = &v1alpha1.LimitsStatus{Components: &v1alpha1.ComponentLimits{DeviceProbeRound: 2}}
	if got := deviceProbeRound(bb); got != 2 {
		t.Errorf("round %d, want 2", got)
	}
}
