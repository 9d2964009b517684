package controllers

import (
	"context"
	"strings"

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
	return cache.Options{
		// No code reads managedFields; on the small objects the operator makes by the
		// thousand (pods, leases, per-node ConfigMaps) they are a large share of the cache.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: podCacheSelector()},
			&corev1.ConfigMap{}: {Label: ours},
			// Its own Secrets live in its namespace only (nodetask.Namespace); a user's Secret
			// that a spec names is read past the cache.
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{namespace: {}}, Label: ours},
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

// Field indexes of the manager's cache: what is on a node is looked up, not found by a scan
// of every pod or burst buffer, whose cost would grow with all that exist.
const (
	// podNodeField indexes pods by spec.nodeName.
	podNodeField = "spec.nodeName"
	// bbNodeField indexes burst buffers by the names in status.nodes.
	bbNodeField = "status.nodes.name"
	// podBurstBufferField indexes pods by the burst buffer they carry the label of
	// (<namespace>/<name>): its task pods and its workload's pods.
	podBurstBufferField = "burstBuffer"
)

// indexFields registers the field indexes with the manager's cache (before it starts).
func indexFields(ctx context.Context, idx client.FieldIndexer) error {
	if err := idx.IndexField(ctx, &corev1.Pod{}, podNodeField, podNode); err != nil {
		return err
	}
	if err := indexPodsByBurstBuffer(ctx, idx); err != nil {
		return err
	}
	return idx.IndexField(ctx, &v1alpha1.BurstBuffer{}, bbNodeField, burstBufferNodes)
}

// indexPodsByBurstBuffer registers podBurstBufferField. Both reconcilers list by it, and
// whichever is set up first registers it: the second's conflict is no error.
func indexPodsByBurstBuffer(ctx context.Context, idx client.FieldIndexer) error {
	err := idx.IndexField(ctx, &corev1.Pod{}, podBurstBufferField, podBurstBuffer)
	if err != nil && strings.Contains(err.Error(), "indexer conflict") {
		return nil
	}
	return err
}

// ofBurstBuffer narrows a pod list to those labelled with bb's name: a lookup, not a scan of
// every pod in the namespace, whose cost grows with the other burst buffers' pods.
func ofBurstBuffer(bb *v1alpha1.BurstBuffer) client.MatchingFields {
	return client.MatchingFields{podBurstBufferField: bb.Namespace + "/" + bb.Name}
}

func podBurstBuffer(o client.Object) []string {
	name := o.GetLabels()[v1alpha1.LabelBurstBuffer]
	if name == "" {
		return nil
	}
	ns := o.GetLabels()[nodetask.LabelBurstBufferNamespace]
	if ns == "" {
		ns = o.GetNamespace()
	}
	return []string{ns + "/" + name}
}

func podNode(o client.Object) []string {
	if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}
	}
	return nil
}

func burstBufferNodes(o client.Object) []string {
	bb, ok := o.(*v1alpha1.BurstBuffer)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(bb.Status.Nodes))
	for _, n := range bb.Status.Nodes {
		out = append(out, n.Name)
	}
	return out
}
