package controllers_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// workloadPod is a pod as a Job's template following docs/workloads.md makes it: labelled with
// its burst buffer and, if gated, carrying the beeburst gate.
func workloadPod(ns, name, bb string, gated bool) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}
	if bb != "" {
		pod.Labels[v1alpha1.LabelBurstBuffer] = bb
	}
	if gated {
		pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: v1alpha1.SchedulingGate}}
	}
	return pod
}

// runningWorkload is a running workload pod of burst buffer bb on node, started a minute ago:
// other work beside whatever measures there.
func runningWorkload(ctx context.Context, ns, name, bb, node string) *corev1.Pod {
	job := workloadPod(ns, name, bb, false)
	job.Spec.NodeName = node
	Expect(k8s.Create(ctx, job)).To(Succeed())
	job.Status.Phase = corev1.PodRunning
	job.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: job.Spec.Containers[0].Name, Image: job.Spec.Containers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-time.Minute))}}}}
	Expect(k8s.Status().Update(ctx, job)).To(Succeed())
	return job
}

func getPod(ctx context.Context, ns, name string) func() *corev1.Pod {
	return func() *corev1.Pod {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, podKey(ctx, ns, name), pod); err != nil {
			return nil
		}
		return pod
	}
}

func gates(pod *corev1.Pod) []string {
	var names []string
	for _, g := range pod.Spec.SchedulingGates {
		names = append(names, g.Name)
	}
	return names
}

func workloadStatus(ctx context.Context, bb *v1alpha1.BurstBuffer) func() *v1alpha1.WorkloadStatus {
	return func() *v1alpha1.WorkloadStatus {
		cur := &v1alpha1.BurstBuffer{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur); err != nil {
			return nil
		}
		return cur.Status.Workload
	}
}

var hostnameIn = func(hosts ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: hosts}
}

