package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// At most one burst buffer measures a node at a time: its device probes, network probes,
// sweep, workload benchmarks and StorageBench would otherwise share the node's device and
// link with another one's, and both would publish (and cache) a fraction of the hardware.
//
// The lock of a node is a coordination.k8s.io Lease in the operator's namespace,
// beeburst-measure-<node>. It survives a manager restart, and is taken and given back with
// optimistic concurrency (resourceVersion), so two reconciles cannot both win it.
//   - spec.holderIdentity is the holder's namespace/name, annotation beeburst.io/holder-uid
//     its UID: a burst buffer deleted and created again under the same name is not the holder.
//   - A burst buffer takes the locks of all its nodes, in the order of the node names
//     (deadlock-free), before it creates the first measuring pod, and keeps them until none of
//     its measuring pods is left; then, or when it is deleted, it gives them back. While it
//     waits for a node it keeps the locks it took and is queued at that node alone: a place
//     in a later node's queue, or a lock given back and taken again, would break the order.
//   - The holder renews the lease while it holds it (leaseDurationSeconds 120, renewed when
//     less than half is left). A lease that ran out, or whose holder is gone (another UID,
//     NotFound), is free: a deleted burst buffer never holds a node. The next holder still
//     waits until no measuring pod of another burst buffer runs on the node.
//   - Waiters queue in arrival order (annotation beeburst.io/queue); a freed node goes to the
//     first waiter that still wants it. Waiting burst buffers say so in their status
//     (reason QueuedForNode, naming the node and the holder); their time budget starts only
//     when they hold every node.
//   - Teardown stamps beeburst.io/last-task-end with the end of the burst buffer's own task
//     pods on the node just before those pods go with it, so that a probe that overlapped
//     them is known not to have had the node to itself even after they are gone.

// Annotations of the node locks.
const (
	annHolderUID   = "beeburst.io/holder-uid"
	annNode        = "beeburst.io/node"
	annQueue       = "beeburst.io/queue"
	annLastTaskEnd = "beeburst.io/last-task-end"
)

// lockDuration is how long a node lock holds without renewal.
const lockDuration = 2 * time.Minute

// lockRetry is how soon a visit that lost a race for a lease (a conflict) tries again.
const lockRetry = time.Second

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=beeburst-system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// lockName is the Lease of a node: beeburst-measure-<node>, or a hash where that would be
// longer than a name may be.
func lockName(node string) string {
	name := "beeburst-measure-" + node
	if len(name) > 253 {
		name = "beeburst-measure-" + nodetask.Hash(node)
	}
	return name
}

func holderID(bb *v1alpha1.BurstBuffer) string { return bb.Namespace + "/" + bb.Name }

// queueEntry is one waiter of a node.
type queueEntry struct {
	BB  string    `json:"bb"`
	UID types.UID `json:"uid"`
}

// lockWait says why a burst buffer waits for a node.
type lockWait struct {
	node string
	// holder measures the node; first is the waiter a free node is kept for; pods are
	// another burst buffer's measuring pods that still run there.
	holder, first string
	pods          []string
	since, until  time.Time
	ahead         int
	// retry: the visit lost a race for the lease; it tries again in a second.
	retry bool
}

func (w *lockWait) message() string {
	var b strings.Builder
	switch {
	case w.holder != "":
		fmt.Fprintf(&b, "queued: node %s is being measured by burst buffer %s", w.node, w.holder)
		if !w.since.IsZero() {
			fmt.Fprintf(&b, " (since %s)", w.since.UTC().Format(time.RFC3339))
		}
	case w.first != "":
		fmt.Fprintf(&b, "queued: node %s is free and goes to burst buffer %s, which queued first", w.node, w.first)
	case len(w.pods) > 0:
		fmt.Fprintf(&b, "queued: node %s is free but measuring pods of another burst buffer still run there: %s", w.node, strings.Join(limit(w.pods, 4), ", "))
	default:
		fmt.Fprintf(&b, "taking the measuring lock of node %s", w.node)
	}
	if w.ahead > 0 {
		fmt.Fprintf(&b, "; %d burst buffer(s) ahead in the queue", w.ahead)
	}
	b.WriteString("; at most one burst buffer measures a node at a time, so that neither measures a share of the hardware. Measuring starts when it is this one's turn; the time budget starts then")
	return b.String()
}

