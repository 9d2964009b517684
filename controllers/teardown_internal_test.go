package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/staging"
)

// A clean pod that had to run in the operator's namespace (the burst buffer's own refused it:
// it is being deleted) is followed like one where it belongs: its failure is shown, it stays
// for the pause, then it is deleted for a retry. The move happens only when the namespace
// refuses pods, which the fake client does not play: the moved pod exists from the start.
func TestMovedCleanPodFailureShownThenRetried(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb", UID: "u1"}}
	bb.Status.Nodes = []v1alpha1.NodeStatus{{Name: "n1"}} // no status.taskNamespace: its tasks run beside it
	key := engine.MovedKey("jobs", nodetask.Name(bb, nodetask.ComponentClean, 0), "ops")
	moved := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "task"}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "task",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "rm: cannot remove: Device or resource busy",
				StartedAt: metav1.NewTime(t0.Add(-time.Second)), FinishedAt: metav1.NewTime(t0)}}}}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	c := fakeClientWith(node, moved).Build()
	now := t0.Add(5 * time.Second)
	r := &BurstBufferReconciler{Client: c, CacheNamespace: "ops", Now: func() time.Time { return now }}
	s := &scope{bb: bb, nodes: []string{"n1"}}

	w := &teardownWait{}
	if err := r.superviseClean(context.Background(), s, w); err != nil {
		t.Fatal(err)
	}
	if len(w.stuck) != 1 || !strings.Contains(w.stuck[0], "Device or resource busy") || !strings.Contains(w.stuck[0], "node n1") {
		t.Fatalf("stuck %q: want the node and the clean pod's error", w.stuck)
	}
	if w.requeue <= 0 || w.requeue > r.cleanRetryPause() {
		t.Errorf("next look in %s, want within the retry pause %s", w.requeue, r.cleanRetryPause())
	}
	if err := c.Get(context.Background(), key, &corev1.Pod{}); err != nil {
		t.Fatalf("the failed pod is gone during the pause (%v): its failure would not be shown", err)
	}

	now = t0.Add(r.cleanRetryPause() + time.Second)
	if err := r.superviseClean(context.Background(), s, &teardownWait{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), key, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the failed pod stays after the pause (%v): nothing would retry it", err)
	}
}

// A user's pod being deleted is stuck only past the teardown bound and past its own grace
// period: one given 10 minutes to save its state is waited for, not reported stuck after 2.
// The operator's own pods are bounded by the teardown bound alone.
func TestTerminatingPodWithinItsGracePeriodIsNotStuck(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb"}}
	grace := int64(600)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "job-0",
		DeletionTimestamp: &metav1.Time{Time: t0.Add(time.Duration(grace) * time.Second)}, DeletionGracePeriodSeconds: &grace},
		Spec: corev1.PodSpec{NodeName: "n1"}}
	for _, tc := range []struct {
		after time.Duration
		stuck bool
	}{{time.Minute, false}, {5 * time.Minute, false}, {11 * time.Minute, true}} {
		now := t0.Add(tc.after)
		r := &BurstBufferReconciler{Now: func() time.Time { return now }}
		w := &teardownWait{}
		if err := r.checkTerminating(context.Background(), bb, pod, w); err != nil {
			t.Fatal(err)
		}
		if stuck := len(w.stuck) > 0; stuck != tc.stuck {
			t.Errorf("%s after the delete: stuck %v (%q), want %v", tc.after, stuck, w.stuck, tc.stuck)
		}
		if !tc.stuck && (w.requeue <= 0 || w.requeue > t0.Add(10*time.Minute).Sub(now)) {
			t.Errorf("%s after the delete: next look in %s, want by the end of its grace period", tc.after, w.requeue)
		}
	}
	// The operator's own task pod is bounded by the teardown bound alone.
	ours := pod.DeepCopy()
	ours.Labels = map[string]string{nodetask.LabelManagedBy: nodetask.ManagedBy}
	now := t0.Add(5 * time.Minute)
	r := &BurstBufferReconciler{Now: func() time.Time { return now }}
	w := &teardownWait{}
	if err := r.checkTerminating(context.Background(), bb, ours, w); err != nil || len(w.stuck) == 0 {
		t.Errorf("the operator's pod 5m after the delete: stuck %q (%v), want stuck past the 2m bound", w.stuck, err)
	}
}

// Clean pods beside copies that all succeeded are a stage-out done whose status write was
// lost, not stage-out given up by hurry; beside a copy that did not succeed, or one missing,
// stage-out was given up.
func TestStageOutGivenUpOrCopied(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb", UID: "u1"}}
	bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "results"}}}
	nodes := []string{"n1", "n2"}
	pod := func(name string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: name}, Status: corev1.PodStatus{Phase: phase}}
	}
	clean := pod(nodetask.Name(bb, nodetask.ComponentClean, 0), corev1.PodPending)
	copyPod := func(i int, phase corev1.PodPhase) *corev1.Pod {
		return pod(staging.Pod(bb, staging.Out, i, nodes[i], "img").Name, phase)
	}
	for _, tc := range []struct {
		name         string
		objs         []client.Object
		over, copied bool
	}{
		{"no clean pod", []client.Object{copyPod(0, corev1.PodRunning)}, false, false},
		{"clean pods, every copy succeeded", []client.Object{clean, copyPod(0, corev1.PodSucceeded), copyPod(1, corev1.PodSucceeded)}, false, true},
		{"clean pods, a copy still running", []client.Object{clean, copyPod(0, corev1.PodSucceeded), copyPod(1, corev1.PodRunning)}, true, false},
		{"clean pods, a copy missing", []client.Object{clean, copyPod(0, corev1.PodSucceeded)}, true, false},
	} {
		r := &BurstBufferReconciler{Client: fakeClientWith(tc.objs...).Build(), AgentImage: "img"}
		over, copied, err := r.stageOutGivenUp(context.Background(), &scope{bb: bb, nodes: nodes})
		if err != nil || over != tc.over || copied != tc.copied {
			t.Errorf("%s: over %v copied %v (%v), want %v %v", tc.name, over, copied, err, tc.over, tc.copied)
		}
	}
}