var _ = Describe("Workload pods of a burst buffer", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		// Hostname labels differ from node names, as on clouds where the kubelet's hostname is
		// not the node name: placement must use the label.
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns, corev1.LabelHostname: "host-" + ns + "-a"})
		makeNode(ctx, ns+"-b", map[string]string{"pool": ns, corev1.LabelHostname: "host-" + ns + "-b"})
	})

	prepare := func(bbName string) {
		finishPod(ctx, ns, bbName+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, bbName+"-prep-1", corev1.PodSucceeded, "")
	}

	It("holds gated pods until Ready, then writes the env ConfigMap, pins them to the burst buffer's nodes and lifts the gate", func() {
		bb := localBB(ns, "scratch", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		// Another burst buffer that never becomes Ready (it wants more nodes than there are).
		other := localBB(ns, "other", 3)
		Expect(k8s.Create(ctx, other)).To(Succeed())

		plain := workloadPod(ns, "job-0", "scratch", true)
		// A pod with its own required node affinity: the operator may only narrow it.
		zone := corev1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}
		withAffinity := workloadPod(ns, "job-1", "scratch", true)
		withAffinity.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}},
		}}
		// A pod held by another controller's gate too: that gate stays.
		twoGates := workloadPod(ns, "job-2", "scratch", true)
		twoGates.Spec.SchedulingGates = append(twoGates.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "example.com/quota"})
		ungated := workloadPod(ns, "free-0", "scratch", false)
		ofOther := workloadPod(ns, "other-0", "other", true)
		orphan := workloadPod(ns, "ghost-0", "ghost", true)
		for _, p := range []*corev1.Pod{plain, withAffinity, twoGates, ungated, ofOther, orphan} {
			Expect(k8s.Create(ctx, p)).To(Succeed())
		}

		By("listing the gated pods while the burst buffer is not Ready")
		Eventually(workloadStatus(ctx, bb), timeout).Should(And(Not(BeNil()),
			HaveField("GatedPods", Equal([]string{"job-0", "job-1", "job-2"})),
			HaveField("RunningPods", BeEquivalentTo(1)),
			HaveField("CompletedPods", BeEquivalentTo(0))))
		Eventually(workloadStatus(ctx, other), timeout).Should(And(Not(BeNil()),
			HaveField("GatedPods", Equal([]string{"other-0"}))))
		Consistently(func(g Gomega) {
			g.Expect(gates(getPod(ctx, ns, "job-0")())).To(Equal([]string{v1alpha1.SchedulingGate}))
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scratch-env"}, &corev1.ConfigMap{})).NotTo(Succeed())
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

		By("releasing them once Ready")
		prepare("scratch")
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		hosts := hostnameIn("host-"+ns+"-a", "host-"+ns+"-b")
		Eventually(func(g Gomega) {
			pod := getPod(ctx, ns, "job-0")()
			g.Expect(pod.Spec.SchedulingGates).To(BeEmpty())
			g.Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms).To(Equal(
				[]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{hosts}}}))
		}, timeout).Should(Succeed())
		// Pods are released one patch each (a conflict on one is retried on its own event).
		Eventually(func(g Gomega) {
			pod := getPod(ctx, ns, "job-1")()
			g.Expect(pod.Spec.SchedulingGates).To(BeEmpty())
			g.Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms).To(Equal(
				[]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone, hosts}}}))
		}, timeout).Should(Succeed())
		Eventually(func() []string { return gates(getPod(ctx, ns, "job-2")()) }, timeout).Should(Equal([]string{"example.com/quota"}))

		By("writing the environment ConfigMap, owned by the burst buffer")
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scratch-env"}, cm)).To(Succeed())
		Expect(cm.OwnerReferences).To(ConsistOf(HaveField("Name", "scratch")))
		Expect(*cm.OwnerReferences[0].Controller).To(BeTrue())
		Expect(cm.Data).To(HaveKeyWithValue("BEEBURST_PATH", "/mnt/beeburst"))
		Expect(cm.Data).To(HaveKeyWithValue("BEEBURST_ENGINE", "local"))
		Expect(cm.Data).To(HaveKeyWithValue("BEEBURST_NAME", "scratch"))
		Expect(cm.Data).To(HaveKeyWithValue("BEEBURST_NODES", ns+"-a,"+ns+"-b"))
		// envtest nodes document no hardware: stage 1 knows no figure, and says so.
		Expect(cm.Data).To(HaveKeyWithValue("BEEBURST_LIMIT_SOURCE", "unknown"))
		Expect(cm.Data).To(HaveKey("BEEBURST_WRITE_LIMIT_SOURCE"))
		Expect(cm.Data).To(HaveKey("BEEBURST_READ_LIMIT_SOURCE"))

		By("leaving alone the pods of other burst buffers, without the gate, or of a burst buffer that does not exist")
		Consistently(func(g Gomega) {
			g.Expect(gates(getPod(ctx, ns, "other-0")())).To(Equal([]string{v1alpha1.SchedulingGate}))
			g.Expect(getPod(ctx, ns, "other-0")().Spec.Affinity).To(BeNil())
			g.Expect(gates(getPod(ctx, ns, "ghost-0")())).To(Equal([]string{v1alpha1.SchedulingGate}))
			g.Expect(getPod(ctx, ns, "ghost-0")().Spec.Affinity).To(BeNil())
			g.Expect(getPod(ctx, ns, "free-0")().Spec.Affinity).To(BeNil())
		}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

		By("counting released pods as running, and completed ones (Succeeded or Failed) as completed")
		Eventually(workloadStatus(ctx, bb), timeout).Should(And(Not(BeNil()),
			HaveField("GatedPods", BeEmpty()), HaveField("RunningPods", BeEquivalentTo(4))))
		for name, ph := range map[string]corev1.PodPhase{"job-0": corev1.PodSucceeded, "free-0": corev1.PodFailed} {
			p := getPod(ctx, ns, name)()
			p.Status.Phase = ph
			Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		}
		Eventually(workloadStatus(ctx, bb), timeout).Should(And(Not(BeNil()),
			HaveField("RunningPods", BeEquivalentTo(2)), HaveField("CompletedPods", BeEquivalentTo(2))))
	})

	It("keeps pods gated while the environment ConfigMap cannot be written", func() {
		// An immutable ConfigMap squatting the name: the operator cannot write the job's
		// environment, so it must not start the job either.
		squat := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "scratch-env", Namespace: ns},
			Data:       map[string]string{"BEEBURST_PATH": "/elsewhere"},
			Immutable:  ptr.To(true),
		}
		Expect(k8s.Create(ctx, squat)).To(Succeed())
		bb := localBB(ns, "scratch", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "scratch", true))).To(Succeed())
		prepare("scratch")
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		Consistently(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, 2*time.Second, 200*time.Millisecond).
			Should(Equal([]string{v1alpha1.SchedulingGate}))
		Expect(workloadStatus(ctx, bb)()).To(HaveField("GatedPods", Equal([]string{"job-0"})))

		Expect(k8s.Delete(ctx, squat)).To(Succeed())
		Eventually(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, timeout).Should(BeEmpty())
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scratch-env"}, cm)).To(Succeed())
		Expect(cm.Data).To(HaveKeyWithValue("BEEBURST_PATH", "/mnt/beeburst"))
	})

	It("narrows the selection with spec.workload.selector and tells when an AfterTTL teardown happens", func() {
		bb := localBB(ns, "scratch", 2)
		bb.Spec.Workload.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}
		bb.Spec.Teardown = v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterTTL, TTL: "1h"}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		worker := workloadPod(ns, "worker-0", "scratch", true)
		worker.Labels["role"] = "worker"
		launcher := workloadPod(ns, "launcher-0", "scratch", true)
		launcher.Labels["role"] = "launcher"
		Expect(k8s.Create(ctx, worker)).To(Succeed())
		Expect(k8s.Create(ctx, launcher)).To(Succeed())
		Eventually(workloadStatus(ctx, bb), timeout).Should(And(Not(BeNil()),
			HaveField("GatedPods", Equal([]string{"worker-0"})), HaveField("TeardownTime", BeNil())))

		prepare("scratch")
		Eventually(func() []string { return gates(getPod(ctx, ns, "worker-0")()) }, timeout).Should(BeEmpty())
		Consistently(func() []string { return gates(getPod(ctx, ns, "launcher-0")()) }, time.Second, 200*time.Millisecond).
			Should(Equal([]string{v1alpha1.SchedulingGate}))
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Status.ReadyTime).NotTo(BeNil())
			g.Expect(cur.Status.Workload).NotTo(BeNil())
			g.Expect(cur.Status.Workload.TeardownTime).NotTo(BeNil())
			g.Expect(cur.Status.Workload.TeardownTime.Time).To(BeTemporally("==", cur.Status.ReadyTime.Add(time.Hour)))
			g.Expect(cur.Status.Workload.TeardownReason).To(Equal("AfterTTL: 1h0m0s after Ready"))
		}, timeout).Should(Succeed())
	})

	It("holds deletion while workload pods that passed the gate run, without stageOut too, not for one that no node took, and bounds the wait for one stuck in deletion", func() {
		bb := localBB(ns, "hp", 2)
		bb.Spec.Teardown.Policy = v1alpha1.TeardownManual
		createReady(ctx, bb)
		// The gate's way: the pods mount the node directory by a host path, not the claim.
		runningWorkload(ctx, ns, "job-0", "hp", ns+"-a")
		runningWorkload(ctx, ns, "job-1", "hp", ns+"-b")
		// Past the gate, but no node took it: it never touched the files.
		Expect(k8s.Create(ctx, workloadPod(ns, "job-2", "hp", false))).To(Succeed())
		unschedulable(ctx, ns, "job-2")
		// Its node's kubelet never confirms; a grace period shorter than the teardown bound,
		// which never ends within it.
		Expect(k8s.Delete(ctx, getPod(ctx, ns, "job-1")(), client.GracePeriodSeconds(1))).To(Succeed())
		Expect(k8s.Delete(ctx, bb)).To(Succeed())

		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonDeleting))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(ContainSubstring("workload's pods"), ContainSubstring("job-0 ("+ns+"-a)"), Not(ContainSubstring("job-2"))))
		Consistently(func() []string { return podsOf(ctx, ns, "hp") }, 2*time.Second).ShouldNot(ContainElement(HavePrefix("hp-clean")),
			"nothing is removed under a running pod")

		finishPod(ctx, ns, "job-0", corev1.PodSucceeded, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTeardownStuck))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(ContainSubstring("pod job-1 on node "+ns+"-b has been stopping"),
			ContainSubstring("--force --grace-period=0")))
		Expect(podsOf(ctx, ns, "hp")).NotTo(ContainElement(HavePrefix("hp-clean")))

		forceGone(ctx, ns, "job-1")
		finishPod(ctx, ns, "hp-clean-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "hp-clean-1", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})

	It("waits at deletion for a pod it released, though the selector was narrowed since", func() {
		bb := localBB(ns, "narrowed", 2)
		bb.Spec.Teardown.Policy = v1alpha1.TeardownManual
		bb.Spec.Workload.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}
		worker := workloadPod(ns, "worker-0", "narrowed", true)
		worker.Labels["role"] = "worker"
		Expect(k8s.Create(ctx, worker)).To(Succeed())
		createReady(ctx, bb)
		uid := get(ctx, bb).UID
		Eventually(func() []string { return gates(getPod(ctx, ns, "worker-0")()) }, timeout).Should(BeEmpty())
		Expect(getPod(ctx, ns, "worker-0")().Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationReleasedBy, string(uid)), "the release says whose")
		Eventually(func() error {
			p := getPod(ctx, ns, "worker-0")()
			p.Status.Phase = corev1.PodRunning
			return k8s.Status().Update(ctx, p)
		}, timeout).Should(Succeed())

		Eventually(workloadStatus(ctx, bb), timeout).Should(HaveField("RunningPods", BeEquivalentTo(1)))

		By("the selector narrowed to pods it does not match, then the deletion")
		Eventually(func() error {
			cur := get(ctx, bb)
			cur.Spec.Workload.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "launcher"}}
			return k8s.Update(ctx, cur)
		}, timeout).Should(Succeed())
		Eventually(func() map[string]string { return get(ctx, bb).Spec.Workload.Selector.MatchLabels }, timeout).Should(HaveKeyWithValue("role", "launcher"))
		Consistently(workloadStatus(ctx, bb), 2*time.Second).Should(HaveField("RunningPods", BeEquivalentTo(1)), "the released pod still counts as running")
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(And(
			haveStatus(metav1.ConditionFalse, v1alpha1.ReasonDeleting), HaveField("Message", ContainSubstring("worker-0"))))
		Consistently(func() []string { return podsOf(ctx, ns, "narrowed") }, 2*time.Second).ShouldNot(ContainElement(HavePrefix("narrowed-clean")),
			"nothing is removed under a pod the burst buffer released")

		finishPod(ctx, ns, "worker-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "narrowed-clean-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "narrowed-clean-1", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
	})

	It("says on the pod when an admission policy refuses to lift its gate, and lifts it once the policy lets it", func() {
		// A site's policy on pods, in this namespace only: no beeburst annotation on an update.
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-no-release"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{
					Expression: `!has(object.metadata.annotations) || !('` + v1alpha1.AnnotationReleasedBy + `' in object.metadata.annotations)`,
					Message:    "site policy: no beeburst annotations on pods",
				}},
			},
		}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-no-release"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: policy.Name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, binding))).To(Succeed())
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, policy))).To(Succeed())
		})
		// The API server enforces a policy once it has loaded it: a probe update is refused.
		probe := workloadPod(ns, "probe", "", false)
		Expect(k8s.Create(ctx, probe)).To(Succeed())
		Eventually(func() error {
			p := getPod(ctx, ns, "probe")()
			p.Annotations = map[string]string{v1alpha1.AnnotationReleasedBy: "x"}
			return k8s.Update(ctx, p)
		}, timeout).Should(MatchError(ContainSubstring("site policy")))

		bb := localBB(ns, "refused", 2)
		bb.Spec.Teardown.Policy = v1alpha1.TeardownManual
		Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "refused", true))).To(Succeed())
		createReady(ctx, bb)
		Eventually(warningEvents(ctx, ns, "job-0", "ReleaseRefused"), timeout).Should(ContainElement(And(
			ContainSubstring("refused to lift this pod's scheduling gate"), ContainSubstring("site policy: no beeburst annotations on pods"))))
		Expect(gates(getPod(ctx, ns, "job-0")())).To(Equal([]string{v1alpha1.SchedulingGate}))

		By("the policy lifted: the gate is too")
		Expect(k8s.Delete(ctx, binding)).To(Succeed())
		Eventually(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, timeout).Should(BeEmpty())
		tearDown(ctx, bb)
	})

	It("holds the gate of a pod still gated at deletion for good, and waits for one the scheduler has not looked at yet", func() {
		bb := localBB(ns, "del", 2)
		bb.Spec.Teardown.Policy = v1alpha1.TeardownManual
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Expect(k8s.Create(ctx, workloadPod(ns, "job-0", "del", true))).To(Succeed())
		// Its gate lifted a moment before the deletion: the scheduler has not placed it yet,
		// and the API server's PodScheduled False/SchedulingGated of its creation stays.
		Expect(k8s.Create(ctx, workloadPod(ns, "job-1", "del", true))).To(Succeed())
		lifted := getPod(ctx, ns, "job-1")()
		Expect(lifted.Status.Conditions).To(ContainElement(HaveField("Reason", corev1.PodReasonSchedulingGated)))
		lifted.Spec.SchedulingGates = nil
		Expect(k8s.Update(ctx, lifted)).To(Succeed())
		Eventually(podExists(ctx, ns, "del-prep-0"), timeout).Should(BeTrue())
		uid := get(ctx, bb).UID
		Expect(k8s.Delete(ctx, bb)).To(Succeed())

		Eventually(func() map[string]string { return getPod(ctx, ns, "job-0")().Annotations }, timeout).
			Should(HaveKeyWithValue(v1alpha1.AnnotationGateHeld, string(uid)), "a gated pod is held before deletion judges which pods use the burst buffer")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonDeleting))
		inUse := func() string { return condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message }
		Eventually(inUse, timeout).Should(And(ContainSubstring("job-1"), ContainSubstring("wait for the scheduler"), Not(ContainSubstring("job-0"))))
		Consistently(inUse, time.Second).Should(ContainSubstring("job-1"), "the deletion waits for the scheduler to place it")

		By("a scheduler that never looks at it holds the deletion no longer than the grace, with nothing else to wake it")
		stopped(ctx, ns, "del", "del-prep-0", "del-prep-1") // the preparation it interrupts, once past the wait
		Eventually(podExists(ctx, ns, "del-clean-0"), timeout).Should(BeTrue())
		finishPod(ctx, ns, "del-clean-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "del-clean-1", corev1.PodSucceeded, "")
		Eventually(gone(ctx, bb), timeout).Should(BeTrue())
		Expect(gates(getPod(ctx, ns, "job-0")())).To(Equal([]string{v1alpha1.SchedulingGate}), "a held gate stays")
	})

	It("never lifts a gate that the burst buffer's deletion held, and lifts one held by a burst buffer of that name deleted before", func() {
		bb := localBB(ns, "held", 2)
		createReady(ctx, bb)
		held := workloadPod(ns, "job-0", "held", true)
		held.Annotations = map[string]string{v1alpha1.AnnotationGateHeld: string(get(ctx, bb).UID)}
		Expect(k8s.Create(ctx, held)).To(Succeed())
		earlier := workloadPod(ns, "job-1", "held", true)
		earlier.Annotations = map[string]string{v1alpha1.AnnotationGateHeld: "uid-of-a-deleted-burst-buffer"}
		Expect(k8s.Create(ctx, earlier)).To(Succeed())
		Eventually(func() []string { return gates(getPod(ctx, ns, "job-1")()) }, timeout).Should(BeEmpty())
		Consistently(func() []string { return gates(getPod(ctx, ns, "job-0")()) }, time.Second, 200*time.Millisecond).
			Should(Equal([]string{v1alpha1.SchedulingGate}))
	})
})

// unschedulable plays the scheduler finding no node for a workload pod.
func unschedulable(ctx context.Context, ns, name string) {
	Eventually(func() error {
		p := getPod(ctx, ns, name)()
		if p == nil {
			return fmt.Errorf("pod %s not found", name)
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/2 nodes are available", LastTransitionTime: metav1.Now()}}
		return k8s.Status().Update(ctx, p)
	}, timeout).Should(Succeed())
}
