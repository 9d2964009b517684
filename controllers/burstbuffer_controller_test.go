package controllers_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

var _ = Describe("BurstBuffer with the local engine", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = namespaceWithTwoNodes(ctx)
	})

	It("sets every condition and observedGeneration on the first visit, then becomes Ready when the nodes are prepared", func() {
		bb := localBB(ns, "scratch", 2)
		bb.Spec.Storage.CapacityPerNode = ptr.To(resource.MustParse("10Gi"))
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Finalizers).To(ContainElement(v1alpha1.Finalizer))
			g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
			for _, t := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionLimitsEstimated,
				v1alpha1.ConditionProvisioned, v1alpha1.ConditionComponentsMeasured, v1alpha1.ConditionValidated} {
				g.Expect(meta.FindStatusCondition(cur.Status.Conditions, t)).NotTo(BeNil(), "%s", t)
			}
			g.Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
			g.Expect(cur.Status.Nodes).To(HaveLen(2))
			g.Expect(cur.Status.Capacity.String()).To(Equal("20Gi"))
		}, timeout).Should(Succeed())

		// One prepare pod per node, pinned to it, in the operator's namespace, labelled as the
		// burst buffer's (no owner reference crosses namespaces).
		for i, node := range []string{ns + "-a", ns + "-b"} {
			pod := &corev1.Pod{}
			Eventually(func() error {
				return k8s.Get(ctx, podKey(ctx, ns, fmt.Sprintf("scratch-prep-%d", i)), pod)
			}, timeout).Should(Succeed())
			Expect(pod.Spec.NodeName).To(Equal(node))
			Expect(pod.Namespace).To(Equal(operatorNamespace))
			Expect(pod.OwnerReferences).To(BeEmpty())
			Expect(nodetask.BelongsTo(get(ctx, bb), pod)).To(BeTrue())
			Expect(pod.Spec.Containers[0].Args).To(Equal([]string{"--termination-log=/dev/termination-log", "dir", "create", "--path", "/host/storage/beeburst/" + ns + ".scratch"}))
			Expect(pod.Spec.Volumes[0].HostPath.Path).To(Equal("/mnt/nvme"))
			Expect(*pod.Spec.Volumes[0].HostPath.Type).To(Equal(corev1.HostPathDirectory))
		}
		finishPod(ctx, ns, "scratch-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "scratch-prep-1", corev1.PodSucceeded, "")

		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		cur := get(ctx, bb)
		Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		Expect(cur.Status.Mount.HostPath).To(Equal("/mnt/nvme/beeburst/" + ns + ".scratch"))
		Expect(cur.Status.Mount.Path).To(Equal("/mnt/beeburst"))
		Expect(cur.Status.ReadyTime).NotTo(BeNil())
		Expect(cur.Status.Nodes[0].Prepared).To(BeTrue())
	})

	It("waits for nodes with a reason, and goes on when a matching node appears", func() {
		bb := localBB(ns, "wide", 3)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhasePending))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring("2 Ready, schedulable node(s) match spec.nodes, 3 wanted"))

		makeNode(ctx, ns+"-c", map[string]string{"pool": ns})
		Eventually(func() int { return len(get(ctx, bb).Status.Nodes) }, timeout).Should(Equal(3))
	})

	It("reports a failed prepare pod with the node's name instead of hanging", func() {
		bb := localBB(ns, "nopath", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "nopath-prep-0", corev1.PodFailed, "DeadlineExceeded")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, "PrepareFailed"))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(And(ContainSubstring(ns+"-a"), ContainSubstring("spec.storage.path /mnt/nvme")))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))
	})

	It("completes the finalizer when deleted mid-phase: stops running tasks, then removes the data", func() {
		bb := localBB(ns, "midway", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "midway-prep-1"), &corev1.Pod{})
		}, timeout).Should(Succeed())
		finishPod(ctx, ns, "midway-prep-0", corev1.PodSucceeded, "")
		// Provisioning is under way (a prepare pod running) when the user deletes it: the
		// running one is stopped, the ended one kept until the burst buffer goes.
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseTearingDown))
		Eventually(deleting(ctx, ns, "midway-prep-1"), timeout).Should(BeTrue())
		Expect(deleting(ctx, ns, "midway-prep-0")()).To(BeFalse())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(And(
			haveStatus(metav1.ConditionFalse, v1alpha1.ReasonDeleting),
			WithTransform(func(c *metav1.Condition) string { return c.Message }, ContainSubstring("midway-prep-1 on node "+ns+"-b"))))
		Consistently(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "midway-clean-0"), &corev1.Pod{})
		}, 2*time.Second).ShouldNot(Succeed(), "no clean pod may race a running prepare pod")

		forceGone(ctx, ns, "midway-prep-1") // the kubelet stopped it
		finishPod(ctx, ns, "midway-clean-0", corev1.PodSucceeded, "")
		// The finalizer stays until every node is clean.
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}) }, 2*time.Second).Should(Succeed())
		finishPod(ctx, ns, "midway-clean-1", corev1.PodSucceeded, "")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, timeout).Should(BeTrue())
	})

	It("keeps the data and the object when stage-out cannot run, until the user sets hurry", func() {
		bb := localBB(ns, "keep", 1)
		bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "out"}}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "keep-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))

		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseStageOutFailed))
		Expect(condition(ctx, bb, v1alpha1.ConditionStagedOut)().Message).To(ContainSubstring("spec.teardown.hurry"))
		Consistently(func() error {
			return k8s.Get(ctx, podKey(ctx, ns, "keep-clean-0"), &corev1.Pod{})
		}, 2*time.Second).ShouldNot(Succeed(), "no data may be removed before stage-out")

		cur := get(ctx, bb)
		cur.Spec.Teardown.Hurry = true
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		finishPod(ctx, ns, "keep-clean-0", corev1.PodSucceeded, "")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, timeout).Should(BeTrue())
	})

	It("is not forgotten by an operator restart", func() {
		bb := localBB(ns, "restart", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(func() int { return len(get(ctx, bb).Status.Nodes) }, timeout).Should(Equal(1))
		Eventually(podExists(ctx, ns, "restart-prep-0"), timeout).Should(BeTrue())
		whileManagerDown(func() { finishPod(ctx, ns, "restart-prep-0", corev1.PodSucceeded, "") })
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		Expect(get(ctx, bb).Status.Nodes[0].Name).To(Equal(ns + "-a"))
	})
})

