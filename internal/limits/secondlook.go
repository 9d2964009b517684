package limits

import (
	"fmt"
	"sort"
	"strings"
)

// A second look: interference (another burst buffer's pods, a busy shared disk, a slow pod
// start beside the run) only lowers what a capped device or link moves, never raises it. So
// a figure that lies far below what the rest of the run says the hardware does, or one
// measured while something else ran on its node, is measured once more before it is
// published, and the higher of the two rounds stands. A figure above its limit is the
// opposite case: the limit's own component is measured again (RecheckComponent).

// RemeasureBelowShare: a best sweep point under this share of its stage-2 limit is measured
// a second time. A lone burst buffer on the testbed reads 0.98-1.00 of its measured limit;
// five created at once read down to 0.77 of it when their neighbours' pods ran beside them.
const RemeasureBelowShare = 0.95

// TCPGoodputShare is the share of a link's data rate that one TCP stream moves at a 1500-byte
// MTU: 1448 payload bytes in every 1538 on the wire (Ethernet framing and gap, IP and TCP
// headers with timestamps). A link probe (iperf3) at its documented rate reads this share of it.
const TCPGoodputShare = 1448.0 / 1538

// Reasons for a second measurement of a sweep point (the API's v1alpha1.Remeasure*).
const (
	RecheckFarBelowLimit = "FarBelowLimit"
	RecheckNodeBusy      = "NodeBusy"
)

// Foreign device traffic: a run counts as disturbed when its node's device moved more than
// ForeignShare of the run's own bytes beyond them, and more than ForeignFloor bytes. File
// system metadata and the journal move a few MiB in a run of hundreds.
const (
	ForeignShare = 0.05
	ForeignFloor = 16 << 20
)

// Foreign link traffic: a link probe counts as disturbed when the interface it sent through
// sent more than ForeignLinkShare of the probe's own payload beyond what the probe itself
// puts on the wire, and more than ForeignFloor bytes. What the probe puts there: its payload
// and retransmits (TCPSegmentPayload each); its headers, within the share (none to 4.6% at a
// 1500-byte MTU over IPv4, 6% over IPv6, as the driver counts a segmentation-offloaded
// packet); and its acknowledgements of what the node received meanwhile - the ring's pair
// that sends to the node, at whatever rate its link allows - at most LinkAckShare of it (one
// acknowledgement of 66-86 bytes per one or two segments received).
const (
	ForeignLinkShare  = 0.15
	LinkAckShare      = 0.06
	TCPSegmentPayload = 1448
)

// ForeignLinkTraffic says what a link probe's interface sent beside the probe that the probe
// did not: sent and received are the interface's counts while the probe ran, own the bytes
// the probe moved and retransmits its retransmitted segments. "" when nothing beyond the
// probe's own (or the probe could not tell: no interface).
func ForeignLinkTraffic(iface string, sent, received, own float64, retransmits int64) string {
	if iface == "" {
		return ""
	}
	own += float64(retransmits) * TCPSegmentPayload
	if extra := sent - own - LinkAckShare*received; extra > ForeignFloor && extra > ForeignLinkShare*own {
		return fmt.Sprintf("%s sent %s that the probe did not (%s of its own, while it received %s)", iface, FormatBytes(extra), FormatBytes(own), FormatBytes(received))
	}
	return ""
}

// RunConditions are the conditions of one node's part of a measurement.
type RunConditions struct {
	Node string
	// OtherPods are other burst buffers' pods (namespace/name) that ran on the node while
	// the run measured.
	OtherPods []string
	// Device is the node's device under the burst buffer, "" when the run could not tell;
	// DeviceBytes are the bytes it read and wrote while the run measured, OwnBytes the
	// bytes the run itself read and wrote.
	Device      string
	DeviceBytes float64
	OwnBytes    float64
}

// Disturbance names what disturbed a measurement, one entry per finding, sorted; none when
// every node was the run's own.
func Disturbance(runs []RunConditions) []string {
	var out []string
	for _, r := range runs {
		for _, p := range r.OtherPods {
			out = append(out, fmt.Sprintf("node %s: %s", r.Node, p))
		}
		if f := ForeignTraffic(r.Device, r.DeviceBytes, r.OwnBytes); f != "" {
			out = append(out, fmt.Sprintf("node %s: %s", r.Node, f))
		}
	}
	sort.Strings(out)
	return out
}

// ForeignTraffic says what a node's device moved beside a run that the run did not, "" when
// nothing beyond file system metadata and the journal (or the run could not tell: no device).
func ForeignTraffic(device string, deviceBytes, ownBytes float64) string {
	if device == "" {
		return ""
	}
	if extra := deviceBytes - ownBytes; extra > ForeignFloor && extra > ForeignShare*ownBytes {
		return fmt.Sprintf("%s moved %s that the run did not (%s of its own)", device, FormatBytes(extra), FormatBytes(ownBytes))
	}
	return ""
}

