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

// The API server's Pod Security admission (on in envtest's kube-apiserver too) refuses the
// operator's host-level pods in a namespace that enforces less than privileged: the status
// says so and how to fix it, and the burst buffer goes on once the namespace allows them.
var _ = Describe("An operator namespace whose Pod Security level refuses its pods", func() {
	It("says PodSecurityRefused with the label to set, and goes on once it is set", func() {
		ctx := context.Background()
		ns := namespaceWithTwoNodes(ctx)
		label := func(level string) {
			var opns corev1.Namespace
			Expect(k8s.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &opns)).To(Succeed())
			if opns.Labels == nil {
				opns.Labels = map[string]string{}
			}
			if level == "" {
				delete(opns.Labels, "pod-security.kubernetes.io/enforce")
			} else {
				opns.Labels["pod-security.kubernetes.io/enforce"] = level
			}
			Expect(k8s.Update(ctx, &opns)).To(Succeed())
		}
		label("baseline")
		DeferCleanup(func() { label("") })

		bb := localBB(ns, "refused", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonPodSecurityRefused))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(
			ContainSubstring("namespace "+operatorNamespace), ContainSubstring("pod-security.kubernetes.io/enforce=privileged")))
		Expect(condition(ctx, bb, v1alpha1.ConditionReady)().Reason).To(Equal(v1alpha1.ReasonPodSecurityRefused))

		label("")
		for i := range 2 {
			finishPod(ctx, ns, fmt.Sprintf("refused-prep-%d", i), corev1.PodSucceeded, "")
		}
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		deleteBB := bb.DeepCopy()
		Expect(k8s.Delete(ctx, deleteBB)).To(Succeed())
		for i := range 2 {
			finishPod(ctx, ns, fmt.Sprintf("refused-clean-%d", i), corev1.PodSucceeded, "")
		}
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})
})
