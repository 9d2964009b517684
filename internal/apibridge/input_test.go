package apibridge

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

func labelledNode(name, link, write, read string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1alpha1.LabelLinkRateBitsPerSecond:   link,
		v1alpha1.LabelDiskWriteBytesPerSecond: write,
		v1alpha1.LabelDiskReadBytesPerSecond:  read,
	}}}
}

func measuredNode(name string, write, read, link int64) v1alpha1.NodeComponents {
	nc := v1alpha1.NodeComponents{Name: name,
		DeviceWrite: &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: &write},
		DeviceRead:  &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: &read}}
	if link > 0 {
		nc.Network = &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: &link}
	}
	return nc
}

func twoNodeBB(engine v1alpha1.EngineType) *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{}
	bb.Spec.Engine = engine
	bb.Spec.Nodes.Count = 2
	return bb
}

// Stage 1: the nodes' labels complete the spec, with their sources; the smallest counts.
func TestLimitInputDocumented(t *testing.T) {
	nodes := []corev1.Node{labelledNode("a", "10G", "1G", "2G"), labelledNode("b", "10G", "900M", "2G")}
	in, err := LimitInput(twoNodeBB(v1alpha1.EngineBeeGFS), nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.Measured {
		t.Error("Measured without stage-2 figures")
	}
	h := in.Hardware
	if len(h.Servers) != 2 || !h.Colocated {
		t.Fatalf("servers %d, colocated %v; want 2 co-located", len(h.Servers), h.Colocated)
	}
	for _, s := range h.Servers {
		if s.Link.Value() != 1.25e9 || s.DeviceWrite.Value() != 900e6 || s.DeviceRead.Value() != 2e9 || s.Name != "" {
			t.Errorf("server %+v; want documented link 1.25 GB/s, write 900 MB/s (the smallest label), read 2 GB/s", s)
		}
	}
	for _, fs := range in.Sources {
		if fs.Source != v1alpha1.SourceLabel {
			t.Errorf("%s from %s, want label", fs.Figure, fs.Source)
		}
	}
}

// Stage 2 and 3: devices and links as measured, node by node; the local engine has no
// network term, so its links stay documented.
func TestLimitInputMeasuredOverlay(t *testing.T) {
	nodes := []corev1.Node{labelledNode("a", "10G", "1G", "2G"), labelledNode("b", "10G", "1G", "2G")}
	comp := &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{
		measuredNode("a", 1.02e9, 2.1e9, 0.3e9), measuredNode("b", 0.98e9, 2.0e9, 0)}}
	for _, c := range []struct {
		engine v1alpha1.EngineType
		links  [2]float64
	}{
		{v1alpha1.EngineBeeGFS, [2]float64{0.3e9, 1.25e9}}, // b's link was not measured: documented
		{v1alpha1.EngineLocal, [2]float64{1.25e9, 1.25e9}},
	} {
		in, err := LimitInput(twoNodeBB(c.engine), nodes, comp)
		if err != nil {
			t.Fatal(err)
		}
		if !in.Measured {
			t.Fatalf("%s: not Measured", c.engine)
		}
		want := []limits.ServerNode{
			{Name: "a", Devices: 1, Link: limits.Bytes(c.links[0]), DeviceWrite: limits.Bytes(1.02e9), DeviceRead: limits.Bytes(2.1e9)},
			{Name: "b", Devices: 1, Link: limits.Bytes(c.links[1]), DeviceWrite: limits.Bytes(0.98e9), DeviceRead: limits.Bytes(2.0e9)},
		}
		for i, s := range in.Hardware.Servers {
			if s != want[i] {
				t.Errorf("%s: server %d = %+v, want %+v", c.engine, i, s, want[i])
			}
		}
		if n := in.Hardware.Notes; len(n) == 0 || n[len(n)-1] != stage2Note {
			t.Errorf("%s: notes %q lack the stage-2 note", c.engine, n)
		}
	}
}

