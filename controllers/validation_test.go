package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/sweepcache"
)

// The agent's reports are simulated here (no kubelet runs pods in envtest); their shape is the
// agent's own type, and the agent's tests run the real tools.
func deviceReport(node string, write, read float64) string {
	b, _ := json.Marshal(bench.Report{Command: "probe-device", Tool: "fio", Phase: bench.PhaseSucceeded, Node: node, FreeBytes: new(int64(4 << 30)),
		StartTime: time.Now().Add(-5 * time.Second), EndTime: time.Now(),
		Results: []bench.Result{{Operation: bench.OpWrite, BytesPerSecond: write, RuntimeSeconds: 3}, {Operation: bench.OpRead, BytesPerSecond: read, RuntimeSeconds: 3}}})
	return string(b)
}

// busyDeviceReport is deviceReport from a node whose device moved foreign bytes beside the
// probe's own (3 s of each phase).
func busyDeviceReport(node string, write, read, foreign float64) string {
	var rep bench.Report
	_ = json.Unmarshal([]byte(deviceReport(node, write, read)), &rep)
	for i := range rep.Results {
		r := &rep.Results[i]
		r.Bytes = int64(r.BytesPerSecond * r.RuntimeSeconds)
		r.Device, r.DeviceBytes = "loop1", r.Bytes+int64(foreign/2)
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

// idealReport is a sweep run's report. Its window is short: the specs play pods' ends
// seconds apart, and a sweep point is judged disturbed by other burst buffers' pods that ran
// beside its window (secondlook.go).
func idealReport(node string, procs int, write, read float64) string {
	b, _ := json.Marshal(bench.Report{Command: "ideal", Tool: "fio", Phase: bench.PhaseSucceeded, Node: node,
		StartTime: time.Now().Add(-200 * time.Millisecond), EndTime: time.Now(),
		Results: []bench.Result{
			{Operation: bench.OpWrite, BytesPerSecond: write, Bytes: int64(write * 3), RuntimeSeconds: 3, Processes: procs},
			{Operation: bench.OpRead, BytesPerSecond: read, Bytes: int64(read * 3), RuntimeSeconds: 3, Processes: procs},
		},
		Monitor: &bench.MonitorSummary{IntervalSeconds: 0.5, Samples: 6, Devices: []bench.Throughput{{Name: "loop0", PeakBytesPerSecond: write * 1.05, MeanBytesPerSecond: write}}}})
	return string(b)
}

// busyIdealReport is idealReport from a node whose device moved foreign bytes beside the
// run's own (other work on the device).
func busyIdealReport(node string, procs int, write, read, foreign float64) string {
	var rep bench.Report
	_ = json.Unmarshal([]byte(idealReport(node, procs, write, read)), &rep)
	for i := range rep.Results {
		rep.Results[i].Device = "loop1"
		rep.Results[i].DeviceBytes = rep.Results[i].Bytes + int64(foreign/2)
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

func transferReport(node string, bps float64) string {
	b, _ := json.Marshal(bench.Report{Command: "net-client", Tool: "iperf3", Phase: bench.PhaseSucceeded, Node: node,
		StartTime: time.Now().Add(-3 * time.Second), EndTime: time.Now(),
		Results: []bench.Result{{Operation: bench.OpTransfer, BytesPerSecond: bps, RuntimeSeconds: 3, Processes: 4}}})
	return string(b)
}

// finishNetwork plays the kubelet for the ring of iperf3 pairs: each server gets a pod IP,
// then its client (on the next node) ends with the given rate.
func finishNetwork(ctx context.Context, ns, name string, nodes []string, bps float64) {
	finishNetworkThen(ctx, ns, name, nodes, bps, nil)
}

// finishNetworkThen is finishNetwork with beforeLastEnd called once the last client pod
// exists, before it ends (to stop the operator, say).
func finishNetworkThen(ctx context.Context, ns, name string, nodes []string, bps float64, beforeLastEnd func()) {
	finishNetworkRound(ctx, ns, name, "", nodes, bps, beforeLastEnd)
}

// busyTransferReport is transferReport from a client whose interface sent foreign bytes
// beside the probe's own (3 s of it), while it received as much as it sent (the ring's pair).
func busyTransferReport(node string, bps, foreign float64) string {
	var rep bench.Report
	_ = json.Unmarshal([]byte(transferReport(node, bps)), &rep)
	r := &rep.Results[0]
	r.Bytes = int64(r.BytesPerSecond * r.RuntimeSeconds)
	r.Interface, r.InterfaceSentBytes, r.InterfaceReceivedBytes = "eth0", r.Bytes+int64(foreign), r.Bytes
	b, _ := json.Marshal(rep)
	return string(b)
}

// finishNetworkRound plays one round of the links: suffix "" for the first, "-r2" for the
// second.
func finishNetworkRound(ctx context.Context, ns, name, suffix string, nodes []string, bps float64, beforeLastEnd func()) {
	finishNetworkReports(ctx, ns, name, suffix, nodes, func(client string) string { return transferReport(client, bps) }, beforeLastEnd)
}

// finishNetworkReports is finishNetworkRound with each client's report made by report, from
// the client's node.
func finishNetworkReports(ctx context.Context, ns, name, suffix string, nodes []string, report func(client string) string, beforeLastEnd func()) {
	for k := range nodes {
		srv := &corev1.Pod{}
		srvName := fmt.Sprintf("%s-probe-nets-%d%s", name, k, suffix)
		Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, srvName), srv) }, timeout).Should(Succeed())
		ip := fmt.Sprintf("10.244.0.%d", k+10)
		srv.Status.Phase = corev1.PodRunning
		srv.Status.PodIP = ip
		srv.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		Expect(k8s.Status().Update(ctx, srv)).To(Succeed())
		// The client goes to the server's node's InternalIP (host network), else to the
		// server pod's address once it has one.
		var node corev1.Node
		if k8s.Get(ctx, client.ObjectKey{Name: nodes[k]}, &node) == nil {
			for _, a := range node.Status.Addresses {
				if a.Type == corev1.NodeInternalIP && a.Address != "" {
					ip = a.Address
					break
				}
			}
		}
		cl := fmt.Sprintf("%s-probe-netc-%d%s", name, k, suffix)
		Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, podKey(ctx, ns, cl), pod)).To(Succeed())
			g.Expect(pod.Spec.NodeName).To(Equal(nodes[(k+1)%len(nodes)]))
			g.Expect(pod.Spec.Containers[0].Args).To(ContainElement(ip))
		}, timeout).Should(Succeed())
		if k == len(nodes)-1 && beforeLastEnd != nil {
			beforeLastEnd()
		}
		finishPod(ctx, ns, cl, corev1.PodSucceeded, report(nodes[(k+1)%len(nodes)]))
		finishPod(ctx, ns, srvName, corev1.PodSucceeded, "")
	}
}