var _ = Describe("BurstBuffer with the beegfs engine", func() {
	It("fails with a reason that tells the user what to do when a node lacks the client module, not a fake Ready", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		bb := localBB(ns, "bgfs", 1)
		bb.Spec.Engine = v1alpha1.EngineBeeGFS
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		// The agent's check-module report on a node without the module.
		finishPod(ctx, ns, "bgfs-modcheck-0", corev1.PodFailed,
			`{"command":"check-module","phase":"failed","message":"kernel module missing: the beegfs kernel module is not loaded"}`)
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonClientModuleMissing))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring("engine: local"))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))
		Expect(get(ctx, bb).Status.Nodes[0].Roles).To(Equal([]string{"client", "management", "metadata", "storage"}))
		Expect(k8s.Delete(ctx, bb)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, timeout).Should(BeTrue())
	})
})

var _ = Describe("CRD validation", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace(context.Background()) })

	// Each entry is a spec fragment that can never work; the API server must reject it with
	// a message naming the field.
	DescribeTable("rejects a spec that can never work",
		func(specYAML, wantInMessage string) {
			err := k8s.Create(context.Background(), unstructuredBB(ns, "bad", specYAML))
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(wantInMessage))
		},
		Entry("stripe width over the number of targets", "nodes: {count: 2}\nlayout: {stripeWidth: 3}", "layout.stripeWidth must not exceed the number of storage targets"),
		Entry("more metadata servers than nodes", "nodes: {count: 2}\nlayout: {metadataServers: 3}", "layout.metadataServers must not exceed nodes.count"),
		Entry("zero link rate", "hardware: {clients: {link: {rateBitsPerSecond: '0'}}}", "link rateBitsPerSecond must be greater than zero"),
		Entry("negative device bandwidth", "hardware: {devices: {writeBytesPerSecond: '-3G'}}", "devices writeBytesPerSecond must be greater than zero"),
		Entry("unknown encoding", "hardware: {servers: {link: {rateBitsPerSecond: 100G, encoding: 10b/12b}}}", "spec.hardware.servers.link.encoding"),
		Entry("unknown engine", "engine: lustre", "spec.engine"),
		Entry("zero nodes", "nodes: {count: 0}", "spec.nodes.count"),
		Entry("chunk size not a power of two", "layout: {chunkSize: 100Ki}", "layout.chunkSize must be a power of two"),
		Entry("TTL policy without ttl", "teardown: {policy: AfterTTL}", "teardown.ttl is required"),
		Entry("stage-out without a claim or an object store", "stageOut: [{path: results}]", "exactly one of persistentVolumeClaim and s3 is required"),
		Entry("stage-out to a claim and an object store", "stageOut: [{persistentVolumeClaim: {claimName: x}, s3: {url: 's3://bucket/x'}}]", "exactly one of persistentVolumeClaim and s3 is required"),
		Entry("an s3 url without a bucket", "stageIn: [{s3: {url: 's3:///x'}}]", "spec.stageIn[0].s3.url"),
		Entry("an s3 url that climbs", "stageIn: [{s3: {url: 's3://bucket/a/../b'}}]", "s3.url must not contain '..'"),
		Entry("an s3 endpoint that is not a URL", "stageIn: [{s3: {url: 's3://bucket', endpoint: 'minio:9000'}}]", "spec.stageIn[0].s3.endpoint"),
		Entry("a claim path that escapes the claim", "stageOut: [{persistentVolumeClaim: {claimName: x, path: 'a/../../b'}}]", "persistentVolumeClaim.path must be relative"),
		Entry("relative storage path", "storage: {path: mnt/nvme}", "spec.storage.path"),
		Entry("sweep over more nodes than the burst buffer has", "nodes: {count: 2}\nvalidation: {sweep: {nodes: [1, 4]}}", "validation.sweep.nodes may not name more nodes than nodes.count"),
		Entry("colocated with different client and server counts", "hardware: {colocated: true, clients: {nodes: 4}, servers: {nodes: 2}}", "hardware.clients.nodes and hardware.servers.nodes must be equal"),
		Entry("unknown profile", "validation: {profile: exhaustive}", "spec.validation.profile"),
		Entry("efficiency over 100 percent", "validation: {minimumEfficiencyPercent: 120}", "spec.validation.minimumEfficiencyPercent"),
		Entry("a stage path that escapes the burst buffer", "stageIn: [{path: '../etc', persistentVolumeClaim: {claimName: x}}]", "must not contain '..'"),
	)

	It("rejects changes to immutable fields after creation", func() {
		ctx := context.Background()
		bb := localBB(ns, "immutable", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		// The operator writes the object too (finalizer): retry on conflicts, never on the
		// validation error itself.
		updateErr := func(mutate func(*v1alpha1.BurstBuffer)) func() string {
			return func() string {
				cur := get(ctx, bb)
				mutate(cur)
				err := k8s.Update(ctx, cur)
				if err == nil || apierrors.IsConflict(err) {
					return fmt.Sprint(err)
				}
				return err.Error()
			}
		}
		Eventually(updateErr(func(b *v1alpha1.BurstBuffer) { b.Spec.Engine = v1alpha1.EngineBeeGFS }), timeout).
			Should(ContainSubstring("engine is immutable"))
		Eventually(updateErr(func(b *v1alpha1.BurstBuffer) { b.Spec.Nodes.Count = 5 }), timeout).
			Should(ContainSubstring("nodes is immutable"))
	})

	It("applies defaults in the API server", func() {
		ctx := context.Background()
		bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		cur := get(ctx, bb)
		Expect(cur.Spec.Engine).To(Equal(v1alpha1.EngineBeeGFS))
		Expect(cur.Spec.Nodes.Count).To(BeZero(), "no default: spec.target may choose it; without one the operator takes 1 node")
		Expect(cur.Spec.Storage.Path).To(Equal("/mnt/nvme"))
		Expect(cur.Spec.Layout.MetadataServers).To(Equal(int32(1)))
		Expect(cur.Spec.Layout.ChunkSize.String()).To(Equal("512Ki"))
		Expect(cur.Spec.Validation.Profile).To(Equal(v1alpha1.ProfileQuick))
		Expect(cur.Spec.Validation.TimeBudget).To(Equal(v1alpha1.Duration("10m")))
		Expect(cur.Spec.Workload.MountPath).To(Equal("/mnt/beeburst"))
		Expect(cur.Spec.Teardown.Policy).To(Equal(v1alpha1.TeardownAfterWorkload))
	})

	It("accepts every sample in config/samples with kubectl apply --dry-run=server", func() {
		files, err := filepath.Glob(filepath.Join("..", "config", "samples", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		nested, err := filepath.Glob(filepath.Join("..", "config", "samples", "*", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		files = append(files, nested...)
		Expect(files).NotTo(BeEmpty())
		for _, f := range files {
			out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-n", ns, "-f", f).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s: %s", f, out)
			Expect(string(out)).To(ContainSubstring("(server dry run)"), "%s", f)
		}
	})
})
