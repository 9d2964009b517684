package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// spec.target on the testbed's known hardware: on the device-bound configuration
// (two workers, each container's disk capped at the same write rate W and labelled with it),
// a write target of 5/3 W needs both nodes - one gives W, less than the target with its 10%
// margin - and the quick sweep measures about 2 W, so the target is met; 1 GB/s is out of
// reach of two such nodes, and the status says so and why. Run alone with
// -ginkgo.label-filter=target.
var _ = Describe("spec.target on the testbed's hardware", Ordered, Label("target"), func() {
	ctx := context.Background()
	var perNode float64 // W: every worker's real and documented disk write rate

	BeforeAll(func() {
		if hw == nil {
			Skip("no BEEBURST_HARDWARE_ENV: the target specs need the testbed's known hardware")
		}
		workers := strings.Fields(hw["TESTBED_NODES"])
		if len(workers) != 2 {
			Skip(fmt.Sprintf("the target specs need the testbed's two workers, not %v", workers))
		}
		for _, w := range workers {
			idx := strings.TrimPrefix(w, "worker-")
			real, doc := hwOptional("WORKER_"+idx+"_DISK_WRITE_BPS"), hwOptional("WORKER_"+idx+"_DOC_DISK_WRITE_BPS")
			if real == 0 || real != doc || (perNode != 0 && real != perNode) {
				Skip("the target specs run on the device-bound configuration (equal disk caps, documented as they are); here " +
					fmt.Sprintf("%s has %.0f B/s, documented %.0f", w, real, doc))
			}
			perNode = real
		}
		installOperator()
	})

	targetBB := func(name string, write int64, profile v1alpha1.ValidationProfile) *v1alpha1.BurstBuffer {
		q := resource.NewQuantity(write, resource.DecimalSI)
		return &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine: v1alpha1.EngineLocal,
				// No count: the target chooses it among the workers.
				Nodes: v1alpha1.NodesSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "node-role.kubernetes.io/worker", Operator: metav1.LabelSelectorOpExists}}}},
				Target: &v1alpha1.TargetSpec{WriteBytesPerSecond: q, MarginPercent: 10},
				// The target is judged on a sweep measured for it, not reused from another spec's.
				Validation: v1alpha1.ValidationSpec{Profile: profile, ReuseSweep: ptr.To(false)},
			},
		}
	}
	report := func(title string, bb *v1alpha1.BurstBuffer) {
		cur := get(ctx, bb)
		out, _ := kubectl("get", "bb", "-n", testNamespace, bb.Name, "-o", "wide")
		ts, _ := yaml.Marshal(cur.Status.Target)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionTargetMet)
		text := fmt.Sprintf("%s\n%s\nstatus.target:\n%s", title, out, ts)
		if c != nil {
			text += fmt.Sprintf("condition %s=%s reason %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
		if l := cur.Status.Limits; l != nil && l.Sweep != nil && l.Sweep.Write != nil {
			text += fmt.Sprintf("sweep: best write %d B/s at %d node(s) x %d process(es)\n", l.Sweep.Write.BestBytesPerSecond,
				l.Sweep.Write.Best.Nodes, l.Sweep.Write.Best.ProcessesPerNode)
		}
		AddReportEntry(title, text)
		fmt.Println(text) // the figures belong in the CI log
	}

	It("chooses both nodes for 5/3 of one node's write rate and reports the target met after the sweep", func() {
		write := int64(perNode * 5 / 3) // 250 MB/s at 150 MB/s a node
		bb := targetBB("e2e-target", write, v1alpha1.ProfileQuick)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Status.Target).NotTo(BeNil())
			g.Expect(cur.Status.Nodes).To(HaveLen(2))
		}, time.Minute, time.Second).Should(Succeed())
		cur := get(ctx, bb)
		ts := cur.Status.Target
		Expect(ts.Mode).To(Equal(v1alpha1.TargetChoose))
		Expect(ts.NodeCount).To(Equal(int32(2)))
		Expect(ts.CandidateNodes).To(Equal(int32(2)))
		Expect(ts.Nodes).To(HaveLen(2))
		for _, n := range ts.Nodes {
			// Labels document the caps; an earlier probe's fresh measurement wins when there is one.
			Expect(n.WriteSource).To(BeElementOf("label", "measured"))
			Expect(float64(*n.WriteBytesPerSecond)).To(BeNumerically("~", perNode, 0.1*perNode))
		}
		Expect(ts.Write.PredictedBottleneck).To(Equal("devices"))
		Expect(float64(*ts.Write.PredictedBytesPerSecond)).To(BeNumerically("~", 2*perNode, 0.2*perNode))

		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Status.Phase).NotTo(BeElementOf(v1alpha1.PhaseFailed, v1alpha1.PhaseDegraded))
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionTargetMet)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(BeElementOf(v1alpha1.ReasonTargetMet, v1alpha1.ReasonTargetNotMet), "%s", c.Message)
		}, 6*time.Minute, 2*time.Second).Should(Succeed())
		report("target write "+resource.NewQuantity(write, resource.DecimalSI).String()+" (2 x the device-bound node)", bb)
		cur = get(ctx, bb)
		ts = cur.Status.Target
		Expect(ts.State).To(Equal(v1alpha1.TargetMetState), "%s", ts.Message)
		Expect(*ts.Write.Met).To(BeTrue())
		Expect(*ts.Write.MeasuredBytesPerSecond).To(BeNumerically(">=", write))
		Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionTargetMet).Status).To(Equal(metav1.ConditionTrue))
	})

	It("says 1 GB/s cannot be had from the two nodes, and why", func() {
		bb := targetBB("e2e-target-far", 1_000_000_000, v1alpha1.ProfileNone)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(get(ctx, bb).Status.Conditions, v1alpha1.ConditionTargetMet)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(v1alpha1.ReasonTargetUnreachable))
		}, time.Minute, time.Second).Should(Succeed())
		report("target write 1G (more than the testbed's two nodes can give)", bb)
		cur := get(ctx, bb)
		ts := cur.Status.Target
		Expect(cur.Status.Nodes).To(HaveLen(2), "the closest count is taken, and the burst buffer carries on")
		Expect(ts.State).To(Equal(v1alpha1.TargetUnreachable))
		Expect(ts.Cause).To(Equal(v1alpha1.CauseTooFewNodes))
		Expect(ts.MoreNodes).NotTo(BeNil())
		Expect(ts.Message).To(ContainSubstring("more like"))
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionTargetMet)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Message).To(ContainSubstring("Too few nodes"))
	})

	It("removes both", func() {
		for _, name := range []string{"e2e-target", "e2e-target-far"} {
			bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace}}
			_ = k8s.Delete(ctx, bb)
		}
		Eventually(func(g Gomega) {
			var list v1alpha1.BurstBufferList
			g.Expect(k8s.List(ctx, &list)).To(Succeed())
			for _, b := range list.Items {
				g.Expect(b.Name).NotTo(HavePrefix("e2e-target"))
			}
		}, 3*time.Minute, 2*time.Second).Should(Succeed())
	})
})
