package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/measurelock"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/staging"
)

// Annotations of measuring pods.
const (
	// annLockHeld marks a measuring pod created while its burst buffer held the measuring
	// locks of all its nodes.
	annLockHeld = "beeburst.io/lock-held"
	// annConditions on a device probe (or metadata benchmark) pod holds the conditions of its figures (JSON), decided
	// once, when the probe ended: later visits must not decide again when the pods that
	// shared the node are gone.
	annConditions = "beeburst.io/conditions"
)

// probeConditions are the conditions under which an ended device probe measured its figures:
// the recorded ones, or, the first time, decided now (what its device moved beside it from
// its report, and, where it saw no device, another burst buffer's services serving elsewhere)
// - and the figures kept for reuse (the per-node cache) only when the probe had the node to
// itself.
func (r *BurstBufferReconciler) probeConditions(ctx context.Context, s *scope, e endedProbe) (*nodecache.Conditions, error) {
	f := e.figures
	c, err := r.runConditions(ctx, s, e.pod, f.Node, f.MeasuredTime, e.otherTraffic, !e.sawDevice)
	if err != nil || c == nil {
		return c, err
	}
	if !c.Alone() {
		logf.FromContext(ctx).Info("device figures not kept for reuse: the probe did not have the node to itself", "node", f.Node,
			"exclusive", c.Exclusive, "otherPods", c.OtherPods, "otherTraffic", c.OtherTraffic)
		return c, nil
	}
	f.Conditions = c
	return c, r.nodeCache().Update(ctx, f.Node, func(cur *nodecache.Figures) { *cur = nodecache.Next(*cur, f) })
}

// runConditions are the conditions under which a measuring pod on node ran (measured: when
// its report says it ended; otherTraffic: what the device moved beside it, from its report;
// services: it had no device counters, so other burst buffers' services count as otherPodsOn
// says): the ones recorded on the pod, or, the first time, decided now and recorded on it -
// later visits must not decide again when the pods that shared the node are gone. Nil for no
// pod.
func (r *BurstBufferReconciler) runConditions(ctx context.Context, s *scope, pod *corev1.Pod, node string, measured time.Time, otherTraffic string, services bool) (*nodecache.Conditions, error) {
	if pod == nil {
		return nil, nil
	}
	if c := recordedConditions(pod); c != nil {
		return c, nil
	}
	start, end, _ := ranBetween(pod, r.Now())
	if start.IsZero() {
		start = measured
	}
	if end.IsZero() {
		end = measured
	}
	others, err := r.otherPodsOn(ctx, s.bb, node, start, end, services)
	if err != nil {
		return nil, err
	}
	c := podConditions(pod, node, start, others)
	c.OtherTraffic = otherTraffic
	return r.recordConditions(ctx, pod, c)
}

// podConditions are the conditions of a measuring pod on node from start, with others the
// other burst buffers' pods that ran there meanwhile.
func podConditions(pod *corev1.Pod, node string, start time.Time, others []string) *nodecache.Conditions {
	return &nodecache.Conditions{
		StartTime: start, Exclusive: pod.Annotations[annLockHeld] == "true", Lock: measurelock.Name(node), OtherPods: others,
		Probe: "agent " + strings.Join(pod.Spec.Containers[0].Args, " "), Image: pod.Spec.Containers[0].Image,
	}
}

// recordedConditions are the conditions recorded on pod, nil when none (or unreadable).
func recordedConditions(pod *corev1.Pod) *nodecache.Conditions {
	raw := pod.Annotations[annConditions]
	if raw == "" {
		return nil
	}
	var c nodecache.Conditions
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return nil
	}
	return &c
}

// recordConditions records c on pod, before the cache is written: a crash in between loses a
// cache entry, never caches a figure whose neighbours were missed. A pod gone meanwhile keeps
// nothing, but c still holds for this visit: the neighbours it found are not forgotten.
func (r *BurstBufferReconciler) recordConditions(ctx context.Context, pod *corev1.Pod, c *nodecache.Conditions) (*nodecache.Conditions, error) {
	b, _ := json.Marshal(c)
	patch := client.RawPatch(types.MergePatchType, mustJSON(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annConditions: string(b)}}}))
	if err := r.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	return c, nil
}

