package controllers_test

import (
	"context"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// kstatusOf computes what generic tools (cli-utils' kstatus, as Flux and Argo CD use it) make
// of a burst buffer as the API server serves it.
func kstatusOf(ctx context.Context, bb *v1alpha1.BurstBuffer) func() *status.Result {
	return func() *status.Result {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("BurstBuffer"))
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), u); err != nil {
			return nil
		}
		res, err := status.Compute(u)
		Expect(err).NotTo(HaveOccurred())
		return res
	}
}

func haveKstatus(s status.Status) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Status", s))
}

// expectGenerationObserved: status.observedGeneration and every condition's equal
// metadata.generation.
func expectGenerationObserved(g Gomega, cur *v1alpha1.BurstBuffer) {
	g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
	g.Expect(cur.Status.Conditions).NotTo(BeEmpty())
	for _, c := range cur.Status.Conditions {
		g.Expect(c.ObservedGeneration).To(Equal(cur.Generation), "%s", c.Type)
	}
}

func kubectlWait(ns, name, timeout string) *exec.Cmd {
	cmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "-n", ns, "wait", "bb/"+name,
		"--for=condition=Ready", "--timeout="+timeout)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	return cmd
}

var _ = Describe("kstatus conventions: what kubectl wait, Argo CD and Flux read", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = namespaceWithTwoNodes(ctx)
	})

	It("is InProgress before the operator has seen it, not Current (the API server defaults the status)", func() {
		// The operator is down: nothing writes the status.
		stopManager()
		DeferCleanup(startManager)
		bb := localBB(ns, "unseen", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, bb) }) // before the manager is back: no finalizer yet
		Expect(get(ctx, bb).Status.ObservedGeneration).To(BeZero())
		res := kstatusOf(ctx, bb)()
		Expect(res).To(haveKstatus(status.InProgressStatus), "kstatus: %s", res.Message)
		GinkgoWriter.Println("kstatus before the operator's first visit:", res.Status, res.Message)
	})

	It("is InProgress while provisioning, Current once Ready, and kubectl wait --for=condition=Ready returns then", func() {
		bb := localBB(ns, "ks", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		Eventually(kstatusOf(ctx, bb), timeout).Should(haveKstatus(status.InProgressStatus))
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
			ready := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady)
			rec := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReconciling)
			g.Expect(rec).To(haveStatus(metav1.ConditionTrue, ready.Reason))
			g.Expect(rec.Message).To(Equal(ready.Message))
			g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStalled)).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonReconciling))
			expectGenerationObserved(g, cur)
		}, timeout).Should(Succeed())
		res := kstatusOf(ctx, bb)()
		GinkgoWriter.Println("kstatus while provisioning:", res.Status, res.Message)
		Expect(res.Message).To(ContainSubstring("prepar"))

		// Not Ready yet: kubectl wait times out; started now, it returns once Ready.
		Expect(kubectlWait(ns, "ks", "1s").Run()).To(HaveOccurred())
		waiting := kubectlWait(ns, "ks", "60s")
		Expect(waiting.Start()).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- waiting.Wait() }()
		Consistently(done, time.Second).ShouldNot(Receive())

		finishPod(ctx, ns, "ks-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "ks-prep-1", corev1.PodSucceeded, "")
		Eventually(done, timeout).Should(Receive(BeNil()), "kubectl wait --for=condition=Ready returns 0 once Ready")
		Eventually(kstatusOf(ctx, bb), timeout).Should(haveKstatus(status.CurrentStatus))
		cur := get(ctx, bb)
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReconciling)).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonReady))
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStalled)).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonReady))
		expectGenerationObserved(Default, cur)
		Expect(kubectlWait(ns, "ks", "5s").Run()).To(Succeed())

		By("a spec change: every condition says it saw the new generation, and it stays Current")
		before := cur.Generation
		// The operator may still be writing (it tidies the measuring pods once measured), so
		// the update retries on a conflict, as kubectl edit would.
		Eventually(func() error {
			cur = get(ctx, bb)
			cur.Spec.Teardown.Hurry = true
			return k8s.Update(ctx, cur)
		}, timeout).Should(Succeed())
		gen := get(ctx, bb).Generation
		Expect(gen).To(BeNumerically(">", before))
		Eventually(func(g Gomega) {
			now := get(ctx, bb)
			g.Expect(now.Generation).To(Equal(gen))
			expectGenerationObserved(g, now)
		}, timeout).Should(Succeed())
		Expect(kstatusOf(ctx, bb)()).To(haveKstatus(status.CurrentStatus))

		By("deletion: Terminating for kstatus; Reconciling True with reason Deleting while the finalizer works")
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(kstatusOf(ctx, bb), timeout).Should(haveKstatus(status.TerminatingStatus))
		Eventually(condition(ctx, bb, v1alpha1.ConditionReconciling), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonDeleting))
		finishPod(ctx, ns, "ks-clean-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "ks-clean-1", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})

	It("is Failed (Stalled) when the spec is refused, with the refusal's reason", func() {
		bb := localBB(ns, "refused", 1)
		bb.Spec.Storage.Path = "/opt/nvme"
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(kstatusOf(ctx, bb), timeout).Should(haveKstatus(status.FailedStatus))
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
		stalled := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStalled)
		Expect(stalled).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonStoragePathNotAllowed))
		Expect(stalled.Message).To(ContainSubstring("spec.storage.path /opt/nvme"))
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReconciling)).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStoragePathNotAllowed))
		expectGenerationObserved(Default, cur)
		Expect(kstatusOf(ctx, bb)().Message).To(ContainSubstring("spec.storage.path /opt/nvme"))
		// kubectl wait gives up at its timeout, with a non-zero exit.
		Expect(kubectlWait(ns, "refused", "1s").Run()).To(HaveOccurred())
		deleteAndWait(ctx, bb)
	})

	It("is Failed (Stalled) when a measurement failed (Degraded), not InProgress for ever", func() {
		bb := localBB(ns, "degraded", 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "degraded-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "degraded-prep-1", corev1.PodSucceeded, "")
		Eventually(kstatusOf(ctx, bb), timeout).Should(And(haveKstatus(status.InProgressStatus), HaveField("Message", ContainSubstring("probing"))))
		finishPod(ctx, ns, "degraded-probe-dev-1", corev1.PodFailed, failedReport("fio: write: Input/output error"))
		Eventually(kstatusOf(ctx, bb), timeout).Should(haveKstatus(status.FailedStatus))
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseDegraded))
		stalled := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStalled)
		Expect(stalled).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonProbeFailed))
		Expect(stalled.Message).To(ContainSubstring("Input/output error"))
		expectGenerationObserved(Default, cur)
	})

	It("is Stalled when stage-out cannot run (StageOutFailed), and no Warning event repeats the stage's", func() {
		bb := localBB(ns, "stuck", 1)
		bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "missing"}}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "stuck-prep-0", corev1.PodSucceeded, "")
		// Ready first (a workload may have written to it, so stage-out must run). Not
		// kstatus' Current alone: an object whose status the operator has not written yet is
		// Current for kstatus too, and deleting it then is a deletion before Ready.
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(kstatusOf(ctx, bb)()).To(haveKstatus(status.CurrentStatus))
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStageOutFailed))
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			out := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStagedOut)
			g.Expect(out).NotTo(BeNil())
			stalled := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStalled)
			g.Expect(stalled).To(haveStatus(metav1.ConditionTrue, out.Reason))
			g.Expect(stalled.Message).To(ContainSubstring("spec.teardown.hurry"))
		}, timeout).Should(Succeed())
		Expect(condition(ctx, bb, v1alpha1.ConditionReconciling)()).To(HaveField("Status", metav1.ConditionFalse))
		// kstatus itself says Terminating for any object being deleted.
		Expect(kstatusOf(ctx, bb)()).To(haveKstatus(status.TerminatingStatus))
		Consistently(kstatusEvents(ctx, ns, "stuck"), time.Second).Should(BeEmpty())
		cur := get(ctx, bb)
		cur.Spec.Teardown.Hurry = true
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		finishPod(ctx, ns, "stuck-clean-0", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})
})

// kstatusEvents lists the events recorded for the Reconciling or Stalled condition of a burst
// buffer (the recorder's action is the condition type).
func kstatusEvents(ctx context.Context, ns, name string) func() []string {
	return func() []string {
		var evs eventsv1.EventList
		Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, e := range evs.Items {
			if e.Regarding.Name == name && (e.Action == v1alpha1.ConditionReconciling || e.Action == v1alpha1.ConditionStalled) {
				out = append(out, e.Action+" "+e.Reason+": "+e.Note)
			}
		}
		return out
	}
}
