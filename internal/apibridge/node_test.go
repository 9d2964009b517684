package apibridge

import (
	"strings"
	"testing"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
)

func TestNodeLinkPrecedence(t *testing.T) {
	discovered := &v1alpha1.NodeHardware{InterfaceBitsPerSecond: q("25G")}
	labelled := map[string]string{v1alpha1.LabelLinkRateBitsPerSecond: "1G", v1alpha1.LabelLinkEncoding: "64b66b"}
	spec := &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Link: lnk("100G", "none")}}
	cases := []struct {
		name   string
		spec   *v1alpha1.HardwareSpec
		labels map[string]string
		nh     *v1alpha1.NodeHardware
		rate   string
		enc    v1alpha1.LinkEncoding
		source string
	}{
		{name: "spec wins", spec: spec, labels: labelled, nh: discovered, rate: "100G", enc: "none", source: v1alpha1.SourceSpec},
		{name: "servers' link before clients'", spec: &v1alpha1.HardwareSpec{Clients: spec.Clients, Servers: &v1alpha1.ServersHardware{Link: lnk("40G", "64b/66b")}},
			rate: "40G", enc: "64b/66b", source: v1alpha1.SourceSpec},
		{name: "label before discovery, with its encoding", labels: labelled, nh: discovered, rate: "1G", enc: "64b/66b", source: v1alpha1.SourceLabel},
		{name: "discovered: a data rate", nh: discovered, rate: "25G", enc: "none", source: v1alpha1.SourceDiscovered},
		{name: "a bad label counts as absent", labels: map[string]string{v1alpha1.LabelLinkRateBitsPerSecond: "fast"}, nh: discovered, rate: "25G", enc: "none", source: v1alpha1.SourceDiscovered},
		{name: "nothing", nh: &v1alpha1.NodeHardware{Interface: "eth0"}, source: v1alpha1.SourceUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, src := NodeLink(tc.spec, tc.labels, tc.nh)
			if src != tc.source {
				t.Errorf("source %s, want %s", src, tc.source)
			}
			if tc.rate == "" {
				if l != nil {
					t.Errorf("link %v, want none", l)
				}
				return
			}
			if l == nil || l.RateBitsPerSecond.Cmp(*q(tc.rate)) != 0 || l.Encoding != tc.enc {
				t.Errorf("link %v, want %s %s", l, tc.rate, tc.enc)
			}
		})
	}
	if !NeedsLinkDiscovery(nil, nil) || NeedsLinkDiscovery(nil, labelled) || NeedsLinkDiscovery(spec, nil) {
		t.Error("discovery is needed exactly where neither spec nor label gives the link")
	}
}

func TestSlowestLinkComparesDataRates(t *testing.T) {
	// 10G with 8b/10b is 8 Gbit/s of data, slower than 9G without encoding.
	links := []*v1alpha1.LinkHardware{lnk("9G", "none"), lnk("10G", "8b/10b"), lnk("25G", "none")}
	l, src, node, ok := SlowestLink(links, []string{"label", "label", "discovered"}, []string{"a", "b", "c"})
	if !ok || node != "b" || src != "label" || l.RateBitsPerSecond.Cmp(*q("10G")) != 0 {
		t.Errorf("got %v %s %s %v", l, src, node, ok)
	}
	if _, _, _, ok := SlowestLink([]*v1alpha1.LinkHardware{lnk("9G", "none"), nil}, []string{"label", "unknown"}, []string{"a", "b"}); ok {
		t.Error("a node without a link leaves the link unknown")
	}
}

func TestApplyDiscoveredAndDescribe(t *testing.T) {
	nh := &v1alpha1.NodeHardware{LinkSource: v1alpha1.SourceLabel, LinkBitsPerSecond: q("1G"), DeviceModel: "old"}
	ApplyDiscovered(nh, &bench.Hardware{LinkAddress: "10.0.0.5", Interface: "eth0", LinkMbps: 25000, Device: "nvme0n1p2",
		Model: "Samsung SSD 980 PRO 1TB", FileSystemBytes: 1000204886016 + 12345, Notes: []string{strings.Repeat("x", 400)}})
	if nh.InterfaceBitsPerSecond.String() != "25G" || nh.Interface != "eth0" || nh.Capacity.String() != "953869Mi" {
		t.Errorf("discovered %+v", nh)
	}
	if nh.LinkSource != v1alpha1.SourceLabel || nh.LinkBitsPerSecond.String() != "1G" {
		t.Error("the link stage 1 uses is not discovery's to change")
	}
	if len(nh.Notes) != 1 || len(nh.Notes[0]) != 300 {
		t.Errorf("notes are bounded: %d", len(nh.Notes[0]))
	}
	if got := DescribeNode(nh); got != "link 1G (label); device nvme0n1p2: Samsung SSD 980 PRO 1TB, 953869Mi" {
		t.Errorf("describe: %s", got)
	}
	ApplyDiscovered(nh, &bench.Hardware{Device: "loop3", Model: "loop", BackingFile: "/var/nvme.img"})
	nh.LinkSource, nh.LinkBitsPerSecond = v1alpha1.SourceUnknown, nil
	if nh.Interface != "" || nh.InterfaceBitsPerSecond != nil || nh.Capacity != nil || nh.Notes != nil {
		t.Errorf("a later probe's view replaces the earlier one: %+v", nh)
	}
	if got := DescribeNode(nh); got != "link unknown; device loop3: loop, /var/nvme.img" {
		t.Errorf("describe: %s", got)
	}
}

func TestEncodingFromLabel(t *testing.T) {
	for in, want := range map[string]v1alpha1.LinkEncoding{"64b66b": "64b/66b", "128b130b": "128b/130b", "8b10b": "8b/10b", "none": "none", "": "none"} {
		if got := EncodingFromLabel(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// `kubectl beeburst limits` shows each node's hardware and why the nodes were chosen.
func TestReportFromStatusDescribesNodes(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{}
	bb.Name, bb.Namespace, bb.Spec.Engine = "scratch", "default", v1alpha1.EngineLocal
	bb.Status.NodeSelection = "nodes [a]: the first 1 by name of 3 Ready, schedulable node(s) matching spec.nodes"
	bb.Status.Nodes = []v1alpha1.NodeStatus{{Name: "a", Roles: []string{"client", "storage"}, Hardware: &v1alpha1.NodeHardware{
		LinkBitsPerSecond: q("10G"), LinkSource: v1alpha1.SourceDiscovered, Interface: "eth0", Device: "vda"}}}
	r := ReportFromStatus(bb)
	want := []string{"node a: [client storage]; link 10G (discovered, eth0); device vda", bb.Status.NodeSelection, "no limits published yet"}
	if strings.Join(r.Summary, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary:\n%s", strings.Join(r.Summary, "\n"))
	}
}
