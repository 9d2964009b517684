package controllers

import (
	"strings"
	"testing"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// TestDoubtedLimit: a sweep above a limit of the first round sends the component that sets it
// back to be measured - the devices for a device-bound limit, the links for one the network,
// the servers' or the clients' links set - and there is no third round.
func TestDoubtedLimit(t *testing.T) {
	bound := boundBy
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
			why, got := doubtedLimit(tt.comp, tt.an)
			if got != tt.want || (why != "") != (tt.want != "") {
				t.Fatalf("got %q (%q), want %q", got, why, tt.want)
			}
		})
	}
}

// TestDoubtedLimitQuotesThePointsLimit: with the local engine a point on fewer nodes has a
// lower limit than the system's - the devices of its own nodes - and the second look quotes
// that one, the limit the point is above.
func TestDoubtedLimitQuotesThePointsLimit(t *testing.T) {
	h, err := limits.Uniform{ServerNodes: 4, Local: true, DeviceWriteBytesPerSecond: new(1e9), DeviceReadBytesPerSecond: new(2e9)}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limits.Compute(h)
	if err != nil {
		t.Fatal(err)
	}
	an, err := limits.AnalyzeSweep(h, lim, []limits.Point{{Nodes: 1, ProcessesPerNode: 1, Operation: limits.Write, BytesPerSecond: 1.2e9},
		{Nodes: 4, ProcessesPerNode: 1, Operation: limits.Write, BytesPerSecond: 3.6e9}}, limits.SweepOptions{Tolerance: measuredLimitTolerance})
	if err != nil {
		t.Fatal(err)
	}
	comp := &v1alpha1.ComponentLimits{Write: &v1alpha1.OperationLimit{LimitBytesPerSecond: 4e9, Bottleneck: "devices"}}
	why, got := doubtedLimit(comp, an)
	if want := "the sweep's write figure at 1 node x 1 process, 1.2 GB/s, is above its measured limit of 1 GB/s (devices of 1 nodes), set by the devices"; got != limits.ComponentDevices || why != want {
		t.Errorf("got %q %q, want the devices and %q", got, why, want)
	}

	// A shared file system whose devices set the system's limit, where a point on one node is
	// above what its one client link moves: the links are measured again, not the devices.
	h, err = limits.Uniform{ClientNodes: 4, ProcessesPerNode: 1, ClientLink: &limits.Link{RateBitsPerSecond: 1e9, Encoding: limits.EncodingNone},
		ServerNodes: 4, ServerLink: &limits.Link{RateBitsPerSecond: 1e9, Encoding: limits.EncodingNone}, DevicesPerNode: 1,
		DeviceWriteBytesPerSecond: new(100e6), DeviceReadBytesPerSecond: new(200e6), Colocated: true}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if lim, err = limits.Compute(h); err != nil || lim.Write.Bottleneck != limits.ComponentDevices {
		t.Fatalf("write limit %+v (%v): want the devices", lim.Write, err)
	}
	if an, err = limits.AnalyzeSweep(h, lim, []limits.Point{{Nodes: 1, ProcessesPerNode: 1, Operation: limits.Write, BytesPerSecond: 200e6},
		{Nodes: 4, ProcessesPerNode: 1, Operation: limits.Write, BytesPerSecond: 390e6}}, limits.SweepOptions{Tolerance: measuredLimitTolerance}); err != nil {
		t.Fatal(err)
	}
	comp.Write = &v1alpha1.OperationLimit{LimitBytesPerSecond: int64(lim.Write.Limit.Value()), Bottleneck: "devices"}
	why, got = doubtedLimit(comp, an)
	if got != limits.ComponentNetwork || !strings.Contains(why, "(links of 1 client nodes), set by the network") {
		t.Errorf("got %q %q, want the network, named as what sets the point's limit", got, why)
	}
}

