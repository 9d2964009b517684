package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// Stage 3 is judged against the limit stage 2 published, measured links included: on a
// shared file system the links are a term of it.
var _ = Describe("Stage 3 against the published stage-2 limit", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		// Documented: 10G links (1.25 GB/s), devices 1G write and 2G read.
		makeBeeGFSNode(ctx, ns+"-a", "10.9.0.1", map[string]string{"pool": ns})
		makeBeeGFSNode(ctx, ns+"-b", "10.9.0.2", map[string]string{"pool": ns})
	})

	It("computes efficiency and ExceedsLimit from the stage-2 limit with the measured links", func() {
		bb, nodes := quickBeeGFS(ctx, ns, "sl")

		// Stage 2: the devices as documented, the links at 0.3 GB/s, a quarter of theirs.
		probeBeeGFSDevices(ctx, ns, "sl", nodes)
		finishNetwork(ctx, ns, "sl", nodes, 0.3e9)
		finishPod(ctx, ns, "sl-storagebench-0", corev1.PodSucceeded, strings.Join([]string{
			"== write (exit 0) ==",
			"UNINITIALIZED INITIALIZED ERROR RUNNING STOPPING STOPPED FINISHING FINISHED UNKNOWN",
			"0 0 0 0 0 0 0 2 0",
			"write 927734kiB/s s:1",
			"write 927734kiB/s s:17",
			"== read (exit 0) ==",
			"UNINITIALIZED INITIALIZED ERROR RUNNING STOPPING STOPPED FINISHING FINISHED UNKNOWN",
			"0 0 0 0 0 0 0 2 0",
			"read 1953125kiB/s s:1",
			"read 1953125kiB/s s:17",
		}, "\n"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))

		// Co-located on Ns = 2 nodes: Bnet = 2 x 0.3 GB/s x 2/1 = 1.2 GB/s, under the devices'
		// 2.0 GB/s (write) and 4.1 GB/s (read).
		comp := get(ctx, bb).Status.Limits.Components
		Expect(comp.Write).NotTo(BeNil())
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(1.2e9)))
		Expect(comp.Write.Bottleneck).To(Equal("network"))
		Expect(comp.Read.LimitBytesPerSecond).To(Equal(int64(1.2e9)))

		// Stage 3 (quick: 2 nodes x 1, then 2 nodes x 4): best write 1.0 GB/s; reads of 1.3
		// and 1.5 GB/s, above the 1.2 GB/s stage-2 read limit plus its 5% tolerance from the
		// first point on (a read result published after the first point and dropped after
		// the second could outlive a status patch from a stale cache).
		finishQuickSweep(ctx, ns, "sl", nodes, 0.45e9, 0.65e9, 0.5e9, 0.75e9)
		// A read above a network-bound limit: the links get a second look before anything is
		// refused. They confirm their 0.3 GB/s.
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		finishNetworkRound(ctx, ns, "sl", "-r2", nodes, 0.3e9, nil)
		// Then the best write point, 1.0 of the 1.2 GB/s, is measured once more, and confirms.
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring),
			HaveField("Message", ContainSubstring("83% of the 1.2 GB/s"))))
		finishPod(ctx, ns, "sl-sweep-1-0-r2", corev1.PodSucceeded, idealReport(nodes[0], 4, 0.5e9, 0.75e9))
		finishPod(ctx, ns, "sl-sweep-1-1-r2", corev1.PodSucceeded, idealReport(nodes[1], 4, 0.49e9, 0.75e9))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))
		Expect(get(ctx, bb).Status.Limits.Components.NetworkProbeRound).To(Equal(int32(2)))

		// Eventually: a visit that started before the last point ended may still publish the
		// first point alone; the next one publishes both.
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(condition(ctx, bb, v1alpha1.ConditionValidated)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))
			sw := cur.Status.Limits.Sweep
			g.Expect(sw.Write).NotTo(BeNil())
			g.Expect(sw.Write.BestBytesPerSecond).To(Equal(int64(1e9)))
			g.Expect(sw.Write.EfficiencyPerMille).To(Equal(int32(833)), "1.0 GB/s of the published 1.2 GB/s, not of the devices' 2.0 GB/s")
			g.Expect(sw.Read).To(BeNil(), "1.5 GB/s is above the published read limit")
			g.Expect(cur.Status.Warnings).To(ContainElement(And(
				HaveField("Reason", v1alpha1.WarningExceedsLimit), HaveField("Operation", "read"))))
		}, timeout).Should(Succeed())
		tearDownWithTasks(ctx, bb)
	})

	It("measures the links again when the sweep reads above a network-bound limit, and judges the sweep against the higher second round", func() {
		// The first link probe read low (a real BeeGFS moved more through the same link).
		bb, nodes := lowFirstLinkRound(ctx, ns, "relink")
		finishQuickSweep(ctx, ns, "relink", nodes, 0.6e9, 0.65e9, 0.95e9, 2.0e9)

		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)().Message).To(ContainSubstring("set by the network"))
		Expect(get(ctx, bb).Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)), "as judged against the first round")
		finishNetworkRound(ctx, ns, "relink", "-r2", nodes, 1.1e9, nil)

		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))
		cur := get(ctx, bb)
		comp := cur.Status.Limits.Components
		Expect(comp.NetworkProbeRound).To(Equal(int32(2)))
		Expect(*comp.Nodes[0].Network.MeasuredBytesPerSecond).To(Equal(int64(1.1e9)))
		Expect(*comp.Nodes[0].Network.FirstRoundBytesPerSecond).To(Equal(int64(0.3e9)))
		// Bnet = 2 x 1.1 GB/s x 2/1 = 4.4 GB/s: the devices' 2.0 GB/s write limit is the limit now.
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(2e9)))
		Expect(comp.Write.Bottleneck).To(Equal("devices"))
		Expect(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured)().Message).To(ContainSubstring("links in round 2"))
		sw := cur.Status.Limits.Sweep
		Expect(sw.Write).NotTo(BeNil())
		Expect(sw.Write.BestBytesPerSecond).To(Equal(int64(1.9e9)))
		Expect(sw.Read).NotTo(BeNil())
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		Expect(podExists(ctx, ns, "relink-probe-nets-0-r3")()).To(BeFalse(), "no third round")
		tearDownWithTasks(ctx, bb)
	})

	It("measures the links again when they set the limit far below their documented rate, though no sweep figure is above it", func() {
		// The first link probe reads 0.3 GB/s of the documented 1.25 GB/s, and the sweep stays
		// under the limit that sets.
		bb, nodes := lowFirstLinkRound(ctx, ns, "lowlink")
		finishQuickSweep(ctx, ns, "lowlink", nodes, 0.5e9, 0.5e9, 0.58e9, 0.58e9)

		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)().Message).To(ContainSubstring(
			"the link between " + nodes[0] + " and " + nodes[1] + " measured 300 MB/s, 24% of the documented 1.25 GB/s"))
		Expect(get(ctx, bb).Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		// The second round reads what TCP moves over the link: the devices set the limit.
		finishNetworkRound(ctx, ns, "lowlink", "-r2", nodes, 1.18e9, nil)
		Eventually(func(g Gomega) {
			comp := get(ctx, bb).Status.Limits.Components
			g.Expect(comp.NetworkProbeRound).To(Equal(int32(2)))
			g.Expect(*comp.Nodes[0].Network.MeasuredBytesPerSecond).To(Equal(int64(1.18e9)))
			g.Expect(*comp.Nodes[0].Network.FirstRoundBytesPerSecond).To(Equal(int64(0.3e9)))
			g.Expect(comp.Write.Bottleneck).To(Equal("devices"))
		}, timeout).Should(Succeed())
		// Against the devices' 2.0 GB/s the best points read far below: measured once more.
		finishPod(ctx, ns, "lowlink-sweep-1-0-r2", corev1.PodSucceeded, idealReport(nodes[0], 4, 0.58e9, 0.58e9))
		finishPod(ctx, ns, "lowlink-sweep-1-1-r2", corev1.PodSucceeded, idealReport(nodes[1], 4, 0.58e9, 0.58e9))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))
		cur := get(ctx, bb)
		Expect(cur.Status.Warnings).NotTo(ContainElement(And(HaveField("Reason", v1alpha1.WarningBelowDocumented), HaveField("Component", "network"))),
			"1.18 of 1.25 GB/s is not below the documented rate")
		Expect(podExists(ctx, ns, "lowlink-probe-nets-0-r3")()).To(BeFalse(), "no third round")
		tearDownWithTasks(ctx, bb)
	})

	It("does not refuse a shared file system whose links nothing documents: stage 1 says unknown, stage 2's links give the limit", func() {
		nodes := []string{ns + "-a", ns + "-b"}
		DeferCleanup(func() {
			for _, n := range nodes {
				_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
			}
		})
		// Cloud VMs: a virtio NIC reports no speed, and nobody labelled the nodes' links.
		for _, n := range nodes {
			node := &corev1.Node{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: n}, node)).To(Succeed())
			delete(node.Labels, v1alpha1.LabelLinkRateBitsPerSecond)
			Expect(k8s.Update(ctx, node)).To(Succeed())
		}
		bb := beegfsBB(ns, "nolink", 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonHardwareUnknown))
		cur := get(ctx, bb)
		Expect(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated)().Message).To(ContainSubstring("until stage 2 measures the links"))
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningUnknownLimit), HaveField("Component", "network"))))
		Expect(cur.Status.Summary.WriteLimit).To(Equal("unknown"))
		provisionBeeGFS(ctx, bb, 2)
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseMeasuring), "not Degraded: nothing is wrong with the spec")

		probeBeeGFSDevices(ctx, ns, "nolink", nodes)
		finishNetwork(ctx, ns, "nolink", nodes, 0.3e9)
		finishPod(ctx, ns, "nolink-storagebench-0", corev1.PodFailed, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))
		comp := get(ctx, bb).Status.Limits.Components
		Expect(comp.Write).NotTo(BeNil())
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(1.2e9)), "2 x the measured 0.3 GB/s x 2/1")
		Expect(comp.Write.Bottleneck).To(Equal("network"))
		Expect(get(ctx, bb).Status.Summary.WriteLimit).To(Equal("1.2 GB/s"))
		tearDownWithTasks(ctx, bb)
	})
})

