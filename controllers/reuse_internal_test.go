package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
)

// A validation is kept for reuse only while its nodes' documented figures are those stage 2
// judged them by: a node relabelled during the measurement names itself, a spec that
// documents the devices makes the labels irrelevant, and a node whose link was not measured
// is not judged by its link label.
func TestDocumentedChanged(t *testing.T) {
	labels := func(write, link string) map[string]string {
		l := map[string]string{v1alpha1.LabelDiskWriteBytesPerSecond: write, v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
		if link != "" {
			l[v1alpha1.LabelLinkRateBitsPerSecond] = link
		}
		return l
	}
	node := func(name string, l map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	// published is bb's stage 2 as judged by the nodes then, the links measured or not.
	published := func(bb *v1alpha1.BurstBuffer, then map[string]*corev1.Node, links bool) {
		comp := &v1alpha1.ComponentLimits{}
		for _, name := range []string{"a", "b"} {
			w, _ := apibridge.DocumentedDevice(bb, then[name], true)
			r, _ := apibridge.DocumentedDevice(bb, then[name], false)
			nc := v1alpha1.NodeComponents{Name: name,
				DeviceWrite: &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: w}, DeviceRead: &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: r}}
			if links {
				l, _ := apibridge.DocumentedLink(bb, then[name], name)
				nc.Network = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: l}
			}
			comp.Nodes = append(comp.Nodes, nc)
		}
		bb.Status.Limits = &v1alpha1.LimitsStatus{Components: comp}
	}
	then := map[string]*corev1.Node{"a": node("a", labels("300M", "10G")), "b": node("b", labels("300M", "10G"))}
	for _, tc := range []struct {
		name  string
		now   map[string]*corev1.Node
		spec  bool // spec.hardware documents the devices
		links bool
		// discovered: the device probe found each node's interface speed (status.nodes), which
		// documents a link no label names.
		discovered bool
		want       string // a part of the reason; "" for none
	}{
		{name: "nothing changed", now: then, links: true},
		{name: "a device relabelled", now: map[string]*corev1.Node{"a": then["a"], "b": node("b", labels("250M", "10G"))}, links: true,
			want: "node b's documented device write is 250 MB/s now; stage 2 judged it by 300 MB/s"},
		{name: "a link relabelled", now: map[string]*corev1.Node{"a": node("a", labels("300M", "25G")), "b": then["b"]}, links: true,
			want: "node a's documented link"},
		{name: "a label removed", now: map[string]*corev1.Node{"a": node("a", labels("300M", "")), "b": then["b"]}, links: true,
			want: "link is none now"},
		{name: "links not measured: their labels do not count", now: map[string]*corev1.Node{"a": node("a", labels("300M", "25G")), "b": then["b"]}},
		{name: "the spec documents the devices: their labels do not count", spec: true, links: true,
			now: map[string]*corev1.Node{"a": then["a"], "b": node("b", labels("250M", "10G"))}},
		{name: "a node gone from the cache", now: map[string]*corev1.Node{"a": then["a"]}, links: true, want: "node b's documented device write is none now"},
		{name: "links documented by the speed the probe discovered, unchanged", links: true, discovered: true,
			now: map[string]*corev1.Node{"a": node("a", labels("300M", "")), "b": node("b", labels("300M", ""))}},
		{name: "a link label put over the discovered speed", links: true, discovered: true,
			now: map[string]*corev1.Node{"a": node("a", labels("300M", "25G")), "b": node("b", labels("300M", ""))}, want: "node a's documented link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := &v1alpha1.BurstBuffer{}
			if tc.spec {
				q := resource.MustParse("1G")
				bb.Spec.Hardware = &v1alpha1.HardwareSpec{Devices: &v1alpha1.DevicesHardware{WriteBytesPerSecond: &q, ReadBytesPerSecond: &q}}
			}
			before := then
			if tc.discovered {
				for _, name := range []string{"a", "b"} {
					bb.Status.Nodes = append(bb.Status.Nodes, v1alpha1.NodeStatus{Name: name,
						Hardware: &v1alpha1.NodeHardware{InterfaceBitsPerSecond: ptr.To(resource.MustParse("10G"))}})
				}
				before = map[string]*corev1.Node{"a": node("a", labels("300M", "")), "b": node("b", labels("300M", ""))}
			}
			published(bb, before, tc.links)
			if tc.links && bb.Status.Limits.Components.Nodes[0].Network.DocumentedBytesPerSecond == nil {
				t.Fatal("stage 2 published no documented link: nothing to compare")
			}
			got := documentedChanged(bb, func(name string) *corev1.Node { return tc.now[name] })
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("documentedChanged = %q, want %q", got, tc.want)
			}
		})
	}
}
