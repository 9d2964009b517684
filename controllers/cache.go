package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/beeburst/beeburst/internal/nodetask"
)

// CacheOptions restrict the pod cache to the operator's own pods: caching every pod of a
// large cluster would cost memory for nothing.
func CacheOptions() cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: labels.SelectorFromSet(labels.Set{nodetask.LabelManagedBy: nodetask.ManagedBy})},
	}}
}