// lowFirstLinkRound creates a quick beegfs burst buffer name on ns's two nodes (10G links
// documented) and plays its stage 2: the devices as documented, a first link round of
// 0.3 GB/s, no StorageBench. Its limit is network-bound, 2 x 0.3 GB/s x 2/1 = 1.2 GB/s.
func lowFirstLinkRound(ctx context.Context, ns, name string) (*v1alpha1.BurstBuffer, []string) {
	bb, nodes := quickBeeGFS(ctx, ns, name)
	probeBeeGFSDevices(ctx, ns, name, nodes)
	finishNetwork(ctx, ns, name, nodes, 0.3e9)
	finishPod(ctx, ns, name+"-storagebench-0", corev1.PodFailed, "")
	Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))
	comp := get(ctx, bb).Status.Limits.Components
	Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(1.2e9)))
	Expect(comp.Write.Bottleneck).To(Equal("network"))
	return bb, nodes
}

// finishQuickSweep plays the first round of a quick sweep on two nodes: each node's run of
// the point 2 x 1 writes w1 and reads r1 bytes/s, of 2 x 4 w4 and r4.
func finishQuickSweep(ctx context.Context, ns, name string, nodes []string, w1, r1, w4, r4 float64) {
	for k, node := range nodes {
		finishPod(ctx, ns, fmt.Sprintf("%s-sweep-0-%d", name, k), corev1.PodSucceeded, idealReport(node, 1, w1, r1))
	}
	for k, node := range nodes {
		finishPod(ctx, ns, fmt.Sprintf("%s-sweep-1-%d", name, k), corev1.PodSucceeded, idealReport(node, 4, w4, r4))
	}
}

