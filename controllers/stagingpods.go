package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/staging"
	"github.com/beeburst/beeburst/internal/treecopy"
)

// unschedulable names the copy pods the scheduler has not placed for longer than the bound,
// with their node and the scheduler's reason; recheck is when the next one reaches it.
func (r *BurstBufferReconciler) unschedulable(pods []staging.NodePod) (stuck []string, recheck time.Duration) {
	bound := r.UnschedulableTimeout
	if bound <= 0 {
		bound = time.Minute
	}
	for _, np := range pods {
		if np.Pod == nil || !np.Pod.DeletionTimestamp.IsZero() {
			continue
		}
		for _, c := range np.Pod.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
				continue
			}
			since := c.LastTransitionTime.Time
			if since.IsZero() {
				since = np.Pod.CreationTimestamp.Time
			}
			if left := since.Add(bound).Sub(r.Now()); left > 0 {
				recheck = minPositive(recheck, left+time.Second)
				continue
			}
			stuck = append(stuck, fmt.Sprintf("%s for node %s, unschedulable for %s: %s", np.Pod.Name, np.Node,
				r.Now().Sub(since).Round(time.Second), shorten.FirstLine(c.Message, messageMax)))
		}
	}
	return stuck, recheck
}

// copiesBlocked reads the copy pods that have not started (podstart.go): never, those the
// scheduler can never place on their node (with the bounded wait's stuck ones); cannot, those
// that cannot start for another reason (an image, a host path), with what fixes it; rest, the
// others.
func (r *BurstBufferReconciler) copiesBlocked(ctx context.Context, s *scope, pods []staging.NodePod) (never, cannot []string, rest []staging.NodePod, err error) {
	for _, np := range pods {
		b, _, recheck, err := r.whyNotStarted(ctx, np.Pod)
		if err != nil {
			return nil, nil, nil, err
		}
		s.recheckPods(recheck)
		switch {
		case b == nil:
			rest = append(rest, np)
		case b.Cause == nodetask.Unschedulable:
			never = append(never, fmt.Sprintf("%s for node %s, which it can never be scheduled on as it is: %s", np.Pod.Name, np.Node, b.Detail))
		default:
			cannot = append(cannot, r.blockedText(s.bb, np.Pod, b))
		}
	}
	return never, cannot, rest, nil
}

// secretRecheck is how often a copy waiting for its credentials Secret looks again.
const secretRecheck = 5 * time.Second

// progressInterval is how often the status follows a running copy (the agent prints its
// progress every 5 s).
const progressInterval = 10 * time.Second

// copyProgress reads a running copy's last progress line from its log. Best effort: without
// a log (no kubelet in envtest, a log rotated away) the node's figures come with its report.
func (r *BurstBufferReconciler) copyProgress(ctx context.Context, pod *corev1.Pod) *treecopy.Totals {
	if r.PodLogTail == nil {
		return nil
	}
	log, err := r.PodLogTail(ctx, pod.Namespace, pod.Name, 20)
	if err != nil {
		return nil
	}
	return staging.LastProgress(log)
}

// deleteStaleStagePods removes copy pods of an earlier version of the direction's spec (they
// carry another key in their name), so that a corrected spec starts fresh copies.
func (r *BurstBufferReconciler) deleteStaleStagePods(ctx context.Context, bb *v1alpha1.BurstBuffer, d staging.Direction) error {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(bb.Namespace), client.MatchingLabels{
		v1alpha1.LabelBurstBuffer: bb.Name, nodetask.LabelManagedBy: nodetask.ManagedBy, nodetask.LabelComponent: string(d),
	}); err != nil {
		return err
	}
	current := map[string]bool{}
	for i := range bb.Status.Nodes {
		current[staging.PodName(bb, d, i)] = true
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !current[p.Name] && p.DeletionTimestamp.IsZero() {
			if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
