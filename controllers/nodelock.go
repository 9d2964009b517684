package controllers

import (
	"context"
	"slices"
	"sort"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/measurelock"
)

// At most one burst buffer measures a node at a time (internal/measurelock). Waiting burst
// buffers say so in their status (reason QueuedForNode, naming the node and the holder);
// their time budget starts only when they hold every node.

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=beeburst-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// nodeLocks is one visit's view of the burst buffer's node locks.
type nodeLocks struct {
	tried bool
	held  bool
	wait  *measurelock.Wait
	// busy: a measuring pod of this burst buffer runs, or was created in this visit (the
	// cache may not show it yet).
	busy bool
}

// locks are the measuring locks of the nodes, in the operator's namespace.
func (r *BurstBufferReconciler) locks() measurelock.Locks {
	return measurelock.Locks{Client: r.Client, Namespace: r.CacheNamespace,
		Wants: func(bb *v1alpha1.BurstBuffer) bool { return !validationEnded(bb) }, ForeignPods: r.foreignMeasuringPods}
}

// acquireNodeLocks takes the locks of all the burst buffer's nodes, in name order, once per
// visit; those it holds from the first node on are renewed together first. When they are all
// held, the validation clock starts.
func (r *BurstBufferReconciler) acquireNodeLocks(ctx context.Context, s *scope) error {
	if s.locks.tried {
		return nil
	}
	s.locks.tried = true
	nodes := slices.Clone(s.nodes)
	sort.Strings(nodes)
	locks := r.locks()
	held, renewed, err := locks.RenewHeld(ctx, s.bb, nodes, r.Now())
	if err != nil {
		return err
	}
	for i, n := range nodes {
		var w *measurelock.Wait
		if i < held {
			w = renewed[i]
		} else if w, err = locks.Acquire(ctx, s.bb, n, r.Now()); err != nil {
			return err
		}
		if w != nil {
			s.locks.wait = w
			return locks.LeaveQueues(ctx, s.bb, nodes[i+1:])
		}
	}
	s.locks.held = true
	if s.bb.Status.ValidationStartTime == nil {
		t := metav1.NewTime(r.Now())
		s.bb.Status.ValidationStartTime = &t
		logf.FromContext(ctx).Info("holding the measuring locks of all nodes: measuring starts", "nodes", nodes, "phase", s.bb.Status.Phase)
	}
	return nil
}

// heldLeases are the node locks bb holds or queues at (from the cache): those of its own
// nodes, the only ones it takes.
func (r *BurstBufferReconciler) heldLeases(ctx context.Context, bb *v1alpha1.BurstBuffer) (held, queued []coordinationv1.Lease, err error) {
	nodes := make([]string, 0, len(bb.Status.Nodes))
	for _, n := range bb.Status.Nodes {
		nodes = append(nodes, n.Name)
	}
	return r.locks().Held(ctx, bb, nodes)
}

// releaseIfIdle gives the node locks back once none of bb's measuring pods is left running
// (nor created in this visit: s.locks.busy); with leaveQueues also its places in queues
// (deletion, or nothing more to measure).
func (r *BurstBufferReconciler) releaseIfIdle(ctx context.Context, s *scope, leaveQueues bool) error {
	if s.locks.busy {
		return nil
	}
	bb := s.bb
	held, queued, err := r.heldLeases(ctx, bb)
	if err != nil || len(held)+len(queued) == 0 {
		return err
	}
	if busy, err := r.measuringBusy(ctx, bb); err != nil || busy {
		return err
	}
	return r.locks().Release(ctx, bb, held, queued, leaveQueues)
}

// burstBuffersWaitingForLock maps a node lock's event to the burst buffers on that node that
// have not finished measuring: a released lock lets the next one start.
func (r *BurstBufferReconciler) burstBuffersWaitingForLock(ctx context.Context, o client.Object) []reconcile.Request {
	node := o.GetAnnotations()[measurelock.AnnotationNode]
	if node == "" {
		return nil
	}
	var list v1alpha1.BurstBufferList
	if err := r.List(ctx, &list, client.MatchingFields{bbNodeField: node}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if bb := &list.Items[i]; !validationEnded(bb) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(bb)})
		}
	}
	return reqs
}