// PointRound is one measurement of a sweep point: its write and read aggregates and what
// disturbed it.
type PointRound struct {
	Write, Read float64
	DisturbedBy []string
}

// Recheck is a sweep point to measure again, and why.
type Recheck struct {
	Point   SweepPoint
	Reason  string
	Message string
}

// SweepRechecks are the points of a first round to measure a second time: for each
// operation, its best point when it was disturbed (RecheckNodeBusy) or, against a limit that
// stage 2 measured, under RemeasureBelowShare of the point's limit (RecheckFarBelowLimit). A
// point that is best for both operations is measured again once. h and lim are the stage-2
// hardware and limits the sweep is judged against; measured is false when they are stage 1's
// documented figures, which a real file system may miss by far (and stage 2 says so).
func SweepRechecks(h Hardware, lim Limits, rounds map[SweepPoint]PointRound, measured bool) []Recheck {
	if len(rounds) == 0 {
		return nil
	}
	keys := make([]SweepPoint, 0, len(rounds))
	for p := range rounds {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(i, j int) bool { return pointLess(keys[i], keys[j]) })
	var out []Recheck
	seen := map[SweepPoint]bool{}
	for _, op := range Operations {
		var pts []Point
		for _, p := range keys {
			r := rounds[p]
			v := r.Write
			if op == Read {
				v = r.Read
			}
			if v > 0 {
				pts = append(pts, Point{Nodes: p.Nodes, ProcessesPerNode: p.ProcessesPerNode, Operation: op, BytesPerSecond: v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		best, _ := BestAndPlateau(pts, DefaultPlateauShare)
		sp := SweepPoint{best.Nodes, best.ProcessesPerNode}
		if seen[sp] {
			continue
		}
		if d := rounds[sp].DisturbedBy; len(d) > 0 {
			seen[sp] = true
			out = append(out, Recheck{Point: sp, Reason: RecheckNodeBusy, Message: fmt.Sprintf(
				"the best %s point %s (%s) was measured while other work ran beside it: %s", op, sp,
				FormatBytesPerSecond(best.BytesPerSecond), strings.Join(d, "; "))})
			continue
		}
		if !measured {
			continue
		}
		pl := PointLimit(h, lim.For(op), best.Nodes)
		if !pl.Known() || pl.v <= 0 || best.BytesPerSecond >= RemeasureBelowShare*pl.v {
			continue
		}
		seen[sp] = true
		out = append(out, Recheck{Point: sp, Reason: RecheckFarBelowLimit, Message: fmt.Sprintf(
			"the best %s point %s measured %s, %.0f%% of the %s that stage 2 measured the hardware to give (under %.0f%%)",
			op, sp, FormatBytesPerSecond(best.BytesPerSecond), 100*best.BytesPerSecond/pl.v, pl, 100*RemeasureBelowShare)})
	}
	return out
}

func pointLess(a, b SweepPoint) bool {
	if a.Nodes != b.Nodes {
		return a.Nodes < b.Nodes
	}
	return a.ProcessesPerNode < b.ProcessesPerNode
}

// Settled is a point's figures over its rounds: each operation's higher round, and what
// disturbed the point when every round was disturbed (nil when one round had its nodes to
// itself).
func Settled(rounds []PointRound) (write, read float64, disturbedBy []string) {
	clean := false
	for _, r := range rounds {
		write, read = max(write, r.Write), max(read, r.Read)
		clean = clean || len(r.DisturbedBy) == 0
		disturbedBy = mergeSorted(disturbedBy, r.DisturbedBy)
	}
	if clean {
		return write, read, nil
	}
	return write, read, disturbedBy
}

// mergeSorted is the sorted union of a and b.
func mergeSorted(a, b []string) []string {
	set := map[string]bool{}
	for _, s := range append(append([]string{}, a...), b...) {
		set[s] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// RecheckComponent is the stage-2 component to measure again when a sweep point measured above
// a limit with this bottleneck: the devices for a device-bound limit, the links for one set
// by the network, the servers' links or the clients' links. None (""): nothing measures
// that limit again.
func RecheckComponent(bottleneck Component) Component {
	switch bottleneck {
	case ComponentDevices:
		return ComponentDevices
	case ComponentNetwork, ComponentServers, ComponentClients:
		return ComponentNetwork
	}
	return ""
}

// FarBelowDocumented: a measured component figure under belowShare of its documented one,
// which stage 2 measures once more before publishing it (a disturbed probe reads low; a
// second low reading is the component's real figure, and BelowDocumented says so).
func FarBelowDocumented(measured, documented, belowShare float64) bool {
	return documented > 0 && measured > 0 && measured < belowShare*documented
}
