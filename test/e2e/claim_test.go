package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// The way most users will consume a burst buffer: a Job in a namespace that enforces Pod
// Security "baseline" (the default of most managed and multi-tenant clusters), which forbids
// hostPath volumes, mounts the burst buffer's PersistentVolumeClaim. Its pods wait while the
// burst buffer is measured, then the scheduler places them on its nodes.
var _ = Describe("a Job through the burst buffer's claim in a Pod Security baseline namespace", Ordered, Label("claim"), func() {
	const ns = "beeburst-e2e-baseline"
	ctx := context.Background()
	bb := &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "claimed", Namespace: ns},
		Spec: v1alpha1.BurstBufferSpec{
			Engine: v1alpha1.EngineLocal,
			Nodes:  v1alpha1.NodesSpec{Count: 2},
			// Measured, not reused from an earlier spec's: the Job's pods are seen waiting.
			Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick, ReuseSweep: ptr.To(false)},
		},
	}
	claimPod := func(name, script string) *corev1.PodSpec {
		return &corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "job", Image: "beeburst/agent:" + imageTag, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", script},
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}},
		}
	}

	BeforeAll(func() {
		installOperator()
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "baseline",
		}}})).To(Succeed())
		DeferCleanup(func() { _, _ = kubectl("delete", "namespace", ns, "--wait=true", "--timeout=300s") })
	})

	It("refuses a hostPath pod there: the API server enforces baseline", func() {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hostpath", Namespace: ns}, Spec: *claimPod("x", "true")}
		pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/nvme"}}}}
		err := k8s.Create(ctx, pod)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(ContainSubstring("violates PodSecurity"), ContainSubstring("hostPath")))
		fmt.Printf("a hostPath pod in namespace %s: %v\n", ns, err)
	})

	It("runs the Job on the burst buffer's nodes once it is Ready; its pods wait until then", func() {
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: ns},
			Spec: batchv1.JobSpec{
				Completions: ptr.To(int32(2)), Parallelism: ptr.To(int32(2)), BackoffLimit: ptr.To(int32(0)),
				Template: corev1.PodTemplateSpec{Spec: *claimPod("claimed",
					// The testbed's agent image has a shell and a few tools (hack/cluster.sh): no
					// hostname, no df. HOSTNAME is the pod's name.
					`set -e; echo "$HOSTNAME was here" > /scratch/$HOSTNAME; dd if=/dev/zero of=/scratch/$HOSTNAME.bin bs=1M count=16 2>/dev/null; cat /scratch/$HOSTNAME; ls -l /scratch`)},
			},
		}
		Expect(k8s.Create(ctx, job)).To(Succeed())

		By("the Job's pods wait, unscheduled, while the burst buffer is measured")
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": "writer"})).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
			for _, p := range pods.Items {
				g.Expect(p.Spec.NodeName).To(BeEmpty())
				c := podCondition(&p, corev1.PodScheduled)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Message).To(Or(ContainSubstring("unbound"), ContainSubstring("persistentvolumeclaim")))
			}
		}, time.Minute, time.Second).Should(Succeed())
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).NotTo(Equal(v1alpha1.PhaseReady), "the pods were seen waiting before Ready")

		By("Ready binds the claim; the scheduler places the pods on the burst buffer's nodes")
		Eventually(func() v1alpha1.Phase { return get(ctx, bb).Status.Phase }, 5*time.Minute, time.Second).Should(Equal(v1alpha1.PhaseReady))
		ready := time.Since(start)
		Eventually(func() string {
			c := meta.FindStatusCondition(get(ctx, bb).Status.Conditions, v1alpha1.ConditionClaimBound)
			if c == nil {
				return ""
			}
			return string(c.Status) + " " + c.Reason
		}, time.Minute, time.Second).Should(Equal("True ClaimBound"))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
			for _, c := range job.Status.Conditions {
				g.Expect(c.Type).NotTo(Equal(batchv1.JobFailed), "%s", c.Message)
			}
			g.Expect(job.Status.Succeeded).To(Equal(int32(2)))
		}, 2*time.Minute, time.Second).Should(Succeed())
		done := time.Since(start)

		cur = get(ctx, bb)
		var nodes []string
		for _, n := range cur.Status.Nodes {
			nodes = append(nodes, n.Name)
		}
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": "writer"})).To(Succeed())
		var report strings.Builder
		fmt.Fprintf(&report, "Job through claim %s in a baseline namespace: burst buffer Ready after %.1f s, Job complete after %.1f s\n",
			cur.Status.Mount.ClaimName, ready.Seconds(), done.Seconds())
		for _, p := range pods.Items {
			Expect(nodes).To(ContainElement(p.Spec.NodeName), "pod %s ran on a node of the burst buffer", p.Name)
			log, _ := kubectl("-n", ns, "logs", p.Name)
			fmt.Fprintf(&report, "  pod %s on %s:\n%s", p.Name, p.Spec.NodeName, indentLines(log))
			Expect(log).To(ContainSubstring("was here"))
		}
		AddReportEntry("job through the claim", report.String())
		fmt.Print(report.String())
	})

	It("waits, on deletion, for a pod that still mounts the claim, naming it; then removes the claim and its volume", func() {
		// It waits on its stdin, held open and never written: the agent image has a shell but
		// no sleep (one that exits at once is Running only for an instant, if ever seen so).
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "holder", Namespace: ns}, Spec: *claimPod("claimed", "read -r line")}
		pod.Spec.Containers[0].Stdin = true
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		Eventually(func() corev1.PodPhase {
			_ = k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)
			return pod.Status.Phase
		}, time.Minute, time.Second).Should(Equal(corev1.PodRunning))
		pv := "beeburst-" + string(get(ctx, bb).UID)
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(func() string {
			c := meta.FindStatusCondition(get(ctx, bb).Status.Conditions, v1alpha1.ConditionClaimBound)
			if c == nil {
				return ""
			}
			return c.Reason + ": " + c.Message
		}, time.Minute, time.Second).Should(And(HavePrefix(v1alpha1.ReasonClaimInUse), ContainSubstring("holder")))
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}) }, "5s").Should(Succeed())

		Expect(k8s.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, 3*time.Minute, time.Second).Should(BeTrue())
		// Kubernetes keeps a deleted claim while a pod that names it exists, completed ones
		// included (pvc-protection): the first spec's Job pods go first.
		Expect(k8s.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{"job-name": "writer"})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "claimed"}, &corev1.PersistentVolumeClaim{})) &&
				apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Name: pv}, &corev1.PersistentVolume{}))
		}, time.Minute, time.Second).Should(BeTrue(), "claim and volume are gone")
	})
})

// claimShell runs script in a pod in namespace ns that mounts claim at /scratch, placed on
// node by the scheduler (a node selector, as a job would ask), and returns its log.
func claimShell(ctx context.Context, ns, name, claim, node, script string) string {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{corev1.LabelHostname: node},
			Containers: []corev1.Container{{Name: "sh", Image: "beeburst/agent:" + imageTag, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", script}, VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
	Expect(k8s.Create(ctx, pod)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })
	Eventually(func() corev1.PodPhase {
		_ = k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return pod.Status.Phase
	}, 3*time.Minute, time.Second).Should(BeElementOf(corev1.PodSucceeded, corev1.PodFailed))
	out, err := kubectl("-n", ns, "logs", name)
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "%s", out)
	return out
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func indentLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
