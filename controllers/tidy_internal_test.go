package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// The bound on failed measuring pods kept after measuring. The envtest suite checks that
// succeeded ones go once Validated is True; a measured burst buffer with more than
// keepFailedPods failed measuring pods (failures, then a budget cut) is slow to reach there,
// so this table uses controller-runtime's fake client: the function only lists and deletes.
func TestTidyKeepsTheNewestFailedPods(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb"}}
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	pod := func(name, component string, phase corev1.PodPhase, age int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: name,
			CreationTimestamp: metav1.NewTime(base.Add(time.Duration(age) * time.Minute)),
			Labels: map[string]string{v1alpha1.LabelBurstBuffer: "bb", nodetask.LabelBurstBufferNamespace: "jobs", nodetask.LabelManagedBy: nodetask.ManagedBy,
				nodetask.LabelComponent: component}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	var objs []client.Object
	for i := 0; i < 8; i++ {
		objs = append(objs, pod(fmt.Sprintf("bb-sweep-%d", i), nodetask.ComponentSweep, corev1.PodFailed, i))
	}
	objs = append(objs,
		pod("bb-probe-dev-0", nodetask.ComponentProbeDevice, corev1.PodSucceeded, 0),
		pod("bb-prep-0", "prep", corev1.PodSucceeded, 0),
		pod("bb-copy-in-0", "in", corev1.PodSucceeded, 0),
		pod("bb-bench-0", nodetask.ComponentBench, corev1.PodRunning, 0))
	c := fakeClientWith(objs...).WithIndex(&corev1.Pod{}, podBurstBufferField, podBurstBuffer).Build()
	r := &BurstBufferReconciler{Client: c}
	deleted, err := r.tidyMeasuringPods(context.Background(), bb)
	if err != nil {
		t.Fatal(err)
	}
	if deleted != 4 {
		t.Errorf("deleted %d pods, want 4 (1 succeeded probe, the 3 oldest failed sweep pods)", deleted)
	}
	var left corev1.PodList
	if err := c.List(context.Background(), &left); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range left.Items {
		got[p.Name] = true
	}
	want := []string{"bb-sweep-3", "bb-sweep-4", "bb-sweep-5", "bb-sweep-6", "bb-sweep-7", "bb-prep-0", "bb-copy-in-0", "bb-bench-0"}
	for _, n := range want {
		if !got[n] {
			t.Errorf("%s was deleted", n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("left %v, want %v", got, want)
	}
}
