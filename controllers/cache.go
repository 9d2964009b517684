package controllers

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// CacheOptions restrict the pod cache to pods that carry the beeburst.io/burst-buffer label:
// caching every pod of a large cluster would cost memory for nothing. Two kinds of pods carry
// it: the operator's own task pods (nodetask.Labels) and workload pods, whose documented
// template must name their burst buffer with it (docs/workloads.md). A pod the operator
// creates without that label would be invisible to its controllers.
//
// ConfigMaps and Secrets are cached only when the operator made them (managed-by label): the
// node figure cache, the sweep, the env ConfigMaps, the BeeGFS auth Secret. Without this the
// operator would hold every Secret of the cluster in memory.
//
// Leases only in the operator's namespace (namespace), and only its node locks: a Role there
// is all the operator has for Leases (the leader election Lease is not ours to watch).
func CacheOptions(namespace string) cache.Options {
	ours := labels.SelectorFromSet(labels.Set{nodetask.LabelManagedBy: nodetask.ManagedBy})
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:       {Label: podCacheSelector()},
		&corev1.ConfigMap{}: {Label: ours},
		&corev1.Secret{}:    {Label: ours},
		// The volumes the operator made for its claims; other volumes are no business of it.
		&corev1.PersistentVolume{}: {Label: ours},
		&coordinationv1.Lease{}: {
			Namespaces: map[string]cache.Config{namespace: {}},
			Label:      labels.SelectorFromSet(labels.Set{nodetask.LabelManagedBy: nodetask.ManagedBy, nodetask.LabelComponent: nodetask.ComponentNodeLock}),
		},
	}}
}

func podCacheSelector() labels.Selector {
	req, err := labels.NewRequirement(v1alpha1.LabelBurstBuffer, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: unreachable
	}
	return labels.NewSelector().Add(*req)
}
