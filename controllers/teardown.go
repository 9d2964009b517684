package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/staging"
	"github.com/beeburst/beeburst/internal/workload"
)

// +kubebuilder:rbac:groups="",resources=events,verbs=list

// Deletion must finish, or say why not and what to do. It waits as long as they run for the
// pods that use the burst buffer (the workload's, and pods that mount its claim): they are the
// user's to end. Everything else it waits for on a node is bounded by TeardownTimeout (default
// 2 minutes): a pod being deleted that does not go (a user's pod too), a clean pod that does
// not start. Past the bound the Provisioned condition says TeardownStuck, naming the node, the
// pod and what to do; with spec.teardown.hurry the operator then gives the node up (its own
// stuck pod is deleted with no grace period, a user's pod being deleted is no longer waited
// for, a node whose data cannot be removed is marked Abandoned with a Warning event) and the
// finalizer goes.

// defaultTeardownTimeout bounds each wait of a teardown on a node.
const defaultTeardownTimeout = 2 * time.Minute

// eventsRecheck is how often a clean pod that has not started is looked at again: the
// kubelet says why in events, which are not watched.
const eventsRecheck = 5 * time.Second

func (r *BurstBufferReconciler) teardownTimeout() time.Duration {
	if r.TeardownTimeout > 0 {
		return r.TeardownTimeout
	}
	return defaultTeardownTimeout
}

// cleanRetryPause is how long a failed clean pod stays before a fresh one retries: at most
// the teardown bound.
func (r *BurstBufferReconciler) cleanRetryPause() time.Duration {
	return min(30*time.Second, r.teardownTimeout())
}

// teardownWait collects what a deletion visit waits for.
type teardownWait struct {
	waiting []string // in progress, within bounds
	stuck   []string // past the bound: what, where, what to do
	requeue time.Duration
}

func (w *teardownWait) wake(d time.Duration) {
	w.requeue = minPositive(w.requeue, max(d, time.Second))
}

// stopTasks deletes the burst buffer's one-shot task pods that have not ended - probes,
// benchmarks, preparation, stage-in copies, stage-out copies too with hurry - and reports
// those not gone yet: a clean pod must not race them, and their results are of no use now.
// Clean pods are teardown's own; long-running pods (BeeGFS services and clients) are the
// engine's to stop, in its order.
func (r *BurstBufferReconciler) stopTasks(ctx context.Context, bb *v1alpha1.BurstBuffer, w *teardownWait) error {
	pods, err := r.taskPods(ctx, bb)
	if err != nil {
		return err
	}
	var stop []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		comp := p.Labels[nodetask.LabelComponent]
		if comp == nodetask.ComponentClean || (comp == string(staging.Out) && !bb.Spec.Teardown.Hurry) || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
			continue
		}
		if st, _ := nodetask.StateOf(p); st != nodetask.Running && p.DeletionTimestamp.IsZero() {
			continue
		}
		if p.DeletionTimestamp.IsZero() {
			stop = append(stop, p)
			w.waiting = append(w.waiting, fmt.Sprintf("stopping %s on node %s", p.Name, nodeOf(p)))
			continue
		}
		if err := r.checkTerminating(ctx, bb, p, w); err != nil {
			return err
		}
	}
	return r.deletePods(ctx, stop)
}

