package controllers_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/staging"
)

// Stage-in and stage-out. The copies run as pods; their completion is simulated in the API
// with the agent's report as the termination message (the copy itself is tested for real in
// internal/treecopy and cmd/agent, and end to end on the testbed by test/e2e).
var _ = Describe("Stage-in and stage-out", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = namespaceWithTwoNodes(ctx)
	})
	claim := func(name string, mode corev1.PersistentVolumeAccessMode) {
		Expect(k8s.Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{mode},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})).To(Succeed())
	}
	report := func(files, bytes int64) string {
		return fmt.Sprintf(`{"command":"stage","phase":"succeeded","stage":{"files":%d,"bytes":%d,"seconds":2}}`, files, bytes)
	}
	failed := func(msg string) string {
		return fmt.Sprintf(`{"command":"stage","phase":"failed","message":%q}`, msg)
	}
	podName := func(bb *v1alpha1.BurstBuffer, d staging.Direction, i int) string {
		return staging.PodName(get(ctx, bb), d, i)
	}
	exists := func(name string) func() bool {
		return func() bool { return k8s.Get(ctx, podKey(ctx, ns, name), &corev1.Pod{}) == nil }
	}
	// retry deletes a failed copy pod and waits for its replacement.
	retry := func(name string) {
		old := getPod(ctx, ns, name)()
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Eventually(func() bool {
			p := getPod(ctx, ns, name)()
			return p != nil && p.UID != old.UID
		}, timeout).Should(BeTrue(), "a fresh pod replaces the deleted one")
	}
	update := func(bb *v1alpha1.BurstBuffer, mutate func(*v1alpha1.BurstBuffer)) {
		Eventually(func() error {
			cur := get(ctx, bb)
			mutate(cur)
			return k8s.Update(ctx, cur)
		}, timeout).Should(Succeed())
	}
	stageInBB := func(name string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		bb.Spec.StageIn = []v1alpha1.StageSpec{{Path: "input", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "datasets", Path: "run-7"}}}
		return bb
	}

	It("stages in on every node before the gate lifts, with totals in the status", func() {
		claim("datasets", corev1.ReadOnlyMany)
		bb := stageInBB("in")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "in", true))).To(Succeed())
		finishPod(ctx, ns, "in-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "in-prep-1", corev1.PodSucceeded, "")

		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStagingIn))
		Expect(condition(ctx, bb, v1alpha1.ConditionReady)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStaging))
		// ReadOnlyMany: both nodes copy at once, each into its own scratch.
		pod := &corev1.Pod{}
		for i, node := range []string{ns + "-a", ns + "-b"} {
			Expect(k8s.Get(ctx, podKey(ctx, ns, podName(bb, staging.In, i)), pod)).To(Succeed())
			Expect(pod.Spec.NodeName).To(BeEmpty(), "scheduled, so that the scheduler binds the claim")
			Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values).To(Equal([]string{node}))
			Expect(pod.Spec.ActiveDeadlineSeconds).To(BeNil(), "a copy takes as long as the data needs")
			Expect(pod.Spec.Containers[0].Args).To(ContainElements("stage", "/claims/claim-0/run-7", "/burst-buffer/input"))
			Expect(pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal("datasets"))
			Expect(pod.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly).To(BeTrue())
			Expect(pod.Spec.Volumes[1].PersistentVolumeClaim.ClaimName).To(Equal(bb.Name+"-staging"), "the burst buffer through its staging claim, no host path")
			Expect(metav1.IsControlledBy(pod, get(ctx, bb))).To(BeTrue())
		}
		Expect(gates(getPod(ctx, ns, "job-0")())).To(ConsistOf(v1alpha1.SchedulingGate))

		finishPod(ctx, ns, podName(bb, staging.In, 0), corev1.PodSucceeded, report(3, 3_000_000))
		Consistently(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, 2*time.Second).Should(ConsistOf(v1alpha1.SchedulingGate))
		finishPod(ctx, ns, podName(bb, staging.In, 1), corev1.PodSucceeded, report(3, 3_000_000))

		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Eventually(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, timeout).Should(BeEmpty())
		st := get(ctx, bb).Status.StageIn
		Expect(st.Phase).To(Equal(v1alpha1.StageSucceeded))
		Expect(st.Files).To(Equal(int64(6)))
		Expect(st.Bytes).To(Equal(int64(6_000_000)))
		Expect(st.CompletionTime).NotTo(BeNil())
		Expect(st.Nodes).To(HaveLen(2))
		Expect(condition(ctx, bb, v1alpha1.ConditionStagedIn)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonStaged))
	})

	It("keeps the gate closed when stage-in fails, says why, and retries when the failed pod is deleted", func() {
		claim("datasets", corev1.ReadWriteMany)
		bb := stageInBB("fail")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "fail", true))).To(Succeed())
		finishPod(ctx, ns, "fail-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "fail-prep-1", corev1.PodSucceeded, "")
		first := podName(bb, staging.In, 1)
		finishPod(ctx, ns, podName(bb, staging.In, 0), corev1.PodSucceeded, report(1, 10))
		finishPod(ctx, ns, first, corev1.PodFailed, failed("open /claims/claim-0/run-7: no such file or directory"))

		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))
		c := condition(ctx, bb, v1alpha1.ConditionStagedIn)()
		Expect(c).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStageFailed))
		Expect(c.Message).To(And(ContainSubstring("no such file or directory"), ContainSubstring(ns+"-b"), ContainSubstring("delete the failed pod(s) "+first)))
		Consistently(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, 2*time.Second).Should(ConsistOf(v1alpha1.SchedulingGate))

		// Deleting the failed pod is the retry: a fresh one comes (envtest has no kubelet, so
		// the old pod is gone at once).
		retry(first)
		finishPod(ctx, ns, first, corev1.PodSucceeded, report(1, 10))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Eventually(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, timeout).Should(BeEmpty())
	})

	It("waits for a missing claim, and copies one node at a time from a ReadWriteOnce claim", func() {
		bb := stageInBB("rwo")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "rwo-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "rwo-prep-1", corev1.PodSucceeded, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionStagedIn), timeout).Should(haveStatus(metav1.ConditionFalse, "ClaimNotFound"))
		Expect(condition(ctx, bb, v1alpha1.ConditionStagedIn)().Message).To(ContainSubstring("PersistentVolumeClaim " + ns + "/datasets does not exist"))
		Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseStagingIn), "waiting, not failed: the claim may come")

		claim("datasets", corev1.ReadWriteOnce)
		Eventually(exists(podName(bb, staging.In, 0)), timeout).Should(BeTrue(), "the claim's creation starts the copy")
		Consistently(exists(podName(bb, staging.In, 1)), 2*time.Second).Should(BeFalse(), "ReadWriteOnce: one node at a time")
		Expect(get(ctx, bb).Status.StageIn.Nodes[1].Message).To(ContainSubstring("one node at a time"))
		finishPod(ctx, ns, podName(bb, staging.In, 0), corev1.PodSucceeded, report(1, 10))
		finishPod(ctx, ns, podName(bb, staging.In, 1), corev1.PodSucceeded, report(1, 10))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
	})

	Context("stage-out", func() {
		outBB := func(name string) *v1alpha1.BurstBuffer {
			claim("results", corev1.ReadWriteMany)
			bb := localBB(ns, name, 2)
			bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "results", Path: "run-7"}}}
			Expect(k8s.Create(ctx, bb)).To(Succeed())
			finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
			Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
			Expect(condition(ctx, bb, v1alpha1.ConditionStagedOut)()).To(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonPending))
			return bb
		}
		gone := func(bb *v1alpha1.BurstBuffer) func() bool {
			return func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
			}
		}

		It("after the workload: copies every node's results, then removes the data", func() {
			bb := outBB("out")
			Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "out", false))).To(Succeed())
			finishPod(ctx, ns, "job-0", corev1.PodSucceeded, "")

			Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStagingOut))
			pod := &corev1.Pod{}
			Expect(k8s.Get(ctx, podKey(ctx, ns, podName(bb, staging.Out, 0)), pod)).To(Succeed())
			Expect(pod.Spec.Containers[0].Args).To(ContainElements("/burst-buffer/results", "/claims/claim-0/run-7", "--missing-ok"))
			Expect(pod.Spec.Volumes[1].PersistentVolumeClaim.ReadOnly).To(BeFalse())
			Consistently(exists("out-clean-0"), 2*time.Second).Should(BeFalse(), "no data is removed before it was copied")

			finishPod(ctx, ns, podName(bb, staging.Out, 0), corev1.PodSucceeded, report(2, 2048))
			finishPod(ctx, ns, podName(bb, staging.Out, 1), corev1.PodSucceeded, report(0, 0))
			finishPod(ctx, ns, "out-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "out-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("keeps the data and the burst buffer when stage-out fails, until retried or given up", func() {
			bb := outBB("keep")
			Expect(k8s.Delete(ctx, bb)).To(Succeed())
			failing := podName(bb, staging.Out, 1)
			finishPod(ctx, ns, podName(bb, staging.Out, 0), corev1.PodSucceeded, report(2, 2048))
			finishPod(ctx, ns, failing, corev1.PodFailed, failed("/claims/claim-0/run-7/results/a already exists with different content"))

			Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStageOutFailed))
			c := condition(ctx, bb, v1alpha1.ConditionStagedOut)()
			Expect(c).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStageFailed))
			Expect(c.Message).To(And(ContainSubstring("already exists with different content"), ContainSubstring("The data stays on the nodes"),
				ContainSubstring("spec.teardown.hurry")))
			Consistently(exists("keep-clean-0"), 3*time.Second).Should(BeFalse(), "nothing is deleted silently")
			Expect(get(ctx, bb).Status.StageOut.Nodes[1].Phase).To(Equal(v1alpha1.StageFailed))

			// The human decides: here, retry after fixing the cause.
			retry(failing)
			finishPod(ctx, ns, failing, corev1.PodSucceeded, report(1, 1))
			finishPod(ctx, ns, "keep-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "keep-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("fails a stage-out to an object store whose Secret is missing, and copies once it exists", func() {
			bb := localBB(ns, "s3", 2)
			bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", S3: &v1alpha1.S3Source{
				URL: "s3://results/run-7", Endpoint: "http://10.0.0.9:9000", CredentialsSecret: "store-keys"}}}
			Expect(k8s.Create(ctx, bb)).To(Succeed())
			finishPod(ctx, ns, "s3-prep-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "s3-prep-1", corev1.PodSucceeded, "")
			Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
			Expect(k8s.Delete(ctx, bb)).To(Succeed())

			Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStageOutFailed))
			c := condition(ctx, bb, v1alpha1.ConditionStagedOut)()
			Expect(c).To(haveStatus(metav1.ConditionFalse, "SecretNotFound"))
			Expect(c.Message).To(And(ContainSubstring("Secret "+ns+"/store-keys (s3.credentialsSecret) does not exist"),
				ContainSubstring("The data stays on the nodes")))
			Consistently(exists(podName(bb, staging.Out, 0)), 2*time.Second).Should(BeFalse())

			Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "store-keys", Namespace: ns},
				StringData: map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}})).To(Succeed())
			// An object store takes every node at once.
			Eventually(exists(podName(bb, staging.Out, 0)), timeout).Should(BeTrue(), "the Secret's creation starts the copy")
			Eventually(exists(podName(bb, staging.Out, 1)), timeout).Should(BeTrue())
			pod := getPod(ctx, ns, podName(bb, staging.Out, 0))()
			Expect(pod.Spec.Containers[0].Args).To(ContainElements("/burst-buffer/results",
				"s3://results/run-7?endpoint=http%3A%2F%2F10.0.0.9%3A9000&env-prefix=S3_0_", "--missing-ok"))
			Expect(pod.Spec.Containers[0].EnvFrom).To(HaveLen(1))
			Expect(pod.Spec.Containers[0].EnvFrom[0].SecretRef.Name).To(Equal("store-keys"))
			Expect(pod.Spec.Volumes).To(HaveLen(1), "no claim volume")

			finishPod(ctx, ns, podName(bb, staging.Out, 0), corev1.PodSucceeded, report(2, 2048))
			finishPod(ctx, ns, podName(bb, staging.Out, 1), corev1.PodSucceeded, report(1, 10))
			finishPod(ctx, ns, "s3-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "s3-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("says that a namespace being deleted stops the stage-out, keeps the data, and lets hurry give it up", func() {
			bb := localBB(ns, "nsgone", 2)
			bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", S3: &v1alpha1.S3Source{URL: "s3://results/run-7", Endpoint: "http://10.0.0.9:9000"}}}
			createReady(ctx, bb)
			// The namespace's deletion deletes the burst buffer (here by hand: envtest runs no
			// namespace controller) and refuses new pods and claims in the namespace.
			Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			Expect(k8s.Delete(ctx, bb)).To(Succeed())

			Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStageOutFailed))
			c := condition(ctx, bb, v1alpha1.ConditionStagedOut)()
			Expect(c).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonNamespaceDeleting))
			Expect(c.Message).To(And(ContainSubstring("namespace "+ns+" is being deleted"), ContainSubstring("The data stays on the nodes"),
				ContainSubstring("spec.teardown.hurry: true")))
			Consistently(exists("nsgone-clean-0"), 2*time.Second).Should(BeFalse(), "nothing is removed")

			update(bb, func(cur *v1alpha1.BurstBuffer) { cur.Spec.Teardown.Hurry = true })
			finishPod(ctx, ns, "nsgone-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "nsgone-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("stages out the nodes still there when one is gone, and only the gone node holds the teardown", func() {
			bb := outBB("lost")
			Expect(k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-b"}})).To(Succeed())
			Expect(k8s.Delete(ctx, bb)).To(Succeed())

			Eventually(exists(podName(bb, staging.Out, 0)), timeout).Should(BeTrue(), "the node still there copies")
			Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStaging))
			Expect(condition(ctx, bb, v1alpha1.ConditionStagedOut)().Message).To(And(ContainSubstring("node(s) "+ns+"-b gone"),
				ContainSubstring("would give up the stage-out of every node not done yet, "+ns+"-a too")))
			Expect(get(ctx, bb).Status.StageOut.Nodes[1].Message).To(Equal(staging.GoneMessage))
			Consistently(exists(podName(bb, staging.Out, 1)), 2*time.Second).Should(BeFalse(), "no copy for a node that is gone")

			finishPod(ctx, ns, podName(bb, staging.Out, 0), corev1.PodSucceeded, report(2, 2048))
			Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonNodeGone))
			Expect(condition(ctx, bb, v1alpha1.ConditionStagedOut)().Message).To(And(ContainSubstring("the other nodes' data is staged out"),
				ContainSubstring("give up the data of "+ns+"-b")))
			Expect(get(ctx, bb).Status.StageOut.Nodes[0].Phase).To(Equal(v1alpha1.StageSucceeded))
			Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseStageOutFailed))
			Consistently(exists("lost-clean-0"), 2*time.Second).Should(BeFalse(), "nothing is removed before the human decides")

			update(bb, func(cur *v1alpha1.BurstBuffer) { cur.Spec.Teardown.Hurry = true })
			finishPod(ctx, ns, "lost-clean-0", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("copies a gone node's data once the node is back", func() {
			bb := outBB("back")
			var b corev1.Node
			Expect(k8s.Get(ctx, client.ObjectKey{Name: ns + "-b"}, &b)).To(Succeed())
			Expect(k8s.Delete(ctx, &b)).To(Succeed())
			Expect(k8s.Delete(ctx, bb)).To(Succeed())
			Eventually(exists(podName(bb, staging.Out, 0)), timeout).Should(BeTrue())
			finishPod(ctx, ns, podName(bb, staging.Out, 0), corev1.PodSucceeded, report(1, 1024))
			Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonNodeGone))

			makeNode(ctx, ns+"-b", map[string]string{"pool": ns}) // the machine registers again
			Eventually(exists(podName(bb, staging.Out, 1)), timeout).Should(BeTrue(), "its copy starts")
			finishPod(ctx, ns, podName(bb, staging.Out, 1), corev1.PodSucceeded, report(1, 1024))
			Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonStaged))
			finishPod(ctx, ns, "back-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "back-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("keeps stage-out given up once hurry took effect, when hurry is set back to false", func() {
			bb := outBB("undo")
			update(bb, func(cur *v1alpha1.BurstBuffer) { cur.Spec.Teardown.Hurry = true })
			Expect(k8s.Delete(ctx, bb)).To(Succeed())
			Eventually(exists("undo-clean-0"), timeout).Should(BeTrue(), "hurry: the data is being removed")
			Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonSkippedByHurry))

			update(bb, func(cur *v1alpha1.BurstBuffer) { cur.Spec.Teardown.Hurry = false })
			Consistently(exists(podName(bb, staging.Out, 0)), 3*time.Second).Should(BeFalse(), "no copy of data being removed")
			c := condition(ctx, bb, v1alpha1.ConditionStagedOut)()
			Expect(c).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonSkippedByHurry))
			Expect(c.Message).To(ContainSubstring("cannot be undone"))
			Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseTearingDown), "given up, not staging out")
			finishPod(ctx, ns, "undo-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "undo-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})

		It("waits for running workload pods before it copies, and hurry gives the data up", func() {
			bb := outBB("wait")
			Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "wait", false))).To(Succeed())
			update(bb, func(cur *v1alpha1.BurstBuffer) { cur.Spec.Teardown.Policy = v1alpha1.TeardownManual })
			Expect(k8s.Delete(ctx, bb)).To(Succeed())
			Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, "WaitingForWorkload"))
			Expect(condition(ctx, bb, v1alpha1.ConditionStagedOut)().Message).To(ContainSubstring("job-0"))
			Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseStagingOut))
			Consistently(exists(podName(bb, staging.Out, 0)), 2*time.Second).Should(BeFalse(), "no copy while the job writes")

			finishPod(ctx, ns, "job-0", corev1.PodSucceeded, "")
			Eventually(exists(podName(bb, staging.Out, 0)), timeout).Should(BeTrue())
			update(bb, func(cur *v1alpha1.BurstBuffer) { cur.Spec.Teardown.Hurry = true })
			// Hurry stops the running copies and removes the data.
			Eventually(exists(podName(bb, staging.Out, 0)), timeout).Should(BeFalse())
			finishPod(ctx, ns, "wait-clean-0", corev1.PodSucceeded, "")
			finishPod(ctx, ns, "wait-clean-1", corev1.PodSucceeded, "")
			Eventually(gone(bb), timeout).Should(BeTrue())
		})
	})
})
