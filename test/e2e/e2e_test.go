// Package e2e is beeburst's end-to-end suite. It runs against the cluster of $KUBECONFIG - the
// testbed from hack/testbed (known hardware) or a kind cluster - with the images already
// loaded (`make test-e2e` does all of that). With the testbed's hardware.env it also checks
// that the published limits are right, not only present.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/sweepcache"
)

const (
	operatorNamespace = "beeburst-system"
	testNamespace     = "beeburst-e2e"
)

var (
	k8s      client.Client
	k8sWatch client.WithWatch // for the fault suite's recorder of measuring pods
	repo     string
	hw       map[string]string // the testbed's hardware.env, if any
	imageTag = envOr("BEEBURST_IMAGE_TAG", "dev")
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "beeburst end to end")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// run runs a command and returns its combined output; the command line goes to the log.
func run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = repo
	fmt.Fprintf(GinkgoWriter, "$ %s %s\n", name, strings.Join(args, " "))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func kubectl(args ...string) (string, error) { return run("kubectl", args...) }

// bbPods lists the pods the operator made for burst buffer name of testNamespace (and the
// labels given), wherever they run: its host-level pods in the operator's namespace, its
// copies beside it.
func bbPods(ctx context.Context, name string, labels map[string]string) []corev1.Pod {
	var out []corev1.Pod
	sel := client.MatchingLabels{v1alpha1.LabelBurstBuffer: name, nodetask.LabelBurstBufferNamespace: testNamespace}
	for k, v := range labels {
		sel[k] = v
	}
	for _, ns := range []string{testNamespace, operatorNamespace} {
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns), sel)).To(Succeed())
		out = append(out, pods.Items...)
	}
	return out
}

// taskPodKey is where the host-level pod called name (as it would be beside its burst
// buffer in testNamespace) runs: in the operator's namespace, behind the namespace's tag.
func taskPodKey(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: operatorNamespace, Name: nodetask.NamespaceTag(testNamespace) + "-" + name}
}

var _ = BeforeSuite(func() {
	Expect(os.Getenv("KUBECONFIG")).NotTo(BeEmpty(), "KUBECONFIG must name the cluster under test (make test-e2e sets it)")
	wd, err := os.Getwd()
	Expect(err).NotTo(HaveOccurred())
	repo = filepath.Join(wd, "..", "..")
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	Expect(err).NotTo(HaveOccurred())
	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(v1alpha1.AddToScheme(scheme)).To(Succeed())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	k8sWatch, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	if f := os.Getenv("BEEBURST_HARDWARE_ENV"); f != "" {
		hw = readEnv(f)
		fmt.Fprintf(GinkgoWriter, "known hardware from %s: %v\n", f, hw)
	}
})

// dump prints what a person needs to see why a spec failed.
var _ = JustAfterEach(func() {
	if !CurrentSpecReport().Failed() {
		return
	}
	for _, args := range [][]string{
		{"get", "bb", "-A", "-o", "yaml"},
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "events", "-A", "--sort-by=.lastTimestamp"},
		{"get", "leases", "-n", operatorNamespace, "-o", "yaml"},
		{"-n", operatorNamespace, "logs", "deploy/beeburst-manager", "--tail=200"},
		{"describe", "pods", "-n", testNamespace},
		{"describe", "pods", "-n", operatorNamespace, "-l", "beeburst.io/burst-buffer"},
	} {
		out, _ := kubectl(args...)
		fmt.Fprintf(GinkgoWriter, "---- kubectl %s\n%s\n", strings.Join(args, " "), out)
	}
})