// checkTerminating bounds the wait for a pod being deleted; with hurry it is deleted with no
// grace period once past the bound (the kubelet of a node that is down never confirms). For a
// user's pod the bound never ends within its own grace period (DeletionTimestamp): one that
// takes its time to save its state is not stuck.
func (r *BurstBufferReconciler) checkTerminating(ctx context.Context, bb *v1alpha1.BurstBuffer, p *corev1.Pod, w *teardownWait) error {
	since := p.DeletionTimestamp.Time
	if g := p.DeletionGracePeriodSeconds; g != nil {
		since = since.Add(-time.Duration(*g) * time.Second)
	}
	until := since.Add(r.teardownTimeout())
	if !isOurs(p) {
		until = later(until, p.DeletionTimestamp.Time)
	}
	left := until.Sub(r.Now())
	if left > 0 {
		w.waiting = append(w.waiting, fmt.Sprintf("waiting for %s on node %s to stop", p.Name, nodeOf(p)))
		w.wake(left)
		return nil
	}
	if bb.Spec.Teardown.Hurry {
		logf.FromContext(ctx).Info("spec.teardown.hurry: deleting a stuck pod with no grace period", "pod", p.Name, "node", nodeOf(p))
		w.waiting = append(w.waiting, fmt.Sprintf("deleting %s on node %s with no grace period (spec.teardown.hurry)", p.Name, nodeOf(p)))
		return client.IgnoreNotFound(r.Delete(ctx, p, client.GracePeriodSeconds(0)))
	}
	w.stuck = append(w.stuck, fmt.Sprintf("pod %s on node %s has been stopping for %s: the node's kubelet does not confirm it stopped (is node %s down or unreachable?). Bring the node back; or, once you know it is down, kubectl delete pod -n %s %s --force --grace-period=0; or set spec.teardown.hurry: true to stop waiting for it (data on that node may stay behind)",
		p.Name, nodeOf(p), r.Now().Sub(since).Round(time.Second), nodeOf(p), p.Namespace, p.Name))
	w.wake(r.teardownTimeout())
	return nil
}

// podsInUse sorts the users' pods deletion waits for, those that ended left out: running
// (named with their node), and stopping - being deleted already, so deleting them again does
// nothing, and on a node that is down they stay so for good. checkTerminating bounds the wait
// for those; with hurry they are not waited for.
func (r *BurstBufferReconciler) podsInUse(ctx context.Context, bb *v1alpha1.BurstBuffer, pods []*corev1.Pod, w *teardownWait) (running, stopping []string, err error) {
	for _, p := range pods {
		switch {
		case workload.IsCompleted(p):
		case p.DeletionTimestamp.IsZero():
			running = append(running, fmt.Sprintf("%s (%s)", p.Name, strings.Trim(nodeOf(p), "()")))
		case !bb.Spec.Teardown.Hurry:
			stopping = append(stopping, fmt.Sprintf("%s (%s)", p.Name, strings.Trim(nodeOf(p), "()")))
			if err := r.checkTerminating(ctx, bb, p, w); err != nil {
				return nil, nil, err
			}
		}
	}
	sort.Strings(running)
	sort.Strings(stopping)
	return running, stopping, nil
}

// inUseText says what ends the wait for the pods podsInUse found.
func inUseText(running, stopping []string) string {
	var parts []string
	if len(running) > 0 {
		parts = append(parts, fmt.Sprintf("running: %s (they end when they finish, or when you delete them or their Job)", strings.Join(limit(running, 8), ", ")))
	}
	if len(stopping) > 0 {
		parts = append(parts, fmt.Sprintf("being deleted: %s (each goes when its node's kubelet confirms it stopped; for a node that is down: bring it back, or once you know it is down, kubectl delete pod --force --grace-period=0 on the pod, or set spec.teardown.hurry: true to stop waiting for these)",
			strings.Join(limit(stopping, 8), ", ")))
	}
	return strings.Join(parts, "; ")
}

// superviseClean looks at each node's clean pod before the engine's teardown visit and
// settles the nodes a clean pod cannot serve (status.nodes[].removal): the node is gone; the
// kubelet reports that spec.storage.path does not exist there (nothing was ever written, so
// nothing is to be removed); or, with hurry, the clean pod did not start or failed.
func (r *BurstBufferReconciler) superviseClean(ctx context.Context, s *scope, w *teardownWait) error {
	bb := s.bb
	for i, name := range s.nodes {
		ns := nodeStatus(bb, name)
		if ns == nil || ns.Removal != "" {
			continue
		}
		var node corev1.Node
		if err := r.Get(ctx, client.ObjectKey{Name: name}, &node); apierrors.IsNotFound(err) {
			ns.Removal = v1alpha1.RemovalNodeGone
			logf.FromContext(ctx).Info("node gone: nothing left to remove there", "node", name, "phase", bb.Status.Phase)
			r.event(bb, corev1.EventTypeWarning, "DataLeftOnNode", fmt.Sprintf("node %s is gone: %s on it was not removed by beeburst", name, nodetask.DataDir(bb)))
			if err := r.deleteCleanPod(ctx, bb, i); err != nil {
				return err
			}
			continue
		} else if err != nil {
			return err
		}
		pod, err := r.cleanPod(ctx, bb, i)
		if err != nil {
			return err
		}
		if pod == nil {
			continue // the engine creates it
		}
		if err := r.superviseCleanPod(ctx, bb, w, i, ns, pod); err != nil {
			return err
		}
	}
	return nil
}

