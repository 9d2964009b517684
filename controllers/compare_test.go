package controllers_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
)

// validation.compareWith: the ideal workload on other storage, beside the burst
// buffer's figure, after the sweep and before Ready.
var _ = Describe("validation.compareWith: is it worth it", func() {
	var (
		ctx   context.Context
		ns    string
		nodes []string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		nodes = []string{ns + "-a", ns + "-b"}
		for _, n := range nodes {
			makeNode(ctx, n, map[string]string{"pool": ns, v1alpha1.LabelLinkRateBitsPerSecond: "1G",
				v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"})
		}
		forgetFiguresOf(ctx, nodes)
	})
	compareBB := func(name string, with v1alpha1.CompareWithSpec) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.CompareWith = &with
		return bb
	}
	claim := func(name string, mode corev1.PersistentVolumeAccessMode) {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{mode},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceMust("10Gi")}}}}
		Expect(k8s.Create(ctx, pvc)).To(Succeed())
	}
	// measure plays the kubelet through preparation, stage 2 and the sweep (best write at 2
	// nodes x 4 processes: 580 MB/s, read 780 MB/s).
	measure := func(name string) {
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], 300e6, 400e6))
		finishPod(ctx, ns, name+"-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		finishNetwork(ctx, ns, name, nodes, 118e6)
		finishPod(ctx, ns, name+"-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, 200e6, 300e6))
		finishPod(ctx, ns, name+"-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 200e6, 300e6))
		finishPod(ctx, ns, name+"-sweep-1-0", corev1.PodSucceeded, idealReport(nodes[0], 4, 290e6, 390e6))
		finishPod(ctx, ns, name+"-sweep-1-1", corev1.PodSucceeded, idealReport(nodes[1], 4, 290e6, 390e6))
	}
	comparison := func(bb *v1alpha1.BurstBuffer) *v1alpha1.ComparisonStatus { return get(ctx, bb).Status.Comparison }

	It("with a ReadWriteOnce claim runs the best point's processes on one node there and on the burst buffer, and shows both", func() {
		claim("results", corev1.ReadWriteOnce)
		bb := compareBB("pvc", v1alpha1.CompareWithSpec{PersistentVolumeClaim: &v1alpha1.PVCSource{ClaimName: "results"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonPending))
		measure("pvc")

		// The quick sweep measured 2 nodes only: the burst buffer runs 1 node x 4 first.
		pod := &corev1.Pod{}
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, "pvc-compare-1-0"), pod) }, timeout).Should(Succeed())
		Expect(pod.Spec.NodeName).To(Equal(nodes[0]))
		Expect(pod.Spec.Containers[0].Args).To(ContainElements("ideal", "--dir", "/burst-buffer", "--procs", "4"))
		Eventually(func() string { return condition(ctx, bb, v1alpha1.ConditionValidated)().Message }, timeout).Should(ContainSubstring("validation.compareWith"))
		Expect(phase(ctx, bb)()).NotTo(Equal(v1alpha1.PhaseReady), "the job does not start beside the comparison")
		Expect(podExists(ctx, ns, "pvc-compare-0-0")()).To(BeFalse(), "one side at a time")
		finishPod(ctx, ns, "pvc-compare-1-0", corev1.PodSucceeded, idealReport(nodes[0], 4, 290e6, 390e6))

		// Then the claim, through the scheduler (its volume is bound for the node), pinned to it.
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, "pvc-compare-0-0"), pod) }, timeout).Should(Succeed())
		Expect(pod.Spec.NodeName).To(BeEmpty())
		Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values).To(Equal([]string{nodes[0]}))
		Expect(pod.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.PersistentVolumeClaim.ClaimName", "results")))
		Expect(pod.Spec.Containers[0].Args).To(ContainElements("ideal", "--dir", "/compare", "--procs", "4"))
		Expect(podExists(ctx, ns, "pvc-compare-0-1")()).To(BeFalse(), "a ReadWriteOnce claim: one node")
		finishPod(ctx, ns, "pvc-compare-0-0", corev1.PodSucceeded, idealReport(nodes[0], 4, 100e6, 150e6))

		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCompared))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		c := comparison(bb)
		Expect(c.With).To(Equal("claim results"))
		Expect(c.Workload).To(And(ContainSubstring("1 node(s) x 4 process(es)"), ContainSubstring("one node: the claim is ReadWriteOnce")))
		Expect(c.Operations).To(HaveLen(2))
		w := c.Operations[0]
		Expect(w.Operation).To(Equal("write"))
		Expect(*w.BurstBufferBytesPerSecond).To(Equal(int64(290e6)))
		Expect(*w.OtherBytesPerSecond).To(Equal(int64(100e6)))
		Expect(*w.RatioPerMille).To(Equal(int32(2900)))
		Expect(c.Message).To(HavePrefix("the burst buffer is 2.9x faster than claim results for large sequential writes"))
		GinkgoWriter.Printf("comparison: %s\n", c.Message)

		out, err := exec.Command("go", "run", "../cmd/kubectl-beeburst", "limits", "--kubeconfig", kubeconfig, "-n", ns, "pvc").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", string(out))
		Expect(string(out)).To(And(ContainSubstring("compared with claim results"),
			ContainSubstring("write: burst buffer 290 MB/s, claim results 100 MB/s (x2.90)")))
	})

	It("with a ReadWriteMany claim starts its runs on every node together, and says when they still ran apart", func() {
		claim("shared", corev1.ReadWriteMany)
		bb := compareBB("rwx", v1alpha1.CompareWithSpec{PersistentVolumeClaim: &v1alpha1.PVCSource{ClaimName: "shared"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		measure("rwx")
		uid := string(get(ctx, bb).UID)
		for i := range nodes {
			name := "rwx-compare-0-" + strconv.Itoa(i)
			Eventually(podExists(ctx, ns, name), timeout).Should(BeTrue())
			Expect(getPod(ctx, ns, name)().Spec.Containers[0].Args).To(ContainElements("--chain-dir", "/compare/.beeburst-start/"+uid+"/rwx-compare-0-0", "--chain-shared"),
				"the claim is one file system: its runs start together, markers on it")
		}
		// The second node's run started 5 s after the first's ended (a peer past the 30 s wait).
		late := func(node string, by time.Duration) string {
			var rep bench.Report
			Expect(json.Unmarshal([]byte(idealReport(node, 4, 100e6, 150e6)), &rep)).To(Succeed())
			for i := range rep.Results {
				rep.Results[i].End = time.Now().Add(by)
			}
			b, _ := json.Marshal(rep)
			return string(b)
		}
		finishPod(ctx, ns, "rwx-compare-0-0", corev1.PodSucceeded, late(nodes[0], -8*time.Second))
		finishPod(ctx, ns, "rwx-compare-0-1", corev1.PodSucceeded, late(nodes[1], 0))
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCompared))
		Expect(condition(ctx, bb, v1alpha1.ConditionCompared)().Message).To(And(ContainSubstring("Read with care"),
			ContainSubstring("claim shared's, node "+nodes[1]+": its run started 8.0 s after the point's first")))
	})

	It("with a node-local directory runs on every node there and compares with the sweep's best point", func() {
		bb := compareBB("nl", v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: "/scratch"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		measure("nl")
		for i, node := range nodes {
			pod := &corev1.Pod{}
			name := "nl-compare-0-" + strconv.Itoa(i)
			Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, name), pod) }, timeout).Should(Succeed())
			Expect(pod.Spec.NodeName).To(Equal(node))
			Expect(pod.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.HostPath.Path", "/scratch")))
			Expect(pod.Spec.Containers[0].Args).To(ContainElements("--dir", "/compare", "--procs", "4"))
			finishPod(ctx, ns, name, corev1.PodSucceeded, idealReport(node, 4, 280e6, 150e6))
		}
		Expect(podExists(ctx, ns, "nl-compare-1-0")()).To(BeFalse(), "the sweep measured 2 nodes x 4: no extra run on the burst buffer")
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCompared))
		c := comparison(bb)
		Expect(c.With).To(Equal("the node-local disk /scratch"))
		Expect(*c.Operations[0].BurstBufferBytesPerSecond).To(Equal(int64(580e6)))
		Expect(c.Message).To(And(ContainSubstring("about as fast as the node-local disk /scratch for large sequential writes"),
			ContainSubstring("2.6x faster than the node-local disk /scratch for large sequential reads")))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
	})

	It("when the budget ends validation during the comparison, keeps the sweep whole (not cut short) and says a larger budget leaves time", func() {
		bb := compareBB("late", v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: "/scratch"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		measure("late")
		Eventually(podExists(ctx, ns, "late-compare-0-0"), timeout).Should(BeTrue())
		budgetRanOut(ctx, bb, 11*time.Minute)
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonComparisonFailed),
			HaveField("Message", ContainSubstring("a larger validation.timeBudget leaves time for it"))))
		cur := get(ctx, bb)
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionValidated)).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort))
		Expect(cur.Status.Limits.Sweep.Points).To(Equal(int32(2)))
		Expect(cur.Status.Limits.Sweep.CutShort).To(BeFalse(), "both points were measured")
	})

	It("with a claim that does not exist says so at once, compares nothing, and becomes Ready", func() {
		bb := compareBB("missing", v1alpha1.CompareWithSpec{PersistentVolumeClaim: &v1alpha1.PVCSource{ClaimName: "nowhere"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		measure("missing")
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimNotFound))
		Expect(condition(ctx, bb, v1alpha1.ConditionCompared)().Message).To(And(ContainSubstring("PersistentVolumeClaim "+ns+"/nowhere"),
			ContainSubstring("does not exist"), ContainSubstring("goes on without the comparison")))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(comparison(bb)).To(BeNil())
		Expect(podExists(ctx, ns, "missing-compare-0-0")()).To(BeFalse())
		Eventually(warningEvents(ctx, ns, "missing", v1alpha1.ReasonClaimNotFound), timeout).ShouldNot(BeEmpty())
	})

	It("with a claim its pod cannot be scheduled for gives up after the bound, says why, and becomes Ready", func() {
		claim("far", corev1.ReadWriteOnce)
		bb := compareBB("far", v1alpha1.CompareWithSpec{PersistentVolumeClaim: &v1alpha1.PVCSource{ClaimName: "far"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		measure("far")
		finishPod(ctx, ns, "far-compare-1-0", corev1.PodSucceeded, idealReport(nodes[0], 4, 290e6, 390e6))
		// The scheduler cannot place it: the claim's volume is in another zone (for longer than
		// the suite's bound of 3 s).
		pod := &corev1.Pod{}
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, "far-compare-0-0"), pod) }, timeout).Should(Succeed())
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/2 nodes are available: 2 node(s) had volume node affinity conflict.", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimNotMountable))
		Expect(condition(ctx, bb, v1alpha1.ConditionCompared)().Message).To(And(ContainSubstring("far-compare-0-0 for node "+nodes[0]),
			ContainSubstring("volume node affinity conflict"), ContainSubstring("the claim must be reachable from the burst buffer's nodes")))
		Eventually(podExists(ctx, ns, "far-compare-0-0"), timeout).Should(BeFalse(), "the waiting pod goes: it would hold the nodes")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		c := comparison(bb)
		Expect(*c.Operations[0].BurstBufferBytesPerSecond).To(Equal(int64(290e6)))
		Expect(c.Operations[0].OtherBytesPerSecond).To(BeNil())
		Expect(c.Message).To(ContainSubstring("not measured on claim far"))
	})

	It("with a node-local path the operator does not allow runs nothing there and says whom to ask", func() {
		bb := compareBB("opt", v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: "/opt/scratch"}})
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		measure("opt")
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonComparePathNotAllowed))
		Expect(condition(ctx, bb, v1alpha1.ConditionCompared)().Message).To(ContainSubstring("--allowed-storage-roots"))
		Expect(podExists(ctx, ns, "opt-compare-0-0")()).To(BeFalse())
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
	})
})
