// Package conditions sets a burst buffer's status conditions, the one way every controller
// step and engine does: meta.SetStatusCondition with the object's generation.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// Set sets condition typ of bb; its lastTransitionTime changes only with its status.
func Set(bb *v1alpha1.BurstBuffer, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&bb.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: bb.Generation,
	})
}
