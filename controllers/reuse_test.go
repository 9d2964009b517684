package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/sweepcache"
)

var _ = Describe("A validation reused by the next burst buffer built the same way", func() {
	var (
		ctx   context.Context
		ns    string
		nodes []string
	)
	quick := func(name string) *v1alpha1.BurstBuffer {
		bb := localBB(ns, name, 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{ProcessesPerNode: []int32{1}}
		return bb
	}
	prepared := func(name string) {
		finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
	}
	// preparedWith plays the prepare pods of name, each reporting free bytes free (nil: an
	// agent that does not say).
	preparedWith := func(name string, free *int64) {
		for i, n := range nodes {
			b, _ := json.Marshal(bench.Report{Command: "dir-create", Phase: bench.PhaseSucceeded, Node: n, FreeBytes: free,
				StartTime: time.Now().Add(-time.Second), EndTime: time.Now()})
			finishPod(ctx, ns, fmt.Sprintf("%s-prep-%d", name, i), corev1.PodSucceeded, string(b))
		}
	}
	// measured creates a quick burst buffer and plays its whole validation, its prepare pods
	// reporting free bytes free on each node (nil: nothing).
	measured := func(name string, free *int64) *v1alpha1.BurstBuffer {
		bb := quick(name)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		preparedWith(name, free)
		finishPod(ctx, ns, name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], 300e6, 400e6))
		finishPod(ctx, ns, name+"-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		finishNetwork(ctx, ns, name, nodes, 118e6)
		finishPod(ctx, ns, name+"-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, 290e6, 390e6))
		finishPod(ctx, ns, name+"-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 290e6, 390e6))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		return bb
	}
	// measuresAgain creates a quick burst buffer that does not reuse the kept validation: the
	// device probe of node i (why) runs, and Validated is not Reused.
	measuresAgain := func(name, i, why string) {
		bb := quick(name)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared(name)
		Eventually(podExists(ctx, ns, name+"-probe-dev-"+i), timeout).Should(BeTrue(), "%s", why)
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)().Reason).NotTo(Equal(v1alpha1.ReasonReused))
		tearDown(ctx, bb)
	}
	// measuresLinks creates a quick burst buffer whose links are measured (its device figures
	// may come from the nodes' cache): no kept validation stands for it.
	measuresLinks := func(name, why string) {
		bb := quick(name)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared(name)
		Eventually(podExists(ctx, ns, name+"-probe-nets-0"), timeout).Should(BeTrue(), "%s", why)
		Expect(condition(ctx, bb, v1alpha1.ConditionValidated)().Reason).NotTo(Equal(v1alpha1.ReasonReused))
		tearDown(ctx, bb)
	}
	// relabel documents node a's device write at v.
	relabel := func(v string) {
		Eventually(func() error {
			var obj corev1.Node
			if err := k8s.Get(ctx, client.ObjectKey{Name: nodes[0]}, &obj); err != nil {
				return err
			}
			obj.Labels[v1alpha1.LabelDiskWriteBytesPerSecond] = v
			return k8s.Update(ctx, &obj)
		}, timeout).Should(Succeed())
	}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		nodes = []string{ns + "-a", ns + "-b"}
		labels := map[string]string{"pool": ns, v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
		makeNode(ctx, nodes[0], labels)
		makeNode(ctx, nodes[1], labels)
	})
	AfterEach(func() { forgetFiguresOf(ctx, nodes) })

	It("takes the components and the sweep of a fresh clean validation, measures nothing, and says whose figures they are", func() {
		// Records of other configurations: one no burst buffer may reuse any more, which
		// keeping this validation prunes, and one still fresh, which stays.
		record := func(what string, age time.Duration) *corev1.ConfigMap {
			cm, err := sweepcache.ConfigMap(operatorNamespace, sweepcache.Record{
				Key: nodetask.Hash(ns + what), MeasuredBy: ns + "/" + what, MeasuredTime: metav1.NewTime(time.Now().Add(-age)),
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(k8s.Create(ctx, cm)).To(Succeed())
			return cm
		}
		expired := record("expired", sweepcache.MaxAge+time.Hour)
		other := record("other", time.Hour)
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, other))).To(Succeed()) })

		first := measured("first", nil)
		measured := get(ctx, first)
		Eventually(func() []string {
			var cms corev1.ConfigMapList
			Expect(k8s.List(ctx, &cms, client.InNamespace(operatorNamespace))).To(Succeed())
			var by []string
			for i := range cms.Items {
				if rec, err := sweepcache.FromConfigMap(&cms.Items[i]); err == nil && rec.Key != "" {
					by = append(by, rec.MeasuredBy)
				}
			}
			return by
		}, timeout).Should(ContainElement(ns+"/first"), "a clean validation is kept")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(expired), &corev1.ConfigMap{}))
		}, timeout).Should(BeTrue(), "a record older than any reuse window is pruned")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other), &corev1.ConfigMap{})).To(Succeed(), "a fresh record of another configuration stays")

		start := time.Now()
		second := quick("second")
		Expect(k8s.Create(ctx, second)).To(Succeed())
		prepared("second")
		Eventually(phase(ctx, second), timeout).Should(Equal(v1alpha1.PhaseReady))
		GinkgoWriter.Printf("the second burst buffer Ready %.1f s after create (envtest, the kubelet played)\n", time.Since(start).Seconds())
		cur := get(ctx, second)
		Expect(podsOf(ctx, ns, "second")).To(ConsistOf("second-prep-0", "second-prep-1"), "nothing measured")
		Expect(condition(ctx, second, v1alpha1.ConditionValidated)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReused))
		Expect(condition(ctx, second, v1alpha1.ConditionValidated)().Message).To(ContainSubstring(ns + "/first"))
		l := cur.Status.Limits
		Expect(l.Sweep.ReusedFrom).NotTo(BeNil())
		Expect(l.Sweep.ReusedFrom.BurstBuffer).To(Equal(ns + "/first"))
		Expect(l.Monitoring).NotTo(BeNil(), "stage 4's per-node figures are reused too")
		Expect(l.Monitoring.ReusedFrom).To(Equal(l.Sweep.ReusedFrom), "and say so")
		Expect(l.Components.ReusedFrom.MeasuredTime.Time).To(BeTemporally("~", measured.Status.ValidationEndTime.Time, time.Second))
		Expect(l.Sweep.Write.BestBytesPerSecond).To(Equal(measured.Status.Limits.Sweep.Write.BestBytesPerSecond))
		Expect(l.Components.Write.LimitBytesPerSecond).To(Equal(measured.Status.Limits.Components.Write.LimitBytesPerSecond))
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: l.Sweep.ConfigMapName}, &cm)).To(Succeed())
		Expect(cm.Data["sweep.csv"]).To(ContainSubstring("2,1,write,"))
		Expect(cur.Status.Summary.WriteMeasured).NotTo(BeEmpty(), "kubectl get bb shows the reused figure")

		By("a node whose device figures a second look doubted since: the kept validation is not reused")
		setDoubted := func(why string) {
			f := cachedEntry(ctx, nodes[0])
			f.Doubted = why
			want, err := nodecache.ConfigMap(operatorNamespace, f)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() error {
				var cm corev1.ConfigMap
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(want), &cm); err != nil {
					return err
				}
				cm.Data = want.Data
				return k8s.Update(ctx, &cm)
			}, timeout).Should(Succeed())
		}
		setDoubted("burst buffer " + ns + "/other measured the devices again: the sweep read above them")
		measuresAgain("doubted", "0", "the doubted device is measured again")
		setDoubted("")

		By("a node relabelled with other documented figures: the kept validation, judged by the old ones, is not reused")
		relabel("250M")
		measuresLinks("relabelled", "the links are measured: no kept validation stands for these labels")
		relabel("300M")

		By("validation.reuseSweep false measures again")
		off := false
		third := quick("third")
		third.Spec.Validation.ReuseSweep = &off
		Expect(k8s.Create(ctx, third)).To(Succeed())
		prepared("third")
		Eventually(podExists(ctx, ns, "third-probe-nets-0"), timeout).Should(BeTrue())
		Expect(get(ctx, third).Status.Limits.Sweep).To(BeNil())
		for _, bb := range []*v1alpha1.BurstBuffer{first, second, third} {
			tearDown(ctx, bb)
		}

		By("a machine registered again under a node's name is another node: its figures are measured, the sweep too")
		var replaced corev1.Node
		Expect(k8s.Get(ctx, client.ObjectKey{Name: nodes[1]}, &replaced)).To(Succeed())
		Expect(k8s.Delete(ctx, &replaced)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Name: nodes[1]}, &corev1.Node{}))
		}, timeout).Should(BeTrue())
		makeNode(ctx, nodes[1], replaced.Labels)
		// The kept validation of the first two burst buffers' nodes is not this one's: it
		// measures (the second, on the same Node objects, measured nothing).
		measuresAgain("fourth", "1", "the new machine's device is probed")
	})

	It("keeps no validation whose node was relabelled while it measured", func() {
		bb := quick("moved")
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		prepared("moved")
		finishPod(ctx, ns, "moved-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], 300e6, 400e6))
		finishPod(ctx, ns, "moved-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		finishNetwork(ctx, ns, "moved", nodes, 118e6)
		Eventually(condition(ctx, bb, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMeasured))

		By("node a documented at 250 MB/s once stage 2 judged it by 300 MB/s")
		relabel("250M")
		// Label changes wake no visit: the sweep ends once the manager's cache has them.
		Eventually(func() string {
			var obj corev1.Node
			Expect(mgrClient.Get(ctx, client.ObjectKey{Name: nodes[0]}, &obj)).To(Succeed())
			return obj.Labels[v1alpha1.LabelDiskWriteBytesPerSecond]
		}, timeout).Should(Equal("250M"))
		finishPod(ctx, ns, "moved-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, 290e6, 390e6))
		finishPod(ctx, ns, "moved-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 290e6, 390e6))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(get(ctx, bb).Status.Limits.Components.Nodes[0].DeviceWrite.DocumentedBytesPerSecond).To(HaveValue(BeEquivalentTo(300e6)),
			"stage 2 was judged by the labels it saw")
		// The visit that ends the validation keeps it, if at all, before it writes Ready.
		var cms corev1.ConfigMapList
		Expect(k8s.List(ctx, &cms, client.InNamespace(operatorNamespace))).To(Succeed())
		for i := range cms.Items {
			if rec, err := sweepcache.FromConfigMap(&cms.Items[i]); err == nil {
				Expect(rec.MeasuredBy).NotTo(Equal(ns+"/moved"), "no record is kept of a validation whose node was relabelled")
			}
		}

		By("the next burst buffer on the relabelled nodes measures: no kept validation stands for these labels")
		measuresLinks("next", "the links are measured, not reused")
		tearDown(ctx, bb)
	})

	It("holds a reused validation's capacity to the space free now, as the prepare pods found it", func() {
		first := measured("first", new(int64(4<<30)))
		Expect(get(ctx, first).Status.Capacity.String()).To(Equal("8Gi"))

		By("the first burst buffer's job filled most of the disks: the next one reuses its figures, not its free space")
		second := quick("second")
		Expect(k8s.Create(ctx, second)).To(Succeed())
		preparedWith("second", new(int64(1<<30)))
		Eventually(phase(ctx, second), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(condition(ctx, second, v1alpha1.ConditionValidated)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReused))
		Expect(get(ctx, second).Status.Capacity.String()).To(Equal("2Gi"), "the space free for it, not the source's 8Gi")

		By("a capacity that fitted then but not now is refused, not reused")
		third := quick("third")
		third.Spec.Storage.CapacityPerNode = ptr.To(resource.MustParse("2Gi"))
		Expect(k8s.Create(ctx, third)).To(Succeed())
		preparedWith("third", new(int64(1<<30)))
		Eventually(condition(ctx, third, v1alpha1.ConditionComponentsMeasured), timeout).Should(And(
			haveStatus(metav1.ConditionFalse, v1alpha1.ReasonInsufficientCapacity),
			HaveField("Message", And(ContainSubstring("has 1Gi free"), ContainSubstring("when its directory was made")))))
		Expect(phase(ctx, third)()).To(Equal(v1alpha1.PhaseFailed))
		Expect(podsOf(ctx, ns, "third")).To(ConsistOf("third-prep-0", "third-prep-1"), "refused before anything is measured")
		for _, bb := range []*v1alpha1.BurstBuffer{first, second, third} {
			tearDown(ctx, bb)
		}
	})

	It("holds reused device figures to the space free now, and a burst buffer without validation too", func() {
		// Links documented: a device figure is reused without a probe reading the link.
		for _, n := range nodes {
			var node corev1.Node
			Expect(k8s.Get(ctx, client.ObjectKey{Name: n}, &node)).To(Succeed())
			node.Labels[v1alpha1.LabelLinkRateBitsPerSecond] = "1G"
			Expect(k8s.Update(ctx, &node)).To(Succeed())
		}
		first := measured("first", new(int64(4<<30)))

		By("the devices' figures reused, the sweep measured: the capacity is the space free for it")
		off := false
		second := quick("second")
		second.Spec.Validation.ReuseSweep = &off
		Expect(k8s.Create(ctx, second)).To(Succeed())
		preparedWith("second", new(int64(1<<30)))
		Eventually(condition(ctx, second, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProbing))
		finishNetwork(ctx, ns, "second", nodes, 118e6)
		Eventually(condition(ctx, second, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReused))
		Expect(podExists(ctx, ns, "second-probe-dev-0")()).To(BeFalse(), "the device figures are reused")
		Expect(get(ctx, second).Status.Capacity.String()).To(Equal("2Gi"), "the space free for it, not the 8Gi the first one's probes saw")

		By("validation.profile none: nothing probes, the prepare pods hold the capacity asked for and show the space free")
		none := localBB(ns, "none", 2)
		none.Spec.Validation.Profile = v1alpha1.ProfileNone
		none.Spec.Storage.CapacityPerNode = ptr.To(resource.MustParse("2Gi"))
		Expect(k8s.Create(ctx, none)).To(Succeed())
		preparedWith("none", new(int64(1<<30)))
		Eventually(condition(ctx, none, v1alpha1.ConditionComponentsMeasured), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonInsufficientCapacity))
		Eventually(phase(ctx, none), timeout).Should(Equal(v1alpha1.PhaseFailed))
		shown := localBB(ns, "shown", 2)
		shown.Spec.Validation.Profile = v1alpha1.ProfileNone
		Expect(k8s.Create(ctx, shown)).To(Succeed())
		preparedWith("shown", new(int64(1<<30)))
		Eventually(phase(ctx, shown), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(get(ctx, shown).Status.Capacity.String()).To(Equal("2Gi"))
		for _, bb := range []*v1alpha1.BurstBuffer{first, second, none, shown} {
			tearDown(ctx, bb)
		}
	})
	It("refuses nodes whose storage path has no space free, whether or not a capacity was asked for", func() {
		full := quick("full")
		Expect(k8s.Create(ctx, full)).To(Succeed())
		preparedWith("full", new(int64(0)))
		Eventually(condition(ctx, full, v1alpha1.ConditionComponentsMeasured), timeout).Should(SatisfyAll(
			haveStatus(metav1.ConditionFalse, v1alpha1.ReasonInsufficientCapacity),
			WithTransform(func(c *metav1.Condition) string { return c.Message }, Equal(fmt.Sprintf(
				"no space to write: node %s has no space free, node %s has no space free at spec.storage.path /mnt/nvme (when its directory was made). "+
					"Create a new BurstBuffer on nodes with free space, or once space was freed there", nodes[0], nodes[1])))))
		Eventually(phase(ctx, full), timeout).Should(Equal(v1alpha1.PhaseFailed))
		Expect(podExists(ctx, ns, "full-probe-dev-0")()).To(BeFalse(), "nothing is measured on a full node")
		tearDown(ctx, full)
	})
})