// The second round of the sweep measures its points one after the other, as the first round
// does: the best write point and the best read point, both far below their limit, would
// otherwise share the nodes they measure.
var _ = Describe("A second round of two sweep points", func() {
	It("measures the best write point, then the best read point", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		nodes := []string{ns + "-a", ns + "-b"}
		labels := map[string]string{"pool": ns, v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
		for _, n := range nodes {
			makeNode(ctx, n, labels)
		}
		forgetFiguresOf(ctx, nodes)
		bb := quickPrepared(ctx, ns, "two")
		for i, n := range nodes {
			finishPod(ctx, ns, fmt.Sprintf("two-probe-dev-%d", i), corev1.PodSucceeded, deviceReport(n, 300e6, 400e6))
		}
		finishNetwork(ctx, ns, "two", nodes, 118e6)
		// Limits 600 MB/s write, 800 MB/s read. Best write 540 MB/s at 2 x 4 (90%), best read
		// 660 MB/s at 2 x 1 (83%): both measured again.
		finishQuickSweep(ctx, ns, "two", nodes, 250e6, 330e6, 270e6, 300e6)
		Eventually(podExists(ctx, ns, "two-sweep-1-0-r2"), timeout).Should(BeTrue(), "the best write point first")
		Consistently(podExists(ctx, ns, "two-sweep-0-0-r2"), 2*time.Second).Should(BeFalse(), "the best read point waits for it")
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		for i, n := range nodes {
			finishPod(ctx, ns, fmt.Sprintf("two-sweep-1-%d-r2", i), corev1.PodSucceeded, idealReport(n, 4, 280e6, 300e6))
		}
		Eventually(podExists(ctx, ns, "two-sweep-0-0-r2"), timeout).Should(BeTrue())
		for i, n := range nodes {
			finishPod(ctx, ns, fmt.Sprintf("two-sweep-0-%d-r2", i), corev1.PodSucceeded, idealReport(n, 1, 250e6, 340e6))
		}
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))
		Expect(get(ctx, bb).Status.Limits.Sweep.Write.BestBytesPerSecond).To(Equal(int64(560e6)), "the second round's higher 2 x 4")
		tearDown(ctx, bb)
	})
})
