package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cache keeps objects without managedFields (no code reads them), everything else as
// the API server sent it.
func TestCacheDropsManagedFields(t *testing.T) {
	opts := CacheOptions("beeburst-system")
	if opts.DefaultTransform == nil {
		t.Fatal("CacheOptions sets no DefaultTransform")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}}}
	out, err := opts.DefaultTransform(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	if got.Name != "p" || got.Labels["a"] != "b" {
		t.Errorf("the rest of the object changed: %+v", got.ObjectMeta)
	}
}
