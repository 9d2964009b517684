package controllers_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/staging"
)

// failBound is how long after the kubelet (or the scheduler) said it a state that can never
// work must be in the status.
const failBound = 10 * time.Second

// kubeletWaits plays the kubelet for a pod whose container does not start: it waits with
// reason and message. It returns when the kubelet said so.
func kubeletWaits(ctx context.Context, ns, name, reason, message string) time.Time {
	pod := &corev1.Pod{}
	Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, name), pod) }, timeout).Should(Succeed())
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}}
	Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
	return time.Now()
}

// kubeletSays plays the kubelet's event about a pod (core/v1, as the kubelet records them).
func kubeletSays(ctx context.Context, ns, name, reason, message string) time.Time {
	pod := &corev1.Pod{}
	Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, name), pod) }, timeout).Should(Succeed())
	Expect(k8s.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: message,
		Source: corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName}, LastTimestamp: nowMeta(), FirstTimestamp: nowMeta(), Count: 1,
	})).To(Succeed())
	return time.Now()
}

// hostPathMissing plays the kubelet for a pod whose hostPath volume does not exist on its
// node: ContainerCreating, and the event that says why (the only place it is said).
func hostPathMissing(ctx context.Context, ns, name, volume, path string) time.Time {
	kubeletWaits(ctx, ns, name, "ContainerCreating", "")
	return kubeletSays(ctx, ns, name, "FailedMount",
		fmt.Sprintf("MountVolume.SetUp failed for volume %q : hostPath type check failed: %s is not a directory", volume, path))
}

// The kubelet's and the registry's words for an image that does not exist.
const imageNotFound = `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/beeburst/agent:test": failed to resolve reference "docker.io/beeburst/agent:test": docker.io/beeburst/agent:test: not found`

