package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/staging"
)

// lease reads a node's measuring lock (in the suite's operator namespace).
func lease(ctx context.Context, node string) *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: "beeburst-measure-" + node}, l); err != nil {
		return nil
	}
	return l
}

func holderOf(ctx context.Context, node string) func() string {
	return func() string {
		l := lease(ctx, node)
		if l == nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
}

func queueOf(ctx context.Context, node string) []string {
	l := lease(ctx, node)
	if l == nil {
		return nil
	}
	var q []struct {
		BB string `json:"bb"`
	}
	_ = json.Unmarshal([]byte(l.Annotations["beeburst.io/queue"]), &q)
	var out []string
	for _, e := range q {
		out = append(out, e.BB)
	}
	return out
}

// measuringOn names the burst buffers with a measuring pod on node that has not ended.
func measuringOn(ctx context.Context, ns, node string) []string {
	var pods corev1.PodList
	for _, in := range []string{ns, operatorNamespace} {
		var l corev1.PodList
		Expect(k8s.List(ctx, &l, client.InNamespace(in), client.MatchingLabels{nodetask.LabelBurstBufferNamespace: ns})).To(Succeed())
		pods.Items = append(pods.Items, l.Items...)
	}
	seen := map[string]bool{}
	for _, p := range pods.Items {
		switch p.Labels["app.kubernetes.io/component"] {
		case "probe-dev", "probe-nets", "probe-netc", "sweep", "bench", "storagebench":
		default:
			continue
		}
		if p.Spec.NodeName == node && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			seen[p.Labels[v1alpha1.LabelBurstBuffer]] = true
		}
	}
	var out []string
	for bb := range seen {
		out = append(out, bb)
	}
	sort.Strings(out)
	return out
}

