package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
	"github.com/beeburst/beeburst/internal/sweepcache"
)

// A validation kept for the next burst buffer built the same way (internal/sweepcache):
// reconcileReuse takes it before anything is measured, keepValidation keeps one at the end.
// Both live in the operator's namespace, one ConfigMap per configuration.

// reconcileReuse publishes a kept validation instead of measuring, when this burst buffer may
// reuse one (sweepcache.Eligible) and a fresh one of its configuration exists: stages 2 and 3
// come from it, marked with their source, and validation ends at once - no measuring lock, no
// pod. It waits for the file system (Provisioned): a reused figure says nothing of a file
// system that is not there.
func (r *BurstBufferReconciler) reconcileReuse(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if validationEnded(bb) || bb.Status.ValidationStartTime != nil || len(s.nodes) == 0 ||
		!conditionIs(bb, v1alpha1.ConditionProvisioned, metav1.ConditionTrue) || r.CacheNamespace == "" ||
		sweepcache.Eligible(bb, reuseMaxAge(bb)) != "" {
		return ctrl.Result{}, true, nil
	}
	key := sweepcache.Key(bb, s.nodeIdentities())
	var cm corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: sweepcache.Name(key)}, &cm)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, true, nil
	}
	if err != nil {
		return ctrl.Result{}, false, err
	}
	rec, err := sweepcache.FromConfigMap(&cm)
	now := r.Now()
	if err != nil || !rec.Fresh(key, reuseMaxAge(bb), now) {
		return ctrl.Result{}, true, nil
	}
	for _, n := range s.nodes {
		// A second look of a later burst buffer doubted the node's device figures, which the
		// record holds too: measured again, not reused.
		if f, ok := r.cachedFigures(ctx, n, s.nodeObj(n)); ok && f.Doubted != "" {
			return ctrl.Result{}, true, nil
		}
	}
	l := bb.Status.Limits
	if l == nil {
		l = &v1alpha1.LimitsStatus{}
		bb.Status.Limits = l
	}
	l.Components, l.Sweep, l.Monitoring = rec.Components.DeepCopy(), rec.Sweep.DeepCopy(), rec.Monitoring.DeepCopy()
	l.Components.ReusedFrom, l.Sweep.ReusedFrom = rec.Source(), rec.Source()
	if l.Monitoring != nil {
		l.Monitoring.ReusedFrom = rec.Source()
	}
	for i := range bb.Status.Nodes {
		if h := rec.Hardware[bb.Status.Nodes[i].Name]; h != nil {
			bb.Status.Nodes[i].Hardware = h.DeepCopy()
		}
	}
	if bb.Spec.Storage.CapacityPerNode == nil {
		// The space free for this burst buffer, found when its nodes were prepared: the
		// source's capacity says what was free then.
		if c := preparedCapacity(s); c != nil {
			bb.Status.Capacity = c
		} else if rec.Capacity != nil {
			c := rec.Capacity.DeepCopy()
			bb.Status.Capacity = &c
		}
	}
	estimate(s) // stage 1 with what the probes discovered then
	name, err := r.saveSweep(ctx, bb, csvRows(rec.SweepCSV))
	if err != nil {
		return ctrl.Result{}, false, err
	}
	l.Sweep.ConfigMapName = name
	reasons := map[string]bool{}
	copied := make([]v1alpha1.Warning, len(rec.Warnings))
	for i, w := range rec.Warnings {
		reasons[w.Reason] = true
		// A finding of the source's validation, which this burst buffer did not measure.
		w.Message += fmt.Sprintf(" (from burst buffer %s's validation, reused)", rec.MeasuredBy)
		copied[i] = w
	}
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings, reasons, copied)
	msg := rec.Describe(now)
	conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, v1alpha1.ReasonReused, "stage 2 "+msg)
	conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonReused, "stages 2-4 "+msg+validatedSummary(l.Sweep))
	start := metav1.NewTime(now)
	bb.Status.ValidationStartTime = &start
	r.recordValidationEnd(bb)
	logf.FromContext(ctx).Info("validation reused", "from", rec.MeasuredBy, "measuredTime", rec.MeasuredTime.Time)
	return ctrl.Result{}, true, nil
}

