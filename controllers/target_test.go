package controllers_test

import (
	"context"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// spec.target: the node count chosen from each node's best figure, and the
// verdict after stage 3.
var _ = Describe("spec.target: sizing from what the job needs", func() {
	var (
		ctx   context.Context
		ns    string
		nodes []string
	)
	// The testbed's device-bound hardware, documented by labels: 150 MB/s write per node.
	labelled := func() map[string]string {
		return map[string]string{"pool": ns, v1alpha1.LabelDiskWriteBytesPerSecond: "150M", v1alpha1.LabelDiskReadBytesPerSecond: "300M"}
	}
	targetBB := func(name, write string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 0) // no nodes.count: the target chooses it
		q := resourceMust(write)
		bb.Spec.Target = &v1alpha1.TargetSpec{WriteBytesPerSecond: &q, MarginPercent: 10}
		return bb
	}
	// probedFor250M creates a quick burst buffer with a 250 MB/s write target, waits for its
	// prediction and plays its stage 2 on the two nodes chosen: devices of w0 and w1 MB/s
	// write (300 read), links of 1 GB/s.
	probedFor250M := func(name string, w0, w1 float64) (*v1alpha1.BurstBuffer, []string) {
		bb := targetBB(name, "250M")
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonTargetPredicted))
		cur := get(ctx, bb)
		chosen := []string{cur.Status.Nodes[0].Name, cur.Status.Nodes[1].Name}
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(chosen[0], w0, 300e6))
		finishPod(ctx, ns, name+"-probe-dev-1", corev1.PodSucceeded, deviceReport(chosen[1], w1, 300e6))
		finishNetwork(ctx, ns, name, chosen, 1e9)
		return bb, chosen
	}
	// cache writes a node's stage-2 figures as a probe that had the node to itself would have.
	cache := func(node string, write int64, at time.Time) {
		var obj corev1.Node
		Expect(k8s.Get(ctx, client.ObjectKey{Name: node}, &obj)).To(Succeed())
		cm, err := nodecache.ConfigMap(operatorNamespace, nodecache.Figures{Node: node, NodeUID: string(obj.UID), StoragePath: "/mnt/nvme", MeasuredTime: at,
			DeviceWriteBytesPerSecond: write, DeviceReadBytesPerSecond: 2 * write, FreeBytes: 4 << 30, MeasuredBy: "other/bb",
			Conditions: &nodecache.Conditions{StartTime: at.Add(-5 * time.Second), Exclusive: true}})
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Create(ctx, cm)).To(Succeed())
	}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		nodes = []string{ns + "-a", ns + "-b", ns + "-c"}
		for _, n := range nodes {
			makeNode(ctx, n, labelled())
		}
	})
	AfterEach(func() {
		for _, n := range nodes {
			_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
		}
	})

	It("without a target and without nodes.count takes one node, as the old default did", func() {
		bb := localBB(ns, "plain", 0)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Expect(get(ctx, bb).Spec.Nodes.Count).To(BeZero(), "nodes.count has no default any more")
		finishPod(ctx, ns, "plain-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		cur := get(ctx, bb)
		Expect(cur.Status.Nodes).To(HaveLen(1))
		Expect(cur.Status.Target).To(BeNil())
		Expect(condition(ctx, bb, v1alpha1.ConditionTargetMet)()).To(BeNil(), "TargetMet only with a target")
	})

	It("keeps the layout's rules for a spec without a count: the old default of 1 counts unless a target chooses", func() {
		err := k8s.Create(ctx, unstructuredBB(ns, "two-meta", "layout: {metadataServers: 2}"), client.DryRunAll)
		Expect(err).To(MatchError(ContainSubstring("layout.metadataServers must not exceed nodes.count")))
		err = k8s.Create(ctx, unstructuredBB(ns, "sweep-two", "engine: local\nvalidation: {sweep: {nodes: [2]}}"), client.DryRunAll)
		Expect(err).To(MatchError(ContainSubstring("validation.sweep.nodes may not name more nodes than nodes.count")))
		Expect(k8s.Create(ctx, unstructuredBB(ns, "two-meta", "layout: {metadataServers: 2}\ntarget: {writeBytesPerSecond: 1G}"), client.DryRunAll)).To(Succeed(),
			"with a target the count is chosen, at least the layout's minimum")
	})

	It("chooses 2 of 3 nodes for 250 MB/s at 150 MB/s each, says why, and after the sweep reports the target met", func() {
		bb := targetBB("met", "250M")
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.ReuseComponentResultsFor = "1h"
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonTargetPredicted))
		cur := get(ctx, bb)
		Expect(cur.Status.Nodes).To(HaveLen(2))
		ts := cur.Status.Target
		Expect(ts.Mode).To(Equal(v1alpha1.TargetChoose))
		Expect(ts.State).To(Equal(v1alpha1.TargetPredicted))
		Expect(ts.NodeCount).To(Equal(int32(2)))
		Expect(ts.CandidateNodes).To(Equal(int32(3)))
		Expect(ts.Nodes).To(HaveLen(2))
		for _, n := range ts.Nodes {
			Expect(*n.WriteBytesPerSecond).To(Equal(int64(150e6)))
			Expect(n.WriteSource).To(Equal("label"))
		}
		Expect(*ts.Write.PredictedBytesPerSecond).To(Equal(int64(300e6)))
		Expect(ts.Write.PredictedBottleneck).To(Equal("devices"))
		Expect(*ts.Write.PredictedMarginPercent).To(Equal(int32(20)))
		Expect(ts.Message).To(ContainSubstring("no fresh measurement"))
		Expect(cur.Status.NodeSelection).To(ContainSubstring("chosen for spec.target among 3 candidate node(s)"))
		GinkgoWriter.Printf("decision: %s\n", ts.Message)

		chosen := []string{cur.Status.Nodes[0].Name, cur.Status.Nodes[1].Name}
		finishPod(ctx, ns, "met-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "met-prep-1", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "met-probe-dev-0", corev1.PodSucceeded, deviceReport(chosen[0], 151e6, 301e6))
		finishPod(ctx, ns, "met-probe-dev-1", corev1.PodSucceeded, deviceReport(chosen[1], 150e6, 300e6))
		finishNetwork(ctx, ns, "met", chosen, 1e9)
		finishPod(ctx, ns, "met-sweep-0-0", corev1.PodSucceeded, idealReport(chosen[0], 1, 120e6, 250e6))
		finishPod(ctx, ns, "met-sweep-0-1", corev1.PodSucceeded, idealReport(chosen[1], 1, 120e6, 250e6))
		finishPod(ctx, ns, "met-sweep-1-0", corev1.PodSucceeded, idealReport(chosen[0], 4, 149e6, 299e6))
		finishPod(ctx, ns, "met-sweep-1-1", corev1.PodSucceeded, idealReport(chosen[1], 4, 148e6, 298e6))

		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonTargetMet))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		ts = get(ctx, bb).Status.Target
		Expect(ts.State).To(Equal(v1alpha1.TargetMetState))
		Expect(*ts.Write.MeasuredBytesPerSecond).To(Equal(int64(297e6)))
		Expect(*ts.Write.Met).To(BeTrue())
		Expect(*ts.Write.MeasuredMarginPercent).To(Equal(int32(19)))
		GinkgoWriter.Printf("verdict: %s\n", ts.Message)

		// `kubectl beeburst limits` shows why these nodes and the verdict.
		out, err := exec.Command("go", "run", "../cmd/kubectl-beeburst", "limits", "--kubeconfig", kubeconfig, "-n", ns, "met").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", string(out))
		Expect(string(out)).To(And(ContainSubstring("chosen for spec.target among 3 candidate node(s)"),
			ContainSubstring("target Met: Target met: write 297 MB/s measured")))
	})

	It("after a sweep that falls short, reports the target not met with the bottleneck", func() {
		// The devices measure less than documented: 110 MB/s each.
		bb, chosen := probedFor250M("short", 110e6, 110e6)
		finishPod(ctx, ns, "short-sweep-0-0", corev1.PodSucceeded, idealReport(chosen[0], 1, 90e6, 250e6))
		finishPod(ctx, ns, "short-sweep-0-1", corev1.PodSucceeded, idealReport(chosen[1], 1, 90e6, 250e6))
		finishPod(ctx, ns, "short-sweep-1-0", corev1.PodSucceeded, idealReport(chosen[0], 4, 108e6, 299e6))
		finishPod(ctx, ns, "short-sweep-1-1", corev1.PodSucceeded, idealReport(chosen[1], 4, 108e6, 298e6))
		// Devices far below their documented figures are probed once more; they confirm.
		finishPod(ctx, ns, "short-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(chosen[0], 110e6, 300e6))
		finishPod(ctx, ns, "short-probe-dev-1-r2", corev1.PodSucceeded, deviceReport(chosen[1], 110e6, 300e6))

		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTargetNotMet))
		ts := get(ctx, bb).Status.Target
		Expect(ts.State).To(Equal(v1alpha1.TargetNotMet))
		Expect(*ts.Write.MeasuredBytesPerSecond).To(Equal(int64(216e6)))
		Expect(*ts.Write.Met).To(BeFalse())
		Expect(ts.Write.Bottleneck).To(Equal("devices"))
		Expect(ts.MoreNodes).NotTo(BeNil())
		Expect(ts.Message).To(ContainSubstring("more"))
		GinkgoWriter.Printf("verdict: %s\n", ts.Message)
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseReady), "a missed target does not fail the burst buffer")
	})

	It("does not judge the target on a sweep that a failed run ended, and says why", func() {
		bb, chosen := probedFor250M("broken", 151e6, 150e6)
		// The first point (1 process per node) falls short of 250 MB/s; the second fails.
		finishPod(ctx, ns, "broken-sweep-0-0", corev1.PodSucceeded, idealReport(chosen[0], 1, 90e6, 250e6))
		finishPod(ctx, ns, "broken-sweep-0-1", corev1.PodSucceeded, idealReport(chosen[1], 1, 90e6, 250e6))
		finishPod(ctx, ns, "broken-sweep-1-0", corev1.PodFailed, failedReport("fio: write: Input/output error"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(And(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown),
			HaveField("Message", ContainSubstring("Input/output error"))))
		Consistently(condition(ctx, bb, v1alpha1.ConditionTargetMet), 2*time.Second).ShouldNot(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTargetNotMet),
			"180 MB/s from the one point that ran is not a verdict")
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseDegraded))
	})

	It("says a target no count of the candidates can meet is unreachable, how many more nodes would do, and carries on", func() {
		bb := targetBB("far", "1G")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTargetUnreachable))
		cur := get(ctx, bb)
		ts := cur.Status.Target
		Expect(cur.Status.Nodes).To(HaveLen(3), "the closest count: all three")
		Expect(ts.State).To(Equal(v1alpha1.TargetUnreachable))
		Expect(ts.Cause).To(Equal(v1alpha1.CauseTooFewNodes))
		Expect(*ts.MoreNodes).To(Equal(int32(5)), "1 GB/s x 1.1 at 150 MB/s a node: 8 nodes")
		Expect(*ts.Write.PredictedBytesPerSecond).To(Equal(int64(450e6)))
		Expect(*ts.Write.PredictedMarginPercent).To(Equal(int32(-55)))
		Expect(ts.Message).To(ContainSubstring("5 more like"))
		GinkgoWriter.Printf("decision: %s\n", ts.Message)
		for i := range 3 {
			finishPod(ctx, ns, "far-prep-"+string(rune('0'+i)), corev1.PodSucceeded, "")
		}
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(condition(ctx, bb, v1alpha1.ConditionTargetMet)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTargetUnreachable),
			"without a sweep (profile none) the prediction stands")
		Expect(warningEvents(ctx, ns, "far", v1alpha1.ReasonTargetUnreachable)()).NotTo(BeEmpty())
	})

	It("checks the target against nodes chosen without a decision (an operator that did not act on targets)", func() {
		bb := targetBB("older", "250M")
		bb.Spec.Nodes.Count = 1
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "older-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(get(ctx, bb).Status.Target.Mode).To(Equal(v1alpha1.TargetCheck))
		// As an older operator left it: nodes, no decision.
		Eventually(func() error {
			cur := get(ctx, bb)
			cur.Status.Target = nil
			meta.RemoveStatusCondition(&cur.Status.Conditions, v1alpha1.ConditionTargetMet)
			return k8s.Status().Update(ctx, cur)
		}, timeout).Should(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTargetUnreachable))
		ts := get(ctx, bb).Status.Target
		Expect(ts.Mode).To(Equal(v1alpha1.TargetCheck))
		Expect(ts.NodeCount).To(Equal(int32(1)))
		Expect(ts.Cause).To(Equal(v1alpha1.CauseTooFewNodes))
	})

	It("prefers a fresh measurement: one node measured at 300 MB/s meets 250 MB/s alone", func() {
		cache(nodes[1], 300e6, time.Now().Add(-10*time.Minute))
		bb := targetBB("fresh", "250M")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonTargetPredicted))
		cur := get(ctx, bb)
		Expect(cur.Status.Nodes).To(HaveLen(1))
		Expect(cur.Status.Nodes[0].Name).To(Equal(nodes[1]), "the node that covers the target on its own first")
		n := cur.Status.Target.Nodes[0]
		Expect(n.WriteSource).To(Equal("measured"))
		Expect(*n.WriteBytesPerSecond).To(Equal(int64(300e6)))
		Expect(n.MeasuredTime).NotTo(BeNil())
	})

	It("without fresh figures falls back to the documented ones and says so", func() {
		// Measured 30 hours ago (stale): the labels' 150 MB/s count, not the old 300 MB/s.
		for _, n := range nodes {
			cache(n, 300e6, time.Now().Add(-30*time.Hour))
		}
		bb := targetBB("stale", "250M")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionTargetMet), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonTargetPredicted))
		cur := get(ctx, bb)
		Expect(cur.Status.Nodes).To(HaveLen(2))
		ts := cur.Status.Target
		for _, n := range ts.Nodes {
			Expect(n.WriteSource).To(Equal("label"))
			Expect(*n.WriteBytesPerSecond).To(Equal(int64(150e6)))
		}
		Expect(ts.Message).To(And(ContainSubstring("no fresh measurement"), ContainSubstring("stale")))
		c := condition(ctx, bb, v1alpha1.ConditionTargetMet)()
		Expect(c.Message).To(ContainSubstring("stale"))
		GinkgoWriter.Printf("decision: %s\n", ts.Message)
	})
})
