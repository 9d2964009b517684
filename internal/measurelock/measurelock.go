// Package measurelock is the measuring lock of a node and its queue: at most one burst buffer
// measures a node at a time. Its device probes, network probes, sweep, workload benchmarks and
// StorageBench would otherwise share the node's device and link with another one's, and both
// would publish (and cache) a fraction of the hardware.
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
//     less than half is left); the leases it holds from its first node on are renewed at
//     once. A lease that ran out, or whose holder is gone (another UID, NotFound), is free: a
//     deleted burst buffer never holds a node. The next holder still waits until no
//     measuring pod of another burst buffer runs on the node.
//   - Waiters queue in arrival order (annotation beeburst.io/queue); a freed node goes to the
//     first waiter that still wants it.
//   - Teardown stamps beeburst.io/last-task-end with the end of the burst buffer's own task
//     pods on the node just before those pods go with it, so that a probe that overlapped
//     them is known not to have had the node to itself even after they are gone.
package measurelock

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// Annotations of the node locks.
const (
	AnnotationHolderUID = "beeburst.io/holder-uid"
	// AnnotationNode is the node a lock is of.
	AnnotationNode = "beeburst.io/node"
	// AnnotationQueue holds the waiters, in arrival order (JSON).
	AnnotationQueue = "beeburst.io/queue"
	// AnnotationLastTaskEnd is the end of the last task pods a teardown deleted on the node.
	AnnotationLastTaskEnd = "beeburst.io/last-task-end"
)

// Duration is how long a node lock holds without renewal.
const Duration = 2 * time.Minute

// Retry is how soon a visit that lost a race for a lease (a conflict) tries again.
const Retry = time.Second

// Name is the Lease of a node: beeburst-measure-<node>, or a hash where that would be longer
// than a name may be.
func Name(node string) string {
	name := "beeburst-measure-" + node
	if len(name) > 253 {
		name = "beeburst-measure-" + nodetask.Hash(node)
	}
	return name
}

// Entry is one waiter of a node (or its holder).
type Entry struct {
	BB  string    `json:"bb"`
	UID types.UID `json:"uid"`
}

// EntryOf is bb as a waiter: namespace/name and UID.
func EntryOf(bb *v1alpha1.BurstBuffer) Entry {
	return Entry{BB: bb.Namespace + "/" + bb.Name, UID: bb.UID}
}

// Wait says why a burst buffer waits for a node.
type Wait struct {
	Node string
	// Holder measures the node; First is the waiter a free node is kept for; Pods are
	// another burst buffer's measuring pods that still run there.
	Holder, First string
	Pods          []string
	Since, Until  time.Time
	Ahead         int
	// Retry: the visit lost a race for the lease; it tries again in a second.
	Retry bool
}

// Message is the wait as the status says it.
func (w *Wait) Message() string {
	var b strings.Builder
	switch {
	case w.Holder != "":
		fmt.Fprintf(&b, "queued: node %s is being measured by burst buffer %s", w.Node, w.Holder)
		if !w.Since.IsZero() {
			fmt.Fprintf(&b, " (since %s)", w.Since.UTC().Format(time.RFC3339))
		}
	case w.First != "":
		fmt.Fprintf(&b, "queued: node %s is free and goes to burst buffer %s, which queued first", w.Node, w.First)
	case len(w.Pods) > 0:
		pods := w.Pods
		if len(pods) > 4 {
			pods = append(slices.Clone(pods[:4]), fmt.Sprintf("and %d more", len(w.Pods)-4))
		}
		fmt.Fprintf(&b, "queued: node %s is free but measuring pods of another burst buffer still run there: %s", w.Node, strings.Join(pods, ", "))
	default:
		fmt.Fprintf(&b, "taking the measuring lock of node %s", w.Node)
	}
	if w.Ahead > 0 {
		fmt.Fprintf(&b, "; %d burst buffer(s) ahead in the queue", w.Ahead)
	}
	b.WriteString("; at most one burst buffer measures a node at a time, so that neither measures a share of the hardware. Measuring starts when it is this one's turn; the time budget starts then")
	return b.String()
}