// cleanPodKeys are where node i's clean pod may be: where bb's tasks run, or - when that
// namespace is being deleted and refuses pods - where the engine had to move it, the
// operator's own (engine.RemoveNodeData).
func (r *BurstBufferReconciler) cleanPodKeys(bb *v1alpha1.BurstBuffer, i int) []client.ObjectKey {
	ns, name := nodetask.Namespace(bb), nodetask.Name(bb, nodetask.ComponentClean, i)
	keys := []client.ObjectKey{{Namespace: ns, Name: name}}
	if r.CacheNamespace != "" && r.CacheNamespace != ns {
		keys = append(keys, engine.MovedKey(ns, name, r.CacheNamespace))
	}
	return keys
}

// cleanPod is node i's clean pod wherever it runs (cleanPodKeys), nil when there is none.
func (r *BurstBufferReconciler) cleanPod(ctx context.Context, bb *v1alpha1.BurstBuffer, i int) (*corev1.Pod, error) {
	for _, key := range r.cleanPodKeys(bb, i) {
		var pod corev1.Pod
		err := r.Get(ctx, key, &pod)
		if err == nil {
			return &pod, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, nil
}

// superviseCleanPod follows node i's clean pod: one stopping is bounded like any other; one
// that failed is retried, or with hurry its node's data is given up; one that never started
// is cleanNotStarted's.
func (r *BurstBufferReconciler) superviseCleanPod(ctx context.Context, bb *v1alpha1.BurstBuffer, w *teardownWait, i int, ns *v1alpha1.NodeStatus, pod *corev1.Pod) error {
	if !pod.DeletionTimestamp.IsZero() {
		return r.checkTerminating(ctx, bb, pod, w)
	}
	st, msg := nodetask.StateOf(pod)
	switch st {
	case nodetask.Succeeded:
		return nil
	case nodetask.Failed:
		if bb.Spec.Teardown.Hurry {
			r.abandon(ctx, bb, ns, fmt.Sprintf("removing it failed: %s", shorten.FirstLine(msg, messageMax)))
			return r.deleteCleanPod(ctx, bb, i)
		}
		w.stuck = append(w.stuck, fmt.Sprintf("removing %s on node %s failed: %s. beeburst retries; fix the cause on the node, or set spec.teardown.hurry: true to leave the data there",
			nodetask.DataDir(bb), ns.Name, shorten.FirstLine(msg, messageMax)))
		// The failed pod stays for a pause, so that its failure is what the status shows and
		// a node that fails every time is not sent a pod every few seconds; then a fresh one.
		_, end, _ := ranBetween(pod, r.Now())
		if wait := end.Add(r.cleanRetryPause()).Sub(r.Now()); wait > 0 {
			w.wake(wait)
			return nil
		}
		return r.deleteCleanPod(ctx, bb, i)
	}
	if _, _, started := ranBetween(pod, r.Now()); started {
		w.waiting = append(w.waiting, fmt.Sprintf("removing %s on node %s", nodetask.DataDir(bb), ns.Name))
		return nil
	}
	return r.cleanNotStarted(ctx, bb, w, i, ns, pod)
}

// cleanNotStarted handles a clean pod that has not started: a storage path the kubelet
// cannot find means nothing was written there (the node is settled); otherwise it may start
// late, up to the teardown bound, past which hurry gives the data up and without hurry the
// status says what to look at.
func (r *BurstBufferReconciler) cleanNotStarted(ctx context.Context, bb *v1alpha1.BurstBuffer, w *teardownWait, i int, ns *v1alpha1.NodeStatus, pod *corev1.Pod) error {
	name := ns.Name
	missing, why, err := r.storagePathMissing(ctx, bb, pod)
	if err != nil {
		return err
	}
	if missing {
		ns.Removal = v1alpha1.RemovalNothingToRemove
		logf.FromContext(ctx).Info("storage path missing on the node: nothing to remove", "node", name, "path", bb.Spec.Storage.Path, "phase", bb.Status.Phase)
		r.event(bb, corev1.EventTypeNormal, "NothingToRemove", fmt.Sprintf("spec.storage.path %s does not exist on node %s: nothing was written there, nothing to remove", bb.Spec.Storage.Path, name))
		return r.deleteCleanPod(ctx, bb, i)
	}
	age := r.Now().Sub(pod.CreationTimestamp.Time)
	if age < r.teardownTimeout() {
		w.waiting = append(w.waiting, fmt.Sprintf("clean pod %s on node %s starting (%s)", pod.Name, name, why))
		w.wake(min(eventsRecheck, r.teardownTimeout()-age))
		return nil
	}
	if bb.Spec.Teardown.Hurry {
		r.abandon(ctx, bb, ns, fmt.Sprintf("its clean pod %s did not start within %s (%s)", pod.Name, r.teardownTimeout(), why))
		return r.deleteCleanPod(ctx, bb, i)
	}
	w.stuck = append(w.stuck, fmt.Sprintf("clean pod %s on node %s has not started after %s (%s): check the node (kubectl describe pod -n %s %s), or set spec.teardown.hurry: true to leave %s on that node",
		pod.Name, name, age.Round(time.Second), why, pod.Namespace, pod.Name, nodetask.DataDir(bb)))
	w.wake(eventsRecheck)
	return nil
}

// abandon gives a node's data up (hurry): it stays on the node, and an event says where.
func (r *BurstBufferReconciler) abandon(ctx context.Context, bb *v1alpha1.BurstBuffer, ns *v1alpha1.NodeStatus, why string) {
	ns.Removal = v1alpha1.RemovalAbandoned
	msg := fmt.Sprintf("spec.teardown.hurry: %s is left on node %s: %s. Remove it by hand", nodetask.DataDir(bb), ns.Name, why)
	logf.FromContext(ctx).Info("data abandoned on a node (hurry)", "node", ns.Name, "path", nodetask.DataDir(bb), "why", why, "phase", bb.Status.Phase)
	r.event(bb, corev1.EventTypeWarning, "DataLeftOnNode", msg)
}

func (r *BurstBufferReconciler) deleteCleanPod(ctx context.Context, bb *v1alpha1.BurstBuffer, i int) error {
	for _, key := range r.cleanPodKeys(bb, i) {
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = key.Namespace, key.Name
		if err := r.Delete(ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// storagePathMissing reads what the kubelet reported about a pod that has not started: a
// hostPath type check of the storage volume that failed means spec.storage.path does not
// exist on the node. why is the latest reason in a few words, for the status.
func (r *BurstBufferReconciler) storagePathMissing(ctx context.Context, bb *v1alpha1.BurstBuffer, pod *corev1.Pod) (bool, string, error) {
	why := "not started yet"
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			why = strings.TrimSpace(w.Reason + " " + w.Message)
		}
	}
	if pod.Spec.NodeName == "" || pod.UID == "" {
		return false, why, nil
	}
	var events corev1.EventList
	if err := r.APIReader.List(ctx, &events, client.InNamespace(pod.Namespace),
		client.MatchingFields{"involvedObject.uid": string(pod.UID)}); err != nil {
		return false, why, err
	}
	sort.Slice(events.Items, func(i, j int) bool { return eventTime(&events.Items[i]).Before(eventTime(&events.Items[j])) })
	for _, e := range events.Items {
		if e.Type == corev1.EventTypeWarning {
			why = shorten.FirstLine(e.Reason+": "+e.Message, messageMax)
		}
		// The kubelet's hostPath plugin: "hostPath type check failed: <path> is not a directory".
		if e.Reason == "FailedMount" && strings.Contains(e.Message, "hostPath type check failed") &&
			strings.Contains(e.Message, bb.Spec.Storage.Path+" ") {
			return true, why, nil
		}
	}
	return false, why, nil
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func nodeStatus(bb *v1alpha1.BurstBuffer, name string) *v1alpha1.NodeStatus {
	for i := range bb.Status.Nodes {
		if bb.Status.Nodes[i].Name == name {
			return &bb.Status.Nodes[i]
		}
	}
	return nil
}

func nodeOf(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	return "(not scheduled)"
}

func (r *BurstBufferReconciler) event(bb *v1alpha1.BurstBuffer, typ, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(bb, nil, typ, reason, "Teardown", "%s", msg)
	}
}
