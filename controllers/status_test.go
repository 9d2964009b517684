package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
)

// TestEveryTerminalReasonIsFailed: whichever stage condition carries a reason declared
// Terminal in api/v1alpha1, the burst buffer is Failed (and Degraded for a Degraded one),
// whatever else is going on - so a new terminal reason cannot leave it in Provisioning.
func TestEveryTerminalReasonIsFailed(t *testing.T) {
	r := &BurstBufferReconciler{Now: time.Now}
	for _, want := range []struct {
		kind  v1alpha1.ReasonKind
		phase v1alpha1.Phase
	}{{v1alpha1.ReasonKindTerminal, v1alpha1.PhaseFailed}, {v1alpha1.ReasonKindDegraded, v1alpha1.PhaseDegraded}} {
		reasons := v1alpha1.ReasonsOfKind(want.kind)
		if len(reasons) == 0 {
			t.Fatalf("no reasons of kind %d", want.kind)
		}
		for _, reason := range reasons {
			for _, typ := range stageConditions {
				for _, nodes := range []int{0, 2} {
					if want.kind != v1alpha1.ReasonKindTerminal && nodes == 0 {
						continue // without nodes a burst buffer is Pending unless it failed
					}
					bb := &v1alpha1.BurstBuffer{}
					bb.Spec.StageIn = []v1alpha1.StageSpec{{Path: "in"}}
					for i := 0; i < nodes; i++ {
						bb.Status.Nodes = append(bb.Status.Nodes, v1alpha1.NodeStatus{Name: "n" + string(rune('a'+i))})
					}
					initConditions(bb)
					// The other stages in progress, as they would be.
					conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonProvisioning, "")
					conditions.Set(bb, typ, metav1.ConditionFalse, reason, "test")
					r.summarise(&scope{bb: bb})
					if bb.Status.Phase != want.phase {
						t.Errorf("%s on %s (%d nodes): phase %s, want %s", reason, typ, nodes, bb.Status.Phase, want.phase)
					}
					if !isFailureReason(reason) {
						t.Errorf("%s: must be a Warning event", reason)
					}
				}
			}
		}
	}
	// Progress and Attention reasons never fail a burst buffer.
	for _, k := range []v1alpha1.ReasonKind{v1alpha1.ReasonKindProgress, v1alpha1.ReasonKindAttention} {
		for _, reason := range v1alpha1.ReasonsOfKind(k) {
			bb := &v1alpha1.BurstBuffer{Status: v1alpha1.BurstBufferStatus{Nodes: []v1alpha1.NodeStatus{{Name: "a"}}}}
			initConditions(bb)
			conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, reason, "test")
			r.summarise(&scope{bb: bb})
			if bb.Status.Phase == v1alpha1.PhaseFailed || bb.Status.Phase == v1alpha1.PhaseDegraded {
				t.Errorf("%s: phase %s", reason, bb.Status.Phase)
			}
		}
	}
}
