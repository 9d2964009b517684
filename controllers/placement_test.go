package controllers_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// setTaints replaces a node's taints. The API server taints every new node
// node.kubernetes.io/not-ready:NoSchedule; the node lifecycle controller, which envtest does
// not run, removes that taint once the node is Ready. The specs here play that controller
// (and an administrator who adds taints of their own).
func setTaints(ctx context.Context, name string, taints ...corev1.Taint) {
	n := &corev1.Node{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
	n.Spec.Taints = taints
	Expect(k8s.Update(ctx, n)).To(Succeed())
}

var _ = Describe("Nodes of the workload (spec.nodes.fromWorkload)", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		// a is slow; b and c have the fast drive, but c is reserved (tainted) for GPU jobs.
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns, "disk": "slow"})
		makeNode(ctx, ns+"-b", map[string]string{"pool": ns, "disk": "fast"})
		makeNode(ctx, ns+"-c", map[string]string{"pool": ns, "disk": "fast"})
		setTaints(ctx, ns+"-a")
		setTaints(ctx, ns+"-b")
		setTaints(ctx, ns+"-c", corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule})
	})

	It("waits for the workload's pods, then takes the node where its gated pod can be scheduled, and releases the pod there", func() {
		bb := localBB(ns, "wl", 1)
		bb.Spec.Nodes.FromWorkload = true
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		By("waiting, with a reason, while no workload pod exists")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonWaitingForWorkload))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(
			ContainSubstring("no workload pod exists yet"), ContainSubstring("labelled beeburst.io/burst-buffer=wl"), ContainSubstring("create the workload")))
		Expect(condition(ctx, bb, v1alpha1.ConditionReady)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonWaitingForWorkload))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhasePending))
		Consistently(func() []v1alpha1.NodeStatus { return get(ctx, bb).Status.Nodes }, 2*time.Second, 200*time.Millisecond).Should(BeEmpty())

		By("choosing, when the gated pod appears, the one node its nodeSelector and tolerations allow")
		pod := workloadPod(ns, "job-0", "wl", true)
		pod.Spec.NodeSelector = map[string]string{"disk": "fast"}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		Eventually(func() []v1alpha1.NodeStatus { return get(ctx, bb).Status.Nodes }, timeout).Should(ConsistOf(HaveField("Name", ns+"-b")))
		cur := get(ctx, bb)
		Expect(cur.Status.NodeSelection).To(And(ContainSubstring("spec.nodes.fromWorkload"), ContainSubstring(ns+"-b (fits 1 of 1 unscheduled)")))

		By("saying why in the Provisioned condition, and lifting the gate onto that node once Ready")
		finishPod(ctx, ns, "wl-prep-0", corev1.PodSucceeded, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring(cur.Status.NodeSelection))
		Eventually(func(g Gomega) {
			p := getPod(ctx, ns, "job-0")()
			g.Expect(p.Spec.SchedulingGates).To(BeEmpty())
			g.Expect(p.Spec.NodeSelector).To(HaveKeyWithValue("disk", "fast"))
			g.Expect(p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms).To(Equal(
				[]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{hostnameIn(ns + "-b")}}}))
		}, timeout).Should(Succeed())
	})

	It("puts the nodes where the workload already runs first, then those its gated pods fit, within spec.nodes.selector", func() {
		// Already running on a (an ungated pod the scheduler placed), and a gated pod that
		// tolerates the GPU taint and wants the fast drive: b and c fit it. A pod on a node
		// outside spec.nodes.selector does not bring that node in.
		running := workloadPod(ns, "early-0", "wl2", false)
		running.Spec.NodeName = ns + "-a"
		elsewhere := workloadPod(ns, "early-1", "wl2", false)
		elsewhere.Spec.NodeName = "some-other-node"
		gated := workloadPod(ns, "job-0", "wl2", true)
		gated.Spec.NodeSelector = map[string]string{"disk": "fast"}
		gated.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		for _, p := range []*corev1.Pod{running, elsewhere, gated} {
			Expect(k8s.Create(ctx, p)).To(Succeed())
		}
		bb := localBB(ns, "wl2", 2)
		bb.Spec.Engine = v1alpha1.EngineBeeGFS // roles follow the order: the management service goes to the first node
		bb.Spec.Nodes.FromWorkload = true
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		Eventually(func() []v1alpha1.NodeStatus { return get(ctx, bb).Status.Nodes }, timeout).Should(HaveLen(2))
		cur := get(ctx, bb)
		Expect(cur.Status.Nodes[0].Name).To(Equal(ns + "-a"))
		Expect(cur.Status.Nodes[0].Roles).To(ContainElement(v1alpha1.RoleManagement))
		Expect(cur.Status.Nodes[1].Name).To(Equal(ns + "-b"))
		Expect(cur.Status.NodeSelection).To(And(
			ContainSubstring(ns+"-a (runs 1, fits 0 of 1 unscheduled)"),
			ContainSubstring(ns+"-b (fits 1 of 1 unscheduled)"),
			ContainSubstring("1 run on nodes that are not Ready, not schedulable or not selected by spec.nodes.selector")))
	})

	It("waits with NodesNotFound when fewer nodes fit the workload than spec.nodes.count, and goes on when one does", func() {
		pod := workloadPod(ns, "job-0", "wl3", true)
		pod.Spec.NodeSelector = map[string]string{"disk": "fast"}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		bb := localBB(ns, "wl3", 2)
		bb.Spec.Nodes.FromWorkload = true
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring("1 Ready, schedulable node(s) matching spec.nodes run the workload's pods or fit its unscheduled ones"))

		// The taint goes: c fits too, and the node watch brings the burst buffer back.
		setTaints(ctx, ns+"-c")
		Eventually(func() []v1alpha1.NodeStatus { return get(ctx, bb).Status.Nodes }, timeout).Should(ConsistOf(
			HaveField("Name", ns+"-b"), HaveField("Name", ns+"-c")))
	})
})
