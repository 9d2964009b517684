package controllers

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
)

// conditionTypes are set on the first visit (Unknown until a phase decides), so a user sees
// every stage from the start.
var conditionTypes = []string{
	v1alpha1.ConditionLimitsEstimated,
	v1alpha1.ConditionProvisioned,
	v1alpha1.ConditionComponentsMeasured,
	v1alpha1.ConditionValidated,
	v1alpha1.ConditionReady,
	v1alpha1.ConditionClaimBound,
}

func initConditions(bb *v1alpha1.BurstBuffer) {
	types := conditionTypes
	if len(bb.Spec.StageIn) > 0 {
		types = append(types[:len(types):len(types)], v1alpha1.ConditionStagedIn)
	}
	if len(bb.Spec.StageOut) > 0 {
		types = append(types[:len(types):len(types)], v1alpha1.ConditionStagedOut)
	}
	for _, t := range types {
		if meta.FindStatusCondition(bb.Status.Conditions, t) == nil {
			conditions.Set(bb, t, metav1.ConditionUnknown, v1alpha1.ReasonPending, "not evaluated yet")
		}
	}
}

func conditionIs(bb *v1alpha1.BurstBuffer, typ string, status metav1.ConditionStatus) bool {
	c := meta.FindStatusCondition(bb.Status.Conditions, typ)
	return c != nil && c.Status == status
}

func conditionReason(bb *v1alpha1.BurstBuffer, typ string) string {
	if c := meta.FindStatusCondition(bb.Status.Conditions, typ); c != nil {
		return c.Reason
	}
	return ""
}

// isFailureReason: the reason needs a person (a Warning event): every kind but Progress,
// as declared in api/v1alpha1.
func isFailureReason(r string) bool { return v1alpha1.KindOf(r) != v1alpha1.ReasonKindProgress }

// stageConditions are the conditions whose reasons decide Failed and Degraded (Ready only
// repeats the first of them that is not True).
var stageConditions = []string{
	v1alpha1.ConditionLimitsEstimated, v1alpha1.ConditionProvisioned, v1alpha1.ConditionClientsMounted,
	v1alpha1.ConditionComponentsMeasured, v1alpha1.ConditionValidated, v1alpha1.ConditionStagedIn, v1alpha1.ConditionStagedOut,
}

// withKind says whether a stage condition is False with a reason of kind k.
func withKind(bb *v1alpha1.BurstBuffer, k v1alpha1.ReasonKind) bool {
	return slices.ContainsFunc(stageConditions, func(t string) bool { return falseWithKind(bb, t, k) })
}

