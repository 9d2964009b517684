package apibridge

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
)

// maxNotes bounds status.nodes[].hardware.notes (the CRD's MaxItems).
const maxNotes = 8

// EncodingFromLabel reads a link encoding from a label value. Label values cannot hold "/",
// so "64b66b" stands for 64b/66b; empty is none.
func EncodingFromLabel(v string) v1alpha1.LinkEncoding {
	if v == "" {
		return v1alpha1.EncodingNone
	}
	if i := strings.Index(v, "b"); i > 0 && !strings.Contains(v, "/") && i+1 < len(v) {
		return v1alpha1.LinkEncoding(v[:i+1] + "/" + v[i+1:])
	}
	return v1alpha1.LinkEncoding(v)
}

// SpecLink is the link spec.hardware documents for a burst buffer's nodes: the servers'
// link, else the clients' (co-located nodes have one link). nil when it gives none.
func SpecLink(hw *v1alpha1.HardwareSpec) *v1alpha1.LinkHardware {
	switch {
	case hw == nil:
		return nil
	case hw.Servers != nil && hw.Servers.Link != nil:
		return hw.Servers.Link
	case hw.Clients != nil && hw.Clients.Link != nil:
		return hw.Clients.Link
	}
	return nil
}

// NodeLink is one node's documented link and where it came from, the first that gives one:
// spec.hardware (spec), the node's hardware.beeburst.io/link-* labels (label), the speed the
// device probe read from the node's sysfs (discovered; a data rate, so encoding none). nil
// and unknown when none does. An unparsable or non-positive label counts as absent.
func NodeLink(spec *v1alpha1.HardwareSpec, labels map[string]string, nh *v1alpha1.NodeHardware) (*v1alpha1.LinkHardware, string) {
	if l := SpecLink(spec); l != nil {
		return l.DeepCopy(), v1alpha1.SourceSpec
	}
	if q, err := resource.ParseQuantity(labels[v1alpha1.LabelLinkRateBitsPerSecond]); err == nil && q.Sign() > 0 {
		return &v1alpha1.LinkHardware{RateBitsPerSecond: q, Encoding: EncodingFromLabel(labels[v1alpha1.LabelLinkEncoding])}, v1alpha1.SourceLabel
	}
	if nh != nil && nh.InterfaceBitsPerSecond != nil && nh.InterfaceBitsPerSecond.Sign() > 0 {
		return &v1alpha1.LinkHardware{RateBitsPerSecond: nh.InterfaceBitsPerSecond.DeepCopy(), Encoding: v1alpha1.EncodingNone}, v1alpha1.SourceDiscovered
	}
	return nil, v1alpha1.SourceUnknown
}

// NeedsLinkDiscovery says whether a node's link is documented nowhere, so the device probe
// should read it (which takes the host network).
func NeedsLinkDiscovery(spec *v1alpha1.HardwareSpec, labels map[string]string) bool {
	_, src := NodeLink(spec, labels, nil)
	return src == v1alpha1.SourceUnknown
}

// SlowestLink is the link stage 1 models identical nodes with: the one with the smallest data
// rate (after encoding) among the nodes' links, with its source and node. false when a node
// has none: stage 1 then leaves the link unknown rather than guess from some of the nodes.
func SlowestLink(links []*v1alpha1.LinkHardware, sources, nodes []string) (*v1alpha1.LinkHardware, string, string, bool) {
	var best *v1alpha1.LinkHardware
	bestRate, bestSrc, bestNode := 0.0, "", ""
	for i, l := range links {
		if l == nil {
			return nil, "", "", false
		}
		rate, err := LinkDataRate(l)
		if err != nil {
			return nil, "", "", false
		}
		if best == nil || rate < bestRate {
			best, bestRate, bestSrc, bestNode = l, rate, sources[i], nodes[i]
		}
	}
	return best, bestSrc, bestNode, best != nil
}

// ApplyDiscovered writes what a device probe discovered into a node's status: interface and
// speed, device, model, backing file, file system size, notes. Fields the probe did not read
// are cleared, so the status shows the latest probe's view and nothing older.
func ApplyDiscovered(nh *v1alpha1.NodeHardware, h *bench.Hardware) {
	nh.Interface, nh.InterfaceBitsPerSecond = "", nil
	nh.Device, nh.DeviceModel, nh.BackingFile, nh.Capacity, nh.Notes = "", "", "", nil, nil
	if h == nil {
		return
	}
	nh.Interface = h.Interface
	if h.LinkMbps > 0 {
		nh.InterfaceBitsPerSecond = resource.NewQuantity(h.LinkMbps*1_000_000, resource.DecimalSI)
	}
	nh.Device, nh.DeviceModel, nh.BackingFile = h.Device, h.Model, h.BackingFile
	if h.FileSystemBytes > 0 {
		// Whole MiB, as status.capacity: "3730Mi" reads at a glance.
		nh.Capacity = resource.NewQuantity(h.FileSystemBytes&^(1<<20-1), resource.BinarySI)
	}
	for _, n := range h.Notes {
		if len(nh.Notes) == maxNotes {
			break
		}
		if len(n) > 300 {
			n = n[:297] + "..."
		}
		nh.Notes = append(nh.Notes, n)
	}
}

// DescribeNode is one line about a node's hardware for `kubectl beeburst limits`, e.g.
// "link 10G (discovered, eth0); device nvme0n1p2: Samsung SSD 980 PRO 1TB, 1862Gi".
func DescribeNode(nh *v1alpha1.NodeHardware) string {
	if nh == nil {
		return ""
	}
	var parts []string
	switch {
	case nh.LinkBitsPerSecond != nil:
		s := fmt.Sprintf("link %s (%s", nh.LinkBitsPerSecond, nh.LinkSource)
		if nh.Interface != "" && nh.LinkSource == v1alpha1.SourceDiscovered {
			s += ", " + nh.Interface
		}
		parts = append(parts, s+")")
	case nh.LinkSource != "":
		parts = append(parts, "link "+nh.LinkSource)
	}
	if nh.Device != "" {
		d := "device " + nh.Device
		var what []string
		if nh.DeviceModel != "" {
			what = append(what, nh.DeviceModel)
		}
		if nh.BackingFile != "" {
			what = append(what, nh.BackingFile)
		}
		if nh.Capacity != nil {
			what = append(what, nh.Capacity.String())
		}
		if len(what) > 0 {
			d += ": " + strings.Join(what, ", ")
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, "; ")
}