// Every state of a task pod that can never work is in the status within failBound of the
// kubelet (or the scheduler) saying so: the table plays each and measures.
var _ = Describe("Failures in seconds", Ordered, ContinueOnFailure, func() {
	var (
		ctx   context.Context
		mu    sync.Mutex
		table []string
	)
	BeforeAll(func() { ctx = context.Background() })
	AfterAll(func() {
		sort.Strings(table)
		report := "state that can never work -> condition: seconds from the kubelet's word to the status (bound " + failBound.String() + ")\n  " + strings.Join(table, "\n  ")
		AddReportEntry("failures in seconds", report)
		fmt.Fprintln(GinkgoWriter, report)
	})

	// within waits for the condition and records how long it took after the kubelet knew.
	within := func(what string, bb *v1alpha1.BurstBuffer, typ string, knew time.Time, status metav1.ConditionStatus, reason string) *metav1.Condition {
		var c *metav1.Condition
		Eventually(func(g Gomega) {
			c = condition(ctx, bb, typ)()
			g.Expect(c).To(haveStatus(status, reason))
		}, failBound, 50*time.Millisecond).Should(Succeed(), "%s: %s %s within %s", what, typ, reason, failBound)
		took := time.Since(knew)
		mu.Lock()
		table = append(table, fmt.Sprintf("%-58s %s=%s %-20s %4.1f s", what, typ, status, reason, took.Seconds()))
		mu.Unlock()
		GinkgoWriter.Printf("%s: %s %s after %.1f s: %s\n", what, typ, reason, took.Seconds(), c.Message)
		return c
	}

	It("spec.storage.path missing on the nodes (local engine): StoragePathMissing naming both nodes, Failed", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "nopath", 2)
		bb.Spec.Storage.Path = "/mnt/missing"
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		hostPathMissing(ctx, ns, "nopath-prep-0", "storage", "/mnt/missing")
		knew := hostPathMissing(ctx, ns, "nopath-prep-1", "storage", "/mnt/missing")
		within("local: spec.storage.path missing", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonStoragePathMissing)
		// A visit between the two kubelets' words names the first node only; the second is
		// added when its pod's events are read again (startRecheck), within the same bound.
		Eventually(func() string { return condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message }, failBound, 50*time.Millisecond).
			Should(And(HavePrefix("spec.storage.path /mnt/missing does not exist on node(s) "+ns+"-a, "+ns+"-b"),
				ContainSubstring("hostPath type check failed"), ContainSubstring("create the directory on the node")))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))
		Expect(condition(ctx, bb, v1alpha1.ConditionStalled)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonStoragePathMissing))
		Eventually(warningEvents(ctx, ns, "nopath", v1alpha1.ReasonStoragePathMissing), timeout).ShouldNot(BeEmpty())

		// Its deadline ends the prepare pod later: the reason stays the one that says why.
		finishPod(ctx, ns, "nopath-prep-0", corev1.PodFailed, "DeadlineExceeded")
		Consistently(condition(ctx, bb, v1alpha1.ConditionProvisioned), 2*time.Second).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonStoragePathMissing))
		tearDown(ctx, bb)
	})

	It("an agent image the registry does not have (ErrImagePull): ImagePullFailed naming the node, the image and the fix", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "noimage", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		kubeletWaits(ctx, ns, "noimage-prep-1", "ContainerCreating", "")
		knew := kubeletWaits(ctx, ns, "noimage-prep-0", "ErrImagePull", imageNotFound)
		c := within("local: agent image not found (ErrImagePull)", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonImagePullFailed)
		Expect(c.Message).To(And(ContainSubstring("image beeburst/agent:test cannot be pulled on node(s) "+ns+"-a"), ContainSubstring("not found"),
			ContainSubstring("Helm value agentImage")))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseFailed))
		tearDown(ctx, bb)
	})

	It("an image pull refused, then let through (the registry's access fixed): the burst buffer goes on", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "pullfixed", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		knew := kubeletWaits(ctx, ns, "pullfixed-prep-0", "ErrImagePull", imageNotFound)
		within("local: agent image refused", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonImagePullFailed)
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring("the burst buffer goes on if the pull succeeds"))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseFailed))

		finishPod(ctx, ns, "pullfixed-prep-0", corev1.PodSucceeded, "")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady), "the kubelet's next pull passed: nothing to recreate")
		tearDown(ctx, bb)
	})

	It("an image pull in back-off, its cause in the kubelet's events only: ImagePullFailed", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "backoff", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		kubeletSays(ctx, ns, "backoff-prep-0", "Failed", `Failed to pull image "beeburst/agent:test": `+imageNotFound)
		knew := kubeletWaits(ctx, ns, "backoff-prep-0", "ImagePullBackOff", `Back-off pulling image "beeburst/agent:test"`)
		c := within("local: agent image not found (ImagePullBackOff)", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonImagePullFailed)
		Expect(c.Message).To(ContainSubstring("Failed to pull image"))
		tearDown(ctx, bb)
	})

	It("an image pull that may pass (a timeout) is said in the progress, not failed", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "slowpull", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		kubeletWaits(ctx, ns, "slowpull-prep-0", "ErrImagePull", `failed to do request: Head "https://registry-1.docker.io/v2/beeburst/agent/manifests/test": dial tcp 1.2.3.4:443: i/o timeout`)
		Eventually(func() string {
			if c := condition(ctx, bb, v1alpha1.ConditionProvisioned)(); c != nil {
				return c.Message
			}
			return ""
		}, failBound).Should(
			ContainSubstring("pulling image beeburst/agent:test: ErrImagePull: failed to do request"))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonProvisioning))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseProvisioning))
		tearDown(ctx, bb)
	})

	It("an invalid image name: ImagePullFailed", func() {
		ns := namespaceWithTwoNodes(ctx)
		bb := localBB(ns, "badname", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		knew := kubeletWaits(ctx, ns, "badname-prep-0", "InvalidImageName", `Failed to apply default image tag "beeburst/agent:test": couldn't parse image reference`)
		within("local: invalid image name (InvalidImageName)", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonImagePullFailed)
		tearDown(ctx, bb)
	})

	It("spec.storage.path missing (beegfs engine): StoragePathMissing at the module check, before any service starts", func() {
		ns := newNamespace(ctx)
		makeBeeGFSNode(ctx, ns+"-a", "10.214.2.1", map[string]string{"pool": ns})
		makeBeeGFSNode(ctx, ns+"-b", "10.214.2.2", map[string]string{"pool": ns})
		bb := beegfsBB(ns, "modpath", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "modpath-modcheck-0", corev1.PodSucceeded, `{"command":"check-module","phase":"succeeded","freeBytes":1073741824}`)
		knew := hostPathMissing(ctx, ns, "modpath-modcheck-1", "storage", "/mnt/nvme")
		c := within("beegfs: spec.storage.path missing (module check)", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonStoragePathMissing)
		Expect(c.Message).To(And(HavePrefix("spec.storage.path /mnt/nvme does not exist on node(s) "+ns+"-b"), ContainSubstring("modpath-modcheck-1")))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseFailed))
		Expect(podExists(ctx, ns, "modpath-mgmtd-0")()).To(BeFalse(), "nothing starts before every module check passed")
		tearDown(ctx, bb)
	})

	It("spec.storage.path missing where a BeeGFS storage service runs: StoragePathMissing, though the service has no deadline", func() {
		ns := newNamespace(ctx)
		makeBeeGFSNode(ctx, ns+"-a", "10.214.0.1", map[string]string{"pool": ns})
		makeBeeGFSNode(ctx, ns+"-b", "10.214.0.2", map[string]string{"pool": ns})
		bb := beegfsBB(ns, "svcpath", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		passModuleCheck(ctx, bb, 2)
		runPod(ctx, ns, "svcpath-mgmtd-0")
		runPod(ctx, ns, "svcpath-meta-0")
		runPod(ctx, ns, "svcpath-storage-0")
		knew := hostPathMissing(ctx, ns, "svcpath-storage-1", "storage", "/mnt/nvme")
		c := within("beegfs: spec.storage.path missing (storage service)", bb, v1alpha1.ConditionProvisioned, knew, metav1.ConditionFalse, v1alpha1.ReasonStoragePathMissing)
		Expect(c.Message).To(And(HavePrefix("spec.storage.path /mnt/nvme does not exist on node(s) "+ns+"-b"), ContainSubstring("svcpath-storage-1")))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseFailed))
		tearDown(ctx, bb)
	})

	It("a BeeGFS service the kubelet refuses (its host port taken): PodCannotStart with the kubelet's reason", func() {
		ns := newNamespace(ctx)
		makeBeeGFSNode(ctx, ns+"-a", "10.214.1.1", map[string]string{"pool": ns})
		bb := beegfsBB(ns, "ports", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		passModuleCheck(ctx, bb, 1)
		pod := getPod(ctx, ns, "ports-mgmtd-0")
		Eventually(pod, timeout).ShouldNot(BeNil())
		p := pod()
		p.Status.Phase, p.Status.Reason = corev1.PodFailed, "NodePorts"
		p.Status.Message = "Pod was rejected: node(s) didn't have free ports for the requested pod ports"
		Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		c := within("beegfs: a service refused by the kubelet (NodePorts)", bb, v1alpha1.ConditionProvisioned, time.Now(), metav1.ConditionFalse, v1alpha1.ReasonPodCannotStart)
		Expect(c.Message).To(And(ContainSubstring("the kubelet refused pods on node(s) "+ns+"-a"), ContainSubstring("NodePorts"), ContainSubstring("free what the kubelet names")))
		tearDown(ctx, bb)
	})

	It("a measuring pod that cannot start: ProbeFailed naming the node, validation ends, Degraded", func() {
		ns := namespaceWithTwoNodes(ctx)
		nodes := []string{ns + "-a", ns + "-b"}
		forgetFiguresOf(ctx, nodes)
		bb := quickPrepared(ctx, ns, "probeimg")
		knew := kubeletWaits(ctx, ns, "probeimg-probe-dev-1", "ErrImagePull", imageNotFound)
		c := within("measuring: device probe image not found", bb, v1alpha1.ConditionComponentsMeasured, knew, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed)
		Expect(c.Message).To(And(ContainSubstring("node "+nodes[1]+" cannot pull image beeburst/agent:test"), ContainSubstring("probeimg-probe-dev-1")))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseDegraded))
		Eventually(deleting(ctx, ns, "probeimg-probe-dev-1"), timeout).Should(BeTrue(), "validation ended: the pods that wait go")
		tearDownWithTasks(ctx, bb)
	})

	It("validation.compareWith.nodeLocal.path missing: ComparePathMissing naming the nodes, the pods go, Ready at once", func() {
		ns := newNamespace(ctx)
		nodes := []string{ns + "-a", ns + "-b"}
		for _, n := range nodes {
			makeNode(ctx, n, map[string]string{"pool": ns, v1alpha1.LabelLinkRateBitsPerSecond: "1G",
				v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"})
		}
		forgetFiguresOf(ctx, nodes)
		bb := localBB(ns, "nocmp", 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.CompareWith = &v1alpha1.CompareWithSpec{NodeLocal: &v1alpha1.NodeLocalComparison{Path: "/scratch/none"}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "nocmp-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "nocmp-prep-1", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "nocmp-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], 300e6, 400e6))
		finishPod(ctx, ns, "nocmp-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		finishNetwork(ctx, ns, "nocmp", nodes, 118e6)
		finishPod(ctx, ns, "nocmp-sweep-0-0", corev1.PodSucceeded, idealReport(nodes[0], 1, 200e6, 300e6))
		finishPod(ctx, ns, "nocmp-sweep-0-1", corev1.PodSucceeded, idealReport(nodes[1], 1, 200e6, 300e6))
		finishPod(ctx, ns, "nocmp-sweep-1-0", corev1.PodSucceeded, idealReport(nodes[0], 4, 290e6, 390e6))
		finishPod(ctx, ns, "nocmp-sweep-1-1", corev1.PodSucceeded, idealReport(nodes[1], 4, 290e6, 390e6))
		hostPathMissing(ctx, ns, "nocmp-compare-0-0", "compare", "/scratch/none")
		knew := hostPathMissing(ctx, ns, "nocmp-compare-0-1", "compare", "/scratch/none")
		c := within("compareWith: nodeLocal.path missing", bb, v1alpha1.ConditionCompared, knew, metav1.ConditionFalse, v1alpha1.ReasonComparePathMissing)
		Expect(c.Message).To(And(HavePrefix("validation.compareWith.nodeLocal.path /scratch/none does not exist on node(s) "+nodes[0]+", "+nodes[1]),
			ContainSubstring("the operator never creates it")))
		Eventually(phase(ctx, bb), failBound).Should(Equal(v1alpha1.PhaseReady), "a comparison never holds up Ready")
		GinkgoWriter.Printf("compareWith: Ready %.1f s after the kubelet's word\n", time.Since(knew).Seconds())
		for _, p := range []string{"nocmp-compare-0-0", "nocmp-compare-0-1"} {
			Eventually(deleting(ctx, ns, p), timeout).Should(BeTrue(), "%s goes: it would hold the nodes", p)
		}
		Expect(get(ctx, bb).Status.Comparison.Operations[0].OtherBytesPerSecond).To(BeNil())
		tearDownWithTasks(ctx, bb)
	})

	It("a comparison claim whose volume is bound where the node is not: ClaimNotMountable at once, not after the bound", func() {
		ns := newNamespace(ctx)
		nodes := []string{ns + "-a", ns + "-b"}
		for _, n := range nodes {
			makeNode(ctx, n, map[string]string{"pool": ns, v1alpha1.LabelLinkRateBitsPerSecond: "1G",
				v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"})
		}
		forgetFiguresOf(ctx, nodes)
		Expect(k8s.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "zonal"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceMust("10Gi")}}}})).To(Succeed())
		bb := localBB(ns, "zonal", 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
		bb.Spec.Validation.CompareWith = &v1alpha1.CompareWithSpec{PersistentVolumeClaim: &v1alpha1.PVCSource{ClaimName: "zonal"}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "zonal-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "zonal-prep-1", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "zonal-probe-dev-0", corev1.PodSucceeded, deviceReport(nodes[0], 300e6, 400e6))
		finishPod(ctx, ns, "zonal-probe-dev-1", corev1.PodSucceeded, deviceReport(nodes[1], 300e6, 400e6))
		finishNetwork(ctx, ns, "zonal", nodes, 118e6)
		for k, procs := range []int{1, 4} {
			for i := range nodes {
				finishPod(ctx, ns, fmt.Sprintf("zonal-sweep-%d-%d", k, i), corev1.PodSucceeded, idealReport(nodes[i], procs, 290e6, 390e6))
			}
		}
		pod := getPod(ctx, ns, "zonal-compare-0-1")
		Eventually(pod, timeout).ShouldNot(BeNil())
		p := pod()
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/3 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector.", LastTransitionTime: nowMeta()}}
		Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		c := within("compareWith: claim unschedulable (volume elsewhere)", bb, v1alpha1.ConditionCompared, time.Now(), metav1.ConditionFalse, v1alpha1.ReasonClaimNotMountable)
		Expect(c.Message).To(And(ContainSubstring("zonal-compare-0-1 for node "+nodes[1]+", which it can never be scheduled on as it is"),
			ContainSubstring("volume node affinity conflict")))
		Eventually(phase(ctx, bb), failBound).Should(Equal(v1alpha1.PhaseReady))
		tearDownWithTasks(ctx, bb)
	})

	It("a stage-in copy whose claim's volume is bound where the node is not: CopyUnschedulable at once", func() {
		ns := namespaceWithTwoNodes(ctx)
		Expect(k8s.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "datasets"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceMust("1Gi")}}}})).To(Succeed())
		bb := localBB(ns, "copyzone", 2)
		bb.Spec.StageIn = []v1alpha1.StageSpec{{Path: "input", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "datasets"}}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "copyzone-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "copyzone-prep-1", corev1.PodSucceeded, "")
		var name string
		Eventually(func() string { name = staging.PodName(get(ctx, bb), staging.In, 0); return name }, timeout).ShouldNot(BeEmpty())
		pod := getPod(ctx, ns, name)
		Eventually(pod, timeout).ShouldNot(BeNil())
		p := pod()
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/3 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector.", LastTransitionTime: nowMeta()}}
		Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		c := within("stage-in: copy unschedulable (volume elsewhere)", bb, v1alpha1.ConditionStagedIn, time.Now(), metav1.ConditionFalse, v1alpha1.ReasonCopyUnschedulable)
		Expect(c.Message).To(ContainSubstring(name + " for node " + ns + "-a, which it can never be scheduled on as it is"))
		tearDown(ctx, bb)
	})
})
