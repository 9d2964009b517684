package controllers

import (
	"context"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// keepFailedPods is how many failed measuring pods of a burst buffer stay for debugging
// (kubectl logs, describe); older ones go.
const keepFailedPods = 5

// tidyMeasuringPods deletes the measuring pods (measuringComponents, measuringpods.go) of a burst
// buffer whose measurement is over (validationEnded: measured, cut short, or a measurement
// failed): a succeeded pod's result is in the status, so it is clutter - a quick profile left
// a dozen in the user's namespace. Failed ones stay, the newest keepFailedPods of them, since
// their logs say what went wrong. Engine pods (services, clients, prepare) and copy pods are
// not touched: they are not done when measuring is.
//
// The node locks stay held until the deleted pods are gone (loadsNode), so that the next
// burst buffer does not measure beside their teardown. It returns how many it deleted.
func (r *BurstBufferReconciler) tidyMeasuringPods(ctx context.Context, bb *v1alpha1.BurstBuffer) (int, error) {
	pods, err := r.taskPods(ctx, bb)
	if err != nil {
		return 0, err
	}
	var gone, failed []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if !slices.Contains(measuringComponents, p.Labels[nodetask.LabelComponent]) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			gone = append(gone, p)
		case corev1.PodFailed:
			failed = append(failed, p)
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[j].CreationTimestamp.Before(&failed[i].CreationTimestamp) })
	gone = append(gone, failed[min(len(failed), keepFailedPods):]...)
	err = r.deletePods(ctx, gone)
	return len(gone), err
}

// deletePods deletes pods, several at a time (parallel.Do); one already gone is no error.
func (r *BurstBufferReconciler) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	return parallel.Do(len(pods), func(i int) error { return client.IgnoreNotFound(r.Delete(ctx, pods[i])) })
}

// taskPods are the burst buffer's own pods (task pods, engine services and clients, and the
// copies beside it), from the cache.
func (r *BurstBufferReconciler) taskPods(ctx context.Context, bb *v1alpha1.BurstBuffer) (*corev1.PodList, error) {
	var pods corev1.PodList
	// Wherever they run (the task namespace, or beside it): by the burst buffer their labels
	// name (the pod index); the operator's own, not the workload's.
	err := r.List(ctx, &pods, ofBurstBuffer(bb), client.MatchingLabels{nodetask.LabelManagedBy: nodetask.ManagedBy})
	return &pods, err
}

// deleteTaskObjects deletes what is left of bb's children in the task namespace once
// teardown is done - pods that ended, the engine's ConfigMaps and Secrets: there no owner
// reference lets garbage collection do it.
func (r *BurstBufferReconciler) deleteTaskObjects(ctx context.Context, bb *v1alpha1.BurstBuffer) error {
	ns := nodetask.Namespace(bb)
	if ns == bb.Namespace {
		return nil
	}
	lists := []client.ObjectList{&corev1.PodList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}}
	for _, list := range lists {
		if err := r.List(ctx, list, client.InNamespace(ns), childLabels(bb)); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		if err := parallel.Do(len(items), func(i int) error {
			return client.IgnoreNotFound(r.Delete(ctx, items[i].(client.Object)))
		}); err != nil {
			return err
		}
	}
	return nil
}

// childLabels select bb's children wherever they run (nodetask.Owned).
func childLabels(bb *v1alpha1.BurstBuffer) client.MatchingLabels {
	return client.MatchingLabels{
		v1alpha1.LabelBurstBuffer: bb.Name, nodetask.LabelBurstBufferNamespace: bb.Namespace, nodetask.LabelManagedBy: nodetask.ManagedBy,
	}
}
