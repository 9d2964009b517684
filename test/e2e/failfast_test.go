package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// failBound: a state that can never work is in the status within this of the kubelet saying so.
const failBound = 10 * time.Second

// States that can never work, produced for real on the testbed: the kubelet's word (its
// events about the burst buffer's pods, as the test first sees them) and the status (as the
// test first sees the condition), each timed from the burst buffer's creation. Run alone with
// -ginkgo.label-filter=failfast.
var _ = Describe("failures in seconds on the testbed", Ordered, ContinueOnFailure, Label("failfast"), func() {
	ctx := context.Background()
	var table []string

	BeforeAll(func() {
		if n := workerCount(); n != 2 {
			Skip(fmt.Sprintf("the failfast specs run on the testbed's two workers, not %d node(s)", n))
		}
		installOperator()
	})
	AfterAll(func() {
		report := "state that can never work: the kubelet's word -> the status (bound " + failBound.String() + ")\n  " + strings.Join(table, "\n  ")
		AddReportEntry("failures in seconds", report)
		fmt.Println(report)
	})

	// reported creates bb and waits until condition typ has reason; it returns the condition
	// and records how long after the kubelet's first word about the burst buffer's pods.
	// pods names the pods whose kubelet's word counts (a prefix of their names).
	reported := func(what string, bb *v1alpha1.BurstBuffer, pods, typ, reason string, limit time.Duration) *metav1.Condition {
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		var knew, stamped, seen time.Time
		var word string
		var c *metav1.Condition
		Eventually(func(g Gomega) {
			if knew.IsZero() {
				if e := kubeletWord(ctx, pods); e != nil {
					knew, stamped, word = time.Now(), eventStamp(e), e.Reason+": "+e.Message
				}
			}
			c = meta.FindStatusCondition(get(ctx, bb).Status.Conditions, typ)
			g.Expect(c).NotTo(BeNil())
			if reason == v1alpha1.ReasonImagePullFailed && c.Reason != reason && strings.Contains(c.Message, "i/o timeout") {
				// The nodes reach no registry and their resolver does not answer (kind on an
				// engine with no way out, docs/kind.md): a timeout, which the kubelet and the
				// operator rightly retry. The spec needs a registry's answer, or no route at all.
				Skip("the nodes' pulls time out instead of failing (" + oneLine(c.Message, 300) + "): needs a registry that answers, or nodes with no route to one (the testbed)")
			}
			g.Expect(c.Reason).To(Equal(reason), "%s: %s", c.Reason, c.Message)
		}, limit, 100*time.Millisecond).Should(Succeed(), "%s: %s %s", what, typ, reason)
		seen = time.Now()
		if knew.IsZero() || knew.After(seen) {
			// The status came first (the container's state carries the word): the kubelet's
			// event, once it is listed, says when it knew.
			if e := kubeletWord(ctx, pods); e != nil {
				stamped, word = eventStamp(e), e.Reason+": "+e.Message
			}
			knew = seen
		}
		after := seen.Sub(knew)
		if !stamped.IsZero() && stamped.Before(knew) {
			after = seen.Sub(stamped) // the event's own time, second resolution
		}
		line := fmt.Sprintf("%-46s the kubelet +%5.1f s, %s=%s %s +%5.1f s: %4.1f s after", what,
			knew.Sub(start).Seconds(), typ, c.Status, c.Reason, seen.Sub(start).Seconds(), after.Seconds())
		table = append(table, line)
		fmt.Fprintf(GinkgoWriter, "%s\n  the kubelet: %s\n  %s: %s\n", line, oneLine(word, 300), typ, c.Message)
		Expect(after).To(BeNumerically("<", failBound), "%s: %s after the kubelet's word (%s)", what, after, word)
		return c
	}

	It("a spec.storage.path that does not exist on the nodes: StoragePathMissing naming both, Failed", func() {
		bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "e2e-ff-path", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: 2},
				Storage: v1alpha1.StorageSpec{Path: "/mnt/e2e-missing"}, Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileNone}}}
		c := reported("spec.storage.path missing (local, 2 nodes)", bb, bb.Name+"-prep-", v1alpha1.ConditionProvisioned, v1alpha1.ReasonStoragePathMissing, time.Minute)
		// The first word names the nodes whose kubelet had spoken; both, a moment later.
		Expect(c.Message).To(And(namesAWorker("spec.storage.path /mnt/e2e-missing does not exist on node(s) "),
			ContainSubstring("hostPath type check failed")))
		Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseFailed))
		Eventually(func() string { return cond(ctx, bb.Name, v1alpha1.ConditionProvisioned).Message }, failBound).Should(
			ContainSubstring("does not exist on node(s) " + strings.Join(workers(), ", ")))
		deleteAndWait(ctx, bb, 2*time.Minute)
		expectNothingLeft(ctx, bb.Name)
	})

	It("validation.compareWith.nodeLocal.path that does not exist: ComparePathMissing, then Ready at once", func() {
		bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "e2e-ff-compare", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: 2},
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick,
					CompareWith: &v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: "/mnt/nvme/e2e-no-such-dir"}}}}}
		c := reported("compareWith.nodeLocal.path missing (quick)", bb, bb.Name+"-compare-", v1alpha1.ConditionCompared, v1alpha1.ReasonComparePathMissing, 5*time.Minute)
		Expect(c.Message).To(namesAWorker("validation.compareWith.nodeLocal.path /mnt/nvme/e2e-no-such-dir does not exist on node(s) "))
		compared := time.Now()
		Eventually(func() v1alpha1.Phase { return get(ctx, bb).Status.Phase }, failBound, 100*time.Millisecond).Should(Equal(v1alpha1.PhaseReady),
			"a comparison never holds up Ready")
		line := fmt.Sprintf("%-46s Ready %.1f s after Compared=False", "", time.Since(compared).Seconds())
		table = append(table, line)
		fmt.Fprintln(GinkgoWriter, line)
		deleteAndWait(ctx, bb, 2*time.Minute)
		expectNothingLeft(ctx, bb.Name)
	})

	It("an agent image that does not exist: ImagePullFailed naming the node and the image", func() {
		const missing = "beeburst/agent:e2e-does-not-exist"
		bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "e2e-ff-image", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: 1},
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileNone}}}
		// Cleanups run last first: the operator gets its agent back, then the burst buffer
		// goes (a spec that skipped half-way leaves it).
		DeferCleanup(func() { deleteAndWait(ctx, bb, 2*time.Minute) })
		helmUpgrade("--set", "agentImage="+missing)
		DeferCleanup(func() { helmUpgrade() })
		c := reported("agent image not in any registry (local)", bb, bb.Name+"-prep-", v1alpha1.ConditionProvisioned, v1alpha1.ReasonImagePullFailed, time.Minute)
		Expect(c.Message).To(And(namesAWorker("image "+missing+" cannot be pulled on node(s) "), ContainSubstring("agentImage")))
		Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseFailed))
		// The clean pods need the agent too: the operator with the right image removes it.
		helmUpgrade()
		deleteAndWait(ctx, bb, 2*time.Minute)
		expectNothingLeft(ctx, bb.Name)
	})
})