var _ = Describe("beeburst", Ordered, func() {
	BeforeAll(func() { installOperator() })

	It("runs the manager", func() {
		Eventually(func(g Gomega) {
			out, err := kubectl("-n", operatorNamespace, "get", "deploy", "beeburst-manager", "-o", "jsonpath={.status.availableReplicas}")
			g.Expect(err).NotTo(HaveOccurred(), "%s", out)
			g.Expect(out).To(Equal("1"))
		}, 2*time.Minute, 2*time.Second).Should(Succeed())
		// Its Go runtime collects before the container's memory limit is reached
		// (cmd/manager/memlimit.go): the limit read from inside the pod's cgroup.
		limit, err := kubectl("-n", operatorNamespace, "get", "deploy", "beeburst-manager", "-o", "jsonpath={.spec.template.spec.containers[0].resources.limits.memory}")
		Expect(err).NotTo(HaveOccurred(), "%s", limit)
		q := resource.MustParse(limit)
		soft := int64(float64(q.Value()) * 0.9)
		Eventually(func() string {
			out, _ := kubectl("-n", operatorNamespace, "logs", "deploy/beeburst-manager")
			return out
		}, 30*time.Second, time.Second).Should(And(ContainSubstring("Go memory limit set from the container's"), ContainSubstring(fmt.Sprintf(`"bytes":%d`, soft))))
	})

	It("measures a local burst buffer with the quick profile and publishes limits that match the hardware", func() {
		ctx := context.Background()
		nodes := workerCount()
		bb := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-local", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine: v1alpha1.EngineLocal,
				Nodes:  v1alpha1.NodesSpec{Count: int32(nodes)},
				// Measured, not reused from a burst buffer of an earlier spec: its figures are
				// checked against the hardware, its time is the quick profile's, and the next
				// spec reuses it.
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick, ReuseSweep: ptr.To(false)},
			},
		}
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		// What a user (or a pipeline) runs: kubectl wait on the Ready condition. kstatus'
		// Stalled makes a failure visible at once instead of at the timeout.
		out, err := kubectl("wait", "-n", testNamespace, "bb/"+bb.Name, "--for=condition=Ready", "--timeout=5m")
		cur := get(ctx, bb)
		Expect(err).NotTo(HaveOccurred(), "kubectl wait: %s\nphase %s, conditions %+v", out, cur.Status.Phase, cur.Status.Conditions)
		elapsed := time.Since(start)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		out, _ = kubectl("get", "bb", "-n", testNamespace, "-o", "wide")
		report := fmt.Sprintf("time from create to Ready (quick profile, %d nodes): %.1f s\n%s", nodes, elapsed.Seconds(), out)
		limitsOut, _ := run("go", "run", "./cmd/kubectl-beeburst", "limits", "-n", testNamespace, bb.Name)
		report += limitsOut
		AddReportEntry("quick profile", report)
		fmt.Println(report) // the figures belong in the CI log

		cur = get(ctx, bb)
		l := cur.Status.Limits
		Expect(l.Estimated).NotTo(BeNil())
		Expect(l.Components).NotTo(BeNil())
		checkMetricsAgainstStatus(cur)
		if l.Components.Write != nil {
			loneWriteLimit = l.Components.Write.LimitBytesPerSecond // the fault suite's reference
		}
		if l.Sweep != nil && l.Sweep.Write != nil {
			loneSweepWrite = l.Sweep.Write.BestBytesPerSecond // and its stage-3 reference
		}
		Expect(l.Sweep).NotTo(BeNil())
		if hw == nil {
			// A measurement above its limit is about the hardware's values too: kind's nodes
			// share one disk whose speed varies with the host's other work (docs/kind.md).
			why := ""
			for _, w := range cur.Status.Warnings {
				if w.Reason == v1alpha1.WarningExceedsLimit {
					why += " (here " + w.Reason + ": " + w.Message + ")"
				}
			}
			Skip("no BEEBURST_HARDWARE_ENV: the figures are present; their values are checked on the testbed only" + why)
		}
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		// Alone on its nodes, its link probes sent nothing beside their own bytes but their
		// headers and acknowledgements (the interfaces' counters).
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningNodeBusy)))

		checkAgainstHardware(cur)
	})

	It("reuses that validation for the next burst buffer built the same way: Ready without measuring, the source named", func() {
		ctx := context.Background()
		again := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-local-again", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine:     v1alpha1.EngineLocal,
				Nodes:      v1alpha1.NodesSpec{Count: int32(workerCount())},
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick},
			},
		}
		first := getName(ctx, "e2e-local")
		if why := sweepcache.Keepable(first); why != "" {
			Skip("e2e-local's validation is not kept for reuse: " + why)
		}
		start := time.Now()
		Expect(k8s.Create(ctx, again)).To(Succeed())
		out, err := kubectl("wait", "-n", testNamespace, "bb/"+again.Name, "--for=condition=Ready", "--timeout=2m")
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		elapsed := time.Since(start)
		cur := get(ctx, again)
		Expect(cur.Status.Limits.Sweep.ReusedFrom).NotTo(BeNil(), "the sweep is %+v", cur.Status.Limits.Sweep)
		Expect(cur.Status.Limits.Sweep.ReusedFrom.BurstBuffer).To(Equal(testNamespace + "/e2e-local"))
		Expect(cur.Status.Limits.Sweep.Write.BestBytesPerSecond).To(Equal(first.Status.Limits.Sweep.Write.BestBytesPerSecond))
		for _, p := range bbPods(ctx, again.Name, nil) {
			Expect(p.Labels["app.kubernetes.io/component"]).To(Equal("prep"), "nothing but the directories: %s", p.Name)
		}
		wide, _ := kubectl("get", "bb", "-n", testNamespace, again.Name, "-o", "wide")
		report := fmt.Sprintf("time from create to Ready, validation reused (quick profile, %d nodes): %.1f s\n%s", workerCount(), elapsed.Seconds(), wide)
		AddReportEntry("reused validation", report)
		fmt.Println(report)
		deleteAndWait(ctx, again, 2*time.Minute)
	})

	It("removes the burst buffer's directories from every node when it is deleted", func() {
		ctx := context.Background()
		bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "e2e-local", Namespace: testNamespace}}
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, 2*time.Minute, time.Second).Should(BeTrue())
		for _, node := range workers() {
			out := nodeShell(ctx, node, "ls -A /host/beeburst 2>/dev/null; true")
			Expect(out).NotTo(ContainSubstring(testNamespace+".e2e-local"), "left on %s", node)
		}
	})

	faultSuite()
	stagingSample()
	stageOutFailureKeepsData()
	stagingS3()

	It("reports a beegfs burst buffer's problem clearly within 60 seconds and cleans up", func() {
		ctx := context.Background()
		bb := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-beegfs", Namespace: testNamespace},
			Spec:       v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineBeeGFS, Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileNone}},
		}
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		var msg string
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(get(ctx, bb).Status.Conditions, v1alpha1.ConditionProvisioned)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(v1alpha1.ReasonClientModuleMissing))
			msg = c.Message
		}, 60*time.Second, time.Second).Should(Succeed())
		fmt.Printf("beegfs burst buffer explained itself after %.1f s: %s\n", time.Since(start).Seconds(), msg)
		Expect(msg).To(ContainSubstring("engine: local"))
		Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseFailed))
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, 60*time.Second, time.Second).Should(BeTrue())
	})
})

