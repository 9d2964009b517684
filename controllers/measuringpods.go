package controllers

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/measurelock"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// measuringComponents are the pods that measure a node (stages 2-4, the workload benchmarks,
// the chunk-size runs and the comparison).
var measuringComponents = []string{nodetask.ComponentProbeDevice, nodetask.ComponentProbeNetServer, nodetask.ComponentProbeNetClient,
	nodetask.ComponentSweep, nodetask.ComponentBench, nodetask.ComponentStorageBench, nodetask.ComponentChunk, nodetask.ComponentCompare}

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
	nodes := slices.Sorted(maps.Keys(last))
	// Each node's lock is its own object: the stamps are written together.
	return parallel.Do(len(nodes), func(i int) error {
		node, end := nodes[i], last[nodes[i]]
		var l coordinationv1.Lease
		if err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: measurelock.Name(node)}, &l); err != nil {
			return client.IgnoreNotFound(err) // never measured: no probe can have overlapped
		}
		if prev, err := time.Parse(time.RFC3339, l.Annotations[measurelock.AnnotationLastTaskEnd]); err == nil && !end.After(prev) {
			return nil
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		// Rounded up: API times have whole seconds.
		l.Annotations[measurelock.AnnotationLastTaskEnd] = end.Add(time.Second - 1).Truncate(time.Second).UTC().Format(time.RFC3339)
		return r.Update(ctx, &l)
	})
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