// namesAWorker matches a message that names one of the workers right after prefix (the
// testbed's worker-1, worker-2; kind's <cluster>-worker, <cluster>-worker2).
func namesAWorker(prefix string) types.GomegaMatcher {
	var names []string
	for _, n := range workers() {
		names = append(names, regexp.QuoteMeta(n))
	}
	return MatchRegexp(regexp.QuoteMeta(prefix) + "(" + strings.Join(names, "|") + ")")
}

// helmUpgrade installs the chart with the images under test and extra --set flags, in place
// (installOperator's uninstall stays the one at the end).
func helmUpgrade(extra ...string) {
	out, err := run(envOr("HELM", "helm"), helmInstallArgs(extra...)...)
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	Eventually(func(g Gomega) {
		out, err := kubectl("-n", operatorNamespace, "rollout", "status", "deploy/beeburst-manager", "--timeout=5s")
		g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	}, 2*time.Minute, time.Second).Should(Succeed())
}

// kubeletWord is the kubelet's first event about a pod named prefix... that says it cannot
// start (a volume that does not mount, an image it cannot pull), in whichever namespace the
// pods run.
func kubeletWord(ctx context.Context, prefix string) *corev1.Event {
	var first *corev1.Event
	for _, ns := range []string{testNamespace, operatorNamespace} {
		var list corev1.EventList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			continue
		}
		for i := range list.Items {
			e := &list.Items[i]
			if e.InvolvedObject.Kind != "Pod" || !strings.HasPrefix(e.InvolvedObject.Name, prefix) || e.Type != corev1.EventTypeWarning ||
				(e.Reason != "FailedMount" && e.Reason != "Failed" && e.Reason != "InspectFailed" && e.Reason != "FailedScheduling") {
				continue
			}
			if first == nil || eventStamp(e).Before(eventStamp(first)) {
				first = e
			}
		}
	}
	return first
}

// eventStamp is when an event first happened, by its source's clock.
func eventStamp(e *corev1.Event) time.Time {
	switch {
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