func get(ctx context.Context, bb *v1alpha1.BurstBuffer) *v1alpha1.BurstBuffer {
	cur := &v1alpha1.BurstBuffer{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur)).To(Succeed())
	return cur
}

// workerCount is the number of Ready nodes that take workloads.
func workerCount() int { return len(workers()) }

// workers names the Ready nodes that take workloads, by name: the testbed's worker-1,
// worker-2, ...; kind's <cluster>-worker, <cluster>-worker2, ... (its control plane carries a
// NoSchedule taint and no storage of its own).
func workers() []string {
	var nodes corev1.NodeList
	Expect(k8s.List(context.Background(), &nodes)).To(Succeed())
	var names []string
	for _, node := range nodes.Items {
		if node.Spec.Unschedulable || slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}) {
			continue
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				names = append(names, node.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// nodeShell runs a shell command in a pod on node with the node's storage path at /host,
// using the agent image (which carries sh and ls), and returns its log.
func nodeShell(ctx context.Context, node, script string) string {
	return podShell(ctx, "e2e-shell-"+node, node, script, volume{
		v: corev1.Volume{Name: "nvme", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/nvme"}}},
		m: corev1.VolumeMount{Name: "nvme", MountPath: "/host"},
	})
}

func readEnv(path string) map[string]string {
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			m[strings.TrimPrefix(k, "export ")] = strings.Trim(v, `"'`)
		}
	}
	return m
}

func hwFloat(key string) float64 {
	v, err := strconv.ParseFloat(hw[key], 64)
	Expect(err).NotTo(HaveOccurred(), "hardware.env has no number for %s", key)
	Expect(v).To(BeNumerically(">", 0), "%s is unshaped on the testbed: nothing to compare with", key)
	return v
}

// checkAgainstHardware holds the published figures against what the testbed really shaped
// and what its node labels document (hardware.env): stage 2 within 10% of the real figures,
// BelowDocumented exactly where the real figure is more than 10% under the documented one,
// Stragglers for a node well under the others, and stage 3 device-bound within 15% of the
// sum of the real caps with an efficiency between 0.8 and 1.05.
func checkAgainstHardware(bb *v1alpha1.BurstBuffer) {
	l := bb.Status.Limits
	warned := func(node, component string) bool {
		for _, w := range bb.Status.Warnings {
			if w.Reason == v1alpha1.WarningBelowDocumented && w.Component == component && strings.Contains(w.Node, node) {
				return true
			}
		}
		return false
	}
	var caps []float64
	var sumWrite float64
	slowestLink := 0.0
	for _, n := range l.Components.Nodes {
		idx := strings.TrimPrefix(n.Name, "worker-")
		capW, docW := hwFloat("WORKER_"+idx+"_DISK_WRITE_BPS"), hwOptional("WORKER_"+idx+"_DOC_DISK_WRITE_BPS")
		capR := hwFloat("WORKER_" + idx + "_DISK_READ_BPS")
		Expect(float64(*n.DeviceWrite.MeasuredBytesPerSecond)).To(BeNumerically("~", capW, 0.10*capW), "node %s device write", n.Name)
		Expect(float64(*n.DeviceRead.MeasuredBytesPerSecond)).To(BeNumerically("~", capR, 0.10*capR), "node %s device read", n.Name)
		Expect(warned(n.Name, "device-write")).To(Equal(docW > 0 && capW < 0.9*docW), "BelowDocumented device-write for %s", n.Name)
		caps = append(caps, capW)
		sumWrite += capW
		if link := hwOptional("WORKER_" + idx + "_LINK_RATE_BPS"); link > 0 {
			if slowestLink == 0 || link < slowestLink {
				slowestLink = link
			}
		}
	}
	for _, n := range l.Components.Nodes {
		idx := strings.TrimPrefix(n.Name, "worker-")
		link, doc := hwOptional("WORKER_"+idx+"_LINK_RATE_BPS"), hwOptional("WORKER_"+idx+"_DOC_LINK_RATE_BPS")
		if link == 0 || n.Network == nil {
			continue // an unshaped link has no known figure to hold the probe against
		}
		// With two nodes a node's figure is its pair's: bounded by the slower end.
		want := slowestLink / 8
		Expect(float64(*n.Network.MeasuredBytesPerSecond)).To(BeNumerically("~", want, 0.10*want), "node %s link", n.Name)
		if doc > 0 && link < 0.9*doc {
			Expect(warned(n.Name, "network")).To(BeTrue(), "BelowDocumented network naming %s", n.Name)
		}
	}
	median := caps[0]
	if len(caps) == 2 {
		median = (caps[0] + caps[1]) / 2
	}
	for i, n := range l.Components.Nodes {
		straggler := len(caps) > 1 && caps[i] < 0.8*median
		if straggler {
			Expect(l.Monitoring.Stragglers).To(ContainElement(n.Name))
			Expect(bb.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningStragglers), HaveField("Node", n.Name))))
		} else {
			Expect(l.Monitoring.Stragglers).NotTo(ContainElement(n.Name))
		}
	}
	// The local engine is device-bound; the network never is its bottleneck.
	Expect(l.Components.Write.Bottleneck).To(Equal("devices"))
	Expect(l.Estimated.Write.NetworkBytesPerSecond).To(BeNil())
	Expect(l.Sweep.Write).NotTo(BeNil())
	Expect(float64(l.Sweep.Write.BestBytesPerSecond)).To(BeNumerically("~", sumWrite, 0.15*sumWrite))
	Expect(l.Sweep.Write.EfficiencyPerMille).To(And(BeNumerically(">=", 800), BeNumerically("<=", 1050)))
}

func hwOptional(key string) float64 {
	v, _ := strconv.ParseFloat(hw[key], 64)
	return v
}
