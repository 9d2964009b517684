package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// discoveryReport is a device probe's report with what the agent read from the node's sysfs.
func discoveryReport(node string, write, read float64, hw *bench.Hardware) string {
	b, _ := json.Marshal(bench.Report{Command: "probe-device", Tool: "fio", Phase: bench.PhaseSucceeded, Node: node, FreeBytes: new(int64(4 << 30)),
		StartTime: time.Now().Add(-5 * time.Second), EndTime: time.Now(), Hardware: hw,
		Results: []bench.Result{{Operation: bench.OpWrite, BytesPerSecond: write, RuntimeSeconds: 3}, {Operation: bench.OpRead, BytesPerSecond: read, RuntimeSeconds: 3}}})
	return string(b)
}

// makeAddressedNode registers a Ready node with an InternalIP, as a kubelet would.
func makeAddressedNode(ctx context.Context, name, ip string, labels map[string]string) {
	makeNode(ctx, name, labels)
	n := &corev1.Node{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
	Expect(k8s.Status().Update(ctx, n)).To(Succeed())
}

func estimatedSource(ctx context.Context, bb *v1alpha1.BurstBuffer, figure string) func() v1alpha1.FigureSource {
	return func() v1alpha1.FigureSource {
		cur := get(ctx, bb)
		if cur.Status.Limits == nil || cur.Status.Limits.Estimated == nil {
			return v1alpha1.FigureSource{}
		}
		for _, s := range cur.Status.Limits.Estimated.Sources {
			if s.Figure == figure {
				return s
			}
		}
		return v1alpha1.FigureSource{}
	}
}

var _ = Describe("Discovery of documented figures by the device probe", func() {
	var (
		ctx   context.Context
		ns    string
		nodes []string
	)
	disks := func() map[string]string {
		return map[string]string{"pool": ns, v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
	}
	quick := func(name string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.ReuseComponentResultsFor = "1h"
		return bb
	}
	probe := func(name string, i int) *corev1.Pod {
		pod := &corev1.Pod{}
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, fmt.Sprintf("%s-probe-dev-%d", name, i)), pod)
		}, timeout).Should(Succeed())
		return pod
	}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		nodes = []string{ns + "-a", ns + "-b"}
	})
	AfterEach(func() {
		for _, n := range nodes {
			_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
		}
	})

	It("reads the link speed where nothing documents it, and recomputes stage 1 with it (source discovered)", func() {
		makeAddressedNode(ctx, nodes[0], "10.8.0.1", disks())
		makeAddressedNode(ctx, nodes[1], "10.8.0.2", disks())
		bb := quick("disc")
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		By("computing stage 1 at once from what is documented: the link is unknown")
		Eventually(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonEstimated))
		Expect(estimatedSource(ctx, bb, "clients.link")()).To(HaveField("Source", v1alpha1.SourceUnknown))
		Expect(get(ctx, bb).Status.Nodes[0].Hardware).To(HaveField("LinkSource", v1alpha1.SourceUnknown))

		By("probing in the host network, given the node's InternalIP, where the link must be discovered")
		finishPod(ctx, ns, "disc-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "disc-prep-1", corev1.PodSucceeded, "")
		for i, ip := range []string{"10.8.0.1", "10.8.0.2"} {
			pod := probe("disc", i)
			Expect(pod.Spec.HostNetwork).To(BeTrue())
			Expect(pod.Spec.Containers[0].Args).To(ContainElements("--link-address", ip))
		}

		By("recording what the probes discovered, and the slowest node's link in stage 1")
		finishPod(ctx, ns, "disc-probe-dev-0", corev1.PodSucceeded, discoveryReport(nodes[0], 301e6, 405e6, &bench.Hardware{
			LinkAddress: "10.8.0.1", Interface: "eth0", LinkMbps: 25000, Device: "nvme0n1p2", DeviceNumber: "259:2",
			Model: "Samsung SSD 980 PRO 1TB", FileSystemBytes: 1 << 40}))
		finishPod(ctx, ns, "disc-probe-dev-1", corev1.PodSucceeded, discoveryReport(nodes[1], 299e6, 401e6, &bench.Hardware{
			LinkAddress: "10.8.0.2", Interface: "ens5", LinkMbps: 10000, Device: "loop3", Model: "loop", BackingFile: "/var/lib/nvme.img",
			Notes: []string{"device: loop3 is a loop device"}}))
		Eventually(estimatedSource(ctx, bb, "clients.link"), timeout).Should(Equal(v1alpha1.FigureSource{
			Figure: "clients.link", Source: v1alpha1.SourceDiscovered, Value: "10G none (" + nodes[1] + ")"}))
		Expect(estimatedSource(ctx, bb, "devices.write")()).To(HaveField("Source", v1alpha1.SourceLabel), "labels still win where they exist")
		cur := get(ctx, bb)
		a, b := cur.Status.Nodes[0].Hardware, cur.Status.Nodes[1].Hardware
		Expect(a.LinkSource).To(Equal(v1alpha1.SourceDiscovered))
		Expect(a.LinkBitsPerSecond.String()).To(Equal("25G"))
		Expect(a.Interface).To(Equal("eth0"))
		Expect(a.DeviceModel).To(Equal("Samsung SSD 980 PRO 1TB"))
		Expect(a.Capacity.String()).To(Equal("1Ti"))
		Expect(b.LinkBitsPerSecond.String()).To(Equal("10G"))
		Expect(b.BackingFile).To(Equal("/var/lib/nvme.img"))
		Expect(b.Notes).To(ConsistOf("device: loop3 is a loop device"))

		By("documenting the network in stage 2 with the discovered figure")
		finishNetwork(ctx, ns, "disc", nodes, 1.2e9)
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))
		comp := get(ctx, bb).Status.Limits.Components
		Expect(comp.Nodes[1].Network).To(And(HaveField("Source", v1alpha1.SourceDiscovered),
			HaveField("DocumentedBytesPerSecond", HaveValue(BeEquivalentTo(1.25e9)))))
		Expect(get(ctx, bb).Status.Warnings).NotTo(ContainElement(HaveField("Component", "network")),
			"%s", "1.2 GB/s measured on a 10 Gbit/s link is within 10%")
	})

	It("keeps spec and labels ahead of discovery, and uses the host network only where a link is documented nowhere", func() {
		linked := disks()
		linked[v1alpha1.LabelLinkRateBitsPerSecond] = "1G"
		makeAddressedNode(ctx, nodes[0], "10.8.1.1", linked)
		makeAddressedNode(ctx, nodes[1], "10.8.1.2", disks())
		bb := quick("mixed")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "mixed-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "mixed-prep-1", corev1.PodSucceeded, "")
		labelled, bare := probe("mixed", 0), probe("mixed", 1)
		Expect(labelled.Spec.HostNetwork).To(BeFalse())
		Expect(labelled.Spec.Containers[0].Args).NotTo(ContainElement("--link-address"))
		Expect(bare.Spec.HostNetwork).To(BeTrue())

		finishPod(ctx, ns, "mixed-probe-dev-0", corev1.PodSucceeded, discoveryReport(nodes[0], 300e6, 400e6, &bench.Hardware{Device: "sda", Model: "Samsung SSD 860"}))
		finishPod(ctx, ns, "mixed-probe-dev-1", corev1.PodSucceeded, discoveryReport(nodes[1], 300e6, 400e6, &bench.Hardware{
			LinkAddress: "10.8.1.2", Interface: "eth0", LinkMbps: 10000, Device: "sda", Model: "Samsung SSD 860"}))
		Eventually(func() []string {
			var out []string
			for _, n := range get(ctx, bb).Status.Nodes {
				if n.Hardware != nil {
					out = append(out, n.Hardware.LinkSource)
				}
			}
			return out
		}, timeout).Should(Equal([]string{v1alpha1.SourceLabel, v1alpha1.SourceDiscovered}))
		// The slowest node's link: 1G by label on a, not the 10G discovered on b.
		Expect(estimatedSource(ctx, bb, "clients.link")()).To(Equal(v1alpha1.FigureSource{Figure: "clients.link", Source: v1alpha1.SourceLabel, Value: "1G none"}))

		By("spec.hardware's link, on another burst buffer of the same nodes: no host network at all")
		tearDownWithTasks(ctx, bb) // the next one measures these nodes only after this one
		spec := quick("specd")
		spec.Spec.Hardware = &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Link: &v1alpha1.LinkHardware{RateBitsPerSecond: resource.MustParse("100G")}}}
		spec.Spec.Validation.ReuseComponentResultsFor = "0s" // probe, do not reuse
		Expect(k8s.Create(ctx, spec)).To(Succeed())
		finishPod(ctx, ns, "specd-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "specd-prep-1", corev1.PodSucceeded, "")
		Expect(probe("specd", 1).Spec.HostNetwork).To(BeFalse())
		Eventually(func() string {
			n := get(ctx, spec).Status.Nodes
			if len(n) < 2 || n[1].Hardware == nil {
				return ""
			}
			return n[1].Hardware.LinkSource
		}, timeout).Should(Equal(v1alpha1.SourceSpec))
	})
})
