package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// CacheOptions restrict the pod cache to pods that carry the beeburst.io/burst-buffer label:
// caching every pod of a large cluster would cost memory for nothing. Two kinds of pods carry
// it: the operator's own task pods (nodetask.Labels) and workload pods, whose documented
// template must name their burst buffer with it (docs/workloads.md). A pod the operator
// creates without that label would be invisible to its controllers.
func CacheOptions() cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: podCacheSelector()},
	}}
}

func podCacheSelector() labels.Selector {
	req, err := labels.NewRequirement(v1alpha1.LabelBurstBuffer, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: unreachable
	}
	return labels.NewSelector().Add(*req)
}