// requeue is when to look again without an event: a lost race soon; otherwise when the
// holder's lease runs out, and at least every minute (a holder deleted without its
// finalizer releases nothing; partial holds are renewed).
func (w *lockWait) requeue(now time.Time) time.Duration {
	if w.retry {
		return lockRetry
	}
	d := time.Minute
	if !w.until.IsZero() && w.until.Sub(now) < d {
		d = max(w.until.Sub(now)+time.Second, lockRetry)
	}
	return d
}

// nodeLocks is one visit's view of the burst buffer's node locks.
type nodeLocks struct {
	tried bool
	held  bool
	wait  *lockWait
	// busy: a measuring pod of this burst buffer runs, or was created in this visit (the
	// cache may not show it yet).
	busy bool
}

// acquireNodeLocks takes (or renews) the locks of all the burst buffer's nodes, in name
// order; once per visit. When they are all held, the validation clock starts.
func (r *BurstBufferReconciler) acquireNodeLocks(ctx context.Context, s *scope) error {
	if s.locks.tried {
		return nil
	}
	s.locks.tried = true
	nodes := slices.Clone(s.nodes)
	sort.Strings(nodes)
	for i, n := range nodes {
		w, err := r.acquireNode(ctx, s.bb, n)
		if err != nil {
			return err
		}
		if w != nil {
			s.locks.wait = w
			return r.leaveQueues(ctx, s.bb, nodes[i+1:])
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

// acquireNode takes, keeps or queues for one node's lock; nil when held.
func (r *BurstBufferReconciler) acquireNode(ctx context.Context, bb *v1alpha1.BurstBuffer, node string) (*lockWait, error) {
	log := logf.FromContext(ctx)
	now := r.Now()
	var l coordinationv1.Lease
	err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: lockName(node)}, &l)
	if apierrors.IsNotFound(err) {
		l = r.newLease(node)
		take(&l, bb, now)
		if err := r.Create(ctx, &l); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return &lockWait{node: node, retry: true}, nil
			}
			return nil, err
		}
		log.Info("took the measuring lock of a node", "node", node, "lease", l.Name)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	me := queueEntry{BB: holderID(bb), UID: bb.UID}
	queue := readQueue(&l)
	if holds(&l, bb) && !leaseExpired(&l, now) {
		changed := false
		if i := slices.Index(queue, me); i >= 0 {
			queue, changed = slices.Delete(queue, i, i+1), true
		}
		if leaseExpiry(&l).Sub(now) < lockDuration/2 {
			l.Spec.RenewTime, changed = &metav1.MicroTime{Time: now}, true
		}
		if changed {
			writeQueue(&l, queue)
			return r.updateLease(ctx, &l, node)
		}
		return nil, nil
	}

	alive := r.holderAlive(ctx, &l, now)
	queue = r.liveWaiters(ctx, queue, &l)
	if alive {
		ahead, queue := enqueue(queue, me)
		w := &lockWait{node: node, holder: *l.Spec.HolderIdentity, until: leaseExpiry(&l), ahead: ahead}
		if l.Spec.AcquireTime != nil {
			w.since = l.Spec.AcquireTime.Time
		}
		return r.queueAt(ctx, &l, queue, w)
	}
	// Free: released, run out, or held by a burst buffer that is gone.
	if len(queue) > 0 && queue[0] != me {
		ahead, queue := enqueue(queue, me)
		return r.queueAt(ctx, &l, queue, &lockWait{node: node, first: queue[0].BB, ahead: ahead})
	}
	pods, err := r.foreignMeasuringPods(ctx, bb, node)
	if err != nil {
		return nil, err
	}
	if len(pods) > 0 {
		// A former holder's pods (it was deleted, or its lease ran out while the manager
		// was down): measuring now would share the node with them. Their end is an event.
		_, queue := enqueue(queue, me)
		return r.queueAt(ctx, &l, queue, &lockWait{node: node, pods: pods})
	}
	if i := slices.Index(queue, me); i >= 0 {
		queue = slices.Delete(queue, i, i+1)
	}
	prev := ""
	if l.Spec.HolderIdentity != nil {
		prev = *l.Spec.HolderIdentity
	}
	take(&l, bb, now)
	writeQueue(&l, queue)
	if w, err := r.updateLease(ctx, &l, node); w != nil || err != nil {
		return w, err
	}
	log.Info("took the measuring lock of a node", "node", node, "lease", l.Name, "previousHolder", prev, "waiting", len(queue))
	return nil, nil
}

