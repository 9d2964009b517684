package controllers_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// podRuns plays the kubelet for a long-running pod whose container runs (started at started,
// after restarts), Ready or not since changed: a readiness probe that fails while the daemon
// runs changed it after the start; a restarted container is not Ready since before its start.
func podRuns(ctx context.Context, ns, name string, ready bool, restarts int32, started, changed time.Time) {
	Eventually(func() error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, podKey(ctx, ns, name), pod); err != nil {
			return err
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(changed)}}
		cs := corev1.ContainerStatus{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Ready: ready, RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}
		if restarts > 0 {
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: "mount lost: it went away",
				FinishedAt: metav1.NewTime(started.Add(-time.Second))}
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		return k8s.Status().Update(ctx, pod)
	}, timeout).Should(Succeed())
}

// podExits plays the kubelet for a long-running pod whose container exited: waiting to be
// restarted, its last words kept.
func podExits(ctx context.Context, ns, name string, code int32, message string) {
	Eventually(func() error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, podKey(ctx, ns, name), pod); err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: nowMeta()}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, RestartCount: 1,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message, FinishedAt: nowMeta()}}}}
		return k8s.Status().Update(ctx, pod)
	}, timeout).Should(Succeed())
}

// A service or client that is busy is not a file system that went away: the phase goes back
// from Measuring or Ready only when a component is gone, and says which.
var _ = Describe("No flapping: a busy BeeGFS is not a lost one", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		makeBeeGFSNode(ctx, ns+"-a", "10.215.0.1", map[string]string{"pool": ns})
		makeBeeGFSNode(ctx, ns+"-b", "10.215.0.2", map[string]string{"pool": ns})
	})
	stays := func(bb *v1alpha1.BurstBuffer, want v1alpha1.Phase) {
		Consistently(func(g Gomega) {
			g.Expect(phase(ctx, bb)()).To(Equal(want))
			g.Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonProvisioned))
			g.Expect(condition(ctx, bb, v1alpha1.ConditionClientsMounted)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMounted))
		}, 3*time.Second, 100*time.Millisecond).Should(Succeed())
	}

	It("keeps Measuring while a client's and a service's readiness fail with their containers running; goes back with MountLost when a client exits, and forward when it is back", func() {
		bb, nodes := quickBeeGFS(ctx, ns, "busy")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseMeasuring))
		before := time.Now().Add(-time.Minute)

		// The benchmarks load the nodes: the exec probe times out, the TCP probe too.
		podRuns(ctx, ns, "busy-client-0", false, 0, before, time.Now())
		podRuns(ctx, ns, "busy-storage-1", false, 0, before, time.Now())
		stays(bb, v1alpha1.PhaseMeasuring)

		// The mount really goes: the client's container exits with its reason.
		podExits(ctx, ns, "busy-client-0", 1, "mount lost: /run/beeburst/"+ns+".busy is no longer mounted")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonMountLost))
		c := condition(ctx, bb, v1alpha1.ConditionProvisioned)()
		Expect(c.Message).To(And(ContainSubstring("node "+nodes[0]+": its client is not running (CrashLoopBackOff)"), ContainSubstring("mount lost")))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseProvisioning))
		Expect(condition(ctx, bb, v1alpha1.ConditionReady)()).To(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonMountLost))
		Expect(condition(ctx, bb, v1alpha1.ConditionReconciling)()).To(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonMountLost))
		Eventually(warningEvents(ctx, ns, "busy", v1alpha1.ReasonMountLost), timeout).ShouldNot(BeEmpty())

		// Restarted and mounting again: still lost until it is Ready, with the reason kept.
		podRuns(ctx, ns, "busy-client-0", false, 1, time.Now(), time.Now().Add(-2*time.Second))
		Consistently(condition(ctx, bb, v1alpha1.ConditionProvisioned), 2*time.Second).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonMountLost))
		podRuns(ctx, ns, "busy-client-0", true, 1, time.Now().Add(-time.Second), time.Now())
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonProvisioned))
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseMeasuring))
		tearDownWithTasks(ctx, bb)
	})

	It("keeps Ready while a client is not Ready but runs; goes back with ServiceExited when a service's pod is deleted, and is Ready again when its new pod is", func() {
		bb := beegfsBB(ns, "steady", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		provisionBeeGFS(ctx, bb, 2)
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))

		podRuns(ctx, ns, "steady-client-1", false, 0, time.Now().Add(-time.Minute), time.Now())
		stays(bb, v1alpha1.PhaseReady)
		// A restart long ago (Ready since) is no loss either.
		podRuns(ctx, ns, "steady-meta-0", false, 3, time.Now().Add(-time.Hour), time.Now())
		stays(bb, v1alpha1.PhaseReady)

		old := getPod(ctx, ns, "steady-storage-1")()
		forceGone(ctx, ns, "steady-storage-1")
		Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonServiceExited))
		Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring("the storage service on node " + ns + "-b "))
		Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseProvisioning))
		Eventually(func() bool { p := getPod(ctx, ns, "steady-storage-1")(); return p != nil && p.UID != old.UID }, timeout).Should(BeTrue(), "made again")
		Consistently(phase(ctx, bb), 2*time.Second).Should(Equal(v1alpha1.PhaseProvisioning), "not back before the new pod is Ready")

		runPod(ctx, ns, "steady-storage-1")
		Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
		tearDown(ctx, bb)
	})
})
