package engine

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// A failed clean pod stays, where it belongs and where it had to move alike: the controller
// shows its failure, then deletes it for a retry (it looks in the fallback namespace too). The
// move itself happens when the burst buffer's namespace refuses pods (it is being deleted),
// which the fake client does not play: the moved pod exists from the start.
func TestRemoveNodeDataFailedPods(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	failed := corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "task",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "rm: cannot remove"}}}}}
	clean := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "task"}}}}
	}
	here, there := clean("jobs", "bb-clean-0"), clean("jobs", "bb-clean-1")
	moved := elsewhere(there, "ops")
	heldHere, heldThere := here.DeepCopy(), moved.DeepCopy()
	heldHere.Status, heldThere.Status = failed, failed
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(heldHere, heldThere).WithStatusSubresource(&corev1.Pod{}).Build()
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb"}}

	done, err := RemoveNodeData(context.Background(), c, bb, []string{"n1", "n2"}, []*corev1.Pod{here, there}, "ops")
	if err != nil || done {
		t.Fatalf("done %v, err %v: failed clean pods are not done, and no error", done, err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(here), &corev1.Pod{}); err != nil {
		t.Errorf("the failed pod where it belongs is gone (%v): the controller shows it before a retry", err)
	}
	if err := c.Get(context.Background(), MovedKey("jobs", "bb-clean-1", "ops"), &corev1.Pod{}); err != nil {
		t.Errorf("the failed moved pod is gone (%v): the controller shows it before a retry", err)
	}
}
