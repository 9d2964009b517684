package controllers

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// reconcileComparisonVerdict is a phase of Reconcile: with validation.compareWith it sets the
// Compared condition on the first visit (Unknown until the comparison runs, after stage 3),
// and gives it its final word when validation ended before the comparison did (the time
// budget ran out). Never holds up the phases after it.
func (r *BurstBufferReconciler) reconcileComparisonVerdict(_ context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if bb.Spec.Validation.CompareWith == nil {
		return ctrl.Result{}, true, nil
	}
	if meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionCompared) == nil {
		setCompareCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonPending,
			"validation.compareWith: the ideal workload runs on the other storage after stage 3")
	}
	if comparisonSettled(bb) || !validationEnded(bb) {
		return ctrl.Result{}, true, nil
	}
	msg := fmt.Sprintf("validation ended (%s) before the comparison ran: nothing was compared", validationEndedBy(bb))
	if conditionReason(bb, v1alpha1.ConditionValidated) == v1alpha1.ReasonCutShort {
		msg += "; a larger validation.timeBudget leaves time for it"
	}
	setCompareCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonComparisonFailed, msg)
	return ctrl.Result{}, true, nil
}

// comparePathMissing are this visit's comparison pods that cannot start because the
// node-local path to compare with does not exist on their node.
func comparePathMissing(s *scope) []*nodetask.Blocked {
	cw := s.bb.Spec.Validation.CompareWith
	if cw == nil || cw.NodeLocal == nil {
		return nil
	}
	var out []*nodetask.Blocked
	for _, b := range s.blocked {
		if b.Cause == nodetask.HostPathMissing && b.Path == cw.NodeLocal.Path {
			out = append(out, b)
		}
	}
	return out
}

// blockedNodes are the nodes of blocked pods, sorted, once each.
func blockedNodes(bs []*nodetask.Blocked) []string {
	var out []string
	for _, b := range bs {
		if b.Node != "" && !slices.Contains(out, b.Node) {
			out = append(out, b.Node)
		}
	}
	slices.Sort(out)
	return out
}
