package conditions

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func TestSet(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	Set(bb, "Ready", metav1.ConditionFalse, "Pending", "waiting")
	first := meta.FindStatusCondition(bb.Status.Conditions, "Ready").LastTransitionTime
	Set(bb, "Ready", metav1.ConditionFalse, "Other", "still waiting")
	c := meta.FindStatusCondition(bb.Status.Conditions, "Ready")
	if len(bb.Status.Conditions) != 1 || c.Reason != "Other" || c.Message != "still waiting" || c.ObservedGeneration != 3 || !c.LastTransitionTime.Equal(&first) {
		t.Fatalf("%+v", bb.Status.Conditions)
	}
}
