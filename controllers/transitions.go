package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// emitTransitions records an event for every condition whose status changed in this visit:
// events mark transitions, never one per loop.
func (r *BurstBufferReconciler) emitTransitions(before, after *v1alpha1.BurstBuffer) {
	if r.Recorder == nil {
		return
	}
	for _, c := range after.Status.Conditions {
		old := meta.FindStatusCondition(before.Status.Conditions, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		if c.Status == metav1.ConditionUnknown || isKstatusCondition(c.Type) {
			continue
		}
		typ := corev1.EventTypeNormal
		if c.Status == metav1.ConditionFalse && isFailureReason(c.Reason) {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(after, nil, typ, c.Reason, c.Type, "%s", c.Message)
	}
}

// logTransitions writes one structured line per phase change and per condition whose status
// or reason changed - every decision to wait has a reason, so the log explains a stuck object
// without a line per reconcile.
func logTransitions(ctx context.Context, before, after *v1alpha1.BurstBuffer) {
	log := logf.FromContext(ctx)
	if before.Status.Phase != after.Status.Phase {
		kv := []any{"from", before.Status.Phase, "phase", after.Status.Phase}
		if c := meta.FindStatusCondition(after.Status.Conditions, v1alpha1.ConditionReady); c != nil {
			kv = append(kv, "reason", c.Reason, "message", c.Message)
		}
		log.Info("phase changed", kv...)
	}
	for _, c := range after.Status.Conditions {
		old := meta.FindStatusCondition(before.Status.Conditions, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		log.Info("condition changed", "phase", after.Status.Phase, "condition", c.Type, "status", c.Status,
			"reason", c.Reason, "message", c.Message)
	}
}