// otherPodsOn names the beeburst pods that ran on node between from and to, except bb's own.
// With services, also another burst buffer's BeeGFS storage or metadata service there while
// that burst buffer's job or copies ran on its other nodes (servedElsewhere): a measurement
// with no device counters of its own (a link, a BeeGFS sweep or metadata run) cannot see
// their data reach the node otherwise, and neither can a device probe or a local sweep run
// whose path has no block device below it (btrfs, ZFS, overlay). One with counters sees it
// there, by bytes, and an idle job does not make it busy. Its own pods on this node
// count by themselves. The cache holds every pod with the burst-buffer label: task pods and
// workload pods. Pods that went with a burst buffer deleted meanwhile show through the lock's
// stamp.
func (r *BurstBufferReconciler) otherPodsOn(ctx context.Context, bb *v1alpha1.BurstBuffer, node string, from, to time.Time, services bool) ([]string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{podNodeField: node}, client.MatchingLabelsSelector{Selector: podCacheSelector()}); err != nil {
		return nil, err
	}
	var out []string
	served := map[string]bool{} // the other burst buffers whose services were looked at
	for _, p := range othersOn(pods.Items, bb, node) {
		if isService(p) {
			c, key := p.Labels[nodetask.LabelComponent], podBurstBuffer(p)
			if services && len(key) > 0 && !served[key[0]] && (c == nodetask.ComponentStorage || c == nodetask.ComponentMeta) {
				served[key[0]] = true
				who, err := r.servedElsewhere(ctx, key[0], node, from, to)
				if err != nil {
					return nil, err
				}
				if who != "" {
					out = append(out, fmt.Sprintf("burst buffer %s's BeeGFS services, serving %s", key[0], who))
				}
			}
			continue
		}
		if start, end, ran := ranBetween(p, r.Now()); ran && start.Before(to) && end.After(from) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	var l coordinationv1.Lease
	err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: measurelock.Name(node)}, &l)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if t, perr := time.Parse(time.RFC3339, l.Annotations[measurelock.AnnotationLastTaskEnd]); err == nil && perr == nil && t.After(from) {
		out = append(out, fmt.Sprintf("task pods of a burst buffer deleted meanwhile (they ran until %s)", t.Format(time.RFC3339)))
	}
	sort.Strings(out)
	return out, nil
}

// isService says whether p is a long-running BeeGFS service (or client) pod of a burst buffer.
func isService(p *corev1.Pod) bool {
	return p.Labels[nodetask.LabelManagedBy] == nodetask.ManagedBy && p.Spec.RestartPolicy == corev1.RestartPolicyAlways
}

// servedElsewhere names a pod of burst buffer key (namespace/name) that ran on another node
// than node between from and to - a job (a pod the operator does not manage) or a stage-in or
// stage-out copy, whose data reaches that burst buffer's services on node over the network
// and onto its device - "" when none did. Its own task pods (setup, measurements, clean-up)
// run only while it holds its nodes' measuring locks or before it is Ready.
func (r *BurstBufferReconciler) servedElsewhere(ctx context.Context, key, node string, from, to time.Time) (string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{podBurstBufferField: key}); err != nil {
		return "", err
	}
	var names []string
	for i := range pods.Items {
		q := &pods.Items[i]
		if q.Spec.NodeName == "" || q.Spec.NodeName == node || !jobOrCopy(q) {
			continue
		}
		if start, end, ran := ranBetween(q, r.Now()); ran && start.Before(to) && end.After(from) {
			names = append(names, fmt.Sprintf("%s/%s on node %s", q.Namespace, q.Name, q.Spec.NodeName))
		}
	}
	sort.Strings(names)
	return strings.Join(limit(names, 2), ", "), nil
}

// jobOrCopy says whether p moves a burst buffer's data for its user: a workload pod (one the
// operator does not manage) or a stage-in or stage-out copy.
func jobOrCopy(p *corev1.Pod) bool {
	if p.Labels[nodetask.LabelManagedBy] != nodetask.ManagedBy {
		return true
	}
	c := p.Labels[nodetask.LabelComponent]
	return c == string(staging.In) || c == string(staging.Out)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings: unreachable
	}
	return b
}
