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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
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

// measuringComponents are the pods that measure a node (stages 2-4, the workload benchmarks,
// the chunk-size runs and the comparison).
var measuringComponents = []string{nodetask.ComponentProbeDevice, nodetask.ComponentProbeNetServer, nodetask.ComponentProbeNetClient,
	nodetask.ComponentSweep, nodetask.ComponentBench, nodetask.ComponentStorageBench, nodetask.ComponentChunk, nodetask.ComponentCompare}

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

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
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

// measuringSelector selects every burst buffer's measuring pods.
func measuringSelector() labels.Selector {
	sel := labels.SelectorFromSet(labels.Set{nodetask.LabelManagedBy: nodetask.ManagedBy})
	req, _ := labels.NewRequirement(nodetask.LabelComponent, selection.In, measuringComponents)
	return sel.Add(*req)
}

// foreignMeasuringPods are other burst buffers' measuring pods on node that have not ended.
func (r *BurstBufferReconciler) foreignMeasuringPods(ctx context.Context, bb *v1alpha1.BurstBuffer, node string) ([]string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{podNodeField: node}, client.MatchingLabelsSelector{Selector: measuringSelector()}); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range othersOn(pods.Items, bb, node) {
		if loadsNode(p) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// othersOn are the pods of pods that run on node and are not bb's own.
func othersOn(pods []corev1.Pod, bb *v1alpha1.BurstBuffer, node string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == node && !ownPod(bb, p) {
			out = append(out, p)
		}
	}
	return out
}

// ownPod says whether a pod is one of bb's, wherever it runs (its labels name bb's namespace
// when it runs in the task namespace).
func ownPod(bb *v1alpha1.BurstBuffer, p *corev1.Pod) bool {
	ns := p.Labels[nodetask.LabelBurstBufferNamespace]
	if ns == "" {
		ns = p.Namespace
	}
	return ns == bb.Namespace && p.Labels[v1alpha1.LabelBurstBuffer] == bb.Name
}

// measuringBusy says whether a measuring pod of bb has not ended yet.
func (r *BurstBufferReconciler) measuringBusy(ctx context.Context, bb *v1alpha1.BurstBuffer) (bool, error) {
	var pods corev1.PodList
	// Wherever they run: by the burst buffer their labels name (the pod index).
	if err := r.List(ctx, &pods, ofBurstBuffer(bb), client.MatchingLabelsSelector{Selector: probeSelector(bb)}); err != nil {
		return false, err
	}
	for i := range pods.Items {
		if loadsNode(&pods.Items[i]) {
			return true, nil
		}
	}
	return false, nil
}

// loadsNode: a measuring pod still loads its node while it runs, and also while it is being
// deleted - the kubelet tears its sandbox down (network, mounts, cgroups), work that slowed
// a device probe started beside it on the testbed. A lock is released, and a node counts as
// free, only once such pods are gone.
func loadsNode(p *corev1.Pod) bool {
	if !p.DeletionTimestamp.IsZero() {
		return true
	}
	st, _ := nodetask.StateOf(p)
	return st == nodetask.Running
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

// stampTaskEnd records on each node's lock when bb's task pods there last ran, just before
// they go with bb (see the comment at the top).
func (r *BurstBufferReconciler) stampTaskEnd(ctx context.Context, bb *v1alpha1.BurstBuffer) error {
	pods, err := r.taskPods(ctx, bb)
	if err != nil {
		return err
	}
	last := map[string]time.Time{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Spec.RestartPolicy == corev1.RestartPolicyAlways {
			continue
		}
		if _, end, ran := ranBetween(p, r.Now()); ran && end.After(last[p.Spec.NodeName]) {
			last[p.Spec.NodeName] = end
		}
	}
	for node, end := range last {
		var l coordinationv1.Lease
		if err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: lockName(node)}, &l); err != nil {
			if apierrors.IsNotFound(err) {
				continue // never measured: no probe can have overlapped
			}
			return err
		}
		if prev, err := time.Parse(time.RFC3339, l.Annotations[annLastTaskEnd]); err == nil && !end.After(prev) {
			continue
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		// Rounded up: API times have whole seconds.
		l.Annotations[annLastTaskEnd] = end.Add(time.Second - 1).Truncate(time.Second).UTC().Format(time.RFC3339)
		if err := r.Update(ctx, &l); err != nil {
			return err
		}
	}
	return nil
}

// ranBetween is when a pod's container ran: from its start to its end, or to now while it
// runs. ran is false for a pod whose container never started.
func ranBetween(p *corev1.Pod, now time.Time) (start, end time.Time, ran bool) {
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			if t.StartedAt.IsZero() {
				continue
			}
			if !ran || t.StartedAt.Time.Before(start) {
				start = t.StartedAt.Time
			}
			end, ran = later(end, t.FinishedAt.Time), true
		case cs.State.Running != nil:
			if !ran || cs.State.Running.StartedAt.Time.Before(start) {
				start = cs.State.Running.StartedAt.Time
			}
			end, ran = now, true
		}
	}
	return start, end, ran
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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

func limit(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("and %d more", len(items)-n))
}

func ptr[T any](v T) *T { return &v }

// runMeasuring is engine.RunTask for a measuring pod: an existing pod is read (one that
// cannot start counts as failed, with why: podstart.go); a new one is created only while bb
// holds the measuring locks of all its nodes. Without them it is not created (s.locks.wait
// says why) and reported Running: the stage waits.
func (r *BurstBufferReconciler) runMeasuring(ctx context.Context, s *scope, pod *corev1.Pod) (nodetask.State, string, *corev1.Pod, error) {
	var cur corev1.Pod
	err := r.Get(ctx, client.ObjectKeyFromObject(pod), &cur)
	if err == nil {
		st, msg := nodetask.StateOf(&cur)
		s.locks.busy = s.locks.busy || st == nodetask.Running
		if st == nodetask.Running {
			// A pod that cannot start has failed, said now rather than at its deadline; it is
			// stopped with the rest when its failure ends validation.
			b, _, recheck, err := r.whyNotStarted(ctx, &cur)
			if err != nil {
				return st, "", &cur, err
			}
			s.recheckPods(recheck)
			if b != nil {
				if s.blocked == nil {
					s.blocked = map[string]*nodetask.Blocked{}
				}
				s.blocked[cur.Name] = b
				return nodetask.Failed, "cannot start: " + r.blockedText(s.bb, &cur, b), &cur, nil
			}
		}
		return st, msg, &cur, nil
	}
	if !apierrors.IsNotFound(err) {
		return nodetask.Running, "", nil, err
	}
	if s.lastLook {
		// Past the budget nothing new starts: the step is not done, and validation is cut.
		return nodetask.Running, "", nil, nil
	}
	if err := r.acquireNodeLocks(ctx, s); err != nil || !s.locks.held {
		return nodetask.Running, "", nil, err
	}
	if err := r.createMeasuring(ctx, s, pod); err != nil {
		return nodetask.Running, "", nil, err
	}
	s.locks.busy = true
	return nodetask.Running, "", pod, nil
}

// createMeasuring creates a measuring pod of bb, which holds its nodes' locks, in its place
// in the chain. It only reads s, so several may run at once.
func (r *BurstBufferReconciler) createMeasuring(ctx context.Context, s *scope, pod *corev1.Pod) error {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[annLockHeld] = "true"
	r.inChain(ctx, s, pod)
	if err := r.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
