package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// compareDir is the node-local directory validation.compareWith names: below /mnt (the chart's
// storage.allowedRoots has /mnt), and not the storage path itself (the API server refuses that
// for the local engine). It is on the same drive as the burst buffer: on the testbed
// /mnt/nvme is each node's capped "NVMe", so the comparison holds the local engine against a
// plain directory on its own drive - exactly the question "is it worth it" for the local
// engine, whose answer must be "about the same" (the local engine is that drive, with nothing
// on top). The spec creates it on both workers (the operator never creates a compareWith
// directory) and removes it at the end.
const (
	compareName = "e2e-compare"
	compareDir  = "/mnt/nvme/e2e-compare"
)

// validation.compareWith on the testbed: a local burst buffer on the 2 workers with the quick
// profile, compared with a node-local directory on the same drives. Run alone with
// -ginkgo.label-filter=compare.
var _ = Describe("validation.compareWith on the testbed", Ordered, ContinueOnFailure, Label("compare"), func() {
	ctx := context.Background()
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: compareName, Namespace: testNamespace}}

	BeforeAll(func() {
		if n := workerCount(); n != 2 {
			Skip(fmt.Sprintf("the compareWith spec runs on the testbed's two workers, not %d node(s)", n))
		}
		installOperator()
		for _, node := range workers() {
			// nodeShell mounts the node's /mnt/nvme at /host.
			nodeShell(ctx, node, "mkdir -p /host/"+strings.TrimPrefix(compareDir, "/mnt/nvme/"))
		}
	})

	It("runs the ideal workload on a node-local directory too and publishes both side by side", func() {
		bb.Spec = v1alpha1.BurstBufferSpec{
			Engine: v1alpha1.EngineLocal,
			Nodes:  v1alpha1.NodesSpec{Count: 2},
			Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick,
				CompareWith: &v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: compareDir}}},
		}
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		timeline := waitReady(ctx, bb, start, 8*time.Minute)
		cur := get(ctx, bb)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionCompared)

		// The figures go to the log whatever the checks below say.
		cs, _ := yaml.Marshal(cur.Status.Comparison)
		out, _ := kubectl("get", "bb", "-n", testNamespace, bb.Name, "-o", "wide")
		limitsOut, _ := run("go", "run", "./cmd/kubectl-beeburst", "limits", "-n", testNamespace, bb.Name)
		report := fmt.Sprintf("%s%s\nstatus.comparison:\n%s", timeline, out, cs)
		if c != nil {
			report += fmt.Sprintf("condition %s=%s reason %s (+%.0f s): %s\n", c.Type, c.Status, c.Reason,
				c.LastTransitionTime.Sub(cur.CreationTimestamp.Time).Seconds(), c.Message)
		}
		report += "$ kubectl beeburst limits -n " + testNamespace + " " + bb.Name + "\n" + limitsOut
		AddReportEntry("compareWith node-local", report)
		fmt.Fprintln(GinkgoWriter, report)

		Expect(c).NotTo(BeNil(), "no Compared condition")
		Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s", c.Reason, c.Message)
		Expect(c.Reason).To(Equal(v1alpha1.ReasonCompared))
		cmp := cur.Status.Comparison
		Expect(cmp).NotTo(BeNil())
		Expect(cmp.With).To(ContainSubstring(compareDir))
		Expect(cmp.Message).NotTo(BeEmpty())
		Expect(limitsOut).To(ContainSubstring("compared with"))
		m := regexp.MustCompile(`(\d+) node\(s\) x (\d+) process\(es\)`).FindStringSubmatch(cmp.Workload)
		Expect(m).NotTo(BeNil(), "workload %q names no point", cmp.Workload)
		points, _ := strconv.Atoi(m[1])
		Expect(points).To(BeNumerically(">=", 1))
		Expect(points).To(BeNumerically("<=", 2))

		figures := map[string]v1alpha1.ComparedOperation{}
		for _, op := range cmp.Operations {
			figures[op.Operation] = op
		}
		for _, op := range []string{"write", "read"} {
			f, ok := figures[op]
			Expect(ok).To(BeTrue(), "status.comparison has no %s", op)
			Expect(f.BurstBufferBytesPerSecond).NotTo(BeNil(), "%s: no burst buffer figure", op)
			Expect(f.OtherBytesPerSecond).NotTo(BeNil(), "%s: no figure of %s", op, compareDir)
			Expect(*f.BurstBufferBytesPerSecond).To(BeNumerically(">", 0))
			Expect(*f.OtherBytesPerSecond).To(BeNumerically(">", 0))
			Expect(f.RatioPerMille).NotTo(BeNil())
		}
		if hw == nil {
			Skip("no BEEBURST_HARDWARE_ENV: both sides have figures; their values are checked on the testbed only")
		}
		// Both sides ran the same point on the same capped drives, one container (one fio) per
		// node: each is device-bound at the sum of the caps of the point's nodes (the first
		// ones of status.nodes, as the comparison takes them), and the ratio is about 1. The
		// ratio is the comparison's answer and is held to 0.75-1.33; each side is held below its caps
		// (a figure above the hardware would be a lie) and above half of them. A 2 s read on the
		// testbed's loop devices fell to 72% of the caps once while the host was loaded - on
		// both sides alike (426 and 430 MB/s, x0.99), which is what a comparison must show.
		for _, op := range []string{"write", "read"} {
			key := map[string]string{"write": "WRITE", "read": "READ"}[op]
			sum := 0.0
			for _, n := range cur.Status.Nodes[:points] {
				sum += hwFloat("WORKER_" + strings.TrimPrefix(n.Name, "worker-") + "_DISK_" + key + "_BPS")
			}
			f := figures[op]
			Expect(float64(*f.OtherBytesPerSecond)).To(And(BeNumerically("<=", 1.15*sum), BeNumerically(">=", 0.5*sum)), "%s on %s (caps %s)", op, compareDir, mbs(sum))
			Expect(float64(*f.BurstBufferBytesPerSecond)).To(And(BeNumerically("<=", 1.15*sum), BeNumerically(">=", 0.5*sum)), "%s on the burst buffer (caps %s)", op, mbs(sum))
			// x0.84 and x1.09 were seen for reads of 2-3 s on the testbed's loop devices.
			Expect(*f.RatioPerMille).To(And(BeNumerically(">=", 750), BeNumerically("<=", 1330)), "%s: the same drive, the same figure", op)
		}
	})

	It("deletes it, leaving nothing behind, not even in the compared directory", func() {
		deleteAndWait(ctx, bb, 3*time.Minute)
		expectNothingLeft(ctx, compareName)
		for _, node := range workers() {
			// The benchmark writes below a directory of its own there and removes it: the
			// directory is empty again, and the spec removes it (rmdir: only if empty).
			dir := "/host/" + strings.TrimPrefix(compareDir, "/mnt/nvme/")
			left := nodeShell(ctx, node, "ls -A "+dir+"; rmdir "+dir+" && echo removed")
			Expect(strings.TrimSpace(left)).To(Equal("removed"), "left in %s on %s", compareDir, node)
		}
	})
})