// TestDeviceFarBelowKnown: a device of this burst buffer's own probe far below what it is
// known to do - the lower of its documented figure and the best its node's probes measured
// alone - is measured again; a reused one (its probe had the node to itself) is not.
func TestDeviceFarBelowKnown(t *testing.T) {
	fig := measuredFigure
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

// TestLinkFarBelowDocumented: a link that sets a limit, measured far below what TCP moves at
// its documented rate, is measured again; at TCP's share of its rate, or bounding nothing, it
// is not.
func TestLinkFarBelowDocumented(t *testing.T) {
	link, bound := measuredFigure, boundBy
	pair := func(write string, docA, docB, got int64) *v1alpha1.ComponentLimits {
		return &v1alpha1.ComponentLimits{Write: bound(write), Read: bound("devices"), Nodes: []v1alpha1.NodeComponents{
			{Name: "a", Network: link(docA, got)}, {Name: "b", Network: link(docB, got)}}}
	}
	// A 200 Mbit/s link (25 MB/s) that read 16.13 MB/s sets a network-bound limit.
	if msg := linkFarBelowDocumented(pair("network", 25e6, 25e6, 16.13e6)); msg != "the link between a and b measured 16.13 MB/s, 65% of the documented 25 MB/s (TCP moves about 94% of a link's rate)" {
		t.Errorf("got %q", msg)
	}
	for _, tt := range []struct {
		name string
		comp *v1alpha1.ComponentLimits
		want bool
	}{
		{"at what TCP moves over the link", pair("network", 25e6, 25e6, 23.5e6), false},
		{"just over the share", pair("network", 25e6, 25e6, 22.4e6), false},
		{"just under the share", pair("network", 25e6, 25e6, 22.2e6), true},
		{"through the servers' links", pair("servers", 25e6, 25e6, 16e6), true},
		{"bounding nothing: a device-bound limit", pair("devices", 25e6, 25e6, 16e6), false},
		{"a pair judged by its slower end", pair("network", 125e6, 25e6, 23e6), false},
		{"no documented rate", pair("network", 0, 0, 1e6), false},
		{"no stage 2", nil, false},
		{"the read limit set by the clients' links", &v1alpha1.ComponentLimits{Write: bound("devices"), Read: bound("clients"), Nodes: []v1alpha1.NodeComponents{
			{Name: "a", Network: link(125e6, 117e6)}, {Name: "b", Network: link(125e6, 117e6)}, {Name: "c", Network: link(125e6, 60e6)}}}, true},
	} {
		if msg := linkFarBelowDocumented(tt.comp); (msg != "") != tt.want {
			t.Errorf("%s: got %q, want a second look %v", tt.name, msg, tt.want)
		}
	}
	three := &v1alpha1.ComponentLimits{Write: bound("network"), Nodes: []v1alpha1.NodeComponents{
		{Name: "a", Network: link(125e6, 117e6)}, {Name: "b", Network: link(125e6, 117e6)}, {Name: "c", Network: link(125e6, 60e6)}}}
	if msg := linkFarBelowDocumented(three); msg != "node c's link measured 60 MB/s, 48% of the documented 125 MB/s (TCP moves about 94% of a link's rate)" {
		t.Errorf("three nodes: got %q", msg)
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

// measuredFigure is a component figure that measured got, documented doc (0: undocumented).
func measuredFigure(doc, got int64) *v1alpha1.ComponentFigure {
	f := &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: &got}
	if doc > 0 {
		f.DocumentedBytesPerSecond = &doc
	}
	return f
}

// boundBy is a stage-2 limit whose bottleneck is b.
func boundBy(b string) *v1alpha1.OperationLimit {
	return &v1alpha1.OperationLimit{LimitBytesPerSecond: 1, Bottleneck: b}
}

// TestNodeWroteAboveDevice: with the local engine, a node whose processes wrote more in the
// sweep's best point than its device probe said the device does (beyond the tolerance) has its
// device measured again, even when the sweep as a whole stays under the limit; not with
// BeeGFS, whose processes write to every node's targets.
func TestNodeWroteAboveDevice(t *testing.T) {
	fig := measuredFigure
	rate := func(v int64) *int64 { return &v }
	bb := &v1alpha1.BurstBuffer{Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal}}
	bb.Status.Limits = &v1alpha1.LimitsStatus{
		Components: &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{
			{Name: "worker-1", DeviceWrite: fig(300e6, 303e6)},
			{Name: "worker-2", DeviceWrite: fig(300e6, 125.5e6)},
		}},
		// The sweep sums to 437.9 MB/s, within 5% of the 428.5 MB/s limit: worker-1 wrote
		// under its figure, worker-2 above its own.
		Monitoring: &v1alpha1.MonitoringLimits{Nodes: []v1alpha1.NodeMonitoring{
			{Name: "worker-1", WriteBytesPerSecond: rate(290.4e6)},
			{Name: "worker-2", WriteBytesPerSecond: rate(147.5e6)},
		}},
	}
	if node, msg := nodeWroteAboveDevice(bb); node != "worker-2" || msg != "node worker-2's processes wrote 147.5 MB/s in the sweep's best point, 18% above its device-write figure of 125.5 MB/s" {
		t.Errorf("got %q %q", node, msg)
	}
	bb.Status.Limits.Monitoring.Nodes[1].WriteBytesPerSecond = rate(131e6) // 4% above: within the tolerance
	if node, msg := nodeWroteAboveDevice(bb); node != "" {
		t.Errorf("within the tolerance: got %q %q", node, msg)
	}
	bb.Status.Limits.Monitoring.Nodes[1].WriteBytesPerSecond = rate(147.5e6)
	bb.Spec.Engine = v1alpha1.EngineBeeGFS
	if node, msg := nodeWroteAboveDevice(bb); node != "" {
		t.Errorf("beegfs: got %q %q", node, msg)
	}
	bb.Spec.Engine = v1alpha1.EngineLocal
	bb.Status.Limits.Monitoring = nil
	if node, _ := nodeWroteAboveDevice(bb); node != "" {
		t.Errorf("no stage 4: got %q", node)
	}
}