// Requeue is when to look again without an event: a lost race soon; otherwise when the
// holder's lease runs out, and at least every minute (a holder deleted without its
// finalizer releases nothing; partial holds are renewed).
func (w *Wait) Requeue(now time.Time) time.Duration {
	if w.Retry {
		return Retry
	}
	d := time.Minute
	if !w.Until.IsZero() && w.Until.Sub(now) < d {
		d = max(w.Until.Sub(now)+time.Second, Retry)
	}
	return d
}

// Locks are the node locks in one namespace.
type Locks struct {
	Client    client.Client
	Namespace string
	// Wants says whether a burst buffer (existing, not being deleted) still wants to measure;
	// a waiter that does not leaves the queue.
	Wants func(*v1alpha1.BurstBuffer) bool
	// ForeignPods are the measuring pods of burst buffers other than bb that run on node: a
	// free node is not taken while they run.
	ForeignPods func(ctx context.Context, bb *v1alpha1.BurstBuffer, node string) ([]string, error)
}

// Get reads node's lock.
func (k Locks) Get(ctx context.Context, node string, l *coordinationv1.Lease) error {
	return k.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: Name(node)}, l)
}

// Acquire takes, keeps (renews) or queues for one node's lock at now; nil when held.
func (k Locks) Acquire(ctx context.Context, bb *v1alpha1.BurstBuffer, node string, now time.Time) (*Wait, error) {
	log := logf.FromContext(ctx)
	var l coordinationv1.Lease
	err := k.Get(ctx, node, &l)
	if apierrors.IsNotFound(err) {
		l = k.NewLease(node)
		Take(&l, bb, now)
		if err := k.Client.Create(ctx, &l); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return &Wait{Node: node, Retry: true}, nil
			}
			return nil, err
		}
		log.Info("took the measuring lock of a node", "node", node, "lease", l.Name)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	me := EntryOf(bb)
	queue := ReadQueue(&l)
	if Holds(&l, bb) && !expired(&l, now) {
		return k.renew(ctx, &l, node, queue, me, now)
	}
	alive := k.holderAlive(ctx, &l, now)
	queue = k.liveWaiters(ctx, queue, &l)
	if alive {
		ahead, queue := enqueue(queue, me)
		w := &Wait{Node: node, Holder: *l.Spec.HolderIdentity, Until: expiry(&l), Ahead: ahead}
		if l.Spec.AcquireTime != nil {
			w.Since = l.Spec.AcquireTime.Time
		}
		return k.queueAt(ctx, &l, queue, w)
	}
	// Free: released, run out, or held by a burst buffer that is gone.
	if len(queue) > 0 && queue[0] != me {
		ahead, queue := enqueue(queue, me)
		return k.queueAt(ctx, &l, queue, &Wait{Node: node, First: queue[0].BB, Ahead: ahead})
	}
	pods, err := k.ForeignPods(ctx, bb, node)
	if err != nil {
		return nil, err
	}
	if len(pods) > 0 {
		// A former holder's pods (it was deleted, or its lease ran out while the manager
		// was down): measuring now would share the node with them. Their end is an event.
		_, queue := enqueue(queue, me)
		return k.queueAt(ctx, &l, queue, &Wait{Node: node, Pods: pods})
	}
	if i := slices.Index(queue, me); i >= 0 {
		queue = slices.Delete(queue, i, i+1)
	}
	prev := ptr.Deref(l.Spec.HolderIdentity, "")
	Take(&l, bb, now)
	WriteQueue(&l, queue)
	if w, err := k.update(ctx, &l, node); w != nil || err != nil {
		return w, err
	}
	log.Info("took the measuring lock of a node", "node", node, "lease", l.Name, "previousHolder", prev, "waiting", len(queue))
	return nil, nil
}

