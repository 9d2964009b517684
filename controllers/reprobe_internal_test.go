package controllers

import (
	"testing"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// TestDoubtedLimit: a sweep above a limit of the first round sends the component that sets it
// back to be measured - the devices for a device-bound limit, the links for one the network,
// the servers' or the clients' links set - and there is no third round.
func TestDoubtedLimit(t *testing.T) {
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
		want limits.Component
	}{
		{"no stage 2", nil, exceeds(limits.Write), ""},
		{"write above a device-bound write limit", &v1alpha1.ComponentLimits{Write: bound("devices"), Read: bound("network")}, exceeds(limits.Write), limits.ComponentDevices},
		{"read above a network-bound read limit", &v1alpha1.ComponentLimits{Write: bound("devices"), Read: bound("network")}, exceeds(limits.Read), limits.ComponentNetwork},
		{"write above a server-bound limit: the servers' links", &v1alpha1.ComponentLimits{Write: bound("servers")}, exceeds(limits.Write), limits.ComponentNetwork},
		{"read above a device-bound read limit", &v1alpha1.ComponentLimits{Write: bound("servers"), Read: bound("devices")}, exceeds(limits.Read), limits.ComponentDevices},
		{"the devices' second round", &v1alpha1.ComponentLimits{Write: bound("devices"), DeviceProbeRound: 2}, exceeds(limits.Write), ""},
		{"the links' second round", &v1alpha1.ComponentLimits{Write: bound("network"), NetworkProbeRound: 2}, exceeds(limits.Write), ""},
		{"the links' second round does not stop the devices'", &v1alpha1.ComponentLimits{Write: bound("devices"), NetworkProbeRound: 2}, exceeds(limits.Write), limits.ComponentDevices},
		{"an unknown bottleneck", &v1alpha1.ComponentLimits{Write: bound("unknown")}, exceeds(limits.Write), ""},
		{"nothing above its limit", &v1alpha1.ComponentLimits{Write: bound("devices")}, limits.Sweep{}, ""},
		{"no limit for the operation", &v1alpha1.ComponentLimits{Write: bound("devices")}, exceeds(limits.Read), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, limit, got := doubtedLimit(tt.comp, tt.an)
			if got != tt.want || (limit != nil) != (tt.want != "") {
				t.Fatalf("got %q (%+v, limit %v), want %q", got, w, limit, tt.want)
			}
			if limit != nil && w.Reason != limits.WarningExceedsLimit {
				t.Errorf("warning %+v is not the ExceedsLimit one", w)
			}
		})
	}
}

// TestDeviceFarBelowKnown: a device of this burst buffer's own probe far below what it is
// known to do - the lower of its documented figure and the best its node's probes measured
// alone - is measured again; a reused one (its probe had the node to itself) is not.
func TestDeviceFarBelowKnown(t *testing.T) {
	fig := func(doc, got int64) *v1alpha1.ComponentFigure {
		f := &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: &got}
		if doc > 0 {
			f.DocumentedBytesPerSecond = &doc
		}
		return f
	}
	comp := &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{
		{Name: "a", DeviceWrite: fig(150e6, 149e6), DeviceRead: fig(300e6, 299e6)},
		{Name: "b", DeviceWrite: fig(150e6, 133e6), DeviceRead: fig(300e6, 300e6)},
	}}
	none := map[string]nodecache.BestFigures{}
	if node, msg := deviceFarBelowKnown(comp, none); node != "b" || msg != "node b's device write measured 133 MB/s, 89% of the documented 150 MB/s" {
		t.Errorf("got %q %q", node, msg)
	}
	// A drive that never reaches its datasheet: judged against its own best, not again.
	slow := map[string]nodecache.BestFigures{"b": {StoragePath: "/mnt/nvme", WriteBytesPerSecond: 135e6, ReadBytesPerSecond: 301e6, Probes: 3}}
	if node, msg := deviceFarBelowKnown(comp, slow); node != "" {
		t.Errorf("a drive at 90%% of its datasheet, as always: got %q %q", node, msg)
	}
	// A best above the datasheet does not make the rule stricter.
	fast := map[string]nodecache.BestFigures{"a": {WriteBytesPerSecond: 170e6, ReadBytesPerSecond: 340e6, Probes: 2}}
	comp.Nodes[1].DeviceWrite = fig(150e6, 145e6)
	if node, msg := deviceFarBelowKnown(comp, fast); node != "" {
		t.Errorf("a best above the documented figure: got %q %q", node, msg)
	}
	// Without a documented figure, the node's own best is the reference.
	comp.Nodes[1].DeviceWrite = fig(0, 120e6)
	if node, msg := deviceFarBelowKnown(comp, slow); node != "b" || msg != "node b's device write measured 120 MB/s, 89% of the 135 MB/s its probes measured alone before (best of 3)" {
		t.Errorf("no documented figure, a best of 135 MB/s: got %q %q", node, msg)
	}
	if node, _ := deviceFarBelowKnown(comp, none); node != "" {
		t.Errorf("neither a documented figure nor a best: got %q", node)
	}
	comp.Nodes[1].DeviceWrite = fig(150e6, 140e6)
	if node, _ := deviceFarBelowKnown(comp, none); node != "b" {
		t.Errorf("93%% of the documented figure: got %q, want b measured again", node)
	}
	comp.Nodes[1].Reused = true
	if node, _ := deviceFarBelowKnown(comp, none); node != "" {
		t.Errorf("a reused figure: got %q", node)
	}
	if node, _ := deviceFarBelowKnown(nil, none); node != "" {
		t.Errorf("no stage 2: got %q", node)
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
