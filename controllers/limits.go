package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// reconcileEstimate is stage 1: limits from the documented hardware, before anything runs.
func (r *BurstBufferReconciler) reconcileEstimate(_ context.Context, s *scope) (ctrl.Result, bool, error) {
	setCondition(s.bb, v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, v1alpha1.ReasonEstimated, "TODO")
	return ctrl.Result{}, true, nil
}