func failedReport(msg string) string {
	b, _ := json.Marshal(bench.Report{Command: "probe-device", Tool: "fio", Phase: bench.PhaseFailed, Message: msg})
	return string(b)
}

var _ = Describe("Stages 2-4: the validation profiles", func() {
	var (
		ctx context.Context
		ns  string
	)
	labelled := func() map[string]string {
		return map[string]string{"pool": ns, v1alpha1.LabelLinkRateBitsPerSecond: "1G",
			v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
	}
	quickBB := func(name string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.StragglerPercent = 20
		bb.Spec.Validation.MinimumEfficiencyPercent = 50
		bb.Spec.Validation.ReuseComponentResultsFor = "1h"
		return bb
	}
	prepared := func(name string) {
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
	}
	// probed creates bb and plays its stage 2: devices of 300/400 MB/s on node a and
	// writeB/400 MB/s on node b, links of linkBps.
	probed := func(bb *v1alpha1.BurstBuffer, writeB, linkBps float64) {
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared(bb.Name)
		finishPod(ctx, ns, bb.Name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(ns+"-a", 300e6, 400e6))
		finishPod(ctx, ns, bb.Name+"-probe-dev-1", corev1.PodSucceeded, deviceReport(ns+"-b", writeB, 400e6))
		finishNetwork(ctx, ns, bb.Name, []string{ns + "-a", ns + "-b"}, linkBps)
	}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		makeNode(ctx, ns+"-a", labelled())
		makeNode(ctx, ns+"-b", labelled())
	})
	AfterEach(func() {
		// The node figure cache outlives burst buffers by design; specs start clean.
		for _, n := range []string{ns + "-a", ns + "-b"} {
			_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
		}
	})

	It("quick: measures each device, warns about the slow one, sweeps, finds the straggler and becomes Ready", func() {
		bb := quickBB("quick")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("quick")

		// Stage 2: one device probe per node, only after the directories exist.
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbing))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseMeasuring))
		// The links wait for the devices: iperf3 beside fio on the same node measured a share
		// of each (seen on the testbed's QEMU nodes), within one burst buffer too. The quick
		// profile creates every run's pod at once, each chained after the runs before it on its
		// node (chain.go); a node's first run waits for the others' pods to start.
		after, startWith := chainedAfter(ctx, ns, "quick-probe-dev-0")
		Expect(after).To(BeEmpty())
		Expect(strings.Split(startWith, ",")).To(Equal([]string{"quick-probe-dev-0", "quick-probe-nets-0", "quick-probe-netc-1", "quick-sweep-0-0", "quick-sweep-1-0"}))
		Expect(chainedAfter(ctx, ns, "quick-probe-nets-0")).To(Equal("quick-probe-dev-0"))
		Expect(chainedAfter(ctx, ns, "quick-probe-netc-1")).To(Equal("quick-probe-dev-0"))
		Expect(chainedAfter(ctx, ns, "quick-sweep-0-1")).To(Equal("quick-probe-nets-1,quick-probe-netc-0"))
		Expect(chainedAfter(ctx, ns, "quick-sweep-1-1")).To(Equal("quick-sweep-0-1"))
		// Every run but the node's last holds its exit for the end of the runs after it: its
		// pod's end then does not lie beside the next measurement.
		Expect(chainArg(ctx, ns, "quick-probe-dev-0", "hold-for")).To(Equal("quick-probe-nets-0,quick-probe-netc-1"))
		Expect(chainArg(ctx, ns, "quick-probe-netc-0", "hold-for")).To(Equal("quick-sweep-0-1"))
		Expect(chainArg(ctx, ns, "quick-sweep-0-1", "hold-for")).To(Equal("quick-sweep-1-1"))
		Expect(chainArg(ctx, ns, "quick-sweep-1-1", "hold-for")).To(BeEmpty())
		finishPod(ctx, ns, "quick-probe-dev-0", corev1.PodSucceeded, deviceReport(ns+"-a", 301e6, 405e6))
		finishPod(ctx, ns, "quick-probe-dev-1", corev1.PodSucceeded, deviceReport(ns+"-b", 150e6, 398e6))
		Consistently(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), time.Second).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbing),
			"the links are not measured yet")
		// 1 Gbit/s documented = 125 MB/s; iperf3's goodput over Ethernet framing is ~95% of it.
		finishNetwork(ctx, ns, "quick", []string{ns + "-a", ns + "-b"}, 118e6)
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))

		cur := get(ctx, bb)
		comp := cur.Status.Limits.Components
		Expect(comp.Nodes).To(HaveLen(2))
		Expect(*comp.Nodes[1].DeviceWrite.DocumentedBytesPerSecond).To(Equal(int64(300e6)))
		Expect(*comp.Nodes[1].DeviceWrite.MeasuredBytesPerSecond).To(Equal(int64(150e6)))
		Expect(comp.Nodes[1].DeviceWrite.Source).To(Equal(v1alpha1.SourceLabel))
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(451e6)), "stage 2 limit = sum of measured devices")
		Expect(comp.Write.Bottleneck).To(Equal("devices"))
		Expect(cur.Status.Summary.WriteLimit).To(Equal("451 MB/s"), "from stage 2 on the measured figure is the limit")
		Expect(cur.Status.Capacity.String()).To(Equal("8Gi"), "free space of both nodes, as probed")
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningBelowDocumented),
			HaveField("Node", ns+"-b"), HaveField("Component", "device-write"))))
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Node", ns+"-a")))
		Expect(*comp.Nodes[0].Network.DocumentedBytesPerSecond).To(Equal(int64(125e6)))
		Expect(*comp.Nodes[0].Network.MeasuredBytesPerSecond).To(Equal(int64(118e6)))
		Expect(comp.Nodes[0].Network.Source).To(Equal(v1alpha1.SourceLabel))
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Component", "network")), "%s", "95% of the documented link is fine")

		// Stage 3 (quick): all nodes x {1, 4} processes, one point after the other.
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonSweeping))
		// The second point waits for the first on each node: chained (above).
		finishPod(ctx, ns, "quick-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 250e6, 300e6))
		finishPod(ctx, ns, "quick-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 120e6, 300e6))
		// The first point is published at once (a budget cut would keep it).
		Eventually(func() int32 {
			if l := get(ctx, bb).Status.Limits; l != nil && l.Sweep != nil {
				return l.Sweep.Points
			}
			return 0
		}, timeout).Should(Equal(int32(1)))
		finishPod(ctx, ns, "quick-sweep-1-0", corev1.PodSucceeded, idealReport(ns+"-a", 4, 290e6, 390e6))
		finishPod(ctx, ns, "quick-sweep-1-1", corev1.PodSucceeded, idealReport(ns+"-b", 4, 140e6, 380e6))

		// Node b's device at half its documented figure is probed once more before it is
		// published as such; the second round confirms it.
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)().Message).To(ContainSubstring(ns + "-b's device write measured 150 MB/s, 50% of the documented 300 MB/s"))
		finishPod(ctx, ns, "quick-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(ns+"-a", 300e6, 401e6))
		finishPod(ctx, ns, "quick-probe-dev-1-r2", corev1.PodSucceeded, deviceReport(ns+"-b", 148e6, 398e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		comp = get(ctx, bb).Status.Limits.Components
		Expect(comp.DeviceProbeRound).To(Equal(int32(2)))
		Expect(*comp.Nodes[1].DeviceWrite.MeasuredBytesPerSecond).To(Equal(int64(150e6)), "the higher of the two rounds")
		Expect(*comp.Nodes[1].DeviceWrite.FirstRoundBytesPerSecond).To(Equal(int64(150e6)))
		Expect(*comp.Nodes[0].DeviceWrite.MeasuredBytesPerSecond).To(Equal(int64(301e6)))
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(451e6)))
		Expect(get(ctx, bb).Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningBelowDocumented),
			HaveField("Node", ns+"-b"), HaveField("Component", "device-write"))), "confirmed by the second round")
		cur = get(ctx, bb)
		sw := cur.Status.Limits.Sweep
		Expect(sw.Write.BestBytesPerSecond).To(Equal(int64(430e6)))
		Expect(sw.Write.Best).To(Equal(v1alpha1.SweepPoint{Nodes: 2, ProcessesPerNode: 4}))
		Expect(sw.Write.EfficiencyPerMille).To(Equal(int32(953)), "430 / 451")
		Expect(sw.Points).To(Equal(int32(2)))
		Expect(cur.Status.Summary.WriteMeasured).To(Equal("430 MB/s"))
		Expect(cur.Status.Summary.Efficiency).To(Equal("0.95"))
		Expect(cur.Status.Limits.Monitoring.Stragglers).To(Equal([]string{ns + "-b"}))
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningStragglers), HaveField("Node", ns+"-b"))))
		Expect(cur.Status.Warnings).NotTo(ContainElement(And(HaveField("Reason", v1alpha1.WarningStragglers), HaveField("Node", ns+"-a"))))
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))

		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: sw.ConfigMapName}, &cm)).To(Succeed())

		// Measured: the succeeded measuring pods go (their results are in the status); the
		// engine's prepare pods stay until teardown.
		Eventually(func() []string { return podsOf(ctx, ns, "quick") }, timeout).Should(ConsistOf("quick-prep-0", "quick-prep-1"))

		// `kubectl beeburst limits` shows the stages side by side from the live object.
		out, err := exec.Command("go", "run", "../cmd/kubectl-beeburst", "limits", "--kubeconfig", kubeconfig, "-n", ns, "quick").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", string(out))
		GinkgoWriter.Printf("%s\n", out)
		Expect(string(out)).To(And(ContainSubstring("STAGE 1"), ContainSubstring("STAGE 2"), ContainSubstring("STAGE 3"),
			ContainSubstring("430"), ContainSubstring("BelowDocumented")))
		Expect(cm.Data["sweep.csv"]).To(ContainSubstring("nodes,processesPerNode,operation,bytesPerSecond\n2,1,write,370000000\n"))
	})

	It("quick with a sweep point on fewer than all nodes: chains stage 2 only, the sweep's points start when the operator saw the one before end", func() {
		bb := quickBB("partial")
		bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{Nodes: []int32{1, 2}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("partial")
		Expect(chainedAfter(ctx, ns, "partial-probe-nets-1")).To(Equal("partial-probe-dev-1"))
		// Node b, outside the first points, would otherwise go on to the 2-node points alone.
		Consistently(podExists(ctx, ns, "partial-sweep-0-0"), time.Second).Should(BeFalse())
		_, startWith := chainedAfter(ctx, ns, "partial-probe-dev-1")
		Expect(startWith).To(Equal("partial-probe-dev-1,partial-probe-nets-1,partial-probe-netc-0"))
	})

	It("standard: runs the workload benchmarks after stage 3 and relates them to its best", func() {
		bb := quickBB("std")
		bb.Spec.Validation.Profile = v1alpha1.ProfileStandard
		bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{Nodes: []int32{2}, ProcessesPerNode: []int32{4}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("std")
		// The standard profile's runs are not chained: each starts when the operator saw the
		// one before it end (chain.go says why).
		Expect(chainedAfter(ctx, ns, "std-probe-dev-0")).To(BeEmpty())
		Expect(podExists(ctx, ns, "std-probe-nets-0")()).To(BeFalse())
		finishPod(ctx, ns, "std-probe-dev-0", corev1.PodSucceeded, deviceReport(ns+"-a", 300e6, 400e6))
		finishPod(ctx, ns, "std-probe-dev-1", corev1.PodSucceeded, deviceReport(ns+"-b", 300e6, 400e6))
		finishNetwork(ctx, ns, "std", []string{ns + "-a", ns + "-b"}, 118e6)
		finishPod(ctx, ns, "std-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 4, 290e6, 390e6))
		finishPod(ctx, ns, "std-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 4, 290e6, 390e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonSweeping))
		workload := func(op string, bytes, ops float64) string {
			b, _ := json.Marshal(bench.Report{Command: "workload", Tool: "fio", Phase: bench.PhaseSucceeded,
				Results: []bench.Result{{Operation: bench.Operation(op), BytesPerSecond: bytes, OpsPerSecond: ops, RuntimeSeconds: 5}}})
			return string(b)
		}
		// One kind after another, on both nodes.
		finishPod(ctx, ns, "std-bench-0-0", corev1.PodSucceeded, workload("write", 145e6, 145))
		finishPod(ctx, ns, "std-bench-0-1", corev1.PodSucceeded, workload("write", 145e6, 145))
		finishPod(ctx, ns, "std-bench-1-0", corev1.PodSucceeded, workload("randwrite", 29e6, 7080))
		finishPod(ctx, ns, "std-bench-1-1", corev1.PodSucceeded, workload("randwrite", 29e6, 7080))
		finishPod(ctx, ns, "std-bench-2-0", corev1.PodSucceeded, workload("create", 0, 5000))
		finishPod(ctx, ns, "std-bench-2-1", corev1.PodSucceeded, workload("create", 0, 5000))
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		ws := get(ctx, bb).Status.Limits.Workloads
		Expect(ws).To(HaveLen(3))
		Expect(ws[0].Name).To(Equal("sharedFile/write"))
		Expect(*ws[0].SharePercent).To(Equal(int32(50)), "290 MB/s of 580 MB/s")
		Expect(*ws[1].SharePercent).To(Equal(int32(10)), "58 MB/s of 580 MB/s")
		Expect(ws[2].SharePercent).To(BeNil(), "metadata has no byte rate")
		Expect(*ws[2].OpsPerSecond).To(Equal(int64(10000)))
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)().Message).To(ContainSubstring("sharedFile/write 50%"))
	})

	// onePointProbed: a quick burst buffer with a one-point sweep (2 nodes x 1 process), its
	// devices probed (node a 300/400 MB/s, node b writeB/400 MB/s) and its links measured.
	onePointProbed := func(name string, writeB float64) *v1alpha1.BurstBuffer {
		bb := quickBB(name)
		bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{ProcessesPerNode: []int32{1}}
		probed(bb, writeB, 118e6)
		return bb
	}

	It("flags a sweep figure above the measured limit and does not publish it", func() {
		bb := onePointProbed("cache", 300e6)
		// Page cache: 2 GB/s from a 300 MB/s device.
		finishPod(ctx, ns, "cache-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 2e9, 395e6))
		finishPod(ctx, ns, "cache-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 2e9, 395e6))
		// A second probe tells a low probe from caching: the devices are measured again, and
		// confirm their figures.
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		// The sweep is published as judged so far (a budget cut keeps it), and judged again
		// after the second round.
		Expect(get(ctx, bb).Status.Limits.Sweep.Points).To(Equal(int32(1)))
		finishPod(ctx, ns, "cache-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(ns+"-a", 301e6, 400e6))
		finishPod(ctx, ns, "cache-probe-dev-1-r2", corev1.PodSucceeded, deviceReport(ns+"-b", 299e6, 400e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))
		cur := get(ctx, bb)
		Expect(cur.Status.Limits.Sweep.Write).To(BeNil(), "an invalid figure must not be published as a limit")
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		Expect(cur.Status.Limits.Components.DeviceProbeRound).To(Equal(int32(2)))
		Expect(k8s.Get(ctx, podKey(ctx, ns, "cache-probe-dev-0-r3"), &corev1.Pod{})).NotTo(Succeed(), "no third round")
	})

	It("ends validation when the devices' second round fails, the sweep published as judged against the first", func() {
		bb := onePointProbed("r2fail", 300e6)
		finishPod(ctx, ns, "r2fail-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 2e9, 300e6))
		finishPod(ctx, ns, "r2fail-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 2e9, 300e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		finishPod(ctx, ns, "r2fail-probe-dev-0-r2", corev1.PodFailed, failedReport("fio: read: Input/output error"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbeFailed),
			HaveField("Message", ContainSubstring("second round failed"))))
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseDegraded))
		Expect(cur.Status.ValidationEndTime).NotTo(BeNil())
		Expect(cur.Status.Limits.Sweep.Points).To(Equal(int32(1)))
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
	})

	It("past the time budget does not measure the devices again, says why the figure above their limit stands unsettled, and cuts validation short", func() {
		bb := onePointProbed("latecache", 300e6)
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "latecache-sweep-0-1"), &corev1.Pod{})
		}, timeout).Should(Succeed())
		whileManagerDown(func() {
			finishPod(ctx, ns, "latecache-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 2e9, 300e6))
			finishPod(ctx, ns, "latecache-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 2e9, 300e6))
			budgetRanOut(ctx, bb, 11*time.Minute)
		})

		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), 2*timeout).Should(And(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort),
			HaveField("Message", And(ContainSubstring("not settled by a second round of the devices"), ContainSubstring("validation.timeBudget 10m0s ran out")))))
		cur := get(ctx, bb)
		Expect(cur.Status.Limits.Sweep.Write).To(BeNil(), "flagged, not published")
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningValidationCutShort)))
		Expect(sweepcache.Keepable(cur)).NotTo(BeEmpty(), "an unsettled validation is not kept for reuse")
		Expect(k8s.Get(ctx, podKey(ctx, ns, "latecache-probe-dev-0-r2"), &corev1.Pod{})).NotTo(Succeed(), "no second round past the budget")
	})

	It("past the time budget stops the devices' second round and does not say they were measured twice", func() {
		bb := onePointProbed("cutdev", 300e6)
		finishPod(ctx, ns, "cutdev-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 2e9, 395e6))
		finishPod(ctx, ns, "cutdev-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 2e9, 395e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Eventually(podExists(ctx, ns, "cutdev-probe-dev-1-r2"), timeout).Should(BeTrue())
		// One node's second round ended, the other's still runs when the budget runs out.
		finishPod(ctx, ns, "cutdev-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(ns+"-a", 301e6, 400e6))
		whileManagerDown(func() { budgetRanOut(ctx, bb, 11*time.Minute) })

		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), 2*timeout).Should(And(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort),
			HaveField("Message", ContainSubstring("the devices' second round was stopped before it ended: their first round's figures stand"))))
		cur := get(ctx, bb)
		Expect(cur.Status.Limits.Components.DeviceProbeRound).To(BeZero(), "one round published: not measured twice")
		for _, n := range cur.Status.Limits.Components.Nodes {
			Expect(n.DeviceWrite.FirstRoundBytesPerSecond).To(BeNil(), "%s: no second round's figure beside the first", n.Name)
		}
		Expect(sweepcache.Keepable(cur)).NotTo(BeEmpty(), "an unsettled validation is not kept for reuse")
		stopped(ctx, ns, "cutdev", "cutdev-probe-dev-1-r2")
	})

	It("past the time budget stops the best point's second round, says it was not measured a second time, and cuts validation short", func() {
		bb := onePointProbed("lowlate", 300e6)
		finishPod(ctx, ns, "lowlate-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 230e6, 395e6))
		finishPod(ctx, ns, "lowlate-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 230e6, 395e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "lowlate-sweep-0-1-r2"), &corev1.Pod{})
		}, timeout).Should(Succeed())
		// The second round is still running when the budget runs out.
		whileManagerDown(func() { budgetRanOut(ctx, bb, 11*time.Minute) })

		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), 2*timeout).Should(And(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort),
			HaveField("Message", ContainSubstring("2 nodes x 1 process not measured a second time"))))
		cur := get(ctx, bb)
		Expect(cur.Status.Limits.Sweep.Write.BestBytesPerSecond).To(Equal(int64(460e6)), "the first round's figure, published")
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningValidationCutShort)))
		Expect(sweepcache.Keepable(cur)).NotTo(BeEmpty(), "an unsettled validation is not kept for reuse")
		stopped(ctx, ns, "lowlate", "lowlate-sweep-0-0-r2", "lowlate-sweep-0-1-r2")
	})

	It("measures the devices again when the sweep reads above a probe that read low, and judges the sweep against the second round", func() {
		// Node b's probe shared the node with something else: 240 of its 300 MB/s.
		bb := onePointProbed("again", 240e6)
		Eventually(func() int64 {
			if c := get(ctx, bb).Status.Limits.Components; c != nil && c.Write != nil {
				return c.Write.LimitBytesPerSecond
			}
			return 0
		}, timeout).Should(Equal(int64(540e6)))
		// The sweep writes 600 MB/s: above 540 MB/s and its 5% tolerance.
		finishPod(ctx, ns, "again-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 300e6, 395e6))
		finishPod(ctx, ns, "again-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 300e6, 395e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseMeasuring))
		Expect(get(ctx, bb).Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)), "as judged against the first round")
		finishPod(ctx, ns, "again-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(ns+"-a", 301e6, 401e6))
		finishPod(ctx, ns, "again-probe-dev-1-r2", corev1.PodSucceeded, deviceReport(ns+"-b", 302e6, 399e6))

		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		cur := get(ctx, bb)
		comp := cur.Status.Limits.Components
		Expect(comp.DeviceProbeRound).To(Equal(int32(2)))
		Expect(*comp.Nodes[1].DeviceWrite.MeasuredBytesPerSecond).To(Equal(int64(302e6)), "the second round's figure")
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(603e6)))
		Expect(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured)().Message).To(ContainSubstring("round 2"))
		Expect(cur.Status.Limits.Sweep.Write).NotTo(BeNil())
		Expect(cur.Status.Limits.Sweep.Write.BestBytesPerSecond).To(Equal(int64(600e6)))
		Expect(cur.Status.Limits.Sweep.Write.EfficiencyPerMille).To(Equal(int32(995)), "600 / 603")
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningBelowDocumented)), "the low figure is gone with its warning")

		// The per-node cache holds the second round's figure, not the doubted one.
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: nodecache.Name(ns + "-b")}, &cm)).To(Succeed())
		f, err := nodecache.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.DeviceWriteBytesPerSecond).To(Equal(int64(302e6)))
	})

	It("does not leave a doubted device figure for reuse when the devices' second round ran beside other work", func() {
		bb := onePointProbed("doubt", 240e6)
		finishPod(ctx, ns, "doubt-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 300e6, 395e6))
		finishPod(ctx, ns, "doubt-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 300e6, 395e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring))
		// Node b's second probe shares its device with other work: published, not cached.
		finishPod(ctx, ns, "doubt-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(ns+"-a", 301e6, 401e6))
		finishPod(ctx, ns, "doubt-probe-dev-1-r2", corev1.PodSucceeded, busyDeviceReport(ns+"-b", 250e6, 399e6, 500e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(HaveField("Status", metav1.ConditionTrue))
		b := cachedEntry(ctx, ns+"-b")
		Expect(b.DeviceWriteBytesPerSecond).To(Equal(int64(240e6)), "the first round's figure, which the busy second round did not replace")
		Expect(b.Doubted).To(ContainSubstring(ns + "/doubt measured the devices again"))
		Expect(b.Fresh(b.StoragePath, time.Hour, time.Now())).To(BeFalse(), "a doubted figure is not reused")
		a := cachedEntry(ctx, ns+"-a")
		Expect(a.DeviceWriteBytesPerSecond).To(Equal(int64(301e6)), "a clean second round replaces the doubted figure")
		Expect(a.Doubted).To(BeEmpty())
	})

	It("measures the best sweep point again when it reads far below the stage-2 limit, keeps the higher round and shows both", func() {
		bb := onePointProbed("low", 300e6)
		// 460 MB/s of the 600 MB/s the devices were measured to give: something slowed it.
		finishPod(ctx, ns, "low-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 230e6, 395e6))
		finishPod(ctx, ns, "low-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 230e6, 395e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring),
			HaveField("Message", ContainSubstring("77% of the 600 MB/s"))))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseMeasuring), "not Ready on a figure in doubt")
		rm := get(ctx, bb).Status.Limits.Sweep.Remeasured
		Expect(rm).To(HaveLen(1))
		Expect(rm[0].Point).To(Equal(v1alpha1.SweepPoint{Nodes: 2, ProcessesPerNode: 1}))
		Expect(rm[0].Reason).To(Equal(v1alpha1.RemeasureFarBelowLimit))
		Expect(rm[0].Rounds).To(Equal([]v1alpha1.PointRound{{WriteBytesPerSecond: 460e6, ReadBytesPerSecond: 790e6}}))

		finishPod(ctx, ns, "low-sweep-0-0-r2", corev1.PodSucceeded, idealReport(ns+"-a", 1, 300e6, 390e6))
		finishPod(ctx, ns, "low-sweep-0-1-r2", corev1.PodSucceeded, idealReport(ns+"-b", 1, 299e6, 390e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		cur := get(ctx, bb)
		sw := cur.Status.Limits.Sweep
		Expect(sw.Write.BestBytesPerSecond).To(Equal(int64(599e6)), "the higher round")
		Expect(sw.Read.BestBytesPerSecond).To(Equal(int64(790e6)), "each operation keeps its higher round: the first's read")
		Expect(sw.Remeasured[0].Rounds).To(Equal([]v1alpha1.PointRound{{WriteBytesPerSecond: 460e6, ReadBytesPerSecond: 790e6}, {WriteBytesPerSecond: 599e6, ReadBytesPerSecond: 780e6}}))
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningNodeBusy)))
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningBelowExpectation)))
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "low-sweep"}, &cm)).To(Succeed())
		Expect(cm.Data["sweep.csv"]).To(ContainSubstring("2,1,write,599000000"), "the full sweep holds the settled figure")
	})

	It("publishes a sweep point with NodeBusy when other work used its node's device in both rounds, and a clean second round without", func() {
		bb := onePointProbed("busy", 300e6)
		// Node b's device moved 200 MB that the run did not, beside a full-speed run.
		finishPod(ctx, ns, "busy-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 300e6, 395e6))
		finishPod(ctx, ns, "busy-sweep-0-1", corev1.PodSucceeded, busyIdealReport(ns+"-b", 1, 300e6, 395e6, 200e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring),
			HaveField("Message", ContainSubstring("loop1 moved"))))
		rm := get(ctx, bb).Status.Limits.Sweep.Remeasured
		Expect(rm).To(HaveLen(1))
		Expect(rm[0].Reason).To(Equal(v1alpha1.RemeasureNodeBusy))
		Expect(rm[0].Rounds[0].DisturbedBy).To(ConsistOf(ContainSubstring("node " + ns + "-b: loop1 moved 200.0 MB that the run did not")))

		finishPod(ctx, ns, "busy-sweep-0-0-r2", corev1.PodSucceeded, idealReport(ns+"-a", 1, 290e6, 395e6))
		finishPod(ctx, ns, "busy-sweep-0-1-r2", corev1.PodSucceeded, busyIdealReport(ns+"-b", 1, 250e6, 395e6, 300e6))
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		cur := get(ctx, bb)
		Expect(cur.Status.Limits.Sweep.Write.BestBytesPerSecond).To(Equal(int64(600e6)))
		Expect(cur.Status.Limits.Sweep.Remeasured[0].Rounds).To(HaveLen(2))
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Component", "sweep"),
			HaveField("Node", ns+"-b"), HaveField("Message", And(ContainSubstring("2 node(s) x 1 process(es)"), ContainSubstring("both rounds"))))))
	})

	It("names the link pair when a link is slower than documented (two nodes cannot tell which end)", func() {
		bb := quickBB("slowlink")
		probed(bb, 300e6, 59e6)
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))
		w := get(ctx, bb).Status.Warnings
		Expect(w).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningBelowDocumented), HaveField("Component", "network"),
			HaveField("Node", ns+"-a,"+ns+"-b"), HaveField("Message", ContainSubstring("47% of the documented 125 MB/s")))))
	})

	It("a failed probe makes the burst buffer Degraded with the node's name, not stuck", func() {
		bb := quickBB("broken")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("broken")
		finishPod(ctx, ns, "broken-probe-dev-1", corev1.PodFailed, failedReport("fio: write: Input/output error"))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseDegraded))
		c := condition(ctx, bb, v1alpha1.ConditionComponentsMeasured)()
		Expect(c.Reason).To(Equal(v1alpha1.ReasonProbeFailed))
		Expect(c.Message).To(And(ContainSubstring(ns+"-b"), ContainSubstring("Input/output error")))
		Expect(condition(ctx, bb, v1alpha1.ConditionReady)().Reason).To(Equal(v1alpha1.ReasonProbeFailed))
	})

	It("a failed probe ends validation at once: Degraded with its reason, past the time budget too, and its pod stays for debugging", func() {
		bb := quickBB("failedcut")
		bb.Spec.Validation.TimeBudget = "3s"
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("failedcut")
		finishPod(ctx, ns, "failedcut-probe-dev-1", corev1.PodFailed, failedReport("fio: write: Input/output error"))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseDegraded))
		// Nothing after a failed probe can run, so validation ends there: the probe still
		// running is stopped, and stages 3-4 say why they were not measured.
		Eventually(func() *metav1.Time { return get(ctx, bb).Status.ValidationEndTime }, timeout).ShouldNot(BeNil())
		Expect(meta.FindStatusCondition(get(ctx, bb).Status.Conditions, v1alpha1.ConditionValidated)).To(
			And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbeFailed), HaveField("Message", ContainSubstring("stage 2 failed"))))
		Eventually(func() bool {
			var pod corev1.Pod
			err := k8s.Get(ctx, podKey(ctx, ns, "failedcut-probe-dev-0"), &pod)
			return apierrors.IsNotFound(err) || pod.DeletionTimestamp != nil
		}, timeout).Should(BeTrue(), "the running probe is stopped")
		// The budget's end (3 s) changes nothing: it used to replace the failure with
		// CutShort, and the burst buffer went Ready with a broken device.
		Consistently(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseDegraded))
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionComponentsMeasured)
			g.Expect(c.Reason).To(Equal(v1alpha1.ReasonProbeFailed))
			g.Expect(c.Message).To(ContainSubstring("Input/output error"))
			g.Expect(meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionValidated)).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbeFailed))
			var pod corev1.Pod
			g.Expect(k8s.Get(ctx, podKey(ctx, ns, "failedcut-probe-dev-1"), &pod)).To(Succeed())
			g.Expect(pod.DeletionTimestamp).To(BeNil(), "the failed probe's pod says what went wrong")
		}, 4*time.Second).Should(Succeed())
	})

	It("a failed sweep point ends validation: the nodes go to the next burst buffer and the verdicts that waited are given", func() {
		bb := quickBB("sweepfail")
		bb.Spec.Validation.CompareWith = &v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: "/scratch"}}
		probed(bb, 300e6, 118e6)
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "sweepfail-sweep-0-1"), &corev1.Pod{})
		}, timeout).Should(Succeed())
		// A second burst buffer on the same nodes queues for their measuring locks.
		next := quickBB("next")
		Expect(k8s.Create(ctx, next)).To(Succeed())
		prepared("next")
		Eventually(func() []string { return queueOf(ctx, ns+"-a") }, timeout).Should(ContainElement(ns + "/next"))

		finishPod(ctx, ns, "sweepfail-sweep-0-1", corev1.PodFailed, failedReport("ior: No space left on device"))
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(And(
			haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbeFailed), HaveField("Message", ContainSubstring("No space left on device"))))
		Eventually(func() *metav1.Time { return get(ctx, bb).Status.ValidationEndTime }, timeout).ShouldNot(BeNil())
		Expect(get(ctx, bb).Status.Phase).To(Equal(v1alpha1.PhaseDegraded))
		// The verdict on compareWith used to wait for a Validated True that never came.
		Eventually(condition(ctx, bb, v1alpha1.ConditionCompared), timeout).Should(And(
			haveStatus(metav1.ConditionFalse, v1alpha1.ReasonComparisonFailed), HaveField("Message", ContainSubstring("No space left on device"))))
		// The other point's pod is stopped, and the next point's, which waited in the chain
		// (envtest has no kubelet: the test removes them as one would); the failed one stays,
		// and the locks go to the next burst buffer.
		stopped(ctx, ns, "sweepfail", "sweepfail-sweep-0-0", "sweepfail-sweep-1-0", "sweepfail-sweep-1-1")
		Eventually(holderOf(ctx, ns+"-a"), timeout).Should(Equal(ns + "/next"))
		Eventually(holderOf(ctx, ns+"-b"), timeout).Should(Equal(ns + "/next"))
		Expect(k8s.Get(ctx, podKey(ctx, ns, "sweepfail-sweep-0-1"), &corev1.Pod{})).To(Succeed())
	})

	It("cuts validation short at the time budget, publishes what was measured and becomes Ready", func() {
		bb := quickBB("budget")
		bb.Spec.Validation.TimeBudget = "3s"
		probed(bb, 300e6, 118e6)
		// The sweep never finishes: no pod completes. The clock ends it.
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), 2*timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort))
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		Expect(cur.Status.Limits.Components.Write.LimitBytesPerSecond).To(Equal(int64(600e6)), "stage 2 stays published")
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningValidationCutShort)))
		// Running benchmark pods are stopped (deleted: the kubelet sends SIGTERM, the agent
		// removes its files; envtest has no kubelet, so the pod only gets its deletion mark).
		Eventually(func() bool {
			var pod corev1.Pod
			err := k8s.Get(ctx, podKey(ctx, ns, "budget-sweep-0-0"), &pod)
			return apierrors.IsNotFound(err) || pod.DeletionTimestamp != nil
		}, timeout).Should(BeTrue())
	})

	It("at the time budget's end reads the sweep points that ended while nobody looked, publishes them and starts nothing new", func() {
		bb := quickBB("lastlook")
		probed(bb, 300e6, 118e6)
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "lastlook-sweep-0-1"), &corev1.Pod{})
		}, timeout).Should(Succeed())
		// The operator is down while the first point ends and the budget (10 minutes) runs
		// out: the first visit after it comes back finds both. The cut used to delete the
		// ended pods unread.
		// Another burst buffer's job ran on node a beside the point.
		runningWorkload(ctx, ns, "lastlook-job", "other", ns+"-a")
		whileManagerDown(func() {
			finishPod(ctx, ns, "lastlook-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 250e6, 300e6))
			finishPod(ctx, ns, "lastlook-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 240e6, 310e6))
			budgetRanOut(ctx, bb, 11*time.Minute)
		})

		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), 2*timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonCutShort))
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		sw := cur.Status.Limits.Sweep
		Expect(sw).NotTo(BeNil(), "the ended point is published")
		Expect(sw.Points).To(Equal(int32(1)))
		Expect(sw.CutShort).To(BeTrue())
		Expect(sw.Write.BestBytesPerSecond).To(Equal(int64(490e6)))
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningValidationCutShort)))
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Component", "sweep"),
			HaveField("Node", ns+"-a"), HaveField("Message", ContainSubstring(ns+"/lastlook-job")))),
			"a point published by the cut says what ran beside it, as a full sweep's does")
		// Past the budget no new point starts: the next point's pods, waiting in the chain, are
		// stopped, and nothing is created again.
		stopped(ctx, ns, "lastlook", "lastlook-sweep-1-0", "lastlook-sweep-1-1")
		Consistently(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "lastlook-sweep-1-0"), &corev1.Pod{})
		}, 2*time.Second).ShouldNot(Succeed(), "past the budget no new point starts")
	})

	It("reuses a node's recent stage-2 figures for the next burst buffer instead of probing again", func() {
		first := quickBB("first")
		first.Spec.Validation.Sweep = &v1alpha1.SweepSpec{ProcessesPerNode: []int32{1}}
		Expect(k8s.Create(ctx, first)).To(Succeed())
		prepared("first")
		finishPod(ctx, ns, "first-probe-dev-0", corev1.PodSucceeded, deviceReport(ns+"-a", 310e6, 400e6))
		finishPod(ctx, ns, "first-probe-dev-1", corev1.PodSucceeded, deviceReport(ns+"-b", 290e6, 400e6))
		finishNetwork(ctx, ns, "first", []string{ns + "-a", ns + "-b"}, 118e6)
		Eventually(condition(ctx, first, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))
		// The first one measures its nodes to the end before the second may (nodelock.go).
		finishPod(ctx, ns, "first-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 1, 290e6, 390e6))
		finishPod(ctx, ns, "first-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 1, 290e6, 390e6))
		Eventually(condition(ctx, first, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))

		second := quickBB("second")
		Expect(k8s.Create(ctx, second)).To(Succeed())
		prepared("second")
		finishNetwork(ctx, ns, "second", []string{ns + "-a", ns + "-b"}, 118e6)
		Eventually(condition(ctx, second, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReused))
		Expect(k8s.Get(ctx, podKey(ctx, ns, "second-probe-dev-0"), &corev1.Pod{})).NotTo(Succeed(), "no second probe")
		comp := get(ctx, second).Status.Limits.Components
		Expect(comp.Nodes[0].Reused).To(BeTrue())
		Expect(*comp.Nodes[0].DeviceWrite.MeasuredBytesPerSecond).To(Equal(int64(310e6)))
		Expect(comp.Write.LimitBytesPerSecond).To(Equal(int64(600e6)))
		for k, procs := range []int{1, 4} {
			finishPod(ctx, ns, fmt.Sprintf("second-sweep-%d-0", k), corev1.PodSucceeded, idealReport(ns+"-a", procs, 290e6, 390e6))
			finishPod(ctx, ns, fmt.Sprintf("second-sweep-%d-1", k), corev1.PodSucceeded, idealReport(ns+"-b", procs, 290e6, 390e6))
		}
		Eventually(condition(ctx, second, v1alpha1.ConditionValidated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonValidated))

		// A different storage path is a different drive: no reuse.
		third := quickBB("third")
		third.Spec.Storage.Path = "/mnt/other"
		Expect(k8s.Create(ctx, third)).To(Succeed())
		prepared("third")
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "third-probe-dev-0"), &corev1.Pod{})
		}, timeout).Should(Succeed())
	})
})