// falseWithKind says whether condition t is False with a reason of one of the kinds.
func falseWithKind(bb *v1alpha1.BurstBuffer, t string, kinds ...v1alpha1.ReasonKind) bool {
	c := meta.FindStatusCondition(bb.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionFalse && slices.Contains(kinds, v1alpha1.KindOf(c.Reason))
}

// summarise derives Ready, the phase and the printer-column summary from the conditions and
// figures. It runs once per visit, just before the status patch, so the phase is never out
// of step with the conditions.
func (r *BurstBufferReconciler) summarise(s *scope) {
	bb := s.bb
	bb.Status.NodeCount = int32(len(bb.Status.Nodes))
	deleting := !bb.DeletionTimestamp.IsZero()

	if !deleting {
		setReady(bb)
	}
	ready := conditionIs(bb, v1alpha1.ConditionReady, metav1.ConditionTrue)
	if ready && bb.Status.ReadyTime == nil {
		now := metav1.NewTime(r.Now())
		bb.Status.ReadyTime = &now
	}

	switch {
	case deleting && stageOutStuck(bb):
		bb.Status.Phase = v1alpha1.PhaseStageOutFailed
	case deleting && conditionIs(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse) &&
		conditionReason(bb, v1alpha1.ConditionStagedOut) != v1alpha1.ReasonSkippedByHurry:
		// Stage-out given up by hurry is not staging out: the data is being removed.
		bb.Status.Phase = v1alpha1.PhaseStagingOut
	case deleting:
		bb.Status.Phase = v1alpha1.PhaseTearingDown
	case ready:
		bb.Status.Phase = v1alpha1.PhaseReady
	// Failed and Degraded follow from the kinds declared with the reasons (api/v1alpha1), on
	// whichever condition carries them.
	case withKind(bb, v1alpha1.ReasonKindTerminal):
		bb.Status.Phase = v1alpha1.PhaseFailed
	case len(bb.Status.Nodes) == 0:
		bb.Status.Phase = v1alpha1.PhasePending
	case withKind(bb, v1alpha1.ReasonKindDegraded):
		bb.Status.Phase = v1alpha1.PhaseDegraded
	case !conditionIs(bb, v1alpha1.ConditionProvisioned, metav1.ConditionTrue):
		bb.Status.Phase = v1alpha1.PhaseProvisioning
	case conditionIs(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue) && len(bb.Spec.StageIn) > 0:
		bb.Status.Phase = v1alpha1.PhaseStagingIn
	default:
		bb.Status.Phase = v1alpha1.PhaseMeasuring
	}
	bb.Status.Summary = summary(bb)
	setKstatusConditions(bb)
}

// stageOutStuck: stage-out stopped and needs a human - it failed, a claim is missing or a
// node is gone - as opposed to copying or waiting for the workload to end.
func stageOutStuck(bb *v1alpha1.BurstBuffer) bool {
	if bb.Spec.Teardown.Hurry || !conditionIs(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse) {
		return false
	}
	switch conditionReason(bb, v1alpha1.ConditionStagedOut) {
	case v1alpha1.ReasonStaging, v1alpha1.ReasonWaitingForWorkload, v1alpha1.ReasonPending, v1alpha1.ReasonSkippedByHurry:
		return false
	}
	return true
}

// setReady: Ready is True when every stage the spec asks for is done; otherwise it carries
// the first stage that is not, with that stage's reason, so `kubectl get bb -o wide` says why.
func setReady(bb *v1alpha1.BurstBuffer) {
	for _, t := range readyStages(bb) {
		c := meta.FindStatusCondition(bb.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue {
			reason, msg := v1alpha1.ReasonNotReady, t+" is not evaluated yet"
			if c != nil {
				reason, msg = c.Reason, fmt.Sprintf("%s: %s", t, c.Message)
			}
			if len(bb.Status.Nodes) == 0 && c != nil && c.Reason == v1alpha1.ReasonPending {
				reason, msg = v1alpha1.ReasonPending, "waiting for nodes"
				// The node choice says what it waits for (nodes, or the workload's pods).
				if p := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionProvisioned); p != nil && p.Status == metav1.ConditionFalse {
					reason, msg = p.Reason, fmt.Sprintf("%s: %s", v1alpha1.ConditionProvisioned, p.Message)
				}
			}
			conditions.Set(bb, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
			return
		}
	}
	conditions.Set(bb, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady, readyMessage(bb))
}

// readyStages are the conditions Ready waits for.
func readyStages(bb *v1alpha1.BurstBuffer) []string {
	stages := []string{
		v1alpha1.ConditionLimitsEstimated, v1alpha1.ConditionProvisioned,
		v1alpha1.ConditionComponentsMeasured, v1alpha1.ConditionValidated,
	}
	if len(bb.Spec.StageIn) > 0 {
		stages = append(stages, v1alpha1.ConditionStagedIn)
	}
	return stages
}

// allStagesDone: every condition Ready waits for is True (Ready will be, at this visit's end).
func allStagesDone(bb *v1alpha1.BurstBuffer) bool {
	return !slices.ContainsFunc(readyStages(bb), func(t string) bool { return !conditionIs(bb, t, metav1.ConditionTrue) })
}

func readyMessage(bb *v1alpha1.BurstBuffer) string {
	msg := fmt.Sprintf("%s burst buffer on %d node(s)", bb.Spec.Engine, len(bb.Status.Nodes))
	if bb.Status.Mount != nil {
		msg += ", mounted at " + bb.Status.Mount.Path
	}
	return msg
}

// summary holds the human-readable figures for `kubectl get bb`.
func summary(bb *v1alpha1.BurstBuffer) *v1alpha1.Summary {
	l := bb.Status.Limits
	if l == nil {
		return nil
	}
	sum := &v1alpha1.Summary{}
	limit := int64(0)
	switch {
	case l.Components != nil && l.Components.Write != nil:
		limit = l.Components.Write.LimitBytesPerSecond
		sum.Bottleneck = l.Components.Write.Bottleneck
	case l.Estimated != nil:
		limit = l.Estimated.Write.LimitBytesPerSecond
		sum.Bottleneck = l.Estimated.Write.Bottleneck
	}
	if limit > 0 {
		sum.WriteLimit = limits.FormatBytesPerSecond(float64(limit))
	} else {
		sum.WriteLimit = "unknown" // stage 1 ran and knows no limit (a figure nothing documents)
	}
	if l.Sweep != nil && l.Sweep.Write != nil {
		sum.WriteMeasured = limits.FormatBytesPerSecond(float64(l.Sweep.Write.BestBytesPerSecond))
		sum.Efficiency = fmt.Sprintf("%.2f", float64(l.Sweep.Write.EfficiencyPerMille)/1000)
	}
	return sum
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
