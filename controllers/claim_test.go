package controllers_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// The workload's claim: there is no volume binder in envtest, so the spec plays it (the
// claim's status.phase), and the e2e suite has the real one bind the pair and schedule a pod.
var _ = Describe("The workload's PersistentVolumeClaim", func() {
	ctx := context.Background()

	getClaim := func(ns, name string) func() *corev1.PersistentVolumeClaim {
		return func() *corev1.PersistentVolumeClaim {
			var c corev1.PersistentVolumeClaim
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
				return nil
			}
			return &c
		}
	}
	getVolume := func(name string) func() *corev1.PersistentVolume {
		return func() *corev1.PersistentVolume {
			var pv corev1.PersistentVolume
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &pv); err != nil {
				return nil
			}
			return &pv
		}
	}
	bind := func(c *corev1.PersistentVolumeClaim) {
		c.Status.Phase = corev1.ClaimBound
		Expect(k8s.Status().Update(ctx, c)).To(Succeed())
	}
	claimUser := func(ns, name, claim string) *corev1.Pod {
		pod := workloadPod(ns, name, "", false)
		pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		return pod
	}

	It("is created unbound with the nodes, gets its volume on the nodes when Ready, and says so", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "scratch", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		Eventually(getClaim(ns, "scratch"), timeout).ShouldNot(BeNil())
		c := getClaim(ns, "scratch")()
		cur := get(ctx, bb)
		Expect(c.Spec.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}), "local: each node its own directory")
		Expect(*c.Spec.StorageClassName).To(Equal("beeburst"))
		Expect(c.Spec.VolumeName).To(Equal("beeburst-" + string(cur.UID)))
		Expect(metav1.GetControllerOf(c).UID).To(Equal(cur.UID))
		Eventually(condition(ctx, bb, v1alpha1.ConditionClaimBound), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimWaiting))
		Expect(condition(ctx, bb, v1alpha1.ConditionClaimBound)().Message).To(ContainSubstring("pods that mount it wait"))
		Consistently(getVolume(c.Spec.VolumeName), "1s").Should(BeNil(), "no volume before Ready")

		for i := range 2 {
			finishPod(ctx, ns, fmt.Sprintf("scratch-prep-%d", i), corev1.PodSucceeded, "")
		}
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Eventually(getVolume(c.Spec.VolumeName), timeout).ShouldNot(BeNil())
		pv := getVolume(c.Spec.VolumeName)()
		cur = get(ctx, bb)
		Expect(cur.Status.Mount.ClaimName).To(Equal("scratch"))
		Expect(pv.Spec.Local).NotTo(BeNil())
		Expect(pv.Spec.Local.Path).To(Equal(cur.Status.Mount.HostPath))
		Expect(pv.Spec.ClaimRef.Name).To(Equal("scratch"))
		Expect(pv.Spec.ClaimRef.UID).To(Equal(c.UID))
		Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
		Expect(terms).To(HaveLen(1))
		Expect(terms[0].MatchExpressions[0].Key).To(Equal(corev1.LabelHostname))
		Expect(terms[0].MatchExpressions[0].Values).To(ConsistOf(ns+"-a", ns+"-b"))

		bind(getClaim(ns, "scratch")())
		Eventually(condition(ctx, bb, v1alpha1.ConditionClaimBound), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonClaimBound))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseReady))

		By("deletion waits for a pod that mounts the claim, naming it")
		user := claimUser(ns, "job-0", "scratch")
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionClaimBound), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimInUse))
		Expect(condition(ctx, bb, v1alpha1.ConditionClaimBound)().Message).To(ContainSubstring("job-0 (not scheduled)"))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring("mount the burst buffer's claim"))
		Consistently(func() *metav1.Time { return getClaim(ns, "scratch")().DeletionTimestamp }, "2s").Should(BeNil(), "nothing is removed while a pod uses it")
		Expect(podsOf(ctx, ns, "scratch")).NotTo(ContainElement(HavePrefix("scratch-clean")))

		user.Status.Phase = corev1.PodSucceeded
		Expect(k8s.Status().Update(ctx, user)).To(Succeed())
		Eventually(func() bool {
			c := getClaim(ns, "scratch")()
			return c == nil || !c.DeletionTimestamp.IsZero()
		}, timeout).Should(BeTrue(), "the claim is deleted once no pod uses it")
		Eventually(func() bool {
			pv := getVolume("beeburst-" + string(cur.UID))()
			return pv == nil || !pv.DeletionTimestamp.IsZero()
		}, timeout).Should(BeTrue(), "and its volume")
		for i := range 2 {
			finishPod(ctx, ns, fmt.Sprintf("scratch-clean-%d", i), corev1.PodSucceeded, "")
		}
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})

	It("bounds the wait for a pod that mounts the claim and is being deleted on a node that does not confirm, and names the fixes", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "downed", 1)
		createReady(ctx, bb)
		// A pod that mounts the claim on a node whose kubelet is gone: deleted, it stays.
		stuck := workloadPod(ns, "job-0", "", false)
		stuck.Spec.NodeName = ns + "-a"
		stuck.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "downed"}}}}
		Expect(k8s.Create(ctx, stuck)).To(Succeed())
		// A grace period shorter than the teardown bound: the bound never ends within it.
		Expect(k8s.Delete(ctx, stuck, client.GracePeriodSeconds(1))).To(Succeed())
		Expect(getPod(ctx, ns, "job-0")().DeletionTimestamp).NotTo(BeNil(), "no kubelet confirms")
		Expect(k8s.Delete(ctx, bb)).To(Succeed())

		Eventually(condition(ctx, bb, v1alpha1.ConditionClaimBound), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimInUse))
		msg := condition(ctx, bb, v1alpha1.ConditionClaimBound)().Message
		Expect(msg).To(And(ContainSubstring("being deleted: job-0 ("+ns+"-a)"), ContainSubstring("--force --grace-period=0"),
			ContainSubstring("spec.teardown.hurry")))
		Expect(msg).NotTo(ContainSubstring("running:"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTeardownStuck))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(ContainSubstring("pod job-0 on node "+ns+"-a has been stopping"),
			ContainSubstring("kubectl delete pod -n "+ns+" job-0 --force --grace-period=0")))
		Expect(getClaim(ns, "downed")().DeletionTimestamp).To(BeNil(), "nothing is removed while it waits")

		forceGone(ctx, ns, "job-0")
		finishPod(ctx, ns, "downed-clean-0", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})

	It("takes spec.workload.claimName, and never takes over a claim that is not its own", func() {
		ns := namespaceWithTwoNodes(ctx)
		theirs := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceMust("1Gi")}},
			},
		}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		bb := localBB(ns, "named", 1)
		bb.Spec.Workload.ClaimName = "data"
		createReady(ctx, bb)
		Eventually(condition(ctx, bb, v1alpha1.ConditionClaimBound), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimConflict))
		Expect(condition(ctx, bb, v1alpha1.ConditionClaimBound)().Message).To(ContainSubstring("spec.workload.claimName"))
		Expect(getClaim(ns, "data")().Spec.VolumeName).To(BeEmpty(), "the user's claim is untouched")
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseReady), "the burst buffer itself works")

		By("once that claim is gone, the burst buffer's own takes the name")
		Expect(k8s.Delete(ctx, theirs)).To(Succeed())
		// The claim protection finalizer waits for a controller envtest does not run.
		Eventually(func() error {
			c := getClaim(ns, "data")()
			if c == nil {
				return nil
			}
			c.Finalizers = nil
			return k8s.Update(ctx, c)
		}, timeout).Should(Succeed())
		Eventually(func() string {
			if c := getClaim(ns, "data")(); c != nil && metav1.GetControllerOf(c) != nil {
				return metav1.GetControllerOf(c).Name
			}
			return ""
		}, timeout).Should(Equal("named"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionClaimBound), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClaimWaiting))
		Expect(get(ctx, bb).Status.Mount.ClaimName).To(Equal("data"))
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "named-clean-0", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})
})