// keepValidation keeps bb's finished validation for the next burst buffer built the same way,
// when it may stand for one (sweepcache.Keepable); a validation it cannot stand for leaves an
// earlier one in place.
func (r *BurstBufferReconciler) keepValidation(ctx context.Context, s *scope) error {
	bb := s.bb
	if r.CacheNamespace == "" || bb.Spec.Validation.Profile != v1alpha1.ProfileQuick || sweepcache.Keepable(bb) != "" ||
		bb.Status.Limits.Sweep.ConfigMapName == "" {
		return nil
	}
	if why := documentedChanged(bb, s.nodeObj); why != "" {
		logf.FromContext(ctx).Info("validation not kept for reuse", "why", why)
		return nil
	}
	var sweep corev1.ConfigMap
	// Past the cache: the sweep's ConfigMap may have been written on this very visit.
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: bb.Status.Limits.Sweep.ConfigMapName}, &sweep); err != nil {
		return client.IgnoreNotFound(err)
	}
	rec := sweepcache.New(bb, s.nodeIdentities(), sweep.Data["sweep.csv"], r.Now())
	want, err := sweepcache.ConfigMap(r.CacheNamespace, rec)
	if err != nil {
		return err
	}
	err = r.Create(ctx, want)
	if apierrors.IsAlreadyExists(err) {
		var cur corev1.ConfigMap
		if err := r.Get(ctx, client.ObjectKeyFromObject(want), &cur); err != nil {
			return err
		}
		cur.Labels, cur.Annotations, cur.Data = want.Labels, want.Annotations, want.Data
		err = r.Update(ctx, &cur)
	}
	if err != nil {
		return err
	}
	return r.pruneValidations(ctx)
}

// documentedChanged names a node whose documented figures (spec.hardware, else its
// hardware.beeburst.io labels) are not those stage 2 judged its figures by, "" when every
// node's are: a node relabelled while bb measured. Such a validation is not kept: the record's
// key would hold the node's new labels (nodeIdentities), its documented figures and its
// warnings the old ones, and the next burst buffer would publish them as its own.
func documentedChanged(bb *v1alpha1.BurstBuffer, nodeObj func(string) *corev1.Node) string {
	for _, nc := range bb.Status.Limits.Components.Nodes {
		obj := nodeObj(nc.Name)
		w, _ := apibridge.DocumentedDevice(bb, obj, true)
		rd, _ := apibridge.DocumentedDevice(bb, obj, false)
		link, _ := apibridge.DocumentedLink(bb, obj, nc.Name)
		for _, c := range []struct {
			what string
			fig  *v1alpha1.ComponentFigure
			now  *int64
		}{{"device write", nc.DeviceWrite, w}, {"device read", nc.DeviceRead, rd}, {"link", nc.Network, link}} {
			if c.fig != nil && !ptr.Equal(c.fig.DocumentedBytesPerSecond, c.now) {
				return fmt.Sprintf("node %s's documented %s is %s now; stage 2 judged it by %s (changed while the burst buffer measured)",
					nc.Name, c.what, documentedRate(c.now), documentedRate(c.fig.DocumentedBytesPerSecond))
			}
		}
	}
	return ""
}

// documentedRate is a documented figure in words: none when nothing documents it.
func documentedRate(v *int64) string {
	if v == nil {
		return "none"
	}
	return rate(*v)
}

// pruneValidations deletes the kept validations that no burst buffer may reuse any more
// (sweepcache.Expired). Each configuration ever validated leaves one record, and nothing
// else removes them: without this they would pile up in the operator's namespace and in the
// manager's cache. Run where a record is written, so the records' count stays bounded by
// the configurations validated within sweepcache.MaxAge.
func (r *BurstBufferReconciler) pruneValidations(ctx context.Context) error {
	var list corev1.ConfigMapList
	if err := r.List(ctx, &list, client.InNamespace(r.CacheNamespace),
		client.MatchingLabels{nodetask.LabelComponent: sweepcache.Component, nodetask.LabelManagedBy: nodetask.ManagedBy}); err != nil {
		return err
	}
	now := r.Now()
	var expired []*corev1.ConfigMap
	for i := range list.Items {
		if sweepcache.Expired(&list.Items[i], now) {
			expired = append(expired, &list.Items[i])
		}
	}
	return parallel.Do(len(expired), func(i int) error { return client.IgnoreNotFound(r.Delete(ctx, expired[i])) })
}

// csvRows are a sweep CSV's data rows (saveSweep adds the header).
func csvRows(csv string) []string {
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) <= 1 {
		return nil
	}
	return lines[1:]
}

// validatedSummary is the sweep's best write for the Validated condition.
func validatedSummary(sw *v1alpha1.SweepLimits) string {
	if sw == nil || sw.Write == nil {
		return ""
	}
	return ": best write " + rate(sw.Write.BestBytesPerSecond)
}