var _ = Describe("One burst buffer measures a node at a time (node locks)", func() {
	var (
		ctx   context.Context
		ns    string
		nodes []string
	)
	quick := func(name string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{ProcessesPerNode: []int32{1}}
		bb.Spec.Validation.ReuseComponentResultsFor = "0s" // every one probes
		return bb
	}
	prepared := func(name string) {
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
	}
	// measureAt plays the kubelet for a whole quick measurement of one burst buffer whose
	// first node's drive writes firstWrite (its sweep 10 MB/s less), measure for drives
	// as documented (300 MB/s).
	measureAt := func(name string, firstWrite float64) {
		finishPod(ctx, ns, name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], firstWrite, 400e6))
		finishPod(ctx, ns, name+"-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		finishNetwork(ctx, ns, name, nodes, 118e6)
		finishPod(ctx, ns, name+"-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, firstWrite-10e6, 390e6))
		finishPod(ctx, ns, name+"-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 290e6, 390e6))
	}
	measure := func(name string) { measureAt(name, 300e6) }
	// cachedFigures is node's entry in the per-node cache, nil when it has none.
	cachedFigures := func(node string) *nodecache.Figures {
		var cm corev1.ConfigMap
		err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: nodecache.Name(node)}, &cm)
		if apierrors.IsNotFound(err) {
			return nil
		}
		Expect(err).NotTo(HaveOccurred())
		f, err := nodecache.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		return &f
	}
	alone := func() {
		for _, n := range nodes {
			Expect(len(measuringOn(ctx, ns, n))).To(BeNumerically("<=", 1), "two burst buffers measure node %s at once: %v", n, measuringOn(ctx, ns, n))
		}
	}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		nodes = []string{ns + "-a", ns + "-b"}
		labels := map[string]string{"pool": ns, v1alpha1.LabelLinkRateBitsPerSecond: "1G",
			v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
		makeNode(ctx, nodes[0], labels)
		makeNode(ctx, nodes[1], labels)
	})
	AfterEach(func() {
		for _, n := range nodes {
			_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
		}
	})

	It("queues concurrent burst buffers in arrival order, names the node and the holder, starts each budget on its turn, and never lets two measure a node at once", func() {
		for _, name := range []string{"a", "b", "c"} {
			Expect(k8s.Create(ctx, quick(name))).To(Succeed())
		}
		a, b, c := quick("a"), quick("b"), quick("c")
		// They reach measurement one after the other.
		prepared("a")
		Eventually(podExists(ctx, ns, "a-probe-dev-0"), timeout).Should(BeTrue())
		prepared("b")
		Eventually(condition(ctx, b, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonQueuedForNode))
		prepared("c")
		Eventually(func() []string { return queueOf(ctx, nodes[0]) }, timeout).Should(Equal([]string{ns + "/b", ns + "/c"}))

		Eventually(func() string { return condition(ctx, c, v1alpha1.ConditionComponentsMeasured)().Message }, timeout).Should(
			And(ContainSubstring("node "+nodes[0]), ContainSubstring("burst buffer "+ns+"/a"), ContainSubstring("1 burst buffer(s) ahead")))
		Expect(condition(ctx, c, v1alpha1.ConditionReady)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonQueuedForNode))
		Expect(phase(ctx, c)()).To(Equal(v1alpha1.PhaseMeasuring))
		Expect(get(ctx, b).Status.ValidationStartTime).To(BeNil(), "the budget of a queued burst buffer has not started")
		Expect(get(ctx, a).Status.ValidationStartTime).NotTo(BeNil())
		Expect(holderOf(ctx, nodes[0])()).To(Equal(ns + "/a"))
		Expect(holderOf(ctx, nodes[1])()).To(Equal(ns + "/a"))
		Consistently(func() bool { return podExists(ctx, ns, "b-probe-dev-0")() || podExists(ctx, ns, "c-probe-nets-0")() }, 2*time.Second).Should(BeFalse())
		alone()

		By("handing the nodes to the next in line once the holder measured them")
		measure("a")
		Eventually(phase(ctx, a), timeout).Should(Equal(v1alpha1.PhaseReady))
		Eventually(holderOf(ctx, nodes[0]), timeout).Should(Equal(ns + "/b"))
		Eventually(podExists(ctx, ns, "b-probe-dev-0"), timeout).Should(BeTrue())
		alone()
		Eventually(func() string { return condition(ctx, c, v1alpha1.ConditionComponentsMeasured)().Message }, timeout).Should(ContainSubstring("burst buffer " + ns + "/b"))

		By("giving the nodes up when the holder is deleted, once its measuring pods are gone")
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(deleting(ctx, ns, "b-probe-dev-0"), timeout).Should(BeTrue())
		Consistently(holderOf(ctx, nodes[0]), 2*time.Second).Should(Equal(ns+"/b"), "its probes have not stopped yet")
		stopped(ctx, ns, "b", "b-probe-dev-0", "b-probe-dev-1", "b-probe-nets-0", "b-probe-nets-1", "b-sweep-0-0")
		Eventually(holderOf(ctx, nodes[0]), timeout).Should(Equal(ns + "/c"))
		finishPod(ctx, ns, "b-clean-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "b-clean-1", corev1.PodSucceeded, "")
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }, timeout).Should(BeTrue())
		alone()

		measure("c")
		Eventually(phase(ctx, c), timeout).Should(Equal(v1alpha1.PhaseReady))
		Eventually(holderOf(ctx, nodes[0]), timeout).Should(BeEmpty())
		Expect(holderOf(ctx, nodes[1])()).To(BeEmpty())
		Expect(queueOf(ctx, nodes[0])).To(BeEmpty())
		Expect(get(ctx, c).Status.Limits.Components.Write.LimitBytesPerSecond).To(Equal(get(ctx, a).Status.Limits.Components.Write.LimitBytesPerSecond))
	})

	It("keeps the locks it holds while it waits for the next node's: the waiters behind it stay queued, no lock changes hands", func() {
		// x1 < x2: Y and Z take x1 first, then x2, which X holds (it measures x2 alone).
		x1, x2 := ns+"-x1", ns+"-x2"
		makeNode(ctx, x1, map[string]string{"pair": ns})
		makeNode(ctx, x2, map[string]string{"pair": ns, "single": "yes"})
		on := func(name string, count int32, sel map[string]string) *v1alpha1.BurstBuffer {
			bb := quick(name)
			bb.Spec.Nodes = v1alpha1.NodesSpec{Count: count, Selector: &metav1.LabelSelector{MatchLabels: sel}}
			return bb
		}
		x, y, z := on("x", 1, map[string]string{"pair": ns, "single": "yes"}), on("y", 2, map[string]string{"pair": ns}), on("z", 2, map[string]string{"pair": ns})
		Expect(k8s.Create(ctx, x)).To(Succeed())
		finishPod(ctx, ns, "x-prep-0", corev1.PodSucceeded, "")
		Eventually(podExists(ctx, ns, "x-probe-dev-0"), timeout).Should(BeTrue())
		Expect(k8s.Create(ctx, y)).To(Succeed())
		prepared("y")
		Eventually(holderOf(ctx, x1), timeout).Should(Equal(ns + "/y"))
		Eventually(func() []string { return queueOf(ctx, x2) }, timeout).Should(Equal([]string{ns + "/y"}))
		Expect(k8s.Create(ctx, z)).To(Succeed())
		prepared("z")
		Eventually(func() []string { return queueOf(ctx, x1) }, timeout).Should(Equal([]string{ns + "/z"}))
		handsOf := func() string {
			l := lease(ctx, x1)
			return fmt.Sprintf("%s, %d transitions", holderOf(ctx, x1)(), *l.Spec.LeaseTransitions)
		}
		Expect(handsOf()).To(HavePrefix(ns + "/y, "))
		Consistently(handsOf, 3*time.Second).Should(Equal(handsOf()))
		Expect(holderOf(ctx, x2)()).To(Equal(ns + "/x"))
		Expect(condition(ctx, z, v1alpha1.ConditionComponentsMeasured)().Message).To(ContainSubstring("burst buffer " + ns + "/y"))
		for _, bb := range []*v1alpha1.BurstBuffer{x, y, z} {
			tearDown(ctx, bb)
		}
	})

	It("leaves the queue of a later node while it waits for an earlier one's lock, so that the later node is not kept free for it", func() {
		// x1 < x2. Y needs both; Z holds x1. Y's place at the head of x2's queue is what it
		// keeps after losing x1's lock (its lease ran out while its visits were late): x2
		// would stay free for Y, which waits for x1 - and W, which needs x2 alone, would
		// wait for Y; with more burst buffers such waits closed a cycle.
		x1, x2 := ns+"-x1", ns+"-x2"
		makeNode(ctx, x1, map[string]string{"pair": ns, "first": "yes"})
		makeNode(ctx, x2, map[string]string{"pair": ns, "second": "yes"})
		on := func(name string, count int32, sel map[string]string) *v1alpha1.BurstBuffer {
			bb := quick(name)
			bb.Spec.Nodes = v1alpha1.NodesSpec{Count: count, Selector: &metav1.LabelSelector{MatchLabels: sel}}
			return bb
		}
		z, y, w := on("z", 1, map[string]string{"first": "yes"}), on("y", 2, map[string]string{"pair": ns}), on("w", 1, map[string]string{"second": "yes"})
		Expect(k8s.Create(ctx, z)).To(Succeed())
		finishPod(ctx, ns, "z-prep-0", corev1.PodSucceeded, "")
		Eventually(holderOf(ctx, x1), timeout).Should(Equal(ns + "/z"))
		Expect(k8s.Create(ctx, y)).To(Succeed())
		prepared("y")
		Eventually(func() []string { return queueOf(ctx, x1) }, timeout).Should(Equal([]string{ns + "/y"}))

		By("a free x2 with Y at the head of its queue")
		yUID := get(ctx, y).UID
		free := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "beeburst-measure-" + x2, Namespace: "default",
			Labels: map[string]string{"app.kubernetes.io/name": "beeburst", "app.kubernetes.io/component": "node-lock",
				"app.kubernetes.io/managed-by": "beeburst-operator"},
			Annotations: map[string]string{"beeburst.io/node": x2, "beeburst.io/queue": fmt.Sprintf(`[{"bb":%q,"uid":%q}]`, ns+"/y", yUID)}}}
		Expect(k8s.Create(ctx, free)).To(Succeed())
		Eventually(func() []string { return queueOf(ctx, x2) }, timeout).Should(BeEmpty(), "Y leaves x2's queue: it waits for x1")

		By("W takes x2 and measures while Y waits for x1")
		Expect(k8s.Create(ctx, w)).To(Succeed())
		finishPod(ctx, ns, "w-prep-0", corev1.PodSucceeded, "")
		Eventually(holderOf(ctx, x2), timeout).Should(Equal(ns + "/w"))
		Eventually(podExists(ctx, ns, "w-probe-dev-0"), timeout).Should(BeTrue())
		for _, bb := range []*v1alpha1.BurstBuffer{z, y, w} {
			tearDown(ctx, bb)
		}
	})

	It("takes over the lock of a burst buffer that is gone, and keeps the queue across a manager restart", func() {
		ghost := ns + "/x"
		Expect(k8s.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "beeburst-measure-" + nodes[0], Namespace: operatorNamespace,
				Labels:      map[string]string{"app.kubernetes.io/managed-by": "beeburst-operator", "app.kubernetes.io/component": "node-lock"},
				Annotations: map[string]string{"beeburst.io/node": nodes[0], "beeburst.io/holder-uid": "0000-gone"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &ghost, LeaseDurationSeconds: ptr.To(int32(120)),
				RenewTime: &metav1.MicroTime{Time: time.Now()}, AcquireTime: &metav1.MicroTime{Time: time.Now()}},
		})).To(Succeed())
		// A lease with a plausible holder that was deleted and created again: another UID.
		Expect(k8s.Create(ctx, quick("x"))).To(Succeed())
		prepared("x")
		Eventually(podExists(ctx, ns, "x-probe-dev-0"), timeout).Should(BeTrue(), "a deleted burst buffer holds no node")
		Expect(holderOf(ctx, nodes[0])()).To(Equal(ns + "/x"))

		Expect(k8s.Create(ctx, quick("y"))).To(Succeed())
		prepared("y")
		y := quick("y")
		Eventually(condition(ctx, y, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonQueuedForNode))
		stopManager()
		startManager()
		Consistently(func() bool { return podExists(ctx, ns, "y-probe-dev-0")() }, 2*time.Second).Should(BeFalse())
		Expect(condition(ctx, y, v1alpha1.ConditionComponentsMeasured)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonQueuedForNode))
		measure("x")
		Eventually(podExists(ctx, ns, "y-probe-dev-0"), timeout).Should(BeTrue())
		alone()
	})

	It("keeps a device figure for reuse only when its probe had the node to itself, and records when and how it was taken", func() {
		// Another burst buffer's workload pod runs on the first node while the probes run.
		runningWorkload(ctx, ns, "other-job", "other", nodes[0])

		bb := quick("busy")
		bb.Spec.Validation.ReuseComponentResultsFor = "1h"
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("busy")
		measure("busy")
		// The sweep ran beside the job too: its point is measured once more, the job still
		// there, and published with the warning.
		Eventually(condition(ctx, bb, v1alpha1.ConditionValidated), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring),
			HaveField("Message", ContainSubstring(ns+"/other-job"))))
		finishPod(ctx, ns, "busy-sweep-0-0-r2", corev1.PodSucceeded, idealReport(nodes[0], 1, 290e6, 390e6))
		finishPod(ctx, ns, "busy-sweep-0-1-r2", corev1.PodSucceeded, idealReport(nodes[1], 1, 290e6, 390e6))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))

		cur := get(ctx, bb)
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[0]),
			HaveField("Component", "device"), HaveField("Message", ContainSubstring(ns+"/other-job")))))
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[0]),
			HaveField("Component", "sweep"), HaveField("Message", And(ContainSubstring(ns+"/other-job"), ContainSubstring("both rounds"))))))
		// Both directions of the pair's link were probed with the job on one of their ends.
		Expect(cur.Status.Warnings).To(HaveEach(Or(Not(HaveField("Component", "network")), HaveField("Reason", Not(Equal(v1alpha1.WarningNodeBusy))),
			HaveField("Message", ContainSubstring(ns+"/other-job")))), "only the job makes a link busy")
		for _, dir := range [][2]string{{nodes[1], nodes[0]}, {nodes[0], nodes[1]}} {
			Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[0]),
				HaveField("Component", "network"), HaveField("Message", And(ContainSubstring("the link from "+dir[0]+" to "+dir[1]), ContainSubstring(ns+"/other-job"))))))
		}
		Expect(cur.Status.Warnings).NotTo(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[1]))))
		err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: nodecache.Name(nodes[0])}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a figure taken beside another workload is not cached")

		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: nodecache.Name(nodes[1])}, &cm)).To(Succeed())
		f, err := nodecache.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.MeasuredBy).To(Equal(ns + "/busy"))
		var measuredNode corev1.Node
		Expect(k8s.Get(ctx, client.ObjectKey{Name: nodes[1]}, &measuredNode)).To(Succeed())
		Expect(f.NodeUID).To(Equal(string(measuredNode.UID)), "the entry names the Node object it measured")
		Expect(f.Conditions).NotTo(BeNil())
		Expect(f.Conditions.Exclusive).To(BeTrue())
		Expect(f.Conditions.OtherPods).To(BeEmpty())
		Expect(f.Conditions.Lock).To(Equal("beeburst-measure-" + nodes[1]))
		Expect(f.Conditions.StartTime.IsZero()).To(BeFalse())
		Expect(f.Conditions.Probe).To(ContainSubstring("probe-device"))
		Expect(f.Conditions.Image).To(Equal("beeburst/agent:test"))

		By("not reusing an entry that does not say it had the node to itself (written by an older operator)")
		f.Conditions = nil
		old, err := nodecache.ConfigMap(operatorNamespace, f)
		Expect(err).NotTo(HaveOccurred())
		cm.Data = old.Data
		Expect(k8s.Update(ctx, &cm)).To(Succeed())
		next := quick("next")
		next.Spec.Validation.ReuseComponentResultsFor = "1h"
		Expect(k8s.Create(ctx, next)).To(Succeed())
		prepared("next")
		Eventually(podExists(ctx, ns, "next-probe-dev-1"), timeout).Should(BeTrue())
	})

	It("does not keep a device figure whose device moved bytes the probe did not, and says so", func() {
		// No other beeburst pod on the node: another burst buffer's BeeGFS storage service
		// there serves its clients on other nodes. Only the device's own counters show it.
		bb := quick("traffic")
		bb.Spec.Validation.ReuseComponentResultsFor = "1h"
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("traffic")
		finishPod(ctx, ns, "traffic-probe-dev-0", corev1.PodSucceeded, busyDeviceReport(nodes[0], 300e6, 400e6, 500e6))
		finishPod(ctx, ns, "traffic-probe-dev-1", corev1.PodSucceeded, busyDeviceReport(nodes[1], 300e6, 400e6, 4e6))
		Eventually(func() map[string]string { return getPod(ctx, ns, "traffic-probe-dev-0")().Annotations }, timeout).Should(
			HaveKeyWithValue("beeburst.io/conditions", ContainSubstring(`"otherTraffic":"loop1 moved 500.0 MB`)), "decided once, recorded on the probe's pod")
		// The link from node 0 to node 1 (client on node 0): its interface sent 200 MB beside
		// the probe's 354 MB, 21.2 MB of which may be its acknowledgements of the 354 MB it
		// received; the other link's sent 10 MB beside them, its own headers.
		finishNetworkReports(ctx, ns, "traffic", "", nodes, func(client string) string {
			if client == nodes[0] {
				return busyTransferReport(client, 118e6, 200e6)
			}
			return busyTransferReport(client, 118e6, 10e6)
		}, nil)
		// A link's conditions are decided once and recorded, clean ones too: a later visit (a
		// restart, a second round of the devices) does not decide again.
		Eventually(func() map[string]string { return getPod(ctx, ns, "traffic-probe-netc-1")().Annotations }, timeout).Should(
			HaveKeyWithValue("beeburst.io/conditions", And(ContainSubstring(`"exclusive":true`), Not(ContainSubstring("otherPods")),
				ContainSubstring(`"otherTraffic":"eth0 sent 178.8 MB that the probe did not (354.0 MB of its own, while it received 354.0 MB)"`))))
		Eventually(func() map[string]string { return getPod(ctx, ns, "traffic-probe-netc-0")().Annotations }, timeout).Should(
			HaveKeyWithValue("beeburst.io/conditions", And(ContainSubstring(`"exclusive":true`), Not(ContainSubstring("otherPods")), Not(ContainSubstring("otherTraffic")))))
		finishPod(ctx, ns, "traffic-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, 290e6, 390e6))
		finishPod(ctx, ns, "traffic-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 290e6, 390e6))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))

		cur := get(ctx, bb)
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[0]), HaveField("Component", "device"),
			HaveField("Message", ContainSubstring("while its device was probed, the device loop1 moved 500.0 MB that the run did not (2.1 GB of its own)")))))
		Expect(cur.Status.Warnings).NotTo(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[1]))),
			"4 MB beside the probe is the file system's own metadata and journal")
		Expect(cur.Status.Warnings).To(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Node", nodes[0]), HaveField("Component", "network"),
			HaveField("Message", ContainSubstring(fmt.Sprintf("the link from %s to %s: other work ran beside its probe (node %s: eth0 sent 178.8 MB that the probe did not (354.0 MB of its own, while it received 354.0 MB))", nodes[0], nodes[1], nodes[0]))))))
		Expect(cur.Status.Warnings).NotTo(ContainElement(And(HaveField("Reason", v1alpha1.WarningNodeBusy), HaveField("Component", "network"), HaveField("Node", nodes[1]))),
			"10 MB beside 354 MB are the probe's own headers and acknowledgements")
		Expect(cachedFigures(nodes[0])).To(BeNil(), "a figure taken beside foreign traffic is not cached")
		Expect(cachedFigures(nodes[1]).Conditions.Alone()).To(BeTrue())
	})

	It("measures a drive that never reaches its datasheet twice for the first burst buffer on it, not for every one", func() {
		// Node a's drive writes 270 MB/s of its documented 300 MB/s (90%), every time.
		first := quick("first")
		Expect(k8s.Create(ctx, first)).To(Succeed())
		prepared("first")
		measureAt("first", 270e6)
		// Nothing but the datasheet knows the drive yet: 90% of it is measured once more.
		Eventually(condition(ctx, first, v1alpha1.ConditionValidated), timeout).Should(And(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonRemeasuring),
			HaveField("Message", ContainSubstring("90% of the documented 300 MB/s"))))
		finishPod(ctx, ns, "first-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(nodes[0], 270e6, 400e6))
		finishPod(ctx, ns, "first-probe-dev-1-r2", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		Eventually(phase(ctx, first), timeout).Should(Equal(v1alpha1.PhaseReady))
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: nodecache.Name(nodes[0])}, &cm)).To(Succeed())
		f, err := nodecache.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Best).To(Equal(&nodecache.BestFigures{StoragePath: first.Spec.Storage.Path, WriteBytesPerSecond: 270e6, ReadBytesPerSecond: 400e6, Probes: 2}),
			"both rounds had the node to itself, each counted once however often a visit wrote it")

		// The next burst buffer measures the same 270 MB/s: what the drive is known to do.
		second := quick("second")
		Expect(k8s.Create(ctx, second)).To(Succeed())
		prepared("second")
		measureAt("second", 270e6)
		Eventually(phase(ctx, second), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(podExists(ctx, ns, "second-probe-dev-0-r2")()).To(BeFalse(), "a drive at its own best is not measured again")
		Expect(get(ctx, second).Status.Limits.Components.DeviceProbeRound).To(BeNumerically("<", 2))
	})
})