// leaveQueues takes bb out of the queues of nodes, those after the one it waits for. It is
// queued there only if it lost an earlier node's lock after it queued (a lease that ran out
// while its visits were late): a node kept free for it while it waits for an earlier one
// would close a cycle of waits, which taking the locks in node order otherwise rules out.
func (r *BurstBufferReconciler) leaveQueues(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) error {
	me := queueEntry{BB: holderID(bb), UID: bb.UID}
	for _, n := range nodes {
		var l coordinationv1.Lease
		if err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: lockName(n)}, &l); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		queue := readQueue(&l)
		i := slices.Index(queue, me)
		if i < 0 {
			continue
		}
		writeQueue(&l, slices.Delete(queue, i, i+1))
		if err := r.Update(ctx, &l); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err // a conflict: the next visit looks again
		}
		logf.FromContext(ctx).Info("left the queue of a later node: waiting for an earlier one", "node", n)
	}
	return nil
}

// queueAt records the queue if it changed and returns w.
func (r *BurstBufferReconciler) queueAt(ctx context.Context, l *coordinationv1.Lease, queue []queueEntry, w *lockWait) (*lockWait, error) {
	if !slices.Equal(queue, readQueue(l)) {
		writeQueue(l, queue)
		if lost, err := r.updateLease(ctx, l, w.node); lost != nil || err != nil {
			return lost, err
		}
	}
	return w, nil
}

// updateLease writes l; a conflict (someone else wrote first) is a lost race, not an error.
func (r *BurstBufferReconciler) updateLease(ctx context.Context, l *coordinationv1.Lease, node string) (*lockWait, error) {
	if err := r.Update(ctx, l); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return &lockWait{node: node, retry: true}, nil
		}
		return nil, err
	}
	return nil, nil
}

func (r *BurstBufferReconciler) newLease(node string) coordinationv1.Lease {
	return coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: lockName(node), Namespace: r.CacheNamespace,
			Labels: map[string]string{
				nodetask.LabelName: "beeburst", nodetask.LabelComponent: nodetask.ComponentNodeLock, nodetask.LabelManagedBy: nodetask.ManagedBy,
			},
			Annotations: map[string]string{annNode: node},
		},
	}
}

func take(l *coordinationv1.Lease, bb *v1alpha1.BurstBuffer, now time.Time) {
	id := holderID(bb)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != id || l.Annotations[annHolderUID] != string(bb.UID) {
		l.Spec.LeaseTransitions = ptr(ptrValue(l.Spec.LeaseTransitions) + 1)
	}
	l.Spec.HolderIdentity = &id
	l.Spec.LeaseDurationSeconds = ptr(int32(lockDuration / time.Second))
	l.Spec.AcquireTime = &metav1.MicroTime{Time: now}
	l.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[annHolderUID] = string(bb.UID)
}

func holds(l *coordinationv1.Lease, bb *v1alpha1.BurstBuffer) bool {
	return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == holderID(bb) && l.Annotations[annHolderUID] == string(bb.UID)
}

func leaseExpiry(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
}

func leaseExpired(l *coordinationv1.Lease, now time.Time) bool { return !now.Before(leaseExpiry(l)) }

