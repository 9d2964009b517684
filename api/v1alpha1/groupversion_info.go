// Package v1alpha1 contains the beeburst.io/v1alpha1 API: the BurstBuffer kind.
//
// +kubebuilder:object:generate=true
// +groupName=beeburst.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "beeburst.io", Version: "v1alpha1"}

	// SchemeBuilder adds this API's types to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
