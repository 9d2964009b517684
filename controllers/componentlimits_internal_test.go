package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// One node's stage-2 status: documented beside measured, a second round beside the first,
// and the warnings of a busy node and of a component under its documented figure.
func TestNodeComponents(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	labelled := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		v1alpha1.LabelDiskWriteBytesPerSecond: "1000", v1alpha1.LabelDiskReadBytesPerSecond: "2000"}}}
	figs := nodecache.Figures{Node: "n1", MeasuredTime: now, DeviceWriteBytesPerSecond: 950, DeviceReadBytesPerSecond: 1000}
	busy := figs
	busy.Conditions = &nodecache.Conditions{OtherPods: []string{"a/x", "b/y"}}
	traffic := figs
	traffic.Conditions = &nodecache.Conditions{Exclusive: true, OtherTraffic: "loop1 moved 115.3 MB that the run did not (304.1 MB of its own)"}
	link := 500.0
	first := &v1alpha1.NodeComponents{Name: "n1", DeviceWrite: &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: ptr.To(int64(1200))},
		DeviceRead: &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: ptr.To(int64(900))}}
	// The first round reused another burst buffer's figures, 50 minutes old.
	reusedFirst := first.DeepCopy()
	reusedFirst.Reused, reusedFirst.MeasuredTime = true, &metav1.Time{Time: now.Add(-50 * time.Minute)}
	// Stage 2 published once more after its second round (the links' second round after the
	// devices'): each figure as the two rounds settled it, the first round's beside it.
	settled := func(w, r int64) *v1alpha1.NodeComponents {
		return &v1alpha1.NodeComponents{Name: "n1",
			DeviceWrite: &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: ptr.To(w), FirstRoundBytesPerSecond: ptr.To(int64(1200))},
			DeviceRead:  &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: ptr.To(r), FirstRoundBytesPerSecond: ptr.To(int64(900))}}
	}
	for _, tc := range []struct {
		name          string
		node          *corev1.Node
		m             nodeMeasured
		round2        bool
		write, read   int64
		docW          *int64
		network       bool
		warnings      []string // reasons, in order
		message       string   // a fragment of the first warning's message
		firstW, first int64    // the first round's figures kept (0: none)
	}{
		{name: "no documented figures", node: nil, m: nodeMeasured{node: "n1", figures: figs}, write: 950, read: 1000},
		{name: "labels: read under 90% of documented", node: labelled, m: nodeMeasured{node: "n1", figures: figs},
			write: 950, read: 1000, docW: ptr.To(int64(1000)), warnings: []string{v1alpha1.WarningBelowDocumented}},
		{name: "busy node warned, link published", node: nil, m: nodeMeasured{node: "n1", figures: busy, link: &link},
			write: 950, read: 1000, network: true, warnings: []string{v1alpha1.WarningNodeBusy}},
		{name: "foreign bytes on the device warned", node: nil, m: nodeMeasured{node: "n1", figures: traffic},
			write: 950, read: 1000, warnings: []string{v1alpha1.WarningNodeBusy}, message: "while its device was probed, the device loop1 moved 115.3 MB that the run did not"},
		{name: "busy but reused: no warning", node: nil, m: nodeMeasured{node: "n1", figures: busy, reused: true}, write: 950, read: 1000},
		{name: "second round keeps the higher", node: nil, m: nodeMeasured{node: "n1", figures: figs, first: first}, round2: true,
			write: 1200, read: 1000, firstW: 1200, first: 900},
		{name: "second round stands where the first read above the documented figure", node: labelled,
			m: nodeMeasured{node: "n1", figures: figs, first: first}, round2: true, docW: ptr.To(int64(1000)),
			write: 950, read: 1000, firstW: 1200, first: 900, warnings: []string{v1alpha1.WarningBelowDocumented}},
		{name: "second round stands where the first was reused from another burst buffer", node: nil,
			m: nodeMeasured{node: "n1", figures: figs, first: reusedFirst}, round2: true, write: 950, read: 1000, firstW: 1200, first: 900},
		{name: "published again: the second round that stood stays", node: nil,
			m: nodeMeasured{node: "n1", figures: figs, first: settled(950, 1000)}, round2: true, write: 950, read: 1000, firstW: 1200, first: 900},
		{name: "published again: the higher first round stays", node: nil,
			m: nodeMeasured{node: "n1", figures: figs, first: settled(1200, 1000)}, round2: true, write: 1200, read: 1000, firstW: 1200, first: 900},
		{name: "first round ignored without a second", node: nil, m: nodeMeasured{node: "n1", figures: figs, first: first}, write: 950, read: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := &v1alpha1.BurstBuffer{}
			nc, ws := nodeComponents(bb, tc.node, tc.m, tc.round2, false)
			if nc.Name != "n1" || nc.Reused != tc.m.reused || !nc.MeasuredTime.Time.Equal(now) {
				t.Fatalf("node %+v", nc)
			}
			if got := *nc.DeviceWrite.MeasuredBytesPerSecond; got != tc.write {
				t.Errorf("write %d, want %d", got, tc.write)
			}
			if got := *nc.DeviceRead.MeasuredBytesPerSecond; got != tc.read {
				t.Errorf("read %d, want %d", got, tc.read)
			}
			if (tc.docW == nil) != (nc.DeviceWrite.DocumentedBytesPerSecond == nil) || tc.docW != nil && *tc.docW != *nc.DeviceWrite.DocumentedBytesPerSecond {
				t.Errorf("documented write %v, want %v", nc.DeviceWrite.DocumentedBytesPerSecond, tc.docW)
			}
			if (nc.Network != nil) != tc.network {
				t.Errorf("network %+v", nc.Network)
			}
			if tc.firstW != 0 && (nc.DeviceWrite.FirstRoundBytesPerSecond == nil || *nc.DeviceWrite.FirstRoundBytesPerSecond != tc.firstW ||
				nc.DeviceRead.FirstRoundBytesPerSecond == nil || *nc.DeviceRead.FirstRoundBytesPerSecond != tc.first) {
				t.Errorf("first rounds %+v %+v", nc.DeviceWrite, nc.DeviceRead)
			}
			if tc.firstW == 0 && nc.DeviceWrite.FirstRoundBytesPerSecond != nil {
				t.Errorf("first round set without a second")
			}
			var reasons []string
			for _, w := range ws {
				reasons = append(reasons, w.Reason)
			}
			if len(reasons) != len(tc.warnings) {
				t.Fatalf("warnings %v, want %v", reasons, tc.warnings)
			}
			for i := range reasons {
				if reasons[i] != tc.warnings[i] {
					t.Errorf("warnings %v, want %v", reasons, tc.warnings)
				}
			}
			if tc.message != "" && !strings.Contains(ws[0].Message, tc.message) {
				t.Errorf("warning %q, want it to say %q", ws[0].Message, tc.message)
			}
		})
	}
}

// A link's second round keeps the higher of the two even where the first read above the
// link's documented rate: a link has no cache to read high through (a device has; there the
// second round stands, TestNodeComponents).
func TestLinkSecondRoundKeepsTheHigher(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1alpha1.LabelLinkRateBitsPerSecond: "1000000000"}}}
	second := 100e6
	first := &v1alpha1.NodeComponents{Name: "n1", Network: &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: ptr.To(int64(140e6))}}
	m := nodeMeasured{node: "n1", figures: nodecache.Figures{Node: "n1", MeasuredTime: time.Now(), DeviceWriteBytesPerSecond: 1, DeviceReadBytesPerSecond: 1},
		link: &second, first: first}
	nc, _ := nodeComponents(&v1alpha1.BurstBuffer{}, node, m, false, true)
	if nc.Network == nil || nc.Network.DocumentedBytesPerSecond == nil || float64(*nc.Network.DocumentedBytesPerSecond) >= 140e6/1.05 {
		t.Fatalf("network %+v: the case needs a first round above the documented rate", nc.Network)
	}
	if got := *nc.Network.MeasuredBytesPerSecond; got != 140e6 {
		t.Errorf("link %d, want the higher round's 140e6", got)
	}
}
