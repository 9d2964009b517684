package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
)

// The kstatus conventions (sigs.k8s.io/cli-utils/pkg/kstatus), which kubectl wait, Argo CD,
// Flux and cli-utils' own pollers read from any resource:
//
//   - status.observedGeneration below metadata.generation: InProgress;
//   - a Reconciling condition that is True: InProgress;
//   - a Stalled condition that is True: Failed;
//   - otherwise the Ready condition: True is Current, False InProgress;
//   - metadata.deletionTimestamp set: Terminating, whatever the conditions say.
//
// setKstatusConditions derives Reconciling and Stalled from the phase and the stage
// conditions, once per visit, after the phase is decided (summarise; refuseUndecodable for
// an object that never reaches the phases). Both are set on every visit, False when they do
// not apply, and never True together: kstatus reads the first True one it finds.

// setKstatusConditions sets Reconciling and Stalled and stamps every condition and the
// status with the generation this visit saw.
func setKstatusConditions(bb *v1alpha1.BurstBuffer) {
	reconciling, stalled := kstatusConditions(bb)
	conditions.Set(bb, v1alpha1.ConditionReconciling, reconciling.Status, reconciling.Reason, reconciling.Message)
	conditions.Set(bb, v1alpha1.ConditionStalled, stalled.Status, stalled.Reason, stalled.Message)
	// Every visit re-derives the phase and Ready from all conditions against the current
	// spec, and the status patch claims this generation (status.observedGeneration); the
	// conditions say the same, each. A spec change the operator does not act on (the
	// validation profile after measuring, say) leaves a condition's content as it was, which
	// is then still the operator's answer for this generation.
	for i := range bb.Status.Conditions {
		bb.Status.Conditions[i].ObservedGeneration = bb.Generation
	}
	bb.Status.ObservedGeneration = bb.Generation
}

// isKstatusCondition: Reconciling and Stalled repeat what a stage condition already said,
// so their transitions get no events of their own.
func isKstatusCondition(typ string) bool {
	return typ == v1alpha1.ConditionReconciling || typ == v1alpha1.ConditionStalled
}

// kstatusConditions computes Reconciling and Stalled (only Status, Reason and Message are
// set) from the phase summarise decided.
func kstatusConditions(bb *v1alpha1.BurstBuffer) (reconciling, stalled metav1.Condition) {
	ready := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionReady)
	readyReason, readyMsg := v1alpha1.ReasonPending, "not evaluated yet"
	if ready != nil {
		readyReason, readyMsg = ready.Reason, ready.Message
	}
	cond := func(s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Status: s, Reason: reason, Message: msg}
	}
	switch bb.Status.Phase {
	case v1alpha1.PhaseReady:
		return cond(metav1.ConditionFalse, v1alpha1.ReasonReady, "the burst buffer is Ready: "+readyMsg),
			cond(metav1.ConditionFalse, v1alpha1.ReasonReady, "the burst buffer is Ready")
	case v1alpha1.PhaseFailed, v1alpha1.PhaseDegraded:
		reason, msg := failedStage(bb, readyReason, readyMsg)
		return cond(metav1.ConditionFalse, reason, "stalled: "+msg),
			cond(metav1.ConditionTrue, reason, msg)
	case v1alpha1.PhaseStageOutFailed:
		reason, msg := v1alpha1.ReasonStageFailed, "stage-out failed"
		if c := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionStagedOut); c != nil {
			reason, msg = c.Reason, v1alpha1.ConditionStagedOut+": "+c.Message
		}
		return cond(metav1.ConditionFalse, reason, "stalled: "+msg),
			cond(metav1.ConditionTrue, reason, msg)
	case v1alpha1.PhaseStagingOut, v1alpha1.PhaseTearingDown:
		msg := "tearing down"
		if bb.Status.Phase == v1alpha1.PhaseStagingOut {
			msg = "staging out, then tearing down"
			if c := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionStagedOut); c != nil && c.Message != "" {
				msg += ": " + c.Message
			}
		}
		return cond(metav1.ConditionTrue, v1alpha1.ReasonDeleting, msg),
			cond(metav1.ConditionFalse, v1alpha1.ReasonDeleting, "the burst buffer is being deleted")
	}
	// Pending, Provisioning, Measuring, StagingIn (and a status not summarised yet): Ready
	// names the stage it waits for, with that stage's reason.
	return cond(metav1.ConditionTrue, readyReason, readyMsg),
		cond(metav1.ConditionFalse, v1alpha1.ReasonReconciling, "the operator is working towards Ready")
}

// failedStage is the condition that stalled the burst buffer: the first stage condition
// (Ready aside) that is False with a reason that needs a person, else Ready's own.
func failedStage(bb *v1alpha1.BurstBuffer, readyReason, readyMsg string) (string, string) {
	if isFailureReason(readyReason) {
		return readyReason, readyMsg
	}
	for _, c := range bb.Status.Conditions {
		if c.Type == v1alpha1.ConditionReady || isKstatusCondition(c.Type) {
			continue
		}
		if c.Status == metav1.ConditionFalse && isFailureReason(c.Reason) {
			return c.Reason, c.Type + ": " + c.Message
		}
	}
	return readyReason, readyMsg
}
