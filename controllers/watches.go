package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// burstBufferOfChild maps one of the operator's children to its burst buffer, by its labels.
func burstBufferOfChild(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1alpha1.LabelBurstBuffer]
	if name == "" {
		return nil
	}
	ns := o.GetLabels()[nodetask.LabelBurstBufferNamespace]
	if ns == "" {
		ns = o.GetNamespace()
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
}

// isOurs: an object the operator made (its managed-by label).
func isOurs(o client.Object) bool {
	return o.GetLabels()[nodetask.LabelManagedBy] == nodetask.ManagedBy
}

// burstBuffersWaitingForNodes maps a node event to the burst buffers that have no nodes yet,
// and to those being deleted that have the node: a stage-out that waits for a node that was
// gone copies its data as soon as the node is back.
func (r *BurstBufferReconciler) burstBuffersWaitingForNodes(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.BurstBufferList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, bb := range list.Items {
		if len(bb.Status.Nodes) == 0 && bb.DeletionTimestamp.IsZero() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&bb)})
		}
	}
	var on v1alpha1.BurstBufferList
	if err := r.List(ctx, &on, client.MatchingFields{bbNodeField: o.GetName()}); err != nil {
		return reqs
	}
	for _, bb := range on.Items {
		if !bb.DeletionTimestamp.IsZero() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&bb)})
		}
	}
	return reqs
}

// burstBufferWaitingForWorkload maps a workload pod's event to its burst buffer while that
// one still chooses its nodes from the workload, or is being deleted (deletion waits for the
// workload's pods to end). Otherwise pod events are no business of this reconciler (the
// WorkloadReconciler follows them).
func (r *BurstBufferReconciler) burstBufferWaitingForWorkload(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1alpha1.LabelBurstBuffer]
	if name == "" {
		return nil
	}
	key := client.ObjectKey{Namespace: o.GetNamespace(), Name: name}
	var bb v1alpha1.BurstBuffer
	if err := r.Get(ctx, key, &bb); err != nil {
		return nil
	}
	if bb.DeletionTimestamp.IsZero() && (!bb.Spec.Nodes.FromWorkload || len(bb.Status.Nodes) > 0) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

func nodeReadyChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okO := e.ObjectOld.(*corev1.Node)
			n, okN := e.ObjectNew.(*corev1.Node)
			// Taints decide where a fromWorkload burst buffer's pods fit.
			return okO && okN && (nodeReady(o) != nodeReady(n) || o.Spec.Unschedulable != n.Spec.Unschedulable ||
				!equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints))
		},
	}
}
