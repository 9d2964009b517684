package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// The visit that chooses the nodes makes nothing for them (the workload's claim, the engine's
// pods) before the choice is saved by that visit's status patch; stage 1, pure, runs. A choice whose
// patch was lost is made again on the next visit, perhaps on other nodes; pods of the lost
// one would be found by their names and taken for the new one's. The lost patch cannot be
// produced against a real API server, so this runs the step on controller-runtime's fake
// client.
func TestNothingMadeForUnsavedNodes(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	c := fakeClientWith(node).Build()
	r := &BurstBufferReconciler{Client: c}
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb", UID: "u1"},
		Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: 1}}}
	s := &scope{bb: bb}

	_, done, err := r.reconcileNodes(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(bb.Status.Nodes) != 1 || bb.Status.Nodes[0].Name != "n1" {
		t.Fatalf("status.nodes %+v, want n1", bb.Status.Nodes)
	}
	if !done || !s.nodesUnsaved {
		t.Fatalf("done %v, nodesUnsaved %v: the visit goes on to stage 1, marked as having unsaved nodes", done, s.nodesUnsaved)
	}
	// Stage 1 (pure) runs; the claim and the engine make nothing.
	for name, step := range map[string]step{"estimate": r.reconcileEstimate, "claim": r.reconcileClaim, "engine": r.reconcileEngine} {
		if _, _, err := step(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var pods corev1.PodList
	var claims corev1.PersistentVolumeClaimList
	if err := c.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), &claims); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items)+len(claims.Items) != 0 {
		t.Errorf("made before the choice is saved: %d pod(s), %d claim(s)", len(pods.Items), len(claims.Items))
	}
	if bb.Status.Limits == nil && conditionReason(bb, v1alpha1.ConditionLimitsEstimated) == "" {
		t.Error("stage 1 did not run on the visit that chose the nodes")
	}
	if _, done, _ := r.reconcileEngine(context.Background(), s); done {
		t.Error("the engine step lets the visit go on with unsaved nodes")
	}
}