// RenewHeld renews, all at once (parallel.Do), the locks bb holds at the head of nodes (in
// the order they are taken): the first held node up to the first that is not bb's, which
// Acquire takes in order from there. A burst buffer that measures renews all of its nodes'
// locks about once a minute, and those writes need no order. A lock held after a node bb
// waits for is not renewed: one kept there while bb waited for an earlier node could close a
// cycle of waits, and running out is what frees it. It returns how many head nodes bb held,
// and for each of them the Wait of one lost while renewing it (a conflict), nil when kept.
func (k Locks) RenewHeld(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string, now time.Time) (int, []*Wait, error) {
	var head []coordinationv1.Lease
	for _, n := range nodes {
		var l coordinationv1.Lease
		if err := k.Get(ctx, n, &l); err != nil {
			if apierrors.IsNotFound(err) {
				break
			}
			return 0, nil, err
		}
		if !Holds(&l, bb) || expired(&l, now) {
			break
		}
		head = append(head, l)
	}
	waits := make([]*Wait, len(head))
	me := EntryOf(bb)
	err := parallel.Do(len(head), func(i int) (err error) {
		waits[i], err = k.renew(ctx, &head[i], nodes[i], ReadQueue(&head[i]), me, now)
		return err
	})
	return len(head), waits, err
}

// renew keeps a held lock: out of its own queue, renewed when less than half is left.
func (k Locks) renew(ctx context.Context, l *coordinationv1.Lease, node string, queue []Entry, me Entry, now time.Time) (*Wait, error) {
	changed := false
	if i := slices.Index(queue, me); i >= 0 {
		queue, changed = slices.Delete(queue, i, i+1), true
	}
	if expiry(l).Sub(now) < Duration/2 {
		l.Spec.RenewTime, changed = &metav1.MicroTime{Time: now}, true
	}
	if !changed {
		return nil, nil
	}
	WriteQueue(l, queue)
	return k.update(ctx, l, node)
}

// LeaveQueues takes bb out of the queues of nodes, those after the one it waits for. It is
// queued there only if it lost an earlier node's lock after it queued (a lease that ran out
// while its visits were late): a node kept free for it while it waits for an earlier one
// would close a cycle of waits, which taking the locks in node order otherwise rules out.
func (k Locks) LeaveQueues(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) error {
	me := EntryOf(bb)
	for _, n := range nodes {
		var l coordinationv1.Lease
		if err := k.Get(ctx, n, &l); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		queue := ReadQueue(&l)
		i := slices.Index(queue, me)
		if i < 0 {
			continue
		}
		WriteQueue(&l, slices.Delete(queue, i, i+1))
		if err := k.Client.Update(ctx, &l); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err // a conflict: the next visit looks again
		}
		logf.FromContext(ctx).Info("left the queue of a later node: waiting for an earlier one", "node", n)
	}
	return nil
}

// queueAt records the queue if it changed and returns w.
func (k Locks) queueAt(ctx context.Context, l *coordinationv1.Lease, queue []Entry, w *Wait) (*Wait, error) {
	if !slices.Equal(queue, ReadQueue(l)) {
		WriteQueue(l, queue)
		if lost, err := k.update(ctx, l, w.Node); lost != nil || err != nil {
			return lost, err
		}
	}
	return w, nil
}

// update writes l; a conflict (someone else wrote first) is a lost race, not an error.
func (k Locks) update(ctx context.Context, l *coordinationv1.Lease, node string) (*Wait, error) {
	if err := k.Client.Update(ctx, l); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return &Wait{Node: node, Retry: true}, nil
		}
		return nil, err
	}
	return nil, nil
}

// NewLease is node's lock, unheld.
func (k Locks) NewLease(node string) coordinationv1.Lease {
	return coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(node), Namespace: k.Namespace,
			Labels: map[string]string{
				nodetask.LabelName: "beeburst", nodetask.LabelComponent: nodetask.ComponentNodeLock, nodetask.LabelManagedBy: nodetask.ManagedBy,
			},
			Annotations: map[string]string{AnnotationNode: node},
		},
	}
}

// Take makes bb the holder of l from now.
func Take(l *coordinationv1.Lease, bb *v1alpha1.BurstBuffer, now time.Time) {
	id := EntryOf(bb).BB
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != id || l.Annotations[AnnotationHolderUID] != string(bb.UID) {
		l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
	}
	l.Spec.HolderIdentity = &id
	l.Spec.LeaseDurationSeconds = ptr.To(int32(Duration / time.Second))
	l.Spec.AcquireTime = &metav1.MicroTime{Time: now}
	l.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AnnotationHolderUID] = string(bb.UID)
}

// Holds says whether bb holds l (whether or not it ran out).
func Holds(l *coordinationv1.Lease, bb *v1alpha1.BurstBuffer) bool {
	return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == EntryOf(bb).BB && l.Annotations[AnnotationHolderUID] == string(bb.UID)
}