// TestDeviceAboveDocumented: a device of this burst buffer's own probe that read more than 5%
// above its documented figure is measured again (a 2 s probe that read 161.8 MB/s from a device
// capped at 150 MB/s); one within the tolerance, a reused one or one without a documented
// figure is not.
func TestDeviceAboveDocumented(t *testing.T) {
	fig := measuredFigure
	comp := &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{
		{Name: "worker-1", DeviceWrite: fig(150e6, 151e6), DeviceRead: fig(300e6, 300.5e6)},
		{Name: "worker-2", DeviceWrite: fig(150e6, 161.836433e6), DeviceRead: fig(300e6, 300.2e6)},
	}}
	if node, msg := deviceAboveDocumented(comp); node != "worker-2" || msg != "node worker-2's device write measured 161.836 MB/s, 8% above the documented 150 MB/s" {
		t.Errorf("got %q %q", node, msg)
	}
	comp.Nodes[1].DeviceWrite = fig(150e6, 157e6)
	if node, msg := deviceAboveDocumented(comp); node != "" {
		t.Errorf("4.7%% above, within the tolerance: got %q %q", node, msg)
	}
	comp.Nodes[0].DeviceRead = fig(300e6, 330e6)
	if node, _ := deviceAboveDocumented(comp); node != "worker-1" {
		t.Errorf("a read 10%% above: got %q, want worker-1", node)
	}
	comp.Nodes[0].Reused = true
	if node, _ := deviceAboveDocumented(comp); node != "" {
		t.Errorf("a reused figure: got %q", node)
	}
	comp.Nodes[1].DeviceWrite = fig(0, 400e6)
	if node, _ := deviceAboveDocumented(comp); node != "" {
		t.Errorf("no documented figure: got %q", node)
	}
	if node, _ := deviceAboveDocumented(nil); node != "" {
		t.Errorf("no stage 2: got %q", node)
	}
}