var _ = Describe("Terminal reasons make a burst buffer Failed", func() {
	It("SecretConflict (beegfs): Failed with a Warning event, not Provisioning forever", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		makeBeeGFSNode(ctx, ns+"-a", "10.9.0.1", map[string]string{"pool": ns})
		k := taskKey(ns, "conflict-beegfs-auth")
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace}})).To(Succeed())
		bb := beegfsBB(ns, "conflict", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		passModuleCheck(ctx, bb, 1)
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonSecretConflict))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))
		Eventually(func() []string { return eventReasons(ctx, ns, corev1.EventTypeWarning) }, timeout).Should(ContainElement(v1alpha1.ReasonSecretConflict))
	})
})

func eventReasons(ctx context.Context, ns, typ string) []string {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Type == typ {
			out = append(out, e.Reason)
		}
	}
	return out
}

var _ = Describe("Deletion always finishes or says why not", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = namespaceWithTwoNodes(ctx)
	})
	gone := func(bb *v1alpha1.BurstBuffer) func() bool {
		return func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}
	}
	readyBB := func(name string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		return bb
	}
	setHurry := func(bb *v1alpha1.BurstBuffer) {
		Eventually(func() error {
			cur := get(ctx, bb)
			cur.Spec.Teardown.Hurry = true
			return k8s.Update(ctx, cur)
		}, timeout).Should(Succeed())
	}

	It("removes nothing where spec.storage.path does not exist, as the kubelet reports it, and finishes", func() {
		bb := localBB(ns, "nopath", 1)
		bb.Spec.Storage.Path = "/mnt/missing"
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "nopath-prep-0", corev1.PodFailed, "DeadlineExceeded")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))

		start := time.Now()
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		clean := getPod(ctx, ns, "nopath-clean-0")
		Eventually(clean, timeout).ShouldNot(BeNil())
		firstUID := clean().UID
		// The kubelet's view of a hostPath volume of type Directory that does not exist.
		Expect(k8s.Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "nopath-clean-0.mount", Namespace: clean().Namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: clean().Namespace, Name: clean().Name, UID: firstUID, APIVersion: "v1"},
			Type:           corev1.EventTypeWarning, Reason: "FailedMount",
			Message: `MountVolume.SetUp failed for volume "storage" : hostPath type check failed: /mnt/missing is not a directory`,
			Source:  corev1.EventSource{Component: "kubelet", Host: ns + "-a"}, LastTimestamp: nowMeta(), FirstTimestamp: nowMeta(), Count: 1,
		})).To(Succeed())
		Eventually(gone(bb), timeout).Should(BeTrue())
		Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second), "no bound to wait for: the kubelet said why")
		Eventually(func() []string { return eventReasons(ctx, ns, corev1.EventTypeNormal) }, timeout).Should(ContainElement("NothingToRemove"))
		// Gone. In 2 of 45 runs of this spec alone (and once in CI) a read right after the burst
		// buffer was gone still found the pod, with no visit after the one that deleted it
		// (the operator's log); the cause is not known. Eventually tolerates a late view, not a
		// pod made again by a late visit: that would stay (envtest has no garbage collector)
		// and show here with another UID.
		Eventually(func() string {
			if p := clean(); p != nil {
				return fmt.Sprintf("uid %s (the first %s), deleting %v", p.UID, firstUID, p.DeletionTimestamp)
			}
			return ""
		}, timeout).Should(BeEmpty())
	})

	It("names the node and what to do when a clean pod does not start, and hurry leaves the data there and finishes", func() {
		bb := readyBB("stuck")
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "stuck-clean-0", corev1.PodSucceeded, "")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), teardownBound+timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTeardownStuck))
		msg := condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message
		Expect(msg).To(And(ContainSubstring("stuck-clean-1 on node "+ns+"-b has not started"), ContainSubstring("spec.teardown.hurry: true")))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseTearingDown))
		Eventually(func() []string { return eventReasons(ctx, ns, corev1.EventTypeWarning) }, timeout).Should(ContainElement(v1alpha1.ReasonTeardownStuck))

		setHurry(bb)
		Eventually(gone(bb), timeout).Should(BeTrue())
		Eventually(func() []string { return eventReasons(ctx, ns, corev1.EventTypeWarning) }, timeout).Should(ContainElement("DataLeftOnNode"))
	})

	It("names the node and the error when removing the data fails, retries after a pause, and hurry leaves the data there", func() {
		bb := readyBB("rmfail")
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "rmfail-clean-0", corev1.PodSucceeded, "")
		failed := getPod(ctx, ns, "rmfail-clean-1")
		Eventually(failed, timeout).ShouldNot(BeNil())
		firstUID := failed().UID
		finishPod(ctx, ns, "rmfail-clean-1", corev1.PodFailed, "rm: cannot remove 'x': Read-only file system")

		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTeardownStuck))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(
			ContainSubstring("on node "+ns+"-b failed: rm: cannot remove 'x': Read-only file system"), ContainSubstring("spec.teardown.hurry: true")))
		// The failure stays in view for the pause before the retry, not for one visit.
		Consistently(func() string { return condition(ctx, bb, v1alpha1.ConditionProvisioned)().Reason }, teardownBound/2).Should(Equal(v1alpha1.ReasonTeardownStuck))
		Eventually(func() bool { p := failed(); return p != nil && p.UID != firstUID }, teardownBound+timeout).Should(BeTrue(), "a fresh clean pod retries")

		setHurry(bb)
		finishPod(ctx, ns, "rmfail-clean-1", corev1.PodFailed, "rm: cannot remove 'x': Read-only file system")
		Eventually(gone(bb), timeout).Should(BeTrue())
		Eventually(func() []string { return eventReasons(ctx, ns, corev1.EventTypeWarning) }, timeout).Should(ContainElement("DataLeftOnNode"))
	})

	It("bounds the wait for a task pod that does not stop (its node is down); hurry deletes it without grace", func() {
		bb := localBB(ns, "down", 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "down-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "down-prep-1", corev1.PodSucceeded, "")
		Eventually(podExists(ctx, ns, "down-probe-dev-1"), timeout).Should(BeTrue())
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(deleting(ctx, ns, "down-probe-dev-1"), timeout).Should(BeTrue())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), teardownBound+timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonTeardownStuck))
		// The quick profile's ten pods (chained: all created at once) are stopped in one visit;
		// the message names as many as it holds. Their deletion times have whole seconds, and
		// the deletions can straddle one: the last ones pass the bound a second later.
		Eventually(func() string { return condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message }, timeout).Should(
			MatchRegexp(`pod [0-9a-f]{6}-down-[a-z0-9-]+ on node ` + ns + `-b has been stopping`))

		setHurry(bb)
		Eventually(podExists(ctx, ns, "down-probe-dev-1"), timeout).Should(BeFalse())
		finishPod(ctx, ns, "down-clean-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "down-clean-1", corev1.PodSucceeded, "")
		Eventually(gone(bb), timeout).Should(BeTrue())
		Eventually(holderOf(ctx, ns+"-a"), timeout).Should(BeEmpty(), "the measuring lock goes back")
	})

	It("finishes when a node is gone: nothing can be removed there", func() {
		bb := readyBB("lost")
		Expect(k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-b"}})).To(Succeed())
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "lost-clean-0", corev1.PodSucceeded, "")
		Eventually(gone(bb), timeout).Should(BeTrue())
		Expect(podExists(ctx, ns, "lost-clean-1")()).To(BeFalse())
	})
})

