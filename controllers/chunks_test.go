package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// layout.chunkSizePolicy Auto: the chunk sizes measured between stage 2 and the
// sweep, the best kept for workload.pattern and set on the root before the sweep runs.
var _ = Describe("layout.chunkSizePolicy Auto: the chunk size tuned on the new file system", func() {
	var (
		ctx   context.Context
		ns    string
		nodes []string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		nodes = []string{ns + "-a", ns + "-b"}
		makeBeeGFSNode(ctx, nodes[0], "10.9.0.1", map[string]string{"pool": ns})
		makeBeeGFSNode(ctx, nodes[1], "10.9.0.2", map[string]string{"pool": ns})
		forgetFiguresOf(ctx, nodes)
	})
	autoBB := func(name, budget string) *v1alpha1.BurstBuffer {
		bb := beegfsBB(ns, name, 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.TimeBudget = v1alpha1.Duration(budget)
		bb.Spec.Layout.ChunkSizePolicy = v1alpha1.ChunkSizeAuto
		return bb
	}
	// stage2 plays the kubelet through provisioning and stage 2 (devices, links, StorageBench).
	stage2 := func(bb *v1alpha1.BurstBuffer) {
		provisionBeeGFS(ctx, bb, 2)
		finishPod(ctx, ns, bb.Name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], 1.0e9, 2.0e9))
		finishPod(ctx, ns, bb.Name+"-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 1.0e9, 2.0e9))
		finishNetwork(ctx, ns, bb.Name, nodes, 1.1e9)
		finishPod(ctx, ns, bb.Name+"-storagebench-0", corev1.PodSucceeded, strings.Join([]string{
			"== write (exit 0) ==", "UNINITIALIZED INITIALIZED ERROR RUNNING STOPPING STOPPED FINISHING FINISHED UNKNOWN",
			"0 0 0 0 0 0 0 2 0", "write 976562kiB/s s:1", "write 976562kiB/s s:17",
			"== read (exit 0) ==", "UNINITIALIZED INITIALIZED ERROR RUNNING STOPPING STOPPED FINISHING FINISHED UNKNOWN",
			"0 0 0 0 0 0 0 2 0", "read 1953125kiB/s s:1", "read 1953125kiB/s s:17",
		}, "\n"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))
	}
	// candidate plays one size's turn: its directory's stripe task, then one run per node
	// (write, read per node in bytes per second; a failed node when failOn is set).
	candidate := func(bb *v1alpha1.BurstBuffer, k int, chunk string, write, read float64, failOn string) {
		set := fmt.Sprintf("%s-chunkset-%d", bb.Name, k)
		pod := &corev1.Pod{}
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, set), pod) }, timeout).Should(Succeed())
		script := pod.Spec.Containers[0].Command[2]
		Expect(script).To(And(ContainSubstring("mkdir -p /burst-buffer/.beeburst-chunks/"+chunk),
			ContainSubstring("bee entry set --chunk-size="+chunk+" --num-targets=2 /.beeburst-chunks/"+chunk)))
		Expect(pod.Spec.NodeName).To(Equal(nodes[0]), "the CLI runs on the management node")
		Consistently(podExists(ctx, ns, fmt.Sprintf("%s-chunk-%d-0", bb.Name, k)), "500ms").Should(BeFalse(),
			"no run before the directory has its pattern")
		finishPod(ctx, ns, set, corev1.PodSucceeded, "stripe pattern set")
		for i, node := range nodes {
			run := fmt.Sprintf("%s-chunk-%d-%d", bb.Name, k, i)
			Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, run), pod) }, timeout).Should(Succeed())
			Expect(pod.Spec.NodeName).To(Equal(node))
			Expect(pod.Spec.Containers[0].Args).To(ContainElements("ideal", "--dir", "/burst-buffer/.beeburst-chunks/"+chunk, "--procs", "4"))
			if node == failOn {
				finishPod(ctx, ns, run, corev1.PodFailed, failedReport("fio: write: Input/output error"))
				continue
			}
			finishPod(ctx, ns, run, corev1.PodSucceeded, idealReport(node, 4, write, read))
		}
	}
	chunkSize := func(bb *v1alpha1.BurstBuffer) func() *v1alpha1.ChunkSizeStatus {
		return func() *v1alpha1.ChunkSizeStatus { return get(ctx, bb).Status.ChunkSize }
	}

	It("measures the planned sizes one after another, keeps the best, sets it on the root before the sweep, and resumes after a restart", func() {
		bb := autoBB("auto", "10m")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonPending))
		stage2(bb)

		// A quarter of 10m for runs of 2 s write + 2 s read + 10 s: the baseline and the three
		// sizes large sequential I/O favours, planned once and kept in the status.
		Eventually(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen), timeout).Should(haveStatus(metav1.ConditionUnknown, v1alpha1.ReasonChunkSizeTuning))
		cs := get(ctx, bb).Status.ChunkSize
		Expect(cs.Policy).To(Equal(v1alpha1.ChunkSizeAuto))
		Expect(cs.Size.String()).To(Equal("512Ki"), "the root keeps the baseline while the sizes are measured")
		Expect(cs.Candidates).To(HaveLen(4))
		Expect([]string{cs.Candidates[0].Size.String(), cs.Candidates[1].Size.String(), cs.Candidates[2].Size.String(), cs.Candidates[3].Size.String()}).
			To(Equal([]string{"512Ki", "4Mi", "1Mi", "16Mi"}))
		Expect(cs.Message).To(ContainSubstring("4 runs of 14s each, 56s of the 2m30s budget"))

		candidate(bb, 0, "512ki", 300e6, 500e6, "")
		candidate(bb, 1, "4Mi", 390e6, 520e6, "")
		Eventually(func() *int64 {
			if c := chunkSize(bb)(); c != nil {
				return c.Candidates[1].WriteBytesPerSecond
			}
			return nil
		}, timeout).ShouldNot(BeNil(), "each size's figures are published as soon as it ended")
		Expect(*chunkSize(bb)().Candidates[1].WriteBytesPerSecond).To(Equal(int64(780e6)), "the sum over the nodes")

		// An operator restart in the middle: the plan comes back from the status, the runs
		// from their pods.
		stopManager()
		startManager()
		candidate(bb, 2, "1Mi", 310e6, 505e6, "")
		candidate(bb, 3, "16Mi", 450e6, 560e6, nodes[1])
		Expect(podExists(ctx, ns, "auto-chunkset-4")()).To(BeFalse())

		// 4Mi wins (write +30%, read +4%); 16Mi failed on a node and is said so, not dropped.
		apply := &corev1.Pod{}
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, "auto-chunkset-99"), apply) }, timeout).Should(Succeed())
		Expect(apply.Spec.Containers[0].Command[2]).To(And(ContainSubstring("bee entry set --chunk-size=4Mi --num-targets=2 /\n"),
			ContainSubstring("rm -rf /burst-buffer/.beeburst-chunks")))
		Consistently(podExists(ctx, ns, "auto-sweep-0-0"), "1s").Should(BeFalse(), "the sweep waits for the chosen size")
		finishPod(ctx, ns, "auto-chunkset-99", corev1.PodSucceeded, "stripe pattern of /: chunk size 4Mi")

		Eventually(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonChunkSizeChosen))
		cs = get(ctx, bb).Status.ChunkSize
		Expect(cs.Size.String()).To(Equal("4Mi"))
		Expect(cs.Pattern).To(Equal(v1alpha1.PatternLargeSequential))
		Expect(cs.Message).To(HavePrefix("4Mi chosen for large sequential I/O: write +30%, read +4% over layout.chunkSize 512Ki"))
		Expect(cs.Candidates[1].Chosen).To(BeTrue())
		Expect(*cs.Candidates[0].ScorePerMille).To(Equal(int32(1000)))
		Expect(*cs.Candidates[1].ScorePerMille).To(BeNumerically(">", 1100))
		Expect(cs.Candidates[3].Message).To(And(ContainSubstring("run failed"), ContainSubstring(nodes[1]), ContainSubstring("Input/output error")))
		Expect(cs.Candidates[3].WriteBytesPerSecond).To(BeNil())
		GinkgoWriter.Printf("chunk size: %s\n", cs.Message)

		// The sweep runs on the root, whose pattern is now 4Mi.
		finishPod(ctx, ns, "auto-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, 300e6, 600e6))
		finishPod(ctx, ns, "auto-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 300e6, 600e6))
		finishPod(ctx, ns, "auto-sweep-1-0", corev1.PodSucceeded, idealReport(nodes[0], 4, 390e6, 700e6))
		finishPod(ctx, ns, "auto-sweep-1-1", corev1.PodSucceeded, idealReport(nodes[1], 4, 390e6, 700e6))
		// 0.78 GB/s of the 2 GB/s the devices were measured to give: the best point is
		// measured once more, and confirms.
		finishPod(ctx, ns, "auto-sweep-1-0-r2", corev1.PodSucceeded, idealReport(nodes[0], 4, 380e6, 690e6))
		finishPod(ctx, ns, "auto-sweep-1-1-r2", corev1.PodSucceeded, idealReport(nodes[1], 4, 380e6, 690e6))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen)().Status).To(Equal(metav1.ConditionTrue))
		Eventually(func() bool { return !podExists(ctx, ns, "auto-chunk-0-0")() || deleting(ctx, ns, "auto-chunk-0-0")() }, timeout).Should(BeTrue(),
			"the runs' pods are tidied with the other measuring pods")
		tearDownWithTasks(ctx, bb)
	})

	It("with a budget for two sizes measures two and says which it left out; the baseline stays on a tie", func() {
		// A quarter of 2m30s: 37.5 s, room for two runs of 14 s.
		bb := autoBB("small", "2m30s")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		stage2(bb)
		Eventually(chunkSize(bb), timeout).ShouldNot(BeNil())
		cs := chunkSize(bb)()
		Expect(cs.Candidates).To(HaveLen(2))
		Expect(cs.Message).To(ContainSubstring("2 runs of 14s each"))
		Expect(cs.Message).To(ContainSubstring("the budget leaves out 1Mi, 16Mi"))
		candidate(bb, 0, "512ki", 300e6, 500e6, "")
		candidate(bb, 1, "4Mi", 306e6, 498e6, "")
		finishPod(ctx, ns, "small-chunkset-99", corev1.PodSucceeded, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonChunkSizeChosen))
		cs = chunkSize(bb)()
		Expect(cs.Size.String()).To(Equal("512Ki"))
		Expect(cs.Candidates[0].Chosen).To(BeTrue())
		Expect(cs.Message).To(HavePrefix("layout.chunkSize 512Ki stays: no other size beat it by more than 5%"))
		Eventually(podExists(ctx, ns, "small-sweep-0-0"), timeout).Should(BeTrue())
		tearDownWithTasks(ctx, bb)
	})

	It("with a budget too small to compare two sizes measures none, says so, and sweeps with layout.chunkSize", func() {
		// A quarter of 1m: 15 s, one run of 14 s: nothing to compare it with.
		bb := autoBB("tiny", "1m")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		stage2(bb)
		Eventually(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned))
		c := condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen)()
		Expect(c.Message).To(And(ContainSubstring("the budget of 15s allows 1 run of 14s, and one size cannot be compared"), ContainSubstring("layout.chunkSize 512Ki stays"),
			ContainSubstring("a quarter of validation.timeBudget")))
		cs := chunkSize(bb)()
		Expect(cs.Size.String()).To(Equal("512Ki"))
		Eventually(podExists(ctx, ns, "tiny-sweep-0-0"), timeout).Should(BeTrue(), "the sweep follows at once")
		Expect(podExists(ctx, ns, "tiny-chunkset-0")()).To(BeFalse())
		Eventually(warningEvents(ctx, ns, "tiny", v1alpha1.ReasonChunkSizeNotTuned), timeout).ShouldNot(BeEmpty())
		tearDownWithTasks(ctx, bb)
	})

	It("when the time budget ends validation first, keeps what was measured and leaves layout.chunkSize on the root", func() {
		bb := autoBB("cut", "2m30s")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		stage2(bb)
		candidate(bb, 0, "512ki", 300e6, 500e6, "")
		// The validation clock runs out while the second size is measured, once the first
		// one's figures are published.
		Eventually(func() *int64 {
			if c := chunkSize(bb)(); c != nil {
				return c.Candidates[0].WriteBytesPerSecond
			}
			return nil
		}, timeout).ShouldNot(BeNil())
		budgetRanOut(ctx, bb, 3*time.Minute)
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort))
		// The root keeps the baseline and the candidates' directories go.
		apply := &corev1.Pod{}
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, "cut-chunkset-99"), apply) }, timeout).Should(Succeed())
		Expect(apply.Spec.Containers[0].Command[2]).To(ContainSubstring("--chunk-size=512ki --num-targets=2 /\n"))
		finishPod(ctx, ns, "cut-chunkset-99", corev1.PodSucceeded, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionChunkSizeChosen), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned))
		cs := chunkSize(bb)()
		Expect(cs.Size.String()).To(Equal("512Ki"))
		Expect(cs.Message).To(And(ContainSubstring("validation ended (CutShort"), ContainSubstring("1 of 2 size(s) measured")))
		Expect(*cs.Candidates[0].WriteBytesPerSecond).To(Equal(int64(600e6)), "what was measured stays")
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseReady))
		tearDownWithTasks(ctx, bb)
	})
})
