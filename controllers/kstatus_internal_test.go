package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// Reconciling and Stalled for every phase, from the phase and the conditions summarise left.
// (The envtest suite checks the same through kstatus.Compute on served objects; this table
// covers the phases it does not reach cheaply.) Runs without envtest:
//
//	go test ./controllers/ -run TestKstatusConditions
func TestKstatusConditions(t *testing.T) {
	type cond struct {
		typ    string
		status metav1.ConditionStatus
		reason string
		msg    string
	}
	tests := []struct {
		name                 string
		phase                v1alpha1.Phase
		conds                []cond
		reconciling, stalled metav1.ConditionStatus
		reason, msgPrefix    string // of the True one (of Reconciling when neither is)
	}{
		{name: "new object, not summarised yet", phase: "",
			reconciling: metav1.ConditionTrue, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonPending, msgPrefix: "not evaluated yet"},
		{name: "waiting for nodes", phase: v1alpha1.PhasePending,
			conds:       []cond{{v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound, "Provisioned: 1 of 3 nodes"}},
			reconciling: metav1.ConditionTrue, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonNodesNotFound, msgPrefix: "Provisioned: 1 of 3"},
		{name: "measuring", phase: v1alpha1.PhaseMeasuring,
			conds:       []cond{{v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonProbing, "ComponentsMeasured: probing"}},
			reconciling: metav1.ConditionTrue, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonProbing, msgPrefix: "ComponentsMeasured: probing"},
		{name: "staging in", phase: v1alpha1.PhaseStagingIn,
			conds:       []cond{{v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonStaging, "StagedIn: 3 of 10 files"}},
			reconciling: metav1.ConditionTrue, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonStaging, msgPrefix: "StagedIn: 3"},
		{name: "ready", phase: v1alpha1.PhaseReady,
			conds:       []cond{{v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady, "local burst buffer on 2 node(s)"}},
			reconciling: metav1.ConditionFalse, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonReady, msgPrefix: "the burst buffer is Ready: local"},
		{name: "failed: Ready names the failure", phase: v1alpha1.PhaseFailed,
			conds:       []cond{{v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonClientModuleMissing, "Provisioned: no beegfs module on node-1"}},
			reconciling: metav1.ConditionFalse, stalled: metav1.ConditionTrue, reason: v1alpha1.ReasonClientModuleMissing, msgPrefix: "Provisioned: no beegfs module"},
		{name: "degraded: a later stage failed while Ready names an earlier one", phase: v1alpha1.PhaseDegraded,
			conds: []cond{
				{v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonHardwareUnknown, "LimitsEstimated: unknown"},
				{v1alpha1.ConditionLimitsEstimated, metav1.ConditionUnknown, v1alpha1.ReasonHardwareUnknown, "unknown"},
				{v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed, "device probe on node-2 failed"},
			},
			reconciling: metav1.ConditionFalse, stalled: metav1.ConditionTrue, reason: v1alpha1.ReasonProbeFailed, msgPrefix: "ComponentsMeasured: device probe on node-2"},
		{name: "stage-out failed", phase: v1alpha1.PhaseStageOutFailed,
			conds: []cond{
				{v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDeleting, "the burst buffer is being torn down"},
				{v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonStageFailed, "copy failed; set spec.teardown.hurry"},
			},
			reconciling: metav1.ConditionFalse, stalled: metav1.ConditionTrue, reason: v1alpha1.ReasonStageFailed, msgPrefix: "StagedOut: copy failed"},
		{name: "staging out", phase: v1alpha1.PhaseStagingOut,
			conds: []cond{
				{v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonStaging, "2 of 4 files"},
			},
			reconciling: metav1.ConditionTrue, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonDeleting, msgPrefix: "staging out, then tearing down: 2 of 4 files"},
		{name: "tearing down", phase: v1alpha1.PhaseTearingDown,
			reconciling: metav1.ConditionTrue, stalled: metav1.ConditionFalse, reason: v1alpha1.ReasonDeleting, msgPrefix: "tearing down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bb := &v1alpha1.BurstBuffer{}
			bb.Generation = 3
			bb.Status.Phase = tt.phase
			for _, c := range tt.conds {
				bb.Status.Conditions = append(bb.Status.Conditions, metav1.Condition{Type: c.typ, Status: c.status, Reason: c.reason, Message: c.msg, ObservedGeneration: 1})
			}
			setKstatusConditions(bb)
			rec, st := conditionOf(bb, v1alpha1.ConditionReconciling), conditionOf(bb, v1alpha1.ConditionStalled)
			if rec == nil || st == nil {
				t.Fatalf("Reconciling %v, Stalled %v: both must be set", rec, st)
			}
			if rec.Status != tt.reconciling || st.Status != tt.stalled {
				t.Errorf("Reconciling=%s Stalled=%s, want %s and %s", rec.Status, st.Status, tt.reconciling, tt.stalled)
			}
			if rec.Status == metav1.ConditionTrue && st.Status == metav1.ConditionTrue {
				t.Errorf("Reconciling and Stalled both True")
			}
			got := rec
			if st.Status == metav1.ConditionTrue {
				got = st
			}
			if got.Reason != tt.reason || len(got.Message) < len(tt.msgPrefix) || got.Message[:len(tt.msgPrefix)] != tt.msgPrefix {
				t.Errorf("%s: reason %q message %q, want %q and a message starting %q", got.Type, got.Reason, got.Message, tt.reason, tt.msgPrefix)
			}
			for _, c := range bb.Status.Conditions {
				if c.Reason == "" {
					t.Errorf("%s has no reason", c.Type)
				}
				if c.ObservedGeneration != 3 {
					t.Errorf("%s: observedGeneration %d, want 3", c.Type, c.ObservedGeneration)
				}
			}
			if bb.Status.ObservedGeneration != 3 {
				t.Errorf("status.observedGeneration %d, want 3", bb.Status.ObservedGeneration)
			}
		})
	}
}

func conditionOf(bb *v1alpha1.BurstBuffer, typ string) *metav1.Condition {
	for i := range bb.Status.Conditions {
		if bb.Status.Conditions[i].Type == typ {
			return &bb.Status.Conditions[i]
		}
	}
	return nil
}
