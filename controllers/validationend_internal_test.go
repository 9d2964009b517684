package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
)

// TestValidationEnded: a failed measurement ends validation as a finished or cut one does,
// and a spec the nodes refuse (a Terminal reason that waits for a person) does not - once it
// is fixed, stage 2 goes on.
func TestValidationEnded(t *testing.T) {
	cond := func(typ, reason string, st metav1.ConditionStatus) func(*v1alpha1.BurstBuffer) {
		return func(bb *v1alpha1.BurstBuffer) { conditions.Set(bb, typ, st, reason, "") }
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name          string
		set           func(*v1alpha1.BurstBuffer)
		failed, ended bool
	}{
		{"measuring", cond(v1alpha1.ConditionValidated, v1alpha1.ReasonSweeping, metav1.ConditionFalse), false, false},
		{"validated", cond(v1alpha1.ConditionValidated, v1alpha1.ReasonValidated, metav1.ConditionTrue), false, true},
		{"profile none", func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.Profile = v1alpha1.ProfileNone }, false, true},
		{"end recorded", func(bb *v1alpha1.BurstBuffer) { bb.Status.ValidationEndTime = &now }, false, true},
		{"sweep failed", cond(v1alpha1.ConditionValidated, v1alpha1.ReasonProbeFailed, metav1.ConditionFalse), true, false},
		{"probe failed", cond(v1alpha1.ConditionComponentsMeasured, v1alpha1.ReasonProbeFailed, metav1.ConditionFalse), true, false},
		{"too little space", cond(v1alpha1.ConditionComponentsMeasured, v1alpha1.ReasonInsufficientCapacity, metav1.ConditionFalse), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := &v1alpha1.BurstBuffer{}
			bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
			tc.set(bb)
			if got := measurementFailed(bb); got != tc.failed {
				t.Errorf("measurementFailed = %v, want %v", got, tc.failed)
			}
			// The failure itself is recorded as the end by the step that sees it
			// (measuring); until then only the conditions say it.
			if got := validationEnded(bb); got != tc.ended {
				t.Errorf("validationEnded = %v, want %v", got, tc.ended)
			}
		})
	}
}
