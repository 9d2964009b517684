package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/claim"
	"github.com/beeburst/beeburst/internal/conditions"
)

// The workload's volume - what lets a workload write - exists only once Ready is recorded:
// stage-out reads a burst buffer without status.readyTime as one that no workload wrote to.
// The window between the volume's create and the status write that records Ready cannot be
// held open against a real API server, so this runs the step on controller-runtime's fake
// client, twice: before the record and after.
func TestVolumeWaitsForRecordedReady(t *testing.T) {
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelHostname: "n1"}}}
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb", UID: "u1"}}
	bb.Status.Nodes = []v1alpha1.NodeStatus{{Name: "n1"}}
	bb.Status.Mount = &v1alpha1.MountStatus{Path: "/burst-buffer", HostPath: "/var/lib/beeburst/jobs/bb"}
	for _, t := range readyStages(bb) {
		conditions.Set(bb, t, metav1.ConditionTrue, "Done", "done")
	}
	c := fakeClientWith(&node).Build()
	r := &BurstBufferReconciler{Client: c}
	s := &scope{bb: bb, nodes: []string{"n1"}, nodeObjs: []corev1.Node{node}}
	volumes := func() int {
		var l corev1.PersistentVolumeList
		if err := c.List(context.Background(), &l); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}

	if _, _, err := r.reconcileVolume(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if n := volumes(); n != 0 {
		t.Fatalf("%d volume(s) before Ready is recorded", n)
	}
	if got := conditionReason(bb, v1alpha1.ConditionClaimBound); got != v1alpha1.ReasonClaimWaiting {
		t.Errorf("ClaimBound reason %q, want %s", got, v1alpha1.ReasonClaimWaiting)
	}

	now := metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	bb.Status.ReadyTime = &now
	if _, _, err := r.reconcileVolume(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	var pv corev1.PersistentVolume
	if err := c.Get(context.Background(), client.ObjectKey{Name: claim.VolumeName(bb, claim.Workload)}, &pv); err != nil {
		t.Fatalf("no volume once Ready is recorded: %v", err)
	}
}