func expiry(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
}

func expired(l *coordinationv1.Lease, now time.Time) bool { return !now.Before(expiry(l)) }

// holderAlive: the lease is held, has not run out, and its holder exists with the UID that
// took it.
func (k Locks) holderAlive(ctx context.Context, l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || expired(l, now) {
		return false
	}
	ns, name, ok := strings.Cut(*l.Spec.HolderIdentity, "/")
	if !ok {
		return false
	}
	var holder v1alpha1.BurstBuffer
	if err := k.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &holder); err != nil {
		return !apierrors.IsNotFound(err) // unsure: as if alive
	}
	return string(holder.UID) == l.Annotations[AnnotationHolderUID]
}

// liveWaiters drops waiters that no longer wait: gone, being deleted, or no longer wanting to
// measure (Wants) - and the holder itself.
func (k Locks) liveWaiters(ctx context.Context, queue []Entry, l *coordinationv1.Lease) []Entry {
	var out []Entry
	for _, e := range queue {
		if string(e.UID) == l.Annotations[AnnotationHolderUID] || slices.Contains(out, e) {
			continue
		}
		ns, name, _ := strings.Cut(e.BB, "/")
		var bb v1alpha1.BurstBuffer
		if err := k.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &bb); err != nil {
			if !apierrors.IsNotFound(err) {
				out = append(out, e)
			}
			continue
		}
		if bb.UID != e.UID || !bb.DeletionTimestamp.IsZero() || (k.Wants != nil && !k.Wants(&bb)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func enqueue(queue []Entry, me Entry) (int, []Entry) {
	if i := slices.Index(queue, me); i >= 0 {
		return i, queue
	}
	return len(queue), append(queue, me)
}

// ReadQueue is l's queue; an unreadable one is empty (the waiters rebuild it).
func ReadQueue(l *coordinationv1.Lease) []Entry {
	var q []Entry
	if raw := l.Annotations[AnnotationQueue]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &q)
	}
	return q
}

// WriteQueue sets l's queue.
func WriteQueue(l *coordinationv1.Lease, q []Entry) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	if len(q) == 0 {
		delete(l.Annotations, AnnotationQueue)
		return
	}
	b, _ := json.Marshal(q)
	l.Annotations[AnnotationQueue] = string(b)
}

// Held are the locks of nodes that bb holds or queues at: read one by one, not every node's
// lock.
func (k Locks) Held(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (held, queued []coordinationv1.Lease, err error) {
	me := EntryOf(bb)
	for _, n := range nodes {
		var l coordinationv1.Lease
		if err := k.Get(ctx, n, &l); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, nil, err
		}
		switch {
		case Holds(&l, bb):
			held = append(held, l)
		case slices.Contains(ReadQueue(&l), me):
			queued = append(queued, l)
		}
	}
	return held, queued, nil
}

// Release gives back the locks bb holds (held, as Held read them); with leaveQueues also its
// places in queued.
func (k Locks) Release(ctx context.Context, bb *v1alpha1.BurstBuffer, held, queued []coordinationv1.Lease, leaveQueues bool) error {
	me := EntryOf(bb)
	notMe := func(e Entry) bool { return e == me }
	// Each lock is its own object: they are given back together, not one round trip each.
	err := parallel.Do(len(held), func(i int) error {
		l := &held[i]
		l.Spec.HolderIdentity = nil
		delete(l.Annotations, AnnotationHolderUID)
		if leaveQueues {
			WriteQueue(l, slices.DeleteFunc(ReadQueue(l), notMe))
		}
		if err := k.Client.Update(ctx, l); err != nil {
			return err // a conflict retries with backoff: the lock must not stay held
		}
		logf.FromContext(ctx).Info("released the measuring lock of a node", "node", l.Annotations[AnnotationNode], "waiting", len(ReadQueue(l)))
		return nil
	})
	if err != nil || !leaveQueues {
		return err
	}
	return parallel.Do(len(queued), func(i int) error {
		l := &queued[i]
		WriteQueue(l, slices.DeleteFunc(ReadQueue(l), notMe))
		return k.Client.Update(ctx, l)
	})
}