var _ = Describe("A copy pod that cannot be scheduled", func() {
	It("is reported with its node and what to do after a bound, keeps the data, and recovers when scheduled", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		Expect(k8s.Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "results", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		})).To(Succeed())
		bb := localBB(ns, "out", 1)
		bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "results"}}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "out-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))

		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		name := ""
		Eventually(func() bool { name = staging.PodName(get(ctx, bb), staging.Out, 0); return podExists(ctx, ns, name)() }, timeout).Should(BeTrue())
		pod := getPod(ctx, ns, name)()
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: 1 node(s) were unschedulable.", LastTransitionTime: nowMeta()}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStagingOut))
		Consistently(phase(ctx, bb), unschedulableBound/2).Should(Equal(v1alpha1.PhaseStagingOut), "within the bound it only waits")

		Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonCopyUnschedulable))
		msg := condition(ctx, bb, v1alpha1.ConditionStagedOut)().Message
		Expect(msg).To(And(ContainSubstring("for node "+ns+"-a"), ContainSubstring("were unschedulable"),
			ContainSubstring("The data stays on the nodes"), ContainSubstring("spec.teardown.hurry")))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseStageOutFailed))
		Expect(podExists(ctx, ns, "out-clean-0")()).To(BeFalse(), "the data is kept")

		pod = getPod(ctx, ns, name)()
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: nowMeta()}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionStagedOut), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStaging))
		Expect(strings.Contains(condition(ctx, bb, v1alpha1.ConditionStagedOut)().Message, "cannot be scheduled")).To(BeFalse())
	})
})