// holderAlive: the lease is held, has not run out, and its holder exists with the UID that
// took it.
func (r *BurstBufferReconciler) holderAlive(ctx context.Context, l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || leaseExpired(l, now) {
		return false
	}
	ns, name, ok := strings.Cut(*l.Spec.HolderIdentity, "/")
	if !ok {
		return false
	}
	var holder v1alpha1.BurstBuffer
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &holder); err != nil {
		return !apierrors.IsNotFound(err) // unsure: as if alive
	}
	return string(holder.UID) == l.Annotations[annHolderUID]
}

// liveWaiters drops waiters that no longer wait: gone, being deleted, done measuring, or no
// longer measuring at all - and the holder itself.
func (r *BurstBufferReconciler) liveWaiters(ctx context.Context, queue []queueEntry, l *coordinationv1.Lease) []queueEntry {
	var out []queueEntry
	for _, e := range queue {
		if string(e.UID) == l.Annotations[annHolderUID] || slices.Contains(out, e) {
			continue
		}
		ns, name, _ := strings.Cut(e.BB, "/")
		var bb v1alpha1.BurstBuffer
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &bb); err != nil {
			if !apierrors.IsNotFound(err) {
				out = append(out, e)
			}
			continue
		}
		if bb.UID != e.UID || !bb.DeletionTimestamp.IsZero() || validationEnded(&bb) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func enqueue(queue []queueEntry, me queueEntry) (int, []queueEntry) {
	if i := slices.Index(queue, me); i >= 0 {
		return i, queue
	}
	return len(queue), append(queue, me)
}

func readQueue(l *coordinationv1.Lease) []queueEntry {
	var q []queueEntry
	if raw := l.Annotations[annQueue]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &q) // unreadable: an empty queue, rebuilt by the waiters
	}
	return q
}

func writeQueue(l *coordinationv1.Lease, q []queueEntry) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	if len(q) == 0 {
		delete(l.Annotations, annQueue)
		return
	}
	b, _ := json.Marshal(q)
	l.Annotations[annQueue] = string(b)
}

// heldLeases are the node locks bb holds or queues at (from the cache): those of its own
// nodes, the only ones it takes, read one by one - not every node's lock on every visit.
func (r *BurstBufferReconciler) heldLeases(ctx context.Context, bb *v1alpha1.BurstBuffer) (held, queued []coordinationv1.Lease, err error) {
	me := queueEntry{BB: holderID(bb), UID: bb.UID}
	for _, n := range bb.Status.Nodes {
		var l coordinationv1.Lease
		if err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: lockName(n.Name)}, &l); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, nil, err
		}
		switch {
		case holds(&l, bb):
			held = append(held, l)
		case slices.Contains(readQueue(&l), me):
			queued = append(queued, l)
		}
	}
	return held, queued, nil
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
	me := queueEntry{BB: holderID(bb), UID: bb.UID}
	for _, l := range held {
		l.Spec.HolderIdentity = nil
		delete(l.Annotations, annHolderUID)
		if leaveQueues {
			writeQueue(&l, slices.DeleteFunc(readQueue(&l), func(e queueEntry) bool { return e == me }))
		}
		if err := r.Update(ctx, &l); err != nil {
			return err // a conflict retries with backoff: the lock must not stay held
		}
		logf.FromContext(ctx).Info("released the measuring lock of a node", "node", l.Annotations[annNode], "waiting", len(readQueue(&l)))
	}
	if !leaveQueues {
		return nil
	}
	for _, l := range queued {
		writeQueue(&l, slices.DeleteFunc(readQueue(&l), func(e queueEntry) bool { return e == me }))
		if err := r.Update(ctx, &l); err != nil {
			return err
		}
	}
	return nil
}

// burstBuffersWaitingForLock maps a node lock's event to the burst buffers on that node that
// have not finished measuring: a released lock lets the next one start.
func (r *BurstBufferReconciler) burstBuffersWaitingForLock(ctx context.Context, o client.Object) []reconcile.Request {
	node := o.GetAnnotations()[annNode]
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
