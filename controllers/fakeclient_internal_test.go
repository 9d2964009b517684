package controllers

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// fakeClientWith is controller-runtime's fake client, holding objs, with the kinds the
// controllers read and write. The internal tests use it only where a real API server cannot
// play the case (a lost write, two visits at one instant) or where they count requests; each
// says which.
func fakeClientWith(objs ...client.Object) *fake.ClientBuilder {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = coordinationv1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...)
}
