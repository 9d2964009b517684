package limits

import (
	"reflect"
	"strings"
	"testing"
)

func TestDisturbance(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name string
		runs []RunConditions
		want []string
	}{
		{"nothing beside", []RunConditions{{Node: "a", Device: "loop1", DeviceBytes: 292 * mib, OwnBytes: 290 * mib}, {Node: "b"}}, nil},
		{"other pods, sorted by node", []RunConditions{{Node: "b", OtherPods: []string{"ns/x-prep-1"}}, {Node: "a", OtherPods: []string{"ns/y-sweep-0-0"}}},
			[]string{"node a: ns/y-sweep-0-0", "node b: ns/x-prep-1"}},
		{"foreign bytes above share and floor", []RunConditions{{Node: "a", Device: "loop1", DeviceBytes: 400 * mib, OwnBytes: 290 * mib}},
			[]string{"node a: loop1 moved 115.3 MB that the run did not (304.1 MB of its own)"}},
		{"journal and metadata: under the floor", []RunConditions{{Node: "a", Device: "nvme0n1", DeviceBytes: 300 * mib, OwnBytes: 290 * mib}}, nil},
		{"a small run: under the share though above the floor", []RunConditions{{Node: "a", Device: "sda", DeviceBytes: 20400 * mib, OwnBytes: 20000 * mib}}, nil},
		{"no device known: no byte check", []RunConditions{{Node: "a", DeviceBytes: 900 * mib, OwnBytes: 290 * mib}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Disturbance(tt.runs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestForeignLinkTraffic: a link probe's own headers, retransmits and acknowledgements of
// what its node received are not other work; a flow beside it that takes a sixth of the link
// or more is.
func TestForeignLinkTraffic(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name                string
		iface               string
		sent, received, own float64
		retransmits         int64
		want                string
	}{
		{"headers and acknowledgements at a 1500-byte MTU", "eth0", 1000*mib*1.046 + 1000*mib*0.046, 1000 * mib, 1000 * mib, 0, ""},
		{"a slow link out, a fast one in: acknowledgements of ten times its own", "eth0", 100*mib*1.06 + 1000*mib*0.046, 1000 * mib, 100 * mib, 0, ""},
		{"retransmits are its own", "eth0", 1250 * mib, 0, 1000 * mib, 100000, ""},
		{"another flow beside it", "eth0", 1600 * mib, 0, 1000 * mib, 0, "eth0 sent 629.1 MB that the probe did not (1.0 GB of its own, while it received 0 B)"},
		{"another flow beside it, the ring's pair arriving", "eth0", 1600*mib + 0.06*1000*mib, 1000 * mib, 1000 * mib, 0, "eth0 sent 629.1 MB that the probe did not (1.0 GB of its own, while it received 1.0 GB)"},
		{"a short probe: above the share, under the floor", "eth0", 30 * mib, 0, 15 * mib, 0, ""},
		{"no interface known: no byte check", "", 5000 * mib, 0, 1000 * mib, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ForeignLinkTraffic(tt.iface, tt.sent, tt.received, tt.own, tt.retransmits); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSweepRechecks(t *testing.T) {
	// Two nodes, each device capped at 150 MB/s write and 300 MB/s read, as measured in
	// stage 2 on the testbed: the limit is 300 / 600 MB/s.
	h, lim := mustCompute(t, Uniform{ServerNodes: 2, Local: true, DeviceWriteBytesPerSecond: ptr(150e6), DeviceReadBytesPerSecond: ptr(300e6)})
	p1, p4 := SweepPoint{2, 1}, SweepPoint{2, 4}
	tests := []struct {
		name     string
		rounds   map[SweepPoint]PointRound
		measured bool
		want     []Recheck // messages are checked for a fragment only
	}{
		{"a lone burst buffer's sweep", map[SweepPoint]PointRound{p1: {Write: 293e6, Read: 590e6}, p4: {Write: 299e6, Read: 600e6}}, true, nil},
		{"the issue's 233.554 MB/s at 2 x 4 (0.78 of the limit)", map[SweepPoint]PointRound{p1: {Write: 220e6, Read: 590e6}, p4: {Write: 233.554e6, Read: 600e6}}, true,
			[]Recheck{{Point: p4, Reason: RecheckFarBelowLimit, Message: "78% of the 300 MB/s"}}},
		{"just above the share", map[SweepPoint]PointRound{p4: {Write: 286e6, Read: 590e6}}, true, nil},
		{"just under the share", map[SweepPoint]PointRound{p4: {Write: 284e6, Read: 590e6}}, true,
			[]Recheck{{Point: p4, Reason: RecheckFarBelowLimit}}},
		{"against documented figures: not remeasured for being low", map[SweepPoint]PointRound{p4: {Write: 200e6, Read: 400e6}}, false, nil},
		{"a disturbed best point, whatever the limit", map[SweepPoint]PointRound{p1: {Write: 250e6, Read: 590e6}, p4: {Write: 299e6, Read: 600e6, DisturbedBy: []string{"node a: ns/x-prep-1"}}}, false,
			[]Recheck{{Point: p4, Reason: RecheckNodeBusy, Message: "node a: ns/x-prep-1"}}},
		{"a disturbed point that is not the best is not remeasured", map[SweepPoint]PointRound{p1: {Write: 250e6, Read: 500e6, DisturbedBy: []string{"x"}}, p4: {Write: 299e6, Read: 600e6}}, true, nil},
		{"best write and best read at different points, both low", map[SweepPoint]PointRound{p1: {Write: 200e6, Read: 500e6}, p4: {Write: 250e6, Read: 400e6}}, true,
			[]Recheck{{Point: p4, Reason: RecheckFarBelowLimit, Message: "write"}, {Point: p1, Reason: RecheckFarBelowLimit, Message: "read"}}},
		{"one point best and low for both operations: once", map[SweepPoint]PointRound{p4: {Write: 250e6, Read: 400e6}}, true,
			[]Recheck{{Point: p4, Reason: RecheckFarBelowLimit, Message: "write"}}},
		{"no points", nil, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SweepRechecks(h, lim, tt.rounds, tt.measured)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %d recheck(s) %+v", got, len(tt.want), tt.want)
			}
			for i := range got {
				if got[i].Point != tt.want[i].Point || got[i].Reason != tt.want[i].Reason || !strings.Contains(got[i].Message, tt.want[i].Message) {
					t.Errorf("recheck %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSweepRechecksFewerNodes: a point on fewer nodes than the system is judged against what
// its nodes can move (PointLimit), not the whole limit.
func TestSweepRechecksFewerNodes(t *testing.T) {
	h, lim := mustCompute(t, Uniform{ServerNodes: 2, Local: true, DeviceWriteBytesPerSecond: ptr(150e6), DeviceReadBytesPerSecond: ptr(300e6)})
	one := SweepPoint{1, 4}
	if got := SweepRechecks(h, lim, map[SweepPoint]PointRound{one: {Write: 149e6, Read: 299e6}}, true); got != nil {
		t.Errorf("one node at its device's cap: got %+v, want nothing", got)
	}
	if got := SweepRechecks(h, lim, map[SweepPoint]PointRound{one: {Write: 120e6, Read: 299e6}}, true); len(got) != 1 || !strings.Contains(got[0].Message, "80% of the 150 MB/s") {
		t.Errorf("one node at 0.8 of its device: got %+v", got)
	}
}

func TestSettled(t *testing.T) {
	tests := []struct {
		name        string
		rounds      []PointRound
		write, read float64
		disturbed   []string
	}{
		{"one round", []PointRound{{Write: 290, Read: 600}}, 290, 600, nil},
		{"the higher of each operation", []PointRound{{Write: 233, Read: 600}, {Write: 299, Read: 590}}, 299, 600, nil},
		{"disturbed, then clean", []PointRound{{Write: 233, Read: 600, DisturbedBy: []string{"x"}}, {Write: 299, Read: 600}}, 299, 600, nil},
		{"clean, then disturbed and higher: the higher stands, not flagged", []PointRound{{Write: 280, Read: 600}, {Write: 299, Read: 600, DisturbedBy: []string{"x"}}}, 299, 600, nil},
		{"disturbed twice: both named", []PointRound{{Write: 233, Read: 600, DisturbedBy: []string{"b", "a"}}, {Write: 250, Read: 610, DisturbedBy: []string{"c", "a"}}},
			250, 610, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, r, d := Settled(tt.rounds)
			if w != tt.write || r != tt.read || !reflect.DeepEqual(d, tt.disturbed) {
				t.Errorf("got %g, %g, %q; want %g, %g, %q", w, r, d, tt.write, tt.read, tt.disturbed)
			}
		})
	}
}

func TestRecheckComponent(t *testing.T) {
	for b, want := range map[Component]Component{
		ComponentDevices: ComponentDevices, ComponentNetwork: ComponentNetwork, ComponentServers: ComponentNetwork,
		ComponentClients: ComponentNetwork, ComponentUnknown: "", "": "",
	} {
		if got := RecheckComponent(b); got != want {
			t.Errorf("RecheckComponent(%q) = %q, want %q", b, got, want)
		}
	}
}

func TestFarBelowDocumented(t *testing.T) {
	for _, tc := range []struct {
		measured, documented float64
		want                 bool
	}{{150e6, 300e6, true}, {133e6, 150e6, true}, {136e6, 150e6, false}, {150e6, 0, false}, {0, 150e6, false}} {
		if got := FarBelowDocumented(tc.measured, tc.documented, 0.9); got != tc.want {
			t.Errorf("FarBelowDocumented(%g, %g) = %v, want %v", tc.measured, tc.documented, got, tc.want)
		}
	}
}
