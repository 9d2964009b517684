package controllers_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

var _ = Describe("Teardown policies", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
	})
	readyBB := func(name string, td v1alpha1.TeardownSpec) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 1)
		bb.Spec.Teardown = td
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		return bb
	}
	jobPod := func(bb, name string) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.LabelBurstBuffer: bb}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "job", Image: "busybox"}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
	}
	gone := func(bb *v1alpha1.BurstBuffer) func() bool {
		return func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}
	}

	It("AfterWorkload (the default): tears down once every workload pod completed, and says why before", func() {
		bb := readyBB("job", v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterWorkload})
		jobPod("job", "worker-0")
		jobPod("job", "worker-1")
		Eventually(func() string { return reason(get(ctx, bb)) }, timeout).Should(Equal("AfterWorkload: 0 of 2 workload pod(s) completed"))
		finishPod(ctx, ns, "worker-0", corev1.PodSucceeded, "")
		Eventually(func() string { return reason(get(ctx, bb)) }, timeout).Should(Equal("AfterWorkload: 1 of 2 workload pod(s) completed"))
		Consistently(gone(bb), 2*time.Second).Should(BeFalse(), "one pod still runs")

		finishPod(ctx, ns, "worker-1", corev1.PodFailed, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseTearingDown))
		finishPod(ctx, ns, "job-clean-0", corev1.PodSucceeded, "")
		Eventually(gone(bb), timeout).Should(BeTrue())
	})

	It("AfterTTL: tears down ttl after Ready, with the time in the status beforehand", func() {
		bb := readyBB("ttl", v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterTTL, TTL: "3s"})
		Eventually(func() *metav1.Time {
			if w := get(ctx, bb).Status.Workload; w != nil {
				return w.TeardownTime
			}
			return nil
		}, timeout).ShouldNot(BeNil())
		cur := get(ctx, bb)
		Expect(cur.Status.Workload.TeardownTime.Time).To(BeTemporally("~", cur.Status.ReadyTime.Add(3*time.Second), time.Second))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseTearingDown), "the clock alone starts teardown")
		finishPod(ctx, ns, "ttl-clean-0", corev1.PodSucceeded, "")
		Eventually(gone(bb), timeout).Should(BeTrue())
	})

	It("Manual: stays after its workload completed", func() {
		bb := readyBB("manual", v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownManual})
		jobPod("manual", "only")
		finishPod(ctx, ns, "only", corev1.PodSucceeded, "")
		Eventually(func() string { return reason(get(ctx, bb)) }, timeout).Should(Equal("Manual: delete the BurstBuffer to tear it down"))
		Consistently(gone(bb), 3*time.Second).Should(BeFalse())
		Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseReady))
	})

	It("never removes data named in stageOut: an automatic teardown stops in StageOutFailed", func() {
		bb := localBB(ns, "keepout", 1)
		bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "out"}}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "keepout-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		jobPod("keepout", "only")
		finishPod(ctx, ns, "only", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStageOutFailed))
		Consistently(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "keepout-clean-0"), &corev1.Pod{})
		}, 2*time.Second).ShouldNot(Succeed(), "no data may be removed before stage-out")
	})
})

func reason(bb *v1alpha1.BurstBuffer) string {
	if bb.Status.Workload == nil {
		return ""
	}
	return bb.Status.Workload.TeardownReason
}

var _ = Describe("Teardown in a namespace that is being deleted", func() {
	// `kubectl delete namespace` with a burst buffer in it: the namespace refuses new pods
	// (NamespaceLifecycle admission) but waits for the burst buffer's finalizer, which needs
	// clean pods. They run in the operator's namespace, as every host-level task does.
	It("removes the data with clean pods in the operator's namespace, then lets the namespace go", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		bb := localBB(ns, "doomed", 1)
		createReady(ctx, bb)

		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		// What the namespace controller does next (envtest runs none): delete what is in it.
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		moved := taskKey(ns, "doomed-clean-0")
		pod := &corev1.Pod{}
		Eventually(func() error { return k8s.Get(ctx, moved, pod) }, timeout).Should(Succeed())
		Expect(pod.OwnerReferences).To(BeEmpty(), "owners cannot cross namespaces")
		Expect(pod.Labels).To(HaveKeyWithValue("beeburst.io/burst-buffer-namespace", ns))
		Expect(pod.Spec.NodeName).To(Equal(ns + "-a"))
		Expect(pod.Spec.Containers[0].Args).To(ContainElements("dir", "remove"))
		finishPod(ctx, ns, "doomed-clean-0", corev1.PodSucceeded, "")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, timeout).Should(BeTrue(), "the finalizer goes once the node is clean")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, moved, &corev1.Pod{}))
		}, timeout).Should(BeTrue(), "the moved clean pod is removed by the operator (nothing owns it)")
	})
})

var _ = Describe("After the finalizer", func() {
	// An object whose finalizer teardown removed can still be read: another party's
	// finalizer holds it here. A visit to it must not run teardown again: with the nodes'
	// settling unwritten (as when the object vanishes before its status patch) that would
	// start clean pods nobody removes.
	It("leaves a burst buffer alone once its own finalizer is gone: no clean pod starts again", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		bb := localBB(ns, "held", 1)
		bb.Finalizers = []string{"example.com/hold"}
		createReady(ctx, bb)

		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "held-clean-0", corev1.PodSucceeded, "")
		Eventually(func() []string { return get(ctx, bb).Finalizers }, timeout).Should(Equal([]string{"example.com/hold"}))
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, taskKey(ns, "held-clean-0"), &corev1.Pod{})) }, timeout).Should(BeTrue())

		// The state the object vanishing leaves a late visit: the nodes' settling unwritten
		// (the status patch of the visit that removed the finalizer finds no object). A visit
		// now finds nothing to do.
		cur := get(ctx, bb)
		for i := range cur.Status.Nodes {
			cur.Status.Nodes[i].Removal = ""
		}
		Expect(k8s.Status().Update(ctx, cur)).To(Succeed())
		// A spec change wakes a visit, as the clean pods' deletion did.
		cur = get(ctx, bb)
		cur.Spec.Teardown.Hurry = true
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		Consistently(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, taskKey(ns, "held-clean-0"), &corev1.Pod{})) }, 3*time.Second).Should(BeTrue())
		Expect(podsOfBB(ctx, ns, "held")).To(BeEmpty())

		cur = get(ctx, bb)
		cur.Finalizers = nil
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, timeout).Should(BeTrue())
	})
})