// A co-located file system whose links nothing documents (no label, no spec, nothing
// discovered): its clients are its nodes, so their measured links are the clients' too, the
// slowest counting - stage 2 has a limit where stage 1 had none. One link not measured leaves
// it unknown.
func TestLimitInputMeasuredLinksWithoutDocumentedOnes(t *testing.T) {
	unlabelled := func(name string) corev1.Node {
		n := labelledNode(name, "", "1G", "2G")
		delete(n.Labels, v1alpha1.LabelLinkRateBitsPerSecond)
		return n
	}
	nodes := []corev1.Node{unlabelled("a"), unlabelled("b")}
	in, err := LimitInput(twoNodeBB(v1alpha1.EngineBeeGFS), nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Hardware.LinksMissing() {
		t.Fatal("stage 1 without documented links: LinksMissing must say so")
	}
	comp := &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{
		measuredNode("a", 1.02e9, 2.1e9, 0.3e9), measuredNode("b", 0.98e9, 2.0e9, 0.28e9)}}
	in, err = LimitInput(twoNodeBB(v1alpha1.EngineBeeGFS), nodes, comp)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Hardware.Clients.Link; !got.Known() || got.Value() != 0.28e9 {
		t.Errorf("client link %v, want the slowest measured, 280 MB/s", got)
	}
	if _, err := limits.Compute(in.Hardware); err != nil {
		t.Errorf("stage 2 with measured links: %v", err)
	}
	comp.Nodes[1].Network = nil
	in, err = LimitInput(twoNodeBB(v1alpha1.EngineBeeGFS), nodes, comp)
	if err != nil {
		t.Fatal(err)
	}
	if in.Hardware.Clients.Link.Known() || !in.Hardware.LinksMissing() {
		t.Errorf("one link not measured: client link %v, want unknown", in.Hardware.Clients.Link)
	}
}

// Figures of other nodes than the burst buffer's (a stale status) are not laid over.
func TestLimitInputMismatchedNodes(t *testing.T) {
	nodes := []corev1.Node{labelledNode("a", "10G", "1G", "2G"), labelledNode("b", "10G", "1G", "2G")}
	comp := &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{measuredNode("a", 1, 1, 1)}}
	in, err := LimitInput(twoNodeBB(v1alpha1.EngineBeeGFS), nodes, comp)
	if err != nil {
		t.Fatal(err)
	}
	if in.Measured || in.Hardware.Servers[0].DeviceWrite.Value() != 1e9 {
		t.Errorf("Measured %v, write %v; want the documented input", in.Measured, in.Hardware.Servers[0].DeviceWrite)
	}
}

// The limit stage 3 judges the sweep against is the one stage 2 published: the same input,
// read back from the status.
func TestLimitInputSweepUsesPublishedStage2(t *testing.T) {
	nodes := []corev1.Node{labelledNode("a", "10G", "1G", "2G"), labelledNode("b", "10G", "1G", "2G")}
	bb := twoNodeBB(v1alpha1.EngineBeeGFS)
	comp := &v1alpha1.ComponentLimits{Nodes: []v1alpha1.NodeComponents{
		measuredNode("a", 1.02e9, 2.1e9, 0.3e9), measuredNode("b", 0.98e9, 2.0e9, 0.3e9)}}
	in2, err := LimitInput(bb, nodes, comp)
	if err != nil {
		t.Fatal(err)
	}
	lim2, err := limits.Compute(in2.Hardware)
	if err != nil {
		t.Fatal(err)
	}
	w := OperationLimitToAPI(lim2.Write)
	comp.Write = &w
	bb.Status.Limits = &v1alpha1.LimitsStatus{Components: comp.DeepCopy()}

	in3, err := LimitInput(bb, nodes, bb.Status.Limits.Components)
	if err != nil {
		t.Fatal(err)
	}
	lim3, err := limits.Compute(in3.Hardware)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := lim3.Write.Limit.Int64(); got != bb.Status.Limits.Components.Write.LimitBytesPerSecond || got != 1.2e9 {
		t.Errorf("stage-3 write limit %d, published stage-2 %d; want both 1.2 GB/s (2 x 0.3 GB/s x 2/1, the links)",
			got, bb.Status.Limits.Components.Write.LimitBytesPerSecond)
	}
}
